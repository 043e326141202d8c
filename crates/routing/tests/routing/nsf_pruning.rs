//! NSF capacity-aware pruning (OCP talk "Capacity-Aware Adaptive Routing"; FBOSS) on a small
//! pod fabric, by hand.

use aifabric_model::*;
use aifabric_routing::bgp::*;
use aifabric_routing::fib::{find_prefix, route_view};
use aifabric_routing::nsf::prune;

/// 2 pods x 2 racks, 2 spine planes, P = 4 links per rack per plane.
const NSF: &str = aifabric_fixtures::specs::NSF_2_PODS_4_LINKS;

fn setup(fail: &[&str]) -> (Fabric, FailureMask) {
    let f = aifabric_spec::build_str("n.yaml", NSF).unwrap();
    let s: Vec<String> = fail.iter().map(|x| x.to_string()).collect();
    let m = Scenario::from_selectors(&f, &s, &[], &[])
        .unwrap()
        .unusable();
    (f, m)
}

fn usable(fail: &[&str], src: &str, dst: &str) -> Vec<(u32, u32)> {
    let (f, m) = setup(fail);
    let (s, d) = (f.find_device(src).unwrap(), f.find_device(dst).unwrap());
    prune(&f, s, d, &m)
        .iter()
        .map(|p| (p.prunes, p.usable))
        .collect()
}

#[test]
fn healthy_prunes_nothing() {
    assert_eq!(
        usable(&[], "a.b.z.rtsw0", "a.b.z.rtsw2"),
        vec![(0, 4), (0, 4)]
    );
}

#[test]
fn remote_rack_failures_are_matched_at_the_source() {
    // rtsw2 (pod 1) loses 2 of its 4 plane-0 links: rtsw0 prunes 2 in plane 0.
    let cut = ["a.b.z.rtsw2--a.b.z.ftsw2#0", "a.b.z.rtsw2--a.b.z.ftsw2#1"];
    assert_eq!(
        usable(&cut, "a.b.z.rtsw0", "a.b.z.rtsw2"),
        vec![(2, 2), (0, 4)]
    );
    // With one local failure in plane 0 already, one more prune matches the remote 2.
    let mut both = cut.to_vec();
    both.push("a.b.z.rtsw0--a.b.z.ftsw0#3");
    assert_eq!(
        usable(&both, "a.b.z.rtsw0", "a.b.z.rtsw2"),
        vec![(1, 2), (0, 4)]
    );
    // Toward a healthy rack nothing is pruned; only the local failure shows.
    assert_eq!(
        usable(&both, "a.b.z.rtsw0", "a.b.z.rtsw3"),
        vec![(0, 3), (0, 4)]
    );
}

#[test]
fn spine_failures_spread_round_robin_over_the_pods_racks() {
    // Pod 1's plane-0 FTSW loses 3 of its 8 downlinks, all toward rtsw3: spread 2 to the
    // pod's first rack and 1 to the second.
    let cut = [
        "a.b.z.rtsw3--a.b.z.ftsw2#0",
        "a.b.z.rtsw3--a.b.z.ftsw2#1",
        "a.b.z.rtsw3--a.b.z.ftsw2#2",
    ];
    assert_eq!(
        usable(&cut, "a.b.z.rtsw0", "a.b.z.rtsw2"),
        vec![(2, 2), (0, 4)]
    );
    assert_eq!(
        usable(&cut, "a.b.z.rtsw0", "a.b.z.rtsw3"),
        vec![(3, 1), (0, 4)]
    );
}

#[test]
fn pruning_sets_the_route_weights() {
    let cut = ["a.b.z.rtsw2--a.b.z.ftsw2#0", "a.b.z.rtsw2--a.b.z.ftsw2#1"];
    let (f, m) = setup(&cut);
    let g = BgpGraph::new(&f, AsnPlan::Rfc7938);
    let s = Scenario::from_selectors(&f, &cut.map(String::from), &[], &[]).unwrap();
    let states = session_states(&f, &g, &s);
    let p = find_prefix(&f, "a.b.z.rack2").unwrap();
    let routes = routes_to(
        &g,
        &states,
        g.speaker(p.rack_switch).unwrap(),
        &BgpConfig::default(),
    )
    .unwrap();
    let cfg = BgpConfig {
        nsf_pruning: true,
        ..BgpConfig::default()
    };
    let src = f.find_device("a.b.z.rtsw0").unwrap();
    let v = route_view(&f, &g, &states, &routes, &cfg, &m, src, &p);
    let w: Vec<f64> = v.next_hops.iter().map(|h| h.weight).collect();
    assert_eq!(w.len(), 2);
    assert!(
        (w[0] - 1.0 / 3.0).abs() < 1e-12 && (w[1] - 2.0 / 3.0).abs() < 1e-12,
        "{w:?}"
    );
    assert_eq!(v.next_hops[0].pruned_links, Some(2));
}
