//! The integration tests of `aifabric-routing`, one binary (each module was its own binary).

mod addressing;
mod bgp;
mod blackholes;
mod ibm;
mod incremental;
mod nsf_pruning;
