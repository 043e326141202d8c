//! The integration tests of `aifabric-report`, one binary (each module was its own binary).

mod export;
mod frr;
