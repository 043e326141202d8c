//! What a scenario takes out of service: the [`Down`] set of devices and links.

use crate::*;

/// What a scenario takes out of service: member devices and links, and the mask of both.
#[derive(Clone, Debug)]
pub struct Down {
    /// Devices down (sorted, unique).
    pub devices: Vec<DeviceId>,
    /// Links marked down themselves (sorted, unique); links of down devices are implied.
    pub links: Vec<LinkId>,
    /// The same as a mask.
    pub mask: FailureMask,
}

impl Down {
    /// Nothing down.
    pub fn none(f: &Fabric) -> Self {
        Down {
            devices: Vec::new(),
            links: Vec::new(),
            mask: FailureMask::none(f),
        }
    }

    /// What `mask` marks failed.
    pub fn of_mask(mask: &FailureMask) -> Self {
        Down {
            devices: mask.failed_devices().collect(),
            links: mask.failed_links().collect(),
            mask: mask.clone(),
        }
    }

    /// The union of shared-risk groups `srgs` of `catalog`; ids from `catalog.len()` up are
    /// single links ([`SrgCatalog::link_id`]).
    pub fn of_srgs(f: &Fabric, catalog: &SrgCatalog, srgs: &[usize]) -> Self {
        let mut d = Down::none(f);
        for &i in srgs {
            if let Some(l) = catalog.as_link(i) {
                d.links.push(l);
                d.mask.fail_link(l);
                continue;
            }
            let (devs, links) = catalog.members(i);
            d.devices.extend_from_slice(devs);
            d.links.extend_from_slice(links);
            catalog.apply(i, &mut d.mask);
        }
        d.devices.sort_unstable();
        d.devices.dedup();
        d.links.sort_unstable();
        d.links.dedup();
        d
    }

    /// Add devices and links (e.g. a drain) to what is down.
    pub fn add(&mut self, devices: &[DeviceId], links: &[LinkId]) {
        for &d in devices {
            self.mask.fail_device(d);
        }
        for &l in links {
            self.mask.fail_link(l);
        }
        self.devices.extend_from_slice(devices);
        self.links.extend_from_slice(links);
        self.devices.sort_unstable();
        self.devices.dedup();
        self.links.sort_unstable();
        self.links.dedup();
    }

    /// Every link that is down: the member links and all links of member devices (sorted,
    /// unique).
    pub fn down_links(&self, f: &Fabric) -> Vec<LinkId> {
        let mut out = self.links.clone();
        for &d in &self.devices {
            out.extend_from_slice(f.incident(d));
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}
