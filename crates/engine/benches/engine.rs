//! Issue 5 targets (release, this 2-core machine): ring all-reduce over 32,768 GPUs of
//! builtin `prometheus`, one message size, ECMP, within 2 s; a progressive-filling step with
//! 1M flows within 1 s; all-to-all among 4,096 GPUs within 5 s. The collective benches time
//! what the CLI does after building the fabric: placement, the network of the scenario,
//! routes toward every destination rack, and the simulation.
//! Issue 14 adds a 65,536-flow permutation on `prometheus` (target 5 s) and a double-binary-
//! tree all-reduce over 131,072 GPUs (target 10 s).
//! Issue 35 adds flows that start one after another (flow `i` at `i` ps, 4 KiB each) on
//! `htsim-k8`, one GPU per scale-up domain: every arrival is an event of the fluid.
//! Run: `cargo bench -p aifabric-engine --bench engine`.
#![allow(missing_docs)] // criterion_main! defines an undocumented `main`

use aifabric_dataplane::{Forwarding, Lb, Net, NetParams};
use aifabric_engine::sim::{simulate, Collective};
use aifabric_engine::{max_min_rates, FlowSet};
use aifabric_model::{DeviceId, Fabric, Scenario};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_workload::{placement, Algo, Op, Placement};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::time::Duration;

/// 1M flows of 6 links each over 200k links, from a fixed xorshift stream.
fn million_flows() -> (Vec<f64>, FlowSet) {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let links = 200_000u64;
    let caps: Vec<f64> = (0..links).map(|i| 50e9 * (1 + i % 4) as f64).collect();
    let mut fs = FlowSet::new();
    let mut uses = Vec::with_capacity(6);
    for _ in 0..1_000_000 {
        uses.clear();
        for _ in 0..6 {
            uses.push(((next() % links) as u32, 1.0));
        }
        fs.push(&uses);
    }
    (caps, fs)
}

/// `n` GPUs placed packed on the healthy fabric, and its network.
fn healthy_net(f: &Fabric, n: u32) -> (Vec<DeviceId>, Net<'_>) {
    let healthy = Scenario::healthy(f);
    let gpus = placement::place(f, n, 8, Placement::Packed, &healthy.unusable()).unwrap();
    let net = Net::new(
        f,
        &healthy,
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        NetParams::default(),
    );
    (gpus, net)
}

fn collective(f: &Fabric, n: u32, op: Op, lb: Lb) -> f64 {
    collective_by(f, n, op, Algo::default_for(op), lb)
}

fn collective_by(f: &Fabric, n: u32, op: Op, algo: Algo, lb: Lb) -> f64 {
    let (gpus, net) = healthy_net(f, n);
    let routes = Forwarding::new(&net, gpus.iter().copied()).unwrap();
    let c = Collective {
        op: Some(op),
        algo,
        groups: vec![gpus],
        bytes: 1e9,
        channels: 0,
        lb,
        seed: 1,
        alpha_s: 5e-6,
        proto: None,
    };
    simulate(&net, &routes, &c).unwrap().time_s
}

/// A permutation of `n` flows of 2 MB among `n` packed GPUs, event by event.
fn permutation(f: &Fabric, n: u32, lb: Lb) -> f64 {
    let (gpus, net) = healthy_net(f, n);
    let tm = aifabric_workload::traffic::Pattern::Permutation.generate(n, 2 << 20, 1);
    aifabric_engine::traffic::run(&net, &tm, &gpus, lb, 1)
        .unwrap()
        .makespan_s
}

/// `n` flows of 4 KiB among the 128 hosts of `htsim-k8`, flow `i` starting at `i` ps, from
/// host `i mod 128` to the one `1 + (i / 128) mod 127` after it (issue 35's reproducer).
fn staggered(f: &Fabric, n: u32) -> f64 {
    use aifabric_workload::traffic::{Start, TmFlow, TrafficMatrix};
    let healthy = Scenario::healthy(f);
    let gpus = placement::place(f, 128, 1, Placement::Packed, &healthy.unusable()).unwrap();
    let params = NetParams {
        scale_up_gpus: 1,
        ..NetParams::default()
    };
    let net = Net::new(f, &healthy, AsnPlan::Rfc7938, BgpConfig::default(), params);
    let flows = (0..n)
        .map(|i| TmFlow {
            id: u64::from(i) + 1,
            src: i % 128,
            dst: (i % 128 + 1 + (i / 128) % 127) % 128,
            bytes: 4096,
            start: Start::AtPs(u64::from(i)),
            done_trigger: None,
            recv_trigger: None,
        })
        .collect();
    let tm = TrafficMatrix {
        nodes: 128,
        flows,
        triggers: Default::default(),
    };
    aifabric_engine::traffic::run(&net, &tm, &gpus, Lb::Ecmp, 1)
        .unwrap()
        .makespan_s
}

fn benches(c: &mut Criterion) {
    let (caps, fs) = million_flows();
    let mut grp = c.benchmark_group("engine");
    grp.sample_size(10);
    grp.measurement_time(Duration::from_secs(20));
    grp.bench_function("maxmin_1m_flows", |b| {
        b.iter(|| black_box(max_min_rates(&caps, &fs)))
    });
    let f = aifabric_spec::load("prometheus").unwrap();
    grp.bench_function("ring_all_reduce_32768_gpus_prometheus_ecmp", |b| {
        b.iter(|| black_box(collective(&f, 32_768, Op::AllReduce, Lb::Ecmp)))
    });
    grp.measurement_time(Duration::from_secs(40));
    grp.bench_function("all_to_all_4096_gpus_prometheus_ecmp", |b| {
        b.iter(|| black_box(collective(&f, 4_096, Op::AllToAll, Lb::Ecmp)))
    });
    // The incremental fluid (events re-solve only the flows they can change).
    grp.bench_function("permutation_65536_flows_prometheus_ecmp", |b| {
        b.iter(|| black_box(permutation(&f, 65_536, Lb::Ecmp)))
    });
    // Sprayed flows between four buildings: hops shared across rack pairs.
    grp.bench_function("permutation_65536_flows_prometheus_spray", |b| {
        b.iter(|| black_box(permutation(&f, 65_536, Lb::Spray(None))))
    });
    grp.measurement_time(Duration::from_secs(60));
    grp.bench_function("tree_all_reduce_131072_gpus_prometheus_ecmp", |b| {
        b.iter(|| {
            black_box(collective_by(
                &f,
                131_072,
                Op::AllReduce,
                Algo::Tree,
                Lb::Ecmp,
            ))
        })
    });
    grp.finish();
    // Staggered arrivals: starts and finishes picoseconds apart share re-solves inside the
    // fluid's coalescing window (issue 35's target: 30,000 flows in under a second).
    let k8 = aifabric_spec::load("htsim-k8").unwrap();
    let mut grp = c.benchmark_group("staggered");
    grp.sample_size(10);
    grp.measurement_time(Duration::from_secs(20));
    for n in [1_000, 3_000, 30_000, 100_000] {
        grp.bench_function(format!("staggered_{n}_flows_htsim_k8_ecmp"), |b| {
            b.iter(|| black_box(staggered(&k8, n)))
        });
    }
    grp.finish();
}

criterion_group!(engine, benches);
criterion_main!(engine);
