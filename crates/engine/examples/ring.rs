//! Ring all-reduce over N GPUs of a built-in spec: `cargo run --release -p aifabric-engine
//! --example ring -- prometheus 32768 ecmp 1G`.
use aifabric_dataplane::{Forwarding, Lb, Net, NetParams};
use aifabric_engine::{simulate, Collective};
use aifabric_model::Scenario;
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_workload::{placement, Algo, Op, Placement};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spec = args.get(1).map_or("prometheus", |s| s.as_str());
    let n: u32 = args.get(2).map_or(32_768, |s| s.parse().unwrap());
    let lb = Lb::parse(args.get(3).map_or("ecmp", |s| s.as_str())).unwrap();
    let op = Op::parse(args.get(4).map_or("all_reduce", |s| s.as_str())).unwrap();
    let t0 = Instant::now();
    let f = aifabric_spec::load(spec).unwrap();
    let t1 = Instant::now();
    let sc = Scenario::healthy(&f);
    let net = Net::new(
        &f,
        &sc,
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        NetParams::default(),
    );
    let gpus = placement::place(&f, n, 8, Placement::Packed, &sc.unusable()).unwrap();
    let routes = Forwarding::new(&net, gpus.iter().copied()).unwrap();
    let t2 = Instant::now();
    let c = Collective {
        op: Some(op),
        algo: Algo::default_for(op),
        groups: vec![gpus],
        bytes: 1e9,
        channels: 1,
        lb,
        seed: 1,
        alpha_s: 5e-6,
        proto: None,
    };
    let r = simulate(&net, &routes, &c).unwrap();
    let t3 = Instant::now();
    println!(
        "build {:?} net+routes {:?} simulate {:?}",
        t1 - t0,
        t2 - t1,
        t3 - t2
    );
    println!("{r:#?}");
}
