//! A traffic matrix packet by packet (`aifabric-packet`), alone or next to the flow engine.

use crate::report::{About, Note, Prediction};
use crate::{matrix, notes, Error, Study, TrafficSource, SCHEMA_VERSION};
use aifabric_dataplane::{Lb, Net, NetParams};
use aifabric_engine::traffic::TrafficResult;
use aifabric_model::Scenario;
pub use aifabric_packet::{Cc, Config, PacketLb, PacketResult, PfcResult};
use aifabric_workload::traffic::TrafficMatrix;
use aifabric_workload::Placement;
use serde::Serialize;

/// The packet engine's settings as a user gives them (the CLI's flags, the Python keywords):
/// a preset, then each setting given on top of it. `None` keeps the preset's (or the
/// default's) value.
#[derive(Clone, Debug, Default)]
pub struct PacketOptions {
    /// `uec-htsim` ([`Config::uec_htsim`]); `None`: [`Config::default`].
    pub preset: Option<String>,
    /// The load-balancing mode: one the packet engine runs (`ecmp`, `spray[:N]`,
    /// `mixed:N`, `adaptive`); the others are refused with the list.
    pub lb: Option<Lb>,
    /// `nscc`, `dcqcn`, `dcqcn-htsim` or `line-rate`.
    pub cc: Option<String>,
    /// NSCC's base RTT and window: `network` (the longest path's for every flow, htsim's
    /// default) or `path` (each flow's own path's).
    pub nscc_base_rtt: Option<String>,
    /// MTU on the wire, bytes.
    pub mtu_bytes: Option<u32>,
    /// Data-class queue per port, bytes.
    pub queue_bytes: Option<u64>,
    /// `MIN:MAX` bytes, or `off`.
    pub ecn: Option<String>,
    /// Trim (true) or drop (false) what does not fit.
    pub trim: Option<bool>,
    /// ACK every this many bytes (0: every packet).
    pub ack_bytes: Option<u32>,
    /// One latency for every link, microseconds.
    pub link_latency_us: Option<f64>,
    /// Per-switch forwarding latency, microseconds.
    pub switch_latency_us: Option<f64>,
    /// Retransmission timeout, microseconds.
    pub rto_us: Option<f64>,
    /// Seed.
    pub seed: Option<u64>,
    /// Stop at this simulated time, microseconds (default: when every flow is done).
    pub end_us: Option<f64>,
    /// Priority flow control: `on` (XOFF 200,000 B, XON 180,000 B per ingress link),
    /// `XOFF:XON` in bytes, or `off`.
    pub pfc: Option<String>,
    /// PFC headroom above XOFF per ingress link: `auto` (each link's own need, from its rate
    /// and delay) or bytes.
    pub pfc_headroom: Option<String>,
    /// Receiver-driven admission: `on` (512 KiB chunks, 2 outstanding per receiver),
    /// `CHUNK:WINDOW` (bytes, chunks) or `off`.
    pub admission: Option<String>,
    /// DSF zones: largest cell, bytes (default 256).
    pub dsf_cell_bytes: Option<u32>,
    /// DSF zones: one credit, bytes (default 4,096).
    pub dsf_credit_bytes: Option<u32>,
}

/// Which engine runs a traffic matrix: `flow` (max-min fair fluid, [`Study::traffic`]),
/// `packet` (packets through queues, [`Study::traffic_packet`]) or `both` (the two side by
/// side). Parses and prints as those words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// The flow engine alone.
    #[default]
    Flow,
    /// The packet engine alone.
    Packet,
    /// The packet engine, with the flow engine on the same matrix beside it.
    Both,
}

impl Engine {
    /// Every engine, as the command line lists them.
    pub const ALL: [Engine; 3] = [Engine::Flow, Engine::Packet, Engine::Both];

    /// Its name (`flow`, `packet`, `both`).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Flow => "flow",
            Engine::Packet => "packet",
            Engine::Both => "both",
        }
    }

    /// Whether the packet engine runs (`packet` or `both`).
    pub fn packet(self) -> bool {
        self != Engine::Flow
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Engine::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| format!("unknown engine `{s}`; use flow, packet or both"))
    }
}

/// Presets `PacketOptions::preset` takes.
pub const PRESETS: &str = "uec-htsim, roce";

/// PFC's `XOFF:XON` in bytes per ingress link (XON at most XOFF), as given to `flag`.
pub fn pfc_thresholds(flag: &str, v: &str) -> Result<(u64, u64), Error> {
    let bad = || {
        Error::bad_request(format!(
            "{flag} {v}: give XOFF:XON in bytes per ingress link \
             (e.g. 200000:180000, XON at most XOFF){}",
            if flag == "--pfc" { ", on or off" } else { "" }
        ))
    };
    let (xoff, xon): (u64, u64) = pair(v).ok_or_else(bad)?;
    if xon > xoff {
        return Err(bad());
    }
    Ok((xoff, xon))
}

/// `A:B`, each side parsed (spaces around either ignored).
fn pair<A: std::str::FromStr, B: std::str::FromStr>(v: &str) -> Option<(A, B)> {
    let (a, b) = v.split_once(':')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

fn us_to_ps(what: &str, us: f64) -> Result<u64, Error> {
    if (0.0..1e9).contains(&us) {
        Ok((us * 1e6).round() as u64)
    } else {
        Err(Error::bad_request(format!(
            "{what} {us}: give microseconds, a number >= 0"
        )))
    }
}

impl PacketOptions {
    /// The engine's configuration, or what is wrong with an option and how to write it.
    pub fn config(&self) -> Result<Config, Error> {
        let mut c = match self.preset.as_deref() {
            None => Config::default(),
            Some("uec-htsim") => Config::uec_htsim(),
            Some("roce") => Config::roce(),
            Some(p) => {
                return Err(Error::bad_request(format!(
                    "--preset {p}: unknown; presets are {PRESETS}"
                )))
            }
        };
        if let Some(lb) = self.lb {
            c.lb = PacketLb::try_from(lb).map_err(Error::bad_request)?;
        }
        if let Some(mtu) = self.mtu_bytes {
            c.mtu_bytes = mtu;
        }
        if let Some(cc) = &self.cc {
            c.cc = match cc.as_str() {
                // The preset's NSCC was scaled for its MTU: another MTU rescales it.
                "nscc"
                    if matches!(c.cc, aifabric_packet::Cc::Nscc(_)) && self.mtu_bytes.is_none() =>
                {
                    c.cc
                }
                "nscc" => aifabric_packet::Cc::NsccAuto,
                "line-rate" => aifabric_packet::Cc::LineRate,
                "dcqcn" => aifabric_packet::Cc::DcqcnAuto,
                "dcqcn-htsim" => aifabric_packet::Cc::DcqcnHtsimAuto,
                _ => {
                    return Err(Error::bad_request(format!(
                        "--cc {cc}: give nscc, dcqcn, dcqcn-htsim or line-rate"
                    )))
                }
            };
        } else if self.mtu_bytes.is_some() && matches!(c.cc, aifabric_packet::Cc::Nscc(_)) {
            c.cc = aifabric_packet::Cc::NsccAuto;
        }
        if let Some(b) = &self.nscc_base_rtt {
            c.nscc_path_rtt = match b.as_str() {
                "network" => false,
                "path" => true,
                _ => {
                    return Err(Error::bad_request(format!(
                        "--nscc-base-rtt {b}: give network (the longest path's, for every \
                         flow) or path (each flow's own)"
                    )))
                }
            };
        }
        if let Some(q) = self.queue_bytes {
            c.queue_bytes = q;
        }
        if let Some(e) = &self.ecn {
            c.ecn_bytes = match e.as_str() {
                "off" => None,
                _ => {
                    let bad = || {
                        Error::bad_request(format!(
                            "--ecn {e}: give MIN:MAX in bytes of queue (e.g. 37350:145250), \
                             MIN:MAX:PMAX with the marking probability at MAX (RED's Pmax, \
                             0 < PMAX <= 1; e.g. 5000:200000:0.01 as DCQCN's switches), or off"
                        ))
                    };
                    let mut parts = e.split(':');
                    let (a, b) = (parts.next().ok_or_else(bad)?, parts.next().ok_or_else(bad)?);
                    let pmax: f64 = match parts.next() {
                        Some(x) => x.trim().parse().map_err(|_| bad())?,
                        None => 1.0,
                    };
                    if parts.next().is_some() || !(pmax > 0.0 && pmax <= 1.0) {
                        return Err(bad());
                    }
                    let (a, b): (u64, u64) = (
                        a.trim().parse().map_err(|_| bad())?,
                        b.trim().parse().map_err(|_| bad())?,
                    );
                    c.ecn_max_probability = pmax;
                    Some((a, b))
                }
            };
        }
        if let Some(t) = self.trim {
            c.trim = t;
        }
        if let Some(a) = self.ack_bytes {
            c.ack_every_bytes = a;
        }
        if let Some(l) = self.link_latency_us {
            c.link_latency_ps = Some(us_to_ps("--link-latency-us", l)?);
        }
        if let Some(l) = self.switch_latency_us {
            c.switch_latency_ps = us_to_ps("--switch-latency-us", l)?;
        }
        if let Some(r) = self.rto_us {
            c.rto_ps = us_to_ps("--rto-us", r)?.max(1);
        }
        if let Some(s) = self.seed {
            c.seed = s;
        }
        if let Some(e) = self.end_us {
            c.end_ps = us_to_ps("--end-us", e)?;
        }
        if let Some(v) = &self.pfc {
            c.pfc = match v.as_str() {
                "off" => None,
                "on" => Some(c.pfc.unwrap_or_default()),
                _ => {
                    let (xoff, xon) = pfc_thresholds("--pfc", v)?;
                    Some(aifabric_packet::Pfc {
                        xoff_bytes: xoff,
                        xon_bytes: xon,
                        ..c.pfc.unwrap_or_default()
                    })
                }
            };
        }
        if let Some(h) = &self.pfc_headroom {
            let Some(pfc) = c.pfc.as_mut() else {
                return Err(Error::bad_request(format!(
                    "--pfc-headroom {h}: PFC is off; add --pfc on (or --preset roce)"
                )));
            };
            pfc.buffer_limited = h == "buffer";
            pfc.headroom_bytes = match h.as_str() {
                "auto" | "buffer" => None,
                _ => Some(h.trim().parse().map_err(|_| {
                    Error::bad_request(format!(
                        "--pfc-headroom {h}: give auto (each link's need), buffer (that \
                         need, shared out of each switch's HBM + SRAM) or bytes above XOFF per \
                         ingress link"
                    ))
                })?),
            };
        }
        if let Some(v) = &self.admission {
            c.admission = match v.as_str() {
                "off" => None,
                "on" => Some(c.admission.unwrap_or_default()),
                _ => {
                    let bad = || {
                        Error::bad_request(format!(
                            "--admission {v}: give on, off or CHUNK:WINDOW (payload bytes a \
                             clear-to-send covers, chunks outstanding per receiver; e.g. \
                             524288:2)"
                        ))
                    };
                    let (chunk, window): (u64, u32) = pair(v).ok_or_else(bad)?;
                    if chunk == 0 || window == 0 {
                        return Err(bad());
                    }
                    Some(aifabric_packet::Admission {
                        chunk_bytes: chunk,
                        window,
                    })
                }
            };
        }
        for (flag, v, field) in [
            (
                "--dsf-cell-bytes",
                self.dsf_cell_bytes,
                &mut c.dsf.cell_bytes,
            ),
            (
                "--dsf-credit-bytes",
                self.dsf_credit_bytes,
                &mut c.dsf.credit_bytes,
            ),
        ] {
            match v {
                Some(0) => {
                    return Err(Error::bad_request(format!(
                        "{flag} 0: give a size in bytes, at least 1"
                    )))
                }
                Some(b) => *field = b,
                None => {}
            }
        }
        if c.pfc.is_some() && c.trim {
            // A lossless class is never full: nothing to trim. Say so rather than ignore it.
            if self.trim == Some(true) {
                return Err(Error::bad_request(
                    "--trim with --pfc: a lossless data class never overflows, so nothing \
                     is trimmed; drop --trim (or turn PFC off)"
                        .to_owned(),
                ));
            }
            c.trim = false;
        }
        Ok(c)
    }
}

/// Packet over flow engine, per completion-time percentile (1 = they agree).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ratios {
    /// Fastest flow.
    pub min: f64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Slowest flow.
    pub max: f64,
    /// Makespan.
    pub makespan: f64,
}

/// A traffic matrix run by the packet engine, with the flow engine's answer beside it when
/// both were asked for.
#[derive(Clone, Debug, Serialize)]
pub struct PacketTrafficReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The fabric's name.
    pub spec: String,
    /// The file, or the pattern.
    pub source: String,
    /// GPUs placed (the matrix's nodes are the first of them).
    pub gpus: u32,
    /// How they were placed.
    pub placement: Placement,
    /// `packet` or `both`.
    pub engine: Engine,
    /// The packet engine's result (`packet`, its model's settings included) under the
    /// study's scenario; with a damaging scenario the healthy fabric's run (same placement)
    /// and the makespan's slowdown (when both runs completed every flow); notes (flows cut
    /// off, timeouts that were not losses, PFC's hidden causes).
    #[serde(flatten)]
    pub run: Prediction<PacketResult>,
    /// The flow engine's result on the same matrix (with `both`), each flow's bytes taken as
    /// the packet engine puts them on the wire (payload and a header per packet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<TrafficResult>,
    /// The flow engine's load balancing (with `both`): `ecmp` for `ecmp`, its fluid `spray`
    /// for `spray:N` and `adaptive`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_lb: Option<String>,
    /// Packet over flow engine (with `both`, when every packet-engine flow completed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratios: Option<Ratios>,
}

/// The matrix with each flow's bytes as the packet engine puts them on the wire: its payload
/// plus a header per packet (`ceil(bytes / (mtu - header))` packets). The fluid of the flow
/// engine then carries the same data bytes per link as the packets do, so the two engines'
/// completion times differ by what the packets add (queues, transients, the load balance,
/// ACKs on the reverse links), not by the header overhead, which is 1.6% at htsim's 4,150 B
/// MTU.
fn on_the_wire(tm: &TrafficMatrix, cfg: &Config) -> TrafficMatrix {
    let header = u64::from(cfg.header_bytes);
    let payload = u64::from(cfg.mtu_bytes.saturating_sub(cfg.header_bytes)).max(1);
    let mut wire = tm.clone();
    for f in &mut wire.flows {
        f.bytes += f.bytes.div_ceil(payload) * header;
    }
    wire
}

impl Study<'_> {
    /// Run a traffic matrix packet by packet under the study's scenario (and with `both`, the
    /// flow engine on the same matrix and placement, set side by side). Scale-up (NVLink)
    /// transfers are not modelled by the packet engine, so GPUs are placed one per domain
    /// and both engines send every flow over the network. Seeds: `cfg.seed` drives the
    /// packet engine and the flow engine's hashes and generated matrices.
    pub fn traffic_packet(
        &self,
        source: &TrafficSource,
        gpus: Option<u32>,
        policy: Placement,
        cfg: &Config,
        engine: Engine,
    ) -> Result<PacketTrafficReport, Error> {
        self.traffic_packet_with_progress(source, gpus, policy, cfg, engine, &mut |_| {})
    }

    /// [`Study::traffic_packet`], reporting the packet engine's progress (flows done,
    /// simulated time, events) every 2^20 events and at the end; under a scenario that
    /// damages anything, the healthy fabric's run (made last, for the slowdown) reports again
    /// from zero.
    pub fn traffic_packet_with_progress(
        &self,
        source: &TrafficSource,
        gpus: Option<u32>,
        policy: Placement,
        cfg: &Config,
        engine: Engine,
        progress: &mut dyn FnMut(&aifabric_packet::Progress),
    ) -> Result<PacketTrafficReport, Error> {
        if !engine.packet() {
            return Err(Error::bad_request(
                "the flow engine alone runs with Study::traffic".to_owned(),
            ));
        }
        let both = engine == Engine::Both;
        let c = &self.setup;
        let (tm, name) = matrix(source, cfg.seed)?;
        let n = gpus.unwrap_or(tm.nodes).max(tm.nodes);
        let placed = self.place(n, policy, 1)?;
        let params = NetParams {
            scale_up_gpus: 1,
            switch_latency_s: cfg.switch_latency_ps as f64 * 1e-12,
            ..c.net
        };
        let net = Net::new(self.fabric, &self.scenario, c.plan, c.bgp, params);
        let packet = aifabric_packet::run_with_progress(&net, &tm, &placed, cfg, progress)
            .map_err(|e| Error::bad_request(e.to_string()))?;
        // Ratios only when every flow of the packet run completed: a cut-off run has no
        // completion times to compare.
        let complete = packet.unfinished == 0;
        let (flow, flow_lb_name, ratios) = if both {
            let lb = Lb::from(cfg.lb).fluid_equivalent();
            let wire = on_the_wire(&tm, cfg);
            let flow = aifabric_engine::traffic::run(&net, &wire, &placed, lb, cfg.seed)
                .map_err(Error::runtime_from)?;
            let r = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
            let ratios = Ratios {
                min: r(packet.fct.min_s, flow.fct.min_s),
                p50: r(packet.fct.p50_s, flow.fct.p50_s),
                p99: r(packet.fct.p99_s, flow.fct.p99_s),
                max: r(packet.fct.max_s, flow.fct.max_s),
                makespan: r(packet.makespan_s, flow.makespan_s),
            };
            (Some(flow), Some(lb.name()), complete.then_some(ratios))
        } else {
            (None, None, None)
        };
        // The healthy fabric's run, after the scenario's flow run so that `net` is dropped
        // first: only one network is held at a time.
        drop(net);
        // It reports progress as the scenario's run did (a second pass of the same flows),
        // and a healthy run that cannot be made (e.g. more live paths than the forwarding
        // tables take) costs the baseline, not the answer: a note says why.
        let mut baseline_note = None;
        let healthy = if self.damaged() {
            let h = Net::new(
                self.fabric,
                &Scenario::healthy(self.fabric),
                c.plan,
                c.bgp,
                params,
            );
            match aifabric_packet::run_with_progress(&h, &tm, &placed, cfg, progress) {
                Ok(r) => Some(r),
                Err(e) => {
                    baseline_note = Some(Note::new(
                        About::Slowdown,
                        format!(
                            "no slowdown: the healthy fabric's packet run could not be made ({e})"
                        ),
                    ));
                    None
                }
            }
        } else {
            None
        };
        let mut notes = notes::packet(&packet, both);
        notes.extend(baseline_note);
        let mut run = Prediction::new(packet, healthy, None);
        run.notes = notes;
        Ok(PacketTrafficReport {
            schema_version: SCHEMA_VERSION,
            spec: self.fabric.name().to_owned(),
            source: name,
            gpus: n,
            placement: policy,
            engine,
            run,
            flow,
            flow_lb: flow_lb_name,
            ratios,
        })
    }
}
