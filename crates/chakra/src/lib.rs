//! MLCommons Chakra execution traces for aifabric.
//!
//! - [`proto`]: the messages of `et_def.proto` (package `ChakraProtoMsg`) as `prost` derives,
//!   written from the schema's public field numbers;
//! - [`io`]: a streaming reader (plain or gzip; byte offsets in errors; unknown fields and
//!   node types counted) and an atomic writer, trace directories and communicator groups;
//! - [`synth`]: a trace per rank from a job file's iteration;
//! - [`scale`]: a trace rescaled to more ranks by replicating its data-parallel structure;
//! - [`info`]: what a trace's metadata says about its machine (roofline, latency, scale-up);
//! - [`replay`]: the trace's DAG timed rank by rank, generic over a [`replay::Timer`];
//! - [`fabric`]: the timer on the flow-level engine, and [`fabric::replay_on`] a fabric.

pub mod fabric;
pub mod info;
pub mod io;
pub mod proto;
pub mod replay;
pub mod scale;
pub mod synth;

pub use io::{Reader, TraceError, TraceSet, Warnings, Writer};
pub use proto::{CollectiveCommType, GlobalMetadata, Node, NodeType};
