//! The packet engine against closed forms and invariants that do not come from its code.

mod common;

use aifabric_packet::{run, Cc, Config, PacketLb};
use common::*;

const GBPS100_PS_PER_BYTE: u64 = 80;

/// One flow on an idle path: the last byte arrives after the bytes on the wire at line rate,
/// plus the propagation of every hop and the serialization of the first packet at every hop
/// after the first (store and forward); its ACK returns over the same hops. Less the longest
/// base latency, what is left is the bytes on the wire at line rate.
#[test]
fn one_flow_on_an_idle_path_takes_the_closed_form_exactly() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    // Host 0 (pod 0) to host 15 (pod 3): 6 links.
    for bytes in [1u64, 4086, 4087, 100_000, 2_097_152, 4086 * 300] {
        let tm = matrix(16, &[(0, 15, bytes)]);
        // One path (ECMP): spraying would let a short last packet overtake on another path.
        let cfg = Config {
            cc: Cc::LineRate,
            lb: PacketLb::Ecmp,
            ..Config::uec_htsim()
        };
        let r = run(&net, &tm, &g, &cfg).unwrap();
        let (mss, hdr, mtu) = (4086u64, 64u64, 4150u64);
        let packets = bytes.div_ceil(mss);
        let wire = bytes + packets * hdr;
        let first = if packets == 1 { wire } else { mtu };
        let d = 1_000_000u64;
        let hops = 6u64;
        let data = wire * GBPS100_PS_PER_BYTE + (hops - 1) * first * GBPS100_PS_PER_BYTE + hops * d;
        let ack = hops * (hdr * GBPS100_PS_PER_BYTE + d);
        let want = (data + ack) as f64 * 1e-12;
        assert_eq!(r.fct.max_s, want, "{bytes} B: {} vs {want}", r.fct.max_s);
        assert_eq!(r.counters.trimmed + r.counters.dropped, 0);
        assert_eq!(r.counters.data_new, packets);
        // What a phase's packet term takes away (the collective's timer): all but the
        // bytes on the wire at line rate, when the packets are whole MTUs.
        if packets > 1 && bytes % mss == 0 {
            let left_ps = ((r.makespan_s - r.max_base_latency_s) * 1e12).round() as u64;
            assert_eq!(left_ps, wire * GBPS100_PS_PER_BYTE, "{bytes} B");
        }
    }
}

/// A step triggered by another: with `send_done_trigger` (`done_trigger`) it starts when
/// the first flow's sender holds its last ACK; with `recv_done_trigger` (`recv_trigger`, a
/// collective's next step) when the first flow's last byte is in. The two makespans differ
/// by the ACK's way back (6 hops of a 64 B header and 1 us each) less the ACK's
/// serialization at the NIC the next flow shares, and completion times stay the sender's.
#[test]
fn a_triggered_step_starts_at_the_ack_or_at_delivery() {
    use aifabric_workload::traffic::Start;
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let mut send = matrix(16, &[(0, 15, 100_000), (15, 0, 100_000)]);
    send.flows[0].done_trigger = Some(1);
    send.flows[1].start = Start::Trigger(1);
    let mut recv = send.clone();
    recv.flows[0].done_trigger = None;
    recv.flows[0].recv_trigger = Some(1);
    let cfg = Config {
        cc: Cc::LineRate,
        lb: PacketLb::Ecmp,
        ..Config::uec_htsim()
    };
    let (a, d) = (
        run(&net, &send, &g, &cfg).unwrap(),
        run(&net, &recv, &g, &cfg).unwrap(),
    );
    // With delivery, the second flow's first packet waits behind the first's last ACK on
    // host 15's NIC (one 64 B serialization): the gap is the ACK's way back less that.
    let back = 6 * (64 * GBPS100_PS_PER_BYTE + 1_000_000) - 64 * GBPS100_PS_PER_BYTE;
    let gap = ((a.makespan_s - d.makespan_s) * 1e12).round() as u64;
    assert_eq!(gap, back, "{} vs {}", a.makespan_s, d.makespan_s);
    // Completion times stay the sender's: the first flow's is the same; the second's is
    // longer by the wait behind that ACK.
    assert_eq!(a.fct.min_s, d.fct.min_s);
    let wait = ((d.fct.max_s - a.fct.max_s) * 1e12).round() as u64;
    assert_eq!(wait, 64 * GBPS100_PS_PER_BYTE);
    // An empty first flow delivers nothing: its triggers fire when it completes.
    for tm in [&mut send, &mut recv] {
        tm.flows[0].bytes = 0;
        let r = run(&net, tm, &g, &cfg).unwrap();
        assert_eq!((r.unfinished, r.never_started), (0, 0), "{r:?}");
    }
}

/// A path whose round trip is longer than the configured retransmission timeout (100 us
/// links: 1.2 ms there and back against htsim's 100.656 us): each flow's timer is at least
/// twice its path's base round trip, so an idle path sends every packet once, with no
/// timeout, and the flow takes the closed form of the idle path.
#[test]
fn a_timeout_never_fires_before_the_round_trip() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let bytes = 2_000_000u64;
    let tm = matrix(16, &[(0, 15, bytes)]);
    let cfg = Config {
        cc: Cc::LineRate,
        lb: PacketLb::Ecmp,
        link_latency_ps: Some(100_000_000),
        ..Config::uec_htsim()
    };
    let r = run(&net, &tm, &g, &cfg).unwrap();
    assert_eq!(
        (r.counters.timeouts, r.counters.data_retransmitted),
        (0, 0),
        "{:?}",
        r.counters
    );
    let (mss, hdr, mtu, hops, d) = (4086u64, 64u64, 4150u64, 6u64, 100_000_000u64);
    let wire = bytes + bytes.div_ceil(mss) * hdr;
    let data = wire * GBPS100_PS_PER_BYTE + (hops - 1) * mtu * GBPS100_PS_PER_BYTE + hops * d;
    let ack = hops * (hdr * GBPS100_PS_PER_BYTE + d);
    assert_eq!(r.fct.max_s, (data + ack) as f64 * 1e-12);
    // The timer: twice the base round trip, each hop twice its delay plus an MTU and a
    // header serialized.
    let base = hops * (2 * d + (mtu + hdr) * GBPS100_PS_PER_BYTE);
    assert_eq!(r.max_rto_s, (2 * base) as f64 * 1e-12);
}

/// Progress: reported every 2^20 events with flows done, packets acknowledged and
/// simulated time never going back, and once at the end with every flow and packet done;
/// the run's result is the same as without a callback. One engine, and two parts.
#[test]
fn progress_is_monotone_and_changes_nothing() {
    for partitions in [1, 2] {
        progress_of(Config {
            partitions,
            ..Config::uec_htsim()
        });
    }
}

fn progress_of(cfg: Config) {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let flows: Vec<(u32, u32, u64)> = (0..16u32).map(|i| (i, (i + 5) % 16, 40_000_000)).collect();
    let tm = matrix(16, &flows);
    let mut seen: Vec<aifabric_packet::Progress> = Vec::new();
    let with =
        aifabric_packet::run_with_progress(&net, &tm, &g, &cfg, &mut |p| seen.push(*p)).unwrap();
    let without = run(&net, &tm, &g, &cfg).unwrap();
    assert_eq!(
        serde_json::to_string(&with).unwrap(),
        serde_json::to_string(&without).unwrap()
    );
    assert!(
        seen.len() >= 2,
        "{} reports for {} events",
        seen.len(),
        with.events
    );
    for w in seen.windows(2) {
        assert!(w[0].flows_done <= w[1].flows_done && w[0].now_ps <= w[1].now_ps);
        assert!(w[0].events < w[1].events);
        assert!(w[0].packets_done <= w[1].packets_done);
    }
    // Packets go steadily where flows all end together: halfway through the reports,
    // a good part of the packets and no flow are done.
    let mid = seen[seen.len() / 2];
    assert!(
        mid.packets_done * 4 > mid.packets && mid.flows_done == 0,
        "{mid:?}"
    );
    let last = seen.last().unwrap();
    // 40 MB in packets of 4,150 - 64 B of payload.
    let packets = 16 * 40_000_000u64.div_ceil(4150 - 64);
    assert_eq!(
        (last.flows_done, last.flows, last.events),
        (16, 16, with.events)
    );
    assert_eq!((last.packets_done, last.packets), (packets, packets));
}

/// N -> 1 incast: the receiver's link carries N x size, so no flow can finish sooner than
/// N x size / rate; nothing is lost silently: every trimmed packet is NACKed and resent, and
/// every flow completes.
#[test]
fn incast_takes_at_least_the_receivers_link_time_and_recovers_every_trim() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    for cc in [Cc::LineRate, Config::uec_htsim().cc] {
        for trim in [true, false] {
            let n = 8u64;
            let size = 1_000_000u64;
            let flows: Vec<(u32, u32, u64)> = (0..n as u32).map(|i| (i + 4, 0, size)).collect();
            let tm = matrix(16, &flows);
            let cfg = Config {
                cc,
                trim,
                queue_bytes: 50_000,
                ..Config::uec_htsim()
            };
            let r = run(&net, &tm, &g, &cfg).unwrap();
            assert_eq!(r.unfinished, 0, "{cc:?} trim {trim}");
            let floor = (n * size) as f64 * 8.0 / 100e9;
            assert!(r.makespan_s >= floor, "{} < {floor}", r.makespan_s);
            let c = &r.counters;
            if trim {
                assert!(
                    c.trimmed > 0,
                    "a 50 KB queue under 8:1 must overflow: {c:?}"
                );
                assert_eq!(c.nacks, c.trimmed, "every trimmed header is NACKed: {c:?}");
                // ... and resent at once: no timer is needed.
                assert_eq!(c.data_retransmitted, c.trimmed, "{c:?}");
                assert_eq!(c.timeouts, 0, "{c:?}");
            } else {
                assert!(c.dropped > 0 && c.timeouts > 0, "{c:?}");
                assert!(c.data_retransmitted >= c.dropped, "{c:?}");
            }
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_output_byte_for_byte() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let flows: Vec<(u32, u32, u64)> = (0..16u32).map(|i| (i, (i * 7 + 3) % 16, 300_000)).collect();
    let tm = matrix(16, &flows);
    let cfg = Config {
        queue_bytes: 20_000,
        ..Config::uec_htsim()
    };
    let a = serde_json::to_string(&run(&net, &tm, &g, &cfg).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&net, &tm, &g, &cfg).unwrap()).unwrap();
    assert_eq!(a, b);
    let other = Config { seed: 14, ..cfg };
    let c = serde_json::to_string(&run(&net, &tm, &g, &other).unwrap()).unwrap();
    assert_ne!(a, c, "the seed drives entropies and trim victims");
}

/// A draw seed resamples the random draws: the same one twice gives the same bytes, two
/// give two samples (trim victims differ under ECMP's collisions), and both differ from the
/// seed's own draws. The paths stay the seed's: `setup`'s test holds the hash salts.
#[test]
fn a_draw_seed_resamples_the_draws_on_the_seeds_paths() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let flows: Vec<(u32, u32, u64)> = (0..16u32).map(|i| (i, (i * 7 + 3) % 16, 300_000)).collect();
    let tm = matrix(16, &flows);
    let cfg = Config {
        queue_bytes: 20_000,
        lb: PacketLb::Ecmp,
        ..Config::uec_htsim()
    };
    let with = |d: Option<u64>| {
        let c = Config {
            draw_seed: d,
            ..cfg.clone()
        };
        run(&net, &tm, &g, &c).unwrap()
    };
    let (one, again, two) = (with(Some(1)), with(Some(1)), with(Some(2)));
    assert_eq!(
        serde_json::to_string(&one).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
    assert!(
        one.counters.trimmed > 0,
        "no draws to resample: {:?}",
        one.counters
    );
    assert_ne!(
        one.fct_sorted_s, two.fct_sorted_s,
        "the draws moved nothing"
    );
    assert_ne!(
        serde_json::to_string(&with(None)).unwrap(),
        serde_json::to_string(&one).unwrap()
    );
    assert_eq!(one.config.draw_seed, Some(1));
}

/// A permutation of 16 hosts on a k = 4 fat tree (non-blocking), 2 MiB each: nothing beats
/// the bytes on the wire at line rate (the fluid's floor); with one path per flow (ECMP),
/// the slowest flow is set by the busiest link: it cannot finish before that link has sent
/// its bytes, and finishes soon after.
#[test]
fn permutation_respects_the_line_rate_floor_and_ecmp_the_busiest_link() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let size = 2_097_152u64;
    let flows: Vec<(u32, u32, u64)> = (0..16u32).map(|i| (i, (i * 5 + 7) % 16, size)).collect();
    assert!(flows.iter().all(|f| f.0 != f.1));
    let tm = matrix(16, &flows);
    let wire = size + size.div_ceil(4086) * 64;
    let floor = wire as f64 * 8.0 / 100e9;
    for lb in [PacketLb::Spray(128), PacketLb::Ecmp, PacketLb::Adaptive] {
        let cfg = Config {
            lb,
            ..Config::uec_htsim()
        };
        let r = run(&net, &tm, &g, &cfg).unwrap();
        assert_eq!(r.unfinished, 0);
        assert!(r.fct.min_s >= floor, "{lb:?}: {} < {floor}", r.fct.min_s);
        if lb == PacketLb::Ecmp {
            let busiest = r.busiest[0].bytes as f64 * 8.0 / 100e9;
            assert!(r.fct.max_s >= busiest, "{} < {busiest}", r.fct.max_s);
            assert!(
                r.fct.max_s <= busiest * 1.25 + 30e-6,
                "ECMP's slowest flow {} s, busiest link {busiest} s: {:?}",
                r.fct.max_s,
                r.busiest[0]
            );
        }
    }
}

/// Sprayed permutations of large flows on non-blocking fat trees (k = 4 and 8, random
/// permutations without fixed points) finish within 5% of the fluid's answer, which for a
/// permutation on a non-blocking tree is the closed form: every flow alone on its NIC at
/// line rate, its bytes on the wire (payload and a 64 B header per 4,086 B) / 100 Gb/s, plus
/// its path's propagation (at most 6 links of 1 us) and the last ACK's way back. REPS with
/// per-packet feedback (`spray`) must steer the load off the uplinks the hash overloads;
/// htsim's one value per ACK (`mixed`) recovers only part of it (about 1.07 median, 1.13
/// slowest, at 64 MiB on k = 8).
#[test]
fn sprayed_permutation_of_large_flows_is_within_5_percent_of_the_fluid() {
    let size = 64u64 << 20;
    let wire = size + size.div_ceil(4086) * 64;
    // The fluid's answer with the longest path's latency both ways: an upper bound on
    // every flow's fluid completion.
    let fluid = wire as f64 * 8.0 / 100e9 + 12e-6;
    for k in [4u32, 8] {
        let f = fat_tree(k);
        let net = net(&f);
        let g = gpus(&f);
        let n = k * k * k / 4;
        for seed in [1u64, 2] {
            // A random derangement (Sattolo's algorithm: one cycle through every host).
            let mut perm: Vec<u32> = (0..n).collect();
            let mut x = seed;
            for i in (1..n as usize).rev() {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let j = (x >> 33) as usize % i;
                perm.swap(i, j);
            }
            let flows: Vec<(u32, u32, u64)> = (0..n).map(|i| (i, perm[i as usize], size)).collect();
            assert!(flows.iter().all(|f| f.0 != f.1));
            let tm = matrix(n, &flows);
            let cfg = Config {
                lb: PacketLb::Spray(128),
                ..Config::uec_htsim()
            };
            let r = run(&net, &tm, &g, &cfg).unwrap();
            assert_eq!(r.unfinished, 0);
            let floor = wire as f64 * 8.0 / 100e9;
            assert!(r.fct.min_s >= floor, "k {k}: {} < {floor}", r.fct.min_s);
            let (p50, max) = (r.fct.p50_s / fluid, r.fct.max_s / fluid);
            assert!(
                p50 <= 1.05 && max <= 1.05,
                "k {k} seed {seed}: packet / fluid P50 {p50:.4}, max {max:.4} (fluid {fluid} s)"
            );
        }
    }
}

/// htsim's 128-node permutation (its own traffic file) runs whole under the preset.
#[test]
fn htsim_permutation_runs_under_the_preset() {
    let f = fat_tree(8);
    let net = net(&f);
    let g = gpus(&f);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/htsim-uec/perm_128n_2MiB.cm"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let tm = aifabric_workload::traffic::parse_htsim("perm.cm", &text).unwrap();
    let r = run(&net, &tm, &g, &Config::uec_htsim()).unwrap();
    assert_eq!((r.flows, r.unfinished, r.never_started), (128, 0, 0));
    assert_eq!(r.counters.data_new, 128 * 2_097_152u64.div_ceil(4086));
    // At least the bytes on the wire at line rate, plus the shortest path (2 links of 1 us,
    // within one rack switch) and the last ACK's way back.
    let floor = (2_097_152.0 + 514.0 * 64.0) * 8.0 / 100e9 + 4e-6;
    assert!(r.fct.min_s >= floor, "{} < {floor}", r.fct.min_s);
    // Spreading every flow over 4 uplinks at full load queues packets that the fluid never
    // holds: the median is within 25% of that floor, the slowest within 40%.
    assert!(r.fct.p50_s <= floor * 1.25, "{}", r.fct.p50_s);
    assert!(r.fct.max_s <= floor * 1.4, "{}", r.fct.max_s);
}

/// A matrix built in code (not parsed) with a start near the end of time is refused, not
/// run on a clock that wraps (issue 35: a start of 1e300 us ran to a makespan of 2.08 us).
#[test]
fn a_start_past_the_input_bound_is_refused() {
    let f = fat_tree(4);
    let n = net(&f);
    let mut tm = matrix(16, &[(0, 1, 4096)]);
    tm.flows[0].start = aifabric_workload::traffic::Start::AtPs(u64::MAX - 1);
    let e = run(&n, &tm, &gpus(&f), &Config::default()).unwrap_err();
    assert!(e.to_string().contains("past the latest start"), "{e}");
}

mod conservation {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        /// Bytes hosts put on the wire = delivered + dropped + trimmed off + in the network,
        /// checked at every event by a scan of live packets; every flow completes.
        #[test]
        fn bytes_are_conserved_at_every_event(
            flows in prop::collection::vec((0u32..16, 0u32..16, 1u64..300_000), 1..24),
            lb in 0usize..3,
            line_rate in any::<bool>(),
            trim in any::<bool>(),
            queue in 8_300u64..100_000,
            ack in prop::sample::select(vec![0u32, 4096, 16_384]),
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
                cc: if line_rate { Cc::LineRate } else { Config::uec_htsim().cc },
                trim,
                queue_bytes: queue,
                ack_every_bytes: ack,
                seed,
                check_conservation: true,
                ..Config::uec_htsim()
            };
            let r = run(&net, &tm, &g, &cfg).unwrap();
            prop_assert_eq!(r.unfinished, 0);
            prop_assert_eq!(r.never_started, 0);
        }
    }
}

/// Ring all-reduce (the workload's phases: 2 (N - 1) steps of chunks of S / N to the next
/// node, each step starting when the previous chunk into the node is in): at least the
/// bandwidth term 2 (N - 1) / N x S / rate, and within 15% of it plus one path per step
/// (each step waits for its chunk's last byte, not for its ACK).
#[test]
fn ring_all_reduce_takes_the_bandwidth_term_plus_a_path_per_step() {
    use aifabric_workload::traffic::Pattern;
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    let n = 16u64;
    let s = 16u64 << 20;
    let tm = Pattern::RingAllReduce.generate(n as u32, s, 1);
    assert_eq!(tm.flows.len() as u64, 2 * (n - 1) * n);
    let r = run(&net, &tm, &g, &Config::uec_htsim()).unwrap();
    assert_eq!((r.unfinished, r.never_started), (0, 0));
    let chunk = s / n;
    let wire = chunk + chunk.div_ceil(4086) * 64;
    let steps = 2 * (n - 1);
    let bandwidth = steps as f64 * wire as f64 * 8.0 / 100e9;
    assert!(r.makespan_s >= bandwidth, "{} < {bandwidth}", r.makespan_s);
    // The longest path in a k = 4 tree is 6 links of 1 us.
    let bound = bandwidth * 1.15 + steps as f64 * 6e-6;
    assert!(r.makespan_s <= bound, "{} > {bound}", r.makespan_s);
}

/// htsim's parallel all-to-all (64 of 128 hosts, 4,032 flows of 256 KiB) loses nothing under
/// the preset: no packet may time out (a timer that ran from the last ACK instead of the
/// earliest packet in flight fired thousands of times here, on packets that were not lost).
#[test]
fn htsim_all_to_all_needs_no_timeout() {
    let f = fat_tree(8);
    let net = net(&f);
    let g = gpus(&f);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/htsim-uec/a2a_64of128n_256KiB_parallel.cm"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let tm = aifabric_workload::traffic::parse_htsim("a2a.cm", &text).unwrap();
    let r = run(&net, &tm, &g, &Config::uec_htsim()).unwrap();
    assert_eq!(r.unfinished, 0);
    let c = &r.counters;
    assert_eq!(
        (c.timeouts, c.dropped, c.data_retransmitted),
        (0, 0, 0),
        "{c:?}"
    );
    // Each of the 64 hosts sends 63 x 256 KiB through its own 100 Gb/s link.
    let floor = 63.0 * 262_144.0 * 8.0 / 100e9;
    assert!(r.makespan_s >= floor);
    assert!(r.makespan_s <= floor * 1.1, "{} vs {floor}", r.makespan_s);
}

/// htsim's own answers where the paths leave no choice, so that no hash decides the tail:
/// on htsim's 8:1 tree for 128 hosts (its `fat_tree_128_8os.topo`: one aggregation switch
/// per pod, 4:1 at the edge, 2:1 above; here `tor_uplinks: 1, agg_uplinks: 2`), every path
/// inside a pod is the only one. Two matrices of 256 KiB flows, all at t = 0, heavily
/// trimmed: every host to each of the 15 others of its pod (1,920 flows), and in each pod
/// the 15 others to its first host (120 flows). htsim's figures: the Ultra Ethernet
/// Consortium's htsim at commit 40ccb05 (the scenarios' own, see
/// `scenarios/htsim-uec/README.md`), `htsim_uec -topo fat_tree_128_8os.topo -paths 1
/// -sender_cc_only -seed 13`, FCT percentiles by the same rank as ours (README, "Fidelity
/// against htsim").
#[test]
fn single_path_trimming_agrees_with_htsim_where_no_hash_decides() {
    let f = fat_tree_oversubscribed(8, 1, 2);
    let net = net(&f);
    let g = gpus(&f);
    let cfg = Config {
        lb: PacketLb::Ecmp,
        ..Config::uec_htsim()
    };
    let size = 262_144;
    let pod = |h: u32| h / 16;
    let mut a2a = Vec::new();
    for s in 0..128 {
        for d in 0..128 {
            if s != d && pod(s) == pod(d) {
                a2a.push((s, d, size));
            }
        }
    }
    let incasts: Vec<_> = (0..8)
        .flat_map(|p| (1..16).map(move |j| (16 * p + j, 16 * p, size)))
        .collect();
    // (matrix, htsim's P50, P99, max, mean in us, its NACKs, the tolerance on times)
    let cases = [
        (a2a, [900.7, 1071.7, 1091.7, 753.2], Some(17_120.0), 0.02),
        // The incasts trim 1.8 times as many packets as htsim's (7,011 NACKs against
        // 3,864) for times within 4%: not asserted, told in the README.
        (incasts, [279.1, 342.3, 342.8, 262.3], None, 0.05),
    ];
    for (flows, want, nacks, tol) in cases {
        let tm = matrix(128, &flows);
        let r = run(&net, &tm, &g, &cfg).unwrap();
        assert_eq!(r.unfinished, 0);
        let got = [r.fct.p50_s, r.fct.p99_s, r.fct.max_s, r.fct.mean_s].map(|x| x * 1e6);
        for ((name, g), w) in ["P50", "P99", "max", "mean"].iter().zip(got).zip(want) {
            assert!(
                (g / w - 1.0).abs() <= tol,
                "{} flows: {name} {g:.1} us against htsim's {w} us",
                flows.len()
            );
        }
        if let Some(n) = nacks {
            let got = r.counters.nacks as f64;
            assert!(
                (got / n - 1.0).abs() <= 0.1,
                "{got} NACKs against htsim's {n}"
            );
        }
    }
}
