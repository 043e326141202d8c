//! # aifabric-report
//!
//! What leaves aifabric for other tools (issue 6). So far: [`export`], NetBox bulk-import
//! CSVs, GraphML and node-link JSON that NetworkX loads, the IPv6 plan as CSV and a DOT
//! overview at zone and BAG-plane level.
//!
//! Architecture invariant: writes only into the `Write`s it is given (files are the CLI's
//! business); deterministic (output order is id order).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod export;
