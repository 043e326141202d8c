//! The packet engine against closed forms and invariants that do not come from its code.

mod common;

use aifabric_packet::{run, Cc, Config, Lb};
use common::*;

const GBPS100_PS_PER_BYTE: u64 = 80;

/// One flow on an idle path: the last byte arrives after the bytes on the wire at line rate,
/// plus the propagation of every hop and the serialization of the first packet at every hop
/// after the first (store and forward); its ACK returns over the same hops.
#[test]
fn one_flow_on_an_idle_path_takes_the_closed_form_exactly() {
    let f = fat_tree(4);
    let net = net(&f);
    let g = gpus(&f);
    // Host 0 (pod 0) to host 15 (pod 3): 6 links.
    for bytes in [1u64, 4086, 4087, 100_000, 2_097_152] {
        let tm = matrix(16, &[(0, 15, bytes)]);
        // One path (ECMP): spraying would let a short last packet overtake on another path.
        let cfg = Config {
            cc: Cc::LineRate,
            lb: Lb::Ecmp,
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
    }
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
                assert!(c.data_retransmitted >= c.trimmed, "{c:?}");
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

#[test]
fn permutation_prints() {
    let f = fat_tree(8);
    let net = net(&f);
    let g = gpus(&f);
    let text =
        std::fs::read_to_string("/work/shared/scenarios/htsim-uec/cm/perm_128n_2MiB.cm").unwrap();
    let tm = aifabric_workload::traffic::parse_htsim("p.cm", &text).unwrap();
    for lb in [Lb::Spray(128), Lb::Ecmp, Lb::Adaptive] {
        let cfg = Config {
            lb,
            ..Config::uec_htsim()
        };
        let t = std::time::Instant::now();
        let r = run(&net, &tm, &g, &cfg).unwrap();
        eprintln!(
            "{lb:?}: unfinished {} {:?} {:?} events {} in {:?}",
            r.unfinished,
            r.fct,
            r.counters,
            r.events,
            t.elapsed()
        );
    }
}
