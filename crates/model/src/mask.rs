//! Failure scenarios as bit masks over devices and links.
//!
//! A scenario never edits the model: it is a pair of bitsets wrapped around it (the smoltcp
//! "fault injector" pattern), so thousands of scenarios can share one [`crate::Fabric`].

use crate::fabric::Fabric;
use crate::ids::{BundleId, DeviceId, LinkId};
use fixedbitset::FixedBitSet;

/// Which devices and links are down. A link is down if it or either endpoint is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailureMask {
    devices: FixedBitSet,
    links: FixedBitSet,
}

impl FailureMask {
    /// Nothing failed.
    pub fn none(fabric: &Fabric) -> Self {
        FailureMask {
            devices: FixedBitSet::with_capacity(fabric.devices().len()),
            links: FixedBitSet::with_capacity(fabric.links().len()),
        }
    }

    /// Mark a device failed.
    pub fn fail_device(&mut self, d: DeviceId) {
        self.devices.insert(d.idx());
    }

    /// Mark a link failed.
    pub fn fail_link(&mut self, l: LinkId) {
        self.links.insert(l.idx());
    }

    /// Mark every member of a bundle failed.
    pub fn fail_bundle(&mut self, fabric: &Fabric, b: BundleId) {
        for l in fabric.bundles()[b.idx()].links() {
            self.fail_link(l);
        }
    }

    /// Whether the device itself is marked failed.
    #[inline]
    pub fn device_failed(&self, d: DeviceId) -> bool {
        self.devices.contains(d.idx())
    }

    /// Whether the link itself is marked failed (endpoints not considered; see
    /// [`Fabric::link_up`]).
    #[inline]
    pub fn link_failed(&self, l: LinkId) -> bool {
        self.links.contains(l.idx())
    }

    /// Number of devices and links marked failed.
    pub fn counts(&self) -> (usize, usize) {
        (self.devices.count_ones(..), self.links.count_ones(..))
    }

    /// Whether nothing is marked failed.
    pub fn is_empty(&self) -> bool {
        self.devices.is_clear() && self.links.is_clear()
    }

    /// The devices marked failed, in id order.
    pub fn failed_devices(&self) -> impl Iterator<Item = DeviceId> + '_ {
        self.devices.ones().map(DeviceId::from_idx)
    }

    /// The links marked failed themselves, in id order (endpoints not considered).
    pub fn failed_links(&self) -> impl Iterator<Item = LinkId> + '_ {
        self.links.ones().map(LinkId::from_idx)
    }

    /// Union with another mask over the same fabric.
    pub fn union_with(&mut self, other: &FailureMask) {
        self.devices.union_with(&other.devices);
        self.links.union_with(&other.links);
    }
}
