//! # aifabric-workload
//!
//! What a training job asks of the network, independent of any fabric's forwarding:
//! - [`job`]: a checked job plan (model, parallelism, scale-up domain, roofline) and one iteration's
//!   compute time and collectives, sized from the model;
//! - [`placement`]: ranks onto GPUs (packed, spread, fragmented, topology-aware), in whole
//!   scale-up domains;
//! - [`schedule`]: collective algorithms (ring, double binary tree, halving-doubling, direct,
//!   hierarchical) as phases of concurrent transfers between ranks;
//! - [`collective`]: their closed forms (nccl-tests bandwidths, alpha-beta times, ECMP as
//!   balls into bins), the expectations the engine is tested against.
//!
//! Architecture invariant: no I/O except [`traffic::load`] reading the one traffic matrix
//! asked for (job files are read by `aifabric_spec::job`); deterministic (placement draws are
//! seeded).

pub mod collective;
pub mod job;
pub mod placement;
pub mod schedule;
pub mod traffic;

pub use collective::Op;
pub use placement::Placement;
pub use schedule::{Algo, Phase, Schedule, Transfer};
