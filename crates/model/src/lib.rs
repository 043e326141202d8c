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
//! - [`FailureMask`]: a failure scenario as bitsets over devices and links ([`Down`]: the same
//!   with the member lists a sweep needs). Queries that depend on liveness take one; the model
//!   itself is never edited.
//! - [`Catalog`]: hardware models (ports, buffers, power).
//! - [`time`]: [`Ps`], the one time type of the engines (integer picoseconds).
//! - [`limits`]: the memory a run may take (`AIFABRIC_MAX_MEMORY_BYTES`, else 80% of physical
//!   memory), which engines check their estimates against before heavy work.
//!
//! Invariants: devices of a zone are contiguous and zones are in id order; the links of a
//! bundle are contiguous; port indices on a device are unique within each port group; all
//! capacities are integers in Mb/s, lengths in decimetres.
//!
//! ```
//! use aifabric_model::*;
//!
//! // Two Minipack2 switches in one zone, cabled with every 400G port they have.
//! let mut b = FabricBuilder::new("pair", Catalog::builtin());
//! let r = b.add_region("r");
//! let (z, pd) = (b.add_zone("z", ZoneKind::Bag, r, None), b.add_power_domain("pd", None));
//! let hw = b.catalog().find("minipack2").unwrap();
//! let ports = b.catalog().get(hw).group(PortKind::Ethernet).unwrap().ports_at(400_000);
//! let sw = |index| Device { role: Role::Rtsw, hw, zone: z, index, plane: None,
//!     hall: None, pod: None, rack: None, power_domain: pd };
//! let (x, y) = (b.add_device(sw(0)), b.add_device(sw(1)));
//! b.add_bundle(x, y, ports, PortKind::Ethernet, 400_000, 1.0, 0, false).unwrap();
//! // The port budget is checked as links are added: one more does not fit.
//! let extra = b.add_bundle(x, y, 1, PortKind::Ethernet, 400_000, 1.0, 0, false);
//! assert!(matches!(extra, Err(PortError::Exhausted { .. })));
//! let f = b.finish();
//! // Failures are a mask over the immutable fabric: one failed link costs one link's capacity.
//! let mut mask = FailureMask::none(&f);
//! assert_eq!(f.capacity_toward_mbps(x, Role::Rtsw, &mask), u64::from(ports) * 400_000);
//! mask.fail_link(f.incident(x)[0]);
//! assert_eq!(f.capacity_toward_mbps(x, Role::Rtsw, &mask), u64::from(ports - 1) * 400_000);
//! ```

mod builder;
mod domains;
mod down;
mod fabric;
mod hardware;
mod ids;
pub mod input;
pub mod limits;
mod mask;
mod role;
mod scenario;
pub mod time;
mod view;

pub use builder::{port_group_kind, FabricBuilder, PortError};
pub use domains::{DomainClass, SrgCatalog, SrgClass};
pub use down::Down;
pub use fabric::*;
pub use hardware::{
    Catalog, HardwareModel, PortGroup, PortMode, DEFAULT_PFC_RESPONSE_NS, FABRIC_LANE_MBPS,
    GB200_MEMORY_BYTES, H100_MEMORY_BYTES,
};
pub use ids::*;
pub use mask::FailureMask;
pub use role::{Optic, PortKind, Role, ZoneKind};
pub use scenario::{did_you_mean, did_you_mean_hint, Scenario, Selection, SelectorError};
pub use time::Ps;
pub use view::FabricView;

/// What [`id_type!`] needs from this crate's dependencies; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use nonmax::NonMaxU32;
}

/// `n` with thousands separators (`4,294,967,232`), for the figures of error messages.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
