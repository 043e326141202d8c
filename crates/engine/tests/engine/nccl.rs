//! NCCL's protocols on the fabric: the tuner's choice is the minimum of its candidates and
//! equals the time simulated; bus bandwidth never falls as the size grows for a fixed
//! algorithm and protocol; closed forms of the protocol terms on a non-blocking fabric.

use aifabric_dataplane::{Forwarding, Lb, Net, NetParams};
use aifabric_engine::sim::{simulate, Collective};
use aifabric_engine::tune::Tuner;
use aifabric_model::{DeviceId, Fabric, Scenario};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_workload::nccl::{self, Scale};
use aifabric_workload::{placement, Algo, Op, Placement, Proto};
use proptest::prelude::*;

fn fat_tree() -> Fabric {
    aifabric_spec::build_str("ft.yaml", &aifabric_fixtures::fat_tree(8)).unwrap()
}

fn setup(f: &Fabric, gpus: u32, scale_up: u32) -> (Net<'_>, Vec<DeviceId>) {
    let s = Scenario::healthy(f);
    let p = NetParams {
        scale_up_gpus: scale_up,
        ..NetParams::default()
    };
    let net = Net::new(f, &s, AsnPlan::Rfc7938, BgpConfig::default(), p);
    let placed = placement::place(f, gpus, scale_up, Placement::Packed, &s.unusable()).unwrap();
    (net, placed)
}

fn col(op: Op, algo: Algo, proto: Proto, g: &[DeviceId], bytes: f64) -> Collective {
    Collective {
        op: Some(op),
        algo,
        groups: vec![g.to_vec()],
        bytes,
        channels: 0,
        lb: Lb::Spray(None),
        seed: 1,
        alpha_s: 0.0,
        proto: Some(proto),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// `auto` picks the candidate with the lowest prediction, and that prediction is the
    /// time simulated with it forced.
    #[test]
    fn chosen_time_is_the_minimum_over_candidates(log2 in 6u32..34, op in 0usize..3) {
        let f = fat_tree();
        let (n, g) = setup(&f, 32, 4);
        let routes = Forwarding::new(&n, g.iter().copied()).unwrap();
        let op = [Op::AllReduce, Op::AllGather, Op::ReduceScatter][op];
        let bytes = (1u64 << log2) as f64;
        let auto = Tuner::default()
            .simulate(&n, &routes, &col(op, Algo::Auto, Proto::Auto, &g, bytes))
            .unwrap();
        prop_assert!(!auto.tuned.is_empty());
        let min = auto.tuned.iter().map(|c| c.time_s).fold(f64::INFINITY, f64::min);
        prop_assert!((auto.time_s - min).abs() <= 1e-9 * min, "{} vs {min}", auto.time_s);
        for c in &auto.tuned {
            let forced =
                simulate(&n, &routes, &col(op, c.algo, c.proto.unwrap(), &g, bytes)).unwrap();
            prop_assert!(
                (forced.time_s - c.time_s).abs() <= 1e-9 * c.time_s,
                "{:?}/{:?}: forced {} vs predicted {}", c.algo, c.proto, forced.time_s, c.time_s
            );
            prop_assert_eq!((forced.algo, forced.proto), (c.algo, c.proto));
        }
    }

    /// Bus bandwidth is non-decreasing in the size for a fixed algorithm and protocol
    /// (latency terms are fixed, the bandwidth term linear; NCCL's tree correction and ring
    /// plateau factors excepted, which are NCCL's own non-monotone refinements).
    #[test]
    fn bus_bandwidth_rises_with_size(log2 in 6u32..33, proto in 0usize..3) {
        let f = fat_tree();
        let (n, g) = setup(&f, 32, 4);
        let routes = Forwarding::new(&n, g.iter().copied()).unwrap();
        let proto = Proto::ALL[proto];
        let at = |b: f64| {
            simulate(&n, &routes, &col(Op::AllGather, Algo::Ring, proto, &g, b))
                .unwrap()
                .bus_bw_gbytes_per_s
        };
        let b = (1u64 << log2) as f64;
        prop_assert!(at(2.0 * b) >= at(b) * (1.0 - 1e-12));
    }
}

#[test]
fn ring_protocol_terms_on_a_non_blocking_fabric() {
    // 32 GPUs in 8 domains of 4 of a k = 8 fat tree (full bisection), sprayed: the ring's
    // bandwidth term is the alpha-beta one at the NIC rate; LL halves it; the latency is
    // NCCL's (plus the path latency, under 2 us per step here).
    let f = fat_tree();
    let (n, g) = setup(&f, 32, 4);
    let routes = Forwarding::new(&n, g.iter().copied()).unwrap();
    let bytes = 1e6;
    let simple = simulate(
        &n,
        &routes,
        &col(Op::AllGather, Algo::Ring, Proto::Simple, &g, bytes),
    )
    .unwrap();
    let ll = simulate(
        &n,
        &routes,
        &col(Op::AllGather, Algo::Ring, Proto::Ll, &g, bytes),
    )
    .unwrap();
    let s = Scale {
        ranks: 32,
        nodes: 8,
        channels: simple.channels,
    };
    let lat = |p| nccl::latency_us(Op::AllGather, Algo::Ring, p, s).unwrap() * 1e-6;
    let bw_simple = simple.time_s - simple.latency_s;
    let bw_ll = ll.time_s - ll.latency_s;
    // LL: half the payload per byte on the wire, capped at llMaxBws (Intel host, more
    // than 2 nodes: 20.4 GB/s of bus bandwidth, (n - 1) / n of the size for all-gather).
    let cap_s = bytes * 31.0 / 32.0 / 20.4e9;
    let want = (2.0 * bw_simple).max(cap_s);
    assert!((bw_ll - want).abs() <= 1e-9 * want, "{bw_ll} vs {want}");
    // Latency: NCCL's plus the path chain, which is the same for both protocols.
    let path = simple.latency_s - lat(Proto::Simple);
    assert!(path > 0.0 && path < 31.0 * 2e-6, "{path}");
    assert!(((ll.latency_s - lat(Proto::Ll)) - path).abs() < 1e-12);
}

#[test]
fn nvls_only_inside_one_domain_and_pat_only_one_gpu_per_domain() {
    let f = fat_tree();
    let (n, g) = setup(&f, 32, 4);
    let routes = Forwarding::new(&n, g.iter().copied()).unwrap();
    // Across domains NVLS is refused with a reason.
    let e = simulate(
        &n,
        &routes,
        &col(Op::AllReduce, Algo::Nvls, Proto::Simple, &g, 1e6),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("nvls"), "{e}");
    // Inside one domain of 8: the closed form, and auto picks NVLS at 1 GB (with 4 GPUs
    // the ring's 2 (n - 1) / n = 1.5 S beats NVLS's 1.25 S at 80% efficiency).
    let llama = aifabric_spec::load("llama3-24k").unwrap();
    let (n8, g8) = setup(&llama, 8, 8);
    let r8 = Forwarding::new(&n8, g8.iter().copied()).unwrap();
    let one = &g8[..8];
    let r = simulate(
        &n8,
        &r8,
        &col(Op::AllReduce, Algo::Auto, Proto::Auto, one, 1e9),
    )
    .unwrap();
    assert_eq!((r.algo, r.proto), (Algo::Nvls, Some(Proto::Simple)));
    let want = nccl::nvls_bandwidth_s(Op::AllReduce, 8, 1e9, 450e9) + 25e-6 + 1e-6;
    assert!((r.time_s - want).abs() < 1e-12, "{} vs {want}", r.time_s);
    // PAT: with one GPU per domain only (scale-up 1), for all-gather.
    let (n1, g1) = setup(&f, 32, 1);
    let r1 = Forwarding::new(&n1, g1.iter().copied()).unwrap();
    let pat = simulate(
        &n1,
        &r1,
        &col(Op::AllGather, Algo::Pat, Proto::Simple, &g1, 1e6),
    )
    .unwrap();
    assert_eq!(pat.algo, Algo::Pat);
    let e = simulate(
        &n,
        &routes,
        &col(Op::AllGather, Algo::Pat, Proto::Simple, &g, 1e6),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("one GPU per domain"), "{e}");
}
