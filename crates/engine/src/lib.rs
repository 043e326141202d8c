//! # aifabric-engine
//!
//! The flow-level engine: what a training job's collectives do on a fabric, healthy or failed.
//! It runs on the data plane of a scenario (`aifabric-dataplane`: the network as resources,
//! the forwarding, the load-balancing modes), which the packet engine shares. Layers, bottom
//! up:
//! - [`maxmin`]: max-min fair rates by progressive filling for flows that each spread over
//!   resources in fixed shares (a flow split by UCMP weights uses each link with the share of
//!   its traffic that crosses it);
//! - [`te`]: centralized traffic engineering and its LP lower bound;
//! - [`fluid`]: the event-driven fluid: flows start and finish, and each event re-solves
//!   only the flows it can change (those at or above the lowest rate that left);
//! - [`makespan`]: a phase's makespan as a fluid, per connected component, with exact
//!   shortcuts;
//! - [`sim`]: collectives as phases of concurrent flows, simulated as an event-driven fluid;
//! - [`tune`]: `auto` algorithm choice, latency + bandwidth terms calibrated on the fabric;
//! - [`job`]: one training iteration (compute + exposed communication), healthy vs failed;
//! - [`traffic`]: traffic matrices (flows with start times, triggers), event by event.
//!
//! Architecture invariant: pure functions of (fabric, scenario, workload, seed); no I/O;
//! deterministic whatever the thread count (phases are simulated in parallel and summed in
//! order).
//!
//! ```
//! use aifabric_dataplane::{Forwarding, Lb, Net, NetParams};
//! use aifabric_engine::{simulate, Collective};
//! use aifabric_model::Scenario;
//! use aifabric_routing::bgp::{AsnPlan, BgpConfig};
//! use aifabric_workload::{placement, Algo, Op, Placement};
//!
//! let f = aifabric_spec::load("dsf-l1-zone").unwrap();
//! let healthy = Scenario::healthy(&f);
//! // One GPU per scale-up domain: every ring hop crosses the network.
//! let params = NetParams { scale_up_gpus: 1, ..NetParams::default() };
//! let net = Net::new(&f, &healthy, AsnPlan::Rfc7938, BgpConfig::default(), params);
//! let gpus = placement::place(&f, 64, 1, Placement::Packed, &healthy.unusable()).unwrap();
//! let routes = Forwarding::new(&net, gpus.iter().copied()).unwrap();
//! let c = Collective { op: Some(Op::AllReduce), algo: Algo::Ring, groups: vec![gpus.clone()],
//!     bytes: 1e9, channels: 1, lb: Lb::Spray(None), seed: 1, alpha_s: 5e-6, proto: None };
//! let r = simulate(&net, &routes, &c).unwrap();
//! // On a non-blocking zone, bus bandwidth approaches the GPU's link rate, never exceeds it.
//! let nic = f.link(f.incident(gpus[0])[0]).capacity_mbps as f64 / 8e3; // GB/s
//! let busbw = r.bus_bw_gbytes_per_s;
//! assert!(busbw <= nic && busbw > 0.95 * nic, "{busbw} vs {nic}");
//! ```

pub mod chain;
pub mod cluster;
pub mod fluid;
pub mod job;
pub mod makespan;
pub mod maxmin;
pub mod nccl;
pub mod sim;
mod spray;
pub mod te;
mod timer;
pub mod traffic;
pub mod tune;
mod unreached;
mod utilization;

/// The bitset type of [`CollectiveResult::used_links`].
pub use fixedbitset::FixedBitSet;
pub use maxmin::{max_min_rates, FlowSet, MaxMin};
pub use sim::{simulate, Collective, CollectiveResult, SimError};

use aifabric_dataplane::Lb;

/// The load-balancing modes the flow engine runs.
pub const LB_MODES: &str = "ecmp, eecmp:N, ucmp, spray or te";

/// `lb` if the flow engine runs it; else why not, with the modes it runs. Per-packet modes
/// (`spray:N`, `mixed:N`, `adaptive`) are the packet engine's: a fluid has no entropy values
/// or queues to choose by.
pub fn check_lb(lb: Lb) -> Result<Lb, String> {
    match lb {
        Lb::Ecmp | Lb::Eecmp(_) | Lb::Ucmp | Lb::Spray(None) | Lb::Te => Ok(lb),
        Lb::Spray(Some(_)) | Lb::Mixed(_) | Lb::Adaptive => Err(format!(
            "the flow engine does not run `{lb}`: it is a packet-level mode, which only \
             `aifabric traffic --engine packet` (or `both`) runs; the flow engine runs \
             {LB_MODES}"
        )),
    }
}
