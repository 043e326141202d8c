//! Aggregation and blackholes (RFC 7938 section 8.2).

use aifabric_model::*;
use aifabric_routing::aggregation::{
    blackholes, Aggregation, AggregationTier, BlackholeReport, OutageCause,
};
use aifabric_routing::bgp::*;

/// An NSF zone under a 2-plane BAG: 3 pods x 2 racks, 2 spine planes x 2 STSWs.
const NSF: &str = aifabric_fixtures::specs::NSF_3_PODS_UNDER_BAG;

fn detect(f: &Fabric, fail: &[&str], agg: Aggregation) -> BlackholeReport {
    detect_at(f, fail, agg, AggregationTier::Zone)
}

fn detect_at(
    f: &Fabric,
    fail: &[&str],
    agg: Aggregation,
    tier: AggregationTier,
) -> BlackholeReport {
    let fail: Vec<String> = fail.iter().map(|s| s.to_string()).collect();
    let s = Scenario::from_selectors(f, &fail, &[], &[]).unwrap();
    let g = BgpGraph::new(f, AsnPlan::Rfc7938);
    let states = session_states(f, &g, &s);
    blackholes(f, &g, &states, &s, &BgpConfig::default(), agg, tier).unwrap()
}

const ALL: Aggregation = Aggregation::Conditional { min: None };

#[test]
fn healthy_fabric_has_no_blackholes_and_even_shares() {
    let f = aifabric_spec::build_str("n.yaml", NSF).unwrap();
    let r = detect(&f, &[], Aggregation::Unconditional);
    assert!(r.blackholes.is_empty());
    assert_eq!(r.scopes.len(), 1);
    assert_eq!(r.scopes[0].covered, 6);
    assert_eq!(r.scopes[0].advertising.len(), 4, "2 planes x 2 STSWs");
    assert!(r.scopes[0].withdrawn.is_empty());
}

#[test]
fn one_link_failure_blackholes_under_unconditional_aggregation_only() {
    let f = aifabric_spec::build_str("n.yaml", NSF).unwrap();
    // Pod 1's plane-0 FTSW loses its link to STSW 0 of plane 0: that STSW can no longer reach
    // pod 1's racks (any other way down repeats the STSW tier's ASN).
    let cut = "a.b.z.ftsw2--a.b.z.stsw0";
    let r = detect(&f, &[cut], Aggregation::Unconditional);
    assert_eq!(r.blackholes.len(), 1, "{r:?}");
    let b = &r.blackholes[0];
    assert_eq!(b.device, "a.b.z.stsw0");
    assert_eq!(b.prefixes, vec!["a.b.z.rack2", "a.b.z.rack3"]);
    // BAG plane 0's chassis splits the aggregate between STSW 0 of both spine planes; plane 1
    // goes to the other two STSWs: stsw0 attracts a quarter, and drops 2 of 6 prefixes of it.
    assert!(
        (b.attracted_share - 0.25).abs() < 1e-12,
        "{}",
        b.attracted_share
    );
    assert!((b.blackholed_share - 0.25 * 2.0 / 6.0).abs() < 1e-12);
    // Conditional aggregation: stsw0 withdraws; nothing is blackholed, everything reachable.
    let r = detect(&f, &[cut], ALL);
    assert!(r.blackholes.is_empty());
    assert_eq!(r.scopes[0].withdrawn, vec!["a.b.z.stsw0"]);
    assert_eq!(r.scopes[0].unreachable_prefixes, 0);
    // Conditional on at least 4 of 6 contributors: stsw0 still reaches 4, keeps advertising.
    let r = detect(&f, &[cut], Aggregation::Conditional { min: Some(4) });
    assert_eq!(r.blackholes.len(), 1);
}

#[test]
fn a_dsf_system_blackholes_an_isolated_rack() {
    let yaml = aifabric_fixtures::specs::DSF_L1_4_RDSW_UNDER_BAG;
    let f = aifabric_spec::build_str("d.yaml", yaml).unwrap();
    // Cut RDSW 3 off the cell fabric.
    let cut = ["a.b.z.rdsw3--a.b.z.fdsw0", "a.b.z.rdsw3--a.b.z.fdsw1"];
    let r = detect(&f, &cut, Aggregation::Unconditional);
    assert_eq!(r.blackholes.len(), 1);
    assert_eq!(r.blackholes[0].prefixes, vec!["a.b.z.rack3"]);
    assert!((r.blackholes[0].attracted_share - 1.0).abs() < 1e-12);
    // Conditional (all): the only border withdraws, so the whole zone becomes unreachable
    // from BAG: no blackhole, but the price is every prefix.
    let r = detect(&f, &cut, ALL);
    assert!(r.blackholes.is_empty());
    assert_eq!(r.scopes[0].unreachable_prefixes, 4);
}

/// Two regions, each an NSF zone under a 2-plane BAG, joined planar.
const TWO: &str = aifabric_fixtures::specs::TWO_REGIONS_NSF_3_PODS_PLANAR;

#[test]
fn region_tier_blackholes_when_a_bag_plane_loses_a_zone() {
    let f = aifabric_spec::build_str("t.yaml", TWO).unwrap();
    let healthy = detect_at(&f, &[], Aggregation::Unconditional, AggregationTier::Region);
    assert!(healthy.blackholes.is_empty());
    assert_eq!(healthy.scopes.len(), 2);
    assert_eq!(healthy.scopes[0].covered, 6);
    assert_eq!(healthy.scopes[0].aggregate.as_deref(), Some("fd00:a1::/40"));
    // Pod 1 of region a loses its links to STSW 0 of both spine planes, the two STSWs under
    // BAG plane 0: plane 0 can no longer reach pod 1's 2 racks but still reaches the other 4,
    // so unconditionally it keeps advertising region a to region c, which sends it half its
    // traffic (planar: c's plane 0 only talks to a's plane 0).
    let cut = ["a.b.z.ftsw2--a.b.z.stsw0", "a.b.z.ftsw3--a.b.z.stsw2"];
    let r = detect_at(
        &f,
        &cut,
        Aggregation::Unconditional,
        AggregationTier::Region,
    );
    assert_eq!(r.blackholes.len(), 1, "{r:?}");
    let b = &r.blackholes[0];
    assert_eq!(
        (b.device.as_str(), b.scope.as_str()),
        ("a.bag.plane0.c0", "a")
    );
    assert_eq!(b.prefixes, vec!["a.b.z.rack2", "a.b.z.rack3"]);
    assert!(
        (b.attracted_share - 0.5).abs() < 1e-12,
        "{}",
        b.attracted_share
    );
    // Conditionally, plane 0 withdraws and region c sends everything over plane 1.
    let r = detect_at(&f, &cut, ALL, AggregationTier::Region);
    assert!(r.blackholes.is_empty());
    assert_eq!(r.scopes[0].withdrawn, vec!["a.bag.plane0.c0"]);
    assert_eq!(r.scopes[0].unreachable_prefixes, 0);
}

#[test]
fn a_dead_rack_is_not_blackholed_and_a_withdrawn_aggregate_is_an_outage() {
    let f = aifabric_spec::build_str("n.yaml", NSF).unwrap();
    // Rack 2's switch is down: its prefix is unreachable everywhere, but its traffic has no
    // destination, so no border blackholes it; 5 live racks remain.
    let r = detect(&f, &["a.b.z.rtsw2"], Aggregation::Unconditional);
    assert!(r.blackholes.is_empty(), "{:?}", r.blackholes);
    let z = &r.scopes[0];
    assert_eq!((z.covered, z.live_racks), (6, 5));
    assert_eq!(z.unreachable_live_racks, 0);
    assert_eq!(z.outage, None);
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    // Conditional aggregation (every rack reachable) withdraws the aggregate at every border:
    // no blackhole, but every live rack is cut off, which is an outage of all its traffic.
    let r = detect(&f, &["a.b.z.rtsw2"], ALL);
    assert!(r.blackholes.is_empty());
    let z = &r.scopes[0];
    assert!(z.advertising.is_empty(), "{z:?}");
    assert_eq!(z.unreachable_live_racks, 5);
    assert_eq!(z.outage_share, 1.0);
    assert_eq!(z.outage, Some(OutageCause::NotAdvertised));
    // The report says why nothing is dropped.
    assert!(
        r.notes.iter().any(|n| n.contains("drop nothing")),
        "{:?}",
        r.notes
    );
    // A rack whose GPUs are all down is dead too.
    let gpus: Vec<String> = (0..4).map(|g| format!("a.b.z.rack2.gpu{g}")).collect();
    let gpus: Vec<&str> = gpus.iter().map(String::as_str).collect();
    let r = detect(&f, &gpus, Aggregation::Unconditional);
    assert_eq!(r.scopes[0].live_racks, 5);
}
