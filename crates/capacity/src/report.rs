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
    /// `down_gbps / up_gbps` (1.0 = non-blocking); `null` when failures left no up capacity.
    pub oversubscription: Option<f64>,
}

/// Capacity between two regions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RegionPair {
    /// First region (spec order).
    pub a: String,
    /// Second region.
    pub b: String,
    /// Number of live links between them (a pair is listed as long as links were built).
    pub links: u64,
    /// Capacity counted both ways, Tb/s: how Meta quotes "Pbps per region pair" (Meta,
    /// "Building Prometheus ..." 2026).
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

/// Count of links of one kind and speed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkCount {
    /// `host`, `ethernet` or `fabric`.
    pub class: String,
    /// Link speed, Gb/s.
    pub speed_gbps: f64,
    /// Number of links.
    pub count: u64,
}

/// Links and transceivers of one optic (reach) class.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpticCount {
    /// Optic class (`dac`, `sr`, `dr`, `fr`, `lr`, `er`, `zr`).
    pub class: String,
    /// Link speed, Gb/s.
    pub speed_gbps: f64,
    /// DSF fabric SerDes lanes (8 share one module) rather than Ethernet links.
    pub fabric_lanes: bool,
    /// Number of links (lanes).
    pub links: u64,
    /// Pluggable transceivers: 2 per link, 2 per 8 fabric lanes, none on copper (DAC).
    pub transceivers: u64,
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
    /// Devices marked failed by the mask.
    pub failed_devices: u64,
    /// Links marked failed by the mask (not counting those of failed devices).
    pub failed_links: u64,
    /// Oversubscription per tier and scope.
    pub tiers: Vec<Tier>,
    /// Inter-region capacity.
    pub region_pairs: Vec<RegionPair>,
    /// Regions with GPUs joined through hubs (hub and spoke): spoke-to-spoke capacity by
    /// max-flow (empty without a hub).
    pub hub_pairs: Vec<crate::HubPair>,
    /// Switches by role and model.
    pub devices_by_model: Vec<DeviceCount>,
    /// Links by kind and speed.
    pub links_by_kind: Vec<LinkCount>,
    /// Links and transceivers by optic class and speed.
    pub links_by_optic: Vec<OpticCount>,
    /// Port use per model.
    pub port_use: Vec<PortUse>,
    /// Zones.
    pub zones: Vec<ZoneSummary>,
    /// PFC headroom of the live links against every switch's buffer, with one lossless
    /// priority and 9,216 B frames (`aifabric buffers` for the whole report and other
    /// settings).
    pub pfc_headroom: PfcSummary,
}

/// The capacity report's PFC headroom section.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PfcSummary {
    /// Switches that cannot hold their headroom.
    pub switches_over: u64,
    /// Per model, the switch needing the largest share of its buffer.
    pub fullest: Vec<crate::buffers::SwitchHeadroom>,
}

/// Tier slot of the FDSWs of a DSF L2 edge pod (the other slots are roles).
const EDGE_FDSW: usize = Role::ALL.len();
/// Number of tier slots.
const SLOTS: usize = Role::ALL.len() + 1;
/// Switch tier slots from the GPUs up, the order tiers are reported in.
const TIER_ORDER: [usize; 12] = [
    Role::Rtsw as usize,
    Role::Rdsw as usize,
    Role::Ctsw as usize,
    Role::Ftsw as usize,
    Role::Fdsw as usize,
    Role::Atsw as usize,
    Role::Stsw as usize,
    Role::Sdsw as usize,
    EDGE_FDSW,
    Role::Edsw as usize,
    Role::Bag as usize,
    Role::Hub as usize,
];

/// Tier slot and rank of a device in the up/down order: a link to a lower rank is "down".
/// In a DSF L2 zone, traffic to BAG climbs RDSW -> FDSW -> SDSW -> edge-pod FDSW -> EDSW ->
/// BAG, so the edge pod ranks above the SDSWs.
fn slot_rank(d: &Device, edge_pod: Option<u32>) -> (usize, u8) {
    let rank = match d.role {
        Role::Gpu => 0,
        Role::Rtsw | Role::Rdsw => 10,
        Role::Fdsw if edge_pod.is_some() && d.pod() == edge_pod => return (EDGE_FDSW, 33),
        Role::Ctsw | Role::Fdsw | Role::Ftsw => 20,
        Role::Atsw | Role::Sdsw | Role::Stsw => 30,
        Role::Edsw => 36,
        Role::Bag => 40,
        Role::Hub => 50,
    };
    (d.role as usize, rank)
}

fn slot_name(slot: usize) -> &'static str {
    if slot == EDGE_FDSW {
        "edge_fdsw"
    } else {
        Role::ALL[slot].as_str()
    }
}

/// Bandwidth under the mask, and as installed, Mb/s.
#[derive(Clone, Copy, Debug, Default)]
struct Bw {
    live: u64,
    installed: u64,
}

impl Bw {
    fn add(&mut self, cap: u64, up: bool) {
        self.installed += cap;
        if up {
            self.live += cap;
        }
    }
}

fn gbps(mbps: u64) -> f64 {
    mbps as f64 / 1_000.0
}

/// Accumulators filled by the single pass over links.
struct Acc {
    /// [zone * SLOTS + slot] -> (down, up).
    role_tier: Vec<(Bw, Bw)>,
    /// Per zone: GPU host capacity, capacity to BAG/hub.
    host: Vec<Bw>,
    to_bag: Vec<Bw>,
    /// (zone, pod) -> (host, ctsw->atsw) for RoCE AI zones.
    ai_zone: BTreeMap<(u32, u32), (Bw, Bw)>,
    /// (region a, region b) -> (links, Mb/s).
    pairs: BTreeMap<(u32, u32), (u64, u64)>,
    /// Per device and (host/ethernet, fabric) group: used Mb/s and the speed of its links
    /// (the first one seen; builders give a device one speed per group, BAG chassis aside).
    used: Vec<[(u64, u32); 2]>,
    by_kind: BTreeMap<(PortKind, u32), u64>,
    by_optic: BTreeMap<(Optic, u32, bool), u64>,
}

/// The edge pod of each DSF L2 zone: the pod (cluster) its EDSWs are in.
fn edge_pods(f: &Fabric) -> Vec<Option<u32>> {
    let mut edge_pod = vec![None; f.zones().len()];
    for d in f.devices() {
        if d.role == Role::Edsw && f.zones()[d.zone.idx()].kind == ZoneKind::DsfL2 {
            edge_pod[d.zone.idx()] = d.pod();
        }
    }
    edge_pod
}

/// Where one link's capacity counts among the tiers (zone indices, tier slots, pods).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Contribution {
    RoleDown(usize, usize),
    RoleUp(usize, usize),
    Host(usize),
    ToBag(usize),
    AiHost(u32, u32),
    AiUp(u32, u32),
}

/// Every tier a link counts in, from both ends: the one rule shared by the report and the
/// [`TierLedger`].
fn tier_contributions(
    f: &Fabric,
    edge_pod: &[Option<u32>],
    l: &Link,
    mut emit: impl FnMut(Contribution),
) {
    let (a, b) = (f.device(l.a), f.device(l.b));
    for (x, y) in [(a, b), (b, a)] {
        let (xs, xr) = slot_rank(x, edge_pod[x.zone.idx()]);
        let (_, yr) = slot_rank(y, edge_pod[y.zone.idx()]);
        let z = x.zone.idx();
        if yr < xr {
            emit(Contribution::RoleDown(z, xs));
        } else if yr > xr || x.zone != y.zone {
            emit(Contribution::RoleUp(z, xs));
        }
        if x.role == Role::Gpu {
            emit(Contribution::Host(z));
            if let (ZoneKind::Roce, Some(pod)) = (f.zones()[z].kind, x.pod()) {
                emit(Contribution::AiHost(x.zone.get(), pod));
            }
        }
        if matches!(y.role, Role::Bag | Role::Hub) && !matches!(x.role, Role::Bag | Role::Hub) {
            emit(Contribution::ToBag(z));
        }
        if let (Role::Ctsw, Role::Atsw, Some(pod)) = (x.role, y.role, x.pod()) {
            emit(Contribution::AiUp(x.zone.get(), pod));
        }
    }
}

fn scan_links(f: &Fabric, mask: &FailureMask) -> Acc {
    let zones = f.zones().len();
    let edge_pod = edge_pods(f);
    let mut acc = Acc {
        role_tier: vec![(Bw::default(), Bw::default()); zones * SLOTS],
        host: vec![Bw::default(); zones],
        to_bag: vec![Bw::default(); zones],
        ai_zone: BTreeMap::new(),
        pairs: BTreeMap::new(),
        used: vec![[(0, 0); 2]; f.devices().len()],
        by_kind: BTreeMap::new(),
        by_optic: BTreeMap::new(),
    };
    for (i, l) in f.links().iter().enumerate() {
        *acc.by_kind.entry((l.kind, l.capacity_mbps)).or_default() += 1;
        *acc.by_optic
            .entry((l.optic, l.capacity_mbps, l.kind == PortKind::Fabric))
            .or_default() += 1;
        let (a, b) = (f.device(l.a), f.device(l.b));
        for (x, id) in [(a, l.a), (b, l.b)] {
            let slot = usize::from(port_group_kind(x.role, l.kind) == PortKind::Fabric);
            let u = &mut acc.used[id.idx()][slot];
            u.0 += u64::from(l.capacity_mbps);
            if u.1 == 0 {
                u.1 = l.capacity_mbps;
            }
        }
        let live = f.link_up(LinkId::from_idx(i), mask);
        let cap = u64::from(l.capacity_mbps);
        tier_contributions(f, &edge_pod, l, |c| match c {
            Contribution::RoleDown(z, slot) => acc.role_tier[z * SLOTS + slot].0.add(cap, live),
            Contribution::RoleUp(z, slot) => acc.role_tier[z * SLOTS + slot].1.add(cap, live),
            Contribution::Host(z) => acc.host[z].add(cap, live),
            Contribution::ToBag(z) => acc.to_bag[z].add(cap, live),
            Contribution::AiHost(z, pod) => {
                acc.ai_zone.entry((z, pod)).or_default().0.add(cap, live)
            }
            Contribution::AiUp(z, pod) => acc.ai_zone.entry((z, pod)).or_default().1.add(cap, live),
        });
        let (ra, rb) = (
            f.zones()[a.zone.idx()].region,
            f.zones()[b.zone.idx()].region,
        );
        if ra != rb {
            // Listed as built; links and capacity count what is up.
            let e = acc
                .pairs
                .entry((ra.get().min(rb.get()), ra.get().max(rb.get())))
                .or_default();
            if live {
                e.0 += 1;
                e.1 += cap;
            }
        }
    }
    acc
}

/// Build the capacity report of `f` with the failures in `mask` applied. Inventories count
/// what is installed; bandwidths count only what is up.
pub fn capacity_report(f: &Fabric, mask: &FailureMask) -> CapacityReport {
    let acc = scan_links(f, mask);
    let mut tiers = Vec::new();
    // A tier is listed when it exists as built; under failures its live figures may drop to 0.
    for (z, zone) in f.zones().iter().enumerate() {
        for slot in TIER_ORDER {
            let (down, up) = acc.role_tier[z * SLOTS + slot];
            if let Some(t) = tier(slot_name(slot), &zone.name, down, up) {
                tiers.push(t);
            }
        }
        if zone.kind != ZoneKind::Bag {
            tiers.extend(tier("l2_to_bag", &zone.name, acc.host[z], acc.to_bag[z]));
        }
    }
    for (&(z, pod), &(down, up)) in &acc.ai_zone {
        let scope = format!("{}.ai_zone{pod}", f.zones()[z as usize].name);
        tiers.extend(tier("ai_zone_to_atsw", &scope, down, up));
    }
    let region_pairs = acc
        .pairs
        .iter()
        .map(|(&(a, b), &(links, mbps))| RegionPair {
            a: f.regions()[a as usize].name.clone(),
            b: f.regions()[b as usize].name.clone(),
            links,
            capacity_tbps: 2.0 * mbps as f64 / 1e6,
            capacity_tbps_per_direction: mbps as f64 / 1e6,
        })
        .collect();

    let mut by_model: BTreeMap<(Role, HwId), u64> = BTreeMap::new();
    let mut per_zone: Vec<(u64, u64)> = vec![(0, 0); f.zones().len()];
    let mut power_w = 0.0;
    // (model, group, port speed) -> (devices, Mb/s used)
    let mut port_acc: BTreeMap<(HwId, PortKind, u32), (u64, u64)> = BTreeMap::new();
    for (i, d) in f.devices().iter().enumerate() {
        let hw = f.catalog().get(d.hw);
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
                .catalog()
                .get(hw)
                .group(kind)
                .expect("iterated from the model");
            PortUse {
                model: f.catalog().get(hw).name.clone(),
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
    let bisections: Vec<Option<Bisection>> = (0..f.zones().len())
        .into_par_iter()
        .map(|z| zone_bisection(f, ZoneId::from_idx(z), mask))
        .collect();
    let zones = f
        .zones()
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
    let pfc = crate::buffers::buffer_report_under(f, mask, &Default::default());
    CapacityReport {
        pfc_headroom: PfcSummary {
            switches_over: pfc.switches_over,
            fullest: pfc.fullest,
        },
        name: f.name().to_owned(),
        gpus,
        switches: f.devices().len() as u64 - gpus,
        links: f.links().len() as u64,
        power_mw: power_w / 1e6,
        failed_devices: failed_devices as u64,
        failed_links: failed_links as u64,
        tiers,
        region_pairs,
        hub_pairs: crate::hub_pairs(f, mask),
        devices_by_model: by_model
            .into_iter()
            .map(|((role, hw), count)| DeviceCount {
                role,
                model: f.catalog().get(hw).name.clone(),
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
            .map(|((o, s, fabric), count)| OpticCount {
                class: o.as_str().to_owned(),
                speed_gbps: gbps(u64::from(s)),
                fabric_lanes: fabric,
                links: count,
                transceivers: transceivers(o, fabric, count),
            })
            .collect(),
        port_use,
        zones,
    }
}

fn tier(name: &str, scope: &str, down: Bw, up: Bw) -> Option<Tier> {
    (down.installed > 0 && up.installed > 0).then(|| Tier {
        name: name.to_owned(),
        scope: scope.to_owned(),
        down_gbps: gbps(down.live),
        up_gbps: gbps(up.live),
        oversubscription: (up.live > 0).then(|| down.live as f64 / up.live as f64),
    })
}

/// Lanes per pluggable module on DSF fabric links: an 800G module carries 8 x 106.25G SerDes.
const FABRIC_LANES_PER_MODULE: u64 = 8;

/// Transceivers for `links` links of one optic class: none on copper, two per link (one each
/// end), and for DSF fabric lanes two per 8 lanes.
fn transceivers(optic: Optic, fabric: bool, links: u64) -> u64 {
    match (optic, fabric) {
        (Optic::Dac, _) => 0,
        (_, true) => 2 * links.div_ceil(FABRIC_LANES_PER_MODULE),
        _ => 2 * links,
    }
}

/// A tier whose oversubscription a failure changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierChange {
    /// Tier name, as in [`Tier::name`].
    pub tier: String,
    /// Zone (or AI zone).
    pub scope: String,
    /// Oversubscription with nothing failed.
    pub before: f64,
    /// Oversubscription under the failure (`null`: no up capacity left).
    pub after: Option<f64>,
}

/// The tiers of [`capacity_report`], recomputed for a failure scenario from its failed links
/// alone: a sweep over thousands of scenarios pays for what each one breaks, not for the
/// whole fabric.
#[derive(Clone, Debug)]
pub struct TierLedger {
    edge_pod: Vec<Option<u32>>,
    zones: usize,
    ai: BTreeMap<(u32, u32), usize>,
    /// Healthy Mb/s per accumulator.
    healthy: Vec<u64>,
    /// What [`TierLedger::changes`] compares with: the healthy figures, or those of a
    /// starting state ([`TierLedger::from_state`]).
    reference: Vec<u64>,
    /// (name, scope, down accumulator, up accumulator), in report order.
    tiers: Vec<(String, String, usize, usize)>,
}

impl TierLedger {
    /// Index every tier of `f`.
    pub fn new(f: &Fabric) -> Self {
        let edge_pod = edge_pods(f);
        let zones = f.zones().len();
        let mut ai = BTreeMap::new();
        for l in f.links() {
            tier_contributions(f, &edge_pod, l, |c| {
                if let Contribution::AiHost(z, p) | Contribution::AiUp(z, p) = c {
                    let n = ai.len();
                    ai.entry((z, p)).or_insert(n);
                }
            });
        }
        // BTreeMap order for the listing, insertion order for the slots: renumber.
        for (i, v) in ai.values_mut().enumerate() {
            *v = i;
        }
        let mut ledger = TierLedger {
            healthy: vec![0; zones * SLOTS * 2 + zones * 2 + ai.len() * 2],
            reference: Vec::new(),
            edge_pod,
            zones,
            ai,
            tiers: Vec::new(),
        };
        for l in f.links() {
            let cap = u64::from(l.capacity_mbps);
            let mut keys = Vec::with_capacity(6);
            tier_contributions(f, &ledger.edge_pod, l, |c| keys.push(ledger.key(c)));
            for k in keys {
                ledger.healthy[k] += cap;
            }
        }
        let role = |z: usize, slot: usize| z * SLOTS * 2 + slot * 2;
        let other = zones * SLOTS * 2;
        for (z, zone) in f.zones().iter().enumerate() {
            for slot in TIER_ORDER {
                let (d, u) = (role(z, slot), role(z, slot) + 1);
                if ledger.healthy[d] > 0 && ledger.healthy[u] > 0 {
                    let name = slot_name(slot).to_owned();
                    ledger.tiers.push((name, zone.name.clone(), d, u));
                }
            }
            let (d, u) = (other + 2 * z, other + 2 * z + 1);
            if zone.kind != ZoneKind::Bag && ledger.healthy[d] > 0 && ledger.healthy[u] > 0 {
                ledger
                    .tiers
                    .push(("l2_to_bag".to_owned(), zone.name.clone(), d, u));
            }
        }
        for (&(z, pod), &i) in &ledger.ai {
            let (d, u) = (other + 2 * zones + 2 * i, other + 2 * zones + 2 * i + 1);
            if ledger.healthy[d] > 0 && ledger.healthy[u] > 0 {
                let scope = format!("{}.ai_zone{pod}", f.zones()[z as usize].name);
                ledger
                    .tiers
                    .push(("ai_zone_to_atsw".to_owned(), scope, d, u));
            }
        }
        ledger.reference = ledger.healthy.clone();
        ledger
    }

    fn key(&self, c: Contribution) -> usize {
        let other = self.zones * SLOTS * 2;
        match c {
            Contribution::RoleDown(z, s) => z * SLOTS * 2 + s * 2,
            Contribution::RoleUp(z, s) => z * SLOTS * 2 + s * 2 + 1,
            Contribution::Host(z) => other + 2 * z,
            Contribution::ToBag(z) => other + 2 * z + 1,
            Contribution::AiHost(z, p) => other + 2 * self.zones + 2 * self.ai[&(z, p)],
            Contribution::AiUp(z, p) => other + 2 * self.zones + 2 * self.ai[&(z, p)] + 1,
        }
    }

    /// The accumulators with `down` links (each given once) taken out.
    pub fn without(&self, f: &Fabric, down: impl IntoIterator<Item = LinkId>) -> Vec<u64> {
        let mut live = self.healthy.clone();
        for l in down {
            let link = f.link(l);
            let cap = u64::from(link.capacity_mbps);
            tier_contributions(f, &self.edge_pod, link, |c| live[self.key(c)] -= cap);
        }
        live
    }

    /// The same ledger comparing with the state where the `down` links (each given once) are
    /// out: a sweep that starts from a maintenance state reports what changes from there.
    pub fn from_state(mut self, f: &Fabric, down: impl IntoIterator<Item = LinkId>) -> Self {
        self.reference = self.without(f, down);
        self
    }

    /// Tiers whose oversubscription differs between the reference (the healthy fabric, or
    /// the starting state) and `live`.
    pub fn changes(&self, live: &[u64]) -> Vec<TierChange> {
        let reference = &self.reference;
        self.tiers
            .iter()
            .filter(|t| live[t.2] != reference[t.2] || live[t.3] != reference[t.3])
            .map(|(name, scope, d, u)| {
                let before = reference[*d] as f64 / reference[*u] as f64;
                let after = (live[*u] > 0).then(|| live[*d] as f64 / live[*u] as f64);
                // Equal ratios (down and up lost in proportion) are no change.
                (name, scope, before, after)
            })
            .filter(|t| t.3.is_none_or(|a| (a - t.2).abs() > 1e-12 * t.2))
            .map(|(name, scope, before, after)| TierChange {
                tier: name.clone(),
                scope: scope.clone(),
                before,
                after,
            })
            .collect()
    }

    /// The tiers as [`capacity_report`] lists them, from accumulators.
    pub fn tiers(&self, live: &[u64]) -> Vec<Tier> {
        self.tiers
            .iter()
            .map(|(name, scope, d, u)| Tier {
                name: name.clone(),
                scope: scope.clone(),
                down_gbps: gbps(live[*d]),
                up_gbps: gbps(live[*u]),
                oversubscription: (live[*u] > 0).then(|| live[*d] as f64 / live[*u] as f64),
            })
            .collect()
    }
}
