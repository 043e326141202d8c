//! # aifabric-capacity
//!
//! The capacity report of a [`Fabric`](aifabric_model::Fabric) under a
//! [`FailureMask`](aifabric_model::FailureMask): per tier and zone the down and up bandwidth
//! and their ratio, inter-region capacity, inventories, port use, power, and each zone's
//! bisection bandwidth by max-flow.
//!
//! Architecture invariant: every figure is derived from the built graph (links and their
//! capacities), never from the spec's parameters; no I/O.
//!
//! ```
//! use aifabric_capacity::capacity_report;
//! use aifabric_model::{FailureMask, Role};
//!
//! // One DSF zone: 128 RDSW x 36 GPUs at 400G, non-blocking.
//! let f = aifabric_spec::load("dsf-l1-zone").unwrap();
//! let healthy = capacity_report(&f, &FailureMask::none(&f));
//! assert_eq!(healthy.gpus, f.devices_with_role(Role::Gpu).count() as u64);
//! // Non-blocking: the bisection is half the GPUs' bandwidth, 64 x 36 x 400 Gb/s.
//! let b = healthy.zones[0].bisection.clone().unwrap();
//! let half = 64.0 * 36.0 * 400.0;
//! assert_eq!((b.bisection_gbps, b.half_gpu_gbps), (half, half));
//! // With 10 of its 40 FDSWs down, the fabric is the limit: 30 FDSWs, each reached by
//! // 4 x 106.25G lanes from each of the 64 RDSWs of a half.
//! let mut mask = FailureMask::none(&f);
//! f.devices_with_role(Role::Fdsw).take(10).for_each(|d| mask.fail_device(d));
//! let b = capacity_report(&f, &mask).zones[0].bisection.clone().unwrap();
//! assert_eq!(b.bisection_gbps, 30.0 * 64.0 * 4.0 * 106.25);
//! ```

pub mod bisection;
pub mod buffers;
mod hub;
pub mod maxflow;
mod report;

pub use bisection::{zone_bisection, Bisection};
pub use hub::{hub_pairs, HubPair};
pub use report::*;
