//! # aifabric-report
//!
//! What leaves aifabric for people and other tools: [`export`], NetBox bulk-import
//! CSVs, GraphML and node-link JSON that NetworkX loads, the IPv6 plan as CSV and a DOT
//! overview at zone and BAG-plane level; [`data`] gathers the report's figures from the other
//! crates (`report.json`) and [`html`] renders them as one self-contained HTML file.
//!
//! Architecture invariant: writes only into the `Write`s it is given (files are the CLI's
//! business); deterministic (output order is id order).

pub mod data;
pub mod export;
pub mod html;
