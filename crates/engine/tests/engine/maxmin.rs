//! Max-min fairness: closed forms and the two defining invariants as properties.

use aifabric_engine::{max_min_rates, FlowSet};
use proptest::prelude::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn flows_on_one_link_share_it_equally() {
    let mut fs = FlowSet::new();
    for _ in 0..4 {
        fs.push(&[(0, 1.0)]);
    }
    let r = max_min_rates(&[100.0], &fs);
    assert!(r.iter().all(|&x| close(x, 25.0)), "{r:?}");
}

#[test]
fn the_textbook_three_link_line() {
    // Bertsekas-Gallager's example shape: a long flow over links 0, 1, 2 (capacity 1 each)
    // and one short flow per link. Link 0 also carries a second short flow.
    let mut fs = FlowSet::new();
    let long = fs.push(&[(0, 1.0), (1, 1.0), (2, 1.0)]);
    let a = fs.push(&[(0, 1.0)]);
    let a2 = fs.push(&[(0, 1.0)]);
    let b = fs.push(&[(1, 1.0)]);
    let c = fs.push(&[(2, 1.0)]);
    let r = max_min_rates(&[1.0, 1.0, 1.0], &fs);
    // Link 0 fills first at 1/3 (three flows); then links 1 and 2 give their short flows 2/3.
    for (f, want) in [
        (long, 1.0 / 3.0),
        (a, 1.0 / 3.0),
        (a2, 1.0 / 3.0),
        (b, 2.0 / 3.0),
        (c, 2.0 / 3.0),
    ] {
        assert!(
            close(r[f as usize], want),
            "flow {f}: {} vs {want}",
            r[f as usize]
        );
    }
}

#[test]
fn a_split_flow_counts_by_its_shares() {
    // One flow split 3:1 over links 0 and 1 (capacity 30 each); a second flow on link 1. Both
    // rise together: link 1 fills first, at (0.25 + 1) x r = 30, so r = 24 for both; link 0
    // then carries 0.75 x 24 = 18 of its 30.
    let mut fs = FlowSet::new();
    let split = fs.push(&[(0, 0.75), (1, 0.25)]);
    let other = fs.push(&[(1, 1.0)]);
    let r = max_min_rates(&[30.0, 30.0], &fs);
    assert!(
        close(r[split as usize], 24.0) && close(r[other as usize], 24.0),
        "{r:?}"
    );
}

#[test]
fn a_flow_on_no_link_is_unconstrained() {
    let mut fs = FlowSet::new();
    let f = fs.push(&[]);
    assert_eq!(max_min_rates(&[5.0], &fs)[f as usize], f64::INFINITY);
}

fn instances() -> impl Strategy<Value = (Vec<f64>, Vec<Vec<(u32, f64)>>)> {
    (1usize..8).prop_flat_map(|nl| {
        let caps = prop::collection::vec(1.0f64..100.0, nl);
        let flow = prop::collection::vec((0..nl as u32, 0.05f64..1.0), 1..4);
        (caps, prop::collection::vec(flow, 1..12))
    })
}

/// Integer capacities and unit shares: many links fill at exactly the same level, which the
/// filling handles as one round.
fn instances_with_ties() -> impl Strategy<Value = (Vec<f64>, Vec<Vec<(u32, f64)>>)> {
    (1usize..10).prop_flat_map(|nl| {
        let caps = prop::collection::vec((1u32..5).prop_map(|c| f64::from(c) * 10.0), nl);
        let flow = prop::collection::vec((0..nl as u32).prop_map(|l| (l, 1.0)), 1..4);
        (caps, prop::collection::vec(flow, 1..30))
    })
}

proptest! {
    #[test]
    fn no_link_is_overloaded_and_every_flow_has_a_bottleneck((caps, flows) in instances()) {
        check(&caps, &flows)?;
    }

    #[test]
    fn the_invariants_hold_when_levels_tie((caps, flows) in instances_with_ties()) {
        check(&caps, &flows)?;
    }
}

fn check(caps: &[f64], flows: &[Vec<(u32, f64)>]) -> Result<(), TestCaseError> {
    {
        let mut fs = FlowSet::new();
        for f in flows {
            fs.push(f);
        }
        let r = max_min_rates(caps, &fs);
        let mut load = vec![0.0; caps.len()];
        for f in 0..fs.len() as u32 {
            prop_assert!(r[f as usize].is_finite());
            for (l, s) in fs.uses(f) {
                load[l as usize] += s * r[f as usize];
            }
        }
        for (l, (&x, &c)) in load.iter().zip(caps).enumerate() {
            prop_assert!(x <= c * (1.0 + 1e-9), "link {} carries {} > {}", l, x, c);
        }
        // Bottleneck: a full link where no other flow has a higher rate.
        for f in 0..fs.len() as u32 {
            let rf = r[f as usize];
            let has = fs.uses(f).any(|(l, _)| {
                let full = load[l as usize] >= caps[l as usize] * (1.0 - 1e-9);
                let top = (0..fs.len() as u32)
                    .filter(|&g| fs.uses(g).any(|(k, _)| k == l))
                    .all(|g| r[g as usize] <= rf * (1.0 + 1e-9));
                full && top
            });
            prop_assert!(has, "flow {} at {} has no bottleneck: {:?}", f, rf, r);
        }
    }
    Ok(())
}

#[test]
fn a_tiny_share_left_on_a_link_is_not_lost_to_cancellation() {
    // Link 1 (capacity 1e-3) freezes flow 0 at 1e-3; link 0 then holds only flow 1, with share
    // 1e-9: its rate is (1 - 1e-3) / 1e-9 = 9.99e8 exactly, however the demand was tracked.
    let mut fs = FlowSet::new();
    fs.push(&[(0, 1.0), (1, 1.0)]);
    let tiny = fs.push(&[(0, 1e-9)]);
    let r = max_min_rates(&[1.0, 1e-3], &fs);
    let want = (1.0 - 1e-3) / 1e-9;
    assert!(
        (r[tiny as usize] - want).abs() <= 1e-12 * want,
        "{} vs {want}",
        r[tiny as usize]
    );
}

/// Instances where flows also use one of a few shared splits (a split spreads over several
/// links with fractional shares, as sprayed traffic does).
fn instances_with_splits() -> impl Strategy<Value = SplitInstance> {
    (2usize..12).prop_flat_map(|nl| {
        let caps = prop::collection::vec((1u32..6).prop_map(|c| f64::from(c) * 10.0), nl);
        let split = prop::collection::vec((0..nl as u32, 1u32..4), 1..5).prop_map(|v| {
            let total: u32 = v.iter().map(|x| x.1).sum();
            v.into_iter()
                .map(|(l, w)| (l, f64::from(w) / f64::from(total)))
                .collect::<Vec<_>>()
        });
        let flow = (
            prop::collection::vec((0..nl as u32).prop_map(|l| (l, 1.0)), 0..3),
            prop::sample::subsequence(vec![0u32, 1, 2], 0..=3),
        );
        (
            caps,
            prop::collection::vec(split, 3),
            prop::collection::vec(flow, 1..25),
        )
    })
}

type SplitInstance = (
    Vec<f64>,
    Vec<Vec<(u32, f64)>>,
    Vec<(Vec<(u32, f64)>, Vec<u32>)>,
);

proptest! {
    /// Splits stored once (several per flow) give every flow the same rate as the flows
    /// with the splits' shares written out, and the max-min invariants hold.
    #[test]
    fn shared_splits_equal_their_expansion((caps, splits, flows) in instances_with_splits()) {
        let mut shared = FlowSet::new();
        for s in &splits {
            shared.add_split(s.iter().copied());
        }
        let mut expanded = FlowSet::new();
        let mut lists = Vec::new();
        for (direct, sp) in &flows {
            if direct.is_empty() && sp.is_empty() {
                continue;
            }
            shared.push_split_flow(direct.iter().copied(), sp);
            let mut all = direct.clone();
            for &x in sp {
                all.extend(splits[x as usize].iter().copied());
            }
            expanded.push(&all);
            lists.push(all);
        }
        let a = max_min_rates(&caps, &shared);
        let b = max_min_rates(&caps, &expanded);
        for (x, y) in a.iter().zip(&b) {
            prop_assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{:?} vs {:?}", a, b);
        }
        check(&caps, &lists)?;
    }
}
