//! The integration tests of `aifabric-capacity`, one binary (each module was its own binary).

mod buffers;
mod fat_tree;
mod hub;
mod reference;
mod scenario;
