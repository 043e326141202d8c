//! The event queue: a two-level timing wheel for the next 4 us over a radix heap for the
//! rest (`radix.rs`), keyed on integer picoseconds, equal times in insertion order.
//!
//! Most events are due within a couple of microseconds of the one that schedules them (a
//! packet's serialization, a link's delay), and a radix heap moves each of those about six
//! times on its way down (measured on the packet engine's permutations). Here time is cut
//! into fine slots of 2^[`FINE_BITS`] ps, 64 of which make a coarse slot (65.5 ns):
//! - the fine level holds the events due in the current coarse slot, one buffer per fine
//!   slot; the current fine slot is sorted by time from where it is read on;
//! - the coarse level holds, one buffer per coarse slot, the events due in the next 63
//!   coarse slots (4.1 us);
//! - the heap holds the rest.
//!
//! A push appends to its slot's buffer (an event due in the current fine slot goes after
//! every held one due at or before it). When the fine level is used up, the next coarse slot
//! holding events becomes current: the heap's events that came within reach move to the
//! coarse level, and the coarse slot's events to their fine slots, in order. A fine slot is
//! sorted (a stable sort) when it becomes current. So an event pushed within reach moves
//! twice, against the heap's six (one due further ahead moves in the heap first), and every
//! write goes to the end of a buffer written moments before: one per
//! slot of the level, not one per slot of the horizon (a single wheel of 2,048 fine slots
//! missed the cache on most pushes at 1,024 hosts).
//!
//! Ties come out in insertion order, with no sequence number stored:
//! - a slot receives events directly only once it is within its level's reach, appended as
//!   they are pushed; the events due in it from the level above (or the heap) are moved in
//!   as it comes within reach, before any can be pushed there directly, in their order;
//! - so among equal times every buffer holds its events in insertion order, which the
//!   stable sort keeps, and an event pushed into the current fine slot was inserted after
//!   all it holds.
//!
//! So events come out in (time, insertion) order whatever the slots' widths: a run is the
//! same bytes with any wheel, and with the radix heap alone.

use crate::event::Event;
pub(crate) use crate::radix::Entry;
use crate::radix::RadixHeap;

/// A fine slot's width, as a power of two picoseconds (1.024 ns).
const FINE_BITS: u32 = 10;
/// Slots per level, as a power of two (64: one word of occupancy bits).
const SPAN_BITS: u32 = 6;
const SPAN: u64 = 1 << SPAN_BITS;
const LOW: u64 = SPAN - 1;
/// A coarse slot's width, as a power of two picoseconds (65.5 ns).
const COARSE_BITS: u32 = FINE_BITS + SPAN_BITS;

/// The queue.
pub(crate) struct Events {
    /// Fine slot `f` of the current coarse slot is `fine[f % 64]`; the current one is
    /// sorted by time from `head` on, the others unsorted (equal times in insertion order).
    fine: Vec<Vec<Entry>>,
    /// Bit `i` set: `fine[i]` holds events (the current slot's: it holds any, read or not).
    fine_occupied: u64,
    /// Coarse slot `c` (after the current one, within 64) is `coarse[c % 64]`.
    coarse: Vec<Vec<Entry>>,
    /// Bit `i` set: `coarse[i]` holds events.
    coarse_occupied: u64,
    /// The current fine slot (absolute: a time shifted by `FINE_BITS`).
    cur: u64,
    /// The current fine slot is read from here on.
    head: usize,
    /// The last time removed (every time held is at least this).
    last: u64,
    /// Events held, on the wheel and in the heap.
    len: usize,
    /// Events due from coarse slot `cur / 64 + 64` on.
    far: RadixHeap,
}

/// The slots of `occupied` after slot `i` (0 to 63) of the same word.
#[inline]
fn after(occupied: u64, i: u64) -> u64 {
    occupied & (!0u64).checked_shl(i as u32 + 1).unwrap_or(0)
}

impl Events {
    pub fn new() -> Self {
        Self::starting_at(0)
    }

    /// An empty queue whose events will come at or after `now`.
    fn starting_at(now: u64) -> Self {
        Events {
            fine: (0..SPAN).map(|_| Vec::new()).collect(),
            fine_occupied: 0,
            coarse: (0..SPAN).map(|_| Vec::new()).collect(),
            coarse_occupied: 0,
            cur: now >> FINE_BITS,
            head: 0,
            last: now,
            len: 0,
            far: RadixHeap::new(),
        }
    }

    /// Events held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Schedule `what` at `time_ps` (not before the last event removed).
    #[inline]
    pub fn push(&mut self, time_ps: u64, what: Event) {
        debug_assert!(time_ps >= self.last, "an event in the past");
        self.len += 1;
        let e = Entry { time_ps, what };
        let f = time_ps >> FINE_BITS;
        let c = f >> SPAN_BITS;
        let ahead = c - (self.cur >> SPAN_BITS);
        if ahead == 0 {
            let i = (f & LOW) as usize;
            let slot = &mut self.fine[i];
            match slot.last() {
                // The current slot is sorted from `head` on: after every event due at or
                // before it (all were inserted before it).
                Some(l) if f == self.cur && l.time_ps > time_ps => {
                    let at =
                        self.head + slot[self.head..].partition_point(|x| x.time_ps <= time_ps);
                    slot.insert(at, e);
                }
                _ => slot.push(e),
            }
            self.fine_occupied |= 1 << i;
        } else if ahead < SPAN {
            let i = (c & LOW) as usize;
            self.coarse[i].push(e);
            self.coarse_occupied |= 1 << i;
        } else {
            self.far.push(time_ps, what);
        }
    }

    /// The earliest event (ties: first scheduled first).
    #[inline]
    pub fn pop(&mut self) -> Option<Entry> {
        loop {
            if let Some(&e) = self.fine[(self.cur & LOW) as usize].get(self.head) {
                self.head += 1;
                self.len -= 1;
                self.last = e.time_ps;
                return Some(e);
            }
            if self.len == 0 {
                return None;
            }
            self.advance();
        }
    }

    /// The earliest event if it is before `end` (a partition's window, `partition.rs`).
    #[inline]
    pub fn pop_before(&mut self, end: u64) -> Option<Entry> {
        if self.next_time()? >= end {
            return None;
        }
        self.pop()
    }

    /// The earliest event's time, without taking it (nor moving the wheel, so that events
    /// may still be pushed at any time from the last one removed on).
    pub fn next_time(&self) -> Option<u64> {
        if let Some(e) = self.upcoming().first() {
            return Some(e.time_ps);
        }
        let min = |slot: &[Entry]| slot.iter().map(|e| e.time_ps).min();
        let later = after(self.fine_occupied, self.cur & LOW);
        if later != 0 {
            return min(&self.fine[later.trailing_zeros() as usize]);
        }
        match self.next_coarse() {
            Some(c) => min(&self.coarse[(c & LOW) as usize]),
            None => self.far.next_time(),
        }
    }

    /// The first coarse slot after the current one holding events, within reach.
    #[inline]
    fn next_coarse(&self) -> Option<u64> {
        let c = self.cur >> SPAN_BITS;
        let from = (c + 1) & LOW;
        let bits = self.coarse_occupied.rotate_right(from as u32);
        (bits != 0).then(|| c + 1 + u64::from(bits.trailing_zeros()))
    }

    /// The current fine slot used up and events held: make the next slot holding any
    /// current (from the coarse level, and the heap, when the fine level is used up), and
    /// sort it.
    fn advance(&mut self) {
        let i = self.cur & LOW;
        self.fine[i as usize].clear();
        self.fine_occupied &= !(1 << i);
        self.head = 0;
        if self.fine_occupied == 0 {
            let next = match self.next_coarse() {
                Some(c) => c,
                // The wheel is empty: on to the heap's earliest.
                None => self.far.next_time().expect("events held") >> COARSE_BITS,
            };
            // Coarse slots up to `next + 63` are within reach now (none held events before,
            // or could have: the heap's come first, in its order).
            while let Some(t) = self.far.next_time() {
                let c = t >> COARSE_BITS;
                if c - next >= SPAN {
                    break;
                }
                let e = self.far.pop().expect("the heap's earliest");
                self.coarse[(c & LOW) as usize].push(e);
                self.coarse_occupied |= 1 << (c & LOW);
            }
            // The coarse slot's events to their fine slots, in order.
            let k = (next & LOW) as usize;
            let mut spread = std::mem::take(&mut self.coarse[k]);
            self.coarse_occupied &= !(1 << k);
            for e in spread.drain(..) {
                let j = (e.time_ps >> FINE_BITS) & LOW;
                self.fine[j as usize].push(e);
                self.fine_occupied |= 1 << j;
            }
            self.coarse[k] = spread;
            self.cur = next << SPAN_BITS;
        } else {
            self.cur &= !LOW;
        }
        self.cur |= u64::from(self.fine_occupied.trailing_zeros());
        self.fine[(self.cur & LOW) as usize].sort_by_key(|e| e.time_ps);
    }

    /// The events next in order held in the current fine slot (at least the next one,
    /// unless it is in another slot).
    #[inline]
    pub fn upcoming(&self) -> &[Entry] {
        self.fine[(self.cur & LOW) as usize]
            .get(self.head..)
            .unwrap_or_default()
    }

    /// Up to `n` events due soon, without taking them: the next ones in order, then the
    /// current coarse slot's later fine slots' (in slot order; within a slot, not
    /// necessarily in the order they will come out). For prefetching what they touch.
    #[inline]
    pub fn soon(&self, n: usize) -> impl Iterator<Item = Event> + '_ {
        let now = self.upcoming();
        let mut later = after(self.fine_occupied, self.cur & LOW);
        let next = std::iter::from_fn(move || {
            if later == 0 {
                return None;
            }
            let j = later.trailing_zeros() as usize;
            later &= later - 1;
            Some(self.fine[j].iter())
        })
        .flatten();
        now.iter().chain(next).take(n).map(|e| e.what)
    }

    /// Move every [`Event::Start`] `dt` earlier (never before `now`, the last event
    /// removed), keeping every other event's time and the order of equal times: the hybrid
    /// engine's skip (`forward.rs`), rare enough to rebuild the queue for.
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
        *self = Events::starting_at(now);
        for e in moved {
            self.push(e.time_ps, e.what);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, ev, lcg};
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// The wheel's reach, picoseconds.
    const REACH: u64 = SPAN << COARSE_BITS;

    /// How far ahead of now a test's event is due, from a random `r`: now, within a fine
    /// slot, a few, a few coarse slots, the wheel's reach give or take, far beyond it, or on
    /// a lattice of a few delays.
    fn ahead(r: u64) -> u64 {
        let fine = 1 << FINE_BITS;
        let coarse = 1 << COARSE_BITS;
        match r % 10 {
            0 => 0,
            1 => r % fine,
            2 => r % (16 * fine),
            3 => r % (3 * coarse),
            4 => REACH - coarse + r % (2 * coarse),
            5 => r % (2 * REACH),
            6 => REACH * (1 + r % 50),
            // A network's lattice (a 4 KiB packet serialized at 100 Gb/s, a 1 us link):
            // many events due at the same time, sorted together.
            _ => 332_000 * (r % 3) + 1_000_000 * (r % 2),
        }
    }

    #[test]
    fn pops_in_time_then_insertion_order() {
        // Times on the wheel, at its edge and beyond it, and many equal ones.
        let mut q = Events::new();
        let (drawn, end) = testing::pops_as_a_heap(&mut q, 20_000, ahead);
        assert_eq!(q.len(), 0);
        let far = drawn.iter().filter(|&&a| a >= REACH).count();
        assert!(far > 1000, "{far} events beyond the wheel's reach");
        assert!(end > 10 * REACH, "the clock moved on: {end} ps");
    }

    /// Windows as a partitioned run takes them: events popped before each window's end,
    /// with events pushed during the window at or after the event popped and, between
    /// windows, at or after the window's end (messages from other parts); the order is a
    /// binary heap's on (time, insertion number), and `next_time` its minimum.
    #[test]
    fn windows_pop_in_time_then_insertion_order() {
        let mut q = Events::new();
        let mut reference = BinaryHeap::new();
        let mut x = 99u64;
        let mut rand = || lcg(&mut x) >> 33;
        let mut n = 0u64;
        let mut end = 0u64;
        for _ in 0..2000 {
            assert_eq!(q.next_time(), reference.peek().map(|Reverse((t, _))| *t));
            end += 1 + rand() % 700_000;
            while let Some(e) = q.pop_before(end) {
                let Reverse((t, id)) = reference.pop().unwrap();
                assert_eq!((e.time_ps, e.what), (t, ev(id)));
                assert!(t < end);
                for _ in 0..rand() % 3 {
                    let t = e.time_ps + ahead(rand()) * (rand() % 2);
                    q.push(t, ev(n));
                    reference.push(Reverse((t, n)));
                    n += 1;
                }
            }
            assert!(reference.peek().is_none_or(|Reverse((t, _))| *t >= end));
            for _ in 0..1 + rand() % 4 {
                let t = end + ahead(rand());
                q.push(t, ev(n));
                reference.push(Reverse((t, n)));
                n += 1;
            }
        }
        assert!(n > 5000);
    }

    /// `soon` looks at held events only, the next one first; the occupancy bits follow the
    /// buffers.
    #[test]
    fn soon_shows_held_events_the_next_first() {
        use std::collections::BTreeSet;
        let mut q = Events::new();
        let mut held: BTreeSet<(u64, u64)> = BTreeSet::new();
        let mut x = 7u64;
        let mut now = 0;
        let mut n = 0u64;
        // 16 events first, then in turns two pushed and one popped, one pushed and two
        // popped: the clock moves on.
        for round in 0..8000 {
            let pushes = if round == 0 { 16 } else { 1 + round % 2 };
            for _ in 0..pushes {
                let t = now + ahead(lcg(&mut x) >> 20);
                q.push(t, ev(n));
                held.insert((t, n));
                n += 1;
            }
            let e = q.pop().unwrap();
            let (t, id) = held.pop_first().unwrap();
            assert_eq!((e.time_ps, e.what), (t, ev(id)));
            now = t;
            if round % 2 == 0 {
                let e = q.pop().unwrap();
                let (t, id) = held.pop_first().unwrap();
                assert_eq!((e.time_ps, e.what), (t, ev(id)));
                now = t;
            }
            let ids: Vec<Event> = held.iter().map(|&(_, i)| ev(i)).collect();
            let soon: Vec<Event> = q.soon(4).collect();
            assert!(
                soon.len() <= 4 && soon.iter().all(|e| ids.contains(e)),
                "held only"
            );
            if let Some(&(_, id)) = held.first() {
                if q.head < q.fine[(q.cur & LOW) as usize].len() {
                    assert_eq!(soon[0], ev(id), "the next event first");
                }
            }
            for i in 0..SPAN as usize {
                let bit = |w: u64| w >> i & 1 == 1;
                assert_eq!(
                    bit(q.fine_occupied),
                    !q.fine[i].is_empty(),
                    "fine {i}'s bit"
                );
                assert_eq!(
                    bit(q.coarse_occupied),
                    !q.coarse[i].is_empty(),
                    "coarse {i}"
                );
            }
        }
        assert!(now > 10 * REACH, "the clock moved on: {now} ps");
    }

    #[test]
    fn equal_times_keep_insertion_order() {
        testing::equal_times_keep_insertion_order(&mut Events::new());
    }

    /// A crowded fine slot (three times, interleaved, 300 events: past the library's small
    /// sorts) beyond the current coarse slot and beyond the wheel: sorted with ties in order.
    #[test]
    fn a_crowded_slot_keeps_ties_in_order() {
        for base in [5 << COARSE_BITS, 3 * REACH] {
            let mut q = Events::new();
            let mut want: Vec<(u64, u64)> = (0..300).map(|n| (base + (2 - n % 3) * 7, n)).collect();
            for &(t, n) in &want {
                q.push(t, ev(n));
            }
            want.sort();
            let got: Vec<(u64, Event)> =
                std::iter::from_fn(|| q.pop().map(|e| (e.time_ps, e.what))).collect();
            let want: Vec<(u64, Event)> = want.into_iter().map(|(t, n)| (t, ev(n))).collect();
            assert_eq!(got, want);
        }
    }

    proptest! {
        /// Any interleaving of pushes (due now, on the wheel, at its edge or beyond it) and
        /// pops comes out as a binary heap on (time, insertion number) has it.
        #[test]
        fn any_schedule_pops_as_a_heap_does(ops in proptest::collection::vec((any::<u64>(), 0u8..4), 1..400)) {
            let mut q = Events::new();
            let mut reference = BinaryHeap::new();
            let mut now = 0;
            for (n, (r, op)) in ops.into_iter().enumerate() {
                if op == 0 {
                    let got = q.pop().map(|e| (e.time_ps, e.what));
                    let want = reference.pop().map(|Reverse((t, i))| (t, ev(i)));
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                } else {
                    let t = now + ahead(r);
                    q.push(t, ev(n as u64));
                    reference.push(Reverse((t, n as u64)));
                }
                prop_assert_eq!(q.next_time(), reference.peek().map(|Reverse((t, _))| *t));
            }
        }
    }
}
