//! The integration tests of `aifabric-workload`, one binary (each module was its own binary).

mod cluster;
mod collective;
mod model;
mod traffic_inputs;
mod workload;
