//! The fabric: devices, links and bundles in flat tables with a compressed adjacency.
//!
//! Immutable once built ([`crate::FabricBuilder::finish`]); shared by reference across threads.
//! Every query that depends on what is up takes a [`FailureMask`].

use crate::hardware::{Catalog, HardwareModel};
use crate::ids::*;
use crate::mask::FailureMask;
use crate::role::{Optic, PortKind, Role, ZoneKind};
pub use nonmax::{NonMaxU16, NonMaxU32};
use serde::{Deserialize, Serialize};

/// A region: one BAG layer and the buildings under it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Region {
    /// Name from the spec.
    pub name: String,
}

/// A data-center building.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Building {
    /// Name from the spec.
    pub name: String,
    /// Region the building is in.
    pub region: RegionId,
    /// Number of data halls.
    pub data_halls: u16,
}

/// A zone: one L2 fabric, or the BAG layer of a region.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Zone {
    /// Fully qualified name, the prefix of its devices' names (e.g. `east.dc1.l2a`).
    pub name: String,
    /// Which builder made it.
    pub kind: ZoneKind,
    /// Region of the zone.
    pub region: RegionId,
    /// Building of the zone; `None` for a BAG layer.
    pub building: Option<BuildingId>,
}

/// A shared-risk group: devices and links that fail together (e.g. a fiber conduit).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Srg {
    /// Name, used in selectors as `srg:NAME`.
    pub name: String,
    /// Member devices.
    pub devices: Vec<DeviceId>,
    /// Member links (besides those of member devices).
    pub links: Vec<LinkId>,
}

/// A power-distribution domain: devices that lose power together.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PowerDomain {
    /// Name, e.g. `east.dc1.hall2.pd5`.
    pub name: String,
    /// Building the domain is in; `None` for BAG layers outside buildings.
    pub building: Option<BuildingId>,
}

/// One device. Compact and `Copy`: no heap data; names are derived ([`Fabric::device_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Device {
    /// What the device does.
    pub role: Role,
    /// Hardware model.
    pub hw: HwId,
    /// Zone the device belongs to.
    pub zone: ZoneId,
    /// Ordinal among the devices of this role in this zone; for BAG chassis, within the plane;
    /// for GPUs, within the rack.
    pub index: u32,
    /// Plane (BAG plane, NSF spine plane), if the device is in one (read with
    /// [`Device::plane`]). The ordinals are `NonMax` so that `None` costs no space.
    pub plane: Option<NonMaxU16>,
    /// Data hall within the building, if the device is in one ([`Device::hall`]).
    pub hall: Option<NonMaxU16>,
    /// Pod (NSF pod, RoCE AI zone, DSF cluster), if the device is in one ([`Device::pod`]).
    pub pod: Option<NonMaxU32>,
    /// Rack (GPUs and their rack switch), if the device is in one ([`Device::rack`]).
    pub rack: Option<NonMaxU32>,
    /// Power-distribution domain.
    pub power_domain: PowerDomainId,
}

impl Device {
    /// Plane (BAG plane, NSF spine plane), if the device is in one.
    #[inline]
    pub fn plane(&self) -> Option<u16> {
        self.plane.map(|v| v.get())
    }

    /// Data hall within the building, if the device is in one.
    #[inline]
    pub fn hall(&self) -> Option<u16> {
        self.hall.map(|v| v.get())
    }

    /// Pod (NSF pod, RoCE AI zone, DSF cluster), if the device is in one.
    #[inline]
    pub fn pod(&self) -> Option<u32> {
        self.pod.map(|v| v.get())
    }

    /// Rack (GPUs and their rack switch), if the device is in one.
    #[inline]
    pub fn rack(&self) -> Option<u32> {
        self.rack.map(|v| v.get())
    }
}

/// Link flag: the link is encrypted with MACsec (BAG-to-BAG).
pub const LINK_MACSEC: u8 = 1;

/// One physical link between two ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// First endpoint (the lower tier: GPU side, rack side, L2 side).
    pub a: DeviceId,
    /// Second endpoint (the upper tier).
    pub b: DeviceId,
    /// Port index on `a` within its port group.
    pub a_port: u16,
    /// Port index on `b` within its port group.
    pub b_port: u16,
    /// Capacity per direction in Mb/s.
    pub capacity_mbps: u32,
    /// Cable length in decimetres.
    pub length_dm: u32,
    /// Host, Ethernet or Fabric.
    pub kind: PortKind,
    /// Optic class, from the length.
    pub optic: Optic,
    /// `LINK_*` flags.
    pub flags: u8,
    /// Bundle the link belongs to.
    pub bundle: BundleId,
}

impl Link {
    /// The endpoint that is not `d`.
    #[inline]
    pub fn other(&self, d: DeviceId) -> DeviceId {
        if self.a == d {
            self.b
        } else {
            self.a
        }
    }

    /// Cable length in metres.
    pub fn length_m(&self) -> f64 {
        f64::from(self.length_dm) / 10.0
    }
}

/// Parallel links between the same two devices, contiguous in the link table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bundle {
    /// Lower-tier endpoint.
    pub a: DeviceId,
    /// Upper-tier endpoint.
    pub b: DeviceId,
    /// First link of the bundle.
    pub first: LinkId,
    /// Number of member links.
    pub count: u32,
    /// A hyperport: the members form one logical port (one ECMP member), e.g. 4 x 800G = 3.2T.
    pub hyperport: bool,
}

impl Bundle {
    /// The member links.
    pub fn links(&self) -> impl Iterator<Item = LinkId> {
        (self.first.get()..self.first.get() + self.count).map(LinkId::new)
    }
}

/// An optional ordinal in a name: the number, or `?` where the builder gave none (a GPU is
/// always in a rack and a BAG chassis in a plane, so `?` only shows a builder's mistake).
pub struct Ordinal<T>(pub Option<T>);

impl<T: std::fmt::Display> std::fmt::Display for Ordinal<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(v) => v.fmt(f),
            None => f.write_str("?"),
        }
    }
}

/// The whole built network. See the crate docs for the invariants.
#[derive(Clone, Debug)]
pub struct Fabric {
    pub(crate) name: String,
    pub(crate) catalog: Catalog,
    pub(crate) regions: Vec<Region>,
    pub(crate) buildings: Vec<Building>,
    pub(crate) zones: Vec<Zone>,
    pub(crate) power_domains: Vec<PowerDomain>,
    pub(crate) srgs: Vec<Srg>,
    pub(crate) devices: Vec<Device>,
    pub(crate) links: Vec<Link>,
    pub(crate) bundles: Vec<Bundle>,
    /// CSR offsets: the links of device `d` are `adj[adj_offsets[d]..adj_offsets[d + 1]]`.
    pub(crate) adj_offsets: Vec<u32>,
    pub(crate) adj: Vec<LinkId>,
}

impl Fabric {
    /// Name of the spec it was built from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Hardware models used by devices.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Regions, indexed by [`RegionId`].
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// Buildings, indexed by [`BuildingId`].
    pub fn buildings(&self) -> &[Building] {
        &self.buildings
    }

    /// Zones, indexed by [`ZoneId`].
    pub fn zones(&self) -> &[Zone] {
        &self.zones
    }

    /// Power-distribution domains, indexed by [`PowerDomainId`].
    pub fn power_domains(&self) -> &[PowerDomain] {
        &self.power_domains
    }

    /// Named shared-risk groups defined in the spec, indexed by [`SrgId`].
    pub fn srgs(&self) -> &[Srg] {
        &self.srgs
    }

    /// Add a named shared-risk group. The one thing added after
    /// [`crate::FabricBuilder::finish`]: its members are selectors (`a--b`, `srg:NAME`), which
    /// resolve against the finished fabric and the groups added before it. Members are sorted
    /// and deduplicated; panics on a member id outside the fabric or a name already taken
    /// (both builder mistakes, not input errors: the spec layer reports those).
    #[track_caller]
    pub fn add_srg(&mut self, mut srg: Srg) -> SrgId {
        assert!(
            self.srgs.iter().all(|g| g.name != srg.name),
            "shared-risk group `{}` defined twice",
            srg.name
        );
        assert!(srg.devices.iter().all(|d| d.idx() < self.devices.len()));
        assert!(srg.links.iter().all(|l| l.idx() < self.links.len()));
        srg.devices.sort_unstable();
        srg.devices.dedup();
        srg.links.sort_unstable();
        srg.links.dedup();
        self.srgs.push(srg);
        SrgId::from_idx(self.srgs.len() - 1)
    }

    /// All devices, indexed by [`DeviceId`].
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// All links, indexed by [`LinkId`].
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// All bundles, indexed by [`BundleId`].
    pub fn bundles(&self) -> &[Bundle] {
        &self.bundles
    }

    /// One device.
    #[inline]
    pub fn device(&self, d: DeviceId) -> &Device {
        &self.devices[d.idx()]
    }

    /// One link.
    #[inline]
    pub fn link(&self, l: LinkId) -> &Link {
        &self.links[l.idx()]
    }

    /// Link `l` as a selector names it, `A--B#k`: the k-th of A's links to B (what `--fail`
    /// accepts; several bundles between the same two devices, hyperports, count as one).
    pub fn link_selector(&self, l: LinkId) -> String {
        let link = &self.links[l.idx()];
        let k = self
            .incident(link.a)
            .iter()
            .filter(|&&x| self.links[x.idx()].other(link.a) == link.b)
            .position(|&x| x == l)
            .unwrap_or(0);
        format!(
            "{}--{}#{k}",
            self.device_name(link.a),
            self.device_name(link.b)
        )
    }

    /// Set link `l`'s capacity per direction, Mb/s: the network as built, where an
    /// interface runs at another speed than planned. Everything computed from the fabric
    /// afterwards (capacity, routes' link bandwidth, engines) sees it.
    pub fn set_link_capacity(&mut self, l: LinkId, capacity_mbps: u32) {
        self.links[l.idx()].capacity_mbps = capacity_mbps;
    }

    /// The hardware model of a device.
    pub fn hardware(&self, d: DeviceId) -> &HardwareModel {
        self.catalog.get(self.device(d).hw)
    }

    /// Every link attached to `d`, up or down, in link-id order.
    #[inline]
    pub fn incident(&self, d: DeviceId) -> &[LinkId] {
        let (s, e) = (self.adj_offsets[d.idx()], self.adj_offsets[d.idx() + 1]);
        &self.adj[s as usize..e as usize]
    }

    /// Whether link `l` carries traffic under `mask`: neither it nor an endpoint has failed.
    #[inline]
    pub fn link_up(&self, l: LinkId, mask: &FailureMask) -> bool {
        let link = &self.links[l.idx()];
        !mask.link_failed(l) && !mask.device_failed(link.a) && !mask.device_failed(link.b)
    }

    /// The live links of `d` with the neighbour at their other end.
    pub fn neighbors<'a>(
        &'a self,
        d: DeviceId,
        mask: &'a FailureMask,
    ) -> impl Iterator<Item = (LinkId, DeviceId)> + 'a {
        self.incident(d)
            .iter()
            .copied()
            .filter(move |&l| self.link_up(l, mask))
            .map(move |l| (l, self.links[l.idx()].other(d)))
    }

    /// Live capacity in Mb/s from `d` toward devices of role `toward`.
    pub fn capacity_toward_mbps(&self, d: DeviceId, toward: Role, mask: &FailureMask) -> u64 {
        self.neighbors(d, mask)
            .filter(|&(_, n)| self.devices[n.idx()].role == toward)
            .map(|(l, _)| u64::from(self.links[l.idx()].capacity_mbps))
            .sum()
    }

    /// Ids of the devices with role `role`, in id order.
    pub fn devices_with_role(&self, role: Role) -> impl Iterator<Item = DeviceId> + '_ {
        self.devices
            .iter()
            .enumerate()
            .filter(move |(_, d)| d.role == role)
            .map(|(i, _)| DeviceId::from_idx(i))
    }

    /// The devices of one zone. Builders add a zone's devices contiguously, so this is a range.
    pub fn zone_devices(&self, z: ZoneId) -> std::ops::Range<u32> {
        let start = self.devices.partition_point(|d| d.zone < z);
        let end = self.devices.partition_point(|d| d.zone <= z);
        start as u32..end as u32
    }

    /// Where a device stands, as inventories file it: its site (`region.building`, or
    /// `region.bag` for a region's BAG) and data hall (`site.hallN`; empty when none).
    pub fn site_and_hall(&self, d: DeviceId) -> (String, String) {
        let dev = &self.devices[d.idx()];
        let z = &self.zones[dev.zone.idx()];
        let region = &self.regions[z.region.idx()].name;
        let site = match z.building {
            Some(b) => format!("{region}.{}", self.buildings[b.idx()].name),
            None => format!("{region}.bag"),
        };
        let hall = dev
            .hall
            .map_or_else(String::new, |h| format!("{site}.hall{h}"));
        (site, hall)
    }

    /// The unique, human name of a device, derived from its zone, role and indices:
    /// `zone.rack12.gpu3`, `zone.rdsw17`, `bag.plane3.c1`.
    pub fn device_name(&self, id: DeviceId) -> String {
        let d = &self.devices[id.idx()];
        let zone = &self.zones[d.zone.idx()].name;
        match d.role {
            Role::Gpu => format!("{zone}.rack{}.gpu{}", Ordinal(d.rack()), d.index),
            Role::Bag | Role::Hub => format!("{zone}.plane{}.c{}", Ordinal(d.plane()), d.index),
            r => format!("{zone}.{}{}", r.as_str(), d.index),
        }
    }

    /// Find a device by its name ([`Fabric::device_name`]). Linear in the zone's size.
    pub fn find_device(&self, name: &str) -> Option<DeviceId> {
        let zone = self
            .zones
            .iter()
            .enumerate()
            .filter(|(_, z)| name.starts_with(&format!("{}.", z.name)))
            .max_by_key(|(_, z)| z.name.len())
            .map(|(i, _)| ZoneId::from_idx(i))?;
        self.zone_devices(zone)
            .map(DeviceId::new)
            .find(|&d| self.device_name(d) == name)
    }

    /// Region of a device.
    pub fn region_of(&self, d: DeviceId) -> RegionId {
        self.zones[self.devices[d.idx()].zone.idx()].region
    }
}
