//! The partitioned engine (`Config::partitions`): the same bytes at any thread count, the
//! same statistics as one engine for the whole fabric, conservation across the parts, PFC
//! frames between parts, triggers within parts, and what it refuses.

mod common;

use aifabric_packet::{run, Config, FastForward, PacketLb, PacketResult};
use aifabric_workload::traffic::{Pattern, Start, TrafficMatrix};
use common::*;

/// `run` on a pool of `threads` threads.
fn on_threads(
    threads: usize,
    net: &aifabric_dataplane::Net<'_>,
    tm: &TrafficMatrix,
    g: &[aifabric_model::DeviceId],
    cfg: &Config,
) -> PacketResult {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| run(net, tm, g, cfg).unwrap())
}

fn json(r: &PacketResult) -> String {
    serde_json::to_string(r).unwrap()
}

fn htsim(partitions: u32) -> Config {
    Config {
        partitions,
        check_conservation: true,
        ..Config::uec_htsim()
    }
}

/// A permutation on htsim's k = 8 tree, cut into 2 and 3 parts, sprayed and ECMP'd: one
/// thread and two give the same bytes, and the parts conserve every byte between windows.
#[test]
fn parts_give_the_same_bytes_at_any_thread_count() {
    let f = fat_tree(8);
    let net = net(&f);
    let g = gpus(&f);
    let tm = Pattern::Permutation.generate(128, 256 << 10, 7);
    for (parts, lb) in [
        (2, PacketLb::Mixed(128)),
        (3, PacketLb::Ecmp),
        (4, PacketLb::Adaptive),
    ] {
        let cfg = Config { lb, ..htsim(parts) };
        let one = on_threads(1, &net, &tm, &g, &cfg);
        let two = on_threads(2, &net, &tm, &g, &cfg);
        assert_eq!(one.unfinished, 0);
        assert_eq!(json(&one), json(&two), "{parts} parts, {lb:?}");
        // A model setting: shown in the result.
        assert!(json(&one).contains(&format!("\"partitions\":{parts}")));
    }
}

/// The parts' statistics are one engine's: on the 128-node permutation of 2 MiB (htsim's
/// regression case), every packet sent once, and the completion times close to one
/// engine's (within 2%; 0.9% measured at most: a different sample of the same model: the parts draw their own random
/// numbers and order a picosecond's events their own way).
#[test]
fn parts_agree_with_one_engine() {
    let f = fat_tree(8);
    let net = net(&f);
    let g = gpus(&f);
    let tm = Pattern::Permutation.generate(128, 2 << 20, 13);
    let cfg = |parts| Config {
        partitions: parts,
        ..Config::uec_htsim()
    };
    let whole = run(&net, &tm, &g, &cfg(1)).unwrap();
    for parts in [2, 4] {
        let r = on_threads(2, &net, &tm, &g, &cfg(parts));
        assert_eq!(r.counters.data_new, whole.counters.data_new);
        assert_eq!(r.unfinished, 0);
        for (what, a, b) in [
            ("P50", r.fct.p50_s, whole.fct.p50_s),
            ("P99", r.fct.p99_s, whole.fct.p99_s),
            ("makespan", r.makespan_s, whole.makespan_s),
        ] {
            let err = a / b - 1.0;
            eprintln!("{parts} parts: {what} {:+.3}%", err * 100.0);
            assert!(
                err.abs() < 0.02,
                "{parts} parts: {what} {:.2} us against {:.2} us ({:+.2}%)",
                a * 1e6,
                b * 1e6,
                err * 100.0
            );
        }
        assert_ne!(json(&r), json(&whole), "{parts} parts: a sample of its own");
    }
}

/// A ring all-reduce (each step's flow started by a trigger when its sender holds the chunk
/// it forwards, `Pattern::RingAllReduce`): every trigger fires and acts at one host, so the
/// ring runs in parts beside a permutation (whose queues mark ECN at random), with the same
/// bytes at one and two threads and within 3% of one engine (1.7% at most measured; the
/// ring crosses the parts' edges).
#[test]
fn a_ring_of_triggers_runs_in_parts() {
    let f = fat_tree(8);
    let net = net(&f);
    let g = gpus(&f);
    let mut tm = Pattern::RingAllReduce.generate(128, 4 << 20, 1);
    assert!(tm
        .flows
        .iter()
        .any(|f| matches!(f.start, Start::Trigger(_))));
    // Beside it, a permutation of 1 MiB flows: queues and ECN marks on the ring's
    // paths (a lone ring on a non-blocking tree never queues, and parts would time it
    // exactly as one engine does).
    let n = tm.flows.len() as u64;
    for mut fl in Pattern::Permutation.generate(128, 1 << 20, 3).flows {
        fl.id += n;
        tm.flows.push(fl);
    }
    let whole = run(&net, &tm, &g, &Config::uec_htsim()).unwrap();
    for parts in [2, 4] {
        let cfg = htsim(parts);
        let one = on_threads(1, &net, &tm, &g, &cfg);
        let two = on_threads(2, &net, &tm, &g, &cfg);
        assert_eq!(json(&one), json(&two), "{parts} parts");
        assert_eq!((one.unfinished, one.never_started), (0, 0));
        assert_eq!(one.flows, whole.flows);
        assert!(one.partitions.as_ref().unwrap().messages > 0);
        assert!(one.counters.ecn_marked > 0, "no queue: {:?}", one.counters);
        for (what, a, b) in [
            ("P50", one.fct.p50_s, whole.fct.p50_s),
            ("P99", one.fct.p99_s, whole.fct.p99_s),
            ("makespan", one.makespan_s, whole.makespan_s),
        ] {
            let err = a / b - 1.0;
            eprintln!("{parts} parts: ring {what} {:+.3}%", err * 100.0);
            assert!(
                err.abs() < 0.03,
                "{parts} parts: {what} {a} s against {b} s"
            );
        }
    }
}

/// A flow whose trigger never fires (a barrier of two activated once) is reported never
/// started, and the run ends, also when no link joins the parts (traffic within racks:
/// each part stops once its own flows are done, its leftover timers aside).
#[test]
fn a_trigger_that_never_fires_ends_the_run() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    // Hosts 0 and 1 share a rack in the first part, 8 and 9 one in the second.
    let mut tm = matrix(16, &[(0, 1, 100_000), (1, 0, 100_000), (8, 9, 100_000)]);
    tm.flows[0].done_trigger = Some(1);
    tm.flows[1].start = Start::Trigger(1);
    tm.triggers
        .insert(1, aifabric_workload::traffic::TriggerKind::Barrier(2));
    let r = run(&net, &tm, &g, &htsim(2)).unwrap();
    assert_eq!(
        (r.never_started, r.unfinished),
        (1, 0),
        "{:?}",
        r.partitions
    );
    assert_eq!(r.partitions.as_ref().unwrap().lookahead_s, None);
}

/// Lossless incast across the parts: the receiver's PAUSEs reach the senders' part as
/// messages, nothing is dropped, and the bytes are the same at one and two threads.
#[test]
fn pfc_frames_cross_the_parts() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    // Senders in every pod (hosts 4-15), one receiver (host 0, in part 0).
    let flows: Vec<(u32, u32, u64)> = (4..16u32).map(|i| (i, 0, 500_000)).collect();
    let tm = matrix(16, &flows);
    let cfg = Config {
        mtu_bytes: 4150,
        admission: None,
        partitions: 2,
        check_conservation: true,
        ..Config::roce()
    };
    let one = on_threads(1, &net, &tm, &g, &cfg);
    let two = on_threads(2, &net, &tm, &g, &cfg);
    assert_eq!(json(&one), json(&two));
    let pfc = one.pfc.as_ref().expect("PFC is on");
    assert!(pfc.pauses > 0, "{pfc:?}");
    assert_eq!((one.counters.dropped, one.unfinished), (0, 0));
    // The pauses reach the core tier: pod 0's aggregation switches (part 0) pause the
    // ports of the core switches toward them, half of which part 1 owns.
    let paused: Vec<&str> = pfc.tiers.iter().map(|t| t.tier.as_str()).collect();
    assert!(paused.contains(&"ctsw-atsw"), "pauses only at {paused:?}");
    let whole = run(
        &net,
        &tm,
        &g,
        &Config {
            partitions: 1,
            ..cfg.clone()
        },
    )
    .unwrap();
    let err = one.makespan_s / whole.makespan_s - 1.0;
    eprintln!(
        "incast under PFC, 2 parts: makespan {:+.3}%, {} pauses (one engine: {})",
        err * 100.0,
        pfc.pauses,
        whole.pfc.as_ref().map_or(0, |p| p.pauses)
    );
    assert!(err.abs() < 0.01, "makespan {:+.2}%", err * 100.0);
}

/// A DSF zone is never cut: on two regions over BAG (region a: an NSF zone, hosts 0-7, and
/// a DSF zone, 8-11; region c: an NSF zone, 12-19), three parts keep the DSF zone whole,
/// its cells, requests and grants inside one part; every flow completes, the fabric's
/// counts are one engine's (every packet through it once, all of its credit granted and
/// spent), and one thread and two give the same bytes.
#[test]
fn a_dsf_zone_stays_whole_in_one_part() {
    let f = aifabric_spec::build_str(
        "t.yaml",
        aifabric_fixtures::specs::TWO_REGIONS_NSF_DSF_SHARED,
    )
    .unwrap();
    let net = net(&f);
    let g = gpus(&f);
    let tm = matrix(
        20,
        &[
            (8, 0, 200_000),
            (0, 9, 200_000),
            (10, 3, 200_000),
            (11, 19, 200_000),
            (19, 10, 200_000),
            (12, 5, 200_000),
        ],
    );
    let cfg = |partitions| Config {
        cc: aifabric_packet::Cc::LineRate,
        lb: PacketLb::Ecmp,
        rto_ps: 10_000_000_000,
        partitions,
        check_conservation: true,
        ..Config::default()
    };
    let whole = run(&net, &tm, &g, &cfg(1)).unwrap();
    let one = on_threads(1, &net, &tm, &g, &cfg(3));
    let two = on_threads(2, &net, &tm, &g, &cfg(3));
    assert_eq!(json(&one), json(&two));
    assert_eq!(one.unfinished, 0);
    let stats = one.partitions.as_ref().unwrap();
    assert_eq!(stats.parts, 3);
    assert!(stats.messages > 0, "{stats:?}");
    let (d, w) = (one.dsf.as_ref().unwrap(), whole.dsf.as_ref().unwrap());
    assert_eq!((d.packets, d.sent_bytes), (w.packets, w.sent_bytes));
    assert_eq!(d.credits_granted_bytes, d.sent_bytes + d.queued_bytes);
    assert_eq!(d.cells_sent, d.cells_reassembled);
    let tiers =
        |r: &aifabric_packet::DsfResult| r.voqs.iter().map(|v| v.tier.clone()).collect::<Vec<_>>();
    assert_eq!(tiers(d), tiers(w));
}

/// What cannot be cut is refused with the reason and the way out.
#[test]
fn what_cannot_be_cut_is_refused() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    // Host 0's send-done trigger starts host 9's flow: host 0 is in the first pod's part,
    // host 9 in the third pod's.
    let mut tm = matrix(16, &[(0, 5, 100_000), (9, 2, 100_000)]);
    tm.flows[1].start = Start::Trigger(1);
    tm.flows[0].done_trigger = Some(1);
    let refused = |tm: &TrafficMatrix, cfg: &Config| match run(&net, tm, &g, cfg) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{cfg:?} ran"),
    };
    let e = refused(&tm, &htsim(2));
    assert!(
        e.contains("trigger 1 would act across parts 0 and") && e.contains("--partitions 1"),
        "{e}"
    );
    // The same chain from host 0 to its own next flow is local: it runs.
    tm.flows[1].src = 0;
    let r = run(&net, &tm, &g, &htsim(2)).unwrap();
    assert_eq!((r.unfinished, r.never_started), (0, 0));
    let plain = matrix(16, &[(0, 5, 100_000)]);
    let e = refused(
        &plain,
        &Config {
            partitions: 2,
            ..Config::roce()
        },
    );
    assert!(e.contains("admission"), "{e}");
    let e = refused(
        &plain,
        &Config {
            fast_forward: Some(FastForward::default()),
            ..htsim(2)
        },
    );
    assert!(e.contains("fast-forward"), "{e}");
    let e = refused(&plain, &htsim(65));
    assert!(e.contains("at most 64"), "{e}");
}

mod properties {
    use super::*;
    use aifabric_packet::{Cc, Pfc};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        /// Whatever the traffic (sizes, start times, load balancing, PFC or trimming, link
        /// delays) and however many parts: every flow completes, bytes are conserved across
        /// the parts between windows (`check_conservation`), every packet is sent once
        /// where nothing is lost, and one thread and two give the same bytes.
        #[test]
        fn any_cut_conserves_completes_and_ignores_the_thread_count(
            flows in prop::collection::vec((0u32..16, 0u32..16, 1u64..200_000, 0u64..50), 1..24),
            lb in 0usize..3,
            parts in 2u32..5,
            lossless in any::<bool>(),
            latency_ns in prop::sample::select(vec![100u64, 1_000, 5_000]),
            seed in 0u64..1000,
        ) {
            let f = fat_tree(4);
            let net = net(&f);
            let g = gpus(&f);
            let flows: Vec<(u32, u32, u64, u64)> =
                flows.into_iter().filter(|f| f.0 != f.1).collect();
            prop_assume!(!flows.is_empty());
            let mut tm = matrix(
                16,
                &flows.iter().map(|&(s, d, b, _)| (s, d, b)).collect::<Vec<_>>(),
            );
            for (fl, &(.., us)) in tm.flows.iter_mut().zip(&flows) {
                fl.start = Start::AtPs(us * 1_000_000);
            }
            let base = if lossless {
                Config {
                    mtu_bytes: 4150,
                    admission: None,
                    pfc: Some(Pfc::default()),
                    cc: Cc::LineRate,
                    ..Config::roce()
                }
            } else {
                Config::uec_htsim()
            };
            let cfg = Config {
                lb: [PacketLb::Ecmp, PacketLb::Mixed(16), PacketLb::Adaptive][lb],
                link_latency_ps: Some(latency_ns * 1000),
                // A link's delay is its latency (no switch latency on top): the lookahead.
                switch_latency_ps: 0,
                partitions: parts,
                seed,
                check_conservation: true,
                ..base
            };
            let one = on_threads(1, &net, &tm, &g, &cfg);
            let two = on_threads(2, &net, &tm, &g, &cfg);
            prop_assert_eq!(json(&one), json(&two));
            prop_assert_eq!(one.unfinished + one.never_started, 0);
            let packets: u64 = tm.flows.iter().map(|f| f.bytes.div_ceil(4150 - 64)).sum();
            prop_assert_eq!(one.counters.data_new, packets);
            if lossless {
                prop_assert_eq!(one.counters.dropped, 0);
            }
            // As many parts as asked (the tree has 8 rack switches); the lookahead one
            // link's latency unless no link of the traffic joins two parts.
            let stats = one.partitions.as_ref().expect("parts");
            prop_assert_eq!(stats.parts, parts);
            if let Some(l) = stats.lookahead_s {
                prop_assert_eq!((l * 1e12).round() as u64, latency_ns * 1000);
            } else {
                prop_assert_eq!(stats.messages, 0);
            }
            prop_assert_eq!(stats.events_per_part.iter().sum::<u64>(), one.events);
        }
    }
}
