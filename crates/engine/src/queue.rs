//! A binary-heap event queue with a stable tie-break.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use units::SimTime;

struct Entry<E> {
    time: u64,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we pop the earliest (time, seq).
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// Pending events, popped in `(time, insertion order)`.
///
/// The queue is meant to stay small: FIFO emitters (links) keep their own rings and put
/// only their head here, and timers are cancelled lazily by the caller (a generation
/// counter in the event), so the heap holds about one entry per active component.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::new(), seq: 0, now: SimTime::ZERO, popped: 0 }
    }

    /// The time of the last popped event.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `ev` at `at`, which must not be in the past.
    pub fn schedule(&mut self, at: SimTime, ev: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {:?} < {:?}", at, self.now);
        self.heap.push(Entry { time: at.0, seq: self.seq, ev });
        self.seq += 1;
    }

    /// Removes and returns the earliest event, advancing `now` to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let e = self.heap.pop()?;
        self.now = SimTime(e.time);
        self.popped += 1;
        Some((self.now, e.ev))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| SimTime(e.time))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
        q.schedule(SimTime(5), 'b');
        q.schedule(SimTime(1), 'a');
        q.schedule(SimTime(5), 'c');
        q.schedule(SimTime(5), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
        assert_eq!(q.now(), SimTime(5));
        assert_eq!(q.popped(), 4);
    }

    proptest::proptest! {
        #[test]
        fn pops_sorted_stable(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() { q.schedule(SimTime(*t), i); }
            let mut got = vec![];
            while let Some((t, i)) = q.pop() { got.push((t.0, i)); }
            let mut want: Vec<(u64, usize)> = times.iter().enumerate().map(|(i, t)| (*t, i)).collect();
            want.sort();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
