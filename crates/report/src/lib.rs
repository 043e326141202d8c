//! # aifabric-report
//!
//! What leaves aifabric for people and other tools: [`export`], NetBox bulk-import
//! CSVs, GraphML and node-link JSON that NetworkX loads, the IPv6 plan as CSV and a DOT
//! overview at zone and BAG-plane level; [`data`] gathers the report's figures from the other
//! crates (`report.json`) and [`html`] renders them as one self-contained HTML file.
//!
//! Architecture invariant: writes only into the `Write`s it is given (files are the CLI's
//! business); deterministic (output order is id order).
//!
//! ```
//! use aifabric_report::export::{self, Format};
//!
//! let f = aifabric_spec::load("dsf-l1-zone").unwrap();
//! let mut files = std::collections::HashMap::new();
//! for &name in Format::Netbox.files() {
//!     let mut out = Vec::new();
//!     export::write(&f, Format::Netbox, name, &mut out).unwrap();
//!     files.insert(name, String::from_utf8(out).unwrap());
//! }
//! // Every file it lists is written; under a header row, one row per device and per cable.
//! assert!(files.values().all(|text| text.lines().count() > 1));
//! assert_eq!(files["devices.csv"].lines().count(), 1 + f.devices().len());
//! assert_eq!(files["cables.csv"].lines().count(), 1 + f.links().len());
//! ```

pub mod compare;
pub mod data;
mod drawings;
pub mod export;
pub mod frr;
pub mod html;
pub mod summary;
