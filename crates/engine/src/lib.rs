//! # aifabric-engine
//!
//! The flow-level engine of issue 5, built bottom up. So far: [`maxmin`], max-min fair rates
//! for flows that each spread over links in fixed shares (a multipath flow split by its UCMP
//! weights uses each link with the share of its traffic that crosses it); [`collective`], the
//! closed forms the engine is checked against (nccl-tests bandwidths, alpha-beta times,
//! ECMP as balls into bins).
//!
//! Architecture invariant: pure functions over index-based inputs (links and flows are `u32`
//! ids into flat arrays); no I/O; deterministic.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod collective;
pub mod maxmin;

pub use maxmin::{max_min_rates, FlowSet};
