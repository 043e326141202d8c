//! The JSON contracts: what every `aifabric ... --json` prints, and what the library returns.
//!
//! The collective, job, traffic and replay reports carry `schema_version` themselves; every
//! other output (capacity, routes, blackholes, failures, ...) is the stage's own report wrapped
//! in [`Versioned`], so each JSON document starts with `"schema_version"`.

use aifabric_chakra::info::TraceInfo;
use aifabric_chakra::replay::Replay;
use aifabric_engine::job::StepResult;
use aifabric_engine::sim::CollectiveResult;
use aifabric_engine::traffic::TrafficResult;
use aifabric_packet::PacketResult;
use aifabric_workload::job::MemoryNeed;
use aifabric_workload::{Algo, Op, Placement, Proto};
use serde::Serialize;

/// Version of these JSON contracts; raised when a field changes meaning or name. 1: the first
/// versioned contracts (bandwidths in `*_gbytes_per_s`, 10^9 bytes per second). 2: a
/// collective's rows carry the NCCL protocol and channels, and `predicted` (algorithm,
/// protocol, `time_us`) replaces `predicted_us`; its report the `protocol` asked for.
pub const SCHEMA_VERSION: u32 = 2;

/// A JSON contract with its version in front: `{"schema_version": N, ...fields of body}`.
/// `T` must serialize as a struct or a map (lists go in a named field first).
#[derive(Serialize)]
pub struct Versioned<'a, T: Serialize> {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The report.
    #[serde(flatten)]
    pub body: &'a T,
}

/// `body` with the current [`SCHEMA_VERSION`].
pub fn versioned<T: Serialize>(body: &T) -> Versioned<'_, T> {
    Versioned {
        schema_version: SCHEMA_VERSION,
        body,
    }
}

/// What a damaging scenario takes out that a prediction's traffic uses: when `crossed` is 0
/// the scenario cannot change the prediction (its traffic, on the healthy fabric, touches
/// nothing the scenario takes out), and the output says so.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Crossing {
    /// Links the scenario takes out of service (failed, drained, soft-drained, or attached to
    /// such a device).
    pub links_out: usize,
    /// Of those, the links the healthy run carries traffic on.
    pub crossed: usize,
    /// Up to three of the crossed links, `a--b`.
    pub examples: Vec<String>,
}

/// What a [`Note`] explains, so that a renderer can put it beside that part of the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum About {
    /// The run as a whole: flows that never started or were cut off, a bounded replay.
    Run,
    /// Load balancing: why the mode cannot change the result.
    Lb,
    /// The weights the switches split traffic by: where `ecmp` and `ucmp` can differ.
    Weights,
    /// What of the scenario the healthy run's traffic crosses ([`Crossing`] in words).
    Crossing,
    /// Why the scenario slowed nothing down.
    Slowdown,
    /// The retransmission timer: raised above the configured floor for long round trips.
    Rto,
    /// The packet counters: timeouts that were not losses.
    Packets,
    /// Priority flow control: headroom short of a PAUSE's need, XON below a round trip.
    Pfc,
    /// The BAG-to-BAG cases of `compare-fabrics`: which agree and why, where throughput is
    /// lost.
    Bag,
    /// The hybrid engine: what it simulated packet by packet and what it fast-forwarded.
    Hybrid,
    /// A collective or a job at packet level: the phases simulated, those reused, and the
    /// packet engine's bandwidth terms against the fluid's.
    PacketPhases,
    /// The packet engine's run cut into parts run side by side (`--partitions`).
    Partitions,
}

/// A sentence the library computes from a result to explain one of its numbers (why it
/// cannot change, what hides a cause): part of the contract, so that JSON and Python users
/// read what the CLI prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Note {
    /// What it explains.
    pub about: About,
    /// The sentence.
    pub text: String,
}

impl Note {
    pub(crate) fn new(about: About, text: String) -> Self {
        Note { about, text }
    }
}

/// The notes of `notes` about `about`, in order.
pub fn notes_about(notes: &[Note], about: About) -> impl Iterator<Item = &str> {
    notes
        .iter()
        .filter(move |n| n.about == about)
        .map(|n| n.text.as_str())
}

/// A result a prediction gives: under which JSON key it goes, and the time a slowdown
/// compares.
pub trait Outcome: Serialize {
    /// The result's key in the JSON contract (`result`, `replay`, `packet`, `largest`).
    const KEY: &'static str;
    /// The time the healthy fabric's is compared with, seconds (`None`: not comparable,
    /// e.g. a packet run cut off before every flow completed).
    fn time_s(&self) -> Option<f64>;
}

/// Every prediction's shape: the result under the study's scenario, the healthy fabric's
/// when the scenario damages anything (same placement), the slowdown, what of the scenario
/// the healthy run's traffic crosses, and the notes explaining the numbers. Serialized
/// flat into its report: the result under [`Outcome::KEY`], then `healthy`, `slowdown`,
/// `crossing` (each only when there is one) and `notes`.
#[derive(Clone, Debug)]
pub struct Prediction<T> {
    /// The result under the study's scenario.
    pub result: T,
    /// The healthy fabric's result, when the scenario damages anything.
    pub healthy: Option<T>,
    /// The result's time over the healthy one's.
    pub slowdown: Option<f64>,
    /// With a damaging scenario: what of it the healthy run's traffic crosses (when the
    /// engine records the links it used).
    pub crossing: Option<Crossing>,
    /// What explains the numbers.
    pub notes: Vec<Note>,
}

impl<T: Outcome> Prediction<T> {
    /// `result` and its `healthy` baseline, the slowdown between them.
    pub(crate) fn new(result: T, healthy: Option<T>, crossing: Option<Crossing>) -> Self {
        let slowdown = match (result.time_s(), healthy.as_ref().and_then(T::time_s)) {
            (Some(now), Some(base)) => Some(now / base),
            _ => None,
        };
        Prediction {
            result,
            healthy,
            slowdown,
            crossing,
            notes: Vec::new(),
        }
    }

    /// The notes about `about`, in order.
    pub fn notes(&self, about: About) -> impl Iterator<Item = &str> {
        notes_about(&self.notes, about)
    }
}

impl<T: Outcome> Serialize for Prediction<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry(T::KEY, &self.result)?;
        if let Some(h) = &self.healthy {
            m.serialize_entry("healthy", h)?;
        }
        if let Some(x) = &self.slowdown {
            m.serialize_entry("slowdown", x)?;
        }
        if let Some(c) = &self.crossing {
            m.serialize_entry("crossing", c)?;
        }
        m.serialize_entry("notes", &self.notes)?;
        m.end()
    }
}

impl Outcome for StepResult {
    const KEY: &'static str = "result";
    fn time_s(&self) -> Option<f64> {
        Some(self.step_s)
    }
}

impl Outcome for Replay {
    const KEY: &'static str = "replay";
    fn time_s(&self) -> Option<f64> {
        Some(self.iteration_s)
    }
}

impl Outcome for TrafficResult {
    const KEY: &'static str = "result";
    fn time_s(&self) -> Option<f64> {
        Some(self.makespan_s)
    }
}

impl Outcome for CollectiveResult {
    const KEY: &'static str = "largest";
    fn time_s(&self) -> Option<f64> {
        Some(self.time_s)
    }
}

impl Outcome for PacketResult {
    const KEY: &'static str = "packet";
    fn time_s(&self) -> Option<f64> {
        (self.unfinished == 0).then_some(self.makespan_s)
    }
}

/// One size of a collective sweep (a row of the nccl-tests-style table).
#[derive(Clone, Debug, Serialize)]
pub struct CollectiveRow {
    /// Message size, bytes (nccl-tests' meaning per operation).
    pub bytes: u64,
    /// Time of the collective, microseconds.
    pub time_us: f64,
    /// Algorithm bandwidth, GB/s (10^9 bytes per second).
    pub alg_bw_gbytes_per_s: f64,
    /// Bus bandwidth, GB/s (nccl-tests' factor applied).
    pub bus_bw_gbytes_per_s: f64,
    /// Time over the healthy fabric's time (only with a damaging scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<f64>,
    /// With `te`: the assignment's gap to the LP optimum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub te_gap: Option<f64>,
    /// The algorithm simulated (the choice, with `auto`).
    pub algo: Algo,
    /// The NCCL protocol timed (the choice, with `auto`); `None` for all-to-all, which
    /// NCCL runs as point-to-point sends.
    pub proto: Option<Proto>,
    /// Channels (rings or trees) the time assumes.
    pub channels: u32,
    /// With `auto`: each candidate (algorithm, protocol) and its predicted time.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub predicted: Vec<Predicted>,
}

/// One candidate of the tuner at one size.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Predicted {
    /// The algorithm.
    pub algo: Algo,
    /// The protocol (`None`: no protocol model).
    pub proto: Option<Proto>,
    /// Predicted time, microseconds.
    pub time_us: f64,
}

/// A collective over a sweep of sizes.
#[derive(Clone, Debug, Serialize)]
pub struct CollectiveReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The fabric's name.
    pub spec: String,
    /// The operation.
    pub op: Op,
    /// The algorithm asked for (`auto`: chosen per size, see each row).
    pub algorithm: Algo,
    /// The protocol asked for (`auto`: chosen per size, see each row).
    pub protocol: Proto,
    /// GPUs in the group.
    pub gpus: u32,
    /// How they were placed.
    pub placement: Placement,
    /// Load balancing, as parsed.
    pub lb: String,
    /// Hash seed.
    pub seed: u64,
    /// Channels asked for (0: automatic).
    pub channels: u32,
    /// One row per size.
    pub rows: Vec<CollectiveRow>,
    /// The largest size (`largest`: its tiers and bottlenecks), with the healthy fabric's
    /// and its slowdown; what of the scenario the collective's traffic crosses (at every
    /// size); notes on the weights and the scenario.
    #[serde(flatten)]
    pub run: Prediction<CollectiveResult>,
    /// When the placement asked for puts the GPUs exactly where `packed` does: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_note: Option<String>,
    /// The weights used, and where the other kind would differ.
    pub weights: LbWeights,
    /// With `--engine packet` or `hybrid`: what the packet engine simulated (distinct
    /// phases, their repeats reused) and its bandwidth terms against the fluid's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet: Option<crate::packet::PacketPhases>,
}

/// The weights the switches split traffic by in the mode run, and where the other kind of
/// weights would split it differently on the same routes.
#[derive(Clone, Debug, Serialize)]
pub struct LbWeights {
    /// What the mode splits by (`equal per live link`, BGP link-bandwidth weights, ...).
    pub used: String,
    /// Switches with a choice of next-hop links, and where BGP's link-bandwidth weights are
    /// not equal per live link: `ecmp` and `ucmp` can only differ there.
    #[serde(flatten)]
    pub differences: aifabric_dataplane::WeightDifferences,
}

/// One training iteration.
#[derive(Clone, Debug, Serialize)]
pub struct JobReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The fabric's name.
    pub spec: String,
    /// How the job was placed.
    pub placement: Placement,
    /// Load balancing, as parsed.
    pub lb: String,
    /// Hash seed.
    pub seed: u64,
    /// The step (`result`), the healthy fabric's, the step time's slowdown, what of the
    /// scenario the job's traffic crosses, notes.
    #[serde(flatten)]
    pub run: Prediction<StepResult>,
    /// When the placement asked for puts the GPUs exactly where `packed` does: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_note: Option<String>,
    /// Per-GPU memory: what the job needs against what its GPUs have (a job with an
    /// architecture; one given by its parameter count alone is not checked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryFit>,
    /// With `--engine packet` or `hybrid`: what the packet engine simulated (distinct
    /// phases of the step's collectives, their repeats reused) and its bandwidth terms
    /// against the fluid's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet: Option<crate::packet::PacketPhases>,
}

/// What one GPU of a job needs (the first pipeline stage's) against what it has.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryFit {
    /// The need, broken down, with the knobs that lower it.
    pub need: MemoryNeed,
    /// The smallest memory among the job's GPUs, bytes (`None`: their hardware model gives
    /// none, the need is not checked).
    pub gpu_memory_bytes: Option<u64>,
}

const GIB: f64 = (1u64 << 30) as f64;

impl MemoryFit {
    /// One line: the need's parts and the total against the GPU's memory.
    pub fn summary(&self) -> String {
        let n = &self.need;
        let has = self
            .gpu_memory_bytes
            .map_or("GPU memory unknown".to_owned(), |b| {
                format!("of {:.1} GiB", b as f64 / GIB)
            });
        format!(
            "{:.1} GiB per GPU {has} = weights {:.1} + gradients {:.1} + optimizer state {:.1} \
             + activations {:.1} ({} layer x micro-batch sets in flight, recompute {}, \
             gradients and optimizer state {})",
            n.total_bytes / GIB,
            n.weights_bytes / GIB,
            n.gradients_bytes / GIB,
            n.optimizer_bytes / GIB,
            n.activations_bytes / GIB,
            n.layer_micro_batches,
            n.recompute.name(),
            if n.sharded {
                "sharded over data parallelism"
            } else {
                "replicated"
            }
        )
    }

    /// Whether the need exceeds a known memory.
    pub fn fits(&self) -> bool {
        self.gpu_memory_bytes
            .is_none_or(|b| self.need.total_bytes <= b as f64)
    }

    /// Why the job is refused: the need, the memory, and the knobs with what they give.
    pub fn refusal(&self, job: &str) -> String {
        let knobs: Vec<String> = self
            .need
            .knobs
            .iter()
            .map(|k| format!("{} -> {:.1} GiB", k.change, k.total_bytes / GIB))
            .collect();
        format!(
            "job {job} does not fit in its GPUs' memory: it needs {}; what lowers it: {}",
            self.summary(),
            if knobs.is_empty() {
                "more GPUs (more tensor or pipeline parallelism)".to_owned()
            } else {
                knobs.join("; ")
            }
        )
    }
}

/// A traffic matrix, event by event.
#[derive(Clone, Debug, Serialize)]
pub struct TrafficReport {
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
    /// Load balancing, as parsed.
    pub lb: String,
    /// Hash seed (also of generated matrices).
    pub seed: u64,
    /// Flow completion times and utilization (`result`), the healthy fabric's, the
    /// makespan's slowdown, notes (flows load balancing cannot move, flows never started).
    #[serde(flatten)]
    pub run: Prediction<TrafficResult>,
    /// P99 FCT over the healthy fabric's (only with a damaging scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_slowdown: Option<f64>,
}

/// A Chakra trace replayed on a fabric, with the healthy fabric's replay when the scenario
/// damages it.
#[derive(Clone, Debug, Serialize)]
pub struct ReplayReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Fabric name.
    pub spec: String,
    /// Placement used.
    pub placement: String,
    /// Load balancing.
    pub lb: String,
    /// Effective FLOP/s used for `num_ops`.
    pub flops_per_s: f64,
    /// Collective latency used, seconds.
    pub alpha_s: f64,
    /// What the trace's metadata said.
    pub trace: TraceInfo,
    /// The replay (`replay`), the healthy fabric's, the iteration time's slowdown, what of
    /// the scenario the replay's traffic crosses, notes.
    #[serde(flatten)]
    pub run: Prediction<Replay>,
    /// Engine simulations run.
    pub simulations: u64,
    /// When the placement asked for puts the ranks exactly where `packed` does: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_note: Option<String>,
}
