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
use aifabric_workload::{Algo, Op, Placement};
use serde::Serialize;

/// Version of these JSON contracts; raised when a field changes meaning or name. 1: the first
/// versioned contracts (bandwidths in `*_gbytes_per_s`, 10^9 bytes per second).
pub const SCHEMA_VERSION: u32 = 1;

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
    /// With `auto`: each candidate's predicted time, microseconds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub predicted_us: Vec<(Algo, f64)>,
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
    /// Detail of the largest size (tiers and bottlenecks).
    pub largest: CollectiveResult,
    /// With a damaging scenario: what of it the collective's traffic crosses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crossing: Option<Crossing>,
    /// When the placement asked for puts the GPUs exactly where `packed` does: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_note: Option<String>,
    /// The weights used, and where the other kind would differ.
    pub weights: LbWeights,
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
    /// The step under the study's scenario.
    pub result: StepResult,
    /// The healthy fabric's step, when the scenario damages anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub healthy: Option<StepResult>,
    /// Step time over the healthy one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<f64>,
    /// With a damaging scenario: what of it the job's traffic crosses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crossing: Option<Crossing>,
    /// When the placement asked for puts the GPUs exactly where `packed` does: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_note: Option<String>,
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
    /// Flow completion times and utilization under the study's scenario.
    pub result: TrafficResult,
    /// Makespan over the healthy fabric's (only with a damaging scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<f64>,
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
    /// The replay.
    pub replay: Replay,
    /// Engine simulations run.
    pub simulations: u64,
    /// The healthy fabric's replay, when the scenario damages something.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub healthy: Option<Replay>,
    /// Iteration time over the healthy one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<f64>,
    /// With a damaging scenario: what of it the replay's traffic crosses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crossing: Option<Crossing>,
    /// When the placement asked for puts the ranks exactly where `packed` does: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_note: Option<String>,
}
