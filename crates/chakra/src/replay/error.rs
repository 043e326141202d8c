//! The error of a replay: what makes a trace impossible to replay.

use crate::io::TraceError;

/// A trace that cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A file does not read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The trace directory or its groups.
    #[error("{0}")]
    Input(String),
    /// A node's content or the DAG is wrong (file, node, what, hint).
    #[error("{file}: node {node}: {what}")]
    Node {
        /// File.
        file: String,
        /// Node id.
        node: u64,
        /// What is wrong, with the fix.
        what: String,
    },
    /// A communication cannot be timed.
    #[error("{0}")]
    Sim(String),
}

impl ReplayError {
    /// Whether the input is at fault (exit code 2) rather than the fabric.
    pub fn is_input(&self) -> bool {
        !matches!(self, ReplayError::Sim(_))
    }
}
