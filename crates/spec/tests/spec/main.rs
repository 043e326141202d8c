//! The integration tests of `aifabric-spec`, one binary (each module was its own binary).

mod bad_input;
mod builders;
mod never_panics;
mod slurm;
