//! # aifabric-capacity
//!
//! The capacity report of a [`Fabric`](aifabric_model::Fabric) under a [`FailureMask`](aifabric_model::FailureMask): per tier and zone the down and
//! up bandwidth and their ratio, inter-region capacity, inventories, port use, power, and each
//! zone's bisection bandwidth by max-flow.
//!
//! Architecture invariant: every figure is derived from the built graph (links and their
//! capacities), never from the spec's parameters; no I/O.

pub mod bisection;
pub mod maxflow;
mod report;

pub use bisection::{zone_bisection, Bisection};
pub use report::*;
