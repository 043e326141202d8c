//! The aifabric library API: the pipeline (spec -> model -> control plane -> workload ->
//! engine -> report) behind one type.
//!
//! A [`Study`] holds a fabric, a scenario (what failed or is drained) and a [`Setup`]
//! (control-plane and engine options), and answers one question per method. When the
//! scenario damages anything, every prediction is also made on the healthy fabric, with the
//! same placement, and the result carries the slowdown. Results are the JSON contracts the
//! CLI prints with `--json` ([`CollectiveReport`], [`JobReport`], [`TrafficReport`]).
//!
//! ```
//! use aifabric::{CollectiveRequest, Setup, Study};
//!
//! let fabric = aifabric_spec::load("llama3-24k").unwrap();
//! let study = Study::healthy(&fabric, Setup::default());
//! let report = study
//!     .collective(&CollectiveRequest {
//!         gpus: 64,
//!         sizes: vec![1 << 20],
//!         ..CollectiveRequest::default()
//!     })
//!     .unwrap();
//! assert_eq!(report.rows.len(), 1);
//! assert!(report.rows[0].bus_bw_gbytes_per_s > 0.0);
//! ```

/// The README's Rust examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

pub mod at_risk;
pub mod cluster;
mod compare;
pub mod fabrics;
pub mod failures;
mod gather;
pub mod goodput;
mod inventory;
mod matrix;
mod notes;
pub mod packet;
pub mod plan;
mod predict;
mod publish;
mod report;
pub mod size;
pub mod sweep;
pub mod tables;
pub mod traces;
pub mod validation;
mod verify;

pub use aifabric_chakra::io::TraceSet;

/// Remove every output still being written (temporary files, staging directories of traces)
/// and keep anything from being put in place afterwards: what an interrupt (Ctrl-C) handler
/// calls before exiting, so an interrupted run leaves no partial output. Returns how many
/// were removed.
pub fn abandon_outputs() -> usize {
    aifabric_chakra::io::abandon_outputs()
}
/// Input files read with a size limit (`/dev/zero` as an input is an error, not an abort).
/// Threads a parallel run uses in this process (rayon's pool: `RAYON_NUM_THREADS`, else
/// every CPU this process may run on).
pub fn threads() -> usize {
    rayon::current_num_threads()
}

/// The memory a run in this process may take, in words: the figure and where it came from
/// (`3.2 GiB (AIFABRIC_MAX_MEMORY_BYTES)`), or why the variable cannot be read.
pub fn memory_limit() -> String {
    use aifabric_model::limits;
    match limits::memory_limit() {
        Ok((bytes, source)) => limits::describe_limit(bytes, source),
        Err(e) => e,
    }
}

pub use aifabric_model::input;
/// The fabric model's types that requests and results name.
pub mod model {
    pub use aifabric_model::{DeviceId, Fabric, FabricView, Role, Scenario};
}

/// Control-plane options and what the control plane answers (routes, blackholes, DSF IBM).
pub mod routing {
    pub use aifabric_routing::aggregation::{Aggregation, AggregationTier, BlackholeReport};
    pub use aifabric_routing::bgp::{AsnPlan, BandwidthMode, BgpConfig, SoftDrain};
    pub use aifabric_routing::fib::{RouteKind, RouteView};
    pub use aifabric_routing::ibm::ZoneIbm;
    pub use aifabric_routing::ucmp::MissingBandwidth;
}

/// The capacity report and the PFC buffer check.
pub mod capacity {
    pub use crate::inventory::{AppliedScenario, Capacity, Counts, Inventory, UsableGpus};
    pub use aifabric_capacity::buffers::{BufferOptions, BufferReport};
    pub use aifabric_capacity::CapacityReport;
}

/// The flow engine's results inside the predictions (collectives, jobs, traffic).
pub mod flow {
    pub use aifabric_dataplane::WeightDifferences;
    pub use aifabric_dataplane::{FctStats, SlowFlow};
    pub use aifabric_engine::job::StepResult;
    pub use aifabric_engine::sim::{Bottleneck, CollectiveResult, TierUtil};
    pub use aifabric_engine::traffic::TrafficResult;
}

/// The network as built: a NetBox inventory against the plan
/// ([`aifabric_inventory`]), and what the drift does to routing.
pub mod as_built;

/// The export formats, and the HTML report's data.
pub mod export {
    pub use crate::publish::compare_reports;
    pub use aifabric_report::compare::{Change, Comparison};
    pub use aifabric_report::data::{FailedSection, ReportData};
    pub use aifabric_report::export::Format;
}

pub use aifabric_chakra::output::{
    check_output_dir, check_output_dir_into, check_output_file, write_atomic,
};

/// The pipeline's stages (one crate each), for lower-level calls: callers of the facade use
/// its own vocabulary (the modules above) and reach in here only to read input files with
/// located errors (`stages::spec`).
pub mod stages {
    pub use aifabric_capacity as capacity;
    pub use aifabric_chakra as chakra;
    pub use aifabric_dataplane as dataplane;
    pub use aifabric_engine as engine;
    pub use aifabric_failures as failures;
    pub use aifabric_model as model;
    pub use aifabric_packet as packet;
    pub use aifabric_report as report;
    pub use aifabric_routing as routing;
    pub use aifabric_spec as spec;
    pub use aifabric_workload as workload;
}

pub use aifabric_dataplane::{Lb, NetParams};
/// `lb` if the flow engine runs it, else why not (the modes it runs).
pub use aifabric_engine::check_lb as check_flow_lb;
pub use aifabric_routing::bgp::{AsnPlan, BgpConfig};
pub use aifabric_workload::traffic::Pattern;
pub use aifabric_workload::{Algo, Op, Placement, Proto};
pub use failures::{parse_keep, FailureRequest, DEFAULT_KEEP};
pub use gather::{ReportJob, ReportOptions};
pub use packet::{Engine, PacketTrafficReport};
pub use publish::ExportedFile;
pub use report::{
    notes_about, versioned, About, CollectiveReport, CollectiveRow, Crossing, JobReport, LbWeights,
    MemoryFit, Note, Outcome, Predicted, Prediction, ReplayReport, TrafficReport, Versioned,
    SCHEMA_VERSION,
};
pub use size::Sizes;

use aifabric_engine::sim::SimError;
use aifabric_model::{DeviceId, Fabric, Scenario};
use aifabric_workload::placement;
use compare::Both;
use matrix::matrix;

/// Control-plane and engine options shared by every question.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// ASN plan of the eBGP fabric.
    pub plan: AsnPlan,
    /// Control-plane settings (link-bandwidth community, multipath, drains).
    pub bgp: BgpConfig,
    /// Engine parameters (scale-up domain, switch latency).
    pub net: NetParams,
    /// Load balancing.
    pub lb: Lb,
    /// Seed of the switches' hashes (and of generated traffic and fragmented placement).
    pub seed: u64,
    /// Channels per collective; 0: automatic (rail-aligned rings).
    pub channels: u32,
}

impl Default for Setup {
    /// The CLI's defaults: RFC 7938 ASNs, cumulative link bandwidth, ECMP, seed 1, automatic
    /// channels, 8-GPU NVLink domains.
    fn default() -> Self {
        Setup {
            plan: AsnPlan::Rfc7938,
            bgp: BgpConfig::default(),
            net: NetParams::default(),
            lb: Lb::Ecmp,
            seed: 1,
            channels: 0,
        }
    }
}

impl Setup {
    /// The control-plane options (ASN plan, link bandwidth, paths, group size, pruning,
    /// missing-bandwidth fallback, soft drain) by the CLI's flag names: what
    /// [`Setup::from_options`] reads back to the same control plane.
    pub fn bgp_options(&self) -> std::collections::BTreeMap<String, String> {
        let b = &self.bgp;
        [
            ("asn_plan", self.plan.to_string()),
            ("bandwidth", b.bandwidth.to_string()),
            ("group_size", b.group_size.to_string()),
            ("max_paths", b.max_paths.to_string()),
            ("nsf_pruning", b.nsf_pruning.to_string()),
            ("missing_bandwidth", b.missing.to_string()),
            ("soft_drain", b.soft_drain.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// The options by the CLI's flag names (`lb`, `seed`, `bandwidth`, `nsf_pruning`, ...),
    /// values as text, over the defaults: what the Python package's keywords and a sweep
    /// file's workload `options` give. An unknown name or a bad value is a bad request
    /// naming it.
    pub fn from_options<'a>(
        opts: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Result<Setup, Error> {
        fn parse<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, Error>
        where
            T::Err: std::fmt::Display,
        {
            v.parse()
                .map_err(|e| Error::bad_request(format!("{key}={v:?}: {e}")))
        }
        let mut s = Setup::default();
        let mut opts: Vec<_> = opts.into_iter().collect();
        opts.sort();
        for (k, v) in opts {
            let v = v.as_str();
            match k.as_str() {
                "asn_plan" => s.plan = parse(k, v)?,
                "bandwidth" => s.bgp.bandwidth = parse(k, v)?,
                "group_size" => s.bgp.group_size = parse(k, v)?,
                "max_paths" => s.bgp.max_paths = parse(k, v)?,
                "nsf_pruning" => s.bgp.nsf_pruning = parse(k, v)?,
                "missing_bandwidth" => s.bgp.missing = parse(k, v)?,
                "soft_drain" => s.bgp.soft_drain = parse(k, v)?,
                "lb" => {
                    s.lb = aifabric_engine::check_lb(parse(k, v)?)
                        .map_err(|e| Error::bad_request(format!("{k}={v:?}: {e}")))?
                }
                "seed" => s.seed = parse(k, v)?,
                "channels" => s.channels = parse(k, v)?,
                "scale_up" => s.net.scale_up_gpus = parse(k, v)?,
                "scale_up_gbs" => s.net.scale_up_bytes_per_s = parse::<f64>(k, v)? * 1e9,
                "switch_latency_us" => s.net.switch_latency_s = parse::<f64>(k, v)? * 1e-6,
                _ => {
                    return Err(Error::bad_request(format!(
                        "unknown option `{k}`; options are {}",
                        Setup::OPTIONS.join(", ")
                    )))
                }
            }
        }
        let n = &s.net;
        if s.bgp.group_size == 0 || s.bgp.max_paths == 0 || n.scale_up_gpus == 0 {
            return Err(Error::bad_request(
                "group_size, max_paths and scale_up must be at least 1".into(),
            ));
        }
        if s.channels > 64 {
            return Err(Error::bad_request(
                "channels must be 0 (automatic) to 64".into(),
            ));
        }
        if !(n.scale_up_bytes_per_s.is_finite() && n.scale_up_bytes_per_s > 0.0) {
            return Err(Error::bad_request(
                "scale_up_gbs must be a positive number".into(),
            ));
        }
        if !(n.switch_latency_s.is_finite() && n.switch_latency_s >= 0.0) {
            return Err(Error::bad_request(
                "switch_latency_us must be a number >= 0".into(),
            ));
        }
        Ok(s)
    }

    /// The option names [`Setup::from_options`] takes (the CLI's flags, `_` for `-`).
    pub const OPTIONS: &'static [&'static str] = &[
        "asn_plan",
        "bandwidth",
        "group_size",
        "max_paths",
        "nsf_pruning",
        "missing_bandwidth",
        "soft_drain",
        "lb",
        "seed",
        "channels",
        "scale_up",
        "scale_up_gbs",
        "switch_latency_us",
    ];
}

/// The error of a stage under an [`Error`]: what [`std::error::Error::source`] returns, to
/// downcast to the stage's own type (e.g. `aifabric_engine::sim::SimError`).
type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a question could not be answered. Its text (`message`) is what the CLI prints; when a
/// stage's error is behind it, `message` already includes that error's text and `source` is
/// the error itself, so callers walk [`std::error::Error::source`] for the typed error rather
/// than print the chain.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request cannot be met as asked (too many GPUs, a bad algorithm for the group, a
    /// step too big for memory, a bad traffic file): change the request. The CLI exits 2.
    #[error("{message}")]
    BadRequest {
        /// What is wrong, with the fix.
        message: String,
        /// The stage's error, when one is behind it.
        #[source]
        source: Option<Source>,
    },
    /// The fabric cannot carry it (GPUs cut off by the scenario). The CLI exits 1.
    #[error("{message}")]
    Runtime {
        /// What failed.
        message: String,
        /// The stage's error, when one is behind it.
        #[source]
        source: Option<Source>,
    },
}

impl Error {
    /// A bad request told by `message` alone.
    pub(crate) fn bad_request(message: String) -> Self {
        Error::BadRequest {
            message,
            source: None,
        }
    }

    /// A bad request caused by a stage's error `e`, told by its text.
    pub(crate) fn bad_request_from(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error::BadRequest {
            message: e.to_string(),
            source: Some(Box::new(e)),
        }
    }

    /// A runtime failure caused by a stage's error `e`, told by its text.
    pub(crate) fn runtime_from(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error::Runtime {
            message: e.to_string(),
            source: Some(Box::new(e)),
        }
    }

    /// A runtime failure caused by a stage's error `e`, told as `context: e`.
    pub(crate) fn runtime_in(
        context: &str,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error::Runtime {
            message: format!("{context}: {e}"),
            source: Some(Box::new(e)),
        }
    }

    /// The same error with `prefix` in front of its text.
    pub(crate) fn prefixed(mut self, prefix: &str) -> Self {
        match &mut self {
            Error::BadRequest { message, .. } | Error::Runtime { message, .. } => {
                *message = format!("{prefix}{message}");
            }
        }
        self
    }

    /// What the user is told (the error's text).
    pub fn message(&self) -> &str {
        match self {
            Error::BadRequest { message, .. } | Error::Runtime { message, .. } => message,
        }
    }
}

impl From<aifabric_chakra::replay::ReplayError> for Error {
    fn from(e: aifabric_chakra::replay::ReplayError) -> Self {
        if e.is_input() {
            Error::bad_request_from(e)
        } else {
            Error::runtime_from(e)
        }
    }
}

impl From<SimError> for Error {
    fn from(e: SimError) -> Self {
        match e {
            SimError::Schedule(_) | SimError::Invalid(_) => Error::bad_request_from(e),
            _ => Error::runtime_from(e),
        }
    }
}

/// An operation [`Study::collective`] runs, by name (broadcast and reduce are known to the
/// library, for traces, but not run as collectives on their own).
pub fn collective_op(s: &str) -> Result<Op, String> {
    match s.parse::<Op>() {
        Ok(op @ (Op::AllReduce | Op::AllGather | Op::ReduceScatter | Op::AllToAll)) => Ok(op),
        _ => Err(format!(
            "unknown operation `{s}`{}; use all_reduce, all_gather, reduce_scatter or \
             all_to_all",
            aifabric_model::did_you_mean_hint(
                s,
                &["all_reduce", "all_gather", "reduce_scatter", "all_to_all"]
            )
        )),
    }
}

/// One collective over a sweep of sizes.
#[derive(Clone, Debug)]
pub struct CollectiveRequest {
    /// The operation.
    pub op: Op,
    /// `None`: `auto`, NCCL's tuner's choice per size (direct for all-to-all).
    pub algo: Option<Algo>,
    /// NCCL protocol; `None`: `auto`, the tuner's choice per size.
    pub proto: Option<Proto>,
    /// GPUs in the group.
    pub gpus: u32,
    /// How they are placed (on the healthy fabric).
    pub placement: Placement,
    /// Message sizes, bytes (nccl-tests' meaning per operation).
    pub sizes: Vec<u64>,
    /// Software latency per step, seconds, on top of NCCL's protocol latencies.
    pub alpha_s: f64,
}

impl Default for CollectiveRequest {
    fn default() -> Self {
        CollectiveRequest {
            op: Op::AllReduce,
            algo: None,
            proto: None,
            gpus: 1024,
            placement: Placement::Packed,
            sizes: vec![1 << 30],
            alpha_s: 0.0,
        }
    }
}

/// How to replay a Chakra trace; `None` takes the trace's own metadata, else the defaults
/// (packed placement, an H100's peak at 40%, 5 us per collective step).
#[derive(Clone, Debug)]
pub struct ReplayRequest {
    /// Placement of the ranks.
    pub placement: Option<Placement>,
    /// Per-step collective latency, seconds.
    pub alpha_s: Option<f64>,
    /// Peak FLOP/s per GPU for compute nodes' `num_ops`.
    pub peak_flops_per_s: Option<f64>,
    /// Share of the peak reached.
    pub efficiency: Option<f64>,
    /// Nodes per rank held at once.
    pub window: u32,
}

impl Default for ReplayRequest {
    fn default() -> Self {
        ReplayRequest {
            placement: None,
            alpha_s: None,
            peak_flops_per_s: None,
            efficiency: None,
            window: 1024,
        }
    }
}

/// Where a traffic matrix comes from.
#[derive(Clone, Debug)]
pub enum TrafficSource {
    /// A file: htsim's connection matrix, or `.csv`.
    File(String),
    /// A generator over `gpus` GPUs, flows of `bytes`.
    Pattern {
        /// The generator.
        pattern: Pattern,
        /// Nodes it spans.
        gpus: u32,
        /// Bytes per flow.
        bytes: u64,
    },
}

/// A fabric, a scenario and a setup: every prediction on them.
pub struct Study<'f> {
    fabric: &'f Fabric,
    scenario: Scenario,
    setup: Setup,
    /// The scenario as the user gave it, for results that name it ([`Study::described`]).
    description: Option<String>,
}

impl<'f> Study<'f> {
    /// A study of `fabric` under `scenario`.
    pub fn new(fabric: &'f Fabric, scenario: Scenario, setup: Setup) -> Self {
        Study {
            fabric,
            scenario,
            setup,
            description: None,
        }
    }

    /// The same study, its scenario described as the user gave it (`drain east.bag.plane1;
    /// scenario s.yaml`): results that name the scenario they applied (the capacity
    /// report's `scenario`) use it. Without one they say `healthy` or that it was not
    /// described.
    pub fn described(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// A study of the healthy `fabric`.
    pub fn healthy(fabric: &'f Fabric, setup: Setup) -> Self {
        Study::new(fabric, Scenario::healthy(fabric), setup)
    }

    /// The fabric studied.
    pub fn fabric(&self) -> &Fabric {
        self.fabric
    }

    /// What failed or is drained.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The options every question uses.
    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// Whether the scenario fails or drains anything (then results are compared with the
    /// healthy fabric's).
    pub fn damaged(&self) -> bool {
        !self.scenario.unusable().is_empty() || !self.scenario.drained_soft.is_empty()
    }

    /// `n` GPUs placed by `policy` on the healthy fabric (a scenario then hits the job where
    /// it runs), in domains of `scale_up` GPUs.
    pub fn place(&self, n: u32, policy: Placement, scale_up: u32) -> Result<Vec<DeviceId>, Error> {
        let healthy = Scenario::healthy(self.fabric);
        placement::place(self.fabric, n, scale_up, policy, &healthy.unusable())
            .map_err(Error::bad_request_from)
    }

    /// Why `policy` (not `packed`) put the GPUs `placed` exactly where `packed` would have:
    /// a comparison of the two would show nothing. `None` when they differ.
    pub fn placement_note(
        &self,
        placed: &[DeviceId],
        policy: Placement,
        scale_up: u32,
    ) -> Option<String> {
        if policy == Placement::Packed {
            return None;
        }
        let packed = self
            .place(placed.len() as u32, Placement::Packed, scale_up)
            .ok()?;
        if packed != placed {
            return None;
        }
        let f = self.fabric;
        let mut buildings: Vec<_> = f
            .devices_with_role(aifabric_model::Role::Gpu)
            .map(|g| f.zones()[f.device(g).zone.idx()].building)
            .collect();
        buildings.sort_unstable();
        buildings.dedup();
        let why = match policy {
            Placement::Spread if buildings.len() <= 1 => format!(
                "{} has one building, and spread goes round the buildings",
                f.name()
            ),
            Placement::Spread => "round-robin over the buildings lands on the same GPUs".into(),
            Placement::TopologyAware => {
                "the fewest zones that hold them are the first ones, as packed takes them".into()
            }
            Placement::Fragmented { .. } => "the draw picked the first domains in order".into(),
            Placement::Packed => unreachable!("returned above"),
        };
        Some(format!(
            "{} places these {} GPUs exactly as packed does ({why}): comparing the two shows \
             nothing here",
            policy.name(),
            placed.len()
        ))
    }

    /// A traffic matrix event by event: flow completion times, utilization per tier, and with
    /// a damaging scenario the makespan and P99 slowdowns. The matrix's nodes are the first
    /// GPUs of the placement (`gpus` of them at least).
    pub fn traffic(
        &self,
        source: &TrafficSource,
        gpus: Option<u32>,
        policy: Placement,
    ) -> Result<TrafficReport, Error> {
        self.traffic_run(source, gpus, policy, false)
            .map(|(r, _)| r)
    }

    /// [`Study::traffic`] with its per-record tables (of the run under the study's scenario):
    /// every flow ([`tables::flows`]) and every resource that carried traffic
    /// ([`tables::links`]).
    pub fn traffic_tables(
        &self,
        source: &TrafficSource,
        gpus: Option<u32>,
        policy: Placement,
    ) -> Result<(TrafficReport, TrafficTables), Error> {
        self.traffic_run(source, gpus, policy, true)
            .map(|(r, t)| (r, t.expect("asked for")))
    }

    fn traffic_run(
        &self,
        source: &TrafficSource,
        gpus: Option<u32>,
        policy: Placement,
        detail: bool,
    ) -> Result<(TrafficReport, Option<TrafficTables>), Error> {
        let c = &self.setup;
        let (tm, name) = matrix(source, c.seed)?;
        let n = gpus.unwrap_or(tm.nodes).max(tm.nodes);
        crate::packet::check_flow_budget(&tm)?;
        let placed = self.place_matrix(source, &tm, n, policy, c.net.scale_up_gpus)?;
        let mut first = detail;
        let runs = Both::nets(self, c.net).try_map(|net| {
            // Only the scenario's run (the first) is detailed.
            if std::mem::take(&mut first) {
                aifabric_engine::traffic::run_detailed(net, &tm, &placed, c.lb, c.seed)
                    .map(|(r, d)| (r, Some(d)))
            } else {
                aifabric_engine::traffic::run(net, &tm, &placed, c.lb, c.seed).map(|r| (r, None))
            }
        })?;
        let base = runs.healthy.map(|(b, _)| b);
        let (now, detail) = runs.now;
        let tables = detail.map(|d| {
            let names: Vec<String> = placed
                .iter()
                .map(|&g| self.fabric.device_name(g).to_owned())
                .collect();
            TrafficTables {
                flows: tables::flows(&tm, &names, &d, &now.fct_s),
                links: tables::links(&d),
            }
        });
        let p99_slowdown = base.as_ref().map(|b| now.fct.p99_s / b.fct.p99_s);
        let notes = notes::traffic(&now);
        let mut run = Prediction::new(now, base, None);
        run.notes = notes;
        let report = TrafficReport {
            schema_version: SCHEMA_VERSION,
            spec: self.fabric.name().to_owned(),
            source: name,
            gpus: n,
            placement: policy,
            lb: c.lb.name(),
            seed: c.seed,
            run,
            p99_slowdown,
        };
        Ok((report, tables))
    }
}

/// The per-record tables of a traffic run ([`Study::traffic_tables`]).
pub struct TrafficTables {
    /// One row per flow.
    pub flows: tables::arrow_array::RecordBatch,
    /// One row per resource that carried traffic.
    pub links: tables::arrow_array::RecordBatch,
}

impl Study<'_> {
    /// Replay the Chakra trace `set` rank by rank, its collectives and transfers on the
    /// engine; with a damaging scenario also on the healthy fabric (same placement), and the
    /// slowdown. `progress` gets the nodes replayed so far (scenario run only).
    pub fn replay(
        &self,
        set: &TraceSet,
        req: &ReplayRequest,
        progress: &dyn Fn(u64),
    ) -> Result<ReplayReport, Error> {
        let c = &self.setup;
        let opts = aifabric_chakra::fabric::FabricOptions {
            placement: req.placement,
            lb: c.lb,
            seed: c.seed,
            channels: c.channels,
            plan: c.plan,
            bgp: c.bgp,
            params: c.net,
            scale_up_fixed: false,
            alpha_s: req.alpha_s,
            peak_flops_per_s: req.peak_flops_per_s,
            efficiency: req.efficiency,
            window: req.window,
        };
        let prepared = aifabric_chakra::fabric::Prepared::new(self.fabric, set, &opts)?;
        let nets = Both::nets(self, prepared.params());
        let mut first = true;
        let runs = nets.try_map(|net| {
            let quiet: &dyn Fn(u64) = &|_| {};
            let p = if std::mem::take(&mut first) {
                progress
            } else {
                quiet
            };
            prepared.run(net, set, &opts, p)
        })?;
        let crossing = compare::crossing(self, runs.healthy.iter().map(|h| &h.used_links));
        let (replay, simulations) = (runs.now.replay, runs.now.simulations);
        let healthy = runs.healthy.map(|h| h.replay);
        let mut run = Prediction::new(replay, healthy, crossing);
        run.notes
            .extend(run.crossing.as_ref().map(|c| notes::crossing(c, "replay")));
        let notes = notes::replay(&run.result, run.slowdown, run.crossing.as_ref());
        run.notes.extend(notes);
        Ok(ReplayReport {
            schema_version: SCHEMA_VERSION,
            spec: self.fabric.name().to_owned(),
            placement: prepared.placement().name(),
            lb: c.lb.name(),
            flops_per_s: prepared.flops_per_s(),
            alpha_s: prepared.alpha_s(),
            trace: prepared.info().clone(),
            run,
            simulations,
            placement_note: self.placement_note(
                prepared.gpus(),
                prepared.placement(),
                prepared.params().scale_up_gpus,
            ),
        })
    }
}
