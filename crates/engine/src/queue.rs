//! A calendar event queue with a stable tie-break.
//!
//! Every entry is one `u128`: the time in the high 64 bits, then the insertion sequence
//! (32 bits) and the event (packed into 32 bits by [`Packed`]). Ordered as integers, the
//! entries order by `(time, seq)` and never tie, so the pop order is fixed by the keys
//! alone, whatever structure holds them.
//!
//! The structure is a calendar queue (R. Brown, "Calendar queues: a fast O(1) priority
//! queue implementation for the simulation event set problem", CACM 31(10), 1988) with a
//! sorted current day, in the spirit of the ladder queue (Tang, Goh and Thng, "Ladder
//! queue: an O(1) priority queue structure for large-scale discrete event simulation",
//! ACM TOMACS 15(3), 2005):
//!
//! * time is cut into buckets of 2^[`BUCKET_SHIFT`] picoseconds; the [`BUCKETS`] buckets after
//!   the current one are a ring of unsorted vectors, so scheduling into the near future is
//!   an append;
//! * entries further ahead wait in a binary heap (`far`), and join the ring's order only
//!   when their bucket becomes current;
//! * when the current bucket runs out, the next non-empty one (a bitmap finds it) is
//!   sorted once, with the far entries of the same bucket, and popped from its front;
//!   the sort is a stable radix sort on the time within the bucket ([`sort_bucket`]),
//!   since the entries arrive in sequence order;
//! * an entry scheduled into the current bucket (or an earlier one: `peek_time` may have
//!   moved on) goes to a small heap (`soon`), and a pop takes the least of the sorted
//!   bucket's front and that heap's top.
//!
//! Every entry of the ring and of `far` is in a later bucket than every entry of the sorted
//! bucket and of `soon`, so the least of those two is the least of all: the queue pops
//! exactly the order of a sort by `(time, seq)`, as the 4-ary heap it replaced did
//! (tests below check it against that sort).
//!
//! Why: with tens of thousands of pending events (one per busy link end on an 8,192-host
//! fabric), a heap pop walks a dozen cache lines scattered over a megabyte; the calendar
//! touches the sorted bucket's front and appends where the new event's bucket ends
//! (measurements in docs/speed.md).
//!
//! When the 32-bit sequence runs out, the pending entries are renumbered in their order,
//! which keeps every future comparison as it was.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
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

/// `time << 64 | seq << 32 | event`.
type Key = u128;

/// log2 of a bucket's width in picoseconds: 2^10 ps = 1.02 ns. Narrower buckets make each
/// bucket's sort shorter: on perm1024's first 40 µs the whole run took 966 M instructions
/// with 16 ns buckets, 929 M with 4 ns and 894 M with 1 ns (perm8192: 7.90 G and 7.30 G
/// for 16 ns and 1 ns, with 3 % fewer L1 misses), and 5 alternated perm1024 runs were 4.5 %
/// faster (median).
const BUCKET_SHIFT: u32 = 10;
/// Buckets in the ring: 2^14 × 1.02 ns = 16.8 µs ahead, past a link's propagation and
/// serialisation; DCQCN, pause and retransmission timers further out wait in `far`.
const BUCKETS: usize = 1 << 14;
const WORDS: usize = BUCKETS / 64;
/// Emptied buffers kept for reuse (more are freed), and the largest kept, in entries: a
/// buffer that grew for a crowded bucket (all flows posting at once) is freed rather than
/// kept for the sparse buckets after it.
const MAX_SPARE: usize = 32;
const MAX_SPARE_ENTRIES: usize = 1024;

/// Buckets of at most this many entries are sorted by comparison; larger ones by radix.
const RADIX_FROM: usize = 48;
/// The radix sort's digits: two of 5 bits cover a bucket's 2^10 picoseconds.
const DIGIT_BITS: u32 = 5;
const DIGITS: usize = 1 << DIGIT_BITS;
const _: () = assert!(2 * DIGIT_BITS == BUCKET_SHIFT);

/// Sorts one bucket's entries, given in sequence order (`scratch`: a buffer to reuse).
///
/// Every entry of a bucket has the same time above its low [`BUCKET_SHIFT`] bits, and the
/// entries come in the order they were scheduled — the far heap's entries of the bucket
/// first, in key order, then the ring's in the order they were appended — so for equal
/// times their sequence numbers ascend. A stable sort on the low time bits alone then
/// gives the order by `(time, seq)`: two passes of a least-significant-digit radix sort
/// (counting sort, Cormen et al., "Introduction to Algorithms", 3rd ed., §8.2–8.3), a
/// fixed amount of work per entry where a comparison sort's grows with the bucket (a
/// bucket holds a few hundred events at 8,192 hosts). Small buckets are sorted by
/// comparison: any sort gives the same order, as keys never tie.
fn sort_bucket(v: &mut [Key], scratch: &mut Vec<Key>) {
    if v.len() <= RADIX_FROM {
        v.sort_unstable();
        return;
    }
    let offset = |k: Key| (k >> 64) as usize & ((1 << BUCKET_SHIFT) - 1);
    let (mut low, mut high) = ([0u32; DIGITS], [0u32; DIGITS]);
    for &k in v.iter() {
        low[offset(k) & (DIGITS - 1)] += 1;
        high[offset(k) >> DIGIT_BITS] += 1;
    }
    let starts = |counts: &mut [u32; DIGITS]| {
        let mut sum = 0;
        for c in counts.iter_mut() {
            (*c, sum) = (sum, sum + *c);
        }
    };
    starts(&mut low);
    starts(&mut high);
    scratch.clear();
    scratch.resize(v.len(), 0);
    for &k in v.iter() {
        let d = &mut low[offset(k) & (DIGITS - 1)];
        scratch[*d as usize] = k;
        *d += 1;
    }
    for &k in scratch.iter() {
        let d = &mut high[offset(k) >> DIGIT_BITS];
        v[*d as usize] = k;
        *d += 1;
    }
    debug_assert!(v.windows(2).all(|w| w[0] < w[1]), "a bucket's entries out of sequence order");
}

#[inline]
fn bucket_of(k: Key) -> u64 {
    ((k >> 64) as u64) >> BUCKET_SHIFT
}

/// Pending events, popped in `(time, insertion order)`.
pub struct EventQueue<E> {
    /// The current bucket's entries, sorted; `current[head..]` are still pending.
    current: Vec<Key>,
    head: usize,
    /// The bucket sort's buffer.
    scratch: Vec<Key>,
    /// Entries scheduled into the current (or an earlier) bucket after it was sorted.
    soon: BinaryHeap<Reverse<Key>>,
    /// Ring slot `b % BUCKETS` holds the entries of bucket `b`, for `cur < b < cur + BUCKETS`.
    ring: Vec<Vec<Key>>,
    /// Emptied bucket buffers, handed to the next ring slot that gets an entry: a slot
    /// owns a buffer only while it holds entries, so the ring's memory is that of its
    /// occupied buckets, not of every slot at its busiest.
    spare: Vec<Vec<Key>>,
    /// Bit `s` set: ring slot `s` is not empty.
    occupied: [u64; WORDS],
    /// Entries in the ring.
    in_ring: usize,
    /// Entries of buckets `cur + BUCKETS` and later.
    far: BinaryHeap<Reverse<Key>>,
    /// The current bucket.
    cur: u64,
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
        EventQueue {
            current: Vec::new(),
            head: 0,
            scratch: Vec::new(),
            soon: BinaryHeap::new(),
            ring: (0..BUCKETS).map(|_| Vec::new()).collect(),
            spare: Vec::new(),
            occupied: [0; WORDS],
            in_ring: 0,
            far: BinaryHeap::new(),
            cur: 0,
            len: 0,
            seq: 0,
            seq_limit: 1 << 32,
            now: SimTime::ZERO,
            popped: 0,
            ev: PhantomData,
        }
    }

    /// The time of the last popped event.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `ev` at `at`, which must not be in the past.
    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {:?} < {:?}", at, self.now);
        if self.seq == self.seq_limit {
            self.renumber();
        }
        let k = (at.0 as u128) << 64 | (self.seq as u128) << 32 | ev.pack() as u128;
        self.seq += 1;
        self.len += 1;
        self.place(k);
    }

    /// Puts `k` where its bucket says.
    #[inline]
    fn place(&mut self, k: Key) {
        let b = bucket_of(k);
        if b <= self.cur {
            self.soon.push(Reverse(k));
        } else if b - self.cur < BUCKETS as u64 {
            let s = (b % BUCKETS as u64) as usize;
            if self.ring[s].capacity() == 0 {
                if let Some(buf) = self.spare.pop() {
                    self.ring[s] = buf;
                }
            }
            self.ring[s].push(k);
            self.occupied[s / 64] |= 1 << (s % 64);
            self.in_ring += 1;
        } else {
            self.far.push(Reverse(k));
        }
    }

    /// Gives the pending entries sequence numbers 0, 1, .. in their order: later entries
    /// get larger numbers, so every comparison stays as it was.
    #[cold]
    fn renumber(&mut self) {
        let mut all: Vec<Key> = self.current.split_off(self.head);
        self.current.clear();
        self.head = 0;
        all.extend(self.soon.drain().map(|Reverse(k)| k));
        all.extend(self.far.drain().map(|Reverse(k)| k));
        for v in &mut self.ring {
            all.append(v);
        }
        self.occupied = [0; WORDS];
        self.in_ring = 0;
        all.sort_unstable();
        for (i, k) in all.into_iter().enumerate() {
            let renumbered = (k >> 64) << 64 | (i as u128) << 32 | (k & 0xFFFF_FFFF);
            self.place(renumbered);
        }
        self.seq = self.len as u64;
        assert!(self.seq < self.seq_limit, "more than 2^32 pending events");
    }

    /// The least pending key, moving to the next non-empty bucket when the current one is
    /// spent; `None` when nothing is pending.
    #[inline]
    fn least(&mut self) -> Option<Key> {
        loop {
            let a = self.current.get(self.head).copied();
            let b = self.soon.peek().map(|r| r.0);
            match (a, b) {
                (Some(a), Some(b)) => return Some(a.min(b)),
                (Some(x), None) | (None, Some(x)) => return Some(x),
                (None, None) if self.len == 0 => return None,
                (None, None) => self.advance(),
            }
        }
    }

    /// Makes the next non-empty bucket current: its ring entries and its far entries,
    /// sorted.
    #[cold]
    #[inline(never)]
    fn advance(&mut self) {
        let ring_next = (self.in_ring > 0).then(|| self.cur + self.next_occupied_after(self.cur));
        let far_next = self.far.peek().map(|r| bucket_of(r.0));
        let next = match (ring_next, far_next) {
            (Some(r), Some(f)) => r.min(f),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => unreachable!("advance with nothing pending outside the current bucket"),
        };
        debug_assert!(next > self.cur);
        self.cur = next;
        self.current.clear();
        self.head = 0;
        // The far entries of the bucket were scheduled before any of its ring entries
        // (a bucket enters the ring's span once and stays), so they go first: the entries
        // are then in sequence order, which `sort_bucket` needs.
        while let Some(&Reverse(k)) = self.far.peek() {
            if bucket_of(k) != next {
                break;
            }
            self.far.pop();
            self.current.push(k);
        }
        if ring_next == Some(next) {
            let s = (next % BUCKETS as u64) as usize;
            let ring = std::mem::take(&mut self.ring[s]);
            self.in_ring -= ring.len();
            let spent = if self.current.is_empty() {
                std::mem::replace(&mut self.current, ring)
            } else {
                self.current.extend_from_slice(&ring);
                ring
            };
            if self.spare.len() < MAX_SPARE && spent.capacity() <= MAX_SPARE_ENTRIES {
                let mut spent = spent;
                spent.clear();
                self.spare.push(spent);
            }
            self.occupied[s / 64] &= !(1 << (s % 64));
        }
        // Far entries of buckets now inside the ring's span stay in `far`: the loop above
        // takes each when its bucket becomes current.
        sort_bucket(&mut self.current, &mut self.scratch);
    }

    /// Buckets from `cur` to the next occupied ring slot (1..BUCKETS); the ring is not empty.
    fn next_occupied_after(&self, cur: u64) -> u64 {
        let start = ((cur + 1) % BUCKETS as u64) as usize;
        for step in 0..=WORDS {
            let w = (start / 64 + step) % WORDS;
            let mut bits = self.occupied[w];
            if step == 0 {
                bits &= !0u64 << (start % 64);
            } else if step == WORDS {
                bits &= !(!0u64 << (start % 64));
            }
            if bits != 0 {
                let s = w * 64 + bits.trailing_zeros() as usize;
                return ((s + BUCKETS - start) % BUCKETS) as u64 + 1;
            }
        }
        unreachable!("the ring holds entries but no slot is marked")
    }

    /// Removes and returns the earliest event, advancing `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let k = self.least()?;
        if self.current.get(self.head) == Some(&k) {
            self.head += 1;
        } else {
            self.soon.pop();
        }
        self.len -= 1;
        self.now = SimTime((k >> 64) as u64);
        self.popped += 1;
        Some((self.now, E::unpack(k as u32)))
    }

    /// The entry `n` places after the next one in the current bucket's sorted order, if
    /// the bucket holds it: a hint for prefetching what that event will touch, not a
    /// promise (an entry scheduled into the current bucket later may run before it).
    #[inline]
    pub fn upcoming(&self, n: usize) -> Option<E> {
        self.current.get(self.head + n).map(|&k| E::unpack(k as u32))
    }

    /// Time of the earliest pending event. It may move the queue to its next bucket (no
    /// entry moves past another), hence `&mut`.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.least().map(|k| SimTime((k >> 64) as u64))
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

    /// `upcoming(n)` names the event popped n pops after the next one, within the sorted
    /// current bucket, and nothing past that bucket.
    #[test]
    fn upcoming_is_the_pop_order_within_the_bucket() {
        let mut q = EventQueue::new();
        // A later bucket than the first (entries for the current one wait in `soon`).
        let b = 5 << BUCKET_SHIFT;
        for (t, e) in [(b + 3, 10u32), (b + 1, 11), (b + 3, 12), (b + 2, 13), (b << 10, 14)] {
            q.schedule(SimTime(t), e);
        }
        assert_eq!(q.pop().map(|(_, e)| e), Some(11));
        let ahead: Vec<Option<u32>> = (0..4).map(|n| q.upcoming(n)).collect();
        assert_eq!(ahead, vec![Some(13), Some(10), Some(12), None]);
        let popped: Vec<u32> = (0..3).filter_map(|_| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(popped, vec![13, 10, 12]);
        assert_eq!(q.upcoming(0), None, "the far event is not in the current bucket yet");
    }

    /// Times around the structure's edges: inside the current bucket, the ring's last
    /// slot, the first far bucket, and far beyond.
    fn edge_times() -> impl proptest::strategy::Strategy<Value = u64> {
        use proptest::prelude::*;
        let w = 1u64 << BUCKET_SHIFT;
        let span = w * BUCKETS as u64;
        prop_oneof![0u64..50, 0..3 * w, span - 2 * w..span + 2 * w, 0..5 * span, 0..u64::MAX / 4]
    }

    proptest::proptest! {
        #[test]
        fn pops_sorted_stable(times in proptest::collection::vec(edge_times(), 0..300)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() { q.schedule(SimTime(*t), i as u32); }
            let mut got = vec![];
            while let Some((t, i)) = q.pop() { got.push((t.0, i)); }
            let mut want: Vec<(u64, u32)> = times.iter().enumerate().map(|(i, t)| (*t, i as u32)).collect();
            want.sort();
            proptest::prop_assert_eq!(got, want);
        }

        /// Crowded buckets (the radix sort's), with entries of the same bucket from the far
        /// heap and from the ring, and many equal times, pop as a sort by (time, insertion).
        #[test]
        fn crowded_bucket_matches_a_sort(
            far in proptest::collection::vec(0u64..64, 0..150),
            ring in proptest::collection::vec(0u64..64, 0..150),
            first in proptest::collection::vec(0u64..1024, 0..150),
        ) {
            let w = 1u64 << BUCKET_SHIFT;
            let (bucket, early) = (BUCKETS as u64 + 5, 6u64);
            let mut q = EventQueue::new();
            let mut want = vec![];
            let mut n = 0u32;
            let mut put = |q: &mut EventQueue<u32>, want: &mut Vec<(u64, u32)>, t: u64| {
                q.schedule(SimTime(t), n);
                want.push((t, n));
                n += 1;
            };
            for &t in &first {
                put(&mut q, &mut want, w + t);
            }
            for &t in &far {
                put(&mut q, &mut want, bucket * w + t * 16);
            }
            put(&mut q, &mut want, early * w);
            // Pop up to the early event: the far bucket is then inside the ring's span.
            let mut got = vec![];
            while let Some((t, e)) = q.pop() {
                got.push((t.0, e));
                if t.0 == early * w {
                    break;
                }
            }
            for &t in &ring {
                put(&mut q, &mut want, bucket * w + t * 16);
            }
            got.extend(std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))));
            want.sort();
            proptest::prop_assert_eq!(got, want);
        }

        /// Interleaved schedules, peeks and pops, at delays across every part of the
        /// structure, pop exactly as a sort by (time, insertion order) does; with a tiny
        /// sequence space, renumbering every few schedules.
        #[test]
        fn interleaved_matches_a_sort(ops in proptest::collection::vec((edge_times(), 0u8..4), 0..400), tiny_seq in proptest::bool::ANY) {
            let mut q = EventQueue::new();
            if tiny_seq { q.seq_limit = 7; }
            let mut pending: Vec<(u64, u64, u32)> = vec![];
            let (mut n, mut now) = (0u64, 0u64);
            for (i, &(dt, op)) in ops.iter().enumerate() {
                match op {
                    0 => {
                        pending.sort();
                        let want = (!pending.is_empty()).then(|| pending.remove(0));
                        let got = q.pop();
                        proptest::prop_assert_eq!(got.map(|(t, e)| (t.0, e)), want.map(|(t, _, e)| (t, e)));
                        if let Some((t, _)) = got { now = t.0; }
                    }
                    1 => {
                        let want = pending.iter().map(|p| p.0).min();
                        proptest::prop_assert_eq!(q.peek_time().map(|t| t.0), want);
                    }
                    _ if !tiny_seq || pending.len() < 6 => {
                        let at = now.saturating_add(dt);
                        q.schedule(SimTime(at), i as u32);
                        pending.push((at, n, i as u32));
                        n += 1;
                    }
                    _ => {}
                }
                proptest::prop_assert_eq!(q.len(), pending.len());
            }
            pending.sort();
            let rest: Vec<_> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
            proptest::prop_assert_eq!(rest, pending.into_iter().map(|(t, _, e)| (t, e)).collect::<Vec<_>>());
        }
    }
}
