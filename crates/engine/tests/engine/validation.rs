//! The engine against closed forms and published behaviour.

use aifabric_capacity::capacity_report;
use aifabric_dataplane::{Forwarding, Lb, Net, NetParams};
use aifabric_engine::sim::{simulate, Collective};
use aifabric_model::{DeviceId, Fabric, FailureMask, Role, Scenario};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_workload::collective::{alpha_beta_seconds, ecmp_expected_max_load, Algorithm};
use aifabric_workload::{placement, Algo, Op, Placement};

fn fat_tree(k: u32) -> Fabric {
    aifabric_spec::build_str("ft.yaml", &aifabric_fixtures::fat_tree(k)).unwrap()
}

/// Two RoCE AI zones of 14 racks x 16 GPUs, non-blocking inside (16 CTSW, one link from every
/// RTSW to each), 32 x 400G from each zone to the ATSWs: 89.6 Tb/s over 12.8 Tb/s = 7:1.
fn roce_1_to_7() -> Fabric {
    aifabric_spec::build_str("r7.yaml", aifabric_fixtures::specs::ROCE_1_TO_7).unwrap()
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
    let routes = Forwarding::new(net, groups.iter().flatten().copied()).unwrap();
    let c = Collective {
        op,
        algo,
        groups,
        bytes,
        channels: 1,
        lb,
        seed,
        alpha_s,
        proto: None,
    };
    simulate(net, &routes, &c).unwrap().time_s
}

/// Length of the first link between two roles, metres.
fn length(f: &Fabric, a: Role, b: Role) -> f64 {
    f.links()
        .iter()
        .find(|l| f.device(l.a).role == a && f.device(l.b).role == b)
        .unwrap()
        .length_m()
}

/// Path latency between two GPUs of a k-ary fat tree by where they sit: under one edge
/// switch (1 switch, 2 host cables), one pod (3 switches, 4 cables) or across pods (5
/// switches, 6 cables: edge, aggregation, core, aggregation, edge); 5 ns per metre.
fn fat_tree_latency(f: &Fabric, switch_s: f64, a: DeviceId, b: DeviceId) -> f64 {
    let host = length(f, Role::Gpu, Role::Rtsw);
    let agg = length(f, Role::Rtsw, Role::Ctsw);
    let core = length(f, Role::Ctsw, Role::Atsw);
    let (da, db) = (f.device(a), f.device(b));
    let (switches, metres) = if da.rack == db.rack {
        (1.0, 2.0 * host)
    } else if da.pod == db.pod {
        (3.0, 2.0 * (host + agg))
    } else {
        (5.0, 2.0 * (host + agg + core))
    };
    switches * switch_s + metres * 5e-9
}

/// The longest chain of hop latencies over `steps` pipelined steps of a ring in the order of
/// `ring`: the largest sum of `steps` consecutive hops, going round as often as needed
/// (brute force over every starting hop).
fn ring_chain(f: &Fabric, switch_s: f64, ring: &[DeviceId], steps: usize) -> f64 {
    let n = ring.len();
    let hop: Vec<f64> = (0..n)
        .map(|i| fat_tree_latency(f, switch_s, ring[i], ring[(i + 1) % n]))
        .collect();
    (0..n)
        .map(|start| (0..steps).map(|j| hop[(start + j) % n]).sum::<f64>())
        .fold(0.0, f64::max)
}

#[test]
fn ring_all_reduce_with_spraying_matches_alpha_beta_on_a_non_blocking_fat_tree() {
    let f = fat_tree(8);
    let sw = 1e-6;
    let n = net(&f, params(1, sw));
    let all = gpus(&f);
    assert_eq!(all.len(), 128);
    let alpha = 5e-6;
    let cross_pod = fat_tree_latency(&f, sw, all[0], all[127]);
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
                Lb::Spray(None),
                1,
                alpha,
            );
            // Alpha-beta with alpha alone per step, plus the path latency along the
            // dependency chains. A ring in rank order stays under one edge switch for 3 hops
            // in 4, then changes edge switch, and every 16 ranks changes pod: its chain is the
            // longest run of `steps` consecutive hops.
            let floor = alpha_beta_seconds(op, closed, 128, bytes, alpha, b).unwrap();
            let lockstep =
                alpha_beta_seconds(op, closed, 128, bytes, alpha + cross_pod, b).unwrap();
            if algo == Algo::Ring {
                let steps = if op == Op::AllReduce { 254 } else { 127 };
                let want = floor + ring_chain(&f, sw, &all, steps);
                assert!(
                    (t - want).abs() <= 0.005 * want,
                    "{op:?} {algo:?} {bytes}: engine {t} s, alpha-beta + chain {want} s"
                );
                // Most hops stay under one edge switch (1 switch instead of 5), so the chain is
                // well under half of the lockstep rule's latency (cross-pod on every step).
                assert!(
                    t - floor < 0.5 * (lockstep - floor),
                    "{t} vs floor {floor}, lockstep {lockstep}"
                );
            } else {
                // Halving-doubling and direct steps reach partners at every distance: their
                // chains pay between nothing and the cross-pod latency per step.
                assert!(
                    t >= floor && t <= lockstep * 1.000_001,
                    "{op:?} {algo:?} {bytes}: engine {t} s, floor {floor} s, lockstep {lockstep} s"
                );
            }
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
    let routes = Forwarding::new(&n, pairs.iter().flatten().copied()).unwrap();
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
            proto: None,
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
        lb: Lb::Spray(None),
        seed: 0,
        alpha_s: 0.0,
        proto: None,
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
        let routes = Forwarding::new(&n, placed.iter().copied()).unwrap();
        let mut c = Collective {
            op: Some(Op::AllReduce),
            algo: Algo::Ring,
            groups: vec![placed.clone()],
            bytes: 1e9,
            channels: 0,
            lb: Lb::Ecmp,
            seed,
            alpha_s: 5e-6,
            proto: None,
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
        Lb::Spray(None),
        1,
        0.0,
    );
    let t_in = run(
        &n,
        Some(Op::AllReduce),
        Algo::Ring,
        inside,
        1e9,
        Lb::Spray(None),
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

/// Path latency from `a` to `b` under spraying (the slowest branch), from the engine's own
/// path walk: an input to the chain tests, not what they check.
fn pair_latency(net: &Net<'_>, a: DeviceId, b: DeviceId) -> f64 {
    let routes = net
        .dest_speaker(b)
        .map(|s| aifabric_routing::bgp::routes_to(&net.g, &net.states, s, &net.cfg).unwrap());
    let mut ws = aifabric_dataplane::PathWs::default();
    let mut out = Vec::new();
    let h = aifabric_dataplane::flow_hash(a, b, 0);
    net.path(
        routes.as_ref(),
        a,
        b,
        h,
        Lb::Spray(None),
        1,
        &mut ws,
        &mut out,
    )
    .unwrap()
}

fn simulate_one(
    net: &Net<'_>,
    op: Op,
    algo: Algo,
    group: Vec<DeviceId>,
    bytes: f64,
    alpha_s: f64,
) -> aifabric_engine::CollectiveResult {
    let routes = Forwarding::new(net, group.iter().copied()).unwrap();
    let c = Collective {
        op: Some(op),
        algo,
        groups: vec![group],
        bytes,
        channels: 1,
        lb: Lb::Spray(None),
        seed: 1,
        alpha_s,
        proto: None,
    };
    simulate(net, &routes, &c).unwrap()
}

#[test]
fn a_tree_pays_its_long_edges_once_per_level_not_once_per_step() {
    // 128 GPUs of a k = 8 fat tree in rank order: the double binary tree's edges join ranks
    // under one edge switch, one pod or two pods. Pipelined, a chunk climbs leaf -> root
    // paying each edge of its path once, then comes back down the same way.
    let f = fat_tree(8);
    let sw = 1e-6;
    let n = net(&f, params(1, sw));
    let all = gpus(&f);
    let alpha = 5e-6;
    let r = simulate_one(&n, Op::AllReduce, Algo::Tree, all.clone(), 1e6, alpha);
    // Longest leaf -> root path of each heap-shaped tree (B is A over the reversed order),
    // by brute force over every rank.
    let count = all.len();
    let climb = |i: usize, rank: &dyn Fn(usize) -> DeviceId| {
        let (mut i, mut sum) = (i, 0.0);
        while i > 0 {
            let p = (i - 1) / 2;
            sum += fat_tree_latency(&f, sw, rank(i), rank(p));
            i = p;
        }
        sum
    };
    let a = |i: usize| all[i];
    let b = |i: usize| all[count - 1 - i];
    let longest = (0..count)
        .map(|i| climb(i, &a).max(climb(i, &b)))
        .fold(0.0, f64::max);
    let depth = 8.0; // levels of a heap of 128 nodes
    let want = 2.0 * depth * alpha + 2.0 * longest;
    assert!(
        (r.latency_s - want).abs() < 1e-12,
        "tree latency {} s, want {want} s",
        r.latency_s
    );
    // The deepest chain crosses pods three times (127 -> 63 -> 31 -> 15), so it pays the
    // cross-pod path 3 times each way, not once per level.
    let x = fat_tree_latency(&f, sw, all[0], all[127]);
    assert!(r.latency_s < 2.0 * depth * (alpha + x) - 2.0 * 3.0 * x);
    assert_eq!(r.steps, 16);
}

#[test]
fn a_two_region_ring_on_prometheus_pays_the_long_fibre_per_crossing_not_per_step() {
    let f = aifabric_spec::load("prometheus").unwrap();
    let n = net(&f, NetParams::default());
    // 4 scale-up domains in the east, 4 in the west: a ring of 64 ranks crosses the 60 km
    // between the regions twice per turn.
    let region = |g: &DeviceId, r: &str| f.device_name(*g).starts_with(r);
    let east: Vec<DeviceId> = gpus(&f)
        .into_iter()
        .filter(|g| region(g, "east."))
        .take(32)
        .collect();
    let west: Vec<DeviceId> = gpus(&f)
        .into_iter()
        .filter(|g| region(g, "west."))
        .take(32)
        .collect();
    let ring: Vec<DeviceId> = east.into_iter().chain(west).collect();
    let hops: Vec<f64> = (0..64)
        .map(|i| pair_latency(&n, ring[i], ring[(i + 1) % 64]))
        .collect();
    let long: Vec<usize> = (0..64).filter(|&i| hops[i] > 300e-6).collect();
    assert_eq!(
        long,
        vec![31, 63],
        "the two crossings of 60 km of fibre: {hops:?}"
    );
    let alpha = 5e-6;
    let r = simulate_one(&n, Op::AllReduce, Algo::Ring, ring, 64e6, alpha);
    assert_eq!(r.steps, 126);
    // 126 steps go round the 64 hops twice less 2: the best window skips the two cheapest
    // consecutive hops and holds all four crossings.
    let total: f64 = hops.iter().sum();
    let cheapest_pair = (0..64)
        .map(|i| hops[i] + hops[(i + 1) % 64])
        .fold(f64::INFINITY, f64::min);
    let chain = 2.0 * total - cheapest_pair;
    let want = 126.0 * alpha + chain;
    assert!(
        (r.latency_s - want).abs() < 1e-9,
        "latency {} s, want {want} s",
        r.latency_s
    );
    // Four 300 us crossings, not 126.
    assert!(r.latency_s < 126.0 * alpha + 4.0 * hops[31] + 122.0 * 50e-6);
    assert!(r.latency_s > 4.0 * 300e-6);
}

fn traffic_on_fat_tree(
    tm: &aifabric_workload::traffic::TrafficMatrix,
    lb: Lb,
) -> (Fabric, aifabric_engine::traffic::TrafficResult) {
    let f = fat_tree(8);
    let r = {
        let n = net(&f, params(1, 1e-6));
        let all = gpus(&f);
        aifabric_engine::traffic::run(&n, tm, &all, lb, 1).unwrap()
    };
    (f, r)
}

#[test]
fn a_sprayed_permutation_on_a_non_blocking_fat_tree_completes_at_line_rate() {
    use aifabric_workload::traffic::Pattern;
    let bytes = 2u64 << 20;
    let tm = Pattern::Permutation.generate(128, bytes, 7);
    let (f, r) = traffic_on_fat_tree(&tm, Lb::Spray(None));
    let n = net(&f, params(1, 1e-6));
    let all = gpus(&f);
    let line = 400e9 / 8.0;
    for (fl, &fct) in tm.flows.iter().zip(&r.fct_s) {
        let want =
            bytes as f64 / line + pair_latency(&n, all[fl.src as usize], all[fl.dst as usize]);
        assert!(
            (fct - want).abs() <= 1e-9 * want,
            "flow {}: {fct} vs {want}",
            fl.id
        );
    }
    assert_eq!(r.events, 1, "every flow has the same rate: one solve");
}

#[test]
fn an_incast_shares_the_receivers_link() {
    use aifabric_workload::traffic::Pattern;
    let bytes = 2u64 << 20;
    let tm = Pattern::Incast(8).generate(128, bytes, 1);
    for lb in [Lb::Spray(None), Lb::Ecmp] {
        let (f, r) = traffic_on_fat_tree(&tm, lb);
        let n = net(&f, params(1, 1e-6));
        let all = gpus(&f);
        let line = 400e9 / 8.0;
        for (fl, &fct) in tm.flows.iter().zip(&r.fct_s) {
            // 8 flows share the receiver's 400G link: each drains at line / 8.
            let want = 8.0 * bytes as f64 / line
                + pair_latency(&n, all[fl.src as usize], all[fl.dst as usize]);
            assert!(
                (fct - want).abs() <= 1e-9 * want,
                "{lb:?} flow {}: {fct} vs {want}",
                fl.id
            );
        }
    }
}

#[test]
fn triggered_flows_start_when_their_trigger_fires() {
    // A 0->1 flow fires trigger 1 when done; 2->3 waits on it. A barrier of two flows
    // starts 4->5 after both.
    let text = "Nodes 128\nConnections 5\nTriggers 2\n\
        0->1 id 1 start 0 size 1000000 send_done_trigger 1\n\
        2->3 id 2 trigger 1 size 1000000\n\
        6->7 id 3 start 0 size 1000000 send_done_trigger 2\n\
        8->9 id 4 start 5000000 size 1000000 send_done_trigger 2\n\
        4->5 id 5 trigger 2 size 1000000\n\
        trigger id 1 oneshot\ntrigger id 2 barrier count 2\n";
    let tm = aifabric_workload::traffic::parse_htsim("t.cm", text).unwrap();
    let (f, r) = traffic_on_fat_tree(&tm, Lb::Spray(None));
    let n = net(&f, params(1, 1e-6));
    let all = gpus(&f);
    let lat = |a: usize, b: usize| pair_latency(&n, all[a], all[b]);
    let x = 1e6 / (400e9 / 8.0);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.max(1e-9);
    assert!(close(r.fct_s[0], x + lat(0, 1)));
    // Flow 2 starts when flow 1 completes and takes as long on its own.
    assert!(close(r.fct_s[1], x + lat(2, 3)));
    // The barrier fires when the later of flows 3 and 4 completes: 5 us + x + latency.
    let barrier = (x + lat(6, 7)).max(5e-6 + x + lat(8, 9));
    let end5 = barrier + x + lat(4, 5);
    assert!(close(r.makespan_s, end5), "{} vs {end5}", r.makespan_s);
    assert_eq!(r.never_started, 0);
}

/// Issue 35's reproducer at 3,000 flows: 4 KiB flows on a k=8 fat tree, flow `i` starting
/// at `i` ps. Coalescing takes a tenth of the re-solves of the exact fluid (one per
/// start and nearly one per finish), and moves no completion time by more than 10
/// tolerances (the module's bound), the percentiles by less than one.
#[test]
fn staggered_starts_coalesce_within_the_tolerance() {
    use aifabric_engine::traffic::{run, run_exact, FLUID_TOLERANCE};
    use aifabric_workload::traffic::{Start, TmFlow, TrafficMatrix};
    let n = 3_000u32;
    let tm = TrafficMatrix {
        nodes: 128,
        flows: (0..n)
            .map(|i| TmFlow {
                id: u64::from(i) + 1,
                src: i % 128,
                dst: (i % 128 + 1 + (i / 128) % 127) % 128,
                bytes: 4096,
                start: Start::AtPs(u64::from(i)),
                done_trigger: None,
                recv_trigger: None,
            })
            .collect(),
        triggers: Default::default(),
    };
    let f = fat_tree(8);
    let nt = net(&f, params(1, 1e-6));
    let all = gpus(&f);
    let exact = run_exact(&nt, &tm, &all, Lb::Ecmp, 1).unwrap();
    let got = run(&nt, &tm, &all, Lb::Ecmp, 1).unwrap();
    assert_eq!(exact.coalesced_events, 0);
    assert!(exact.events >= u64::from(n), "{} re-solves", exact.events);
    assert!(
        got.events * 10 < exact.events,
        "{} vs {}",
        got.events,
        exact.events
    );
    assert!(got.coalesced_events > u64::from(n));
    let eps = FLUID_TOLERANCE;
    for (i, (a, b)) in exact.fct_s.iter().zip(&got.fct_s).enumerate() {
        assert!((a - b).abs() <= 10.0 * eps * a, "flow {i}: {a} vs {b}");
    }
    let (a, b) = (&exact.fct, &got.fct);
    for (x, y) in [
        (a.p50_s, b.p50_s),
        (a.p99_s, b.p99_s),
        (exact.makespan_s, got.makespan_s),
    ] {
        assert!((x - y).abs() <= eps * x, "{x} vs {y}");
    }
}

/// Flows that start together and finish far apart are never coalesced: the result is the
/// exact fluid's, bit for bit.
#[test]
fn events_far_apart_are_not_coalesced() {
    use aifabric_workload::traffic::Pattern;
    let tm = Pattern::Permutation.generate(128, 2 << 20, 7);
    let f = fat_tree(8);
    let nt = net(&f, params(1, 1e-6));
    let all = gpus(&f);
    let exact = aifabric_engine::traffic::run_exact(&nt, &tm, &all, Lb::Ecmp, 1).unwrap();
    let got = aifabric_engine::traffic::run(&nt, &tm, &all, Lb::Ecmp, 1).unwrap();
    assert_eq!(got.coalesced_events, 0);
    assert_eq!(format!("{exact:?}"), format!("{got:?}"));
}
