//! Aggregation at two tiers and the blackhole detector (RFC 7938 section 8.2).
//!
//! - Zone tier: each L2 zone's border speakers (NSF STSWs, the DSF system, ...) advertise one
//!   aggregate for the zone's rack prefixes to BAG instead of the specifics.
//! - Region tier: each region's BAG chassis advertise one aggregate for the region's racks to
//!   the other regions (the backbone side of BAG).
//!
//! Unconditionally, a border keeps advertising while it reaches at least one covered prefix,
//! with a discard route behind the aggregate: traffic for a prefix it cannot reach is dropped
//! there (a blackhole). Conditionally, it advertises only while it reaches all (or at least N)
//! of them. Reachability inside the scope is computed with the specifics, which stay inside.

use crate::bgp::{
    routes_to, routes_to_many, BgpConfig, BgpGraph, NotConverged, SessionState, SpeakerId,
    SpeakerKind,
};
use crate::fib::{prefixes, Prefix};
use aifabric_model::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// How zones are aggregated toward BAG. Serialized as the command line spells it
/// (`unconditional`, `conditional`, `conditional:N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregation {
    /// Advertise the aggregate while at least one covered prefix is reachable.
    Unconditional,
    /// Advertise only while at least `min` covered prefixes are reachable (`None`: all).
    Conditional {
        /// Contributors needed; `None` means every covered prefix.
        min: Option<u32>,
    },
}

impl Serialize for Aggregation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Where aggregates are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AggregationTier {
    /// L2 zone -> BAG: the zone's borders advertise the zone.
    Zone,
    /// BAG -> other regions: a region's BAG chassis advertise the region.
    Region,
}

/// One scope's aggregate (a zone or a region).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScopeAggregate {
    /// The zone or region.
    pub scope: String,
    /// The aggregate (zone /48 or region /40), when the fabric fits the addressing plan.
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
    /// Covered racks with a live GPU behind a live rack switch: the destinations traffic to
    /// the aggregate is for (a dead rack's traffic has no destination).
    pub live_racks: usize,
    /// Live racks that no advertising border reaches: an outage (with no border advertising
    /// at all, the whole scope is cut off while its racks are alive).
    pub unreachable_live_racks: usize,
    /// Share of the aggregate's traffic (uniform per live rack) that has no way in:
    /// `unreachable_live_racks / live_racks`, blackholed traffic included.
    pub outage_share: f64,
    /// Why live racks are unreachable, when some are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outage: Option<OutageCause>,
}

/// Why a scope's live racks cannot be reached from outside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutageCause {
    /// No border advertises the aggregate: the scope is cut off while its racks are alive.
    NotAdvertised,
    /// Borders advertise it, but none of them reaches these racks.
    NotReached,
}

impl OutageCause {
    /// The cause in words.
    pub fn describe(self) -> &'static str {
        match self {
            OutageCause::NotAdvertised => "no border advertises the aggregate",
            OutageCause::NotReached => "no advertising border reaches them",
        }
    }
}

/// A border that attracts traffic it must drop.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Blackhole {
    /// The advertising border speaker.
    pub device: String,
    /// The zone or region whose aggregate it advertises.
    pub scope: String,
    /// Covered live racks' prefixes it cannot reach (dead racks are not counted: their
    /// traffic has no destination).
    pub prefixes: Vec<String>,
    /// Share of the aggregate's traffic that it attracts, entering evenly at the BAG chassis
    /// upstream (the region's own for the zone tier, the other regions' for the region tier).
    pub attracted_share: f64,
    /// Of that, the share dropped: `attracted_share x |prefixes| / live racks` (uniform traffic
    /// per live rack).
    pub blackholed_share: f64,
}

/// Everything the detector found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlackholeReport {
    /// The aggregation policy.
    pub aggregation: Aggregation,
    /// The tier.
    pub tier: AggregationTier,
    /// Per scope with a border.
    pub scopes: Vec<ScopeAggregate>,
    /// Blackholes, by scope then device.
    pub blackholes: Vec<Blackhole>,
    /// What explains the result (outages that drop nothing).
    pub notes: Vec<String>,
}

fn is_bag(f: &Fabric, g: &BgpGraph, v: SpeakerId) -> bool {
    matches!(g.speakers[v.idx()].kind,
        SpeakerKind::Device(d) if matches!(f.device(d).role, Role::Bag | Role::Hub))
}

fn zone_of(f: &Fabric, g: &BgpGraph, v: SpeakerId) -> ZoneId {
    match g.speakers[v.idx()].kind {
        SpeakerKind::Device(d) => f.device(d).zone,
        SpeakerKind::DsfSystem(z) => z,
    }
}

fn name(f: &Fabric, g: &BgpGraph, v: SpeakerId) -> String {
    match g.speakers[v.idx()].kind {
        SpeakerKind::Device(d) => f.device_name(d),
        SpeakerKind::DsfSystem(z) => format!("{} (DSF)", f.zones()[z.idx()].name),
    }
}

/// Run the detector over every scope of `tier` that has a border.
pub fn blackholes(
    f: &Fabric,
    g: &BgpGraph,
    states: &[SessionState],
    scenario: &Scenario,
    cfg: &BgpConfig,
    aggregation: Aggregation,
    tier: AggregationTier,
) -> Result<BlackholeReport, NotConverged> {
    blackholes_in(f, g, states, scenario, cfg, aggregation, tier, &|_| true)
}

/// [`blackholes`] over the scopes for which `scope` is true (zone or region ids). A sweep
/// looks only at the scopes a scenario damages inside: reachability inside an untouched
/// scope is the healthy one.
#[allow(clippy::too_many_arguments)]
pub fn blackholes_in(
    f: &Fabric,
    g: &BgpGraph,
    states: &[SessionState],
    scenario: &Scenario,
    cfg: &BgpConfig,
    aggregation: Aggregation,
    tier: AggregationTier,
    scope: &dyn Fn(u32) -> bool,
) -> Result<BlackholeReport, NotConverged> {
    let zone_of_speaker: Vec<ZoneId> = g.speaker_ids().map(|v| zone_of(f, g, v)).collect();
    let all_prefixes = prefixes(f);
    let plan = crate::addressing::AddressPlan::new(f).ok();
    let unusable = scenario.unusable();
    // A rack is live when its switch is up and at least one of its GPUs reaches it.
    let rack_live = |r: DeviceId| {
        !unusable.device_failed(r)
            && f.neighbors(r, &unusable)
                .any(|(_, n)| f.device(n).role == Role::Gpu)
    };
    // Racks of DSF zones cut off from their zone's cell fabric are unreachable whatever BGP
    // says (the zone is one speaker); every other rack is fine here.
    let mut rack_ok = vec![true; f.devices().len()];
    for z in (0..f.zones().len() as u32).map(ZoneId::new) {
        if let Some(ok) = dsf_reachable_racks(f, z, &unusable) {
            for d in f.zone_devices(z).map(DeviceId::new) {
                rack_ok[d.idx()] = ok[d.idx()];
            }
        }
    }
    // (scope id, name, aggregate) for every scope of the tier.
    let scopes: Vec<(u32, String, Option<String>)> = match tier {
        AggregationTier::Zone => f
            .zones()
            .iter()
            .enumerate()
            .filter(|(_, z)| z.kind != ZoneKind::Bag)
            .map(|(i, z)| {
                let agg = plan
                    .as_ref()
                    .map(|p| p.zone_aggregate(f, ZoneId::from_idx(i)).to_string());
                (i as u32, z.name.clone(), agg)
            })
            .collect(),
        AggregationTier::Region => f
            .regions()
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let agg = plan
                    .as_ref()
                    .map(|p| p.region_aggregate(RegionId::from_idx(i)).to_string());
                (i as u32, r.name.clone(), agg)
            })
            .collect(),
    };
    let mut report = BlackholeReport {
        aggregation,
        tier,
        scopes: Vec::new(),
        blackholes: Vec::new(),
        notes: Vec::new(),
    };
    for (scope, scope_name, aggregate) in scopes.into_iter().filter(|s| scope(s.0)) {
        let region_of = |z: ZoneId| f.zones()[z.idx()].region.get();
        let in_scope = |v: SpeakerId| {
            let z = zone_of_speaker[v.idx()];
            match tier {
                AggregationTier::Zone => z.get() == scope,
                AggregationTier::Region => region_of(z) == scope,
            }
        };
        // Borders: speakers of the scope with a session to BAG outside it.
        let borders: Vec<SpeakerId> = g
            .speaker_ids()
            .filter(|&v| {
                in_scope(v)
                    && g.neighbors(v)
                        .iter()
                        .any(|&(_, u)| is_bag(f, g, u) && !in_scope(u))
            })
            .collect();
        if borders.is_empty() {
            continue;
        }
        let covered: Vec<&Prefix> = all_prefixes
            .iter()
            .filter(|p| in_scope(g.rack_speaker(p.rack_switch)))
            .collect();
        // Specifics stay inside the scope.
        let internal: Vec<SessionState> = g
            .sessions
            .iter()
            .zip(states)
            .map(|(&(a, b), &st)| {
                if in_scope(a) && in_scope(b) {
                    st
                } else {
                    SessionState::default()
                }
            })
            .collect();
        // reach[b][i]: border b reaches covered prefix i inside the scope.
        let mut reach = vec![vec![false; covered.len()]; borders.len()];
        // Which borders have a route toward an origin depends only on the neighbours it has
        // live sessions with: its own ASN is unique (a rack switch, or a DSF zone's one
        // speaker), so the paths toward it are the paths toward those neighbours plus one
        // hop. Origins with the same live neighbours (the racks of a pod, mostly) share one
        // route computation.
        let mut by_neighbours: FxHashMap<Vec<SpeakerId>, Vec<bool>> = FxHashMap::default();
        for (i, p) in covered.iter().enumerate() {
            let origin = g.rack_speaker(p.rack_switch);
            if !rack_ok[p.rack_switch.idx()] {
                continue;
            }
            if borders.contains(&origin) {
                let rt = routes_to(g, &internal, origin, cfg)?;
                for (k, &b) in borders.iter().enumerate() {
                    reach[k][i] = b == origin || rt.best[b.idx()].is_some();
                }
                continue;
            }
            let key: Vec<SpeakerId> = g
                .neighbors(origin)
                .iter()
                .filter(|&&(s, _)| internal[s.idx()].links > 0)
                .map(|&(_, u)| u)
                .collect();
            let row = match by_neighbours.get(&key) {
                Some(r) => r,
                None => {
                    let rt = routes_to(g, &internal, origin, cfg)?;
                    let r = borders
                        .iter()
                        .map(|&b| rt.best[b.idx()].is_some())
                        .collect();
                    by_neighbours.entry(key).or_insert(r)
                }
            };
            for (k, &x) in row.iter().enumerate() {
                reach[k][i] = x;
            }
        }
        // A border can advertise only if it still has a session up toward the outside BAG.
        let outside_up = |b: SpeakerId| {
            g.neighbors(b)
                .iter()
                .any(|&(s, u)| is_bag(f, g, u) && !in_scope(u) && states[s.idx()].links > 0)
        };
        let needed = match aggregation {
            Aggregation::Unconditional => 1,
            Aggregation::Conditional { min: None } => covered.len().max(1),
            Aggregation::Conditional { min: Some(m) } => m as usize,
        };
        let (mut advertising, mut withdrawn) = (Vec::new(), Vec::new());
        for (k, &b) in borders.iter().enumerate() {
            let n = reach[k].iter().filter(|&&x| x).count();
            if n >= needed && outside_up(b) {
                advertising.push(k);
            } else {
                withdrawn.push(k);
            }
        }
        let advertisers: Vec<SpeakerId> = advertising.iter().map(|&k| borders[k]).collect();
        let is_source = |v: SpeakerId| {
            is_bag(f, g, v)
                && match tier {
                    AggregationTier::Zone => {
                        region_of(zone_of_speaker[v.idx()])
                            == f.zones()[scope as usize].region.get()
                    }
                    AggregationTier::Region => !in_scope(v),
                }
        };
        let shares = attracted_shares(g, states, &in_scope, &is_source, &advertisers, cfg)?;
        let unreachable_prefixes = (0..covered.len())
            .filter(|&i| !advertising.iter().any(|&k| reach[k][i]))
            .count();
        let live: Vec<bool> = covered.iter().map(|p| rack_live(p.rack_switch)).collect();
        let live_racks = live.iter().filter(|&&x| x).count();
        let unreachable_live_racks = (0..covered.len())
            .filter(|&i| live[i] && !advertising.iter().any(|&k| reach[k][i]))
            .count();
        for (&k, &share) in advertising.iter().zip(&shares) {
            let lost: Vec<String> = covered
                .iter()
                .enumerate()
                .filter(|&(i, _)| live[i] && !reach[k][i])
                .map(|(_, p)| p.name.clone())
                .collect();
            if !lost.is_empty() {
                report.blackholes.push(Blackhole {
                    device: name(f, g, borders[k]),
                    scope: scope_name.clone(),
                    blackholed_share: share * lost.len() as f64 / live_racks as f64,
                    prefixes: lost,
                    attracted_share: share,
                });
            }
        }
        report.scopes.push(ScopeAggregate {
            scope: scope_name,
            aggregate,
            covered: covered.len(),
            advertising: advertising
                .iter()
                .map(|&k| name(f, g, borders[k]))
                .collect(),
            withdrawn: withdrawn.iter().map(|&k| name(f, g, borders[k])).collect(),
            unreachable_prefixes,
            live_racks,
            unreachable_live_racks,
            outage_share: if live_racks == 0 {
                0.0
            } else {
                unreachable_live_racks as f64 / live_racks as f64
            },
            outage: (unreachable_live_racks > 0).then_some(if advertising.is_empty() {
                OutageCause::NotAdvertised
            } else {
                OutageCause::NotReached
            }),
        });
    }
    // Live racks nobody can reach are an outage, blackholes or not; without a blackhole,
    // nothing attracts their traffic to drop it.
    if report.blackholes.is_empty() && report.scopes.iter().any(|z| z.outage.is_some()) {
        report.notes.push(
            "the outages drop nothing: no border attracts the traffic of the racks it cannot \
             reach"
                .to_owned(),
        );
    }
    Ok(report)
}

/// For a DSF zone: which RDSWs still reach an EDSW over the live cell fabric (one search from
/// all EDSWs). `None` for other zones.
fn dsf_reachable_racks(f: &Fabric, z: ZoneId, mask: &FailureMask) -> Option<Vec<bool>> {
    if !matches!(f.zones()[z.idx()].kind, ZoneKind::DsfL1 | ZoneKind::DsfL2) {
        return None;
    }
    let mut seen = vec![false; f.devices().len()];
    let mut stack: Vec<DeviceId> = f
        .zone_devices(z)
        .map(DeviceId::new)
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

/// Share of the aggregate's traffic, entering evenly at the `is_source` BAG speakers, that
/// reaches each advertiser (same order), following the UCMP weights of the aggregate's routes.
fn attracted_shares(
    g: &BgpGraph,
    states: &[SessionState],
    in_scope: &dyn Fn(SpeakerId) -> bool,
    is_source: &dyn Fn(SpeakerId) -> bool,
    advertisers: &[SpeakerId],
    cfg: &BgpConfig,
) -> Result<Vec<f64>, NotConverged> {
    if advertisers.is_empty() {
        return Ok(Vec::new());
    }
    // The aggregate is advertised outward only: sessions from an advertiser into its own
    // scope do not carry it.
    let outward: Vec<SessionState> = g
        .sessions
        .iter()
        .zip(states)
        .map(|(&(a, b), &st)| {
            let inward = (advertisers.contains(&a) && in_scope(b))
                || (advertisers.contains(&b) && in_scope(a));
            if inward {
                SessionState::default()
            } else {
                st
            }
        })
        .collect();
    let routes = routes_to_many(g, &outward, advertisers, cfg)?;
    let sources: Vec<SpeakerId> = g
        .speaker_ids()
        .filter(|&v| is_source(v) && routes.best[v.idx()].is_some() && !routes.is_origin(v))
        .collect();
    let mut mass = vec![0.0f64; g.speakers.len()];
    for &s in &sources {
        mass[s.idx()] += 1.0 / sources.len() as f64;
    }
    // Next hops are one AS hop closer: push mass from the longest paths down.
    let mut order: Vec<SpeakerId> = g
        .speaker_ids()
        .filter(|&v| routes.best[v.idx()].is_some() && !routes.is_origin(v))
        .collect();
    order.sort_by_key(|&v| std::cmp::Reverse(routes.best[v.idx()].map(|b| b.len)));
    for v in order {
        let m = mass[v.idx()];
        if m == 0.0 {
            continue;
        }
        for (mp, w) in routes
            .multipaths(g, &outward, v)
            .iter()
            .zip(routes.weights(g, &outward, v))
        {
            mass[mp.neighbor.idx()] += m * w;
        }
    }
    Ok(advertisers.iter().map(|&a| mass[a.idx()]).collect())
}
