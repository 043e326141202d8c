//! `compare-fabrics`: the same traffic on a DSF, an NSF and a RoCE zone of equal GPU count,
//! packet by packet; and a BAG-to-BAG link at 1, 10 and 60 km with a deep-buffer and a
//! shallow-buffer BAG under a lossless incast.
//!
//! The zones are the built-in specs' kinds scaled down to 288 GPUs (the smallest count all
//! three build evenly: 8 DSF interface nodes of 36 GPUs, 9 NSF racks of 32, 18 RoCE racks of
//! 16), non-blocking inside, 400 Gb/s to every GPU. Each runs with the endpoints and
//! switches its design implies:
//! - **RoCE** (Meta's AI zones, Gangidi et al., SIGCOMM 2024): PFC, line-rate senders,
//!   receiver-driven admission, per-flow ECMP (the `roce` preset);
//! - **NSF** (shallow-buffer Ethernet with adaptive routing and ECN, OCP 2025): adaptive
//!   routing per packet, DCQCN senders on ECN (5 KB : 200 KB : 1%), PFC, no admission. Meta
//!   does not publish NSF's congestion control; DCQCN is this comparison's assumption;
//! - **DSF** (scheduled fabric): line-rate senders into the interface nodes' VOQs, credits
//!   and cells inside (the packet engine's DSF model); no PFC at the edge: the VOQs are in
//!   HBM (12 GB per Jericho3), so what waits for credits pauses nobody.

use crate::{Error, Setup, TrafficSource, SCHEMA_VERSION};
use aifabric_dataplane::Net;
use aifabric_model::{DeviceId, Role, Scenario};
use aifabric_packet::{Cc, Config, PacketLb, PacketResult, Pfc};
use aifabric_workload::traffic::{Pattern, Start, TmFlow, TrafficMatrix};
use serde::Serialize;

/// GPUs in each compared zone.
pub const GPUS: u32 = 288;

const DSF: &str = "name: cmp-dsf
description: DSF single-stage zone scaled to 288 GPUs (8 RDSW x 36 x 400G, 40 FDSW)
regions:
  - name: r
    buildings:
      - name: b
        zones:
          - name: dsf
            dsf_l1: {rdsw: 8, fdsw: 40, edsw: 0, links_per_fdsw: 4}
";

const NSF: &str = "name: cmp-nsf
description: NSF zone scaled to 288 GPUs (3 pods x 3 racks x 32 x 400G, 8 spine planes)
regions:
  - name: r
    buildings:
      - name: b
        zones:
          - name: nsf
            nsf: {pods: 3, racks_per_pod: 3, gpus_per_rack: 32, spine_planes: 8, rack_links_per_plane: 4, stsw_per_plane: 4, ftsw_links_per_stsw: 3, stsw_uplinks: 1, link_speed_gbps: 400}
";

const ROCE: &str = "name: cmp-roce
description: RoCE AI zone scaled to 288 GPUs (18 racks x 16 x 400G, 16 CTSW)
regions:
  - name: r
    buildings:
      - name: b
        zones:
          - name: roce
            roce: {ai_zones: 1, racks_per_zone: 18, gpus_per_rack: 16, ctsw_per_zone: 16, rtsw_links_per_ctsw: 1, atsw: 1, ctsw_links_per_atsw: 1, link_speed_gbps: 400}
";

/// Two regions of one small NSF zone each under a one-plane BAG, joined by 8 x 800 Gb/s
/// inter-BAG links of `km` km, with BAG model `bag`; `shallow-bag` is a J3-class chassis's
/// port count with 150 MB of on-chip buffer and no HBM.
fn bag_spec(km: u32, bag: &str) -> String {
    let zone = "nsf: {pods: 1, racks_per_pod: 2, gpus_per_rack: 8, spine_planes: 1, rack_links_per_plane: 2, stsw_per_plane: 1, ftsw_links_per_stsw: 2, stsw_uplinks: 4, link_speed_gbps: 400}";
    let region = |name: &str| {
        format!(
            "  - name: {name}\n    bag: {{planes: 1, chassis_per_plane: 1, model: {bag}}}\n    buildings:\n      - name: dc1\n        distance_to_bag_m: 300\n        zones:\n          - name: nsf\n            {zone}\n"
        )
    };
    format!(
        "name: bag-{km}km-{bag}\nhardware:\n  - name: shallow-bag\n    ethernet: [{{count: 432, speed_gbps: 800}}, {{count: 864, speed_gbps: 400}}]\n    sram_bytes: 150000000\nregions:\n{}{}inter_bag:\n  - between: [east, west]\n    topology: planar\n    links_per_plane: 8\n    speed_gbps: 800\n    length_m: {}\n",
        region("east"),
        region("west"),
        km * 1000
    )
}

/// Options of a comparison.
#[derive(Clone, Copy, Debug)]
pub struct CompareFabricsOptions {
    /// Seed of every random choice.
    pub seed: u64,
    /// Smaller flows and fewer GPUs per workload in the zones (for tests and a first look;
    /// the BAG cases keep their size).
    pub quick: bool,
    /// Also the BAG-to-BAG links.
    pub bag: bool,
    /// PFC's XOFF and XON on the BAG cases, bytes per ingress link (default: the engine's
    /// 200 KB / 180 KB).
    pub bag_pfc: Option<(u64, u64)>,
}

impl Default for CompareFabricsOptions {
    fn default() -> Self {
        CompareFabricsOptions {
            seed: 1,
            quick: false,
            bag: true,
            bag_pfc: None,
        }
    }
}

/// One workload on one fabric.
#[derive(Clone, Debug, Serialize)]
pub struct FabricRun {
    /// `dsf`, `nsf` or `roce`.
    pub fabric: String,
    /// The workload's name.
    pub workload: String,
    /// The packet engine's result, or why it could not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<PacketResult>,
    /// Why the fabric could not run it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One BAG-to-BAG case.
#[derive(Clone, Debug, Serialize)]
pub struct BagRun {
    /// Inter-BAG cable, km.
    pub km: u32,
    /// `deep` (the J3 BAG chassis: 12 GB HBM + 128 MB SRAM per J3) or `shallow` (150 MB).
    pub buffer: String,
    /// The best makespan the link allows: the data's bytes on the wire at the receiver's
    /// 400 Gb/s, plus the inter-BAG cable's round trip (5 us per km each way), seconds.
    pub ideal_s: f64,
    /// `ideal_s` over the makespan: the share of the throughput the fabric kept.
    pub throughput_kept: f64,
    /// The run.
    pub result: PacketResult,
}

/// The comparison.
#[derive(Clone, Debug, Serialize)]
pub struct CompareFabricsReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// GPUs per zone.
    pub gpus: u32,
    /// Workload x fabric.
    pub runs: Vec<FabricRun>,
    /// The BAG-to-BAG cases (empty unless asked).
    pub bag: Vec<BagRun>,
    /// What the BAG cases run: senders, bytes each, the receiver's link.
    pub bag_workload: String,
    /// What explains the BAG cases: which agree and why, where throughput is lost.
    pub notes: Vec<crate::Note>,
}

/// The packet engine's settings for each fabric kind (see the module docs).
pub fn fabric_config(kind: &str, seed: u64) -> Config {
    let roce = Config {
        seed,
        ..Config::roce()
    };
    match kind {
        "nsf" => Config {
            lb: PacketLb::Adaptive,
            cc: Cc::DcqcnAuto,
            ecn_bytes: Some((5_000, 200_000)),
            ecn_max_probability: 0.01,
            admission: None,
            ..roce
        },
        // The interface nodes' VOQs sit in HBM (12 GB per Jericho3): what waits for
        // credits there is no reason to pause a GPU, so the edge runs without PFC (a
        // 200 KB XOFF on VOQ bytes would pause every sender at once).
        "dsf" => Config {
            admission: None,
            pfc: None,
            ..roce
        },
        _ => roce,
    }
}

/// The workloads: (name, pattern, GPUs, bytes per flow).
fn workloads(quick: bool) -> Vec<(String, Pattern, u32, u64)> {
    let (incast, a2a_gpus, a2a, ring_gpus, ring) = if quick {
        (256 << 10, 32, 8 << 10, 16, 1 << 20)
    } else {
        (2 << 20, 256, 16 << 10, 64, 16 << 20)
    };
    vec![
        (
            format!("incast 16->1, {} KiB each", incast >> 10),
            Pattern::Incast(16),
            17,
            incast,
        ),
        (
            format!(
                "all-to-all among {a2a_gpus} GPUs, {} KiB per pair",
                a2a >> 10
            ),
            Pattern::AllToAll,
            a2a_gpus,
            a2a,
        ),
        (
            format!(
                "ring all-reduce over {ring_gpus} GPUs, {} MiB each",
                ring >> 20
            ),
            Pattern::RingAllReduce,
            ring_gpus,
            ring,
        ),
    ]
}

/// Run the comparison.
pub fn compare_fabrics(
    opts: &CompareFabricsOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<CompareFabricsReport, Error> {
    if let Some((xoff, xon)) = opts.bag_pfc {
        let mtu = fabric_config("roce", opts.seed).mtu_bytes;
        if xoff < u64::from(mtu) {
            return Err(Error::bad_request(format!(
                "--bag-pfc {xoff}:{xon}: XOFF must hold at least one packet ({mtu} B MTU)"
            )));
        }
    }
    let fabrics = [("dsf", DSF), ("nsf", NSF), ("roce", ROCE)];
    let built = fabrics
        .iter()
        .map(|(k, y)| {
            aifabric_spec::build_str(&format!("{k}.yaml"), y)
                .map(|f| (*k, f))
                .map_err(|e| Error::runtime_in(&format!("built-in comparison spec {k}"), e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let setup = Setup::default();
    let nets: Vec<(&str, Net<'_>, Vec<DeviceId>)> = built
        .iter()
        .map(|(k, f)| {
            let net = Net::new(
                f,
                &Scenario::healthy(f),
                setup.plan,
                setup.bgp,
                net_params(&setup),
            );
            let order = rack_round_robin(&net);
            (*k, net, order)
        })
        .collect();
    let mut runs = Vec::new();
    for (name, pattern, gpus, bytes) in workloads(opts.quick) {
        let source = TrafficSource::Pattern {
            pattern,
            gpus,
            bytes,
        };
        let (tm, _) = crate::matrix::matrix(&source, opts.seed)?;
        for (kind, net, order) in &nets {
            progress(&format!("{kind}: {name}"));
            let cfg = fabric_config(kind, opts.seed);
            let (result, error) = match aifabric_packet::run(net, &tm, order, &cfg) {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(e.to_string())),
            };
            runs.push(FabricRun {
                fabric: (*kind).to_owned(),
                workload: name.clone(),
                result,
                error,
            });
        }
    }
    let senders = 16u32;
    // Enough data for the pauses to cross a 60 km link many times (smaller, and the
    // headroom never fills: deep and shallow come out alike), in quick runs too.
    let per = 8u64 << 20;
    let mut bag = Vec::new();
    let bag_pfc = opts
        .bag_pfc
        .map_or_else(Pfc::default, |(xoff_bytes, xon_bytes)| Pfc {
            xoff_bytes,
            xon_bytes,
            ..Pfc::default()
        });
    if opts.bag {
        for km in [1u32, 10, 60] {
            for (buffer, model) in [("deep", "bag-j3-chassis"), ("shallow", "shallow-bag")] {
                progress(&format!("BAG link {km} km, {buffer} buffer"));
                let f = aifabric_spec::build_str("bag.yaml", &bag_spec(km, model))
                    .map_err(|e| Error::runtime_in("built-in BAG comparison spec", e))?;
                let result = bag_incast(&f, senders, per, bag_pfc, opts.seed)?;
                let c = &result.config;
                let payload = u64::from(c.mtu_bytes - c.header_bytes);
                let wire =
                    u64::from(senders) * (per + per.div_ceil(payload) * u64::from(c.header_bytes));
                let ideal_s = wire as f64 * 8.0 / 400e9 + 2.0 * f64::from(km) * 1000.0 * 5e-9;
                let throughput_kept = if result.makespan_s > 0.0 {
                    ideal_s / result.makespan_s
                } else {
                    0.0
                };
                bag.push(BagRun {
                    km,
                    buffer: buffer.to_owned(),
                    ideal_s,
                    throughput_kept,
                    result,
                });
            }
        }
    }
    Ok(CompareFabricsReport {
        schema_version: SCHEMA_VERSION,
        gpus: GPUS,
        runs,
        notes: crate::notes::bag(&bag),
        bag,
        bag_workload: format!(
            "{senders} GPUs of the west region, {} MiB each, to one GPU of the east region (400 Gb/s): every flow crosses the inter-BAG links; RoCE endpoints (PFC with XOFF {} B / XON {} B, line rate, no admission), headroom carved out of each switch's buffer",
            per >> 20,
            bag_pfc.xoff_bytes,
            bag_pfc.xon_bytes
        ),
    })
}

/// The network's settings for packet runs: one GPU per scale-up domain (the packet engine
/// sends every flow over the network), the default switch latency.
fn net_params(setup: &Setup) -> aifabric_dataplane::NetParams {
    aifabric_dataplane::NetParams {
        scale_up_gpus: 1,
        switch_latency_s: Config::default().switch_latency_ps as f64 * 1e-12,
        ..setup.net
    }
}

/// The zone's GPUs one rack at a time round robin (node i on rack i mod racks), so every
/// workload crosses the fabric in each zone alike, whatever its GPUs per rack (36 on a DSF
/// interface node, 32 on an NSF rack, 16 on a RoCE rack).
fn rack_round_robin(net: &Net<'_>) -> Vec<DeviceId> {
    let f = net.f;
    let mut racks: Vec<(DeviceId, Vec<DeviceId>)> = Vec::new();
    for g in f.devices_with_role(Role::Gpu) {
        let Some((_, tor)) = net.attach(g) else {
            continue;
        };
        match racks.iter_mut().find(|r| r.0 == tor) {
            Some(r) => r.1.push(g),
            None => racks.push((tor, vec![g])),
        }
    }
    let longest = racks.iter().map(|r| r.1.len()).max().unwrap_or(0);
    (0..longest)
        .flat_map(|i| racks.iter().filter_map(move |r| r.1.get(i).copied()))
        .collect()
}

/// `senders` GPUs of the second region each send `bytes` to the first GPU of the first
/// region, under PFC with the headroom carved out of each switch's buffer.
fn bag_incast(
    f: &aifabric_model::Fabric,
    senders: u32,
    bytes: u64,
    pfc: Pfc,
    seed: u64,
) -> Result<PacketResult, Error> {
    let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
    let east = gpus.len() as u32 / 2;
    if senders > east {
        return Err(Error::Runtime {
            message: format!(
                "the BAG comparison spec has {east} GPUs per region, fewer than {senders} senders"
            ),
            source: None,
        });
    }
    let tm = TrafficMatrix {
        nodes: gpus.len() as u32,
        flows: (0..senders)
            .map(|i| TmFlow {
                id: u64::from(i) + 1,
                src: east + i,
                dst: 0,
                bytes,
                start: Start::AtPs(0),
                done_trigger: None,
                recv_trigger: None,
            })
            .collect(),
        triggers: Default::default(),
    };
    let cfg = Config {
        admission: None,
        pfc: Some(Pfc {
            buffer_limited: true,
            ..pfc
        }),
        ..fabric_config("roce", seed)
    };
    let setup = Setup::default();
    let net = Net::new(
        f,
        &Scenario::healthy(f),
        setup.plan,
        setup.bgp,
        net_params(&setup),
    );
    aifabric_packet::run(&net, &tm, &gpus, &cfg).map_err(Error::runtime_from)
}
