//! What writing a trace costs, estimated before anything is written, and the limits beyond
//! which [`crate::synth`] and [`crate::scale`] refuse: a trace that cannot be written in
//! minutes on a 2-core machine, or that would fill a disk, is an input error, not a long run.
//!
//! The rates behind the limits were measured with the release build on a 2-core machine:
//! `aifabric chakra synth` writes about 0.7 million nodes a second gzip-compressed (1.1
//! million plain), a node takes about 9 bytes gzip-compressed and 74 plain, and each rank
//! file costs about 1.3 ms more (a temporary file, an fsync and a rename).

/// Most rank files a trace may have: 262,144 (2^18, twice the 131,072-GPU example job) take
/// about six minutes in per-file costs alone.
pub const MAX_TRACE_FILES: u64 = 1 << 18;

/// Most nodes a trace may have, all ranks: 200 million take about five minutes to write
/// gzip-compressed (the 131,072-GPU Llama 3 example has about 150 million).
pub const MAX_TRACE_NODES: u64 = 200_000_000;

/// Most bytes a trace may take on disk: 16 GiB, what 200 million plain nodes need.
pub const MAX_TRACE_BYTES: u64 = 16 << 30;

/// Bytes per node, gzip-compressed (measured: 9; rounded up).
pub const GZIP_BYTES_PER_NODE: u64 = 10;

/// Bytes per node, plain (measured: 74; rounded up).
pub const PLAIN_BYTES_PER_NODE: u64 = 80;

/// The size of a trace to be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TraceSize {
    /// Rank files.
    pub files: u64,
    /// Nodes, all ranks.
    pub nodes: u64,
    /// Largest node count of one rank.
    pub nodes_per_rank: u64,
    /// Bytes on disk (estimated).
    pub bytes: u64,
}

pub use aifabric_model::thousands;

/// Bytes as GiB with one decimal.
fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30))
}

impl TraceSize {
    /// Bytes per node in a file, gzip-compressed or plain.
    pub fn bytes_per_node(gzip: bool) -> u64 {
        if gzip {
            GZIP_BYTES_PER_NODE
        } else {
            PLAIN_BYTES_PER_NODE
        }
    }

    /// Refuse a trace beyond [`MAX_TRACE_FILES`], [`MAX_TRACE_NODES`] or [`MAX_TRACE_BYTES`]
    /// : the error says the size, the
    /// limit and `narrow` (how to ask for less).
    pub fn check(&self, what: &str, narrow: &str) -> Result<(), String> {
        let over = if self.files > MAX_TRACE_FILES {
            Some(format!(
                "{} rank files, above the limit of {} (about six minutes of file creation \
                 alone on 2 cores)",
                thousands(self.files),
                thousands(MAX_TRACE_FILES)
            ))
        } else if self.nodes > MAX_TRACE_NODES {
            Some(format!(
                "{} nodes ({} ranks x up to {} nodes each), above the limit of {} (about five \
                 minutes of writing on 2 cores)",
                thousands(self.nodes),
                thousands(self.files),
                thousands(self.nodes_per_rank),
                thousands(MAX_TRACE_NODES)
            ))
        } else if self.bytes > MAX_TRACE_BYTES {
            Some(format!(
                "about {} on disk, above the limit of {}",
                gib(self.bytes),
                gib(MAX_TRACE_BYTES)
            ))
        } else {
            None
        };
        match over {
            Some(o) => Err(format!("{what} would have {o}; {narrow}")),
            None => Ok(()),
        }
    }
}
