//! # aifabric-model
//!
//! The index-based model of an AI training network: GPUs, switches, links and where they sit
//! (region / building / data hall / zone / pod / rack, plane, power domain), plus the hardware
//! catalog and failure masks.
//!
//! Layers, top-down:
//! - [`Fabric`]: immutable tables of [`Device`]s, [`Link`]s and [`Bundle`]s, with a compressed
//!   adjacency (CSR). Everything is addressed by a `u32` id ([`DeviceId`], [`LinkId`], ...);
//!   there are no per-device heap objects, so 200k GPUs and 2M links fit in ~100 MB.
//! - [`FabricBuilder`]: the only constructor. It checks each link against its endpoints' port
//!   budgets when it is added, so a built `Fabric` never has more links than ports.
//! - [`FailureMask`]: a failure scenario as bitsets over devices and links. Queries that depend
//!   on liveness take one; the model itself is never edited.
//! - [`Catalog`]: hardware models (ports, buffers, power).
//!
//! Invariants: devices of a zone are contiguous and zones are in id order; the links of a
//! bundle are contiguous; port indices on a device are unique within each port group; all
//! capacities are integers in Mb/s, lengths in decimetres.

mod builder;
mod domains;
mod fabric;
mod hardware;
mod ids;
mod mask;
mod role;
mod scenario;
mod view;

pub use builder::{port_group_kind, FabricBuilder, PortError};
pub use domains::{DomainClass, SrgCatalog, SrgClass};
pub use fabric::*;
pub use hardware::{Catalog, HardwareModel, PortGroup, PortMode, FABRIC_LANE_MBPS};
pub use ids::*;
pub use mask::FailureMask;
pub use role::{Optic, PortKind, Role, ZoneKind};
pub use scenario::{Scenario, Selection, SelectorError};
pub use view::FabricView;
