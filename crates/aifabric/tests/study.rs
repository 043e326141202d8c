//! The facade's contracts: a damaging scenario is compared with the healthy fabric by the
//! same placement, and the comparison equals two separate studies; a healthy study reports
//! no comparison; bad requests are `BadRequest`. And the Llama 3 405B example job, run as
//! `aifabric job` runs it, gives the step time the Llama 3 paper's throughput implies.

use aifabric::{CollectiveRequest, Error, Placement, Setup, Study, TrafficSource};
use aifabric_model::{Fabric, Scenario};

fn fabric() -> Fabric {
    aifabric_spec::load("llama3-24k").expect("built-in spec")
}

fn atsw_down(f: &Fabric) -> Scenario {
    Scenario::from_selectors(f, &["east.dc1.llama.atsw1".to_string()], &[], &[]).unwrap()
}

#[test]
fn a_damaging_scenario_is_compared_with_the_healthy_fabric() {
    let f = fabric();
    let req = CollectiveRequest {
        gpus: 256,
        placement: Placement::Spread,
        sizes: vec![1 << 20, 64 << 20],
        ..CollectiveRequest::default()
    };
    let healthy = Study::healthy(&f, Setup::default())
        .collective(&req)
        .unwrap();
    let study = Study::new(&f, atsw_down(&f), Setup::default());
    assert!(study.damaged());
    let failed = study.collective(&req).unwrap();
    for (h, x) in healthy.rows.iter().zip(&failed.rows) {
        assert!(
            h.slowdown.is_none(),
            "a healthy study compares with nothing"
        );
        let want = x.time_us / h.time_us;
        let got = x.slowdown.expect("a damaging scenario gives the slowdown");
        assert!((got - want).abs() <= 1e-12 * want, "{got} vs {want}");
        assert!(got >= 1.0 - 1e-9, "a failure cannot speed a ring up: {got}");
    }
}

#[test]
fn a_scenario_the_traffic_never_crosses_says_so_and_changes_nothing() {
    let f = fabric();
    let study = Study::new(&f, atsw_down(&f), Setup::default());
    // 64 packed GPUs stay under their CTSWs: nothing they send reaches an ATSW.
    let inside = CollectiveRequest {
        gpus: 64,
        sizes: vec![64 << 20],
        ..CollectiveRequest::default()
    };
    let r = study.collective(&inside).unwrap();
    let c = r
        .run
        .crossing
        .as_ref()
        .expect("a damaging scenario says what it crosses");
    assert!(c.links_out > 0);
    assert_eq!((c.crossed, c.examples.len()), (0, 0));
    assert_eq!(
        r.rows[0].slowdown,
        Some(1.0),
        "untouched traffic cannot slow down"
    );
    // Over several AI zones, the ring crosses the failed ATSW's links.
    let across = CollectiveRequest {
        gpus: 4096,
        sizes: vec![64 << 20],
        ..CollectiveRequest::default()
    };
    let r = study.collective(&across).unwrap();
    let c = r.run.crossing.as_ref().unwrap();
    assert!(c.crossed > 0 && c.crossed <= c.links_out);
    assert!(
        c.examples.iter().all(|e| e.contains("atsw1")),
        "{:?}",
        c.examples
    );
    // A healthy study has nothing to cross.
    let h = Study::healthy(&f, Setup::default())
        .collective(&inside)
        .unwrap();
    assert!(h.run.crossing.is_none());
}

#[test]
fn a_job_under_a_scenario_carries_the_healthy_step_of_the_same_placement() {
    let f = fabric();
    let it = aifabric_spec::job::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/jobs/small-64.yaml"
    ))
    .unwrap();
    let alone = Study::healthy(&f, Setup::default()).job(&it, None).unwrap();
    assert!(alone.run.healthy.is_none() && alone.run.slowdown.is_none());
    let r = Study::new(&f, atsw_down(&f), Setup::default())
        .job(&it, None)
        .unwrap();
    let h = r.run.healthy.as_ref().expect("healthy step");
    assert_eq!(h.step_s, alone.run.result.step_s);
    assert_eq!(r.run.slowdown, Some(r.run.result.step_s / h.step_s));
}

#[test]
fn the_llama3_405b_job_gives_the_step_time_of_the_papers_throughput() {
    // "The Llama 3 Herd of Models" (Meta, 2024), table 4, 405B on 16,384 H100s: TP 8, CP 1,
    // PP 16, DP 128, sequence length 8,192, 16 sequences per DP rank (16M tokens per step),
    // 400 TFLOP/s per GPU. The step those FLOP/s imply, counting the model's FLOPs per token
    // as the job model does (3 x forward: the layers' matmuls, causal attention, logits).
    let tokens: f64 = 16.0 * 128.0 * 8192.0;
    let a = aifabric::stages::workload::job::cards::find("llama3-405b")
        .unwrap()
        .arch;
    let paper_step_s = a.training_flops_per_token(8192) * tokens / (16_384.0 * 400e12);
    // About 4% above 6 x parameters per token (6.2208 s): attention and logits.
    assert!(paper_step_s > 6.2208 * 1.03 && paper_step_s < 6.2208 * 1.06);

    let it = aifabric_spec::job::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/jobs/llama3-405b-16k.yaml"
    ))
    .unwrap();
    // The example is the paper's configuration.
    assert_eq!(it.gpus, 16_384);
    assert_eq!(it.tokens, tokens);
    let ranks = |name: &str| it.comms.iter().find(|c| c.name == name).unwrap().groups[0].len();
    assert_eq!(ranks("tp all_reduce"), 8);
    assert_eq!(ranks("dp reduce_scatter"), 128);
    assert_eq!(it.pipeline.stages, 16);
    assert!(
        it.pipeline.virtual_stages > 1,
        "the paper's schedule is interleaved"
    );
    assert!(!it.comms.iter().any(|c| c.name.starts_with("cp")));
    assert_eq!(it.order.label(), "[tp, cp, pp, dp]");

    let f = aifabric_spec::load("prometheus").expect("built-in spec");
    let r = Study::healthy(&f, Setup::default()).job(&it, None).unwrap();
    let step = r.run.result.step_s;
    let off = step / paper_step_s - 1.0;
    assert!(
        off.abs() < 0.10,
        "step {step:.3} s vs {paper_step_s:.4} s from the paper's 400 TFLOP/s ({:+.1}%): \
         compute {:.3} + bubble {:.3} + exposed communication {:.3}",
        off * 100.0,
        r.run.result.compute_s,
        r.run.result.bubble_s,
        r.run.result.exposed_comm_s
    );
    // The same statement as an end-to-end MFU: 400 / 989 = 40.4%.
    assert!((r.run.result.mfu / (400.0 / 989.0) - 1.0).abs() < 0.10);
    // The paper ran it on 80 GB H100s: it fits, and the report shows the breakdown.
    let m = r.memory.expect("an architecture's job is checked");
    assert_eq!(m.gpu_memory_bytes, Some(80 << 30));
    assert!(m.fits() && m.need.total_bytes > 0.5 * (80u64 << 30) as f64);
}

#[test]
fn a_job_that_does_not_fit_in_gpu_memory_is_refused_with_its_figures() {
    // Llama 3 405B in pure data parallelism on 8 GPUs: 810 GB of bf16 weights alone.
    let job = "name: dp8\ngpus: 8\nparallelism: { dp: 8 }\n\
               model: { card: llama3-405b, global_batch: 8 }\n\
               compute: { peak_tflops: 989, efficiency: 0.5 }\n";
    let it = aifabric_spec::job::parse("dp8.yaml", job).unwrap();
    let f = aifabric_spec::load("llama3-24k").expect("built-in spec");
    match Study::healthy(&f, Setup::default()).job(&it, None) {
        Err(Error::BadRequest { message, .. }) => {
            for says in [
                "weights",
                "optimizer state",
                "activations",
                "80.0 GiB",
                "tp: 2",
            ] {
                assert!(message.contains(says), "{says}: {message}");
            }
        }
        other => panic!("not refused: {other:?}"),
    }
    // The same job without an architecture (a parameter count) is not checked.
    let old = job.replace(
        "card: llama3-405b",
        "parameters: 405e9, layers: 126, hidden: 16384, sequence_length: 8192",
    );
    let it = aifabric_spec::job::parse("dp8.yaml", &old).unwrap();
    let r = Study::healthy(&f, Setup::default()).job(&it, None).unwrap();
    assert!(r.memory.is_none());
}

#[test]
fn requests_that_cannot_be_met_are_bad_requests() {
    let f = fabric();
    let study = Study::healthy(&f, Setup::default());
    let too_many = CollectiveRequest {
        gpus: 10_000_000,
        ..CollectiveRequest::default()
    };
    assert!(matches!(
        study.collective(&too_many),
        Err(Error::BadRequest { .. })
    ));
    let none = CollectiveRequest {
        sizes: vec![],
        gpus: 16,
        ..CollectiveRequest::default()
    };
    assert!(matches!(
        study.collective(&none),
        Err(Error::BadRequest { .. })
    ));
    let incast = TrafficSource::Pattern {
        pattern: "incast:8".parse().unwrap(),
        gpus: 4,
        bytes: 1 << 20,
    };
    match study.traffic(&incast, None, Placement::Packed) {
        Err(Error::BadRequest { message: m, .. }) => assert!(m.contains("at least 9 GPUs"), "{m}"),
        other => panic!("{:?}", other.map(|r| r.gpus)),
    }
}

#[test]
fn options_read_back_what_they_print() {
    for s in ["ecmp", "eecmp:4", "ucmp", "spray", "te"] {
        let lb: aifabric::Lb = s.parse().unwrap();
        assert_eq!(lb.to_string(), s);
    }
    for s in ["packed", "spread", "fragmented:7", "topology-aware"] {
        let p: Placement = s.parse().unwrap();
        assert_eq!(p.to_string(), s);
    }
    for s in [
        "ring",
        "tree",
        "halving-doubling",
        "direct",
        "hierarchical",
        "auto",
    ] {
        let a: aifabric::Algo = s.parse().unwrap();
        assert_eq!(a.to_string(), s);
    }
    let e = "wcmp".parse::<aifabric::Lb>().unwrap_err();
    assert!(e.contains("use ecmp"), "{e}");
}

#[test]
fn a_replay_under_a_scenario_carries_the_healthy_replay_of_the_same_placement() {
    let f = fabric();
    let it = aifabric_spec::job::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/jobs/small-64.yaml"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    aifabric_chakra::synth::write(&it, dir.path(), "trace", true, &|_| {}).unwrap();
    let set = aifabric::TraceSet::discover(dir.path()).unwrap();
    let req = aifabric::ReplayRequest::default();
    let alone = Study::healthy(&f, Setup::default())
        .replay(&set, &req, &|_| {})
        .unwrap();
    assert!(alone.run.healthy.is_none() && alone.run.slowdown.is_none());
    let r = Study::new(&f, atsw_down(&f), Setup::default())
        .replay(&set, &req, &|_| {})
        .unwrap();
    let h = r.run.healthy.as_ref().expect("healthy replay");
    assert_eq!(h.iteration_s, alone.run.result.iteration_s);
    assert_eq!(
        r.run.slowdown,
        Some(r.run.result.iteration_s / h.iteration_s)
    );
    // The trace's ranks are the job's GPUs, and the replay ends after the job's compute.
    assert!(r.run.result.iteration_s >= it.compute_s);
    // 64 packed GPUs stay inside one AI zone: the ATSW's links are out, and the replay's
    // traffic crosses none of them, so nothing can change.
    assert!(alone.run.crossing.is_none());
    let c = r
        .run
        .crossing
        .as_ref()
        .expect("a damaging scenario says what it crosses");
    assert!(c.links_out > 0);
    assert_eq!(c.crossed, 0, "{c:?}");
    assert_eq!(r.run.slowdown, Some(1.0));
    // The job asks for `spread`, which on this one-building fabric is `packed`: said.
    assert_eq!(r.placement, "spread");
    let note = r
        .placement_note
        .as_deref()
        .expect("spread equals packed here");
    assert!(note.contains("one building"), "{note}");
}

#[test]
fn a_single_failure_sweep_covers_every_group() {
    let f = aifabric_spec::load("dsf-l2-zone").unwrap();
    let req = aifabric::FailureRequest {
        sweep: "single:plane".into(),
        ..Default::default()
    };
    let r = Study::healthy(&f, Setup::default())
        .failures(&req, &|_, _| {})
        .unwrap();
    let planes = f
        .srg_catalog()
        .of_class(aifabric_model::SrgClass::from_prefix("plane").unwrap())
        .len();
    assert!(planes > 1);
    assert_eq!(r.scenarios.len(), planes);
    for s in &r.scenarios {
        assert!(
            (0.0..=1.0).contains(&s.min_capacity_retained),
            "{}",
            s.scenario
        );
    }
    let bad = aifabric::FailureRequest {
        sweep: "pairs".into(),
        ..Default::default()
    };
    assert!(matches!(
        Study::healthy(&f, Setup::default()).failures(&bad, &|_, _| {}),
        Err(Error::BadRequest { message: m, .. }) if m.contains("pairs needs a class")
    ));
}

#[test]
fn a_sweep_from_a_maintenance_state_measures_from_that_state() {
    // Four BAG planes where the zones limit the region pair: from the healthy fabric no
    // single plane costs anything; with one plane drained, the next one costs a third (the
    // two planes left carry 2 of the 3 planes' worth the zones can send).
    let f = aifabric_spec::build_str(
        "p4.yaml",
        aifabric_fixtures::specs::TWO_REGIONS_NSF_4_PLANES_PLANAR,
    )
    .unwrap();
    let req = aifabric::FailureRequest {
        sweep: "single:plane".into(),
        state: "drain a.bag.plane0".into(),
        ..Default::default()
    };
    let healthy = Study::healthy(&f, Setup::default())
        .failures(&req, &|_, _| {})
        .unwrap();
    assert!(healthy.summary.starting_state.is_none());
    assert_eq!(healthy.summary.capacity_retained.min, 1.0);
    let drained = Scenario::from_selectors(&f, &[], &["a.bag.plane0".to_string()], &[]).unwrap();
    let r = Study::new(&f, drained, Setup::default())
        .failures(&req, &|_, _| {})
        .unwrap();
    let st = r
        .summary
        .starting_state
        .as_ref()
        .expect("the state is reported");
    assert_eq!(st.description, "drain a.bag.plane0");
    assert_eq!((st.devices_out, st.gpus_cut_off), (1, 0));
    assert_eq!(
        r.summary.healthy_gbps, healthy.summary.healthy_gbps,
        "the drained plane alone costs nothing"
    );
    let retained = |name: &str| {
        r.scenarios
            .iter()
            .find(|s| s.scenario == name)
            .map(|s| s.min_capacity_retained)
            .unwrap()
    };
    assert!((retained("plane:a.bag.plane1") - 2.0 / 3.0).abs() < 1e-9);
    // Planar wiring: plane 0 of `c` only reaches the drained plane; failing it changes nothing.
    assert_eq!(retained("plane:c.bag.plane0"), 1.0);
    // A soft drain still carries traffic when nothing else is left: not a state to sweep from.
    let soft = Scenario::from_selectors(&f, &[], &[], &["a.bag.plane0".to_string()]).unwrap();
    assert!(matches!(
        Study::new(&f, soft, Setup::default()).failures(&req, &|_, _| {}),
        Err(Error::BadRequest { message: m, .. }) if m.contains("soft drain")
    ));
}

#[test]
fn a_stage_error_behind_an_error_is_its_source() {
    use aifabric::stages::chakra::replay::ReplayError;
    use aifabric::stages::workload::placement::PlacementError;
    use std::error::Error as _;
    let f = fabric();
    let study = Study::healthy(&f, Setup::default());
    let e = study.place(10_000_000, Placement::Packed, 8).unwrap_err();
    assert!(matches!(e, Error::BadRequest { .. }), "{e}");
    let p = e.source().and_then(|s| s.downcast_ref::<PlacementError>());
    assert_eq!(p.map(|p| p.to_string()), Some(e.to_string()));
    // A message alone has no source.
    let none = CollectiveRequest {
        sizes: vec![],
        gpus: 16,
        ..CollectiveRequest::default()
    };
    let e = study.collective(&none).unwrap_err();
    assert!(e.source().is_none(), "{e}");
    // A trace of 64 ranks on a fabric of fewer GPUs: the replay's error, and under it the
    // placement's.
    let it = aifabric_spec::job::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/jobs/small-64.yaml"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    aifabric_chakra::synth::write(&it, dir.path(), "trace", false, &|_| {}).unwrap();
    let set = aifabric::TraceSet::discover(dir.path()).unwrap();
    let small = aifabric_spec::build_str(
        "small.yaml",
        "name: small\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            fat_tree: {k: 2}\n",
    )
    .unwrap();
    let e = Study::healthy(&small, Setup::default())
        .replay(&set, &aifabric::ReplayRequest::default(), &|_| {})
        .unwrap_err();
    assert!(matches!(e, Error::BadRequest { .. }), "{e}");
    let replay = e.source().and_then(|s| s.downcast_ref::<ReplayError>());
    assert!(
        matches!(replay, Some(ReplayError::Placement { ranks: 64, .. })),
        "{replay:?}"
    );
    let placement = std::iter::successors(e.source(), |s| (*s).source())
        .find_map(|s| s.downcast_ref::<PlacementError>());
    assert!(placement.is_some(), "{e}");
    assert_eq!(e.message(), e.to_string());
}

/// `single:switch:atsw` fails each of the 9 ATSWs of `llama3-24k` alone. Every CTSW has 3
/// links to each ATSW (27 up), so each loss leaves 24 of 27: the AI zone -> ATSW tier goes
/// from 7.11:1 to 7.11 x 27/24 = 8.00:1, and the routed capacity between AI zones keeps 8/9
/// (UCMP spreads over the 8 ATSWs left). The scenario names are selectors `--fail` takes.
#[test]
fn each_switch_of_a_role_is_a_scenario() {
    let f = fabric();
    let req = aifabric::FailureRequest {
        sweep: "single:switch:atsw".into(),
        ..aifabric::FailureRequest::default()
    };
    let r = Study::healthy(&f, Setup::default())
        .failures(&req, &|_, _| {})
        .unwrap();
    assert_eq!(r.scenarios.len(), 9);
    for s in &r.scenarios {
        assert!(
            s.scenario.starts_with("switch:east.dc1.llama.atsw"),
            "{}",
            s.scenario
        );
        Scenario::from_selectors(&f, std::slice::from_ref(&s.scenario), &[], &[]).unwrap();
        assert!(
            (s.min_capacity_retained - 8.0 / 9.0).abs() < 1e-9,
            "{}: {}",
            s.scenario,
            s.min_capacity_retained
        );
        assert_eq!(s.gpus_isolated, 0);
        let t = s
            .tiers
            .iter()
            .find(|t| t.tier == "ai_zone_to_atsw")
            .expect("the tier");
        let after = t.after.expect("capacity left");
        assert!((after / t.before - 27.0 / 24.0).abs() < 1e-9, "{t:?}");
    }
    let bad = aifabric::FailureRequest {
        sweep: "single:switch:atws".into(),
        ..aifabric::FailureRequest::default()
    };
    let e = Study::healthy(&f, Setup::default())
        .failures(&bad, &|_, _| {})
        .unwrap_err();
    assert!(matches!(e, Error::BadRequest { .. }), "{e}");
    assert!(e.to_string().contains("roles are"), "{e}");
}

/// `spread` goes round the buildings: on the one-building `llama3-24k` it places the GPUs
/// exactly as `packed`, and the report says why; on `prometheus` the two differ, and nothing
/// is said.
#[test]
fn a_placement_that_equals_packed_says_why() {
    let req = |placement| CollectiveRequest {
        gpus: 256,
        placement,
        sizes: vec![1 << 20],
        ..CollectiveRequest::default()
    };
    let f = fabric();
    let r = Study::healthy(&f, Setup::default())
        .collective(&req(Placement::Spread))
        .unwrap();
    let note = r
        .placement_note
        .expect("spread equals packed on one building");
    assert!(note.contains("one building"), "{note}");
    let packed = Study::healthy(&f, Setup::default())
        .collective(&req(Placement::Packed))
        .unwrap();
    assert!(packed.placement_note.is_none());
    assert_eq!(r.rows[0].time_us, packed.rows[0].time_us);
    let p = aifabric_spec::load("prometheus").unwrap();
    let s = Study::healthy(&p, Setup::default())
        .collective(&req(Placement::Spread))
        .unwrap();
    assert!(s.placement_note.is_none(), "{:?}", s.placement_note);
}

/// Two AI zones of 4 racks x 8 GPUs, 4 CTSWs each, every CTSW with 2 links to each of 2 ATSWs.
const TWO_AI_ZONES: &str = r#"
name: two-ai-zones
regions:
  - name: east
    buildings:
      - name: dc1
        zones:
          - name: ai
            roce: {ai_zones: 2, racks_per_zone: 4, gpus_per_rack: 8, ctsw_per_zone: 4, atsw: 2, ctsw_links_per_atsw: 2}
"#;

#[test]
fn ecmp_and_ucmp_differ_exactly_where_the_weights_do() {
    use aifabric::{Lb, Op};
    let f = aifabric_spec::build_str("two-ai-zones.yaml", TWO_AI_ZONES).unwrap();
    let req = CollectiveRequest {
        op: Op::AllToAll,
        gpus: 64,
        sizes: vec![256 << 20],
        ..CollectiveRequest::default()
    };
    let run = |scenario: Scenario, lb: Lb| {
        let setup = Setup {
            lb,
            ..Setup::default()
        };
        Study::new(&f, scenario, setup).collective(&req).unwrap()
    };
    // Healthy, every CTSW hears the same from each ATSW and every RTSW the same from each
    // CTSW: the weights are equal per link everywhere, and the two modes agree to the bit.
    let healthy = Scenario::healthy(&f);
    let (e, u) = (run(healthy.clone(), Lb::Ecmp), run(healthy, Lb::Ucmp));
    assert!(e.weights.differences.switches_with_choice > 0);
    assert_eq!(e.weights.differences.switches_unequal, 0);
    assert_eq!(e.rows[0].time_us, u.rows[0].time_us);
    assert_eq!(e.weights.used, "equal per live link");
    assert_eq!(u.weights.used, "hashed by BGP link-bandwidth weights");
    // One CTSW -> ATSW bundle down: ctsw0 keeps 2 of its 4 uplinks, so it advertises half
    // as much toward the other AI zone and its zone's 4 RTSWs weigh it by half; and atsw0
    // reaches zone 0 through 3 CTSWs instead of 4, so zone 1's 4 CTSWs weigh atsw0 3:4
    // (what `aifabric routes` shows). The weights are unequal at those 8, and the modes
    // now differ.
    let cut = || {
        Scenario::from_selectors(
            &f,
            &["east.dc1.ai.ctsw0--east.dc1.ai.atsw0".to_string()],
            &[],
            &[],
        )
        .unwrap()
    };
    let (e, u) = (run(cut(), Lb::Ecmp), run(cut(), Lb::Ucmp));
    let d = &e.weights.differences;
    assert_eq!(d.switches_unequal, 8, "{d:?}");
    assert!(d.example.as_deref().unwrap().contains("rtsw"), "{d:?}");
    assert_ne!(e.rows[0].time_us, u.rows[0].time_us);
}

/// eBGP runs per link, so without link bandwidth each live link is one multipath, as FRR and
/// the kernel install them (checked against FRR 8.4 in network namespaces): rtsw1 toward
/// rack0 over ctsw0 (2 links) and ctsw1 (1 link left) splits 2/3 and 1/3, not 1/2 and 1/2.
/// The same holds for the missing-community fallback; `default:N` weights each link N.
#[test]
fn ecmp_splits_per_live_link_as_frr_does() {
    use aifabric::stages::routing::bgp::BandwidthMode;
    let f = aifabric_spec::build_str("r6", aifabric_fixtures::specs::ROCE_6_ROUTERS).unwrap();
    let down = Scenario::from_selectors(&f, &["r.b.z.rtsw1--r.b.z.ctsw1#1".to_string()], &[], &[])
        .unwrap();
    let mut setup = Setup::default();
    setup.bgp.bandwidth = BandwidthMode::None;
    let routes = Study::new(&f, down.clone(), setup)
        .routes("r.b.z.rtsw1", Some("r.b.z.rtsw0"))
        .unwrap();
    let hops: Vec<(&str, u32, f64)> = routes[0]
        .next_hops
        .iter()
        .map(|h| (h.neighbor.as_str(), h.links, h.weight))
        .collect();
    assert_eq!(hops.len(), 2, "{hops:?}");
    assert_eq!((hops[0].0, hops[0].1), ("r.b.z.ctsw0", 2));
    assert_eq!((hops[1].0, hops[1].1), ("r.b.z.ctsw1", 1));
    assert!((hops[0].2 - 2.0 / 3.0).abs() < 1e-12, "{hops:?}");
    assert!((hops[1].2 - 1.0 / 3.0).abs() < 1e-12, "{hops:?}");
    // The hardware group: one entry per link, 2 + 1.
    let slots: Vec<u32> = routes[0].next_hops.iter().map(|h| h.slots).collect();
    assert_eq!(slots, [2, 1]);
    // With link bandwidth (cumulative), the same 2:1 (the values heard are per link).
    let routes = Study::new(&f, down, Setup::default())
        .routes("r.b.z.rtsw1", Some("r.b.z.rtsw0"))
        .unwrap();
    let w: Vec<f64> = routes[0].next_hops.iter().map(|h| h.weight).collect();
    assert!((w[0] - 2.0 / 3.0).abs() < 1e-12, "{w:?}");
}

#[test]
fn a_packet_run_under_a_scenario_carries_the_healthy_run_of_the_same_placement() {
    let f = aifabric_spec::load("htsim-k8").unwrap();
    let source = TrafficSource::Pattern {
        pattern: aifabric::Pattern::Permutation,
        gpus: 32,
        bytes: 64 << 10,
    };
    let cfg = aifabric::packet::PacketOptions::default()
        .config(None, None)
        .unwrap();
    let run = |s: &Study| {
        s.traffic_packet(
            &source,
            None,
            Placement::Spread,
            &cfg,
            aifabric::Engine::Packet,
        )
        .unwrap()
    };
    let alone = run(&Study::healthy(&f, Setup::default()));
    assert!(alone.run.healthy.is_none() && alone.run.slowdown.is_none());
    let down = Scenario::from_selectors(&f, &["r.b.z.atsw0".to_string()], &[], &[]).unwrap();
    let r = run(&Study::new(&f, down, Setup::default()));
    let h = r.run.healthy.as_ref().expect("healthy packet run");
    assert_eq!(h.makespan_s, alone.run.result.makespan_s);
    assert_eq!(r.run.slowdown, Some(r.run.result.makespan_s / h.makespan_s));
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["engine"], "packet");
    assert!(json["packet"].is_object() && json["healthy"].is_object());
    assert!(json["notes"].is_array());
    assert!(
        Study::healthy(&f, Setup::default())
            .traffic_packet(
                &source,
                None,
                Placement::Packed,
                &cfg,
                aifabric::Engine::Flow
            )
            .is_err(),
        "the flow engine alone is Study::traffic"
    );
}

#[test]
fn notes_explain_what_the_lb_cannot_change_in_the_contract() {
    let f = fabric();
    let r = Study::healthy(&f, Setup::default())
        .traffic(
            &TrafficSource::Pattern {
                pattern: aifabric::Pattern::Permutation,
                gpus: 8,
                bytes: 1 << 20,
            },
            None,
            Placement::Packed,
        )
        .unwrap();
    let lb: Vec<_> = r.run.notes(aifabric::About::Lb).collect();
    assert_eq!(lb.len(), 1, "{:?}", r.run.notes);
    assert!(lb[0].contains("--lb cannot change these results"));
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["notes"][0]["about"], "lb");
}
