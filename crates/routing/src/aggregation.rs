//! Aggregation at the L2 -> BAG border and the blackhole detector (RFC 7938 section 8.2).
//!
//! Each L2 zone's border speakers (NSF STSWs, the DSF system, ...) advertise one aggregate for
//! the zone's rack prefixes to BAG instead of the specifics. Unconditionally, a border keeps
//! advertising while it reaches at least one covered prefix, with a discard route behind the
//! aggregate: traffic for a prefix it cannot reach is dropped there (a blackhole).
//! Conditionally, it advertises only while it reaches all (or at least N) of them.

use crate::bgp::{
    routes_to, routes_to_many, BgpConfig, BgpGraph, NotConverged, RoutesTo, SessionState,
    SpeakerId, SpeakerKind,
};
use crate::fib::{prefixes, Prefix};
use aifabric_model::*;
use serde::Serialize;

/// How zones are aggregated toward BAG.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    /// Advertise the aggregate while at least one covered prefix is reachable.
    Unconditional,
    /// Advertise only while at least `min` covered prefixes are reachable (`None`: all).
    Conditional {
        /// Contributors needed; `None` means every covered prefix.
        min: Option<u32>,
    },
}

/// One zone's aggregate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZoneAggregate {
    /// The zone.
    pub zone: String,
    /// The aggregate (the zone's /48), when the fabric fits the addressing plan.
    pub aggregate: Option<String>,
    /// Rack prefixes it covers.
    pub covered: usize,
    /// Border speakers that advertise it now.
    pub advertising: Vec<String>,
    /// Border speakers that withdrew it (conditional aggregation, or nothing reachable).
    pub withdrawn: Vec<String>,
    /// Covered prefixes that no BAG speaker can reach through an advertising border (counting
    /// blackholes as unreachable).
    pub unreachable_prefixes: usize,
}

/// A border that attracts traffic it must drop.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Blackhole {
    /// The advertising border speaker.
    pub device: String,
    /// The zone whose aggregate it advertises.
    pub zone: String,
    /// Covered prefixes it cannot reach.
    pub prefixes: Vec<String>,
    /// Share of the aggregate's traffic from the region's BAG that it attracts.
    pub attracted_share: f64,
    /// Of that, the share dropped: `attracted_share x |prefixes| / covered` (uniform traffic
    /// per prefix).
    pub blackholed_share: f64,
}

/// Everything the detector found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlackholeReport {
    /// The aggregation policy.
    pub aggregation: Aggregation,
    /// Per zone under a BAG.
    pub zones: Vec<ZoneAggregate>,
    /// Blackholes, by zone then device.
    pub blackholes: Vec<Blackhole>,
}

fn is_bag(f: &Fabric, g: &BgpGraph, v: SpeakerId) -> bool {
    matches!(g.speakers[v as usize].kind,
        SpeakerKind::Device(d) if matches!(f.device(d).role, Role::Bag | Role::Hub))
}

fn zone_of(f: &Fabric, g: &BgpGraph, v: SpeakerId) -> ZoneId {
    match g.speakers[v as usize].kind {
        SpeakerKind::Device(d) => f.device(d).zone,
        SpeakerKind::DsfSystem(z) => z,
    }
}

fn name(f: &Fabric, g: &BgpGraph, v: SpeakerId) -> String {
    match g.speakers[v as usize].kind {
        SpeakerKind::Device(d) => f.device_name(d),
        SpeakerKind::DsfSystem(z) => format!("{} (DSF)", f.zones[z.idx()].name),
    }
}

/// Run the detector over every L2 zone that has a BAG border.
pub fn blackholes(
    f: &Fabric,
    g: &BgpGraph,
    states: &[SessionState],
    scenario: &Scenario,
    cfg: &BgpConfig,
    aggregation: Aggregation,
) -> Result<BlackholeReport, NotConverged> {
    let zone_of_speaker: Vec<ZoneId> = (0..g.speakers.len() as u32)
        .map(|v| zone_of(f, g, v))
        .collect();
    // Specifics stay inside their zone: no session across a zone boundary carries them.
    let internal: Vec<SessionState> = g
        .sessions
        .iter()
        .zip(states)
        .map(|(&(a, b), &st)| {
            if zone_of_speaker[a as usize] == zone_of_speaker[b as usize] {
                st
            } else {
                SessionState::default()
            }
        })
        .collect();
    let all_prefixes = prefixes(f);
    let plan = crate::addressing::AddressPlan::new(f).ok();
    let unusable = scenario.unusable();
    let mut report = BlackholeReport {
        aggregation,
        zones: Vec::new(),
        blackholes: Vec::new(),
    };
    for (z, zone) in f.zones.iter().enumerate() {
        let zid = ZoneId(z as u32);
        if zone.kind == ZoneKind::Bag {
            continue;
        }
        // Border speakers: those of the zone with a session to BAG (up or not: the border is
        // a design fact; whether it can still advertise is decided below).
        let borders: Vec<SpeakerId> = (0..g.speakers.len() as u32)
            .filter(|&v| {
                zone_of_speaker[v as usize] == zid
                    && g.neighbors(v).iter().any(|&(_, u)| is_bag(f, g, u))
            })
            .collect();
        if borders.is_empty() {
            continue;
        }
        let covered: Vec<&Prefix> = all_prefixes
            .iter()
            .filter(|p| f.device(p.rack_switch).zone == zid)
            .collect();
        // reach[b][i]: border b reaches covered prefix i inside the zone.
        let mut reach = vec![vec![false; covered.len()]; borders.len()];
        let dsf_ok = dsf_reachable_racks(f, zid, &unusable);
        for (i, p) in covered.iter().enumerate() {
            let origin = g.speaker_of[p.rack_switch.idx()];
            let r: Option<RoutesTo> = if borders.contains(&origin) {
                None
            } else {
                Some(routes_to(g, &internal, origin, cfg)?)
            };
            for (k, &b) in borders.iter().enumerate() {
                reach[k][i] = match &r {
                    // The border is the prefix's own speaker: a DSF system.
                    None => b == origin && dsf_ok.as_ref().is_none_or(|ok| ok[p.rack_switch.idx()]),
                    Some(r) => r.best[b as usize].is_some(),
                };
            }
        }
        // A border can advertise only if its BAG sessions are up at all.
        let bag_up = |b: SpeakerId| {
            g.neighbors(b)
                .iter()
                .any(|&(s, u)| is_bag(f, g, u) && states[s as usize].links > 0)
        };
        let mut advertising = Vec::new();
        let mut withdrawn = Vec::new();
        for (k, &b) in borders.iter().enumerate() {
            let n = reach[k].iter().filter(|&&x| x).count();
            let needed = match aggregation {
                Aggregation::Unconditional => 1,
                Aggregation::Conditional { min: None } => covered.len().max(1),
                Aggregation::Conditional { min: Some(m) } => m as usize,
            };
            if n >= needed && bag_up(b) {
                advertising.push(k);
            } else {
                withdrawn.push(k);
            }
        }
        let advertisers: Vec<SpeakerId> = advertising.iter().map(|&k| borders[k]).collect();
        let shares = attracted_shares(f, g, states, &zone_of_speaker, zid, &advertisers, cfg)?;
        let unreachable_prefixes = (0..covered.len())
            .filter(|&i| !advertising.iter().any(|&k| reach[k][i]))
            .count();
        for (&k, &share) in advertising.iter().zip(&shares) {
            let lost: Vec<String> = covered
                .iter()
                .enumerate()
                .filter(|&(i, _)| !reach[k][i])
                .map(|(_, p)| p.name.clone())
                .collect();
            if !lost.is_empty() {
                report.blackholes.push(Blackhole {
                    device: name(f, g, borders[k]),
                    zone: zone.name.clone(),
                    blackholed_share: share * lost.len() as f64 / covered.len() as f64,
                    prefixes: lost,
                    attracted_share: share,
                });
            }
        }
        report.zones.push(ZoneAggregate {
            zone: zone.name.clone(),
            aggregate: plan.as_ref().map(|p| p.zone_aggregate(f, zid).to_string()),
            covered: covered.len(),
            advertising: advertising
                .iter()
                .map(|&k| name(f, g, borders[k]))
                .collect(),
            withdrawn: withdrawn.iter().map(|&k| name(f, g, borders[k])).collect(),
            unreachable_prefixes,
        });
    }
    Ok(report)
}

/// For a DSF zone: which RDSWs still reach an EDSW over the live cell fabric (one search from
/// all EDSWs). `None` for other zones.
fn dsf_reachable_racks(f: &Fabric, z: ZoneId, mask: &FailureMask) -> Option<Vec<bool>> {
    if !matches!(f.zones[z.idx()].kind, ZoneKind::DsfL1 | ZoneKind::DsfL2) {
        return None;
    }
    let mut seen = vec![false; f.devices().len()];
    let mut stack: Vec<DeviceId> = f
        .zone_devices(z)
        .map(DeviceId)
        .filter(|&d| f.device(d).role == Role::Edsw && !mask.device_failed(d))
        .collect();
    for &d in &stack {
        seen[d.idx()] = true;
    }
    while let Some(d) = stack.pop() {
        for (l, n) in f.neighbors(d, mask) {
            if f.link(l).kind == PortKind::Fabric && !seen[n.idx()] {
                seen[n.idx()] = true;
                stack.push(n);
            }
        }
    }
    Some(seen)
}

/// Share of the zone aggregate's traffic, entering evenly at the region's BAG speakers, that
/// reaches each advertiser (same order), following the UCMP weights of the aggregate's routes.
fn attracted_shares(
    f: &Fabric,
    g: &BgpGraph,
    states: &[SessionState],
    zone_of_speaker: &[ZoneId],
    zid: ZoneId,
    advertisers: &[SpeakerId],
    cfg: &BgpConfig,
) -> Result<Vec<f64>, NotConverged> {
    if advertisers.is_empty() {
        return Ok(Vec::new());
    }
    // The aggregate is advertised outward only: sessions from an advertiser into its own
    // zone do not carry it.
    let outward: Vec<SessionState> = g
        .sessions
        .iter()
        .zip(states)
        .map(|(&(a, b), &st)| {
            let inward = (advertisers.contains(&a) && zone_of_speaker[b as usize] == zid)
                || (advertisers.contains(&b) && zone_of_speaker[a as usize] == zid);
            if inward {
                SessionState::default()
            } else {
                st
            }
        })
        .collect();
    let routes = routes_to_many(g, &outward, advertisers, cfg)?;
    let region = f.zones[zid.idx()].region;
    let sources: Vec<SpeakerId> = (0..g.speakers.len() as u32)
        .filter(|&v| {
            is_bag(f, g, v)
                && f.zones[zone_of_speaker[v as usize].idx()].region == region
                && routes.best[v as usize].is_some()
                && !routes.is_origin(v)
        })
        .collect();
    let mut mass = vec![0.0f64; g.speakers.len()];
    for &s in &sources {
        mass[s as usize] += 1.0 / sources.len() as f64;
    }
    // Next hops are one AS hop closer: push mass from the longest paths down.
    let mut order: Vec<SpeakerId> = (0..g.speakers.len() as u32)
        .filter(|&v| routes.best[v as usize].is_some() && !routes.is_origin(v))
        .collect();
    order.sort_by_key(|&v| std::cmp::Reverse(routes.best[v as usize].map(|b| b.len)));
    for v in order {
        let m = mass[v as usize];
        if m == 0.0 {
            continue;
        }
        for (mp, w) in routes
            .multipaths(g, &outward, v)
            .iter()
            .zip(routes.weights(g, &outward, v))
        {
            mass[mp.neighbor as usize] += m * w;
        }
    }
    Ok(advertisers.iter().map(|&a| mass[a as usize]).collect())
}
