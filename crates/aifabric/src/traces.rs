//! Chakra execution traces without a fabric: write one for a job, grow one to more ranks, find
//! one on disk. (Replaying a trace on a fabric is [`crate::Study::replay`].)

use crate::Error;
use aifabric_chakra::scale::scale;
use aifabric_chakra::synth;
use aifabric_chakra::TraceSet;
use aifabric_workload::job::Iteration;
use std::path::Path;

pub use aifabric_chakra::replay::{PathStep, Replay};
pub use aifabric_chakra::scale::{DpGroups, Scaled};
pub use aifabric_chakra::synth::Written;

/// Write the Chakra trace of one iteration of `job` into `out` (one file per rank,
/// `<prefix>.<rank>.et`, gzip-compressed with `gzip`, plus `comm_group.json`); `progress` is
/// called once per rank written. `out` must be empty or hold only an earlier trace, and
/// `prefix` a plain file-name start (no path separator: nothing is written outside `out`). A
/// trace beyond the budgets of [`aifabric_chakra::budget`] (files, nodes, bytes) is a bad
/// request.
pub fn synthesize(
    job: &Iteration,
    out: &Path,
    prefix: &str,
    gzip: bool,
    progress: &(dyn Fn(u32) + Sync),
) -> Result<Written, Error> {
    aifabric_chakra::io::check_prefix(prefix).map_err(Error::bad_request)?;
    // Refused before anything is written: beyond the budgets it cannot finish in minutes.
    synth::Synth::new(job)
        .check_size(gzip)
        .map_err(Error::bad_request)?;
    aifabric_chakra::io::prepare_out_dir(out)?;
    synth::write(job, out, prefix, gzip, progress)
        .map_err(|e| Error::runtime_in(&format!("writing the trace into {}", out.display()), e))
}

/// Grow the trace in `input` to `ranks` ranks in `out`: the data-parallel groups `dp` grow,
/// every other group is copied per replica; `progress` is called once per rank written.
pub fn rescale(
    input: &Path,
    ranks: u32,
    out: &Path,
    dp: &DpGroups,
    progress: &(dyn Fn(u32) + Sync),
) -> Result<Scaled, Error> {
    Ok(scale(input, ranks, out, dp, progress)?)
}

/// The trace in directory `dir` (its rank files, in rank order).
pub fn discover(dir: &Path) -> Result<TraceSet, Error> {
    TraceSet::discover(dir).map_err(Error::bad_request)
}
