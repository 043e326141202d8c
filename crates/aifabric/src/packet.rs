//! A traffic matrix packet by packet (`aifabric-packet`), alone or next to the flow engine.

use crate::matrix::matrix;
use crate::report::{About, Note, Prediction};
use crate::{notes, Error, Study, TrafficSource, SCHEMA_VERSION};
use aifabric_dataplane::{Lb, Net, NetParams};

mod budget;
pub(crate) mod critical;
mod options;
mod phases;
use aifabric_engine::traffic::TrafficResult;
use aifabric_model::Scenario;
pub use aifabric_packet::{Cc, Config, PacketLb, PacketResult, PfcResult, Progress};
use aifabric_workload::traffic::TrafficMatrix;
use aifabric_workload::Placement;
pub use budget::{check_flow_budget, estimate, Estimate};
pub use options::{
    parse_thresholds, AdmissionSetting, BaseRtt, CcChoice, Ecn, Headroom, PacketOptions,
    PfcSetting, Preset, MAX_LATENCY_US, PRESETS,
};
pub(crate) use phases::PacketTimer;
pub use phases::{PacketPhases, PhaseProgress, PhaseProgressFn, Timing, CHAIN_REPEATS};
use serde::Serialize;

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
    /// The packet engine fast-forwarding steady states ([`aifabric_packet::FastForward`]):
    /// packet by packet wherever the flows or their rates change, each flow at its
    /// measured rate across the stretches where nothing does.
    Hybrid,
}

impl Engine {
    /// Every engine, as the command line lists them.
    pub const ALL: [Engine; 4] = [Engine::Flow, Engine::Packet, Engine::Both, Engine::Hybrid];

    /// Its name (`flow`, `packet`, `both`).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Flow => "flow",
            Engine::Packet => "packet",
            Engine::Both => "both",
            Engine::Hybrid => "hybrid",
        }
    }

    /// Whether the packet engine runs (`packet`, `both` or `hybrid`).
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
            .ok_or_else(|| {
                format!(
                    "unknown engine `{s}`{}; use flow, packet, both or hybrid",
                    aifabric_model::did_you_mean_hint(s, &Engine::ALL.map(|e| e.name()))
                )
            })
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
    /// `hybrid` under `ecmp` with every flow started at once: what its cut ran packet by
    /// packet and what it left to the fluid (the scenario's run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<TrafficCut>,
}

/// The hybrid's cut of a traffic matrix: its critical flows (those the fluid finishes
/// within a tenth of the slowest) and every flow sharing a link with one ran packet by
/// packet; the others, at their fluid completion times, are in the result's figures.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TrafficCut {
    /// Flows simulated packet by packet.
    pub flows_simulated: u64,
    /// Of which critical.
    pub flows_critical: u64,
    /// Of which samples of their fluid levels, run with their links' flows: the left-out
    /// flows' completion times are taken from them.
    pub flows_sampled: u64,
    /// Critical flows left to the fluid (all alike: a few stand for them).
    pub flows_critical_fluid: u64,
    /// Flows left to the fluid.
    pub flows_fluid: u64,
}

/// Refuse the hybrid's cut of `tm` unless it balances by `ecmp` (every path known before
/// the run) and every flow starts at once (the fluid's finish times are from one start)
/// with no trigger.
fn cuttable(cfg: &Config, tm: &TrafficMatrix) -> Result<(), Error> {
    use aifabric_workload::traffic::Start;
    if cfg.lb != PacketLb::Ecmp {
        return Err(Error::bad_request(format!(
            "the cut needs every flow's path before the run: --lb ecmp, not {} (its packets \
             choose their paths as they run); leave out --cut to run every flow",
            cfg.lb.name()
        )));
    }
    if let Some(f) = tm
        .flows
        .iter()
        .find(|f| f.start != Start::AtPs(0) || f.done_trigger.is_some() || f.recv_trigger.is_some())
    {
        return Err(Error::bad_request(format!(
            "the cut times the flows it leaves out from one start: flow {} starts later or \
             by a trigger, or fires one; leave out --cut to run every flow",
            f.id
        )));
    }
    Ok(())
}

/// `tm` packet by packet on `net`, or under the hybrid's cut (`cut`): its kept flows
/// packet by packet and the others at their fluid completion times scaled as their fluid
/// level's seeds fared (`critical::left_out_fct_s`), merged into the result's flow counts,
/// completion times and makespan.
fn run_traffic(
    fabric: &aifabric_model::Fabric,
    net: &Net<'_>,
    tm: &TrafficMatrix,
    placed: &[aifabric_model::DeviceId],
    cfg: &Config,
    cut: bool,
    progress: &mut dyn FnMut(&aifabric_packet::Progress),
) -> Result<(PacketResult, Option<TrafficCut>), Error> {
    if !cut {
        let r = aifabric_packet::run_with_progress(net, tm, placed, cfg, progress)
            .map_err(|e| Error::bad_request(e.to_string()))?;
        return Ok((r, None));
    }
    let bytes: Vec<u64> = tm.flows.iter().map(|f| f.bytes).collect();
    let mut the_cut: Option<critical::Cut> = None;
    let mut stats = TrafficCut::default();
    let hosts = &placed[..tm.nodes as usize];
    let part = aifabric_packet::run_part(
        net,
        tm,
        placed,
        cfg,
        &mut |paths| {
            let c = critical::cut(paths, &bytes);
            let kept = tm
                .flows
                .iter()
                .zip(&c.keep)
                .filter(|(_, &k)| k)
                .map(|x| x.0);
            let e = budget::estimate_flows(fabric, kept, hosts, cfg).on_built_network();
            budget::check_estimate(fabric, &e, false)
                .map_err(|e| aifabric_packet::PacketError::Invalid(e.to_string()))?;
            stats.flows_critical = c.critical;
            stats.flows_sampled = c.sampled;
            stats.flows_critical_fluid = c.critical_fluid;
            let keep = c.keep.clone();
            the_cut = Some(c);
            Ok(Some(keep))
        },
        progress,
    )
    .map_err(|e| Error::bad_request(e.to_string()))?;
    let mut r = part.result;
    // The flows left out: their fluid times, as the sampled flows at their fluid level fared.
    let mut left: Vec<(f64, u64)> = match &the_cut {
        Some(c) => critical::left_out_fct_s(c, &r.fct_by_flow_s)
            .into_iter()
            .zip(bytes.iter().zip(&c.keep).filter(|(_, &k)| !k).map(|x| *x.0))
            .collect(),
        None => Vec::new(),
    };
    stats.flows_simulated = part.kept;
    stats.flows_fluid = left.len() as u64;
    r.flows += stats.flows_fluid;
    r.bytes += left.iter().map(|x| x.1).sum::<u64>();
    // Those the fluid finishes after the run's end are unfinished, as packet flows are.
    let end_s = cfg.end_ps as f64 * 1e-12;
    let before = left.len();
    left.retain(|x| x.0 <= end_s);
    r.unfinished += (before - left.len()) as u64;
    if !left.is_empty() {
        let fluid_max = left.iter().map(|x| x.0).fold(0.0, f64::max);
        r.makespan_s = r.makespan_s.max(fluid_max);
        r.fct_sorted_s.extend(left.iter().map(|x| x.0));
        r.fct_sorted_s.sort_unstable_by(f64::total_cmp);
        r.fct = aifabric_dataplane::FctStats::of_sorted(&r.fct_sorted_s);
    }
    Ok((r, Some(stats)))
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
        self.traffic_packet_run(source, gpus, policy, cfg, engine, false, progress)
    }

    /// The hybrid cut to the matrix's critical flows (`traffic --engine hybrid --cut`): the
    /// flows the fluid finishes within a tenth of the slowest, 4 samples of each fluid level
    /// holding 2% of the flows and 16 or more, and every flow sharing a link with one run
    /// packet by packet (fast-forwarding their steady states), the others at their fluid
    /// completion times scaled as their level's samples fared ([`TrafficCut`] says which).
    /// The makespan and the tail are made by the flows simulated; the median is the
    /// samples' where levels are sampled, else the fluid's, short by what it does not see
    /// (the window's ramp, transient queues: the README's table).
    /// Refused unless `cfg` balances by `ecmp` (every path known before the run) and every
    /// flow starts at once with no trigger.
    pub fn traffic_packet_cut(
        &self,
        source: &TrafficSource,
        gpus: Option<u32>,
        policy: Placement,
        cfg: &Config,
        progress: &mut dyn FnMut(&aifabric_packet::Progress),
    ) -> Result<PacketTrafficReport, Error> {
        self.traffic_packet_run(source, gpus, policy, cfg, Engine::Hybrid, true, progress)
    }

    #[allow(clippy::too_many_arguments)]
    fn traffic_packet_run(
        &self,
        source: &TrafficSource,
        gpus: Option<u32>,
        policy: Placement,
        cfg: &Config,
        engine: Engine,
        cut: bool,
        progress: &mut dyn FnMut(&aifabric_packet::Progress),
    ) -> Result<PacketTrafficReport, Error> {
        if !engine.packet() {
            return Err(Error::bad_request(
                "the flow engine alone runs with Study::traffic".to_owned(),
            ));
        }
        let both = engine == Engine::Both;
        // The hybrid is the packet engine fast-forwarding steady states (its defaults
        // unless the configuration sets them).
        let hybrid_cfg;
        let cfg = if engine == Engine::Hybrid {
            hybrid_cfg = Config {
                fast_forward: Some(cfg.fast_forward.unwrap_or_default()),
                ..cfg.clone()
            };
            &hybrid_cfg
        } else {
            cfg
        };
        let c = &self.setup;
        let (tm, name) = matrix(source, cfg.seed)?;
        let n = gpus.unwrap_or(tm.nodes).max(tm.nodes);
        let placed = self.place_matrix(source, &tm, n, policy, 1)?;
        if cut {
            cuttable(cfg, &tm)?;
            // The cut's part is checked once known; up front, the network's tables.
            let e = budget::estimate_flows(
                self.fabric,
                std::iter::empty(),
                &placed[..tm.nodes as usize],
                cfg,
            );
            budget::check_estimate(self.fabric, &e, false)?;
        } else {
            budget::check(self.fabric, &tm, &placed[..tm.nodes as usize], cfg, both)?;
        }
        let params = NetParams {
            scale_up_gpus: 1,
            switch_latency_s: cfg.switch_latency_ps as f64 * 1e-12,
            ..c.net
        };
        let net = Net::new(self.fabric, &self.scenario, c.plan, c.bgp, params);
        let (packet, cut_stats) = run_traffic(self.fabric, &net, &tm, &placed, cfg, cut, progress)?;
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
            match run_traffic(self.fabric, &h, &tm, &placed, cfg, cut, progress) {
                Ok(r) => Some(r.0),
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
        notes.extend(cut_stats.as_ref().map(notes::traffic_cut));
        notes.extend(flow.as_ref().and_then(notes::coalesced));
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
            cut: cut_stats,
        })
    }
}
