//! The capacity report: one pass over the links, then per-zone bisection in parallel.

use crate::bisection::{zone_bisection, Bisection};
use aifabric_model::*;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// Down vs up bandwidth of one tier in one scope.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tier {
    /// Tier name: a switch role (`rdsw`, `fdsw`, `stsw`, `bag`, ...) or a boundary
    /// (`l2_to_bag`, `ai_zone_to_atsw`).
    pub name: String,
    /// Zone (or AI zone) the figures are for.
    pub scope: String,
    /// Bandwidth toward the GPUs, Gb/s per direction.
    pub down_gbps: f64,
    /// Bandwidth away from the GPUs, Gb/s per direction.
    pub up_gbps: f64,
    /// `down_gbps / up_gbps` (1.0 = non-blocking).
    pub oversubscription: f64,
}

/// Capacity between two regions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RegionPair {
    /// First region (spec order).
    pub a: String,
    /// Second region.
    pub b: String,
    /// Number of live links between them.
    pub links: u64,
    /// Capacity counted both ways, Tb/s: how Meta quotes "Pbps per region pair" (FACTS.md 1).
    pub capacity_tbps: f64,
    /// Capacity in one direction, Tb/s.
    pub capacity_tbps_per_direction: f64,
}

/// Count of devices of one role and model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceCount {
    /// Role.
    pub role: Role,
    /// Hardware model.
    pub model: String,
    /// Number of devices.
    pub count: u64,
}

/// Count of links of one kind and speed, or of one optic.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkCount {
    /// `host`, `ethernet`, `fabric`, or an optic class.
    pub class: String,
    /// Link speed, Gb/s.
    pub speed_gbps: f64,
    /// Number of links.
    pub count: u64,
}

/// Port use of one hardware model and port group.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PortUse {
    /// Hardware model.
    pub model: String,
    /// Port group kind.
    pub kind: PortKind,
    /// Port speed in use on these devices, Gb/s.
    pub speed_gbps: f64,
    /// Devices of that model using this speed in this group.
    pub devices: u64,
    /// Ports of this speed in use: used bandwidth over the speed, so that two 400G links on one
    /// 800G port (breakout) count as one port.
    pub ports_used: u64,
    /// Ports the devices' budget allows at this speed (e.g. 36 x 400G or 18 x 800G on J3).
    pub ports_available: u64,
    /// Bandwidth in use, Gb/s.
    pub used_gbps: f64,
    /// Bandwidth available, Gb/s.
    pub available_gbps: f64,
}

/// Per-zone summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZoneSummary {
    /// Zone name.
    pub name: String,
    /// Fabric kind.
    pub kind: ZoneKind,
    /// GPUs in the zone.
    pub gpus: u64,
    /// Switches in the zone.
    pub switches: u64,
    /// Bisection by max-flow between the two halves of its racks (L2 zones only).
    pub bisection: Option<Bisection>,
}

/// The whole report. JSON field names are a contract (see README).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CapacityReport {
    /// Fabric name.
    pub name: String,
    /// GPUs installed.
    pub gpus: u64,
    /// Switches installed.
    pub switches: u64,
    /// Links installed.
    pub links: u64,
    /// Typical power of all devices, MW.
    pub power_mw: f64,
    /// Devices and links marked failed by the mask.
    pub failed_devices: u64,
    /// Links marked failed by the mask (not counting those of failed devices).
    pub failed_links: u64,
    /// Oversubscription per tier and scope.
    pub tiers: Vec<Tier>,
    /// Inter-region capacity.
    pub region_pairs: Vec<RegionPair>,
    /// Switches by role and model.
    pub devices_by_model: Vec<DeviceCount>,
    /// Links by kind and speed.
    pub links_by_kind: Vec<LinkCount>,
    /// Links by optic class and speed.
    pub links_by_optic: Vec<LinkCount>,
    /// Port use per model.
    pub port_use: Vec<PortUse>,
    /// Zones.
    pub zones: Vec<ZoneSummary>,
}

/// Rank of a role in the up/down order: a link to a lower rank is "down".
fn rank(r: Role) -> u8 {
    match r {
        Role::Gpu => 0,
        Role::Rtsw | Role::Rdsw | Role::Edsw => 1,
        Role::Ctsw | Role::Fdsw | Role::Ftsw => 2,
        Role::Atsw | Role::Sdsw | Role::Stsw => 3,
        Role::Bag => 4,
        Role::Hub => 5,
    }
}

fn gbps(mbps: u64) -> f64 {
    mbps as f64 / 1_000.0
}

fn ratio(down: u64, up: u64) -> f64 {
    down as f64 / up as f64
}

const ROLES: usize = Role::ALL.len();

/// Accumulators filled by the single pass over links.
struct Acc {
    /// [zone * ROLES + role] -> (down, up) Mb/s.
    role_tier: Vec<(u64, u64)>,
    /// Per zone: GPU host capacity, capacity to BAG/hub.
    host: Vec<u64>,
    to_bag: Vec<u64>,
    /// (zone, pod) -> (host, ctsw->atsw) for RoCE AI zones.
    ai_zone: BTreeMap<(u32, u32), (u64, u64)>,
    /// (region a, region b) -> (links, Mb/s).
    pairs: BTreeMap<(u32, u32), (u64, u64)>,
    /// Per device and (host/ethernet, fabric) group: used Mb/s and the speed of its links
    /// (the first one seen; builders give a device one speed per group, BAG chassis aside).
    used: Vec<[(u64, u32); 2]>,
    by_kind: BTreeMap<(PortKind, u32), u64>,
    by_optic: BTreeMap<(Optic, u32), u64>,
}

fn scan_links(f: &Fabric, mask: &FailureMask) -> Acc {
    let zones = f.zones.len();
    let mut acc = Acc {
        role_tier: vec![(0, 0); zones * ROLES],
        host: vec![0; zones],
        to_bag: vec![0; zones],
        ai_zone: BTreeMap::new(),
        pairs: BTreeMap::new(),
        used: vec![[(0, 0); 2]; f.devices().len()],
        by_kind: BTreeMap::new(),
        by_optic: BTreeMap::new(),
    };
    for (i, l) in f.links().iter().enumerate() {
        *acc.by_kind.entry((l.kind, l.capacity_mbps)).or_default() += 1;
        *acc.by_optic.entry((l.optic, l.capacity_mbps)).or_default() += 1;
        let (a, b) = (f.device(l.a), f.device(l.b));
        for (x, id) in [(a, l.a), (b, l.b)] {
            let slot = usize::from(port_group_kind(x.role, l.kind) == PortKind::Fabric);
            let u = &mut acc.used[id.idx()][slot];
            u.0 += u64::from(l.capacity_mbps);
            if u.1 == 0 {
                u.1 = l.capacity_mbps;
            }
        }
        if !f.link_up(LinkId(i as u32), mask) {
            continue;
        }
        let cap = u64::from(l.capacity_mbps);
        for (x, y) in [(a, b), (b, a)] {
            let t = &mut acc.role_tier[x.zone.idx() * ROLES + x.role as usize];
            if rank(y.role) < rank(x.role) {
                t.0 += cap;
            } else if rank(y.role) > rank(x.role) || x.zone != y.zone {
                t.1 += cap;
            }
            if x.role == Role::Gpu {
                acc.host[x.zone.idx()] += cap;
                if f.zones[x.zone.idx()].kind == ZoneKind::Roce {
                    acc.ai_zone.entry((x.zone.0, x.pod)).or_default().0 += cap;
                }
            }
            if matches!(y.role, Role::Bag | Role::Hub) && !matches!(x.role, Role::Bag | Role::Hub) {
                acc.to_bag[x.zone.idx()] += cap;
            }
            if x.role == Role::Ctsw && y.role == Role::Atsw {
                acc.ai_zone.entry((x.zone.0, x.pod)).or_default().1 += cap;
            }
        }
        let (ra, rb) = (f.zones[a.zone.idx()].region, f.zones[b.zone.idx()].region);
        if ra != rb {
            let e = acc
                .pairs
                .entry((ra.0.min(rb.0), ra.0.max(rb.0)))
                .or_default();
            e.0 += 1;
            e.1 += cap;
        }
    }
    acc
}

/// Build the capacity report of `f` with the failures in `mask` applied. Inventories count
/// what is installed; bandwidths count only what is up.
pub fn capacity_report(f: &Fabric, mask: &FailureMask) -> CapacityReport {
    let acc = scan_links(f, mask);
    let mut tiers = Vec::new();
    for (z, zone) in f.zones.iter().enumerate() {
        for role in Role::ALL {
            let (down, up) = acc.role_tier[z * ROLES + role as usize];
            if role.is_switch() && down > 0 && up > 0 {
                tiers.push(tier(role.as_str(), &zone.name, down, up));
            }
        }
        if zone.kind != ZoneKind::Bag && acc.to_bag[z] > 0 && acc.host[z] > 0 {
            tiers.push(tier("l2_to_bag", &zone.name, acc.host[z], acc.to_bag[z]));
        }
    }
    for (&(z, pod), &(down, up)) in &acc.ai_zone {
        if down > 0 && up > 0 {
            let scope = format!("{}.ai_zone{pod}", f.zones[z as usize].name);
            tiers.push(tier("ai_zone_to_atsw", &scope, down, up));
        }
    }
    let region_pairs = acc
        .pairs
        .iter()
        .map(|(&(a, b), &(links, mbps))| RegionPair {
            a: f.regions[a as usize].name.clone(),
            b: f.regions[b as usize].name.clone(),
            links,
            capacity_tbps: 2.0 * mbps as f64 / 1e6,
            capacity_tbps_per_direction: mbps as f64 / 1e6,
        })
        .collect();

    let mut by_model: BTreeMap<(Role, HwId), u64> = BTreeMap::new();
    let mut per_zone: Vec<(u64, u64)> = vec![(0, 0); f.zones.len()];
    let mut power_w = 0.0;
    // (model, group, port speed) -> (devices, Mb/s used)
    let mut port_acc: BTreeMap<(HwId, PortKind, u32), (u64, u64)> = BTreeMap::new();
    for (i, d) in f.devices().iter().enumerate() {
        let hw = f.catalog.get(d.hw);
        power_w += hw.power_w;
        if d.role.is_switch() {
            *by_model.entry((d.role, d.hw)).or_default() += 1;
            per_zone[d.zone.idx()].1 += 1;
        } else {
            per_zone[d.zone.idx()].0 += 1;
        }
        for g in &hw.ports {
            let slot = usize::from(g.kind == PortKind::Fabric);
            let (mbps, speed) = acc.used[i][slot];
            let speed = if speed == 0 {
                g.modes[0].speed_mbps
            } else {
                speed
            };
            let e = port_acc.entry((d.hw, g.kind, speed)).or_default();
            e.0 += 1;
            e.1 += mbps;
        }
    }
    let port_use = port_acc
        .into_iter()
        .map(|((hw, kind, speed), (devices, mbps))| {
            let g = f
                .catalog
                .get(hw)
                .group(kind)
                .expect("iterated from the model");
            PortUse {
                model: f.catalog.get(hw).name.clone(),
                kind,
                speed_gbps: gbps(u64::from(speed)),
                devices,
                ports_used: mbps.div_ceil(u64::from(speed)),
                ports_available: devices * (g.budget_mbps() / u64::from(speed)),
                used_gbps: gbps(mbps),
                available_gbps: gbps(devices * g.budget_mbps()),
            }
        })
        .collect();
    let bisections: Vec<Option<Bisection>> = (0..f.zones.len())
        .into_par_iter()
        .map(|z| zone_bisection(f, ZoneId(z as u32), mask))
        .collect();
    let zones = f
        .zones
        .iter()
        .zip(bisections)
        .zip(&per_zone)
        .map(|((z, bisection), &(gpus, switches))| ZoneSummary {
            name: z.name.clone(),
            kind: z.kind,
            gpus,
            switches,
            bisection,
        })
        .collect();
    let (failed_devices, failed_links) = mask.counts();
    let gpus: u64 = per_zone.iter().map(|z| z.0).sum();
    CapacityReport {
        name: f.name.clone(),
        gpus,
        switches: f.devices().len() as u64 - gpus,
        links: f.links().len() as u64,
        power_mw: power_w / 1e6,
        failed_devices: failed_devices as u64,
        failed_links: failed_links as u64,
        tiers,
        region_pairs,
        devices_by_model: by_model
            .into_iter()
            .map(|((role, hw), count)| DeviceCount {
                role,
                model: f.catalog.get(hw).name.clone(),
                count,
            })
            .collect(),
        links_by_kind: acc
            .by_kind
            .into_iter()
            .map(|((k, s), count)| LinkCount {
                class: k.as_str().to_owned(),
                speed_gbps: gbps(u64::from(s)),
                count,
            })
            .collect(),
        links_by_optic: acc
            .by_optic
            .into_iter()
            .map(|((o, s), count)| LinkCount {
                class: o.as_str().to_owned(),
                speed_gbps: gbps(u64::from(s)),
                count,
            })
            .collect(),
        port_use,
        zones,
    }
}

fn tier(name: &str, scope: &str, down: u64, up: u64) -> Tier {
    Tier {
        name: name.to_owned(),
        scope: scope.to_owned(),
        down_gbps: gbps(down),
        up_gbps: gbps(up),
        oversubscription: ratio(down, up),
    }
}
