//! The integration tests of `aifabric-report`, one binary (each module was its own binary).

mod chromium;
mod export;
mod frr;
mod report;
