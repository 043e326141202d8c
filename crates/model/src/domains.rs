//! Failure domains generated from the model: every building, data hall, power-distribution
//! domain, BAG plane, BAG chassis, BAG line card and fiber conduit, named so that any command
//! can select one (`class:NAME`) and a sweep can enumerate them all.
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
                .map(DeviceId::new)
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
                        format!(
                            "{}.plane{}",
                            self.zones[dev.zone.idx()].name,
                            crate::fabric::Ordinal(dev.plane())
                        )
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
            .map(LinkId::new)
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
            .map(LinkId::new)
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
                .map(DeviceId::new)
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
                    self.building_of(d) == Some(b) && self.devices[d.idx()].hall() == Some(h)
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

/// Which family a shared-risk group belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SrgClass {
    /// A generated failure domain.
    Domain(DomainClass),
    /// A group defined in the spec (`srg:NAME`).
    Custom,
    /// One switch (`switch:NAME`): not generated with the others (a fabric has thousands);
    /// a sweep asks for them ([`SrgCatalog::with_switches`]).
    Switch,
}

impl SrgClass {
    /// The selector prefix (`hall`, `srg`, ...).
    pub fn prefix(self) -> &'static str {
        match self {
            SrgClass::Domain(c) => c.prefix(),
            SrgClass::Custom => "srg",
            SrgClass::Switch => "switch",
        }
    }

    /// Every class, generated domains outermost first, then the spec's groups, then single
    /// switches.
    pub fn all() -> impl Iterator<Item = SrgClass> {
        DomainClass::ALL
            .into_iter()
            .map(SrgClass::Domain)
            .chain([SrgClass::Custom, SrgClass::Switch])
    }

    /// The class of a selector prefix.
    pub fn from_prefix(p: &str) -> Option<SrgClass> {
        SrgClass::all().find(|c| c.prefix() == p)
    }
}

/// Every shared-risk group of a fabric with its members, resolved in one pass over the
/// model (a sweep needs thousands; resolving each by name would scan the model each time).
/// Members are stored flat (CSR): group `i` owns `devices[dev_off[i]..dev_off[i + 1]]` and
/// likewise for links.
#[derive(Clone, Debug)]
pub struct SrgCatalog {
    /// Selector of each group, e.g. `hall:east.dc1.hall2` (what `--fail` accepts).
    pub names: Vec<String>,
    /// Class of each group.
    pub classes: Vec<SrgClass>,
    dev_off: Vec<u32>,
    devices: Vec<DeviceId>,
    link_off: Vec<u32>,
    links: Vec<LinkId>,
}

impl SrgCatalog {
    /// Number of groups.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The id of one link in the catalog's id space, past its groups (`len() + link`): a
    /// Monte Carlo draw lists the groups and the single links it fails in one sorted list.
    pub fn link_id(&self, l: LinkId) -> usize {
        self.len() + l.idx()
    }

    /// The link an id past the groups stands for ([`SrgCatalog::link_id`]).
    pub fn as_link(&self, i: usize) -> Option<LinkId> {
        i.checked_sub(self.len()).map(LinkId::from_idx)
    }

    /// The selector of group or link `i`: the group's name, or the link as a bundle member,
    /// `A--B#k` (what `--fail` accepts).
    pub fn name(&self, f: &Fabric, i: usize) -> String {
        match self.as_link(i) {
            None => self.names[i].clone(),
            Some(l) => f.link_selector(l),
        }
    }

    /// Member devices and links of group `i`.
    pub fn members(&self, i: usize) -> (&[DeviceId], &[LinkId]) {
        (
            &self.devices[self.dev_off[i] as usize..self.dev_off[i + 1] as usize],
            &self.links[self.link_off[i] as usize..self.link_off[i + 1] as usize],
        )
    }

    /// Mark group `i` failed in `mask`.
    pub fn apply(&self, i: usize, mask: &mut crate::FailureMask) {
        let (d, l) = self.members(i);
        d.iter().for_each(|&d| mask.fail_device(d));
        l.iter().for_each(|&l| mask.fail_link(l));
    }

    /// Groups of one class, in catalog order.
    pub fn of_class(&self, c: SrgClass) -> Vec<usize> {
        (0..self.len()).filter(|&i| self.classes[i] == c).collect()
    }

    /// The group with this selector.
    pub fn find(&self, selector: &str) -> Option<usize> {
        self.names.iter().position(|n| n == selector)
    }
}

impl Fabric {
    /// All shared-risk groups: the generated failure domains of every class (same names and
    /// order as [`Fabric::failure_domains`]), then the spec's groups. Empty groups are left
    /// out.
    pub fn srg_catalog(&self) -> SrgCatalog {
        let nd = self.devices.len();
        // Group index of each device per device-keyed class (u32::MAX: none).
        let mut dev_groups: Vec<(u32, DeviceId)> = Vec::with_capacity(nd * 3);
        let mut names: Vec<String> = Vec::new();
        let mut classes: Vec<SrgClass> = Vec::new();
        let mut add = |names: &mut Vec<String>, c: DomainClass, v: Vec<String>| -> u32 {
            let base = names.len() as u32;
            for n in v {
                names.push(format!("{}:{n}", c.prefix()));
                classes.push(SrgClass::Domain(c));
            }
            base
        };
        let building_base = add(
            &mut names,
            DomainClass::Building,
            self.failure_domains(DomainClass::Building),
        );
        let hall_base = add(
            &mut names,
            DomainClass::Hall,
            self.failure_domains(DomainClass::Hall),
        );
        let mut hall_first = vec![0u32; self.buildings.len() + 1];
        for (b, bl) in self.buildings.iter().enumerate() {
            hall_first[b + 1] = hall_first[b] + u32::from(bl.data_halls);
        }
        let pd_base = add(
            &mut names,
            DomainClass::PowerDomain,
            self.failure_domains(DomainClass::PowerDomain),
        );
        let plane_names = self.failure_domains(DomainClass::BagPlane);
        let plane_base = add(&mut names, DomainClass::BagPlane, plane_names.clone());
        let chassis_base = add(
            &mut names,
            DomainClass::BagChassis,
            self.failure_domains(DomainClass::BagChassis),
        );
        let lc_base = add(
            &mut names,
            DomainClass::LineCard,
            self.failure_domains(DomainClass::LineCard),
        );
        let conduits = self.failure_domains(DomainClass::Conduit);
        let conduit_base = add(&mut names, DomainClass::Conduit, conduits.clone());
        let custom_base = names.len() as u32;
        for g in &self.srgs {
            names.push(format!("srg:{}", g.name));
            classes.push(SrgClass::Custom);
        }
        let n = names.len();

        let mut plane_idx: std::collections::HashMap<&str, u32> = Default::default();
        for (i, p) in plane_names.iter().enumerate() {
            plane_idx.insert(p.as_str(), i as u32);
        }
        let mut chassis = 0u32;
        let mut lc_first = Vec::new(); // per chassis: first line-card group
        let mut lc = 0u32;
        for (i, d) in self.devices.iter().enumerate() {
            let id = DeviceId::from_idx(i);
            if let Some(b) = self.building_of(id) {
                dev_groups.push((building_base + b as u32, id));
                if let Some(h) = d.hall().filter(|&h| h < self.buildings[b].data_halls) {
                    dev_groups.push((hall_base + hall_first[b] + u32::from(h), id));
                }
            }
            dev_groups.push((pd_base + d.power_domain.get(), id));
            if is_bag(d.role) {
                let p = format!(
                    "{}.plane{}",
                    self.zones[d.zone.idx()].name,
                    crate::fabric::Ordinal(d.plane())
                );
                if let Some(&p) = plane_idx.get(p.as_str()) {
                    dev_groups.push((plane_base + p, id));
                }
                dev_groups.push((chassis_base + chassis, id));
                chassis += 1;
                lc_first.push((id, lc));
                lc += self.line_cards(id).0;
            }
        }
        for (k, g) in self.srgs.iter().enumerate() {
            dev_groups.extend(g.devices.iter().map(|&d| (custom_base + k as u32, d)));
        }
        // Links: line cards, conduits, custom groups.
        let mut link_groups: Vec<(u32, LinkId)> = Vec::new();
        for &(c, first) in &lc_first {
            let per = self.line_cards(c).1.max(1);
            for &l in self.incident(c) {
                let k = &self.links[l.idx()];
                let port = if k.a == c { k.a_port } else { k.b_port };
                link_groups.push((lc_base + first + u32::from(port) / per, l));
            }
        }
        let mut conduit_idx: std::collections::HashMap<&str, u32> = Default::default();
        for (i, c) in conduits.iter().enumerate() {
            conduit_idx.insert(c.as_str(), conduit_base + i as u32);
        }
        let building_names: Vec<String> = (0..self.buildings.len())
            .map(|b| self.building_name(b))
            .collect();
        let pair_names: Vec<Vec<String>> = (0..self.regions.len())
            .map(|a| {
                (0..self.regions.len())
                    .map(|b| {
                        let (x, y) = (a.min(b), a.max(b));
                        format!("{}--{}", self.regions[x].name, self.regions[y].name)
                    })
                    .collect()
            })
            .collect();
        for (i, k) in self.links.iter().enumerate() {
            let (ba, bb) = (
                is_bag(self.devices[k.a.idx()].role),
                is_bag(self.devices[k.b.idx()].role),
            );
            let key = match (ba, bb) {
                (false, true) => self.building_of(k.a).map(|b| building_names[b].as_str()),
                (true, false) => self.building_of(k.b).map(|b| building_names[b].as_str()),
                (true, true) => {
                    let (x, y) = (self.region_of(k.a).idx(), self.region_of(k.b).idx());
                    (x != y).then(|| pair_names[x][y].as_str())
                }
                (false, false) => None,
            };
            if let Some(&g) = key.and_then(|k| conduit_idx.get(k)) {
                link_groups.push((g, LinkId::from_idx(i)));
            }
        }
        for (k, g) in self.srgs.iter().enumerate() {
            link_groups.extend(g.links.iter().map(|&l| (custom_base + k as u32, l)));
        }
        let csr = |mut v: Vec<(u32, u32)>| -> (Vec<u32>, Vec<u32>) {
            v.sort_unstable();
            v.dedup();
            let mut off = vec![0u32; n + 1];
            for &(g, _) in &v {
                off[g as usize + 1] += 1;
            }
            for i in 0..n {
                off[i + 1] += off[i];
            }
            (off, v.into_iter().map(|(_, m)| m).collect())
        };
        let (dev_off, devices) = csr(dev_groups.into_iter().map(|(g, d)| (g, d.get())).collect());
        let (link_off, links) = csr(link_groups.into_iter().map(|(g, l)| (g, l.get())).collect());
        let mut cat = SrgCatalog {
            names,
            classes,
            dev_off,
            devices: devices.into_iter().map(DeviceId::new).collect(),
            link_off,
            links: links.into_iter().map(LinkId::new).collect(),
        };
        cat.drop_empty();
        cat
    }
}

impl SrgCatalog {
    /// This catalog plus one group per switch (every device but GPUs, or only those of
    /// `role`), named `switch:DEVICE`, in device order: what `--sweep single:switch:ROLE`
    /// sweeps ("each ATSW").
    pub fn with_switches(mut self, f: &Fabric, role: Option<Role>) -> Self {
        for (i, d) in f.devices().iter().enumerate() {
            if d.role == Role::Gpu || role.is_some_and(|r| r != d.role) {
                continue;
            }
            self.names
                .push(format!("switch:{}", f.device_name(DeviceId::from_idx(i))));
            self.classes.push(SrgClass::Switch);
            self.devices.push(DeviceId::from_idx(i));
            self.dev_off.push(self.devices.len() as u32);
            self.link_off.push(self.links.len() as u32);
        }
        self
    }

    fn drop_empty(&mut self) {
        let keep: Vec<usize> = (0..self.len())
            .filter(|&i| {
                let (d, l) = self.members(i);
                !d.is_empty() || !l.is_empty()
            })
            .collect();
        if keep.len() == self.len() {
            return;
        }
        let mut out = SrgCatalog {
            names: Vec::new(),
            classes: Vec::new(),
            dev_off: vec![0],
            devices: Vec::new(),
            link_off: vec![0],
            links: Vec::new(),
        };
        for i in keep {
            let (d, l) = self.members(i);
            out.devices.extend_from_slice(d);
            out.links.extend_from_slice(l);
            out.dev_off.push(out.devices.len() as u32);
            out.link_off.push(out.links.len() as u32);
            out.names.push(std::mem::take(&mut self.names[i]));
            out.classes.push(self.classes[i]);
        }
        *self = out;
    }
}
