//! The FRR export: one router per BGP speaker, one neighbor per link on the IP plan's /127s
//! with the peer's ASN, the link-bandwidth community by mode, DSF refused; and, where FRR is
//! installed, every file passes the daemons' own configuration check.

use aifabric_report::frr::{file_names, topology, write, FrrError, FrrOptions, Topology};
use aifabric_routing::addressing::AddressPlan;
use aifabric_routing::aggregation::Aggregation;
use aifabric_routing::bgp::{AsnPlan, BandwidthMode, BgpGraph, SoftDrain};
use std::collections::BTreeMap;

fn fabric(text: &str) -> aifabric_model::Fabric {
    aifabric_spec::build_str("t.yaml", text).unwrap()
}

fn opts(bandwidth: BandwidthMode) -> FrrOptions {
    FrrOptions {
        plan: AsnPlan::Rfc7938,
        bandwidth,
        max_paths: 2048,
        soft_drain: SoftDrain::GracefulShutdown,
        aggregation: None,
    }
}

fn file(t: &Topology, name: &str) -> String {
    let mut out = Vec::new();
    write(t, name, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn every_link_between_routers_is_a_neighbor_with_the_peers_asn() {
    let f = fabric(aifabric_fixtures::specs::ROCE_6_ROUTERS);
    let t = topology(&f, &opts(BandwidthMode::Cumulative)).unwrap();
    assert_eq!(t.routers.len(), 6);
    // 2 racks x 2 CTSWs x 2 links + 2 CTSWs x 2 ATSWs x 1 link.
    assert_eq!(t.links.len(), 12);
    let g = BgpGraph::new(&f, AsnPlan::Rfc7938);
    assert_eq!(t.routers.len(), g.speakers.len());
    let asn: BTreeMap<&str, u32> = t.routers.iter().map(|r| (r.name.as_str(), r.asn)).collect();
    let plan = AddressPlan::new(&f).unwrap();
    // Each router's bgpd.conf: `router bgp` its ASN, one neighbor per link end facing it.
    for r in &t.routers {
        let conf = file(&t, &format!("{}.bgpd.conf", r.name));
        assert!(conf.contains(&format!("router bgp {}\n", r.asn)), "{conf}");
        let neighbors: Vec<(&str, u32)> = conf
            .lines()
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                (w.len() == 4 && w[0] == "neighbor" && w[2] == "remote-as")
                    .then(|| (w[1], w[3].parse().unwrap()))
            })
            .collect();
        let mine: Vec<_> = t
            .links
            .iter()
            .filter_map(|l| {
                if l.a.router == r.name {
                    Some(&l.b)
                } else if l.b.router == r.name {
                    Some(&l.a)
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(neighbors.len(), mine.len(), "{}", r.name);
        for (peer, (addr, remote)) in mine.iter().zip(&neighbors) {
            assert_eq!(peer.address, *addr);
            assert_eq!(asn[peer.router.as_str()], *remote);
        }
        assert_eq!(!r.originates.is_empty(), r.role == "rtsw", "{}", r.name);
    }
    // Addresses are the IP plan's, a end and b end.
    for (l, link) in t.links.iter().zip(
        f.links()
            .iter()
            .enumerate()
            .filter(|(_, x)| f.device(x.a).role != aifabric_model::Role::Gpu),
    ) {
        let (_, a, b) = plan.link(aifabric_model::LinkId::from_idx(link.0));
        assert_eq!(
            (l.a.address.as_str(), l.b.address.as_str()),
            (&*a.to_string(), &*b.to_string())
        );
    }
    let mut ids: Vec<&str> = t.routers.iter().map(|r| r.router_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 6, "router ids are unique");
    assert_eq!(file_names(&t).len(), 1 + 2 * 6);
}

#[test]
fn the_link_bandwidth_follows_the_mode() {
    let f = fabric(aifabric_fixtures::specs::ROCE_6_ROUTERS);
    let rack = "r.b.z.rtsw0.bgpd.conf";
    let spine = "r.b.z.ctsw0.bgpd.conf";
    let t = topology(&f, &opts(BandwidthMode::Cumulative)).unwrap();
    // The rack switch sends its own /64 with each 400G link's 400 (Gb/s), the rest summed.
    let conf = file(&t, rack);
    assert!(conf.contains("match ipv6 address prefix-list OWN\n set extcommunity bandwidth 400\n"));
    assert!(conf.contains(" set extcommunity bandwidth cumulative\n"));
    assert!(conf.contains("  network fd00:"));
    let conf = file(&t, spine);
    assert!(!conf.contains("prefix-list OWN") && !conf.contains("  network "));
    assert!(conf.contains(" set extcommunity bandwidth cumulative\n"));
    assert!(
        conf.contains("  maximum-paths 256\n"),
        "capped at FRR's 256"
    );
    // RFC 8326 on every session in; each outbound map has a drained twin that adds the
    // graceful-shutdown community (or prepends, in prepend mode).
    let neighbors = conf.matches(" activate\n").count();
    assert_eq!(conf.matches(" route-map IN in\n").count(), neighbors);
    assert!(
        conf.contains("route-map IN permit 10\n match community GSHUT\n set local-preference 0\n")
    );
    assert!(conf.contains(
        "route-map LB-400-DRAIN permit 20\n set extcommunity bandwidth cumulative\n set community graceful-shutdown additive\n"
    ));
    let mut o = opts(BandwidthMode::Cumulative);
    o.soft_drain = SoftDrain::Prepend(2);
    let t2 = topology(&f, &o).unwrap();
    let asn = t2
        .routers
        .iter()
        .find(|r| r.name == "r.b.z.ctsw0")
        .unwrap()
        .asn;
    assert!(file(&t2, spine).contains(&format!(" set as-path prepend {asn} {asn}\n")));
    let t = topology(&f, &opts(BandwidthMode::NumMultipaths)).unwrap();
    assert!(file(&t, rack).contains(" set extcommunity bandwidth 1\n"));
    let t = topology(&f, &opts(BandwidthMode::None)).unwrap();
    for name in [rack, spine] {
        let conf = file(&t, name);
        // No link bandwidth and no outbound policy; only the drained twin is defined.
        assert!(!conf.contains("extcommunity"), "{conf}");
        assert!(!conf.lines().any(|l| l.ends_with(" out")), "{conf}");
        assert!(conf.contains(
            "route-map OUT-DRAIN permit 20\n set community graceful-shutdown additive\n"
        ));
    }
    // zebra: every link's /127 and the rack's /64 on `rack`, classic multipath routes.
    let z = file(&t, "r.b.z.rtsw0.zebra.conf");
    assert_eq!(z.matches("/127\n").count(), 4);
    assert!(z.contains("interface rack\n ipv6 address fd00:") && z.contains("::1/64\n"));
    assert!(z.contains("no zebra nexthop kernel enable"));
}

#[test]
fn a_dsf_fabric_is_refused_with_the_reason() {
    let f = fabric(aifabric_fixtures::specs::DSF_L2_SMALL);
    match topology(&f, &opts(BandwidthMode::Cumulative)) {
        Err(e @ FrrError::Dsf(_)) => assert!(e.to_string().contains("one BGP speaker")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_six_router_configuration_is_stable() {
    let f = fabric(aifabric_fixtures::specs::ROCE_6_ROUTERS);
    let t = topology(&f, &opts(BandwidthMode::Cumulative)).unwrap();
    insta::assert_snapshot!("frr_rtsw0_bgpd", file(&t, "r.b.z.rtsw0.bgpd.conf"));
    insta::assert_snapshot!("frr_ctsw0_zebra", file(&t, "r.b.z.ctsw0.zebra.conf"));
}

/// Where FRR is installed (Debian's `frr`: `/usr/lib/frr`), bgpd and zebra check every file
/// (`-C`, a dry run) and report no line they do not take.
#[test]
fn frr_takes_every_file() {
    let dir = std::path::Path::new("/usr/lib/frr");
    if !dir.join("bgpd").exists() {
        eprintln!("skipped: FRR is not installed (apt-get install frr)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (spec, mode) in [
        (
            aifabric_fixtures::specs::ROCE_6_ROUTERS,
            BandwidthMode::Cumulative,
        ),
        (
            aifabric_fixtures::specs::ROCE_6_ROUTERS,
            BandwidthMode::None,
        ),
        (
            aifabric_fixtures::specs::TWO_REGIONS_NSF_2_PODS_PLANAR,
            BandwidthMode::NumMultipaths,
        ),
    ] {
        let t = topology(&fabric(spec), &opts(mode)).unwrap();
        for name in file_names(&t).iter().filter(|n| n.ends_with(".conf")) {
            let path = tmp.path().join(name);
            std::fs::write(&path, file(&t, name)).unwrap();
            let daemon = if name.ends_with(".bgpd.conf") {
                "bgpd"
            } else {
                "zebra"
            };
            let out = std::process::Command::new(dir.join(daemon))
                .arg("-C")
                .arg("-f")
                .arg(&path)
                .args(["-i", &tmp.path().join("pid").display().to_string()])
                .args(["-z", &tmp.path().join("zserv.api").display().to_string()])
                .args(["--vty_socket", &tmp.path().display().to_string()])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            let stdout = String::from_utf8_lossy(&out.stdout);
            for text in [&err, &stdout] {
                assert!(
                    !text.contains("No such command") && !text.contains("Unknown command"),
                    "{name}: {text}"
                );
            }
        }
    }
}

/// Zone aggregation: each border (a spine with BAG uplinks) makes the zone's /48 and keeps the
/// zone's specifics from BAG; no other router aggregates; `conditional:1` by FRR's conditional
/// advertisement; conditional aggregation over all or N > 1 racks refused with FRR's reason.
#[test]
fn zones_aggregate_at_their_borders_toward_bag() {
    let f = fabric(aifabric_fixtures::specs::TWO_ZONES_UNDER_BAG);
    let mut o = opts(BandwidthMode::Cumulative);
    o.aggregation = Some(Aggregation::Unconditional);
    let t = topology(&f, &o).unwrap();
    assert_eq!(t.aggregates.len(), 2);
    let a = &t.aggregates[0];
    assert_eq!(a.zone, "a.b1.z");
    assert!(a.prefix.ends_with("::/48"), "{}", a.prefix);
    // Every spine and only spines: 2 planes x 2 STSWs.
    assert_eq!(a.borders.len(), 4);
    assert!(a.borders.iter().all(|b| b.contains(".stsw")));
    let border = file(&t, &format!("{}.bgpd.conf", a.borders[0]));
    assert!(border.contains(&format!("  aggregate-address {}\n", a.prefix)));
    assert!(border.contains(&format!(
        "ipv6 prefix-list ZONE-SPECIFICS seq 5 deny {} ge 49\n",
        a.prefix
    )));
    // The filter on its BAG sessions only (two links to its BAG chassis).
    assert_eq!(
        border.matches(" prefix-list ZONE-SPECIFICS out\n").count(),
        2
    );
    let rack = file(&t, "a.b1.z.rtsw0.bgpd.conf");
    assert!(!rack.contains("aggregate-address") && !rack.contains("ZONE-SPECIFICS"));
    // Without aggregation, none of it.
    let plain = topology(&f, &opts(BandwidthMode::Cumulative)).unwrap();
    assert!(plain.aggregates.is_empty());
    assert!(!file(&plain, &format!("{}.bgpd.conf", a.borders[0])).contains("aggregate-address"));
    // At least one covered rack: FRR's conditional advertisement, an exist-map over the
    // zone's /64s on each BAG session, the /48 kept from the zone's own routers.
    o.aggregation = Some(Aggregation::Conditional { min: Some(1) });
    let t = topology(&f, &o).unwrap();
    let border = file(&t, &format!("{}.bgpd.conf", a.borders[0]));
    assert!(!border.contains("aggregate-address"));
    assert!(border.contains(&format!("  network {}\n", a.prefix)));
    assert_eq!(
        border
            .matches(" advertise-map ZONE-AGGREGATE exist-map ZONE-COVERED\n")
            .count(),
        2
    );
    assert!(border.contains(&format!(
        "ipv6 prefix-list ZONE-COVERED seq 5 permit {} ge 64 le 64\n",
        a.prefix
    )));
    assert!(border.contains(" prefix-list NO-AGGREGATE out\n"));
    // All covered racks, or at least 2: not expressible.
    for min in [None, Some(2)] {
        o.aggregation = Some(Aggregation::Conditional { min });
        let e = topology(&f, &o).unwrap_err();
        assert!(matches!(e, FrrError::Conditional(_)), "{e}");
        assert!(e.to_string().contains("any route of the condition"), "{e}");
    }
}
