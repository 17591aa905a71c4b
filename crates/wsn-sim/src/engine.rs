//! The event queue of the next-event loop.
//!
//! Events are ordered by `(time, insertion sequence)`: two events at the same instant pop in the
//! order they were scheduled (FIFO tie-break), which together with seeded random streams makes
//! a run a pure function of its scenario and seed. Timers are cancelled lazily: the owner keeps a
//! generation counter and ignores a popped event whose generation is stale.
//!
//! # Implementation: a radix heap on the time
//!
//! The key is the event's time alone (a `u64`), which in a simulation is never below the time of
//! the event popped last (`last`): new events are scheduled at or after the current time. A radix
//! heap exploits that monotonicity. An event at time `t` sits in bucket `b(t ⊕ last)`, the bit
//! length of `t ⊕ last` (0 for `t = last`, else 1..=64): bucket `b` holds times that agree with
//! `last` above bit `b − 1` and differ at it, so every time in a lower bucket is smaller than
//! every time in a higher one. To pop, when bucket 0 is empty, the lowest non-empty bucket is
//! scanned for its minimum time, which becomes `last`, and the bucket's events are redistributed
//! into strictly lower buckets; those at the minimum land in bucket 0. An event therefore moves
//! down at most 64 times over its life and in practice a handful of times, against the log₂(n)
//! sift of a binary heap on every pop; the buckets are plain vectors, which also keeps the memory
//! traffic sequential.
//!
//! The FIFO tie-break needs no sequence number: events of equal time always share a bucket (the
//! bucket is a function of the time), a push appends the newest event at its bucket's end, and a
//! redistribution walks its bucket in order and appends to the lower ones, so within every bucket
//! the events of one time stay in the order they were scheduled. Bucket 0 holds exactly the
//! events at `last` and is popped from its front. The order is therefore exactly that of a binary
//! heap on `(time, sequence)`; shadow-model property tests check it against a stable sort and a
//! binary heap. Pushing an event below `last` (earlier than an event already peeked; the
//! simulator never does) is still handled correctly by re-bucketing everything around the new
//! minimum.

use std::collections::VecDeque;
use wsn_proto::time::Instant;

/// Buckets 1..=64 (the bit length of a non-zero `u64`); bucket 0 is [`EventQueue::now`].
const BUCKETS: usize = 65;

/// A waiting event and its time: 16 bytes with an 8-byte event.
struct Entry<E> {
    time: u64,
    event: E,
}

/// Bucket of a time relative to `last`: the bit length of `time ⊕ last`.
#[inline]
fn bucket(time: u64, last: u64) -> usize {
    (64 - (time ^ last).leading_zeros()) as usize
}

/// A deterministic future-event list.
pub struct EventQueue<E> {
    /// Events at time `last`, in the order they were scheduled (bucket 0).
    now: VecDeque<Entry<E>>,
    /// Buckets 1..=64 (index 0 unused).
    buckets: [Vec<Entry<E>>; BUCKETS],
    /// Bit `b − 1` set ⇔ bucket `b` (1..=64) is non-empty.
    nonempty: u64,
    /// Time of the last event popped (or peeked): no waiting event is earlier.
    last: u64,
    len: usize,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            now: VecDeque::new(),
            buckets: std::array::from_fn(|_| Vec::new()),
            nonempty: 0,
            last: 0,
            len: 0,
            popped: 0,
        }
    }

    #[inline]
    fn put(&mut self, e: Entry<E>) {
        let b = bucket(e.time, self.last);
        if b == 0 {
            self.now.push_back(e);
        } else {
            self.nonempty |= 1 << (b - 1);
            self.buckets[b].push(e);
        }
    }

    /// Schedule `event` at `time`.
    pub fn push(&mut self, time: Instant, event: E) {
        if time.0 < self.last {
            self.rebase(time.0);
        }
        self.put(Entry { time: time.0, event });
        self.len += 1;
    }

    /// Make `time` (below every waiting time) the new `last` and re-bucket every waiting event
    /// (bucket by bucket, each in its order, which keeps equal times in the order scheduled).
    #[cold]
    fn rebase(&mut self, time: u64) {
        let mut all: Vec<Entry<E>> = self.now.drain(..).collect();
        for b in &mut self.buckets {
            all.append(b);
        }
        self.nonempty = 0;
        self.last = time;
        for e in all {
            self.put(e);
        }
    }

    /// Move the earliest events (all of the earliest time) into bucket 0.
    /// Returns false if the queue is empty.
    #[inline]
    fn settle(&mut self) -> bool {
        if !self.now.is_empty() {
            return true;
        }
        if self.nonempty == 0 {
            return false;
        }
        self.redistribute();
        true
    }

    /// Empty the lowest non-empty bucket into lower ones around its minimum time.
    fn redistribute(&mut self) {
        let b = self.nonempty.trailing_zeros() as usize + 1;
        self.nonempty &= !(1 << (b - 1));
        let mut from = std::mem::take(&mut self.buckets[b]);
        let min = from.iter().map(|e| e.time).min().expect("bucket marked non-empty");
        self.last = min;
        // Every time of bucket b agrees with the old and the new `last` above bit b − 1 and, being
        // ≥ min, lands in a bucket below b.
        for e in from.drain(..) {
            self.put(e);
        }
        // Keep the allocation for the next time this bucket fills.
        self.buckets[b] = from;
    }

    /// Remove and return the earliest event.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        if !self.settle() {
            return None;
        }
        let e = self.now.pop_front().expect("settled");
        self.len -= 1;
        self.popped += 1;
        Some((Instant(e.time), e.event))
    }

    /// Time of the earliest event.
    pub fn peek_time(&mut self) -> Option<Instant> {
        if !self.settle() {
            return None;
        }
        Some(Instant(self.last))
    }
    /// Events waiting.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when no event waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(Instant(5), 'a');
        q.push(Instant(3), 'b');
        q.push(Instant(5), 'c');
        q.push(Instant(3), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert!(q.is_empty());
        assert_eq!(q.popped(), 4);
    }

    #[test]
    fn push_before_a_peeked_event() {
        let mut q = EventQueue::new();
        q.push(Instant(100), 'a');
        q.push(Instant(200), 'b');
        assert_eq!(q.peek_time(), Some(Instant(100)));
        // Earlier than the peeked minimum (the simulator never does this; the queue copes).
        q.push(Instant(50), 'c');
        q.push(Instant(100), 'd');
        assert_eq!(q.len(), 4);
        let got: Vec<(u64, char)> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
        assert_eq!(got, vec![(50, 'c'), (100, 'a'), (100, 'd'), (200, 'b')]);
        assert_eq!(q.pop().map(|(t, _)| t), None);
        assert_eq!(q.peek_time(), None);
    }

    /// The reference: the previous implementation's order, a binary heap on (time, sequence).
    fn reference(ops: &[(bool, u64)]) -> Vec<(u64, usize)> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut h = BinaryHeap::new();
        let mut out = Vec::new();
        let mut now = 0;
        for (i, &(is_pop, dt)) in ops.iter().enumerate() {
            if is_pop {
                if let Some(Reverse((t, s))) = h.pop() {
                    now = t;
                    out.push((t, s));
                }
            } else {
                h.push(Reverse((now + dt, i)));
            }
        }
        while let Some(Reverse(x)) = h.pop() {
            out.push(x);
        }
        out
    }

    proptest! {
        // Shadow-model test: the queue pops exactly what a stable sort by time gives.
        #[test]
        fn matches_stable_sort(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() {
                q.push(Instant(*t), i);
            }
            let mut expect: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
            expect.sort_by_key(|&(t, _)| t);
            let got: Vec<(u64, usize)> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
            prop_assert_eq!(got, expect);
        }

        // Pushes and pops interleaved as in a simulation (new events at or after the time of
        // the last popped one, over several time scales), against a binary heap.
        #[test]
        fn interleaved_matches_binary_heap(
            ops in proptest::collection::vec((any::<bool>(), prop_oneof![0u64..3, 0u64..1_000, 0u64..1u64 << 40]), 0..400)
        ) {
            let mut q = EventQueue::new();
            let mut got = Vec::new();
            let mut now = 0;
            for (i, &(is_pop, dt)) in ops.iter().enumerate() {
                if is_pop {
                    if let Some((t, e)) = q.pop() {
                        now = t.0;
                        got.push((t.0, e));
                    }
                } else {
                    q.push(Instant(now + dt), i);
                }
            }
            while let Some((t, e)) = q.pop() {
                got.push((t.0, e));
            }
            prop_assert_eq!(got, reference(&ops));
        }

        // As above with peeks between the pushes: a peek moves `last` up to the earliest waiting
        // time, so a later push between the current time and that one re-buckets the queue
        // (`rebase`); equal times must still pop in the order they were scheduled.
        #[test]
        fn pushes_below_a_peek_match_binary_heap(
            ops in proptest::collection::vec((0u8..3, prop_oneof![0u64..4, 0u64..64]), 0..400)
        ) {
            let mut q = EventQueue::new();
            let mut heap = std::collections::BinaryHeap::new();
            let (mut got, mut want) = (Vec::new(), Vec::new());
            let mut now = 0;
            for (i, &(op, dt)) in ops.iter().enumerate() {
                match op {
                    0 => {
                        q.push(Instant(now + dt), i);
                        heap.push(std::cmp::Reverse((now + dt, i)));
                    }
                    1 => {
                        if let Some((t, e)) = q.pop() {
                            now = t.0;
                            got.push((t.0, e));
                        }
                        if let Some(std::cmp::Reverse(x)) = heap.pop() {
                            want.push(x);
                        }
                    }
                    _ => {
                        let peeked = q.peek_time().map(|t| t.0);
                        prop_assert_eq!(peeked, heap.peek().map(|std::cmp::Reverse((t, _))| *t));
                    }
                }
            }
            got.extend(std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))));
            want.extend(std::iter::from_fn(|| heap.pop().map(|std::cmp::Reverse(x)| x)));
            prop_assert_eq!(got, want);
        }
    }

    mod audit35 {
        use super::*;

        /// `is_empty`: "True when no event waits": a queue holding one event is not empty (the
        /// network's run loop stops on an empty queue).
        #[test]
        fn one_waiting_event_is_not_empty() {
            let mut q = EventQueue::new();
            assert!(q.is_empty());
            q.push(Instant(7), ());
            assert!(!q.is_empty());
            assert_eq!(q.len(), 1);
            assert_eq!(q.pop(), Some((Instant(7), ())));
            assert!(q.is_empty());
        }
    }
}
