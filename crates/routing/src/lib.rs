//! # aifabric-routing
//!
//! The control plane: what every switch forwards, given the fabric and a scenario.
//!
//! Built so far: [`ucmp`] (link-bandwidth weights, the FRR behaviours for paths without the
//! community, and quantization into hardware next-hop groups).
//!
//! Architecture invariant: pure functions of (`Fabric`, `Scenario`); no I/O.

pub mod addressing;
pub mod aggregation;
pub mod bgp;
pub mod fib;
pub mod ibm;
pub mod nsf;
mod options;
pub mod ucmp;
