//! Failure domains generated from the model (issue 4, item 1): every building, data hall,
//! power-distribution domain, BAG plane, BAG chassis, BAG line card and fiber conduit, named
//! so that any command can select one (`class:NAME`) and a sweep can enumerate them all.
//!
//! Nesting follows from membership: a building holds its halls, a hall its power domains, a
//! plane its chassis, a chassis its line cards, so failing a parent fails its children.
//! Members are resolved on demand from the model's ids; nothing is stored per domain.

use crate::fabric::Fabric;
use crate::ids::{DeviceId, LinkId};
use crate::role::Role;
use crate::scenario::Selection;

/// A class of generated failure domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DomainClass {
    /// A building: `building:east.dc1`.
    Building,
    /// A data hall: `hall:east.dc1.hall2`.
    Hall,
    /// A power-distribution domain: `pd:east.dc1.l2.hall0.pd3`.
    PowerDomain,
    /// A BAG plane: `plane:east.bag.plane3`.
    BagPlane,
    /// A BAG chassis: `chassis:east.bag.plane3.c1`.
    BagChassis,
    /// A BAG line card (its share of the chassis ports): `linecard:east.bag.plane3.c1.lc4`.
    LineCard,
    /// A fiber conduit: a building's uplinks to its BAG (`conduit:east.dc1`) or the
    /// inter-BAG links of a region pair (`conduit:east--west`).
    Conduit,
}

impl DomainClass {
    /// Every class, outermost first.
    pub const ALL: [DomainClass; 7] = [
        DomainClass::Building,
        DomainClass::Hall,
        DomainClass::PowerDomain,
        DomainClass::BagPlane,
        DomainClass::BagChassis,
        DomainClass::LineCard,
        DomainClass::Conduit,
    ];

    /// The selector prefix, e.g. `hall`.
    pub fn prefix(self) -> &'static str {
        match self {
            DomainClass::Building => "building",
            DomainClass::Hall => "hall",
            DomainClass::PowerDomain => "pd",
            DomainClass::BagPlane => "plane",
            DomainClass::BagChassis => "chassis",
            DomainClass::LineCard => "linecard",
            DomainClass::Conduit => "conduit",
        }
    }

    /// The class of a selector prefix.
    pub fn from_prefix(p: &str) -> Option<DomainClass> {
        DomainClass::ALL.into_iter().find(|c| c.prefix() == p)
    }
}

fn is_bag(r: Role) -> bool {
    matches!(r, Role::Bag | Role::Hub)
}

impl Fabric {
    fn building_name(&self, b: usize) -> String {
        let bl = &self.buildings[b];
        format!("{}.{}", self.regions[bl.region.idx()].name, bl.name)
    }

    fn building_of(&self, d: DeviceId) -> Option<usize> {
        self.zones[self.devices[d.idx()].zone.idx()]
            .building
            .map(|b| b.idx())
    }

    fn line_cards(&self, chassis: DeviceId) -> (u32, u32) {
        let hw = self.hardware(chassis);
        let ports = hw
            .ports
            .first()
            .and_then(|g| g.modes.first())
            .map_or(0, |m| m.count);
        (hw.line_cards, ports / hw.line_cards.max(1))
    }

    /// Names of every failure domain of `class`, in a fixed order (for sweeps).
    pub fn failure_domains(&self, class: DomainClass) -> Vec<String> {
        let bag_chassis = || {
            (0..self.devices.len() as u32)
                .map(DeviceId)
                .filter(|&d| is_bag(self.devices[d.idx()].role))
        };
        match class {
            DomainClass::Building => (0..self.buildings.len())
                .map(|b| self.building_name(b))
                .collect(),
            DomainClass::Hall => (0..self.buildings.len())
                .flat_map(|b| {
                    let name = self.building_name(b);
                    (0..self.buildings[b].data_halls).map(move |h| format!("{name}.hall{h}"))
                })
                .collect(),
            DomainClass::PowerDomain => self.power_domains.iter().map(|p| p.name.clone()).collect(),
            DomainClass::BagPlane => {
                let mut v: Vec<String> = bag_chassis()
                    .map(|d| {
                        let dev = &self.devices[d.idx()];
                        format!("{}.plane{}", self.zones[dev.zone.idx()].name, dev.plane)
                    })
                    .collect();
                v.dedup();
                v
            }
            DomainClass::BagChassis => bag_chassis().map(|d| self.device_name(d)).collect(),
            DomainClass::LineCard => bag_chassis()
                .flat_map(|d| {
                    let name = self.device_name(d);
                    (0..self.line_cards(d).0).map(move |k| format!("{name}.lc{k}"))
                })
                .collect(),
            DomainClass::Conduit => {
                // One pass over the links: buildings with uplinks to BAG, region pairs with
                // inter-BAG links.
                let mut buildings = std::collections::BTreeSet::new();
                let mut pairs = std::collections::BTreeSet::new();
                for k in &self.links {
                    let (ba, bb) = (
                        is_bag(self.devices[k.a.idx()].role),
                        is_bag(self.devices[k.b.idx()].role),
                    );
                    match (ba, bb) {
                        (false, true) => buildings.extend(self.building_of(k.a)),
                        (true, false) => buildings.extend(self.building_of(k.b)),
                        (true, true) => {
                            let (x, y) = (self.region_of(k.a).idx(), self.region_of(k.b).idx());
                            if x != y {
                                pairs.insert((x.min(y), x.max(y)));
                            }
                        }
                        (false, false) => {}
                    }
                }
                let mut v: Vec<String> = buildings
                    .into_iter()
                    .map(|b| self.building_name(b))
                    .collect();
                v.extend(
                    pairs.into_iter().map(|(a, b)| {
                        format!("{}--{}", self.regions[a].name, self.regions[b].name)
                    }),
                );
                v
            }
        }
    }

    /// Links between a non-BAG device satisfying `inside` and a BAG chassis.
    fn conduit_links(&self, inside: impl Fn(DeviceId) -> bool) -> Vec<LinkId> {
        (0..self.links.len() as u32)
            .map(LinkId)
            .filter(|&l| {
                let k = &self.links[l.idx()];
                let (ra, rb) = (self.devices[k.a.idx()].role, self.devices[k.b.idx()].role);
                (inside(k.a) && !is_bag(ra) && is_bag(rb))
                    || (inside(k.b) && !is_bag(rb) && is_bag(ra))
            })
            .collect()
    }

    /// Links between BAG chassis of regions `a` and `b`.
    fn region_pair_links(&self, a: usize, b: usize) -> Vec<LinkId> {
        (0..self.links.len() as u32)
            .map(LinkId)
            .filter(|&l| {
                let k = &self.links[l.idx()];
                let (x, y) = (self.region_of(k.a).idx(), self.region_of(k.b).idx());
                is_bag(self.devices[k.a.idx()].role)
                    && is_bag(self.devices[k.b.idx()].role)
                    && ((x, y) == (a, b) || (x, y) == (b, a))
            })
            .collect()
    }

    /// Resolve `class:NAME`; `None` if no domain of that class has that name.
    pub(crate) fn select_domain(&self, class: DomainClass, name: &str) -> Option<Selection> {
        let devices_where = |keep: &dyn Fn(DeviceId) -> bool| -> Vec<DeviceId> {
            (0..self.devices.len() as u32)
                .map(DeviceId)
                .filter(|&d| keep(d))
                .collect()
        };
        let found = match class {
            DomainClass::Building => {
                let b = (0..self.buildings.len()).find(|&b| self.building_name(b) == name)?;
                Selection::Devices(devices_where(&|d| self.building_of(d) == Some(b)))
            }
            DomainClass::Hall => {
                let (bname, h) = name.rsplit_once(".hall")?;
                let h: u16 = h.parse().ok()?;
                let b = (0..self.buildings.len()).find(|&b| self.building_name(b) == bname)?;
                Selection::Devices(devices_where(&|d| {
                    self.building_of(d) == Some(b) && self.devices[d.idx()].hall == h
                }))
            }
            DomainClass::PowerDomain => {
                let p = self.power_domains.iter().position(|p| p.name == name)?;
                Selection::Devices(devices_where(&|d| {
                    self.devices[d.idx()].power_domain.idx() == p
                }))
            }
            DomainClass::BagPlane | DomainClass::BagChassis => {
                let prefix = format!("{name}.");
                Selection::Devices(devices_where(&|d| {
                    if !is_bag(self.devices[d.idx()].role) {
                        return false;
                    }
                    let n = self.device_name(d);
                    match class {
                        DomainClass::BagChassis => n == name,
                        _ => n.starts_with(&prefix),
                    }
                }))
            }
            DomainClass::LineCard => {
                let (chassis, k) = name.rsplit_once(".lc")?;
                let k: u32 = k.parse().ok()?;
                let c = self
                    .find_device(chassis)
                    .filter(|&c| is_bag(self.devices[c.idx()].role))?;
                let (cards, per) = self.line_cards(c);
                if k >= cards {
                    return None;
                }
                let links = self
                    .incident(c)
                    .iter()
                    .copied()
                    .filter(|&l| {
                        let link = &self.links[l.idx()];
                        let port = if link.a == c {
                            link.a_port
                        } else {
                            link.b_port
                        };
                        u32::from(port) / per.max(1) == k
                    })
                    .collect();
                Selection::Links(links)
            }
            DomainClass::Conduit => match name.split_once("--") {
                Some((a, b)) => {
                    let ra = self.regions.iter().position(|r| r.name == a)?;
                    let rb = self.regions.iter().position(|r| r.name == b)?;
                    Selection::Links(self.region_pair_links(ra, rb))
                }
                None => {
                    let b = (0..self.buildings.len()).find(|&b| self.building_name(b) == name)?;
                    Selection::Links(self.conduit_links(|x| self.building_of(x) == Some(b)))
                }
            },
        };
        let empty = match &found {
            Selection::Devices(d) => d.is_empty(),
            Selection::Links(l) => l.is_empty(),
            Selection::Group { devices, links } => devices.is_empty() && links.is_empty(),
        };
        (!empty).then_some(found)
    }
}
