//! MLCommons Chakra execution traces for aifabric.
//!
//! - [`proto`]: the messages of `et_def.proto` (package `ChakraProtoMsg`) as `prost` derives,
//!   written from the schema's public field numbers;
//! - [`budget`]: the size of a trace to be written, estimated up front, and the limits;
//! - [`io`]: a streaming reader (plain or gzip; byte offsets in errors; unknown fields and
//!   node types counted) and an atomic writer, trace directories and communicator groups;
//! - [`synth`]: a trace per rank from a job file's iteration;
//! - [`scale`]: a trace rescaled to more ranks by replicating its data-parallel structure;
//! - [`info`]: what a trace's metadata says about its machine (roofline, latency, scale-up);
//! - [`replay`]: the trace's DAG timed rank by rank, generic over a [`replay::Timer`];
//! - [`fabric`]: the timer on the flow-level engine, and [`fabric::replay_healthy`] on a
//!   healthy fabric (the `aifabric` facade's `Study::replay` adds scenarios).
//!
//! ```
//! use aifabric_chakra::{synth, Reader, TraceSet};
//!
//! let job = aifabric_spec::job::parse("dp-8.yaml", "
//! name: dp-8
//! gpus: 8
//! parallelism: { tp: 1, pp: 1, dp: 8 }
//! model: { parameters: 1.0e9, layers: 4, hidden: 2048, sequence_length: 2048,
//!          micro_batch: 1, global_batch: 32 }
//! compute: { peak_tflops: 989, efficiency: 0.4 }
//! ").unwrap();
//! let dir = tempfile::tempdir().unwrap();
//! let written = synth::write(&job, dir.path(), "trace", true, &|_| {}).unwrap();
//! // One file per rank, read back whole: each a DAG whose dependencies point backwards.
//! let set = TraceSet::discover(dir.path()).unwrap();
//! assert_eq!((written.ranks, set.ranks()), (job.gpus, job.gpus));
//! let mut nodes = 0;
//! for file in &set.files {
//!     let (mut reader, _metadata) = Reader::open(file).unwrap();
//!     let rank = reader.read_all().unwrap();
//!     assert!(rank.iter().all(|n| n.data_deps.iter().all(|&d| d < n.id)));
//!     nodes += rank.len() as u64;
//! }
//! assert_eq!(nodes, written.nodes);
//! ```

pub mod budget;
pub mod fabric;
pub mod info;
pub mod io;
pub mod output;
pub mod proto;
pub mod replay;
pub mod scale;
pub mod synth;

pub use io::{Reader, TraceError, TraceSet, Warnings, Writer};
pub use proto::{CollectiveCommType, GlobalMetadata, Node, NodeType};
