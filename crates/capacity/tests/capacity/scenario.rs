//! Failure and drain selectors (one syntax for every command) applied to capacity.

use aifabric_capacity::capacity_report;
use aifabric_fixtures::specs::SRG_CONDUITS;
use aifabric_model::*;

fn fabric(spec: &str) -> Fabric {
    aifabric_spec::load(spec).unwrap()
}

fn scenario(f: &Fabric, fail: &[&str], hard: &[&str], soft: &[&str]) -> Scenario {
    let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    Scenario::from_selectors(f, &v(fail), &v(hard), &v(soft)).unwrap()
}

#[test]
fn a_bag_plane_is_a_name_prefix() {
    let f = fabric("prometheus");
    let Selection::Devices(d) = f.select("west.bag.plane3").unwrap() else {
        panic!("a plane selects devices");
    };
    assert_eq!(d.len(), 4, "4 chassis per plane");
    assert!(d.iter().all(|&x| f.device(x).plane() == Some(3)));
    // Hard drain and failure remove the plane; 15 of 16 planes are left between the regions.
    for s in [
        scenario(&f, &["west.bag.plane3"], &[], &[]),
        scenario(&f, &[], &["west.bag.plane3"], &[]),
    ] {
        let r = capacity_report(&f, &s.unusable());
        assert!(
            (r.region_pairs[0].capacity_tbps_per_direction - 8_192.0 * 15.0 / 16.0).abs() < 1e-6
        );
    }
    // A soft drain still carries traffic when needed: capacity is unchanged.
    let s = scenario(&f, &[], &[], &["west.bag.plane3"]);
    let r = capacity_report(&f, &s.unusable());
    assert!((r.region_pairs[0].capacity_tbps_per_direction - 8_192.0).abs() < 1e-6);
}

#[test]
fn bundles_members_zones_and_power_domains() {
    let f = fabric("dsf-l2-zone");
    let bundle = "east.dc1.l2a.rdsw0--east.dc1.l2a.fdsw0";
    let Selection::Links(l) = f.select(bundle).unwrap() else {
        panic!("a bundle selects links")
    };
    assert_eq!(l.len(), 4, "4 parallel links RDSW <-> FDSW");
    let Selection::Links(one) = f.select(&format!("{bundle}#2")).unwrap() else {
        panic!()
    };
    assert_eq!(one, vec![l[2]]);
    assert!(f.select(&format!("{bundle}#4")).is_err());
    // A whole zone, a rack's GPUs, a power domain.
    let Selection::Devices(z) = f.select("east.dc1.l2a").unwrap() else {
        panic!()
    };
    assert_eq!(z.len(), 18_432 + 968);
    let Selection::Devices(rack) = f.select("east.dc1.l2a.rack5").unwrap() else {
        panic!()
    };
    assert_eq!(rack.len(), 36);
    let pd = f.power_domains()[0].name.clone();
    let Selection::Devices(p) = f.select(&format!("pd:{pd}")).unwrap() else {
        panic!()
    };
    assert!(p.iter().all(|&d| f.device(d).power_domain.idx() == 0));
    assert!(!p.is_empty());
}

#[test]
fn bad_selectors_say_why() {
    let f = fabric("dsf-l2-zone");
    let e = f.select("east.dc9").unwrap_err();
    assert!(e.problem.contains("matches no device"), "{e}");
    let e = f
        .select("east.dc1.l2a.rdsw0--east.dc1.l2a.rdsw1")
        .unwrap_err();
    assert!(e.problem.contains("not linked"), "{e}");
    let e = f
        .select("east.dc1.l2a.rdsw0--east.dc1.l2a.fdsw0#x")
        .unwrap_err();
    assert!(e.problem.contains("number"), "{e}");
    assert!(f.select("pd:nope").is_err());
    assert!(f.select("  ").is_err());
}

#[test]
fn failing_an_rdsw_uplink_bundle_lowers_its_tier() {
    let f = fabric("dsf-l2-zone");
    let healthy = capacity_report(&f, &FailureMask::none(&f));
    let s = scenario(&f, &["east.dc1.l2a.rdsw0--east.dc1.l2a.fdsw0"], &[], &[]);
    let r = capacity_report(&f, &s.unusable());
    let up = |r: &aifabric_capacity::CapacityReport| {
        r.tiers.iter().find(|t| t.name == "rdsw").unwrap().up_gbps
    };
    assert_eq!(up(&healthy) - up(&r), 4.0 * 106.25);
    assert_eq!(r.failed_links, 4);
}

#[test]
fn shared_risk_groups_from_the_spec_are_selectors() {
    let f = aifabric_spec::build_str("s.yaml", SRG_CONDUITS).unwrap();
    assert_eq!(f.srgs().len(), 2);
    assert_eq!(f.srgs()[0].links.len(), 4);
    assert_eq!(
        f.srgs()[1].links.len(),
        8,
        "nested group: its own links and the child's"
    );
    let cap = |sel: &[&str]| {
        let s = scenario(&f, sel, &[], &[]);
        capacity_report(&f, &s.unusable()).region_pairs[0].capacity_tbps_per_direction
    };
    assert!((cap(&[]) - 6.4).abs() < 1e-9);
    assert!(
        (cap(&["srg:conduit-north"]) - 3.2).abs() < 1e-9,
        "one conduit: half"
    );
    assert_eq!(cap(&["srg:both-conduits"]), 0.0);
    let e = f.select("srg:nope").unwrap_err();
    assert!(e.problem.contains("conduit-north"), "{e}");
}

#[test]
fn a_bad_srg_member_is_located_in_the_spec() {
    let bad = SRG_CONDUITS.replace("a.bag.plane1.c0--c.bag.plane1.c0", "a.bag.plane9");
    let e = aifabric_spec::build_str("s.yaml", &bad).unwrap_err();
    // The bad member's line in the fixture file.
    let line = SRG_CONDUITS
        .lines()
        .position(|l| l.contains("a.bag.plane1.c0--c.bag.plane1.c0"))
        .unwrap()
        + 1;
    assert_eq!(e.line, line as u64);
    assert!(e.message.contains("a.bag.plane9"), "{e}");
    let dup = SRG_CONDUITS.replace("name: both-conduits", "name: conduit-north");
    let e = aifabric_spec::build_str("s.yaml", &dup).unwrap_err();
    assert!(e.message.contains("duplicate shared-risk group"), "{e}");
}

#[test]
fn generated_failure_domains_are_enumerated_and_selectable() {
    let f = fabric("prometheus");
    let n = |c| f.failure_domains(c).len();
    assert_eq!(n(DomainClass::Building), 12);
    assert_eq!(n(DomainClass::Hall), 12 * 4);
    assert_eq!(n(DomainClass::BagPlane), 2 * 16);
    assert_eq!(n(DomainClass::BagChassis), 2 * 16 * 4);
    assert_eq!(
        n(DomainClass::LineCard),
        2 * 16 * 4 * 12,
        "12 line cards per J3 chassis"
    );
    assert_eq!(
        n(DomainClass::Conduit),
        12 + 1,
        "one per building, one per region pair"
    );
    // Every listed domain resolves.
    for c in DomainClass::ALL {
        for name in f.failure_domains(c).iter().take(3) {
            assert!(
                f.select(&format!("{}:{name}", c.prefix())).is_ok(),
                "{name}"
            );
        }
    }
    let cap = |sel: &str| {
        let s = scenario(&f, &[sel], &[], &[]);
        capacity_report(&f, &s.unusable())
    };
    // A building's conduit cuts its zone from BAG; its GPUs stay connected inside.
    let r = cap("conduit:east.dc1");
    let t = r
        .tiers
        .iter()
        .find(|t| t.name == "l2_to_bag" && t.scope == "east.dc1.l2")
        .unwrap();
    assert_eq!((t.up_gbps, t.oversubscription), (0.0, None));
    let b = r
        .zones
        .iter()
        .find(|z| z.name == "east.dc1.l2")
        .unwrap()
        .bisection
        .clone()
        .unwrap();
    assert_eq!(b.bisection_gbps, b.half_gpu_gbps);
    // The region pair's conduit takes all inter-region capacity.
    assert_eq!(cap("conduit:east--west").region_pairs[0].capacity_tbps, 0.0);
    // A whole building takes its zone's GPUs down with it; a hall a quarter of them.
    let hall = cap("hall:east.dc1.hall0");
    let z = hall.zones.iter().find(|z| z.name == "east.dc1.l2").unwrap();
    assert_eq!(
        z.bisection.as_ref().unwrap().half_gpu_gbps,
        128.0 * 36.0 * 400.0,
        "cluster 0 down"
    );
    // A line card: 36 of the chassis's 432 ports.
    let Selection::Links(l) = f.select("linecard:east.bag.plane0.c0.lc0").unwrap() else {
        panic!("a line card selects links")
    };
    assert!(!l.is_empty() && l.len() <= 36);
    assert!(
        f.select("linecard:east.bag.plane0.c0.lc12").is_err(),
        "only 12 line cards"
    );
    let e = f.select("building:east.dc9").unwrap_err();
    assert!(e.problem.contains("12 in all"), "{e}");
}

#[test]
fn the_srg_catalog_resolves_every_domain_like_its_selector() {
    let f = fabric("prometheus");
    let cat = f.srg_catalog();
    // Every generated domain is in the catalog unless it is empty (a spare line card), in
    // which case its selector refuses it too.
    for c in DomainClass::ALL {
        for name in f.failure_domains(c) {
            let sel = format!("{}:{name}", c.prefix());
            assert_eq!(cat.find(&sel).is_some(), f.select(&sel).is_ok(), "{sel}");
        }
    }
    // Spot-check members against the selector, one of each class and a few more.
    for class in SrgClass::all() {
        for &i in cat.of_class(class).iter().step_by(97).take(4) {
            let mut by_catalog = FailureMask::none(&f);
            cat.apply(i, &mut by_catalog);
            let mut by_selector = FailureMask::none(&f);
            f.select(&cat.names[i]).unwrap().apply_to(&mut by_selector);
            assert_eq!(by_catalog, by_selector, "{}", cat.names[i]);
        }
    }
}

#[test]
fn the_tier_ledger_matches_the_report_under_failures() {
    let f = fabric("prometheus");
    let ledger = aifabric_capacity::TierLedger::new(&f);
    for sel in [
        "hall:east.dc1.hall1",
        "plane:east.bag.plane3",
        "linecard:west.bag.plane0.c2.lc5",
        "pd:east.dc6.nsf.hall0.pd3",
    ] {
        let s = scenario(&f, &[sel], &[], &[]);
        let mask = s.unusable();
        let down = (0..f.links().len() as u32)
            .map(LinkId::new)
            .filter(|&l| !f.link_up(l, &mask));
        let live = ledger.without(&f, down);
        assert_eq!(
            ledger.tiers(&live),
            capacity_report(&f, &mask).tiers,
            "{sel}"
        );
        assert!(!ledger.changes(&live).is_empty(), "{sel} changes a tier");
    }
}
