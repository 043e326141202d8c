//! # aifabric-dataplane
//!
//! The data plane of one scenario, between the control plane and the engines: the network
//! as resources with capacities, the forwarding the control plane gives (next hops and UCMP
//! weights per destination), the load-balancing vocabulary, and the hashes and statistics
//! both engines share. The flow engine (`aifabric-engine`) and the packet engine
//! (`aifabric-packet`) are siblings on it; neither depends on the other.
//!
//! - [`net`]: [`Net`], the network of a scenario (`Net::new` lowers the fabric, the scenario
//!   and the BGP settings once); resources, capacities, names and tiers; which GPU hangs off
//!   which rack switch.
//! - [`forward`]: a switch's next-hop links toward a destination with their shares, by
//!   link-bandwidth weights or equal per live link, and where the two differ; [`Forwarding`],
//!   the converged routes per destination, filled lazily and shared.
//! - [`spread`]: a flow's spread over that forwarding as a fluid under a [`Lb`] mode.
//! - [`lb`]: [`Lb`], load-balancing modes.
//! - [`hash`]: the seeded hashes switches and senders draw from.
//! - [`stats`]: flow completion statistics both engines report.
//!
//! **Resources** are directed: each link in each direction; for a DSF zone, the sprayed cell
//! fabric as aggregates (below); each GPU's scale-up (NVLink) port in and out. Ids:
//! `2 l + dir` for link `l` (`dir` 0 from its `a` end to `b`), then interface nodes, cluster
//! stages and NVLink ports. Capacities are bytes per second and come from the live links of
//! the scenario (failed or hard-drained links carry nothing).
//!
//! **Forwarding** follows the control plane: at a BGP speaker, the multipath next hops of
//! its converged route toward the destination rack (`aifabric-routing`), with their UCMP
//! weights; eBGP runs per link (RFC 7938), so every live link of a multipath session is an
//! ECMP member. The mode decides how a flow uses the members:
//! - `ecmp`: one member per switch, by a seeded hash of the flow (the switch's own seed, as
//!   ASICs do), every member equally likely;
//! - `eecmp:N`: the same, but each GPU pair's traffic is N queue pairs and the hash covers the
//!   destination QP (Meta's E-ECMP; Gangidi et al., SIGCOMM 2024), so N flows per pair;
//! - `ucmp`: one member by hash, weighted by the link-bandwidth UCMP weights;
//! - `spray`: every member, traffic split by the UCMP weights (per-packet spraying / NSF
//!   adaptive routing, as a fluid);
//! - `te`: a central controller picks one of several candidate paths per flow to minimize
//!   the busiest link (the flow engine's `te`).
//!
//! **DSF zones** are one BGP speaker; inside, cells are sprayed over every live fabric link
//! (Meta, "Disaggregated Scheduled Fabric ..." 2025) whatever the mode, so the zone behaves
//! as a crossbar: a flow from interface node `v` to `w` uses `v`'s fabric uplinks (their live
//! capacity summed), in a dual-stage zone its cluster's FDSW -> SDSW stage and the
//! destination cluster's SDSW -> FDSW stage (when the clusters differ), and `w`'s fabric
//! downlinks. Perfect spraying loads a stage's links evenly, so the sums are exact for it;
//! what Input Balanced Mode adds under asymmetric failures is not modelled here.

pub mod forward;
pub mod hash;
pub mod lb;
pub mod net;
pub mod spread;
pub mod stats;

pub use forward::Forwarding;
pub use hash::{flow_hash, mix};
pub use lb::{Lb, MAX_QPS};
pub use net::{Net, NetParams, NoPath, Resource, ResourceId, WeightDifferences, SCALE_UP_TIER};
pub use spread::{PathWs, MAX_HOPS};
pub use stats::{FctStats, SlowFlow};
