//! eBGP on small hand-checked fabrics.

use aifabric_model::*;
use aifabric_routing::bgp::*;

/// Two leaves (RTSW) and two spines (CTSW) of one pod; 4 parallel 100G links per pair.
fn clos() -> (Fabric, [DeviceId; 4]) {
    let mut b = FabricBuilder::new("clos", Catalog::builtin());
    let r = b.add_region("r");
    let bl = b.add_building("b", r, 1);
    let z = b.add_zone("r.b.z", ZoneKind::Roce, r, Some(bl));
    let pd = b.add_power_domain("pd", Some(bl));
    let hw = b.catalog().find("minipack2").unwrap();
    let dev = |role, index| Device {
        role,
        hw,
        zone: z,
        index,
        plane: None,
        hall: NonMaxU16::new(0),
        pod: NonMaxU32::new(0),
        rack: if role == Role::Rtsw {
            NonMaxU32::new(index)
        } else {
            None
        },
        power_domain: pd,
    };
    let (l1, l2) = (
        b.add_device(dev(Role::Rtsw, 0)),
        b.add_device(dev(Role::Rtsw, 1)),
    );
    let (s1, s2) = (
        b.add_device(dev(Role::Ctsw, 0)),
        b.add_device(dev(Role::Ctsw, 1)),
    );
    for l in [l1, l2] {
        for s in [s1, s2] {
            b.add_bundle(l, s, 4, PortKind::Ethernet, 200_000, 10.0, 0, false)
                .unwrap();
        }
    }
    (b.finish(), [l1, l2, s1, s2])
}

struct Run {
    g: BgpGraph,
    states: Vec<SessionState>,
    routes: RoutesTo,
}

fn run(f: &Fabric, plan: AsnPlan, s: &Scenario, origin: DeviceId) -> Run {
    let g = BgpGraph::new(f, plan);
    let states = session_states(f, &g, s);
    let routes = routes_to(
        &g,
        &states,
        g.speaker(origin).unwrap(),
        &BgpConfig::default(),
    )
    .unwrap();
    Run { g, states, routes }
}

impl Run {
    /// Next-hop devices of `d` with their ideal weights.
    fn next_hops(&self, d: DeviceId) -> Vec<(DeviceId, f64)> {
        let v = self.g.speaker(d).unwrap();
        let w = self.routes.weights(&self.g, &self.states, v);
        self.routes
            .multipaths(&self.g, &self.states, v)
            .iter()
            .zip(w)
            .map(|(m, w)| match self.g.speakers[m.neighbor.idx()].kind {
                SpeakerKind::Device(n) => (n, w),
                SpeakerKind::DsfSystem(_) => panic!("no DSF here"),
            })
            .collect()
    }
}

fn select(f: &Fabric, fail: &[&str], hard: &[&str], soft: &[&str]) -> Scenario {
    let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    Scenario::from_selectors(f, &v(fail), &v(hard), &v(soft)).unwrap()
}

#[test]
fn leaf_reaches_leaf_over_both_spines_equally() {
    let (f, [l1, l2, s1, s2]) = clos();
    let r = run(&f, AsnPlan::Rfc7938, &Scenario::healthy(&f), l2);
    assert_eq!(r.next_hops(l1), vec![(s1, 0.5), (s2, 0.5)]);
    assert_eq!(r.next_hops(s1), vec![(l2, 1.0)]);
    let best = r.routes.best[r.g.speaker(l1).unwrap().idx()].unwrap();
    assert_eq!((best.len, best.local_pref), (2, 100));
}

#[test]
fn losing_one_of_four_parallel_links_gives_3_to_4() {
    let (f, [l1, l2, s1, s2]) = clos();
    let s = select(&f, &["r.b.z.rtsw1--r.b.z.ctsw0#0"], &[], &[]);
    let r = run(&f, AsnPlan::Rfc7938, &s, l2);
    let hops = r.next_hops(l1);
    assert_eq!(hops.iter().map(|h| h.0).collect::<Vec<_>>(), vec![s1, s2]);
    assert!((hops[0].1 - 3.0 / 7.0).abs() < 1e-12 && (hops[1].1 - 4.0 / 7.0).abs() < 1e-12);
}

#[test]
fn losing_a_first_hop_link_moves_weight_too_since_ebgp_runs_per_link() {
    // l1 keeps 3 of its 4 links to s1. Each link is a BGP path of its own (RFC 7938), each
    // hearing s1's value for l2 (4 x 200G): s1 gets 3 x 800G of weight against 4 x 800G via s2.
    let (f, [l1, l2, s1, s2]) = clos();
    let s = select(&f, &["r.b.z.rtsw0--r.b.z.ctsw0#0"], &[], &[]);
    let r = run(&f, AsnPlan::Rfc7938, &s, l2);
    let hops = r.next_hops(l1);
    assert_eq!(hops.iter().map(|h| h.0).collect::<Vec<_>>(), vec![s1, s2]);
    assert!((hops[0].1 - 3.0 / 7.0).abs() < 1e-12, "{hops:?}");
    assert!((hops[1].1 - 4.0 / 7.0).abs() < 1e-12, "{hops:?}");
}

#[test]
fn valley_paths_are_rejected_by_shared_spine_asns() {
    let (f, [l1, l2, s1, s2]) = clos();
    let s = select(&f, &["r.b.z.rtsw1--r.b.z.ctsw0"], &[], &[]);
    // RFC 7938 plan: S1 -> L1 -> S2 -> L2 repeats the spine ASN: S1 has no route.
    let r = run(&f, AsnPlan::Rfc7938, &s, l2);
    assert!(r.routes.best[r.g.speaker(s1).unwrap().idx()].is_none());
    assert_eq!(r.next_hops(l1), vec![(s2, 1.0)]);
    // Unique ASNs: loop prevention allows the valley, 3 hops through L1.
    let r = run(&f, AsnPlan::Unique, &s, l2);
    let b = r.routes.best[r.g.speaker(s1).unwrap().idx()].unwrap();
    assert_eq!(b.len, 3);
    assert_eq!(r.next_hops(s1), vec![(l1, 1.0)]);
}

#[test]
fn soft_drain_is_used_only_when_nothing_else_is_left() {
    let (f, [l1, l2, s1, s2]) = clos();
    let healthy = Scenario::healthy(&f);
    let one_soft = select(&f, &[], &[], &["r.b.z.ctsw0"]);
    let one_hard = select(&f, &[], &["r.b.z.ctsw0"], &[]);
    let both_soft = select(&f, &[], &[], &["r.b.z.ctsw0", "r.b.z.ctsw1"]);
    let both_hard = select(&f, &[], &["r.b.z.ctsw0", "r.b.z.ctsw1"], &[]);
    assert_eq!(
        run(&f, AsnPlan::Rfc7938, &healthy, l2).next_hops(l1).len(),
        2
    );
    // One spine drained, soft or hard: traffic moves to the other.
    assert_eq!(
        run(&f, AsnPlan::Rfc7938, &one_soft, l2).next_hops(l1),
        vec![(s2, 1.0)]
    );
    assert_eq!(
        run(&f, AsnPlan::Rfc7938, &one_hard, l2).next_hops(l1),
        vec![(s2, 1.0)]
    );
    // Both soft-drained: still used (LOCAL_PREF 0 on both, a tie); both hard: no route.
    let r = run(&f, AsnPlan::Rfc7938, &both_soft, l2);
    assert_eq!(r.next_hops(l1), vec![(s1, 0.5), (s2, 0.5)]);
    assert_eq!(
        r.routes.best[r.g.speaker(l1).unwrap().idx()]
            .unwrap()
            .local_pref,
        0
    );
    let r = run(&f, AsnPlan::Rfc7938, &both_hard, l2);
    assert!(r.routes.best[r.g.speaker(l1).unwrap().idx()].is_none());
}

#[test]
fn asn_plan_follows_rfc_7938() {
    let (f, [l1, l2, s1, s2]) = clos();
    let g = BgpGraph::new(&f, AsnPlan::Rfc7938);
    let asn = |d: DeviceId| g.speakers[g.speaker(d).unwrap().idx()].asn;
    assert_ne!(asn(l1), asn(l2), "a private ASN per rack switch");
    assert_eq!(asn(s1), asn(s2), "spines of a pod share one");
    assert!(
        asn(l1) >= PRIVATE_ASN_BASE,
        "4-byte private range (RFC 6996)"
    );
    let g = BgpGraph::new(&f, AsnPlan::Unique);
    assert_ne!(
        g.speakers[g.speaker(s1).unwrap().idx()].asn,
        g.speakers[g.speaker(s2).unwrap().idx()].asn
    );
}

#[test]
fn bag_planes_route_planar_between_regions() {
    let yaml = aifabric_fixtures::specs::TWO_REGIONS_NSF_2_PODS_PLANAR;
    let f = aifabric_spec::build_str("two.yaml", yaml).unwrap();
    let rack = f.find_device("c.b.n.rtsw0").unwrap();
    let r = run(&f, AsnPlan::Rfc7938, &Scenario::healthy(&f), rack);
    for p in 0..2u16 {
        let chassis = f.find_device(&format!("a.bag.plane{p}.c0")).unwrap();
        let hops = r.next_hops(chassis);
        assert_eq!(hops.len(), 1, "one chassis per plane on the other side");
        assert_eq!(
            f.device(hops[0].0).plane(),
            Some(p),
            "planar: plane {p} to plane {p}"
        );
        assert_eq!(f.device_name(hops[0].0), format!("c.bag.plane{p}.c0"));
    }
    // A rack in region a reaches it over both of its spine planes.
    let src = f.find_device("a.b.n.rtsw0").unwrap();
    assert_eq!(r.next_hops(src).len(), 2);
    // Every speaker of both regions has a route.
    assert!(r.routes.best.iter().all(Option::is_some));
}

#[test]
fn dsf_zone_is_one_speaker_behind_its_edsws() {
    let f = aifabric_spec::load("dsf-l1-zone").unwrap();
    let g = BgpGraph::new(&f, AsnPlan::Rfc7938);
    let rdsw = f.find_device("lab.dc1.l1.rdsw0").unwrap();
    let edsw = f.find_device("lab.dc1.l1.edsw3").unwrap();
    assert!(g.speaker(rdsw).is_some());
    assert_eq!(g.speaker(rdsw), g.speaker(edsw));
    let fdsw = f.find_device("lab.dc1.l1.fdsw0").unwrap();
    assert_eq!(g.speaker(fdsw), None, "fabric nodes do not speak BGP");
    assert_eq!(g.speakers.len(), 1);
}

#[test]
fn prepend_drain_is_a_longer_path() {
    let (f, [l1, l2, s1, s2]) = clos();
    let g = BgpGraph::new(&f, AsnPlan::Rfc7938);
    let cfg = BgpConfig {
        soft_drain: SoftDrain::Prepend(3),
        ..BgpConfig::default()
    };
    let hops = |soft: &[&str]| {
        let s = select(&f, &[], &[], soft);
        let states = session_states(&f, &g, &s);
        let r = routes_to(&g, &states, g.speaker(l2).unwrap(), &cfg).unwrap();
        let v = g.speaker(l1).unwrap();
        let best = r.best[v.idx()].unwrap();
        let n: Vec<DeviceId> = r
            .multipaths(&g, &states, v)
            .iter()
            .map(|m| match g.speakers[m.neighbor.idx()].kind {
                SpeakerKind::Device(d) => d,
                SpeakerKind::DsfSystem(_) => unreachable!(),
            })
            .collect();
        (best.local_pref, best.len, n)
    };
    // S1 drained by prepending 3: its path is 5 long, S2's 2: only S2.
    assert_eq!(hops(&["r.b.z.ctsw0"]), (100, 2, vec![s2]));
    // Both drained: both 5 long, both used, LOCAL_PREF untouched.
    assert_eq!(
        hops(&["r.b.z.ctsw0", "r.b.z.ctsw1"]),
        (100, 5, vec![s1, s2])
    );
}

#[test]
fn per_plane_asn_plan_splits_spines_and_bag_by_plane() {
    let f = aifabric_spec::load("nsf-l2").unwrap();
    let distinct = |plan, role: Role| {
        let g = BgpGraph::new(&f, plan);
        let mut asns: Vec<u32> = f
            .devices_with_role(role)
            .map(|d| g.speakers[g.speaker(d).unwrap().idx()].asn)
            .collect();
        asns.sort_unstable();
        asns.dedup();
        asns.len()
    };
    assert_eq!(distinct(AsnPlan::Rfc7938, Role::Stsw), 1);
    assert_eq!(
        distinct(AsnPlan::PerPlane, Role::Stsw),
        8,
        "one per spine plane"
    );
    assert_eq!(distinct(AsnPlan::Rfc7938, Role::Bag), 1);
    assert_eq!(
        distinct(AsnPlan::PerPlane, Role::Bag),
        16,
        "one per BAG plane"
    );
    assert_eq!(
        distinct(AsnPlan::PerPlane, Role::Rtsw),
        498,
        "a private ASN per rack"
    );
}

#[test]
fn graceful_shutdown_travels_with_the_route() {
    // Region a's BAG plane 0 is soft-drained. An FTSW in region a reaching a rack in region c
    // has two STSWs of its plane, one above each BAG plane: the route through plane 0 carries
    // the graceful-shutdown community all the way down, so the FTSW uses plane 1 only.
    let yaml = aifabric_fixtures::specs::TWO_REGIONS_NSF_2_PODS_PLANAR;
    let f = aifabric_spec::build_str("two.yaml", yaml).unwrap();
    let rack = f.find_device("c.b.n.rtsw3").unwrap();
    let ftsw = f.find_device("a.b.n.ftsw0").unwrap();
    let healthy = run(&f, AsnPlan::Rfc7938, &Scenario::healthy(&f), rack);
    assert_eq!(healthy.next_hops(ftsw).len(), 2);
    let drained = select(&f, &[], &[], &["a.bag.plane0"]);
    let r = run(&f, AsnPlan::Rfc7938, &drained, rack);
    let hops = r.next_hops(ftsw);
    assert_eq!(hops.len(), 1, "{hops:?}");
    assert_eq!(f.device_name(hops[0].0), "a.b.n.stsw1");
    assert_eq!(
        r.routes.best[r.g.speaker(ftsw).unwrap().idx()]
            .unwrap()
            .local_pref,
        100
    );
    // The STSW above the drained plane still has a route, marked with the community.
    let stsw0 = f.find_device("a.b.n.stsw0").unwrap();
    let b = r.routes.best[r.g.speaker(stsw0).unwrap().idx()].unwrap();
    assert!(b.gshut && b.local_pref == 0);
}
