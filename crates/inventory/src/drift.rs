//! The inventory against the plan: what is missing, extra, miswired or at the wrong speed,
//! grouped by where the plan puts it (site, hall and plane), with the capacity each group
//! loses.
//!
//! Each inventory cable is matched by its two ends, (device, interface), against the
//! planned links: both ends on one planned link is a match (its speeds then checked against
//! the link's); one or both ends on planned links but not the same one is a miswired cable
//! (the planned peer and the one found: another port of the same device, a device of the
//! same role in another plane, or another device); neither end planned is an extra cable.
//! A planned link no cable matched and no miswired cable took is missing. Capacity lost is
//! the planned capacity of the links missing or miswired: a closed form, per tier and per
//! group.

use crate::netbox::Inventory;
use aifabric_model::{DeviceId, Fabric, LinkId, Role};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::collections::BTreeMap;

/// One end of a cable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct End {
    /// Device name.
    pub device: String,
    /// Interface name.
    pub interface: String,
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.device, self.interface)
    }
}

/// One difference between the inventory and the plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// A planned link no cable carries.
    MissingCable {
        /// Side A as planned.
        a: End,
        /// Side B as planned.
        b: End,
        /// Its tier, e.g. `rtsw-ftsw`.
        tier: String,
        /// Its planned capacity, Gb/s.
        gbps: f64,
    },
    /// A cable whose end is on a planned link whose other end is elsewhere.
    Miswired {
        /// The end that is where the plan has it.
        at: End,
        /// Where the plan has its peer.
        planned_peer: End,
        /// Where the cable goes.
        found_peer: End,
        /// `wrong port` (the planned device, another interface), `wrong plane` (a device
        /// of the planned peer's role in another plane) or `wrong peer`.
        how: String,
        /// Line of `cables.csv`.
        line: u64,
    },
    /// A cable between interfaces the plan has no link on.
    ExtraCable {
        /// Side A.
        a: End,
        /// Side B.
        b: End,
        /// Line of `cables.csv`.
        line: u64,
    },
    /// A planned link cabled as planned whose interface reports another speed.
    WrongSpeed {
        /// The interface.
        at: End,
        /// The plan's speed, Gb/s.
        planned_gbps: f64,
        /// The inventory's, Gb/s.
        found_gbps: f64,
    },
    /// A planned link cabled as planned whose interface holds another address than the
    /// plan's (the inventory's `ip-addresses`; an interface without one is not judged).
    WrongAddress {
        /// The interface.
        at: End,
        /// The plan's address, with its prefix length.
        planned: String,
        /// The inventory's.
        found: String,
    },
    /// A planned device the inventory does not list.
    MissingDevice {
        /// Name.
        name: String,
        /// The plan's role.
        role: String,
    },
    /// A device the plan does not have.
    UnexpectedDevice {
        /// Name.
        name: String,
        /// The inventory's role.
        role: String,
        /// Line of `devices.csv`.
        line: u64,
    },
}

impl Finding {
    /// Its kind, as serialized.
    pub fn kind(&self) -> &'static str {
        match self {
            Finding::MissingCable { .. } => "missing_cable",
            Finding::Miswired { .. } => "miswired",
            Finding::ExtraCable { .. } => "extra_cable",
            Finding::WrongSpeed { .. } => "wrong_speed",
            Finding::WrongAddress { .. } => "wrong_address",
            Finding::MissingDevice { .. } => "missing_device",
            Finding::UnexpectedDevice { .. } => "unexpected_device",
        }
    }
}

/// Planned capacity lost in one tier.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierLoss {
    /// Tier, e.g. `rtsw-ftsw`.
    pub tier: String,
    /// Planned links of the tier.
    pub links: u64,
    /// Of which missing or miswired.
    pub lost_links: u64,
    /// Their planned capacity, Gb/s.
    pub lost_gbps: f64,
    /// Lost over planned capacity of the tier, 0..=1.
    pub lost_share: f64,
}

/// The drift of one place: site, hall and plane (where the plan puts the findings'
/// devices).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupDrift {
    /// Site (region.building, or region.bag).
    pub site: String,
    /// Data hall within it (empty: none).
    pub hall: String,
    /// The plane of the devices (BAG and spine planes; `None` for the others).
    pub plane: Option<u16>,
    /// Findings by kind, in [`Finding::kind`]'s words.
    pub findings: BTreeMap<String, u64>,
    /// Planned capacity lost there (links missing or miswired, counted at their side A's
    /// place), Gb/s.
    pub lost_gbps: f64,
}

/// The inventory against the plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DriftReport {
    /// The plan's name.
    pub plan: String,
    /// Where the inventory was read from.
    pub inventory: String,
    /// Planned links, and cables in the inventory.
    pub planned_links: u64,
    /// Cables in the inventory.
    pub cables: u64,
    /// Findings by kind.
    pub counts: BTreeMap<String, u64>,
    /// Per tier with a loss.
    pub tiers: Vec<TierLoss>,
    /// Per site and hall with a finding.
    pub groups: Vec<GroupDrift>,
    /// Per switch with a finding, most findings first: its ports as runs, and a hint when
    /// its missing cables fill a line card's worth of consecutive ports.
    pub switches: Vec<crate::by_switch::SwitchDrift>,
    /// Every finding: devices first, then cables in plan order, then the inventory's extra
    /// and miswired cables in file order.
    pub findings: Vec<Finding>,
    /// The planned links missing or miswired, ascending: what the network as built lacks of
    /// the plan, as a failure mask takes it ([`DriftReport::as_built_mask`]). Not
    /// serialized.
    #[serde(skip)]
    pub lost_links: Vec<LinkId>,
    /// The planned links cabled as planned that run at another speed, ascending, with the
    /// speed they run at (their slower end's as found), Mb/s per direction
    /// ([`DriftReport::as_built_fabric`]). Not serialized.
    #[serde(skip)]
    pub link_speeds: Vec<(LinkId, u32)>,
}

impl DriftReport {
    /// Whether the inventory is the plan.
    pub fn clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// The plan's links that are not there as planned, failed: the network as built as a
    /// mask over the plan (extra cables, which the plan has no link for, are not in it).
    pub fn as_built_mask(&self, f: &Fabric) -> aifabric_model::FailureMask {
        let mut m = aifabric_model::FailureMask::none(f);
        for &l in &self.lost_links {
            m.fail_link(l);
        }
        m
    }

    /// The plan `f` with each link at the speed it runs at as found (the links
    /// [`DriftReport::link_speeds`] lists); with [`DriftReport::as_built_mask`] failed over
    /// it, the network as built.
    pub fn as_built_fabric(&self, f: &mut Fabric) {
        for &(l, mbps) in &self.link_speeds {
            f.set_link_capacity(l, mbps);
        }
    }
}

fn tier(f: &Fabric, l: LinkId) -> String {
    let (lo, hi) = tier_roles(f, l);
    format!("{}-{}", lo.as_str(), hi.as_str())
}

/// A link's tier as its two roles, the lower first: a GPU below its rack switch, a rack
/// switch below its spine.
fn tier_roles(f: &Fabric, l: LinkId) -> (Role, Role) {
    let link = f.link(l);
    let (a, b) = (f.device(link.a).role, f.device(link.b).role);
    if level(a) <= level(b) {
        (a, b)
    } else {
        (b, a)
    }
}

/// How far from the GPUs a role sits (only its order matters).
fn level(r: Role) -> u32 {
    if r == Role::Gpu {
        0
    } else {
        1 + r as u32
    }
}

fn gbps(f: &Fabric, l: LinkId) -> f64 {
    f64::from(f.link(l).capacity_mbps) / 1e3
}

/// The inventory `inv` against the plan `f`. `interface` names a device's end of a link as
/// the export does. Addresses are not judged ([`drift_with_addresses`]).
pub fn drift(
    f: &Fabric,
    inv: &Inventory,
    interface: impl Fn(&Fabric, LinkId, DeviceId) -> String,
) -> DriftReport {
    drift_with_addresses(f, inv, interface, |_, _, _| None)
}

/// Whether two interface addresses (`address/length`) are the same, however written
/// (`fd00::1/127` and `FD00:0::1/127` are).
fn same_address(a: &str, b: &str) -> bool {
    let parse = |s: &str| {
        let (ip, len) = s.split_once('/').unwrap_or((s, ""));
        (
            ip.trim().parse::<std::net::IpAddr>().ok(),
            len.trim().to_owned(),
        )
    };
    match (parse(a), parse(b)) {
        ((Some(x), lx), (Some(y), ly)) => x == y && lx == ly,
        _ => a.trim().eq_ignore_ascii_case(b.trim()),
    }
}

/// [`drift`], also judging each interface's address against `address` (the plan's for a
/// device's end of a link, with its prefix length; `None`: the plan has none).
pub fn drift_with_addresses(
    f: &Fabric,
    inv: &Inventory,
    interface: impl Fn(&Fabric, LinkId, DeviceId) -> String,
    address: impl Fn(&Fabric, LinkId, DeviceId) -> Option<String>,
) -> DriftReport {
    let name = |d: DeviceId| f.device_name(d).to_owned();
    let by_name: FxHashMap<String, DeviceId> = (0..f.devices().len())
        .map(DeviceId::from_idx)
        .map(|d| (f.device_name(d), d))
        .collect();
    // (device, interface) -> (link, the device at the other end).
    let mut ends: FxHashMap<(DeviceId, String), (LinkId, DeviceId)> = FxHashMap::default();
    for i in 0..f.links().len() {
        let l = LinkId::from_idx(i);
        let link = f.link(l);
        ends.insert((link.a, interface(f, l, link.a)), (l, link.b));
        ends.insert((link.b, interface(f, l, link.b)), (l, link.a));
    }
    let end_of = |(dev, ifc): &(String, String)| {
        by_name
            .get(dev.as_str())
            .and_then(|&d| ends.get(&(d, ifc.clone())).copied())
    };
    let as_end = |(dev, ifc): &(String, String)| End {
        device: dev.clone(),
        interface: ifc.clone(),
    };
    let planned_end = |l: LinkId, d: DeviceId| End {
        device: name(d),
        interface: interface(f, l, d),
    };
    let mut found = vec![false; f.links().len()];
    let mut taken = vec![false; f.links().len()];
    let mut cable_findings = Vec::new();
    for c in &inv.cables {
        match (end_of(&c.a), end_of(&c.b)) {
            (Some((la, _)), Some((lb, _))) if la == lb => found[la.idx()] = true,
            (None, None) => cable_findings.push(Finding::ExtraCable {
                a: as_end(&c.a),
                b: as_end(&c.b),
                line: c.line,
            }),
            (ea, eb) => {
                // Each end on a planned link: that link is not as planned.
                for (e, here, there) in [(ea, &c.a, &c.b), (eb, &c.b, &c.a)] {
                    let Some((l, peer)) = e else { continue };
                    taken[l.idx()] = true;
                    let found_dev = by_name.get(there.0.as_str()).copied();
                    let how = match found_dev {
                        Some(x) if x == peer => "wrong port",
                        Some(x)
                            if f.device(x).role == f.device(peer).role
                                && f.device(x).plane() != f.device(peer).plane() =>
                        {
                            "wrong plane"
                        }
                        _ => "wrong peer",
                    };
                    cable_findings.push(Finding::Miswired {
                        at: as_end(here),
                        planned_peer: planned_end(l, peer),
                        found_peer: as_end(there),
                        how: how.into(),
                        line: c.line,
                    });
                }
            }
        }
    }
    let mut findings = Vec::new();
    let listed: FxHashSet<&str> = inv.devices.iter().map(|d| d.name.as_str()).collect();
    for i in 0..f.devices().len() {
        let d = DeviceId::from_idx(i);
        if !listed.contains(f.device_name(d).as_str()) {
            findings.push(Finding::MissingDevice {
                name: name(d),
                role: f.device(d).role.as_str().to_owned(),
            });
        }
    }
    for d in &inv.devices {
        if !by_name.contains_key(d.name.as_str()) {
            findings.push(Finding::UnexpectedDevice {
                name: d.name.clone(),
                role: d.role.clone(),
                line: d.line,
            });
        }
    }
    // Per tier: planned and lost; per group: lost capacity.
    let mut tiers: FxHashMap<(Role, Role), (u64, u64, f64, f64)> = FxHashMap::default();
    // Where the plan puts a device: site, hall, plane.
    let place = |d: DeviceId| {
        let (site, hall) = f.site_and_hall(d);
        (site, hall, f.device(d).plane())
    };
    let mut group_lost: FxHashMap<(String, String, Option<u16>), f64> = FxHashMap::default();
    let mut lost_links = Vec::new();
    let mut speeds = Vec::new();
    for i in 0..f.links().len() {
        let l = LinkId::from_idx(i);
        let t = tiers.entry(tier_roles(f, l)).or_default();
        t.0 += 1;
        t.3 += gbps(f, l);
        if found[i] && !taken[i] {
            let link = f.link(l);
            // The link runs at its slower end's speed as found (the plan's where the
            // inventory has none; an end under 1 Mb/s, a speed no link runs at, is named
            // but not taken).
            let mut runs_mbps = u32::MAX;
            for d in [link.a, link.b] {
                let e = planned_end(l, d);
                if let Some(&kbps) = inv
                    .speeds_kbps
                    .get(&(e.device.clone(), e.interface.clone()))
                {
                    let found_gbps = kbps as f64 / 1e6;
                    let mbps = u32::try_from(kbps / 1000).unwrap_or(u32::MAX);
                    runs_mbps = runs_mbps.min(if mbps >= 1 { mbps } else { link.capacity_mbps });
                    if (found_gbps - gbps(f, l)).abs() > 1e-9 {
                        findings.push(Finding::WrongSpeed {
                            at: e.clone(),
                            planned_gbps: gbps(f, l),
                            found_gbps,
                        });
                    }
                } else {
                    runs_mbps = runs_mbps.min(link.capacity_mbps);
                }
                if inv.addresses.is_empty() {
                    continue;
                }
                if let (Some(found), Some(planned)) = (
                    inv.addresses.get(&(e.device.clone(), e.interface.clone())),
                    address(f, l, d),
                ) {
                    if !same_address(found, &planned) {
                        findings.push(Finding::WrongAddress {
                            at: e,
                            planned,
                            found: found.clone(),
                        });
                    }
                }
            }
            if runs_mbps != u32::MAX && runs_mbps != link.capacity_mbps {
                speeds.push((l, runs_mbps));
            }
            continue;
        }
        t.1 += 1;
        t.2 += gbps(f, l);
        lost_links.push(l);
        *group_lost.entry(place(f.link(l).a)).or_default() += gbps(f, l);
        if !taken[i] {
            let link = f.link(l);
            findings.push(Finding::MissingCable {
                a: planned_end(l, link.a),
                b: planned_end(l, link.b),
                tier: tier(f, l),
                gbps: gbps(f, l),
            });
        }
    }
    findings.extend(cable_findings);
    // Groups: where the plan puts each finding's device.
    let mut groups: BTreeMap<(String, String, Option<u16>), BTreeMap<String, u64>> =
        BTreeMap::new();
    for x in &findings {
        let dev = match x {
            Finding::MissingCable { a, .. } => Some(&a.device),
            Finding::Miswired { at, .. } => Some(&at.device),
            Finding::WrongSpeed { at, .. } | Finding::WrongAddress { at, .. } => Some(&at.device),
            Finding::MissingDevice { name, .. } => Some(name),
            Finding::ExtraCable { a, b, .. } => {
                if by_name.contains_key(a.device.as_str()) {
                    Some(&a.device)
                } else {
                    Some(&b.device)
                }
            }
            Finding::UnexpectedDevice { .. } => None,
        };
        let key = dev.and_then(|n| by_name.get(n.as_str())).map_or_else(
            || ("(not in the plan)".to_owned(), String::new(), None),
            |&d| place(d),
        );
        *groups
            .entry(key)
            .or_default()
            .entry(x.kind().to_owned())
            .or_default() += 1;
    }
    let groups: Vec<GroupDrift> = groups
        .into_iter()
        .map(|((site, hall, plane), findings)| GroupDrift {
            lost_gbps: group_lost
                .get(&(site.clone(), hall.clone(), plane))
                .copied()
                .unwrap_or(0.0),
            site,
            hall,
            plane,
            findings,
        })
        .collect();
    let mut tiers: Vec<TierLoss> = tiers
        .into_iter()
        .filter(|(_, t)| t.1 > 0)
        .map(
            |((lo, hi), (links, lost_links, lost_gbps, all_gbps))| TierLoss {
                tier: format!("{}-{}", lo.as_str(), hi.as_str()),
                links,
                lost_links,
                lost_gbps,
                lost_share: if all_gbps > 0.0 {
                    lost_gbps / all_gbps
                } else {
                    0.0
                },
            },
        )
        .collect();
    tiers.sort_by(|a, b| a.tier.cmp(&b.tier));
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for x in &findings {
        *counts.entry(x.kind().to_owned()).or_default() += 1;
    }
    let switches = crate::by_switch::by_switch(&findings, |name| {
        by_name
            .get(name)
            .is_some_and(|&d| f.device(d).role != Role::Gpu)
    });
    DriftReport {
        plan: f.name().to_owned(),
        inventory: inv.source.clone(),
        planned_links: f.links().len() as u64,
        cables: inv.cables.len() as u64,
        counts,
        tiers,
        groups,
        switches,
        findings,
        lost_links,
        link_speeds: speeds,
    }
}
