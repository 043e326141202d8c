//! The event queue: a monotone radix heap keyed on integer picoseconds.
//!
//! A discrete-event simulation only ever inserts events at or after the time of the last
//! one removed, which is what a radix heap needs (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster
//! algorithms for the shortest path problem", JACM 1990): bucket `i` holds the keys whose
//! highest bit differing from the last removed key is bit `i - 1` (bucket 0: equal keys).
//! Removing the minimum empties bucket 0, or redistributes the first non-empty bucket, where
//! every key moves to a lower bucket; each key moves at most 64 times, and in practice once or
//! twice.
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

/// The queue.
pub(crate) struct Events {
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

impl Events {
    pub fn new() -> Self {
        Events {
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

    /// Up to `n` events due soon, without taking them: the next ones at the current time,
    /// then the first ones held in the lowest buckets (not necessarily in the order they will
    /// come out, but all before any later bucket's). For prefetching what they touch.
    #[inline]
    pub fn soon(&self, n: usize) -> impl Iterator<Item = Event> + '_ {
        let now = self.buckets[0].get(self.head..).unwrap_or_default();
        let mut mask = self.occupied;
        let later = std::iter::from_fn(move || {
            if mask == 0 {
                return None;
            }
            let i = mask.trailing_zeros() as usize + 1;
            mask &= mask - 1;
            Some(self.buckets[i].iter())
        })
        .flatten();
        now.iter().chain(later).take(n).map(|e| e.what)
    }

    /// Move every [`Event::Start`] `dt` earlier (never before `now`, the last event
    /// removed), keeping every other event's time and the order of equal times: the hybrid
    /// engine's skip (`forward.rs`), rare enough to rebuild the calendar for.
    pub fn shift_starts(&mut self, now: u64, dt: u64) {
        let mut all = Vec::with_capacity(self.len);
        while let Some(e) = self.pop() {
            all.push(e);
        }
        // Re-inserted in time order: a start moved earlier goes after the events already
        // at its new time, as if it had been scheduled after them.
        let mut moved: Vec<Entry> = all
            .into_iter()
            .map(|e| match e.what {
                Event::Start(_) => Entry {
                    time_ps: e.time_ps.saturating_sub(dt).max(now),
                    what: e.what,
                },
                _ => e,
            })
            .collect();
        moved.sort_by_key(|e| e.time_ps);
        *self = Events::new();
        self.last = now;
        for e in moved {
            self.push(e.time_ps, e.what);
        }
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

    /// The earliest event if it is before `end` (a partition's window, `partition.rs`).
    #[inline]
    pub fn pop_before(&mut self, end: u64) -> Option<Entry> {
        if self.head >= self.buckets[0].len() {
            let i = self.first_occupied()?;
            if self.mins[i] >= end {
                return None;
            }
            self.redistribute(i);
        } else if self.last >= end {
            return None;
        }
        self.pop()
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
    use crate::ids::FlowId;

    fn ev(n: u64) -> Event {
        Event::Start(FlowId::new(n as u32))
    }

    /// Knuth's MMIX linear congruential step: the tests' reproducible times.
    fn lcg(x: &mut u64) -> u64 {
        *x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *x
    }

    #[test]
    fn pops_in_time_then_insertion_order() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        // Against a binary heap on (time, insertion number), with pushes interleaved with
        // pops and many equal times.
        let mut q = Events::new();
        let mut reference = BinaryHeap::new();
        let mut x = 12345u64;
        let mut now = 0;
        let mut n = 0u64;
        for _ in 0..5000 {
            for k in 0..3u64 {
                let t = now + (lcg(&mut x) >> 40) % 1000 * (k % 2);
                q.push(t, ev(n));
                reference.push(Reverse((t, n)));
                n += 1;
            }
            let e = q.pop().unwrap();
            let Reverse((t, id)) = reference.pop().unwrap();
            assert_eq!((e.time_ps, e.what), (t, ev(id)));
            now = e.time_ps;
        }
        while let Some(e) = q.pop() {
            let Reverse((t, id)) = reference.pop().unwrap();
            assert_eq!((e.time_ps, e.what), (t, ev(id)));
        }
        assert!(reference.is_empty());
        assert_eq!(q.len(), 0);
    }

    /// Windows as a partitioned run takes them: events popped before each window's end,
    /// with events pushed during the window at or after the event popped and, between
    /// windows, at or after the window's end (messages from other parts); the order is a
    /// binary heap's on (time, insertion number), and `next_time` its minimum.
    #[test]
    fn windows_pop_in_time_then_insertion_order() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut q = Events::new();
        let mut reference = BinaryHeap::new();
        let mut x = 99u64;
        let mut rand = || lcg(&mut x) >> 33;
        let mut n = 0u64;
        let mut end = 0u64;
        for _ in 0..400 {
            assert_eq!(q.next_time(), reference.peek().map(|Reverse((t, _))| *t));
            end += 1 + rand() % 700;
            while let Some(e) = q.pop_before(end) {
                let Reverse((t, id)) = reference.pop().unwrap();
                assert_eq!((e.time_ps, e.what), (t, ev(id)));
                assert!(t < end);
                for _ in 0..rand() % 3 {
                    let t = e.time_ps + rand() % 1500 * (rand() % 2);
                    q.push(t, ev(n));
                    reference.push(Reverse((t, n)));
                    n += 1;
                }
            }
            assert!(reference.peek().is_none_or(|Reverse((t, _))| *t >= end));
            for _ in 0..1 + rand() % 4 {
                let t = end + rand() % 2000;
                q.push(t, ev(n));
                reference.push(Reverse((t, n)));
                n += 1;
            }
        }
        assert!(n > 1000);
    }

    /// `soon` looks at held events only, the next one first whenever it is due at the
    /// current time; the occupancy bits and the earliest times follow the buckets.
    #[test]
    fn soon_shows_held_events_the_next_first_when_due_now() {
        use std::collections::BTreeSet;
        let mut q = Events::new();
        let mut held: BTreeSet<(u64, u64)> = BTreeSet::new();
        let mut x = 7u64;
        let mut now = 0;
        let mut n = 0u64;
        let mut due_now = 0;
        for _ in 0..4000 {
            for k in 0..2u64 {
                let t = now + (lcg(&mut x) >> 40) % 300 * (k % 2);
                q.push(t, ev(n));
                held.insert((t, n));
                n += 1;
            }
            let e = q.pop().unwrap();
            let (t, id) = held.pop_first().unwrap();
            assert_eq!((e.time_ps, e.what), (t, ev(id)));
            now = t;
            let ids: Vec<Event> = held.iter().map(|&(_, i)| ev(i)).collect();
            let soon: Vec<Event> = q.soon(4).collect();
            assert!(soon.len() <= 4 && soon.len() == held.len().min(4));
            assert!(soon.iter().all(|e| ids.contains(e)), "only held events");
            if let Some(&(t, id)) = held.first() {
                if t == now {
                    assert_eq!(soon[0], ev(id));
                    due_now += 1;
                }
            }
            for i in 1..65 {
                assert_eq!(q.occupied >> (i - 1) & 1 == 1, !q.buckets[i].is_empty());
                let min = q.buckets[i].iter().map(|e| e.time_ps).min();
                assert_eq!(q.mins[i], min.unwrap_or(u64::MAX), "bucket {i}'s earliest");
            }
        }
        assert!(due_now > 100, "{due_now} steps with the next event due now");
    }

    #[test]
    fn equal_times_keep_insertion_order() {
        let mut q = Events::new();
        q.push(5, ev(1));
        q.push(9, ev(2));
        q.push(5, ev(3));
        assert_eq!(q.pop().unwrap().what, ev(1));
        q.push(5, ev(4));
        q.push(9, ev(5));
        let order: Vec<Event> = std::iter::from_fn(|| q.pop().map(|e| e.what)).collect();
        assert_eq!(order, vec![ev(3), ev(4), ev(2), ev(5)]);
    }
}
