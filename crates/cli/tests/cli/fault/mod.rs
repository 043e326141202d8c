//! The fault-injection suite (issue 35): malformed inputs per format, resource bombs with
//! their refusal time, interrupts at several points, special files as outputs, shell-hostile
//! names. Every test states what must not happen (a destroyed file, an abort, a silent wrong
//! number) and checks the exit code and the message that replaces it.
//!
//! One module per area; `common` holds the helpers they share.

mod common;
mod formats;
mod inputs;
mod interrupts;
mod lab;
mod outputs;
mod progress;
mod scripts;
mod sweeps;
mod traffic;
