//! Traffic engineering, DSF spraying, failures, determinism and jobs.

use aifabric_dataplane::{Forwarding, Lb, Net, NetParams};
use aifabric_engine::job::{run, JobOptions};
use aifabric_engine::sim::{simulate, Collective, SimError};
use aifabric_engine::te::{assign, lp_optimum};
use aifabric_model::{DeviceId, Fabric, FailureMask, Role, Scenario};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_spec::job;
use aifabric_workload::{placement, Algo, Op, Placement};

fn fat_tree(k: u32) -> Fabric {
    aifabric_spec::build_str("ft.yaml", &aifabric_fixtures::fat_tree(k)).unwrap()
}

fn net<'f>(f: &'f Fabric, s: &Scenario, scale_up: u32) -> Net<'f> {
    let p = NetParams {
        scale_up_gpus: scale_up,
        ..NetParams::default()
    };
    Net::new(f, s, AsnPlan::Rfc7938, BgpConfig::default(), p)
}

fn collective(
    op: Option<Op>,
    algo: Algo,
    groups: Vec<Vec<DeviceId>>,
    lb: Lb,
    seed: u64,
) -> Collective {
    Collective {
        op,
        algo,
        groups,
        bytes: 1e9,
        channels: 1,
        lb,
        seed,
        alpha_s: 5e-6,
        proto: None,
    }
}

#[test]
fn greedy_te_against_its_lp_bound_by_hand() {
    // Three equal flows, two disjoint single-resource paths of equal capacity: any
    // assignment puts two flows on one path (max 2), the fractional optimum splits 1.5 each.
    let paths = vec![vec![(0u32, 1.0)], vec![(1u32, 1.0)]];
    let cands = vec![paths.clone(), paths.clone(), paths];
    let bytes = [1.0, 1.0, 1.0];
    let a = assign(&cands, &bytes, |_| 1.0);
    assert!((a.max_util - 2.0).abs() < 1e-12, "{a:?}");
    let opt = lp_optimum(&cands, &bytes, |_| 1.0).unwrap();
    assert!((opt - 1.5).abs() < 1e-6, "{opt}");
}

#[test]
fn te_never_loses_to_ecmp_and_reports_its_lp_gap() {
    // The balls-into-bins setup: 8 flows from one edge switch to another in the same pod of a
    // k = 16 fat tree, 8 equal paths.
    let f = fat_tree(16);
    let s = Scenario::healthy(&f);
    let n = net(&f, &s, 1);
    let all: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
    let pairs: Vec<Vec<DeviceId>> = (0..8).map(|i| vec![all[i], all[8 + i]]).collect();
    let routes = Forwarding::new(&n, pairs.iter().flatten().copied()).unwrap();
    for seed in 0..5 {
        let e = simulate(
            &n,
            &routes,
            &collective(None, Algo::Direct, pairs.clone(), Lb::Ecmp, seed),
        )
        .unwrap();
        let t = simulate(
            &n,
            &routes,
            &collective(None, Algo::Direct, pairs.clone(), Lb::Te, seed),
        )
        .unwrap();
        assert!(
            t.time_s <= e.time_s * (1.0 + 1e-9),
            "seed {seed}: TE {} vs ECMP {}",
            t.time_s,
            e.time_s
        );
        let gap = t.te_gap.expect("small instance: LP solved");
        assert!(gap >= -1e-6, "greedy below the LP bound: {gap}");
    }
}

#[test]
fn a_dsf_zone_sprays_cells_whatever_the_mode() {
    let f = aifabric_spec::load("dsf-l1-zone").unwrap();
    let s = Scenario::healthy(&f);
    let n = net(&f, &s, 8);
    let placed = placement::place(
        &f,
        512,
        8,
        Placement::Fragmented { seed: 3 },
        &FailureMask::none(&f),
    )
    .unwrap();
    let routes = Forwarding::new(&n, placed.iter().copied()).unwrap();
    let mut c = collective(Some(Op::AllReduce), Algo::Ring, vec![placed], Lb::Ecmp, 1);
    c.channels = 0;
    let ecmp = simulate(&n, &routes, &c).unwrap();
    c.lb = Lb::Spray(None);
    let spray = simulate(&n, &routes, &c).unwrap();
    assert_eq!(ecmp.time_s, spray.time_s);
    assert!(
        ecmp.tiers.iter().any(|t| t.tier == "rdsw-fabric"),
        "{:?}",
        ecmp.tiers
    );
}

#[test]
fn failures_slow_collectives_down_or_cut_them_off() {
    let f = fat_tree(8);
    let all: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
    let healthy = Scenario::healthy(&f);
    let h = net(&f, &healthy, 1);
    // Pod 0's GPUs each talk to their peer in pod 1: everything crosses the core.
    let pairs: Vec<Vec<DeviceId>> = (0..16).map(|i| vec![all[i], all[16 + i]]).collect();
    let c = collective(None, Algo::Direct, pairs.clone(), Lb::Spray(None), 1);
    let base = simulate(&h, &Forwarding::new(&h, all.iter().copied()).unwrap(), &c).unwrap();
    // Lose half of pod 0's aggregation switches: half its up capacity.
    let aggs: Vec<String> = f
        .devices_with_role(Role::Ctsw)
        .filter(|&d| f.device(d).pod() == Some(0))
        .take(2)
        .map(|d| f.device_name(d))
        .collect();
    let hurt = Scenario::from_selectors(&f, &aggs, &[], &[]).unwrap();
    let n = net(&f, &hurt, 1);
    let r = simulate(&n, &Forwarding::new(&n, all.iter().copied()).unwrap(), &c).unwrap();
    let slowdown = r.time_s / base.time_s;
    assert!(
        (slowdown - 2.0).abs() < 0.01,
        "half the uplinks, slowdown {slowdown}"
    );
    // A dead GPU: its flows have no path, and the error says so.
    let dead = Scenario::from_selectors(&f, &[f.device_name(all[0])], &[], &[]).unwrap();
    let n = net(&f, &dead, 1);
    let e = simulate(&n, &Forwarding::new(&n, all.iter().copied()).unwrap(), &c).unwrap_err();
    assert!(matches!(e, SimError::Unreachable { count: 1, .. }), "{e}");
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let f = fat_tree(8);
    let s = Scenario::healthy(&f);
    let n = net(&f, &s, 4);
    let placed = placement::place(
        &f,
        64,
        4,
        Placement::Fragmented { seed: 9 },
        &FailureMask::none(&f),
    )
    .unwrap();
    let routes = Forwarding::new(&n, placed.iter().copied()).unwrap();
    let c = collective(Some(Op::AllToAll), Algo::Direct, vec![placed], Lb::Ecmp, 4);
    let pool = |t| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
    };
    let one = pool(1).install(|| simulate(&n, &routes, &c).unwrap());
    let two = pool(2).install(|| simulate(&n, &routes, &c).unwrap());
    assert_eq!(one, two);
    assert_eq!(one.time_s.to_bits(), two.time_s.to_bits());
}

#[test]
fn a_job_step_is_compute_plus_its_exposed_communication() {
    let it = job::parse("small.yaml", aifabric_fixtures::jobs::SMALL_64_PACKED).unwrap();
    let f = fat_tree(8);
    let s = Scenario::healthy(&f);
    let n = net(&f, &s, it.scale_up_gpus);
    let placed = placement::place(
        &f,
        it.gpus,
        it.scale_up_gpus,
        it.placement,
        &FailureMask::none(&f),
    )
    .unwrap();
    let opts = JobOptions {
        lb: Lb::Ecmp,
        seed: 1,
        channels: 0,
    };
    let r = run(&n, &it, &placed, opts).unwrap();
    let exposed: f64 = r.comms.iter().map(|c| c.exposed_s).sum();
    assert!((r.step_s - (it.compute_s + it.bubble_s + exposed)).abs() < 1e-12);
    assert!(r.comms.iter().all(|c| c.time_s > 0.0));
    // TP stays inside the scale-up domain: NVLink only.
    let tp = r.comms.iter().find(|c| c.name == "tp all_reduce").unwrap();
    assert!(
        tp.detail.tiers.iter().all(|t| t.tier == "nvlink"),
        "{:?}",
        tp.detail.tiers
    );
    // Losing core switches can only slow the step.
    let cores: Vec<String> = f
        .devices_with_role(Role::Atsw)
        .take(8)
        .map(|d| f.device_name(d))
        .collect();
    let hurt = Scenario::from_selectors(&f, &cores, &[], &[]).unwrap();
    let n2 = net(&f, &hurt, it.scale_up_gpus);
    let r2 = run(&n2, &it, &placed, opts).unwrap();
    assert!(
        r2.step_s >= r.step_s * (1.0 - 1e-12),
        "{} < {}",
        r2.step_s,
        r.step_s
    );
}

#[test]
fn scale_up_transfers_need_no_network_and_a_cut_cell_fabric_is_an_error() {
    let f = aifabric_spec::load("dsf-l1-zone").unwrap();
    let placed = placement::place(&f, 8, 8, Placement::Packed, &FailureMask::none(&f)).unwrap();
    let rdsw = f.device_name(f.devices_with_role(Role::Rdsw).next().unwrap());
    // The rack switch of one whole domain fails: its GPUs still all-reduce over NVLink.
    let s = Scenario::from_selectors(&f, &[rdsw], &[], &[]).unwrap();
    let n = net(&f, &s, 8);
    let routes = Forwarding::new(&n, placed.iter().copied()).unwrap();
    let mut c = collective(Some(Op::AllReduce), Algo::Ring, vec![placed], Lb::Ecmp, 1);
    c.channels = 0;
    let r = simulate(&n, &routes, &c).unwrap();
    assert!(r.tiers.iter().all(|t| t.tier == "nvlink"), "{:?}", r.tiers);
    // Every FDSW gone: interface nodes have no fabric capacity; flows across it never finish.
    let fdsws: Vec<String> = f
        .devices_with_role(Role::Fdsw)
        .map(|d| f.device_name(d))
        .collect();
    let s = Scenario::from_selectors(&f, &fdsws, &[], &[]).unwrap();
    let n = net(&f, &s, 8);
    let placed = placement::place(&f, 64, 8, Placement::Packed, &FailureMask::none(&f)).unwrap();
    let routes = Forwarding::new(&n, placed.iter().copied()).unwrap();
    let c = collective(
        Some(Op::AllReduce),
        Algo::Ring,
        vec![placed],
        Lb::Spray(None),
        1,
    );
    let e = simulate(&n, &routes, &c).unwrap_err();
    assert!(e.to_string().contains("no capacity"), "{e}");
}

#[test]
fn hierarchical_needs_whole_domains() {
    let f = fat_tree(8);
    let s = Scenario::healthy(&f);
    let n = net(&f, &s, 4);
    let all: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
    // One GPU from each of 8 domains: not whole domains.
    let strided: Vec<DeviceId> = all.iter().step_by(4).take(8).copied().collect();
    let routes = Forwarding::new(&n, strided.iter().copied()).unwrap();
    let c = collective(
        Some(Op::AllReduce),
        Algo::Hierarchical,
        vec![strided],
        Lb::Spray(None),
        1,
    );
    assert!(matches!(
        simulate(&n, &routes, &c),
        Err(SimError::Invalid(_))
    ));
    let whole = all[..32].to_vec();
    let routes = Forwarding::new(&n, whole.iter().copied()).unwrap();
    let c = collective(
        Some(Op::AllReduce),
        Algo::Hierarchical,
        vec![whole],
        Lb::Spray(None),
        1,
    );
    assert!(simulate(&n, &routes, &c).is_ok());
}

/// `auto` is the exact argmin of what the engine simulates: its time equals the fastest
/// explicit algorithm's at every size (the bandwidth term is linear in the size, so one
/// calibration serves every size), its prediction for the chosen one is the simulated time,
/// and the choice moves from a few-step algorithm at small sizes (latency-bound: a ring's
/// 2(n - 1) steps of alpha lose) to another at large ones.
#[test]
fn auto_picks_the_fastest_applicable_algorithm_at_every_size() {
    let f = fat_tree(8);
    let s = Scenario::healthy(&f);
    let n = net(&f, &s, 4);
    let placed: Vec<DeviceId> = f.devices_with_role(Role::Gpu).take(64).collect();
    let routes = Forwarding::new(&n, placed.iter().copied()).unwrap();
    let mut tuner = aifabric_engine::tune::Tuner::default();
    let mut chosen = Vec::new();
    for bytes in [1024.0, 1.0 * (1 << 20) as f64, 1.0 * (1u64 << 32) as f64] {
        let mut c = collective(
            Some(Op::AllReduce),
            Algo::Auto,
            vec![placed.clone()],
            Lb::Ecmp,
            1,
        );
        c.bytes = bytes;
        let auto = tuner.simulate(&n, &routes, &c).unwrap();
        let cands = aifabric_engine::tune::candidates(&n, &c);
        assert_eq!(
            cands,
            [
                Algo::Ring,
                Algo::Tree,
                Algo::HalvingDoubling,
                Algo::Hierarchical
            ],
            "64 ranks in whole domains of 4: every all-reduce algorithm applies"
        );
        let best = cands
            .iter()
            .map(|&a| {
                c.algo = a;
                simulate(&n, &routes, &c).unwrap().time_s
            })
            .fold(f64::INFINITY, f64::min);
        assert!(
            (auto.time_s - best).abs() <= 1e-9 * best,
            "{bytes} B: auto {} ({:?}) vs best {best}",
            auto.time_s,
            auto.algo
        );
        let predicted = auto
            .tuned
            .iter()
            .find(|x| x.algo == auto.algo)
            .unwrap()
            .time_s;
        assert!((predicted - auto.time_s).abs() <= 1e-9 * auto.time_s);
        assert_eq!(auto.tuned.len(), 4);
        chosen.push(auto.algo);
    }
    assert_ne!(
        chosen[0],
        Algo::Ring,
        "1 KiB over 64 ranks is latency-bound"
    );
    assert_ne!(
        chosen[0], chosen[2],
        "small and large sizes pick differently: {chosen:?}"
    );
}

#[test]
fn a_routing_failure_is_a_sim_error_whose_source_is_the_routing_error() {
    use aifabric_routing::bgp::{NotConverged, SpeakerId};
    use std::error::Error as _;
    let why = NotConverged {
        origin: SpeakerId::new(3),
        evaluations: 9,
    };
    let e = SimError::from(why.clone());
    assert_eq!(e.to_string(), format!("control plane: {why}"));
    let source = e.source().expect("the routing error is the source");
    assert_eq!(source.downcast_ref::<NotConverged>(), Some(&why));
}

/// The flow engine refuses the packet-level modes at its own entry points (not only at the
/// CLI): a fluid has no entropy values or queues to choose by, so running `adaptive` as a
/// hash or `mixed:N` as a split would answer a question nobody asked.
#[test]
fn the_flow_engine_refuses_packet_level_modes_at_its_entry_points() {
    let f = fat_tree(4);
    let all: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
    let h = net(&f, &Scenario::healthy(&f), 1);
    let routes = Forwarding::new(&h, all.iter().copied()).unwrap();
    let pairs: Vec<Vec<DeviceId>> = vec![vec![all[0], all[all.len() - 1]]];
    for lb in [Lb::Adaptive, Lb::Mixed(8), Lb::Spray(Some(16))] {
        let c = collective(None, Algo::Direct, pairs.clone(), lb, 1);
        match simulate(&h, &routes, &c) {
            Err(SimError::Invalid(m)) => assert!(m.contains("packet-level mode"), "{m}"),
            other => panic!("{lb}: {other:?}"),
        }
    }
    // The modes it runs still run.
    for lb in [Lb::Ecmp, Lb::Eecmp(2), Lb::Ucmp, Lb::Spray(None)] {
        let c = collective(None, Algo::Direct, pairs.clone(), lb, 1);
        assert!(simulate(&h, &routes, &c).is_ok(), "{lb}");
    }
}
