//! DSF zones as a scheduled fabric (VOQs, credits, cells; `src/dsf.rs`), against closed
//! forms: one flow's completion time, an incast kept at the egress port's rate without
//! loss, credit and cell conservation, spraying only over links that reach, determinism.

mod common;

use aifabric_dataplane::{Net, NetParams};
use aifabric_model::{Fabric, Scenario};
use aifabric_packet::{run, Cc, Config, PacketLb, PacketResult};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use common::*;
use proptest::prelude::*;

/// A dual-stage zone scaled down: 2 clusters of 2 RDSWs with 2 GPUs each, 2 FDSWs per
/// cluster, 2 SDSWs, 2 parallel links per pair.
fn dsf_l2() -> Fabric {
    let yaml = "name: dsf2\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            dsf_l2: {clusters: 2, rdsw_per_cluster: 2, edsw: 1, fdsw_per_cluster: 2, sdsw: 2, links_per_fdsw: 2, links_per_sdsw: 2, gpus_per_rdsw: 2}\n";
    aifabric_spec::build_str("dsf2.yaml", yaml).expect("the DSF zone builds")
}

/// Two regions over BAG; region a has an NSF zone (GPUs 0-7) and a DSF zone (8-11),
/// region c an NSF zone (12-19).
fn two_regions() -> Fabric {
    aifabric_spec::build_str(
        "t.yaml",
        aifabric_fixtures::specs::TWO_REGIONS_NSF_DSF_SHARED,
    )
    .unwrap()
}

/// The network of `f` under scenario `s`, with the default control plane.
fn net_under<'f>(f: &'f Fabric, s: &Scenario) -> Net<'f> {
    Net::new(
        f,
        s,
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        NetParams::default(),
    )
}

/// The interface-node-to-FDSW fabric tier of a run (both directions).
fn rdsw_fdsw(r: &PacketResult) -> aifabric_packet::FabricTier {
    r.dsf
        .as_ref()
        .unwrap()
        .fabric
        .iter()
        .find(|t| t.tier == "rdsw-fdsw")
        .unwrap()
        .clone()
}

/// Every link 100 ns of cable, every switch 500 ns: a fabric hop is 600 ns.
const LINK_PS: u64 = 100_000;
const SWITCH_PS: u64 = 500_000;

/// Line-rate senders (no congestion control to blur the closed forms), with the engine's
/// conservation checks at every event.
fn cfg() -> Config {
    Config {
        cc: Cc::LineRate,
        lb: PacketLb::Ecmp,
        link_latency_ps: Some(LINK_PS),
        switch_latency_ps: SWITCH_PS,
        // Packets may wait in the deep VOQs longer than htsim's 100 us: a RoCE-like timeout.
        rto_ps: 10_000_000_000,
        check_conservation: true,
        ..Config::default()
    }
}

/// Picoseconds to serialize `bytes` at `gbps` (exact for the rates used here).
fn ser(bytes: u64, gbps: f64) -> f64 {
    bytes as f64 * 8.0 / gbps * 1e3
}

/// Wire bytes of a flow: its payload plus a header per packet.
fn wire(size: u64, c: &Config) -> u64 {
    let payload = u64::from(c.mtu_bytes - c.header_bytes);
    size + size.div_ceil(payload) * u64::from(c.header_bytes)
}

fn assert_lossless(r: &PacketResult) {
    let c = &r.counters;
    assert_eq!(
        (c.dropped, c.trimmed, c.data_retransmitted, c.timeouts),
        (0, 0, 0, 0),
        "{c:?}"
    );
    assert_eq!(r.unfinished, 0);
}

/// Credits granted = bytes sent into the fabric, cells sent = cells reassembled, VOQs
/// empty at the end.
fn assert_conserved(r: &PacketResult) {
    let d = r.dsf.as_ref().expect("the matrix crosses a DSF zone");
    assert_eq!(d.credits_granted_bytes, d.sent_bytes, "{d:?}");
    assert_eq!(d.cells_sent, d.cells_reassembled, "{d:?}");
    assert_eq!(d.queued_bytes, 0);
}

/// The completion time of one flow of `size` bytes between GPUs of two interface nodes on
/// an idle zone whose fabric crossing takes `hops` fabric hops, picoseconds:
/// - the NIC serializes the wire bytes `W` at 400G and the last packet reaches the ingress
///   node after the host link (cable + switch): `W / R + h`;
/// - its VOQ asks the egress scheduler for it and the grant comes back: `2 x D`, with
///   `D = hops x (cable + switch)` the fabric's one-way delay. The egress port and the NIC
///   both run at 400G, so credits keep pace and no packet waits longer than that;
/// - its cells cross the fabric: `D` plus one cell's serialization per hop (store and
///   forward); where a packet's cells outnumber the ingress node's `links` uplinks, its
///   last cell waits behind `ceil(cells / links) - 1` others on its uplink, and behind at
///   most one more at each later hop: the cell rounding the test allows;
/// - the egress port serializes the last packet and its cable delivers it: `T_last + c`;
/// - the ACK (64 B) goes back the same way: NIC, host link, request, grant, one cell per
///   hop, egress port, cable.
fn one_flow_ps(size: u64, hops: u64, c: &Config) -> f64 {
    let (cable, sw) = (LINK_PS as f64, SWITCH_PS as f64);
    let h = cable + sw;
    let d = hops as f64 * h;
    let w = wire(size, c);
    let payload = u64::from(c.mtu_bytes - c.header_bytes);
    let last = size - (size.div_ceil(payload) - 1) * payload + u64::from(c.header_bytes);
    let hdr = u64::from(c.header_bytes);
    let cell = u64::from(c.dsf.cell_bytes);
    let data = ser(w, 400.0)
        + h
        + 2.0 * d
        + d
        + hops as f64 * ser(cell, 106.25)
        + ser(last, 400.0)
        + cable;
    let ack =
        ser(hdr, 400.0) + h + 3.0 * d + hops as f64 * ser(hdr, 106.25) + ser(hdr, 400.0) + cable;
    data + ack
}

/// One flow across a single-stage zone (2 fabric hops) and across the clusters of a
/// dual-stage one (4 hops: FDSW, SDSW, FDSW, RDSW) takes the closed form, within a few
/// cells' serialization.
#[test]
fn one_flow_takes_the_closed_form() {
    let c = cfg();
    let cell = ser(u64::from(c.dsf.cell_bytes), 106.25);
    let cells = u64::from(c.mtu_bytes).div_ceil(u64::from(c.dsf.cell_bytes));
    // (zone, receiver, fabric hops, the sender's interface node's uplinks).
    for (f, dst, hops, links) in [(dsf_l1(4, 4, 4, 4), 8u32, 2u64, 16u64), (dsf_l2(), 4, 4, 4)] {
        let rounding = (cells.div_ceil(links) - 1 + hops) as f64 * cell;
        let net = net(&f);
        let g = gpus(&f);
        for size in [4_086u64, 100_000, 1_000_000] {
            let tm = matrix(dst + 1, &[(0, dst, size)]);
            let r = run(&net, &tm, &g, &c).unwrap();
            assert_lossless(&r);
            assert_conserved(&r);
            let got = r.makespan_s * 1e12;
            let want = one_flow_ps(size, hops, &c);
            assert!(
                got >= want - 1.0 && got <= want + rounding,
                "{hops} hops, {size} B: {got} ps vs the closed form {want} ps"
            );
        }
    }
}

/// N -> 1 incast through the zone (one sender on the receiver's own node), lossy settings (trimming, 178 KB egress queues) and
/// line-rate senders: credits admit only what the egress port can send, so nothing is
/// trimmed or dropped, the egress queue stays within a few packets, the excess waits in the
/// ingress VOQs, and the makespan is the N x size / rate floor plus the pipeline's latency.
#[test]
fn incast_loses_nothing_and_keeps_the_egress_busy() {
    let f = dsf_l1(8, 4, 4, 2);
    let net = net(&f);
    let g = gpus(&f);
    let c = cfg();
    let size = 1_000_000u64;
    // Receiver: GPU 0 (rdsw0); senders: one GPU on each other RDSW, and GPU 1 on rdsw0
    // (switched locally, credited all the same).
    let mut flows: Vec<(u32, u32, u64)> = (1..8u32).map(|k| (2 * k, 0, size)).collect();
    flows.push((1, 0, size));
    let n = flows.len() as f64;
    let tm = matrix(16, &flows);
    let r = run(&net, &tm, &g, &c).unwrap();
    assert_lossless(&r);
    assert_conserved(&r);
    let floor = n * ser(wire(size, &c), 400.0) * 1e-12;
    assert!(r.makespan_s >= floor, "{} < {floor}", r.makespan_s);
    assert!(
        r.makespan_s <= floor * 1.02 + 10e-6,
        "credits keep the egress busy: {} vs {floor}",
        r.makespan_s
    );
    // The egress port's queue: credits in flight, not the incast. A VOQ sends a whole
    // packet once its balance is positive (up to a packet ahead of its credit, as Jericho's
    // may go negative), so at most about one packet per sending VOQ, plus one in service.
    let down = r
        .busiest
        .iter()
        .find(|l| l.link.ends_with("rack0.gpu0 #0") && l.link.contains("rdsw0 ->"))
        .expect("the receiver's link is the busiest");
    assert!(
        down.peak_queue_bytes <= (flows.len() as u64 + 2) * u64::from(c.mtu_bytes),
        "{down:?}"
    );
    let d = r.dsf.as_ref().unwrap();
    assert!(d.voqs[0].peak_bytes > 100_000, "{:?}", d.voqs);
}

/// Failed fabric links carry no cells, and the ingress node sprays only over links whose
/// fabric node still reaches the egress node: with rdsw0--fdsw0 and fdsw1--rdsw2 down, a
/// flow rdsw0 -> rdsw2 uses the 8 links to fdsw2 and fdsw3 instead of 16, each carrying
/// twice the bytes; it still finishes at the NIC's rate (8 x 106.25G > 400G).
#[test]
fn cells_avoid_failed_links_and_dead_ends() {
    let f = dsf_l1(4, 4, 4, 4);
    let g = gpus(&f);
    let c = cfg();
    let tm = matrix(9, &[(0, 8, 1_000_000)]);
    let healthy = run(&net(&f), &tm, &g, &c).unwrap();
    let s = Scenario::from_selectors(
        &f,
        &[
            "r.b.z.rdsw0--r.b.z.fdsw0".into(),
            "r.b.z.fdsw1--r.b.z.rdsw2".into(),
        ],
        &[],
        &[],
    )
    .unwrap();
    let failed_net = net_under(&f, &s);
    let r = run(&failed_net, &tm, &g, &c).unwrap();
    assert_lossless(&r);
    assert_conserved(&r);
    let (h, x) = (rdsw_fdsw(&healthy), rdsw_fdsw(&r));
    // Healthy: rdsw0's 16 uplinks and rdsw2's 16 downlinks, and the same back for the
    // ACKs; failed: 8 of each (rdsw2's ACKs too avoid fdsw0, which no longer reaches rdsw0,
    // and fdsw1, which rdsw2 no longer reaches).
    assert_eq!((h.links, x.links), (64, 32));
    // The busiest uplink carries twice a healthy one's share (same run time within 1%).
    let ratio = x.max_utilization / h.max_utilization;
    assert!((ratio - 2.0).abs() < 0.05, "{ratio}");
    assert!((r.makespan_s / healthy.makespan_s - 1.0).abs() < 0.01);
}

/// Input Balanced Mode shapes the spray: fdsw0 lost 2 of its 4 links to rdsw2, so it
/// delivers half its nominal capacity toward rdsw2 and advertises it on half its input:
/// rdsw0 sprays cells toward rdsw2 over 2 of its 4 (live) links to fdsw0, and all 4 to the
/// other FDSWs. Counted as the fabric links that carried cells (both directions: the data's
/// 14 up and 14 down, the ACKs' 14 up from rdsw2 and 16 down into rdsw0): 58, where plain
/// reachability would use 60. Still lossless, credits and cells balanced.
#[test]
fn input_balanced_mode_sprays_over_the_advertised_share() {
    let f = dsf_l1(4, 4, 4, 4);
    let g = gpus(&f);
    let c = cfg();
    let tm = matrix(9, &[(0, 8, 1_000_000)]);
    let mut s = Scenario::healthy(&f);
    let mut cut: Vec<aifabric_model::LinkId> = f
        .links()
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            let names = [f.device_name(l.a), f.device_name(l.b)];
            names.contains(&"r.b.z.fdsw0".to_owned()) && names.contains(&"r.b.z.rdsw2".to_owned())
        })
        .map(|(i, _)| aifabric_model::LinkId::from_idx(i))
        .collect();
    cut.sort_unstable();
    assert_eq!(cut.len(), 4);
    for &l in &cut[..2] {
        s.failed.fail_link(l);
    }
    let failed_net = net_under(&f, &s);
    let r = run(&failed_net, &tm, &g, &c).unwrap();
    assert_lossless(&r);
    assert_conserved(&r);
    assert_eq!(rdsw_fdsw(&r).links, 58);
}

/// Traffic leaving and entering a DSF zone: from its GPUs to an NSF zone's in the same
/// region and in another region over BAG, and back. The packet crosses the cell fabric from
/// its RDSW to the EDSW whose BAG link the route picked (an EDSW VOQ on the way in, an RDSW
/// VOQ on the way out); everything arrives, nothing is lost, credits and cells balance.
#[test]
fn traffic_leaves_and_enters_the_zone_through_its_edsws() {
    let f = two_regions();
    let net = net(&f);
    let g = gpus(&f);
    // Nodes 0-7: region a's NSF zone; 8-11: its DSF zone; 12-19: region c.
    let tm = matrix(
        20,
        &[
            (8, 0, 200_000),
            (0, 9, 200_000),
            (10, 3, 200_000),
            (11, 19, 200_000),
            (19, 10, 200_000),
        ],
    );
    let r = run(&net, &tm, &g, &cfg()).unwrap();
    assert_lossless(&r);
    assert_conserved(&r);
    let d = r.dsf.as_ref().unwrap();
    let roles: Vec<&str> = d.voqs.iter().map(|v| v.tier.as_str()).collect();
    assert_eq!(roles, ["edsw", "rdsw"]);
    let fabric: Vec<&str> = d.fabric.iter().map(|t| t.tier.as_str()).collect();
    assert_eq!(fabric, ["edsw-fdsw", "rdsw-fdsw"]);
}

/// PFC on traffic that leaves a DSF zone: a packet's ingress count at the EDSW is released
/// when it leaves its VOQ; past the EDSW it is an ordinary packet again, counted and
/// released by every switch on its way (a packet kept marked as "crossed the fabric" was
/// never released at the BAG, whose ingress count then only grew: a PAUSE with no RESUME
/// and every flow stuck). Every flow completes, nothing is lost or resent, and the ingress
/// counts match the data held at every event (`check_conservation`), with XOFF low enough
/// that the BAG and NSF switches pause.
#[test]
fn pfc_counts_packets_leaving_the_zone_at_every_switch_after_it() {
    let f = two_regions();
    let net = net(&f);
    let g = gpus(&f);
    let tm = matrix(
        20,
        &[
            (8, 0, 2_000_000),
            (9, 1, 2_000_000),
            (10, 19, 2_000_000),
            (11, 19, 2_000_000),
            (12, 9, 2_000_000),
        ],
    );
    let c = Config {
        pfc: Some(aifabric_packet::Pfc {
            xoff_bytes: 20_000,
            xon_bytes: 10_000,
            ..aifabric_packet::Pfc::default()
        }),
        trim: false,
        ..cfg()
    };
    let r = run(&net, &tm, &g, &c).unwrap();
    assert_eq!(r.unfinished, 0);
    assert_eq!(
        (
            r.counters.dropped,
            r.counters.data_retransmitted,
            r.counters.timeouts
        ),
        (0, 0, 0)
    );
    assert_conserved(&r);
    let p = r.pfc.as_ref().unwrap();
    assert!(p.pauses > 0 && p.pauses == p.resumes, "{p:?}");
}

/// Same seed, same JSON (an all-to-all with NSCC, trimming and ECN on).
#[test]
fn same_seed_same_json() {
    let f = dsf_l1(4, 2, 2, 2);
    let net = net(&f);
    let g = gpus(&f);
    let mut flows = Vec::new();
    for s in 0..8u32 {
        for d in 0..8u32 {
            if s != d {
                flows.push((s, d, 50_000 + 1_000 * u64::from(s)));
            }
        }
    }
    let tm = matrix(8, &flows);
    let c = Config {
        check_conservation: false,
        ..Config::default()
    };
    let a = serde_json::to_string(&run(&net, &tm, &g, &c).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&net, &tm, &g, &c).unwrap()).unwrap();
    assert_eq!(a, b);
    assert!(a.contains("\"dsf\""));
}

/// A matrix that crosses no DSF zone has no `dsf` part in its JSON.
#[test]
fn no_dsf_part_elsewhere() {
    let f = fat_tree(4);
    let r = run(&net(&f), &matrix(16, &[(0, 15, 10_000)]), &gpus(&f), &cfg()).unwrap();
    assert!(r.dsf.is_none());
    assert!(!serde_json::to_string(&r).unwrap().contains("\"dsf\""));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random small matrices (one GPU per interface node, so every flow is credited), line
    /// rate or NSCC: never a loss, and at every event credits granted = sent + balances +
    /// grants on their way and cells sent = reassembled + in the fabric (the engine's
    /// checks); at the end granted = sent and every cell reassembled.
    #[test]
    fn credits_are_conserved(
        flows in prop::collection::vec((0u32..5, 1u32..5, 1u64..200_000), 1..10),
        nscc in any::<bool>(),
        credit in prop::sample::select(vec![256u32, 4096, 16_384]),
        cell in prop::sample::select(vec![64u32, 256, 512]),
    ) {
        let f = dsf_l1(5, 2, 2, 1);
        let net = net(&f);
        let g = gpus(&f);
        let flows: Vec<(u32, u32, u64)> =
            flows.into_iter().map(|(s, k, b)| (s, (s + k) % 5, b)).collect();
        let tm = matrix(5, &flows);
        let mut c = cfg();
        c.dsf.credit_bytes = credit;
        c.dsf.cell_bytes = cell;
        if nscc {
            c.cc = Cc::NsccAuto;
        }
        let r = run(&net, &tm, &g, &c).unwrap();
        assert_lossless(&r);
        assert_conserved(&r);
        let d = r.dsf.as_ref().unwrap();
        prop_assert_eq!(d.requests, d.packets);
    }
}
