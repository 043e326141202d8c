//! Priority flow control: no loss with enough headroom, losses counted without it, pauses
//! spreading upstream, and the headroom formula, against closed forms.

mod common;

use aifabric_packet::{pfc_headroom_bytes, run, Cc, Config, PacketLb, Pfc};
use aifabric_workload::traffic::TrafficMatrix;
use common::*;

/// A lossless RoCE-style configuration for the 100 Gb/s test trees, PFC alone (no
/// admission: the pauses are the subject).
fn lossless() -> Config {
    Config {
        mtu_bytes: 4150,
        admission: None,
        ..Config::roce()
    }
}

/// Eight senders of other pods (hosts 4-11) send 500 KB each to host 0 of the k = 4 tree.
fn eight_to_one() -> TrafficMatrix {
    let flows: Vec<(u32, u32, u64)> = (0..8u32).map(|i| (i + 4, 0, 500_000)).collect();
    matrix(16, &flows)
}

/// `H = R x (2 x delay + response) + 2 MTU`, worked by hand: 800 Gb/s is 100 bytes per ns.
#[test]
fn headroom_is_the_closed_form() {
    // 100 m of cable (500 ns each way), 1 us response: 100 B/ns x 2,000 ns + 2 x 4,160 B.
    assert_eq!(
        pfc_headroom_bytes(800_000_000_000, 500_000, 1_000_000, 4160),
        200_000 + 8_320
    );
    // 2 km (10 us each way): 100 B/ns x 21,000 ns + 8,320 B, about 2 MB as the seeds say.
    assert_eq!(
        pfc_headroom_bytes(800_000_000_000, 10_000_000, 1_000_000, 4160),
        2_100_000 + 8_320
    );
    // 100 Gb/s over 1 us links with no response time: 12.5 B/ns x 2,000 ns + 2 MTU.
    assert_eq!(
        pfc_headroom_bytes(100_000_000_000, 1_000_000, 0, 4150),
        25_000 + 8_300
    );
}

/// N -> 1 incast under PFC: nothing is dropped, trimmed or resent; the receiver's link
/// stays busy, so the makespan is the N x size / rate floor plus a few microseconds; and the
/// pauses reach past the congested switch (the ports feeding the aggregation and core
/// tiers are paused too: head-of-line blocking spreads upstream).
#[test]
fn incast_under_pfc_loses_nothing_and_keeps_the_receiver_busy() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let n = 12u64;
    let size = 1_000_000u64;
    // Senders in every pod, one receiver.
    let flows: Vec<(u32, u32, u64)> = (0..n as u32).map(|i| (i + 4, 0, size)).collect();
    let tm = matrix(16, &flows);
    let cfg = Config {
        check_conservation: true,
        ..lossless()
    };
    let r = run(&net, &tm, &g, &cfg).unwrap();
    assert_eq!(r.unfinished, 0);
    let c = &r.counters;
    assert_eq!(
        (c.dropped, c.trimmed, c.data_retransmitted, c.timeouts),
        (0, 0, 0, 0),
        "{c:?}"
    );
    let pfc = r.pfc.as_ref().expect("PFC is on");
    assert_eq!(pfc.headroom_drops, 0);
    assert!(pfc.pauses > 0 && pfc.pauses >= pfc.resumes, "{pfc:?}");
    // What the receiver's link must carry, headers included.
    let packets = size.div_ceil(4150 - 64);
    let wire = n * (size + packets * 64);
    let floor = wire as f64 * 8.0 / 100e9;
    assert!(r.makespan_s >= floor, "{} < {floor}", r.makespan_s);
    assert!(
        r.makespan_s <= floor * 1.01 + 20e-6,
        "PFC keeps the bottleneck busy: {} vs {floor}",
        r.makespan_s
    );
    // Paused: the senders' NICs and at least one switch tier above the rack.
    let paused: Vec<&str> = pfc.tiers.iter().map(|t| t.tier.as_str()).collect();
    assert!(paused.len() >= 2, "pauses only at {paused:?}");
    // No ingress count ever went past XOFF plus its link's headroom.
    let p = cfg.pfc.unwrap();
    let worst_headroom = pfc_headroom_bytes(100_000_000_000, 1_000_000, p.response_ps, 4150) * 2;
    assert!(pfc.peak_ingress_bytes <= p.xoff_bytes + worst_headroom);
}

/// Headroom too small for the link's delay: the data in flight when the PAUSE lands does
/// not fit, and every such packet is counted as a headroom drop and recovered by the
/// retransmission timer; every flow still completes and bytes are conserved.
#[test]
fn too_little_headroom_drops_and_counts() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let tm = eight_to_one();
    let base = Config {
        link_latency_ps: Some(10_000_000),
        rto_ps: 2_000_000_000,
        check_conservation: true,
        ..lossless()
    };
    // Enough: each link's own need, at 10 us per link.
    let ok = run(&net, &tm, &g, &base).unwrap();
    assert_eq!(ok.pfc.as_ref().unwrap().headroom_drops, 0);
    assert_eq!(ok.counters.dropped, 0);
    // One MTU of headroom where 10 us of a 100 Gb/s link is 125 KB.
    let small = Config {
        pfc: Some(Pfc {
            headroom_bytes: Some(4150),
            ..Pfc::default()
        }),
        ..base
    };
    let r = run(&net, &tm, &g, &small).unwrap();
    let pfc = r.pfc.as_ref().unwrap();
    assert!(pfc.headroom_drops > 0, "{pfc:?}");
    // Named: every switch link holds 4,150 B of what a PAUSE needs on a 10 us link.
    let p = small.pfc.unwrap();
    let need = pfc_headroom_bytes(
        100_000_000_000,
        10_000_000 + small.switch_latency_ps,
        p.response_ps,
        small.mtu_bytes,
    );
    assert!(pfc.ports_short_of_headroom > 0, "{pfc:?}");
    assert_eq!(pfc.min_headroom_share, 4150.0 / need as f64);
    assert!(pfc.min_headroom_switch.is_some());
    assert_eq!(ok.pfc.as_ref().unwrap().ports_short_of_headroom, 0);
    assert_eq!(r.counters.dropped, pfc.headroom_drops);
    assert!(r.counters.timeouts > 0);
    assert!(r.counters.data_retransmitted >= pfc.headroom_drops);
    assert_eq!(r.unfinished, 0);
    assert!(r.makespan_s > ok.makespan_s);
}

/// A paused port whose XON is below what its link carries in a PAUSE round trip is named,
/// with the round trip's bytes from the closed form (`rate x (2 x delay + response)`); an
/// XON above it clears the warning. Fixed headroom is never short of the buffer.
#[test]
fn xon_below_the_round_trip_is_reported() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let tm = eight_to_one();
    // 10 us links: a round trip at 100 Gb/s with 1 us response is 12.5 B/ns x 21,000 ns.
    let base = Config {
        link_latency_ps: Some(10_000_000),
        switch_latency_ps: 0,
        ..lossless()
    };
    let r = run(&net, &tm, &g, &base).unwrap();
    let pfc = r.pfc.as_ref().unwrap();
    assert!(pfc.pauses > 0);
    assert!(pfc.paused_ports_xon_below_round_trip > 0, "{pfc:?}");
    assert_eq!(pfc.max_round_trip_bytes, 262_500);
    assert_eq!(
        (pfc.ports_short_of_headroom, pfc.min_headroom_share),
        (0, 1.0)
    );
    let high = Config {
        pfc: Some(Pfc {
            xoff_bytes: 400_000,
            xon_bytes: 300_000,
            ..Pfc::default()
        }),
        ..base
    };
    let r = run(&net, &tm, &g, &high).unwrap();
    let pfc = r.pfc.as_ref().unwrap();
    assert_eq!(pfc.paused_ports_xon_below_round_trip, 0, "{pfc:?}");
    assert_eq!(pfc.max_round_trip_bytes, 0);
}

/// No headroom at all: the packet that would cross XOFF is dropped, and the link is paused
/// all the same (otherwise nothing would ever stop the sender and every later packet past
/// XOFF would be lost too); every flow completes.
#[test]
fn without_headroom_the_link_is_still_paused() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let tm = eight_to_one();
    let cfg = Config {
        pfc: Some(Pfc {
            headroom_bytes: Some(0),
            ..Pfc::default()
        }),
        rto_ps: 200_000_000,
        check_conservation: true,
        ..lossless()
    };
    let r = run(&net, &tm, &g, &cfg).unwrap();
    let pfc = r.pfc.as_ref().unwrap();
    assert!(pfc.headroom_drops > 0, "{pfc:?}");
    assert!(pfc.pauses > 0, "{pfc:?}");
    assert_eq!(r.unfinished, 0);
    assert!(pfc.peak_ingress_bytes <= Pfc::default().xoff_bytes);
}

/// Headroom carved out of each switch's buffer: with an XOFF so high that every port's
/// XOFF alone fills the buffer, no link keeps any headroom, and the result says so and
/// names a switch. An XOFF below one packet is refused (no packet could ever be taken).
#[test]
fn headroom_the_buffer_cannot_give_is_named_and_tiny_xoff_refused() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let tm = eight_to_one();
    let hw = f.hardware(
        f.devices_with_role(aifabric_model::Role::Rtsw)
            .next()
            .unwrap(),
    );
    let cfg = Config {
        pfc: Some(Pfc {
            xoff_bytes: hw.hbm_bytes + hw.sram_bytes,
            xon_bytes: 0,
            buffer_limited: true,
            ..Pfc::default()
        }),
        ..lossless()
    };
    let r = run(&net, &tm, &g, &cfg).unwrap();
    let pfc = r.pfc.as_ref().unwrap();
    assert!(pfc.ports_short_of_headroom > 0, "{pfc:?}");
    assert_eq!(pfc.min_headroom_share, 0.0);
    assert!(
        pfc.min_headroom_switch.as_deref().unwrap().contains("sw"),
        "{pfc:?}"
    );
    let tiny = Config {
        pfc: Some(Pfc {
            xoff_bytes: 1000,
            xon_bytes: 0,
            ..Pfc::default()
        }),
        ..lossless()
    };
    let e = run(&net, &tm, &g, &tiny).unwrap_err().to_string();
    assert!(e.contains("at least one packet"), "{e}");
}

/// Without PFC the same incast on drop-tail queues loses packets: the lossless run's zero
/// is PFC's doing, not the traffic's.
#[test]
fn the_same_incast_without_pfc_drops() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let tm = eight_to_one();
    let cfg = Config {
        pfc: None,
        queue_bytes: 200_000,
        rto_ps: 200_000_000,
        ..lossless()
    };
    let r = run(&net, &tm, &g, &cfg).unwrap();
    assert!(r.counters.dropped > 0, "{:?}", r.counters);
    assert!(r.pfc.is_none());
}

mod property {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        /// A lossless run never drops, whatever the traffic, load balancing, thresholds,
        /// link delays and senders (line rate or DCQCN), as long as the headroom is each link's own need; the ingress
        /// counts match the queued data at every event (`check_conservation`).
        #[test]
        fn a_lossless_run_never_drops(
            flows in prop::collection::vec((0u32..16, 0u32..16, 1u64..300_000), 1..24),
            lb in 0usize..3,
            xoff in 8_300u64..300_000,
            hysteresis in 0u64..50_000,
            latency_ns in prop::sample::select(vec![0u64, 100, 1_000, 5_000]),
            dcqcn in any::<bool>(),
            seed in 0u64..1000,
        ) {
            let f = fat_tree(4);
            let net = net(&f);
            let g = gpus(&f);
            let flows: Vec<(u32, u32, u64)> =
                flows.into_iter().filter(|f| f.0 != f.1).collect();
            prop_assume!(!flows.is_empty());
            let tm = matrix(16, &flows);
            let cfg = Config {
                lb: [PacketLb::Ecmp, PacketLb::Spray(16), PacketLb::Adaptive][lb],
                cc: if dcqcn { Cc::DcqcnAuto } else { Cc::LineRate },
                ecn_bytes: Some((5_000, 100_000)),
                link_latency_ps: Some(latency_ns * 1000),
                pfc: Some(Pfc {
                    xoff_bytes: xoff,
                    xon_bytes: xoff.saturating_sub(hysteresis),
                    ..Pfc::default()
                }),
                seed,
                check_conservation: true,
                ..lossless()
            };
            let r = run(&net, &tm, &g, &cfg).unwrap();
            prop_assert_eq!(r.unfinished, 0);
            prop_assert_eq!(r.counters.dropped, 0);
            prop_assert_eq!(r.counters.data_retransmitted, 0);
            prop_assert_eq!(r.pfc.unwrap().headroom_drops, 0);
        }
    }
}

/// Same seed, same output, with PFC on.
#[test]
fn pfc_runs_are_deterministic() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let flows: Vec<(u32, u32, u64)> = (0..12u32).map(|i| (i + 4, i % 4, 300_000)).collect();
    let tm = matrix(16, &flows);
    let cfg = Config {
        lb: PacketLb::Spray(16),
        ..lossless()
    };
    let a = serde_json::to_string(&run(&net, &tm, &g, &cfg).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&net, &tm, &g, &cfg).unwrap()).unwrap();
    assert_eq!(a, b);
}

/// DCQCN on a lossless fabric: an idle path is never marked, so a lone flow runs at line
/// rate exactly as without congestion control; under an incast the receivers return CNPs,
/// the senders slow down and the switches pause their neighbours less often than with
/// line-rate senders, still without a loss.
#[test]
fn dcqcn_slows_incast_senders_and_pauses_less() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let dcqcn = Config {
        cc: Cc::DcqcnAuto,
        ecn_bytes: Some((5_000, 200_000)),
        ecn_max_probability: 0.01,
        check_conservation: true,
        ..lossless()
    };
    let alone = matrix(16, &[(0, 15, 2_000_000)]);
    let a = run(&net, &alone, &g, &dcqcn).unwrap();
    let b = run(
        &net,
        &alone,
        &g,
        &Config {
            cc: Cc::LineRate,
            ..dcqcn.clone()
        },
    )
    .unwrap();
    assert_eq!(a.counters.cnps, 0);
    assert_eq!(a.fct.max_s, b.fct.max_s);
    let flows: Vec<(u32, u32, u64)> = (0..12u32).map(|i| (i + 4, 0, 1_000_000)).collect();
    let tm = matrix(16, &flows);
    let d = run(&net, &tm, &g, &dcqcn).unwrap();
    let l = run(
        &net,
        &tm,
        &g,
        &Config {
            cc: Cc::LineRate,
            ..dcqcn.clone()
        },
    )
    .unwrap();
    assert!(d.counters.cnps > 0, "{:?}", d.counters);
    assert_eq!(d.counters.dropped + l.counters.dropped, 0);
    let (pd, pl) = (d.pfc.unwrap().pauses, l.pfc.unwrap().pauses);
    assert!(pd < pl, "DCQCN {pd} pauses, line rate {pl}");
    // The receiver's link is the floor either way.
    let floor = 12.0 * 1_000_000.0 * 8.0 / 100e9;
    assert!(d.makespan_s >= floor && l.makespan_s >= floor);
    // htsim's rate steps (50x the additive, 10x the hyper increase) win the rate back
    // sooner after each cut: the incast ends no later, still above the floor, still
    // lossless; the result shows the steps used.
    let h = run(
        &net,
        &tm,
        &g,
        &Config {
            cc: Cc::DcqcnHtsimAuto,
            ..dcqcn.clone()
        },
    )
    .unwrap();
    assert_eq!(h.counters.dropped, 0);
    assert!(
        h.makespan_s >= floor && h.makespan_s <= d.makespan_s,
        "htsim steps {} vs paper {}",
        h.makespan_s,
        d.makespan_s
    );
    match h.config.cc {
        Cc::Dcqcn(p) => assert_eq!(
            (p.rate_ai_bps, p.rate_hai_bps),
            (5_000_000_000, 10_000_000_000)
        ),
        other => panic!("resolved to {other:?}"),
    }
}

/// Receiver-driven admission: one CTS per chunk of every flow; with a window of one chunk
/// per receiver, an incast never has more than one chunk at a time headed for the
/// receiver, so its rack switch holds at most about a chunk and nobody is paused; the
/// receiver's link is still the floor, and waiting for each CTS costs at most a round trip
/// per chunk on top of it.
#[test]
fn admission_clears_chunk_by_chunk_and_tames_incast() {
    use aifabric_packet::Admission;
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let (n, size, chunk) = (12u64, 1_000_000u64, 262_144u64);
    let flows: Vec<(u32, u32, u64)> = (0..n as u32).map(|i| (i + 4, 0, size)).collect();
    let tm = matrix(16, &flows);
    let cfg = Config {
        admission: Some(Admission {
            chunk_bytes: chunk,
            window: 1,
        }),
        check_conservation: true,
        ..lossless()
    };
    let r = run(&net, &tm, &g, &cfg).unwrap();
    assert_eq!(r.unfinished, 0);
    // Chunks: ceil(packets / packets per chunk) per flow.
    let payload = 4150u64 - 64;
    let per = chunk.div_ceil(payload);
    let chunks = size.div_ceil(payload).div_ceil(per);
    assert_eq!(r.counters.cts, n * chunks);
    assert_eq!(r.counters.dropped, 0);
    let pfc = r.pfc.as_ref().unwrap();
    assert_eq!(pfc.pauses, 0, "{pfc:?}");
    let rack = r.queues.iter().find(|q| q.tier == "gpu-rtsw").unwrap();
    assert!(
        rack.peak_bytes <= per * 4150 + 2 * 4150,
        "at most a chunk queued: {rack:?}"
    );
    let wire = n * (size + size.div_ceil(payload) * 64);
    let floor = wire as f64 * 8.0 / 100e9;
    // A round trip on this tree: 6 hops each way at about 1 us of switch latency plus
    // serialization; 20 us is a generous bound per chunk.
    assert!(r.makespan_s >= floor);
    assert!(
        r.makespan_s <= floor + (n * chunks) as f64 * 20e-6,
        "{} vs {floor}",
        r.makespan_s
    );
}
