//! Closed forms (nccl-tests bandwidths, alpha-beta bounds, ECMP as balls into bins), with
//! expectations worked by hand.

use aifabric_workload::collective::*;

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

#[test]
fn ring_all_reduce_on_8_ranks() {
    // 8 ranks, 1 GB, 50 GB/s per rank, 5 us per step:
    // 2 x 7 x 5e-6 + 2 x 7/8 x 1e9 / 50e9 = 7e-5 + 0.035 = 0.03507 s.
    let t = alpha_beta_seconds(Op::AllReduce, Algorithm::Ring, 8, 1e9, 5e-6, 50e9).unwrap();
    assert!(close(t, 0.03507, 1e-12), "{t}");
    // algBW = 1e9 / 0.03507 / 1e9 = 28.514 GB/s; busBW = x 1.75 = 49.900 GB/s.
    assert!(close(alg_bw_gbytes_per_s(1e9, t), 28.5144, 1e-4));
    assert!(close(
        bus_bw_gbytes_per_s(Op::AllReduce, 8, 1e9, t),
        49.9002,
        1e-4
    ));
}

#[test]
fn other_collectives_and_algorithms() {
    // Reduce-scatter / all-gather / direct all-to-all on 4 ranks, 400 MB, 100 GB/s, 2 us:
    // 3 x 2e-6 + 3/4 x 4e8 / 1e11 = 6e-6 + 0.003 = 0.003006 s.
    for (op, algo) in [
        (Op::ReduceScatter, Algorithm::Ring),
        (Op::AllGather, Algorithm::Ring),
        (Op::AllToAll, Algorithm::Direct),
    ] {
        let t = alpha_beta_seconds(op, algo, 4, 4e8, 2e-6, 1e11).unwrap();
        assert!(close(t, 0.003006, 1e-12), "{op:?}: {t}");
    }
    // Halving-doubling on 16 ranks: 2 x 4 x 1e-6 + 2 x 15/16 x 1.6e9 / 2e10 = 8e-6 + 0.15.
    let t = alpha_beta_seconds(
        Op::AllReduce,
        Algorithm::HalvingDoubling,
        16,
        1.6e9,
        1e-6,
        2e10,
    )
    .unwrap();
    assert!(close(t, 0.150008, 1e-12), "{t}");
    assert!(
        alpha_beta_seconds(Op::AllReduce, Algorithm::HalvingDoubling, 12, 1.0, 0.0, 1.0).is_err()
    );
    assert!(alpha_beta_seconds(Op::Broadcast, Algorithm::Direct, 4, 1.0, 0.0, 1.0).is_err());
    assert!(alpha_beta_seconds(Op::AllReduce, Algorithm::Ring, 0, 1.0, 0.0, 1.0).is_err());
}

#[test]
fn bus_factors_follow_nccl_tests() {
    assert_eq!(Op::AllReduce.bus_factor(4), 1.5);
    assert_eq!(Op::ReduceScatter.bus_factor(4), 0.75);
    assert_eq!(Op::AllGather.bus_factor(8), 0.875);
    assert_eq!(Op::AllToAll.bus_factor(2), 0.5);
    assert_eq!(Op::Broadcast.bus_factor(64), 1.0);
    assert_eq!(Op::Reduce.bus_factor(64), 1.0);
}

#[test]
fn hierarchical_all_reduce_adds_its_three_stages() {
    // 4 domains of 8 GPUs, 8 GB. Inside: 1 us, 450 GB/s; across: 10 us, 50 GB/s.
    // RS inside: 7 x 1e-6 + 7/8 x 8e9 / 4.5e11 = 7e-6 + 0.0155556 = 0.0155626
    // AR across of 1 GB on 4: 2 x 3 x 1e-5 + 2 x 3/4 x 1e9 / 5e10 = 6e-5 + 0.03 = 0.03006
    // AG inside: as RS. Total 0.0611851.
    let inside = Level {
        alpha_s: 1e-6,
        bytes_per_s: 4.5e11,
    };
    let across = Level {
        alpha_s: 1e-5,
        bytes_per_s: 5e10,
    };
    let t = hierarchical_all_reduce_seconds(4, 8, 8e9, inside, across).unwrap();
    let rs = 7e-6 + 7.0 / 8.0 * 8e9 / 4.5e11;
    assert!(close(t, 2.0 * rs + 0.03006, 1e-12), "{t}");
    assert!(close(t, 0.0611851, 1e-6), "{t}");
}

#[test]
fn ecmp_balls_into_bins_matches_the_published_values() {
    // Balls into bins: expected busiest path for m = n flows.
    for (n, want) in [(8, 2.597), (16, 3.078), (128, 4.379)] {
        let got = ecmp_expected_max_load(n, n);
        assert!((got - want).abs() < 5e-4, "n = {n}: {got} vs {want}");
    }
    // P[max = 1] for n = m = 8 is 8!/8^8.
    let p = ecmp_max_load_probability(8, 8, 1);
    assert!(close(p, 40320.0 / 16_777_216.0, 1e-9), "{p}");
    // About 36.8% of paths idle when m = n (large n): 128 x (127/128)^128 / 128 -> 1/e.
    let idle = ecmp_expected_idle_paths(128, 128) / 128.0;
    assert!((idle - (-1.0f64).exp()).abs() < 2e-3, "{idle}");
    // Every flow on one path when there is one path.
    assert_eq!(ecmp_expected_max_load(5, 1), 5.0);
}
