//! A 4-ary heap event queue with a stable tie-break.
//!
//! An entry is 16 bytes: the time, then the insertion sequence (32 bits) and the event
//! (packed into 32 bits by [`Packed`]); read as one `u128` it orders by `(time, seq)` and
//! never ties. Four children per node halve the levels of a binary heap, and the four
//! siblings share one cache line (the root sits at slot 3 of the first line, so node
//! `i`'s children fill line `i + 1`): a pop reads about log4(n) lines, each with four
//! keys, picking the least by a branch-free tournament.
//!
//! When the 32-bit sequence runs out, the pending entries are renumbered in their order,
//! which keeps every future comparison as it was.

use std::marker::PhantomData;
use units::SimTime;

/// An event that packs into 32 bits.
pub trait Packed: Copy {
    fn pack(self) -> u32;
    fn unpack(code: u32) -> Self;
}

impl Packed for u32 {
    fn pack(self) -> u32 {
        self
    }
    fn unpack(code: u32) -> Self {
        code
    }
}

const ARITY: usize = 4;
/// Slots before the root, so that sibling groups start on a line.
const OFFSET: usize = ARITY - 1;

/// `[time, seq << 32 | event]`.
type Entry = [u64; 2];

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([Entry; ARITY]);

#[inline]
fn key(e: Entry) -> u128 {
    (e[0] as u128) << 64 | e[1] as u128
}

/// The lesser of two entries and its index, without branches.
#[inline]
fn min2(a: Entry, ia: usize, b: Entry, ib: usize) -> (Entry, usize) {
    let m = ((key(b) < key(a)) as u64).wrapping_neg();
    ([a[0] ^ ((a[0] ^ b[0]) & m), a[1] ^ ((a[1] ^ b[1]) & m)], ia ^ ((ia ^ ib) & m as usize))
}

/// Pending events, popped in `(time, insertion order)`.
///
/// The queue is meant to stay small: FIFO emitters (links) keep their own rings and put
/// only their head here, and timers are cancelled lazily by the caller (a generation
/// counter in the event), so the heap holds about one entry per active component.
pub struct EventQueue<E> {
    lines: Vec<Line>,
    len: usize,
    seq: u64,
    /// Sequence numbers available before renumbering (2^32; smaller in tests).
    seq_limit: u64,
    now: SimTime,
    popped: u64,
    ev: PhantomData<E>,
}

impl<E: Packed> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Packed> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { lines: Vec::new(), len: 0, seq: 0, seq_limit: 1 << 32, now: SimTime::ZERO, popped: 0, ev: PhantomData }
    }

    #[inline]
    fn get(&self, i: usize) -> Entry {
        let p = i + OFFSET;
        self.lines[p / ARITY].0[p % ARITY]
    }

    #[inline]
    fn set(&mut self, i: usize, e: Entry) {
        let p = i + OFFSET;
        self.lines[p / ARITY].0[p % ARITY] = e;
    }

    /// The time of the last popped event.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `ev` at `at`, which must not be in the past.
    pub fn schedule(&mut self, at: SimTime, ev: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {:?} < {:?}", at, self.now);
        if self.seq == self.seq_limit {
            self.renumber();
        }
        let e = [at.0, self.seq << 32 | ev.pack() as u64];
        self.seq += 1;
        let mut i = self.len;
        self.len += 1;
        if (self.len + OFFSET).div_ceil(ARITY) > self.lines.len() {
            self.lines.push(Line([[0; 2]; ARITY]));
        }
        // Sift up: move parents down into the hole until the new key fits.
        let k = key(e);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            let pe = self.get(parent);
            if key(pe) <= k {
                break;
            }
            self.set(i, pe);
            i = parent;
        }
        self.set(i, e);
    }

    /// Gives the pending entries sequence numbers 0, 1, .. in their order. A sorted array
    /// is a heap, and later entries get larger numbers, so every comparison stays as it was.
    #[cold]
    fn renumber(&mut self) {
        let mut all: Vec<Entry> = (0..self.len).map(|i| self.get(i)).collect();
        all.sort_unstable_by_key(|&e| key(e));
        for (i, e) in all.into_iter().enumerate() {
            self.set(i, [e[0], (i as u64) << 32 | (e[1] & 0xFFFF_FFFF)]);
        }
        self.seq = self.len as u64;
        assert!(self.seq < self.seq_limit, "more than 2^32 pending events");
    }

    /// Removes and returns the earliest event, advancing `now` to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.len == 0 {
            return None;
        }
        let top = self.get(0);
        self.len -= 1;
        if self.len > 0 {
            let last = self.get(self.len);
            self.sift_down(last);
        }
        self.now = SimTime(top[0]);
        self.popped += 1;
        Some((self.now, E::unpack(top[1] as u32)))
    }

    /// Puts `x` at the root's place and moves it down to where it belongs.
    #[inline]
    fn sift_down(&mut self, x: Entry) {
        let n = self.len;
        let kx = key(x);
        let mut i = 0;
        loop {
            let c = ARITY * i + 1;
            if c >= n {
                break;
            }
            // Node i's children are line i + 1 (the tail of the last line is stale).
            let g = &self.lines[i + 1].0;
            let (m, em) = if c + ARITY <= n {
                // A tournament over four keys: two independent compares, then one, with
                // the winners selected by masks (the outcomes are random, so branches
                // would mispredict half the time).
                let (e01, i01) = min2(g[0], 0, g[1], 1);
                let (e23, i23) = min2(g[2], 2, g[3], 3);
                let (em, m) = min2(e01, i01, e23, i23);
                (m, em)
            } else {
                let mut m = 0;
                for j in 1..n - c {
                    if key(g[j]) < key(g[m]) {
                        m = j;
                    }
                }
                (m, g[m])
            };
            if key(em) >= kx {
                break;
            }
            self.set(i, em);
            i = c + m;
        }
        self.set(i, x);
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        (self.len > 0).then(|| SimTime(self.get(0)[0]))
    }

    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Events popped so far (the figure benchmarks report as "events").
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_by_insertion() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), 2u32);
        q.schedule(SimTime(1), 1);
        q.schedule(SimTime(5), 3);
        q.schedule(SimTime(5), 4);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec![1, 2, 3, 4]);
        assert_eq!(q.now(), SimTime(5));
        assert_eq!(q.popped(), 4);
    }

    proptest::proptest! {
        #[test]
        fn pops_sorted_stable(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() { q.schedule(SimTime(*t), i as u32); }
            let mut got = vec![];
            while let Some((t, i)) = q.pop() { got.push((t.0, i)); }
            let mut want: Vec<(u64, u32)> = times.iter().enumerate().map(|(i, t)| (*t, i as u32)).collect();
            want.sort();
            proptest::prop_assert_eq!(got, want);
        }

        /// Interleaved schedules and pops with a tiny sequence space (renumbering every few
        /// schedules) pop exactly as a sort by (time, insertion order) does.
        #[test]
        fn renumbering_keeps_the_order(ops in proptest::collection::vec((0u64..20, proptest::bool::ANY), 0..300)) {
            let mut q = EventQueue::new();
            q.seq_limit = 7;
            let mut pending: Vec<(u64, u64, u32)> = vec![];
            let (mut n, mut now) = (0u64, 0u64);
            for (i, &(dt, pop)) in ops.iter().enumerate() {
                if pop {
                    pending.sort();
                    let want = (!pending.is_empty()).then(|| pending.remove(0));
                    let got = q.pop();
                    proptest::prop_assert_eq!(got.map(|(t, e)| (t.0, e)), want.map(|(t, _, e)| (t, e)));
                    if let Some((t, _)) = got { now = t.0; }
                } else if pending.len() < 6 {
                    q.schedule(SimTime(now + dt), i as u32);
                    pending.push((now + dt, n, i as u32));
                    n += 1;
                }
            }
        }
    }
}
