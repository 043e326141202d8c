//! The integration tests of `aifabric-engine`, one binary (each module was its own binary).

mod engine;
mod fluid;
mod maxmin;
mod nccl;
mod spray;
mod validation;
