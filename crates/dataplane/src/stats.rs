//! Flow completion statistics, as both engines report them.

use serde::Serialize;

/// Distribution of flow completion times, seconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FctStats {
    /// Fastest.
    pub min_s: f64,
    /// Median (nearest rank).
    pub p50_s: f64,
    /// 99th percentile (nearest rank).
    pub p99_s: f64,
    /// Slowest.
    pub max_s: f64,
    /// Mean.
    pub mean_s: f64,
}

/// One of the slowest flows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SlowFlow {
    /// The flow's id.
    pub id: u64,
    /// Source and destination GPUs, by name.
    pub pair: String,
    /// Bytes.
    pub bytes: u64,
    /// Start, seconds.
    pub start_s: f64,
    /// Completion time, seconds.
    pub fct_s: f64,
}
