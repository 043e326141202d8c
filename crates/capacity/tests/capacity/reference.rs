//! The capacity report against published figures (FBOSS DSF counts, Llama 3 paper section
//! 3.3.1, Meta's "Building Prometheus ..." post) and closed forms.

use aifabric_capacity::{capacity_report, CapacityReport, Tier};
use aifabric_model::*;
use proptest::prelude::*;

fn report(spec: &str) -> (Fabric, CapacityReport) {
    let f = aifabric_spec::load(spec).unwrap();
    let r = capacity_report(&f, &FailureMask::none(&f));
    (f, r)
}

fn tier<'a>(r: &'a CapacityReport, name: &str) -> Vec<&'a Tier> {
    r.tiers.iter().filter(|t| t.name == name).collect()
}

#[test]
fn dsf_l2_to_bag_is_4_50() {
    let (_, r) = report("dsf-l2-zone");
    let t = tier(&r, "l2_to_bag");
    assert_eq!(t.len(), 1);
    // 512 RDSW x 36 x 400G = 7,372.8 Tb/s over 128 EDSW x 16 x 800G = 1,638.4 Tb/s.
    assert_eq!(t[0].down_gbps, 7_372_800.0);
    assert_eq!(t[0].up_gbps, 1_638_400.0);
    assert_eq!(format!("{:.2}", t[0].oversubscription.unwrap()), "4.50");
    assert_eq!(r.gpus, 18_432);
    // The FDSW tiers are non-blocking: 512 links down, 512 up.
    assert_eq!(tier(&r, "fdsw")[0].oversubscription, Some(1.0));
    assert_eq!(tier(&r, "edge_fdsw")[0].oversubscription, Some(1.0));
    // The SDSWs funnel 4 clusters into one edge pod: 4:1, where the ratio is made.
    assert_eq!(tier(&r, "sdsw")[0].oversubscription, Some(4.0));
    // The chain of tiers explains the end-to-end ratio: 14.4/17 x 1 x 4 x 1 x 17/12.8 = 4.5.
    let product: f64 = ["rdsw", "fdsw", "sdsw", "edge_fdsw", "edsw"]
        .iter()
        .map(|n| tier(&r, n)[0].oversubscription.unwrap())
        .product();
    assert!((product - 4.5).abs() < 1e-12, "{product}");
}

#[test]
fn nsf_example_is_4_98() {
    let (_, r) = report("nsf-l2");
    let t = tier(&r, "l2_to_bag");
    let ratio = t[0].oversubscription.unwrap();
    assert_eq!(format!("{ratio:.2}"), "4.98");
    // Exact: 15,936 x 400G over 8 x 16 x 25 x 400G = 249/50.
    assert!((ratio - 249.0 / 50.0).abs() < 1e-12);
    // The product of the tiers' ratios is the effective ratio (no tier bypassed).
    let product: f64 = ["rtsw", "ftsw", "stsw"]
        .iter()
        .map(|n| tier(&r, n)[0].oversubscription.unwrap())
        .product();
    assert!((product - ratio).abs() < 1e-9);
}

#[test]
fn llama3_ai_zone_to_atsw_is_about_7() {
    let (_, r) = report("llama3-24k");
    assert_eq!(r.gpus, 24_576);
    let t = tier(&r, "ai_zone_to_atsw");
    assert_eq!(t.len(), 8, "one per AI zone");
    for z in t {
        // 3,072 x 400G over 16 CTSW x 27 x 400G = 64/9 = 7.11, the nearest even design to 7:1.
        assert_eq!(z.down_gbps, 3_072.0 * 400.0);
        let ratio = z.oversubscription.unwrap();
        assert!((ratio - 64.0 / 9.0).abs() < 1e-12);
        // The nearest whole-link design to 7:1 (see crates/spec/specs/llama3-24k.yaml).
        assert!((ratio - 7.0).abs() / 7.0 < 0.02);
    }
}

#[test]
fn prometheus_region_pair_is_inside_16_to_48_pbps() {
    let (_, r) = report("prometheus");
    assert_eq!(r.region_pairs.len(), 1);
    let p = &r.region_pairs[0];
    assert!((16_000.0..=48_000.0).contains(&p.capacity_tbps), "{p:?}");
    // 16 planes x 640 x 800G per direction.
    assert_eq!(p.links, 16 * 640);
    assert!((p.capacity_tbps_per_direction - 8_192.0).abs() < 1e-6);
    assert!(r.gpus >= 90_000);
    // Every DSF L2 zone of Prometheus comes out at 4.50.
    let dsf: Vec<_> = tier(&r, "l2_to_bag")
        .into_iter()
        .filter(|t| t.scope.ends_with(".l2"))
        .collect();
    assert_eq!(dsf.len(), 10);
    assert!(dsf
        .iter()
        .all(|t| format!("{:.2}", t.oversubscription.unwrap()) == "4.50"));
    // Five zones per region give 8.19 Pb/s per direction into BAG (from FBOSS's DSF counts).
    let east: f64 = dsf
        .iter()
        .filter(|t| t.scope.starts_with("east."))
        .map(|t| t.up_gbps)
        .sum();
    assert!((east - 8_192_000.0).abs() < 1e-6);
}

#[test]
fn non_blocking_zones_bisect_at_half_their_gpu_bandwidth() {
    for spec in ["dsf-l2-zone", "dsf-l1-zone"] {
        let (_, r) = report(spec);
        for z in r.zones.iter().filter_map(|z| z.bisection.as_ref()) {
            assert_eq!(z.bisection_gbps, z.half_gpu_gbps, "{spec}");
        }
    }
    let (_, r) = report("dsf-l2-zone");
    let b = r.zones.iter().find_map(|z| z.bisection.clone()).unwrap();
    assert_eq!(b.bisection_gbps, 256.0 * 36.0 * 400.0);
}

#[test]
fn oversubscribed_zones_bisect_at_their_closed_form() {
    // Llama 3: AI zones 0-3 against 4-7; the ATSW layer limits it: 4 x 172.8 Tb/s.
    let (_, r) = report("llama3-24k");
    let b = r.zones.iter().find_map(|z| z.bisection.clone()).unwrap();
    assert_eq!(b.bisection_gbps, 4.0 * 16.0 * 27.0 * 400.0);
    // NSF: racks 0-248 against 249-497. 41 whole pods cross through their STSW uplinks
    // (8 planes x 16 x 400G each); pod 41 is split 3/3 and its halves meet at its FTSWs.
    let (_, r) = report("nsf-l2");
    let b = r.zones.iter().find_map(|z| z.bisection.clone()).unwrap();
    let whole_pods = 41.0 * 8.0 * 16.0 * 400.0;
    let split_pod = 3.0 * 32.0 * 400.0;
    assert_eq!(b.bisection_gbps, whole_pods + split_pod);
}

#[test]
fn inventory_and_power_add_up() {
    let (f, r) = report("dsf-l2-zone");
    assert_eq!(r.links, f.links().len() as u64);
    let by_role: u64 = r.devices_by_model.iter().map(|d| d.count).sum();
    assert_eq!(by_role, r.switches);
    let power: f64 = f
        .devices()
        .iter()
        .map(|d| f.catalog().get(d.hw).power_w)
        .sum();
    assert!((r.power_mw - power / 1e6).abs() < 1e-9);
    let links: u64 = r.links_by_kind.iter().map(|l| l.count).sum();
    assert_eq!(links, r.links);
    let optics: u64 = r.links_by_optic.iter().map(|l| l.links).sum();
    assert_eq!(optics, r.links);
    // J3 on RDSWs: 36 x 400G each, all used.
    let j3 = r
        .port_use
        .iter()
        .find(|p| p.model == "meru800bia" && p.speed_gbps == 400.0)
        .unwrap();
    assert_eq!((j3.ports_used, j3.ports_available), (512 * 36, 512 * 36));
}

#[test]
fn a_tier_cut_off_by_failures_stays_listed_without_a_ratio() {
    let (f, healthy) = report("dsf-l2-zone");
    let mut m = FailureMask::none(&f);
    for d in f.devices_with_role(Role::Bag) {
        m.fail_device(d);
    }
    let r = capacity_report(&f, &m);
    assert_eq!(r.tiers.len(), healthy.tiers.len());
    let t = tier(&r, "l2_to_bag")[0];
    assert_eq!((t.up_gbps, t.oversubscription), (0.0, None));
}

#[test]
fn optics_count_transceivers() {
    let (_, r) = report("dsf-l2-zone");
    let lanes: u64 = r
        .links_by_optic
        .iter()
        .filter(|o| o.fabric_lanes)
        .map(|o| o.links)
        .sum();
    let modules: u64 = r
        .links_by_optic
        .iter()
        .filter(|o| o.fabric_lanes)
        .map(|o| o.transceivers)
        .sum();
    assert_eq!(lanes, 204_800);
    // 8 lanes per module, a module at each end.
    assert_eq!(modules, 2 * 204_800 / 8);
    let dac = r.links_by_optic.iter().find(|o| o.class == "dac").unwrap();
    assert_eq!(dac.transceivers, 0);
}

#[test]
fn losing_one_of_p_planes_leaves_p_minus_1_over_p() {
    let (f, _) = report("prometheus");
    let mut mask = FailureMask::none(&f);
    // Fail every chassis of BAG plane 3 in `west`.
    let west = f.regions().iter().position(|r| r.name == "west").unwrap();
    for d in f.devices_with_role(Role::Bag) {
        if f.region_of(d).idx() == west && f.device(d).plane() == Some(3) {
            mask.fail_device(d);
        }
    }
    let r = capacity_report(&f, &mask);
    let p = &r.region_pairs[0];
    assert!((p.capacity_tbps_per_direction - 8_192.0 * 15.0 / 16.0).abs() < 1e-6);
}

/// A small DSF L2 zone that is non-blocking by construction: each RDSW has one 400G GPU per
/// FDSW and 4 x 106.25G = 425G toward each FDSW; each FDSW has as many lanes up as down.
fn small_spec(clusters: u32, rdsw: u32, fdsw: u32) -> String {
    format!(
        "name: p\nregions:\n  - name: r\n    bag: {{planes: 4}}\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            dsf_l2: {{clusters: {clusters}, rdsw_per_cluster: {rdsw}, edsw: {rdsw}, fdsw_per_cluster: {fdsw}, sdsw: {rdsw}, links_per_fdsw: 4, links_per_sdsw: 4, gpus_per_rdsw: {fdsw}, edsw_uplinks: 4}}\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Adding failures never increases any capacity figure.
    #[test]
    fn capacity_never_increases_with_failures(
        clusters in 1u32..4, rdsw in 2u32..6, fdsw in 1u32..4,
        fail_a in proptest::collection::vec(any::<u32>(), 0..20),
        fail_b in proptest::collection::vec(any::<u32>(), 0..20),
    ) {
        let f = aifabric_spec::build_str("p.yaml", &small_spec(clusters, rdsw, fdsw)).unwrap();
        let n = f.links().len() as u32;
        let mut small = FailureMask::none(&f);
        for l in &fail_a { small.fail_link(LinkId::new(l % n)); }
        let mut big = small.clone();
        for l in &fail_b { big.fail_link(LinkId::new(l % n)); }
        let (a, b) = (capacity_report(&f, &small), capacity_report(&f, &big));
        // Tiers are listed as built, whatever fails: the same list, figures never higher.
        prop_assert_eq!(a.tiers.len(), b.tiers.len());
        for (ta, tb) in a.tiers.iter().zip(&b.tiers) {
            prop_assert_eq!((&ta.name, &ta.scope), (&tb.name, &tb.scope));
            prop_assert!(tb.down_gbps <= ta.down_gbps && tb.up_gbps <= ta.up_gbps);
        }
        let bis = |r: &CapacityReport| r.zones.iter().find_map(|z| z.bisection.clone()).unwrap();
        prop_assert!(bis(&b).bisection_gbps <= bis(&a).bisection_gbps);
        // Healthy, the zone is non-blocking: the bisection is half its GPU bandwidth.
        let healthy = capacity_report(&f, &FailureMask::none(&f));
        let h = bis(&healthy);
        prop_assert_eq!(h.bisection_gbps, h.half_gpu_gbps);
        prop_assert!(bis(&a).bisection_gbps <= h.bisection_gbps);
    }
}
