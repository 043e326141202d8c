//! The integration tests of `aifabric-workload`, one binary (each module was its own binary).

mod collective;
mod model;
mod workload;
