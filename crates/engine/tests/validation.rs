//! The engine against closed forms and published behaviour (issue 5, item 6).

use aifabric_capacity::capacity_report;
use aifabric_engine::sim::{simulate, Collective, RouteCache};
use aifabric_engine::{Lb, Net, NetParams};
use aifabric_model::{DeviceId, Fabric, FailureMask, Role, Scenario};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_workload::collective::{alpha_beta_seconds, ecmp_expected_max_load, Algorithm};
use aifabric_workload::{placement, Algo, Op, Placement};

fn fat_tree(k: u32) -> Fabric {
    let yaml = format!(
        "name: ft\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            fat_tree: {{k: {k}}}\n"
    );
    aifabric_spec::build_str("ft.yaml", &yaml).unwrap()
}

/// Two RoCE AI zones of 14 racks x 16 GPUs, non-blocking inside (16 CTSW, one link from every
/// RTSW to each), 32 x 400G from each zone to the ATSWs: 89.6 Tb/s over 12.8 Tb/s = 7:1.
fn roce_1_to_7() -> Fabric {
    let yaml = "name: r7\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            roce:\n              ai_zones: 2\n              racks_per_zone: 14\n              gpus_per_rack: 16\n              ctsw_per_zone: 16\n              atsw: 2\n              ctsw_links_per_atsw: 1\n";
    aifabric_spec::build_str("r7.yaml", yaml).unwrap()
}

fn params(scale_up: u32, switch_latency_s: f64) -> NetParams {
    NetParams {
        scale_up_gpus: scale_up,
        switch_latency_s,
        ..NetParams::default()
    }
}

fn net<'f>(f: &'f Fabric, p: NetParams) -> Net<'f> {
    Net::new(
        f,
        &Scenario::healthy(f),
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        p,
    )
}

fn gpus(f: &Fabric) -> Vec<DeviceId> {
    f.devices_with_role(Role::Gpu).collect()
}

#[allow(clippy::too_many_arguments)]
fn run(
    net: &Net<'_>,
    op: Option<Op>,
    algo: Algo,
    groups: Vec<Vec<DeviceId>>,
    bytes: f64,
    lb: Lb,
    seed: u64,
    alpha_s: f64,
) -> f64 {
    let routes = RouteCache::new(net, groups.iter().flatten().copied()).unwrap();
    let c = Collective {
        op,
        algo,
        groups,
        bytes,
        channels: 1,
        lb,
        seed,
        alpha_s,
    };
    simulate(net, &routes, &c).unwrap().time_s
}

/// A cross-pod path of a k-ary fat tree: 5 switches (edge, aggregation, core, aggregation,
/// edge) and 6 cables, two of each tier; 5 ns per metre of fiber.
fn cross_pod_latency(f: &Fabric, switch_s: f64) -> f64 {
    let length = |a: Role, b: Role| {
        f.links()
            .iter()
            .find(|l| f.device(l.a).role == a && f.device(l.b).role == b)
            .unwrap()
            .length_m()
    };
    let metres = 2.0
        * (length(Role::Gpu, Role::Rtsw)
            + length(Role::Rtsw, Role::Ctsw)
            + length(Role::Ctsw, Role::Atsw));
    5.0 * switch_s + metres * 5e-9
}

#[test]
fn ring_all_reduce_with_spraying_matches_alpha_beta_on_a_non_blocking_fat_tree() {
    let f = fat_tree(8);
    let sw = 1e-6;
    let n = net(&f, params(1, sw));
    let all = gpus(&f);
    assert_eq!(all.len(), 128);
    let alpha = 5e-6;
    // Per-step latency: alpha plus the slowest ring edge's path; in rank order the ring
    // crosses from pod to pod, so that is the cross-pod path.
    let a = alpha + cross_pod_latency(&f, sw);
    let b = 400e9 / 8.0;
    for bytes in [64e6, 1e9] {
        for (op, algo, closed) in [
            (Op::AllReduce, Algo::Ring, Algorithm::Ring),
            (Op::ReduceScatter, Algo::Ring, Algorithm::Ring),
            (Op::AllGather, Algo::Ring, Algorithm::Ring),
            (
                Op::AllReduce,
                Algo::HalvingDoubling,
                Algorithm::HalvingDoubling,
            ),
            (Op::AllToAll, Algo::Direct, Algorithm::Direct),
        ] {
            let t = run(
                &n,
                Some(op),
                algo,
                vec![all.clone()],
                bytes,
                Lb::Spray,
                1,
                alpha,
            );
            let want = alpha_beta_seconds(op, closed, 128, bytes, a, b).unwrap();
            let floor = alpha_beta_seconds(op, closed, 128, bytes, alpha, b).unwrap();
            // Every ring step crosses pods somewhere, so rings pay the cross-pod latency on
            // every step: within 0.5%. Halving-doubling and direct steps reach partners at
            // every distance; their steps pay between alpha and the cross-pod latency.
            let exact = algo == Algo::Ring;
            assert!(
                t >= floor
                    && if exact {
                        (t - want).abs() <= 0.005 * want
                    } else {
                        t <= want * 1.000_001
                    },
                "{op:?} {algo:?} {bytes}: engine {t} s, alpha-beta {want} s (floor {floor} s)"
            );
        }
    }
}

#[test]
fn per_flow_ecmp_reproduces_balls_into_bins() {
    // k = 16: an edge switch has 8 hosts and 8 uplinks, one to each aggregation switch of its
    // pod. Its 8 hosts each send to a host under another edge switch of the same pod: 8 flows
    // hashed onto 8 equal paths. The phase ends when the busiest uplink has carried all its
    // flows, so makespan / (S / B) is that uplink's load.
    let f = fat_tree(16);
    let n = net(&f, params(1, 0.0));
    let all = gpus(&f);
    let pairs: Vec<Vec<DeviceId>> = (0..8).map(|i| vec![all[i], all[8 + i]]).collect();
    let routes = RouteCache::new(&n, pairs.iter().flatten().copied()).unwrap();
    let bytes = 1e9;
    let unit = bytes / (400e9 / 8.0);
    let seeds = 3000;
    let mut sum = 0.0;
    let mut sum_sq = 0.0;
    for seed in 0..seeds {
        let c = Collective {
            op: None,
            algo: Algo::Direct,
            groups: pairs.clone(),
            bytes,
            channels: 1,
            lb: Lb::Ecmp,
            seed,
            alpha_s: 0.0,
        };
        let t = simulate(&n, &routes, &c).unwrap().time_s;
        // Path latency is zero here (no switch latency, zero-length cables) or negligible.
        let load = (t / unit).round();
        assert!(
            (t / unit - load).abs() < 1e-3,
            "makespan {t} is not a whole number of transfers"
        );
        sum += load;
        sum_sq += load * load;
    }
    let mean = sum / f64::from(seeds as u32);
    let sd = (sum_sq / f64::from(seeds as u32) - mean * mean).sqrt();
    let want = ecmp_expected_max_load(8, 8); // 2.597
    let tol = 4.0 * sd / f64::from(seeds as u32).sqrt();
    assert!(
        (mean - want).abs() <= tol,
        "mean busiest-path load {mean} over {seeds} seeds, balls-into-bins {want} (tolerance {tol})"
    );
    // Spraying removes the collisions: every path carries one flow's worth.
    let c = Collective {
        op: None,
        algo: Algo::Direct,
        groups: pairs,
        bytes,
        channels: 1,
        lb: Lb::Spray,
        seed: 0,
        alpha_s: 0.0,
    };
    let t = simulate(&n, &routes, &c).unwrap().time_s;
    assert!((t / unit - 1.0).abs() < 1e-4, "spray: {}", t / unit);
}

#[test]
fn eecmp_with_16_queue_pairs_beats_single_qp_ecmp_on_a_non_blocking_zone() {
    // Rail-aligned rings (8 channels, one per GPU of each 8-GPU server) from fragmented
    // placements: 16 flows leave every RTSW per step, hashed onto 16 CTSW uplinks.
    let f = roce_1_to_7();
    let n = net(&f, NetParams::default());
    let mut ecmp = 0.0;
    let mut eecmp = 0.0;
    for seed in 0..4 {
        let placed = placement::place(
            &f,
            256,
            8,
            Placement::Fragmented { seed },
            &FailureMask::none(&f),
        )
        .unwrap();
        let routes = RouteCache::new(&n, placed.iter().copied()).unwrap();
        let mut c = Collective {
            op: Some(Op::AllReduce),
            algo: Algo::Ring,
            groups: vec![placed.clone()],
            bytes: 1e9,
            channels: 0,
            lb: Lb::Ecmp,
            seed,
            alpha_s: 5e-6,
        };
        let e1 = simulate(&n, &routes, &c).unwrap().time_s;
        c.lb = Lb::Eecmp(16);
        let e16 = simulate(&n, &routes, &c).unwrap().time_s;
        assert!(
            e16 < e1,
            "seed {seed}: E-ECMP {e16} s is not faster than ECMP {e1} s"
        );
        ecmp += e1;
        eecmp += e16;
    }
    assert!(
        eecmp < 0.9 * ecmp,
        "E-ECMP {eecmp} vs ECMP {ecmp}: less than 10% better"
    );
}

#[test]
fn cross_zone_traffic_on_a_1_to_7_fabric_slows_by_the_ratio() {
    let f = roce_1_to_7();
    let report = capacity_report(&f, &FailureMask::none(&f));
    let ratio = report
        .tiers
        .iter()
        .find(|t| t.name == "ai_zone_to_atsw")
        .and_then(|t| t.oversubscription)
        .unwrap();
    assert!((ratio - 7.0).abs() < 1e-9, "{ratio}");
    let n = net(&f, params(1, 0.0));
    let all = gpus(&f);
    let half = all.len() / 2; // zone 0, then zone 1
                              // Every GPU of zone 0 all-reduces with its peer: in zone 1, or in zone 0's other half.
    let cross: Vec<Vec<DeviceId>> = (0..half).map(|i| vec![all[i], all[half + i]]).collect();
    let inside: Vec<Vec<DeviceId>> = (0..half / 2)
        .map(|i| vec![all[i], all[half / 2 + i]])
        .collect();
    let t_cross = run(
        &n,
        Some(Op::AllReduce),
        Algo::Ring,
        cross.clone(),
        1e9,
        Lb::Spray,
        1,
        0.0,
    );
    let t_in = run(
        &n,
        Some(Op::AllReduce),
        Algo::Ring,
        inside,
        1e9,
        Lb::Spray,
        1,
        0.0,
    );
    let slowdown = t_cross / t_in;
    assert!(
        (slowdown - ratio).abs() <= 0.01 * ratio,
        "cross-zone slowdown {slowdown}, oversubscription {ratio}"
    );
    // Hashing can only do worse than the fluid split.
    let t_ecmp = run(
        &n,
        Some(Op::AllReduce),
        Algo::Ring,
        cross,
        1e9,
        Lb::Ecmp,
        1,
        0.0,
    );
    assert!(t_ecmp >= t_cross * (1.0 - 1e-9));
}
