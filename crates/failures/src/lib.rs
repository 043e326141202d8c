//! # aifabric-failures
//!
//! Failure-domain analysis (issue 4): what a fabric loses when a shared-risk group fails,
//! for every group, every pair within a class, or thousands of Monte Carlo draws.
//!
//! - [`eval`]: one scenario's metrics (routed capacity under BGP/UCMP, max-flow bound, GPUs
//!   cut off, tier oversubscription), paying only for what the scenario breaks.
//!
//! Architecture invariant: a scenario is a mask over the one shared model, never a copy;
//! results are collected in scenario order, so they do not depend on the thread count; no
//! I/O.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod eval;

pub use eval::{Down, Evaluator, Outcome, Workspace};
