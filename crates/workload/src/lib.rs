//! # aifabric-workload
//!
//! What a training job asks of the network, independent of any fabric's forwarding:
//! - [`job`]: a checked job plan (model, parallelism, scale-up domain, roofline) and one
//!   iteration's compute time and collectives, sized from the model;
//! - [`placement`]: ranks onto GPUs (packed, spread, fragmented, topology-aware), in whole
//!   scale-up domains;
//! - [`schedule`]: collective algorithms (ring, double binary tree, halving-doubling, direct,
//!   hierarchical) as phases of concurrent transfers between ranks;
//! - [`collective`]: their closed forms (nccl-tests bandwidths, alpha-beta times, ECMP as
//!   balls into bins), the expectations the engine is tested against;
//! - [`cluster`]: the jobs running on one fabric, each on its own GPUs;
//! - [`interruptions`]: failure rates per component class (defaults from the Llama 3 run's
//!   interruption table) and checkpointing (Young's and Daly's optimum intervals).
//!
//! Architecture invariant: no I/O except [`traffic::load`] reading the one traffic matrix
//! asked for (job files are read by `aifabric_spec::job`); deterministic (placement draws are
//! seeded).
//!
//! ```
//! use aifabric_workload::collective::{alpha_beta_seconds, bus_bw_gbytes_per_s, Algorithm};
//! use aifabric_workload::schedule::schedule;
//! use aifabric_workload::{Algo, Op};
//!
//! let (n, bytes) = (8u32, 1e9);
//! // A ring all-reduce: a reduce-scatter then an all-gather, 2(n - 1) steps in all.
//! let ring = schedule(Op::AllReduce, Algo::Ring, n, bytes, 1, 1).unwrap();
//! assert_eq!(ring.steps(), 2 * u64::from(n - 1));
//! // Each rank sends 2(n - 1)/n of the buffer: nccl-tests' bus factor.
//! let per_rank = ring.wire_bytes() / f64::from(n);
//! assert!((per_rank - Op::AllReduce.bus_factor(n) * bytes).abs() < 1e-3);
//! // So with no latency, at 50 GB/s per rank, the bus bandwidth is the link's 50 GB/s.
//! let t = alpha_beta_seconds(Op::AllReduce, Algorithm::Ring, n, bytes, 0.0, 50e9).unwrap();
//! assert!((bus_bw_gbytes_per_s(Op::AllReduce, n, bytes, t) - 50.0).abs() < 1e-9);
//! ```

pub mod cluster;
pub mod collective;
pub mod interruptions;
pub mod job;
pub mod nccl;
pub mod placement;
pub mod schedule;
pub mod traffic;

pub use collective::Op;
pub use nccl::Proto;
pub use placement::Placement;
pub use schedule::{Algo, Phase, Schedule, Transfer};
