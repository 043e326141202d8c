//! DSF Input Balanced Mode: closed forms for the failure cases of Meta's DSF post (Meta,
//! "Disaggregated Scheduled Fabric ..." 2025), and properties against independent bounds.

use aifabric_capacity::maxflow::FlowNetworkBuilder;
use aifabric_model::*;
use aifabric_routing::ibm::{balances, input_balanced, retained_matrix};
use proptest::prelude::*;

fn fail(f: &Fabric, sel: &[&str]) -> FailureMask {
    let s: Vec<String> = sel.iter().map(|x| x.to_string()).collect();
    Scenario::from_selectors(f, &s, &[], &[])
        .unwrap()
        .unusable()
}

/// The built-in DSF L2 zone after the failures `sel`: its interface nodes and the retained
/// (delivered, nominal) capacity matrix.
type Matrix = Vec<Vec<(f64, f64)>>;
fn dsf_l2_after(sel: &[&str]) -> (Fabric, Vec<DeviceId>, Matrix) {
    let f = aifabric_spec::load("dsf-l2-zone").unwrap();
    let z = f
        .zones()
        .iter()
        .position(|z| z.kind == ZoneKind::DsfL2)
        .unwrap();
    let m = fail(&f, sel);
    let (ifaces, mat) = retained_matrix(&f, ZoneId::from_idx(z), &m);
    (f, ifaces, mat)
}

#[test]
fn healthy_zone_keeps_everything() {
    let f = aifabric_spec::load("dsf-l1-zone").unwrap();
    let r = input_balanced(&f, &FailureMask::none(&f));
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].worst_fraction, 1.0);
    assert!(r[0].reduced.is_empty());
}

#[test]
fn fdsw_rdsw_failure_reduces_every_source_by_one_lane_in_160() {
    let (f, ifaces, mat) = dsf_l2_after(&["east.dc1.l2a.rdsw0--east.dc1.l2a.fdsw0#0"]);
    let d = ifaces
        .iter()
        .position(|&x| f.device_name(x) == "east.dc1.l2a.rdsw0")
        .unwrap();
    // FDSW 0 delivers 3 of its 4 lanes to RDSW 0; upstream devices follow: 159 of 160 lanes
    // from every source, in its own cluster (directly) or another (through the SDSWs).
    for (s, row) in mat.iter().enumerate() {
        if s == d {
            continue;
        }
        let (got, nom) = row[d];
        assert!(
            (got / nom - 159.0 / 160.0).abs() < 1e-12,
            "source {s}: {}",
            got / nom
        );
    }
    // Other destinations are untouched, except for RDSW 0's own traffic out of that lane.
    let other = (d + 1) % ifaces.len();
    for (s, row) in mat.iter().enumerate() {
        let frac = row[other].0 / row[other].1;
        let expect = if s == d { 159.0 / 160.0 } else { 1.0 };
        if s != other {
            assert!(
                (frac - expect).abs() < 1e-12,
                "source {s} to {other}: {frac}"
            );
        }
    }
}

#[test]
fn fdsw_sdsw_failure_reduces_both_directions() {
    // FDSW 0 is in cluster 0; one of its 4 lanes to SDSW 0 fails.
    let (f, ifaces, mat) = dsf_l2_after(&["east.dc1.l2a.fdsw0--east.dc1.l2a.sdsw0#0"]);
    let cluster = |i: usize| f.device(ifaces[i]).pod();
    // Toward cluster 0 from another cluster: SDSW 0 keeps 159/160 toward cluster 0, so each
    // remote FDSW keeps 1 - (1/160)/128 = 1 - 1/20480, and so does each remote source.
    // From cluster 0 outward: FDSW 0 keeps 511/512 up, its sources 1 - (4/512)/160, the same.
    let expect = 1.0 - 1.0 / 20_480.0;
    let d0 = (0..ifaces.len()).find(|&i| cluster(i) == Some(0)).unwrap();
    let s1 = (0..ifaces.len()).find(|&i| cluster(i) == Some(1)).unwrap();
    assert!((mat[s1][d0].0 / mat[s1][d0].1 - expect).abs() < 1e-12);
    assert!((mat[d0][s1].0 / mat[d0][s1].1 - expect).abs() < 1e-12);
    // Inside cluster 1, nothing changes.
    let s1b = (0..ifaces.len())
        .filter(|&i| cluster(i) == Some(1))
        .nth(1)
        .unwrap();
    assert_eq!(mat[s1][s1b].0, mat[s1][s1b].1);
}

/// Max flow from interface node `s` to `d` over the zone's live fabric links.
fn max_flow(f: &Fabric, z: ZoneId, mask: &FailureMask, s: DeviceId, d: DeviceId) -> u64 {
    let range = f.zone_devices(z);
    let mut net = FlowNetworkBuilder::new((range.end - range.start) as usize);
    for (i, l) in f.links().iter().enumerate() {
        if l.kind == PortKind::Fabric
            && range.contains(&l.a.get())
            && f.link_up(LinkId::from_idx(i), mask)
        {
            net.add_undirected(
                l.a.get() - range.start,
                l.b.get() - range.start,
                u64::from(l.capacity_mbps),
            );
        }
    }
    net.build()
        .max_flow(s.get() - range.start, d.get() - range.start)
}

const SMALL: &str = aifabric_fixtures::specs::DSF_L2_SMALL;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn retained_is_deliverable_and_never_grows_with_failures(
        a in proptest::collection::vec(any::<u32>(), 0..12),
        b in proptest::collection::vec(any::<u32>(), 0..12),
    ) {
        let f = aifabric_spec::build_str("s.yaml", SMALL).unwrap();
        let z = ZoneId::new(0);
        let fabric_links: Vec<LinkId> = (0..f.links().len() as u32)
            .map(LinkId::new)
            .filter(|&l| f.link(l).kind == PortKind::Fabric)
            .collect();
        let mut fewer = FailureMask::none(&f);
        for x in &a { fewer.fail_link(fabric_links[*x as usize % fabric_links.len()]); }
        let mut more = fewer.clone();
        for x in &b { more.fail_link(fabric_links[*x as usize % fabric_links.len()]); }
        let (ifaces, m1) = retained_matrix(&f, z, &fewer);
        let (_, m2) = retained_matrix(&f, z, &more);
        // What each fabric node says it delivers toward a destination is deliverable: at most
        // its max flow to the destination over the live links (computed independently).
        let (dests, per_dest) = balances(&f, z, &more);
        for (d, nodes) in dests.iter().zip(&per_dest) {
            for b in nodes {
                let mf = max_flow(&f, z, &more, b.device, *d) as f64;
                prop_assert!(b.delivered_out <= mf + 1e-6, "{b:?} > max flow {mf}");
            }
        }
        for s in 0..ifaces.len() {
            for d in 0..ifaces.len() {
                if s == d { continue; }
                prop_assert!(m2[s][d].0 <= m1[s][d].0 + 1e-6);
                let mf = max_flow(&f, z, &more, ifaces[s], ifaces[d]) as f64;
                prop_assert!(m2[s][d].0 <= mf + 1e-6, "IBM {} > max flow {}", m2[s][d].0, mf);
            }
        }
    }
}
