//! The integration tests of `aifabric-chakra`, one binary (each module was its own binary).

mod common;
mod io;
mod replay;
mod scale;
mod synth;
