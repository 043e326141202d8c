//! What the crate's unit tests share: htsim's fat trees and their healthy network, and the
//! calendars' checks.

use crate::event::Event;
use crate::radix::Entry;
use aifabric_dataplane::{Net, NetParams};
use aifabric_model::{Fabric, Scenario};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};

/// A k-ary fat tree of 100 Gb/s links (htsim's regression topology kind).
pub(crate) fn fat_tree(k: u32) -> Fabric {
    let yaml = format!(
        "name: ft{k}\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            fat_tree: {{k: {k}, link_speed_gbps: 100, gpu_model: nic-100g, switch_model: tomahawk3-100g}}\n"
    );
    aifabric_spec::build_str("ft.yaml", &yaml).expect("the fat tree builds")
}

/// Two regions over BAG, an NSF zone and a DSF zone (the fixtures' shared spec).
pub(crate) fn two_regions() -> Fabric {
    aifabric_spec::build_str(
        "t.yaml",
        aifabric_fixtures::specs::TWO_REGIONS_NSF_DSF_SHARED,
    )
    .expect("the fixture builds")
}

/// `f`'s healthy network, routed as the CLI routes it by default.
pub(crate) fn healthy(f: &Fabric) -> Net<'_> {
    Net::new(
        f,
        &Scenario::healthy(f),
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        NetParams::default(),
    )
}

/// A calendar under test (the radix heap alone, or the timing wheel over it).
pub(crate) trait Calendar {
    fn push(&mut self, time_ps: u64, what: Event);
    fn pop(&mut self) -> Option<Entry>;
}

impl Calendar for crate::radix::RadixHeap {
    fn push(&mut self, time_ps: u64, what: Event) {
        crate::radix::RadixHeap::push(self, time_ps, what);
    }
    fn pop(&mut self) -> Option<Entry> {
        crate::radix::RadixHeap::pop(self)
    }
}

impl Calendar for crate::events::Events {
    fn push(&mut self, time_ps: u64, what: Event) {
        crate::events::Events::push(self, time_ps, what);
    }
    fn pop(&mut self) -> Option<Entry> {
        crate::events::Events::pop(self)
    }
}

/// Event `n` (a flow's start): the calendar tests' labels.
pub(crate) fn ev(n: u64) -> Event {
    Event::Start(crate::ids::FlowId::new(n as u32))
}

/// Knuth's MMIX linear congruential step: the tests' reproducible times.
pub(crate) fn lcg(x: &mut u64) -> u64 {
    *x = x
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *x
}

/// `rounds` rounds of pushes and pops on `q` (32 events first, then in turns two pushed and
/// one popped, one pushed and two popped, each due `ahead(random)` after the last event
/// popped, so the clock moves on), then every event popped: the order must be a binary
/// heap's on (time, insertion number). The delays drawn, for the caller to check their
/// spread, and the last time popped.
pub(crate) fn pops_as_a_heap(
    q: &mut impl Calendar,
    rounds: usize,
    ahead: impl Fn(u64) -> u64,
) -> (Vec<u64>, u64) {
    use std::cmp::Reverse;
    let mut reference = std::collections::BinaryHeap::new();
    let (mut x, mut now, mut n) = (12345u64, 0, 0u64);
    let mut drawn = Vec::new();
    for round in 0..rounds {
        let pushes = if round == 0 { 32 } else { 1 + round % 2 };
        for _ in 0..pushes {
            let a = ahead(lcg(&mut x) >> 20);
            drawn.push(a);
            q.push(now + a, ev(n));
            reference.push(Reverse((now + a, n)));
            n += 1;
        }
        for _ in 0..2 - round % 2 {
            let e = q.pop().expect("an event held");
            let Reverse((t, id)) = reference.pop().expect("the same");
            assert_eq!((e.time_ps, e.what), (t, ev(id)));
            now = e.time_ps;
        }
    }
    while let Some(e) = q.pop() {
        let Reverse((t, id)) = reference.pop().expect("the same");
        assert_eq!((e.time_ps, e.what), (t, ev(id)));
        now = e.time_ps;
    }
    assert!(reference.is_empty(), "events left behind");
    (drawn, now)
}

/// Equal times come out in the order they were pushed, across a pop.
pub(crate) fn equal_times_keep_insertion_order(q: &mut impl Calendar) {
    q.push(5, ev(1));
    q.push(9, ev(2));
    q.push(5, ev(3));
    assert_eq!(q.pop().map(|e| e.what), Some(ev(1)));
    q.push(5, ev(4));
    q.push(9, ev(5));
    let order: Vec<Event> = std::iter::from_fn(|| q.pop().map(|e| e.what)).collect();
    assert_eq!(order, vec![ev(3), ev(4), ev(2), ev(5)]);
}
