//! The event queue's far part (`events.rs`): a monotone radix heap keyed on integer
//! picoseconds.
//!
//! A discrete-event simulation only ever inserts events at or after the time of the last
//! one removed, which is what a radix heap needs (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster
//! algorithms for the shortest path problem", JACM 1990): bucket `i` holds the keys whose
//! highest bit differing from the last removed key is bit `i - 1` (bucket 0: equal keys).
//! Removing the minimum empties bucket 0, or redistributes the first non-empty bucket, where
//! every key moves to a lower bucket; each key moves at most 64 times (measured on the
//! packet engine's permutations, where most events are due within 2 us: 6 times on average,
//! which is why the near future is a timing wheel's).
//!
//! Ties (events at the same picosecond) come out in insertion order, with no sequence number
//! stored: every bucket is kept in insertion order. A push appends, and everything already
//! held was inserted before it. A redistribution only happens when bucket 0 and every bucket
//! below the one redistributed are empty, and it moves that bucket's entries front to back,
//! so each bucket it fills receives them in the order they were inserted. So bucket 0, read
//! front to back, gives the events at the minimum in insertion order, and a run is the same
//! whatever the heap's internal layout.

use crate::event::Event;

/// One scheduled event: its time and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub time_ps: u64,
    pub what: Event,
}

const _: () = assert!(std::mem::size_of::<Entry>() <= 16);

/// The heap.
pub(crate) struct RadixHeap {
    buckets: Vec<Vec<Entry>>,
    /// The last key removed (every key held is at least this).
    last: u64,
    len: usize,
    /// Bucket 0 is read from here on.
    head: usize,
    /// Bit `i - 1` set: bucket `i` (1 to 64) may hold events (clear: it holds none).
    occupied: u64,
    /// The earliest time in each bucket from 1 on (`u64::MAX` while it is empty), kept as
    /// events come in so that a redistribution reads its bucket once, not twice.
    mins: [u64; 65],
}

fn bucket(last: u64, key: u64) -> usize {
    if key == last {
        0
    } else {
        64 - (key ^ last).leading_zeros() as usize
    }
}

impl RadixHeap {
    pub fn new() -> Self {
        RadixHeap {
            buckets: (0..65).map(|_| Vec::new()).collect(),
            last: 0,
            len: 0,
            head: 0,
            occupied: 0,
            mins: [u64::MAX; 65],
        }
    }

    /// Events held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Schedule `what` at `time_ps` (not before the last event removed).
    pub fn push(&mut self, time_ps: u64, what: Event) {
        debug_assert!(time_ps >= self.last, "an event in the past");
        self.len += 1;
        // Appending keeps the bucket in insertion order (see the module's docs).
        let b = bucket(self.last, time_ps);
        self.buckets[b].push(Entry { time_ps, what });
        if b > 0 {
            self.occupied |= 1 << (b - 1);
            self.mins[b] = self.mins[b].min(time_ps);
        }
    }

    /// The first bucket from 1 on holding any event.
    #[inline]
    fn first_occupied(&self) -> Option<usize> {
        (self.occupied != 0).then(|| self.occupied.trailing_zeros() as usize + 1)
    }

    /// The earliest event's time, without taking it (nor reorganizing the queue, so that
    /// events may still be pushed at any time from the last one removed on).
    pub fn next_time(&self) -> Option<u64> {
        if self.head < self.buckets[0].len() {
            return Some(self.last);
        }
        let i = self.first_occupied()?;
        Some(self.mins[i])
    }

    /// Bucket 0 being empty and `i` the first bucket holding any event: move its events to
    /// the buckets around the earliest of them.
    fn redistribute(&mut self, i: usize) {
        self.buckets[0].clear();
        self.head = 0;
        let mut moved = std::mem::take(&mut self.buckets[i]);
        self.occupied &= !(1 << (i - 1));
        let min = std::mem::replace(&mut self.mins[i], u64::MAX);
        self.last = min;
        for e in moved.drain(..) {
            let b = bucket(min, e.time_ps);
            self.buckets[b].push(e);
            if b > 0 {
                self.occupied |= 1 << (b - 1);
                self.mins[b] = self.mins[b].min(e.time_ps);
            }
        }
        self.buckets[i] = moved;
    }

    /// The earliest event (ties: first scheduled first).
    pub fn pop(&mut self) -> Option<Entry> {
        if self.len == 0 {
            return None;
        }
        if self.head >= self.buckets[0].len() {
            self.buckets[0].clear();
            self.head = 0;
            // Redistribute the first non-empty bucket around its minimum.
            let i = self.first_occupied()?;
            self.redistribute(i);
        }
        let e = self.buckets[0][self.head];
        self.head += 1;
        self.len -= 1;
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = RadixHeap::new();
        // Within 1 ns (a tenth of them now): many equal times.
        let within = |r: u64| if r.is_multiple_of(10) { 0 } else { r % 1000 };
        let (_, end) = testing::pops_as_a_heap(&mut q, 5000, within);
        assert_eq!(q.len(), 0);
        assert!(end > 100_000, "the clock moved on: {end} ps");
    }

    #[test]
    fn equal_times_keep_insertion_order() {
        testing::equal_times_keep_insertion_order(&mut RadixHeap::new());
    }
}
