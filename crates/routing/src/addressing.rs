//! The IPv6 addressing plan, deterministic from the fabric.
//!
//! Unique-local space (RFC 4193), one /32 per purpose:
//! - GPU subnets: `fd00:a1::/32` + region (8 bits) + zone within the region (8 bits) + rack
//!   (16 bits) = a /64 per rack; a zone's racks aggregate to its /48, a region's to its /40.
//! - Point-to-point links: `fd00:b1::/32` + link id: a /127 per link (RFC 6164), the lower
//!   address on the lower-tier end.
//! - Loopbacks: `fd00:c1::/32` + device id: a /128 per device.

use aifabric_model::*;
/// An IPv6 prefix: the `ipnet` crate's. The plan's prefixes have their host bits cleared.
pub use ipnet::Ipv6Net;
use std::net::Ipv6Addr;

/// The prefix of length `len` holding `bits`, host bits cleared. `len` is one of the plan's
/// constant lengths, all at most 128.
fn prefix(bits: u128, len: u8) -> Ipv6Net {
    Ipv6Net::new_assert(Ipv6Addr::from(bits), len).trunc()
}

const GPU_BASE: u128 = 0xfd00_00a1 << 96;
const LINK_BASE: u128 = 0xfd00_00b1 << 96;
const LOOPBACK_BASE: u128 = 0xfd00_00c1 << 96;

/// A fabric too large for the plan's fields.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("addressing plan: {0}")]
pub struct PlanError(pub String);

/// The addresses of a fabric.
#[derive(Clone, Debug)]
pub struct AddressPlan {
    /// Index of each zone within its region.
    zone_index: Vec<u8>,
}

impl AddressPlan {
    /// Plan `f`; fails if it has more than 256 regions, 256 zones in a region or 65,536 racks
    /// in a zone (the widths of the plan's fields).
    pub fn new(f: &Fabric) -> Result<Self, PlanError> {
        if f.regions().len() > 256 {
            return Err(PlanError(format!(
                "{} regions (at most 256)",
                f.regions().len()
            )));
        }
        let mut next = vec![0u32; f.regions().len()];
        let mut zone_index = Vec::with_capacity(f.zones().len());
        for z in f.zones() {
            let n = &mut next[z.region.idx()];
            if *n > 255 {
                return Err(PlanError(format!(
                    "region {} has more than 256 zones",
                    f.regions()[z.region.idx()].name
                )));
            }
            zone_index.push(*n as u8);
            *n += 1;
        }
        for d in f.devices() {
            if matches!(d.role, Role::Rtsw | Role::Rdsw) && d.rack() > Some(0xffff) {
                return Err(PlanError(format!(
                    "zone {} has more than 65,536 racks",
                    f.zones()[d.zone.idx()].name
                )));
            }
        }
        Ok(AddressPlan { zone_index })
    }

    /// A region's GPU aggregate (/40).
    pub fn region_aggregate(&self, r: RegionId) -> Ipv6Net {
        prefix(GPU_BASE | (u128::from(r.get()) << 88), 40)
    }

    /// A zone's GPU aggregate (/48).
    pub fn zone_aggregate(&self, f: &Fabric, z: ZoneId) -> Ipv6Net {
        let region = f.zones()[z.idx()].region;
        let bits = GPU_BASE
            | (u128::from(region.get()) << 88)
            | (u128::from(self.zone_index[z.idx()]) << 80);
        prefix(bits, 48)
    }

    /// The GPU subnet of the rack behind rack switch `rack_switch` (/64).
    pub fn rack_prefix(&self, f: &Fabric, rack_switch: DeviceId) -> Ipv6Net {
        let d = f.device(rack_switch);
        let zone = self.zone_aggregate(f, d.zone);
        prefix(
            u128::from(zone.network()) | (u128::from(d.rack().unwrap_or(0) & 0xffff) << 64),
            64,
        )
    }

    /// A link's /127 and the addresses of its `a` and `b` ends.
    pub fn link(&self, l: LinkId) -> (Ipv6Net, Ipv6Addr, Ipv6Addr) {
        let base = LINK_BASE | (u128::from(l.get()) << 1);
        (
            prefix(base, 127),
            Ipv6Addr::from(base),
            Ipv6Addr::from(base | 1),
        )
    }

    /// A device's loopback (/128).
    pub fn loopback(&self, d: DeviceId) -> Ipv6Net {
        prefix(LOOPBACK_BASE | u128::from(d.get()), 128)
    }
}
