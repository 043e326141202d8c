//! The error of a replay: what makes a trace impossible to replay.

use super::NodeId;
use crate::io::TraceError;
use aifabric_engine::sim::SimError;
use aifabric_workload::placement::PlacementError;
use std::path::PathBuf;

/// A trace that cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A file does not read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A rank's file cannot be opened because the process holds too many open files.
    #[error("{source}: a replay keeps every rank's file open; raise the limit (ulimit -n)")]
    TooManyOpenFiles {
        /// The failed open.
        #[source]
        source: TraceError,
    },
    /// The trace directory, its groups or the replay's settings (a message with the fix).
    #[error("{0}")]
    Input(String),
    /// The trace's metadata holds a value a replay cannot use.
    #[error("{}: metadata: {what}", .file.display())]
    Metadata {
        /// The file whose metadata it is.
        file: PathBuf,
        /// What is wrong, with the fix.
        what: String,
    },
    /// The trace's ranks do not fit on the fabric.
    #[error("placing the trace's {ranks} ranks: {source}")]
    Placement {
        /// Ranks of the trace.
        ranks: u32,
        /// Why they do not fit.
        #[source]
        source: PlacementError,
    },
    /// An output file cannot be written.
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A node's content or the DAG is wrong (file, node, what, hint).
    #[error("{file}: node {node}: {what}")]
    Node {
        /// File.
        file: String,
        /// Node id.
        node: NodeId,
        /// What is wrong, with the fix.
        what: String,
    },
    /// A communication cannot be timed.
    #[error("{}{source}", .context.as_deref().map(|c| format!("{c}: ")).unwrap_or_default())]
    Sim {
        /// The communication being timed, if any (e.g. all_reduce of 1048576 B on process
        /// group `dp0`).
        context: Option<String>,
        /// The engine's error.
        #[source]
        source: SimError,
    },
}

impl ReplayError {
    /// Whether the input is at fault (exit code 2) rather than the fabric, an output that
    /// cannot be written or the process's limits (exit code 1).
    pub fn is_input(&self) -> bool {
        !matches!(
            self,
            ReplayError::Sim { .. }
                | ReplayError::Write { .. }
                | ReplayError::TooManyOpenFiles { .. }
        )
    }
}
