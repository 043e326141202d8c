//! # aifabric-engine
//!
//! The flow-level engine: what a training job's collectives do on a fabric, healthy or failed.
//! Layers, bottom up:
//! - [`maxmin`]: max-min fair rates by progressive filling for flows that each spread over
//!   resources in fixed shares (a flow split by UCMP weights uses each link with the share of
//!   its traffic that crosses it);
//! - [`net`]: the network of a scenario as resources with capacities, and the resources a
//!   flow uses under a load-balancing mode, hop by hop along the control plane's routes;
//! - [`te`]: centralized traffic engineering and its LP lower bound;
//! - [`fluid`]: the event-driven fluid: flows start and finish, and each event re-solves
//!   only the flows it can change (those at or above the lowest rate that left);
//! - [`sim`]: collectives as phases of concurrent flows, simulated as an event-driven fluid;
//! - [`tune`]: `auto` algorithm choice, latency + bandwidth terms calibrated on the fabric;
//! - [`job`]: one training iteration (compute + exposed communication), healthy vs failed;
//! - [`traffic`]: traffic matrices (flows with start times, triggers), event by event.
//!
//! Architecture invariant: pure functions of (fabric, scenario, workload, seed); no I/O;
//! deterministic whatever the thread count (phases are simulated in parallel and summed in
//! order).

pub mod chain;
pub mod fluid;
pub mod job;
pub mod maxmin;
pub mod net;
pub mod sim;
pub mod te;
pub mod traffic;
pub mod tune;

pub use maxmin::{max_min_rates, FlowSet, MaxMin};
pub use net::{Lb, Net, NetParams};
pub use sim::{simulate, Collective, CollectiveResult, RouteCache, SimError};
