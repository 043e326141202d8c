//! Hub and spoke: spoke-to-spoke capacity by max-flow through the hub, against closed forms
//! from the spec's link counts.

use aifabric_capacity::{capacity_report, hub_pairs};
use aifabric_model::*;

/// A hub with 2 planes; spoke s1 with 4 links per plane to it, spoke s2 with 2, and s3 joined
/// to s1 directly (no hub): s1-s3 and s2-s3 are not hub pairs.
const SPEC: &str = r#"
name: hs-test
regions:
  - name: hub
    bag: {planes: 2, chassis_per_plane: 1, model: bag-j3-hub-chassis, hub: true}
  - name: s1
    bag: {planes: 2}
    buildings:
      - {name: b, zones: [{name: z, dsf_l1: {rdsw: 4, fdsw: 2, edsw: 2, edsw_uplinks: 8}}]}
  - name: s2
    bag: {planes: 2}
    buildings:
      - {name: b, zones: [{name: z, dsf_l1: {rdsw: 4, fdsw: 2, edsw: 2, edsw_uplinks: 8}}]}
  - name: s3
    bag: {planes: 2}
    buildings:
      - {name: b, zones: [{name: z, dsf_l1: {rdsw: 4, fdsw: 2, edsw: 2, edsw_uplinks: 8}}]}
inter_bag:
  - {between: [s1, hub], topology: planar, links_per_plane: 4, speed_gbps: 800, length_m: 2000}
  - {between: [s2, hub], topology: planar, links_per_plane: 2, speed_gbps: 800, length_m: 2000}
  - {between: [s1, s3], topology: planar, links_per_plane: 1, speed_gbps: 800, length_m: 2000}
"#;

fn pair(f: &Fabric, fail: &[&str]) -> Vec<(String, String, Vec<String>, f64)> {
    let fail: Vec<String> = fail.iter().map(|s| s.to_string()).collect();
    let s = Scenario::from_selectors(f, &fail, &[], &[]).unwrap();
    hub_pairs(f, &s.unusable())
        .into_iter()
        .map(|p| (p.a, p.b, p.via, p.capacity_tbps_per_direction))
        .collect()
}

#[test]
fn spoke_to_spoke_is_the_smaller_spoke_per_plane_through_the_hub() {
    let f = aifabric_spec::build_str("hs-test", SPEC).unwrap();
    let hub = vec!["hub".to_string()];
    // Per plane min(4, 2) links of 800G, 2 planes: 3.2 Tb/s one way. Only s1-s2 share a hub.
    assert_eq!(
        pair(&f, &[]),
        vec![("s1".into(), "s2".into(), hub.clone(), 3.2)]
    );
    // The hub's plane 0 down: one plane left.
    assert_eq!(pair(&f, &["hub.bag.plane0"])[0].3, 1.6);
    // One of s1's 4 plane-1 links down changes nothing (s2's 2 links are the limit) ...
    let s1_link = f
        .links()
        .iter()
        .position(|l| {
            let (a, b) = (f.device(l.a), f.device(l.b));
            f.device_name(l.a).starts_with("s1.bag.plane1")
                && f.device_name(l.b).starts_with("hub.")
                && a.role == Role::Bag
                && b.role == Role::Hub
        })
        .unwrap();
    let mut mask = FailureMask::none(&f);
    mask.fail_link(LinkId::from_idx(s1_link));
    assert_eq!(hub_pairs(&f, &mask)[0].capacity_tbps_per_direction, 3.2);
    // ... and s2's whole plane 1 leaves plane 0 only.
    assert_eq!(pair(&f, &["s2.bag.plane1"])[0].3, 1.6);
    // The capacity report carries the same list.
    let r = capacity_report(&f, &FailureMask::none(&f));
    assert_eq!(r.hub_pairs.len(), 1);
    assert_eq!(r.hub_pairs[0].capacity_tbps, 6.4);
}

#[test]
fn no_hub_no_hub_pairs() {
    let f = aifabric_spec::load("prometheus").unwrap();
    assert!(hub_pairs(&f, &FailureMask::none(&f)).is_empty());
}

#[test]
fn the_example_hub_and_spoke_spec_gives_its_commented_figures() {
    let text = include_str!("../../../../examples/specs/hub-and-spoke.yaml");
    let f = aifabric_spec::build_str("hub-and-spoke", text).unwrap();
    let r = capacity_report(&f, &FailureMask::none(&f));
    // "16 planes x 128 x 800G = 1.64 Pb/s per direction for every spoke pair".
    let per_direction = 16.0 * 128.0 * 0.8;
    let got: Vec<_> = r
        .hub_pairs
        .iter()
        .map(|p| (p.a.as_str(), p.b.as_str(), p.capacity_tbps_per_direction))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a", "b", per_direction),
            ("a", "c", per_direction),
            ("b", "c", per_direction)
        ]
    );
    // The spoke BAG tiers of the comments: a 2.00:1, b and c 1.00:1.
    let bag: Vec<_> = r
        .tiers
        .iter()
        .filter(|t| t.name == "bag")
        .map(|t| (t.scope.as_str(), t.oversubscription.unwrap()))
        .collect();
    assert_eq!(bag, vec![("a.bag", 2.0), ("b.bag", 1.0), ("c.bag", 1.0)]);
}
