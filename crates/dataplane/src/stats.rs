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

impl FctStats {
    /// The statistics of `sorted` (ascending, seconds): the `ceil(q n)`-th flow for
    /// quantile `q` (nearest rank), the mean summed in that order; all zero when empty.
    pub fn of_sorted(sorted: &[f64]) -> FctStats {
        let rank = |q: f64| {
            let k = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
            sorted.get(k - 1).copied().unwrap_or(0.0)
        };
        FctStats {
            min_s: sorted.first().copied().unwrap_or(0.0),
            p50_s: rank(0.5),
            p99_s: rank(0.99),
            max_s: sorted.last().copied().unwrap_or(0.0),
            mean_s: if sorted.is_empty() {
                0.0
            } else {
                sorted.iter().sum::<f64>() / sorted.len() as f64
            },
        }
    }
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
