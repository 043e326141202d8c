//! Atomic output files: write to a temporary file next to the target, then rename, so an
//! interrupted run never leaves a half-written file. The one implementation lives with the
//! library that writes files (trace files need it too).

pub use aifabric::write_atomic;
