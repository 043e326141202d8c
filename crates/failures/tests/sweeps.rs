//! Failure sweeps: closed forms on small fabrics, the incremental evaluator against a
//! from-scratch one, monotonicity, Monte Carlo against exact enumeration, determinism.

use aifabric_failures::compare::planar_vs_spread;
use aifabric_failures::sweep::{self, impact, ClassModel, FailureMode, LinkModel, Sweep};
use aifabric_failures::{analyze, Down, Evaluator, Options, Outcome};
use aifabric_model::{DomainClass, Fabric, SrgCatalog, SrgClass};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_spec::build_inter_bag;
use aifabric_spec::spec::InterBagTopology;
use proptest::prelude::*;

/// Two regions, each a BAG of `P` planes over two DSF buildings; inter-BAG is the bottleneck
/// (32 x 800G per direction against 2 x 32 x 800G of building uplinks per region), and one
/// spec group fails plane 0 of one side together with plane 1 of the other.
fn two_regions(planes: u32, topology: &str) -> String {
    let building = |name: &str| {
        format!(
            "      - name: {name}\n        zones:\n          - name: z\n            dsf_l1: {{rdsw: 8, \
             fdsw: 4, edsw: 4, links_per_fdsw: 2, gpus_per_rdsw: 18, edsw_uplinks: {}}}\n",
            2 * planes
        )
    };
    let region = |name: &str| {
        format!(
            "  - name: {name}\n    bag: {{planes: {planes}}}\n    buildings:\n{}{}",
            building("b1"),
            building("b2")
        )
    };
    format!(
        "name: t\nregions:\n{}{}inter_bag:\n  - {{between: [a, c], topology: {topology}, \
         links_per_plane: {}, length_m: 40000}}\nsrgs:\n  - name: a0-c1\n    members: \
         [a.bag.plane0, c.bag.plane1]\n",
        region("a"),
        region("c"),
        32 / planes
    )
}

/// NSF and DSF zones in one region, NSF in the other, joined spread: many speakers per site,
/// so flows, multipaths and rack weights all move under failures.
const MIXED: &str = aifabric_fixtures::specs::TWO_REGIONS_NSF_DSF_SPLIT;

fn build(text: &str) -> Fabric {
    aifabric_spec::build_str("test", text).expect("test spec builds")
}

fn evaluator(f: &Fabric) -> Evaluator<'_> {
    Evaluator::new(f, AsnPlan::Rfc7938, BgpConfig::default()).expect("converges")
}

fn outcome(ev: &Evaluator, cat: &SrgCatalog, srgs: &[usize]) -> Outcome {
    let mut ws = ev.workspace();
    ev.evaluate(&Down::of_srgs(ev.fabric(), cat, srgs), &mut ws)
        .expect("converges")
}

fn region_retained(ev: &Evaluator, o: &Outcome) -> (f64, f64) {
    (
        o.region_pair_gbps[0] / ev.healthy_region_gbps[0],
        o.region_maxflow_gbps[0] / ev.healthy_maxflow_gbps[0],
    )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn losing_one_of_p_planar_planes_leaves_p_minus_1_over_p() {
    for planes in [2u32, 4, 8] {
        let f = build(&two_regions(planes, "planar"));
        let ev = evaluator(&f);
        // Healthy: the inter-BAG links, 32 x 800G per direction, routed in full.
        assert!(close(ev.healthy_region_gbps[0], 32.0 * 800.0));
        assert!(close(ev.healthy_maxflow_gbps[0], 32.0 * 800.0));
        let cat = f.srg_catalog();
        for side in ["a", "c"] {
            let plane = cat.find(&format!("plane:{side}.bag.plane1")).unwrap();
            let (routed, maxflow) = region_retained(&ev, &outcome(&ev, &cat, &[plane]));
            let want = f64::from(planes - 1) / f64::from(planes);
            assert!(
                close(routed, want),
                "P={planes}: routed {routed}, want {want}"
            );
            assert!(close(maxflow, want), "P={planes}: max-flow {maxflow}");
        }
    }
}

#[test]
fn spread_keeps_more_than_planar_when_different_planes_fail_on_each_side() {
    // Plane 0 of a and plane 1 of c. Planar loses both plane pairs: (P - 2) / P. Spread
    // loses the links touching either: (P - 1)^2 / P^2 are left.
    let p = 4.0;
    let name = "builtin-test";
    let text = two_regions(4, "planar");
    let planar = build_inter_bag(name, &text, InterBagTopology::Planar).unwrap();
    let spread = build_inter_bag(name, &text, InterBagTopology::Spread).unwrap();
    for (f, want) in [
        (&planar, (p - 2.0) / p),
        (&spread, (p - 1.0) * (p - 1.0) / (p * p)),
    ] {
        let ev = evaluator(f);
        let cat = f.srg_catalog();
        let g = cat.find("srg:a0-c1").unwrap();
        let (routed, maxflow) = region_retained(&ev, &outcome(&ev, &cat, &[g]));
        assert!(close(routed, want), "routed {routed}, want {want}");
        assert!(close(maxflow, want), "max-flow {maxflow}, want {want}");
    }
    // The comparison names it as the largest difference, spread ahead.
    let cmp = planar_vs_spread(
        &planar,
        &spread,
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        &Sweep::Single(None),
        5,
        &|_, _| {},
    )
    .unwrap();
    let d = &cmp.largest_differences[0];
    assert_eq!(d.scenario, "srg:a0-c1");
    assert!(d.spread > d.planar);
    assert!(cmp.spread_better >= 1);
    // Worst: a whole building down (its pairs read 0 and its GPUs are lost), ahead of the
    // region conduit (the region pair reads 0, but every GPU still reaches the other
    // building of its region).
    assert_eq!(cmp.planar.worst.as_deref(), Some("building:a.b1"));
}

#[test]
fn a_spec_without_inter_bag_cannot_be_compared() {
    let text = aifabric_spec::builtin::get("dsf-l2-zone").unwrap();
    let e = build_inter_bag("builtin:dsf-l2-zone", text, InterBagTopology::Spread).unwrap_err();
    assert!(e.message.contains("inter_bag"), "{e}");
}

fn assert_same(a: &Outcome, b: &Outcome, what: &str) {
    let all = |o: &Outcome| {
        let mut v = o.site_pair_gbps.clone();
        v.extend(&o.region_pair_gbps);
        v.extend(&o.region_maxflow_gbps);
        v
    };
    for (x, y) in all(a).iter().zip(all(b)) {
        assert!(close(*x, y), "{what}: incremental {x} vs from scratch {y}");
    }
    assert_eq!(a.gpus_disconnected, b.gpus_disconnected, "{what}");
    assert_eq!(a.gpus_isolated, b.gpus_isolated, "{what}");
    assert_eq!(a.tiers, b.tiers, "{what}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_incremental_evaluator_matches_one_from_scratch(
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..4),
    ) {
        let f = build(MIXED);
        let ev = evaluator(&f);
        let cat = f.srg_catalog();
        let srgs: Vec<usize> = picks.iter().map(|i| i.index(cat.len())).collect();
        let down = Down::of_srgs(&f, &cat, &srgs);
        let mut ws = ev.workspace();
        let inc = ev.evaluate(&down, &mut ws).unwrap();
        let scratch = ev.evaluate_from_scratch(&down).unwrap();
        assert_same(&inc, &scratch, &format!("{srgs:?}"));
        // The workspace is left clean: the healthy fabric evaluates as healthy after it.
        let healthy = ev.evaluate(&Down::none(&f), &mut ws).unwrap();
        prop_assert_eq!(healthy, ev.healthy_outcome());
    }

    #[test]
    fn a_sweep_from_a_state_is_exact_and_agrees_with_the_healthy_evaluator(
        state in proptest::collection::vec(any::<prop::sample::Index>(), 1..3),
        more in proptest::collection::vec(any::<prop::sample::Index>(), 1..3),
    ) {
        let f = build(MIXED);
        let cat = f.srg_catalog();
        let pick = |v: &[prop::sample::Index]| -> Vec<usize> {
            v.iter().map(|i| i.index(cat.len())).collect()
        };
        let base = Down::of_srgs(&f, &cat, &pick(&state));
        let ev = Evaluator::from_state(&f, AsnPlan::Rfc7938, BgpConfig::default(), base.clone())
            .expect("converges");
        let down = ev.down_of(&cat, &pick(&more));
        let mut ws = ev.workspace();
        let inc = ev.evaluate(&down, &mut ws).unwrap();
        let scratch = ev.evaluate_from_scratch(&down).unwrap();
        assert_same(&inc, &scratch, "from a state");
        // Absolute figures do not depend on where the sweep started.
        let healthy = evaluator(&f);
        let abs = healthy.evaluate(&down, &mut healthy.workspace()).unwrap();
        let figures = |o: &Outcome| {
            let mut v = o.site_pair_gbps.clone();
            v.extend(&o.region_pair_gbps);
            v.extend(&o.region_maxflow_gbps);
            v
        };
        for (x, y) in figures(&inc).iter().zip(figures(&abs)) {
            prop_assert!((x - y).abs() <= 1e-9 * y.max(1.0), "{} Gb/s vs {} Gb/s", x, y);
        }
        // GPUs cut off are counted from the state: the state's own are not counted again.
        let of_state = healthy.evaluate(&base, &mut healthy.workspace()).unwrap();
        prop_assert_eq!(
            inc.gpus_disconnected + of_state.gpus_disconnected,
            abs.gpus_disconnected
        );
        prop_assert_eq!(ev.state_gpus_cut_off, of_state.gpus_disconnected);
    }

    #[test]
    fn capacity_never_increases_when_failures_are_added(
        first in proptest::collection::vec(any::<prop::sample::Index>(), 0..3),
        more in proptest::collection::vec(any::<prop::sample::Index>(), 1..3),
        planar in any::<bool>(),
    ) {
        let f = build(&two_regions(4, if planar { "planar" } else { "spread" }));
        let ev = evaluator(&f);
        let cat = f.srg_catalog();
        let a: Vec<usize> = first.iter().map(|i| i.index(cat.len())).collect();
        let mut b = a.clone();
        b.extend(more.iter().map(|i| i.index(cat.len())));
        let (oa, ob) = (outcome(&ev, &cat, &a), outcome(&ev, &cat, &b));
        let eps = 1e-9;
        prop_assert!(impact(&ev, &ob) <= impact(&ev, &oa) + eps);
        for (x, y) in ob.site_pair_gbps.iter().zip(&oa.site_pair_gbps) {
            prop_assert!(*x <= y + eps * y.max(1.0), "site pair {} > {}", x, y);
        }
        for (x, y) in ob.region_maxflow_gbps.iter().zip(&oa.region_maxflow_gbps) {
            prop_assert!(*x <= *y, "max-flow {} > {}", x, y);
        }
        prop_assert!(ob.gpus_disconnected >= oa.gpus_disconnected);
        prop_assert!(ob.gpus_isolated >= oa.gpus_isolated);
        prop_assert!(ob.gpus_isolated >= ob.gpus_disconnected);
    }
}

/// The hall that holds a DSF building's edge pod takes the building's way out with it: the
/// GPUs of the other three halls are alive, connected to their rack switches, and isolated
/// (13,824 = 3 x 4,608); the hall's own 4,608 are down. The headline is the building's pairs,
/// at 0, although the region pair keeps most of its capacity.
#[test]
fn a_building_cut_off_from_the_others_reads_as_isolated_gpus_and_zero() {
    let f = aifabric_spec::load("prometheus").unwrap();
    let ev = evaluator(&f);
    let cat = f.srg_catalog();
    let i = (0..cat.len())
        .find(|&i| cat.names[i] == "hall:east.dc1.hall0")
        .expect("the hall");
    let down = Down::of_srgs(&f, &cat, &[i]);
    let o = ev.evaluate(&down, &mut ev.workspace()).unwrap();
    assert_eq!(o.gpus_disconnected, 4_608);
    assert_eq!(o.gpus_isolated, 4_608 + 13_824);
    assert_eq!(impact(&ev, &o), 0.0);
    let region = o.region_pair_gbps[0] / ev.healthy_region_gbps[0];
    assert!(region > 0.8, "east<->west keeps {region}");
    assert_same(&o, &ev.evaluate_from_scratch(&down).unwrap(), "hall");
}

/// A RoCE zone of 8 AI zones is 8 sites joined by the ATSWs. Cutting one AI zone's
/// CTSW -> ATSW links leaves its racks and CTSWs alive (no GPU cut off at its rack) but
/// with no route out: its 3,072 GPUs are isolated and its 7 pairs read 0.
#[test]
fn ai_zones_of_a_roce_zone_are_sites() {
    let f = aifabric_spec::load("llama3-24k").unwrap();
    let ev = evaluator(&f);
    assert_eq!(ev.sites.len(), 8);
    assert_eq!(ev.sites[3], "east.dc1.llama.ai_zone3");
    assert_eq!(ev.site_pairs.len(), 28);
    let uplinks: Vec<aifabric_model::LinkId> = f
        .links()
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            let (a, b) = (f.device(l.a), f.device(l.b));
            let ctsw3 = |d: &aifabric_model::Device| {
                d.role == aifabric_model::Role::Ctsw && d.pod() == Some(3)
            };
            (ctsw3(a) && b.role == aifabric_model::Role::Atsw)
                || (ctsw3(b) && a.role == aifabric_model::Role::Atsw)
        })
        .map(|(i, _)| aifabric_model::LinkId::from_idx(i))
        .collect();
    assert_eq!(uplinks.len(), 16 * 27);
    let mut down = Down::none(&f);
    down.add(&[], &uplinks);
    let o = ev.evaluate(&down, &mut ev.workspace()).unwrap();
    assert_eq!(o.gpus_disconnected, 0);
    assert_eq!(o.gpus_isolated, 3_072);
    let names = ev.site_pair_names();
    for (k, n) in names.iter().enumerate() {
        let left = o.site_pair_gbps[k] / ev.healthy_site_gbps[k];
        if n.contains("ai_zone3") {
            assert_eq!(left, 0.0, "{n}");
        } else {
            assert!(left > 0.99, "{n}: {left}");
        }
    }
    assert_same(
        &o,
        &ev.evaluate_from_scratch(&down).unwrap(),
        "ai_zone3 uplinks",
    );
}

#[test]
fn incremental_matches_from_scratch_on_prometheus() {
    let f = aifabric_spec::load("prometheus").unwrap();
    let ev = evaluator(&f);
    let cat = f.srg_catalog();
    for prefix in [
        "linecard:east.bag.plane3.c1.lc1",
        "pd:east.dc6.nsf.hall1.",
        "pd:west.dc2.l2.hall2.",
        "hall:west.dc2.hall0",
        "chassis:west.bag.plane7.c2",
        "conduit:west.dc6",
    ] {
        let i = (0..cat.len())
            .find(|&i| cat.names[i].starts_with(prefix))
            .unwrap_or_else(|| panic!("a group named {prefix}..."));
        let name = &cat.names[i];
        let down = Down::of_srgs(&f, &cat, &[i]);
        let mut ws = ev.workspace();
        assert_same(
            &ev.evaluate(&down, &mut ws).unwrap(),
            &ev.evaluate_from_scratch(&down).unwrap(),
            name,
        );
    }
}

#[test]
fn the_monte_carlo_mean_matches_exact_enumeration() {
    // Every BAG plane fails independently with p = 0.2; enumerate all 2^8 patterns exactly.
    let f = build(&two_regions(4, "spread"));
    let ev = evaluator(&f);
    let cat = f.srg_catalog();
    let planes = cat.of_class(SrgClass::Domain(DomainClass::BagPlane));
    assert_eq!(planes.len(), 8);
    let p: f64 = 0.2;
    let named: Vec<(String, Vec<usize>)> = (0u32..1 << planes.len())
        .map(|m| {
            let s: Vec<usize> = (0..planes.len())
                .filter(|k| m >> k & 1 == 1)
                .map(|k| planes[k])
                .collect();
            (format!("{m}"), s)
        })
        .collect();
    let exact_recs = sweep::run(&ev, &cat, &Sweep::Named(named), &|_, _| {}).unwrap();
    let exact: f64 = exact_recs
        .iter()
        .map(|r| {
            let k = r.srgs.len() as i32;
            p.powi(k) * (1.0 - p).powi(planes.len() as i32 - k) * impact(&ev, &r.outcome)
        })
        .sum();
    let model = vec![ClassModel {
        class: SrgClass::Domain(DomainClass::BagPlane),
        probability: p,
        modes: vec![(FailureMode::Whole, 1.0)],
        role: None,
    }];
    let samples = 4_000;
    let mc = sweep::run(
        &ev,
        &cat,
        &Sweep::MonteCarlo {
            samples,
            first: 0,
            seed: 7,
            model,
            links: Vec::new(),
        },
        &|_, _| {},
    )
    .unwrap();
    assert_eq!(mc.iter().map(|r| r.draws).sum::<u64>(), samples);
    assert!(mc.len() <= 256, "identical patterns are evaluated once");
    let values: Vec<(f64, u64)> = mc
        .iter()
        .map(|r| (impact(&ev, &r.outcome), r.draws))
        .collect();
    let n = samples as f64;
    let mean = values.iter().map(|v| v.0 * v.1 as f64).sum::<f64>() / n;
    let var = values
        .iter()
        .map(|v| (v.0 - mean).powi(2) * v.1 as f64)
        .sum::<f64>()
        / (n - 1.0);
    let half_width = 3.0 * (var / n).sqrt();
    assert!(
        (mean - exact).abs() <= half_width,
        "Monte Carlo mean {mean} vs exact {exact} (99.7% half-width {half_width})"
    );
}

fn mixed_monte_carlo(keep: Option<usize>, link_probability: f64) -> Options {
    Options {
        sweep: Sweep::MonteCarlo {
            samples: 600,
            first: 0,
            seed: 42,
            model: vec![
                ClassModel {
                    class: SrgClass::Domain(DomainClass::PowerDomain),
                    probability: 0.05,
                    modes: vec![(FailureMode::Whole, 1.0)],
                    role: None,
                },
                ClassModel {
                    class: SrgClass::Domain(DomainClass::BagChassis),
                    probability: 0.1,
                    modes: vec![(FailureMode::Whole, 0.3), (FailureMode::OneLineCard, 0.7)],
                    role: None,
                },
            ],
            // Single links too: their draws must not depend on the thread count either.
            links: vec![LinkModel {
                optic: None,
                probability: link_probability,
            }],
        },
        label: "montecarlo".to_owned(),
        aggregation: None,
        mitigations: false,
        top: 10,
        plan: AsnPlan::Rfc7938,
        cfg: BgpConfig::default(),
        state: None,
        pod_sites: false,
        keep,
    }
}

fn json_with_threads(threads: usize) -> String {
    let f = build(MIXED);
    let cat = f.srg_catalog();
    let opts = mixed_monte_carlo(None, 0.002);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let report = pool.install(|| analyze(&f, &cat, &opts, &|_, _| {}).unwrap());
    serde_json::to_string(&report).unwrap()
}

#[test]
fn the_same_seed_gives_byte_identical_json_on_one_and_two_threads() {
    let one = json_with_threads(1);
    let two = json_with_threads(2);
    assert!(one == two, "reports differ between 1 and 2 threads");
    assert!(one.contains("\"draws\""));
}

/// A report that lists only the worst `keep` scenarios lists exactly the first `keep` of the
/// full report (draw counts included: patterns drawn again after they were cut from the list
/// still count), and its summary is the full one's.
#[test]
fn keeping_the_worst_k_lists_the_full_reports_first_k_and_the_same_summary() {
    let f = build(MIXED);
    let cat = f.srg_catalog();
    // Without single links, patterns repeat within and across chunks of draws.
    let full = analyze(&f, &cat, &mixed_monte_carlo(None, 0.0), &|_, _| {}).unwrap();
    let collected = sweep::run(
        &aifabric_failures::evaluator(&f, &mixed_monte_carlo(None, 0.0)).unwrap(),
        &cat,
        &mixed_monte_carlo(None, 0.0).sweep,
        &|_, _| {},
    )
    .unwrap();
    assert_eq!(collected.len(), full.summary.scenarios);
    assert_eq!(collected.iter().map(|r| r.draws).sum::<u64>(), 600);
    assert_eq!(full.summary.draws, 600);
    // The listed draw counts are the collected ones, and the list is worst first.
    for s in &full.scenarios {
        let r = collected.iter().find(|r| r.scenario == s.scenario).unwrap();
        assert_eq!(s.draws, r.draws, "{}", s.scenario);
    }
    assert!(full
        .scenarios
        .windows(2)
        .all(|w| w[0].min_capacity_retained <= w[1].min_capacity_retained));
    assert!(
        full.summary.scenarios < 300,
        "the model draws patterns more than once"
    );
    assert_eq!(full.summary.scenarios_listed, full.scenarios.len());
    for keep in [0, 1, 7, 40, full.scenarios.len() + 5] {
        let part = analyze(&f, &cat, &mixed_monte_carlo(Some(keep), 0.0), &|_, _| {}).unwrap();
        let n = keep.min(full.scenarios.len());
        assert_eq!(part.scenarios, full.scenarios[..n], "keep {keep}");
        let mut summary = part.summary.clone();
        assert_eq!(summary.scenarios_listed, n);
        summary.scenarios_listed = full.summary.scenarios_listed;
        assert_eq!(summary, full.summary, "keep {keep}");
    }
}

#[test]
fn draws_depend_only_on_seed_and_index() {
    use rand::RngExt;
    let a: u64 = sweep::draw_rng(5, 17).random();
    let b: u64 = sweep::draw_rng(5, 17).random();
    let c: u64 = sweep::draw_rng(5, 18).random();
    let d: u64 = sweep::draw_rng(6, 17).random();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_ne!(a, d);
}

#[test]
fn unavailability_is_mttr_over_mtbf_plus_mttr() {
    assert!(close(sweep::unavailability(99.0, 1.0), 0.01));
}

#[test]
fn weighted_percentiles_follow_draw_counts() {
    let v = [(0.5, 1), (0.9, 98), (1.0, 1)];
    assert_eq!(sweep::weighted_percentile(&v, 0.01), 0.5);
    assert_eq!(sweep::weighted_percentile(&v, 0.5), 0.9);
    assert_eq!(sweep::weighted_percentile(&v, 1.0), 1.0);
}

/// An NSF building and a DSF building under a 2-plane BAG; the spec names the cut of
/// `ftsw2--stsw0`, after which stsw0 cannot reach pod 1's racks (routing's blackhole test).
const BLACKHOLE: &str = aifabric_fixtures::specs::NSF_DSF_NAMED_CUT;

#[test]
fn mitigations_remove_blackholes_and_say_what_they_cost() {
    use aifabric_failures::mitigate::AggregationSetup;
    use aifabric_routing::aggregation::{Aggregation, AggregationTier};
    let f = build(BLACKHOLE);
    let cat = f.srg_catalog();
    let cut = cat.find("srg:cut").unwrap();
    let card = (0..cat.len())
        .find(|&i| cat.names[i].starts_with("linecard:a.bag.plane1."))
        .unwrap();
    let opts = Options {
        sweep: Sweep::Named(vec![
            ("cut".to_owned(), vec![cut]),
            ("card".to_owned(), vec![card]),
        ]),
        label: "named".to_owned(),
        aggregation: Some(AggregationSetup {
            aggregation: Aggregation::Unconditional,
            tier: AggregationTier::Zone,
            cfg: BgpConfig::default(),
        }),
        mitigations: true,
        top: 10,
        plan: AsnPlan::Rfc7938,
        cfg: BgpConfig::default(),
        state: None,
        pod_sites: false,
        keep: None,
    };
    let rep = analyze(&f, &cat, &opts, &|_, _| {}).unwrap();
    let rec = |n: &str| rep.scenarios.iter().find(|s| s.scenario == n).unwrap();
    // stsw0 attracts a quarter of the zone's traffic and drops 2 of its 6 prefixes.
    let c = rec("cut");
    assert_eq!(c.blackholed_prefixes, 2);
    assert!(close(c.blackholed_share, 0.25 * 2.0 / 6.0));
    assert_eq!(rep.summary.scenarios_with_blackholes, 1);
    // Conditional aggregation: stsw0 withdraws, nothing is dropped, and the pair loses the
    // capacity of stsw0's BAG links on top of the cut.
    let m = c
        .mitigations
        .iter()
        .find(|m| m.mitigation == "conditional_aggregation")
        .expect("conditional aggregation applies");
    assert_eq!(m.acts_on, vec!["a.b.z.stsw0"]);
    assert_eq!(m.blackholes.blackholed_prefixes, 0);
    assert!(m.min_capacity_retained <= c.min_capacity_retained + 1e-12);
    assert!(
        c.mitigations
            .iter()
            .all(|m| m.mitigation != "drain_bag_plane"),
        "no BAG plane is involved in the cut"
    );
    // A BAG line card (one of the plane's two chassis): draining its plane costs the whole
    // plane's share, 1 of 2 planes.
    let d = rec("card");
    let drain = d
        .mitigations
        .iter()
        .find(|m| m.mitigation == "drain_bag_plane")
        .expect("the card's plane is drained");
    assert_eq!(drain.acts_on, vec!["plane:a.bag.plane1"]);
    assert!(
        drain.min_capacity_retained < d.min_capacity_retained,
        "{} vs {}: {d:?}",
        drain.min_capacity_retained,
        d.min_capacity_retained
    );
    assert!(
        close(drain.min_capacity_retained, 0.5),
        "{}",
        drain.min_capacity_retained
    );
}

/// A dual-stage DSF zone is one BGP speaker: a cluster cut off inside it, every FDSW -> SDSW
/// link of the cluster down, changes no route, yet its 128 RDSWs x 36 GPUs reach nothing
/// outside the cluster. Cutting the edge pod's stage the same way leaves the whole building
/// (18,432 GPUs) without a way to BAG.
#[test]
fn a_dsf_cluster_cut_off_at_its_stage_is_isolated() {
    let f = aifabric_spec::load("prometheus").unwrap();
    let ev = evaluator(&f);
    let stage = |pod: u32| -> Vec<aifabric_model::LinkId> {
        f.links()
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                let (a, b) = (f.device(l.a), f.device(l.b));
                let zone =
                    |d: &aifabric_model::Device| f.zones()[d.zone.idx()].name == "east.dc1.l2";
                let fdsw = |d: &aifabric_model::Device| {
                    d.role == aifabric_model::Role::Fdsw && d.pod() == Some(pod)
                };
                let sdsw = |d: &aifabric_model::Device| d.role == aifabric_model::Role::Sdsw;
                zone(a) && ((fdsw(a) && sdsw(b)) || (fdsw(b) && sdsw(a)))
            })
            .map(|(i, _)| aifabric_model::LinkId::from_idx(i))
            .collect()
    };
    for (pod, want) in [(0, 128 * 36), (4, 18_432)] {
        let links = stage(pod);
        assert!(!links.is_empty(), "pod {pod}");
        let mut down = Down::none(&f);
        down.add(&[], &links);
        let o = ev.evaluate(&down, &mut ev.workspace()).unwrap();
        assert_eq!(o.gpus_disconnected, 0, "pod {pod}");
        assert_eq!(o.gpus_isolated, want, "pod {pod}");
        assert_same(
            &o,
            &ev.evaluate_from_scratch(&down).unwrap(),
            "cluster stage",
        );
        // All but one of the stage's links down: still a way out.
        let mut down = Down::none(&f);
        down.add(&[], &links[1..]);
        let o = ev.evaluate(&down, &mut ev.workspace()).unwrap();
        assert_eq!(o.gpus_isolated, 0, "pod {pod}, one link left");
    }
}

/// With `pod_sites`, each NSF pod is a site (`ZONE.podN`, also a selector): the pod pair is
/// measured, and a dead pod's pair reads 0, where the one-building view saw no pair at all.
#[test]
fn nsf_pods_are_sites_when_asked() {
    let f =
        aifabric_spec::build_str("n.yaml", aifabric_fixtures::specs::NSF_2_PODS_4_LINKS).unwrap();
    let whole = Evaluator::new(&f, AsnPlan::Rfc7938, BgpConfig::default()).unwrap();
    assert_eq!(whole.sites, vec!["a.b"]);
    assert!(whole.site_pairs.is_empty());
    let ev = Evaluator::with_sites(
        &f,
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        Down::none(&f),
        true,
    )
    .unwrap();
    assert_eq!(ev.sites, vec!["a.b.z.pod0", "a.b.z.pod1"]);
    assert_eq!(ev.site_pairs.len(), 1);
    // 2 racks x 4 GPUs x 400G per pod; each rack has 2 planes x 4 links up: non-blocking.
    assert!(ev.healthy_site_gbps[0] > 0.0);
    assert_eq!(
        aifabric_failures::eval::site_names(&f, true),
        vec!["a.b.z.pod0", "a.b.z.pod1"]
    );
    // The site's name selects the pod: its racks, GPUs and fabric switches.
    let pod1 =
        aifabric_model::Scenario::from_selectors(&f, &["a.b.z.pod1".into()], &[], &[]).unwrap();
    let down = Down::of_mask(&pod1.unusable());
    let o = ev.evaluate(&down, &mut ev.workspace()).unwrap();
    assert_eq!(o.site_pair_gbps[0], 0.0);
    assert_eq!(o.gpus_disconnected, 8);
    assert_eq!(impact(&ev, &o), 0.0);
    assert_same(&o, &ev.evaluate_from_scratch(&down).unwrap(), "pod down");
    // Half of one rack's plane-0 links: the pair keeps more than 0, less than all.
    let rtsw0 = f.find_device("a.b.z.rtsw0").unwrap();
    let ups: Vec<aifabric_model::LinkId> = f
        .incident(rtsw0)
        .iter()
        .copied()
        .filter(|&l| f.device(f.link(l).other(rtsw0)).role == aifabric_model::Role::Ftsw)
        .take(4)
        .collect();
    let mut down = Down::none(&f);
    down.add(&[], &ups);
    let o = ev.evaluate(&down, &mut ev.workspace()).unwrap();
    let left = o.site_pair_gbps[0] / ev.healthy_site_gbps[0];
    assert!(left > 0.0 && left < 1.0, "{left}");
    assert_same(&o, &ev.evaluate_from_scratch(&down).unwrap(), "rack links");
}

/// Single links in Monte Carlo: drawn by geometric skips, each link down with probability p
/// independently. The number down per draw is Binomial(N, p): its mean over many draws is
/// within 4 standard errors of N p; every name is a selector for exactly that link; an optic
/// filter draws only links of that class; p = 1 takes every link of the class.
#[test]
fn monte_carlo_draws_single_links_binomially() {
    use aifabric_model::{Optic, Scenario, Selection};
    let f = build(MIXED);
    let cat = f.srg_catalog();
    let ev = evaluator(&f);
    let n_links = f.links().len() as f64;
    let p = 0.01;
    let samples = 2_000u64;
    let run = |links: Vec<LinkModel>, samples: u64| {
        sweep::run(
            &ev,
            &cat,
            &Sweep::MonteCarlo {
                samples,
                first: 0,
                seed: 3,
                model: Vec::new(),
                links,
            },
            &|_, _| {},
        )
        .unwrap()
    };
    let recs = run(
        vec![LinkModel {
            optic: None,
            probability: p,
        }],
        samples,
    );
    assert_eq!(recs.iter().map(|r| r.draws).sum::<u64>(), samples);
    let down: f64 = recs
        .iter()
        .map(|r| r.srgs.len() as f64 * r.draws as f64)
        .sum::<f64>()
        / samples as f64;
    let se = (n_links * p * (1.0 - p) / samples as f64).sqrt();
    assert!(
        (down - n_links * p).abs() <= 4.0 * se,
        "{down} links down per draw, expected {} +- {}",
        n_links * p,
        4.0 * se
    );
    // Names are selectors for exactly their link.
    let r = recs.iter().find(|r| !r.srgs.is_empty()).unwrap();
    let name = cat.name(&f, r.srgs[0]);
    let sel = f.select(&name).unwrap();
    let link = cat.as_link(r.srgs[0]).unwrap();
    assert_eq!(sel, Selection::Links(vec![link]), "{name}");
    let s = Scenario::from_selectors(&f, &[name], &[], &[]).unwrap();
    assert_eq!(s.failed.counts(), (0, 1));
    // One optic class only, and all of it at p = 1.
    let optic = f.links()[0].optic;
    let of_class = f.links().iter().filter(|l| l.optic == optic).count();
    let all = run(
        vec![LinkModel {
            optic: Some(optic),
            probability: 1.0,
        }],
        3,
    );
    assert_eq!(all.len(), 1, "one pattern, three draws");
    assert_eq!(all[0].srgs.len(), of_class);
    assert!(all[0]
        .srgs
        .iter()
        .all(|&i| f.link(cat.as_link(i).unwrap()).optic == optic));
    assert!(run(
        vec![LinkModel {
            optic: Some(Optic::Zr),
            probability: 0.0
        }],
        5
    )
    .iter()
    .all(|r| r.srgs.is_empty()));
}

/// Link draws on `prometheus` fail a few sessions in every NSF building and at BAG, so the
/// flows out of the NSF buildings are propagated again on each draw, their part inside the
/// building shared between destinations that split alike there: every draw still equals
/// its evaluation from scratch.
#[test]
fn link_draws_on_prometheus_match_evaluation_from_scratch() {
    let f = aifabric_spec::load("prometheus").unwrap();
    let ev = evaluator(&f);
    let cat = f.srg_catalog();
    let recs = sweep::run(
        &ev,
        &cat,
        &Sweep::MonteCarlo {
            samples: 4,
            first: 0,
            seed: 11,
            model: Vec::new(),
            links: vec![LinkModel {
                optic: None,
                probability: 1e-4,
            }],
        },
        &|_, _| {},
    )
    .unwrap();
    let nsf_links = |r: &sweep::Record| {
        r.srgs
            .iter()
            .filter(|&&i| cat.as_link(i).is_some() && cat.name(&f, i).contains("dc6"))
            .count()
    };
    assert!(
        recs.iter().any(|r| nsf_links(r) > 0),
        "some draw fails NSF links"
    );
    for r in &recs {
        let down = ev.down_of(&cat, &r.srgs);
        assert_same(
            &r.outcome,
            &ev.evaluate_from_scratch(&down).unwrap(),
            &r.scenario,
        );
    }
}
