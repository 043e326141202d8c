//! # aifabric-routing
//!
//! The control plane: what every switch forwards, given the fabric and a scenario.
//!
//! - [`bgp`]: eBGP as converged state (no messages): ASN plans (RFC 7938), sessions per
//!   bundle, loop prevention, multipath-relax, soft drains, the link-bandwidth community;
//!   routes toward a destination speaker, and the whole forwarding state with incremental
//!   updates;
//! - [`ucmp`]: link-bandwidth weights (draft-ietf-idr-link-bandwidth), the FRR behaviours for
//!   paths without the community, and quantization into hardware next-hop groups;
//! - [`aggregation`]: zone and region aggregates, and the blackholes they make;
//! - [`fib`]: per-device route views; [`addressing`]: the IPv6 plan; [`ibm`]: DSF Input
//!   Balanced Mode; [`nsf`]: NSF capacity-aware pruning.
//!
//! Architecture invariant: pure functions of (`Fabric`, `Scenario`); no I/O.
//!
//! ```
//! use aifabric_routing::ucmp::{quantize, weights, MissingBandwidth};
//!
//! // Two multipaths heard at 100 and 300 Gb/s, one live link each: traffic splits 1:3...
//! let w = weights(&[(Some(100), 1), (Some(300), 1)], MissingBandwidth::EcmpFallback);
//! assert_eq!(w, vec![0.25, 0.75]);
//! // ...and into a 16-entry hardware group as 4 and 12 members, the same ratio.
//! assert_eq!(quantize(&[100, 300], 16), vec![4, 12]);
//! // A path without the community falls back to equal shares per link for all (FRR's
//! // default; eBGP runs per link): 2 links and 1 link split 2:1.
//! let w = weights(&[(Some(100), 2), (None, 1)], MissingBandwidth::EcmpFallback);
//! assert_eq!(w, vec![2.0 / 3.0, 1.0 / 3.0]);
//! ```

pub mod addressing;
pub mod aggregation;
pub mod bgp;
pub mod fib;
pub mod ibm;
pub mod nsf;
mod options;
pub mod ucmp;
