//! The hybrid engine (fast-forwarding steady states) against the full packet engine on the
//! same requests, a closed form where the state is exactly steady, and its own invariants.

mod common;

use aifabric_packet::{run, Cc, Config, FastForward, PacketLb, PacketResult};
use aifabric_workload::traffic::{Pattern, Start, TrafficMatrix};
use common::*;

fn hybrid(cfg: &Config) -> Config {
    Config {
        fast_forward: Some(FastForward::default()),
        ..cfg.clone()
    }
}

/// Hybrid over packet, minus 1, for the makespan and the P50 and P99 completion times.
fn errors(p: &PacketResult, h: &PacketResult) -> [f64; 3] {
    [
        h.makespan_s / p.makespan_s - 1.0,
        h.fct.p50_s / p.fct.p50_s - 1.0,
        h.fct.p99_s / p.fct.p99_s - 1.0,
    ]
}

/// The bound: within 5% of the full engine on the makespan, P50 and P99.
const AGREEMENT: f64 = 0.05;

/// A lone line-rate flow is exactly steady: fast-forwarded over most of its life, it still
/// ends when the closed form says (the bytes on the wire at line rate, store and forward
/// at each hop, the ACK back), to within a packet's serialization.
#[test]
fn a_lone_flow_skips_most_of_its_life_and_keeps_the_closed_form() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let bytes = 64u64 << 20;
    let tm = matrix(16, &[(0, 15, bytes)]);
    let cfg = Config {
        cc: Cc::LineRate,
        lb: PacketLb::Ecmp,
        ..Config::uec_htsim()
    };
    let r = run(&net, &tm, &g, &hybrid(&cfg)).unwrap();
    let h = r.hybrid.as_ref().expect("hybrid stats");
    let packets = bytes.div_ceil(4086);
    assert!(h.skips >= 1, "{h:?}");
    assert!(h.skipped_packets * 2 > packets, "{h:?}");
    assert_eq!(h.skipped_packets + h.simulated_packets, packets, "{h:?}");
    // 80 ps per byte at 100 Gb/s, 6 hops of 1 us, an MTU per store-and-forward hop.
    let wire = bytes + packets * 64;
    let ps = wire * 80 + 5 * 4150 * 80 + 6 * 1_000_000 + 6 * (64 * 80 + 1_000_000);
    let want = ps as f64 * 1e-12;
    // The rate is read from whole packets per window: a few packets of error over the
    // steady windows, times the time skipped.
    assert!(
        (r.fct.max_s / want - 1.0).abs() <= 1e-3,
        "{} vs {want}",
        r.fct.max_s
    );
}

fn k8() -> aifabric_model::Fabric {
    fat_tree(8)
}

/// Sprayed and single-path permutations, an incast, a lossless incast under PFC: the
/// hybrid within 5% of the full engine, and skipping where flows are long.
#[test]
fn the_hybrid_agrees_with_the_packet_engine() {
    let f = k8();
    let net = net(&f);
    let g = gpus(&f);
    let perm = Pattern::Permutation.generate(128, 16 << 20, 13);
    let incast = Pattern::Incast(8).generate(128, 4 << 20, 13);
    let uec = Config::uec_htsim();
    let lossless = Config {
        admission: None,
        ..Config::roce()
    };
    let cases: [(&str, &TrafficMatrix, Config, bool); 4] = [
        ("permutation, mixed:128", &perm, uec.clone(), true),
        (
            "permutation, ecmp",
            &perm,
            Config {
                lb: PacketLb::Ecmp,
                ..uec.clone()
            },
            false,
        ),
        ("incast 8:1", &incast, uec.clone(), false),
        ("incast 8:1, PFC", &incast, lossless, false),
    ];
    for (name, tm, cfg, must_skip) in cases {
        let p = run(&net, tm, &g, &cfg).unwrap();
        let h = run(&net, tm, &g, &hybrid(&cfg)).unwrap();
        let e = errors(&p, &h);
        assert!(
            e.iter().all(|x| x.abs() <= AGREEMENT),
            "{name}: makespan, p50, p99 off by {e:?}"
        );
        let stats = h.hybrid.as_ref().unwrap();
        assert_eq!(h.unfinished + p.unfinished, 0, "{name}");
        assert_eq!(
            stats.skipped_packets + stats.simulated_packets,
            p.counters.data_new,
            "{name}: every packet is simulated or skipped, once"
        );
        if must_skip {
            assert!(stats.skipped_packets > 0, "{name}: {stats:?}");
        }
    }
}

/// Across a DSF zone (VOQs, credits, the cell fabric), the hybrid within 5% of the full
/// engine (measured -1.0% on all three), skipping; it crosses the fabric in whole packets
/// (one cell each, across a hop when its cells would be) where the packet engine cuts
/// 256-byte cells: a fifth of the events. Each packet across a hop at once, its bytes on
/// one link, these window-limited flows took 3.5% longer (a longer round trip).
#[test]
fn across_a_dsf_zone_the_hybrid_agrees_and_sends_whole_packets_as_cells() {
    // 8 interface nodes of 4 GPUs, 4 fabric nodes, 4 links each way: 16 GPUs on the even
    // nodes send to the odd ones' (every flow crosses the fabric).
    let f = dsf_l1(8, 4, 4, 4);
    let net = net(&f);
    let g = gpus(&f);
    let flows: Vec<(u32, u32, u64)> = (0..16)
        .map(|k| {
            let (node, gpu) = (k / 4 * 2, k % 4);
            (node * 4 + gpu, (node + 1) * 4 + (gpu + 1) % 4, 16 << 20)
        })
        .collect();
    let tm = matrix(32, &flows);
    let cfg = Config::uec_htsim();
    let p = run(&net, &tm, &g, &cfg).unwrap();
    let h = run(&net, &tm, &g, &hybrid(&cfg)).unwrap();
    let e = errors(&p, &h);
    assert!(e.iter().all(|x| x.abs() <= AGREEMENT), "{e:?}");
    assert_eq!(h.unfinished + p.unfinished, 0);
    let stats = h.hybrid.as_ref().unwrap();
    assert!(stats.skipped_packets > 0, "{stats:?}");
    let (pd, hd) = (p.dsf.as_ref().unwrap(), h.dsf.as_ref().unwrap());
    assert_eq!(hd.cells_sent, hd.packets, "one cell a packet");
    assert_eq!(hd.cells_reassembled, hd.cells_sent);
    // Data packets of 4,150 bytes in 17 cells, ACKs in one.
    assert!(
        pd.cells_sent > 8 * pd.packets,
        "{} cells, {} packets",
        pd.cells_sent,
        pd.packets
    );
    assert!(
        h.events * 3 < p.events,
        "{} against {} events",
        h.events,
        p.events
    );
}

/// A flow that starts at a time starts then on the real clock, however much was skipped
/// before it; and a skip never jumps over it.
#[test]
fn timed_starts_keep_their_time_across_skips() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    // Pod 0 to pod 3 and pod 1 to pod 2: no link in common, either way.
    let mut tm = matrix(16, &[(0, 15, 64 << 20), (4, 8, 1 << 20)]);
    let later_ps = 3_000_000_000; // 3 ms: about half the long flow's life
    tm.flows[1].start = Start::AtPs(later_ps);
    let cfg = Config {
        cc: Cc::LineRate,
        lb: PacketLb::Ecmp,
        ..Config::uec_htsim()
    };
    let p = run(&net, &tm, &g, &cfg).unwrap();
    let h = run(&net, &tm, &g, &hybrid(&cfg)).unwrap();
    let stats = h.hybrid.as_ref().unwrap();
    assert!(stats.skips >= 1 && stats.skipped_s > 1e-3, "{stats:?}");
    let start = |r: &PacketResult| {
        r.slowest
            .iter()
            .find(|s| s.id == 2)
            .map(|s| (s.start_s, s.fct_s))
            .unwrap()
    };
    let (ps, pf) = start(&p);
    let (hs, hf) = start(&h);
    assert_eq!(ps, later_ps as f64 * 1e-12);
    assert_eq!(hs, ps, "the late flow starts at its time");
    // Disjoint paths: the short flow runs alone either way, to the picosecond.
    assert_eq!(hf, pf);
    assert!((h.makespan_s / p.makespan_s - 1.0).abs() < 1e-3);
}

/// Bytes put on the wire are delivered, trimmed, dropped or in flight at every event, skips
/// included (the engine's scan after each event panics otherwise).
#[test]
fn skips_conserve_bytes() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let tm = Pattern::Permutation.generate(16, 16 << 20, 5);
    let cfg = Config {
        check_conservation: true,
        ..hybrid(&Config::uec_htsim())
    };
    let r = run(&net, &tm, &g, &cfg).unwrap();
    assert!(r.hybrid.unwrap().skips >= 1);
    assert_eq!(r.unfinished, 0);
}

/// Same request and seed, same result; without a skip, the packet engine's result exactly.
#[test]
fn the_hybrid_is_deterministic_and_is_the_packet_engine_when_nothing_is_steady() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let tm = Pattern::Permutation.generate(16, 16 << 20, 5);
    let cfg = hybrid(&Config::uec_htsim());
    let a = serde_json::to_string(&run(&net, &tm, &g, &cfg).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&net, &tm, &g, &cfg).unwrap()).unwrap();
    assert_eq!(a, b);
    // Short flows: over before any steady stretch, so nothing is skipped and every figure
    // is the full engine's.
    let short = Pattern::Permutation.generate(16, 256 << 10, 5);
    let p = run(&net, &short, &g, &Config::uec_htsim()).unwrap();
    let h = run(&net, &short, &g, &cfg).unwrap();
    let stats = h.hybrid.as_ref().unwrap();
    assert_eq!(stats.skips, 0);
    assert!(stats.not_skipped.is_some());
    assert_eq!(h.fct, p.fct);
    assert_eq!(h.counters, p.counters);
}

#[test]
fn admission_is_refused_with_the_way_out() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let tm = matrix(16, &[(0, 15, 1 << 20)]);
    let e = run(&net, &tm, &g, &hybrid(&Config::roce()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("admission") && e.contains("--engine packet"),
        "{e}"
    );
}
