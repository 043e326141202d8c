//! Blackholes under aggregation, and the two mitigations of the BAG design (Meta, "Building
//! Prometheus ..." 2026): draining the affected BAG plane, and conditional aggregation.
//!
//! - **Blackholes** come from [`aifabric_routing::aggregation::blackholes`] run on the
//!   scenario: a border that keeps advertising an aggregate while it cannot reach some of
//!   the covered racks attracts traffic it drops. Only scopes (zones, or regions for the
//!   region tier) that the scenario touches are looked at; the others cannot have changed.
//! - **Drain the affected BAG plane**: every BAG plane with a failed chassis, line card or
//!   link is hard-drained as a whole, so BGP stops sending traffic into it; the capacity it
//!   costs is the plane's share.
//! - **Conditional aggregation**: a border advertises the aggregate only while it reaches
//!   every covered rack. Blackholes go by construction; the cost is the capacity of the
//!   withdrawn borders' BAG-facing links, which no longer attract traffic (modelled by
//!   draining those links).

use crate::eval::{Down, Evaluator};
use crate::report::{BlackholeFigures, MitigationResult};
use crate::sweep::impact;
use aifabric_model::*;
use aifabric_routing::aggregation::{blackholes_in, Aggregation, AggregationTier, BlackholeReport};
use aifabric_routing::bgp::{self, BgpConfig, NotConverged, SpeakerKind};

/// Aggregation settings of a sweep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AggregationSetup {
    /// Policy.
    pub aggregation: Aggregation,
    /// Tier.
    pub tier: AggregationTier,
    /// BGP settings.
    pub cfg: BgpConfig,
}

fn run_detector(
    ev: &Evaluator,
    down: &Down,
    setup: &AggregationSetup,
    aggregation: Aggregation,
) -> Result<BlackholeReport, NotConverged> {
    let f = ev.fabric();
    let mut scenario = Scenario::healthy(f);
    scenario.failed = down.mask.clone();
    let states = bgp::session_states(f, &ev.g, &scenario);
    // Scopes damaged inside: a down device, or a down link with both ends in the scope.
    let scope_of = |d: DeviceId| -> u32 {
        let z = f.device(d).zone;
        match setup.tier {
            AggregationTier::Zone => z.get(),
            AggregationTier::Region => f.zones()[z.idx()].region.get(),
        }
    };
    let mut damaged: Vec<u32> = down.devices.iter().map(|&d| scope_of(d)).collect();
    for l in down.down_links(f) {
        let link = f.link(l);
        if scope_of(link.a) == scope_of(link.b) {
            damaged.push(scope_of(link.a));
        }
    }
    damaged.sort_unstable();
    damaged.dedup();
    blackholes_in(
        f,
        &ev.g,
        &states,
        &scenario,
        &setup.cfg,
        aggregation,
        setup.tier,
        &|s| damaged.binary_search(&s).is_ok(),
    )
}

fn figures(r: &BlackholeReport) -> BlackholeFigures {
    BlackholeFigures {
        blackholed_prefixes: r.blackholes.iter().map(|b| b.prefixes.len()).sum(),
        blackholed_share: r.blackholes.iter().fold(0.0, |a, b| a + b.blackholed_share),
        unreachable_live_racks: r.scopes.iter().map(|s| s.unreachable_live_racks).sum(),
        unreachable_share: r.scopes.iter().fold(0.0, |a, s| a + s.outage_share),
    }
}

/// Blackholes of a scenario.
pub fn blackholes_of(
    ev: &Evaluator,
    down: &Down,
    setup: &AggregationSetup,
) -> Result<BlackholeFigures, NotConverged> {
    if down.devices.is_empty() && down.links.is_empty() {
        return Ok(BlackholeFigures {
            blackholed_prefixes: 0,
            blackholed_share: 0.0,
            unreachable_live_racks: 0,
            unreachable_share: 0.0,
        });
    }
    Ok(figures(&run_detector(ev, down, setup, setup.aggregation)?))
}

/// BAG planes (catalog indices) with a failed component: a chassis of the plane is down,
/// or one of its links is itself marked down (a line card, a cut fiber). A plane whose
/// links went down only because the far end failed is not counted.
pub fn touched_planes(f: &Fabric, catalog: &SrgCatalog, down: &Down) -> Vec<usize> {
    catalog
        .of_class(SrgClass::Domain(DomainClass::BagPlane))
        .into_iter()
        .filter(|&i| {
            catalog.members(i).0.iter().any(|&d| {
                down.devices.binary_search(&d).is_ok()
                    || f.incident(d)
                        .iter()
                        .any(|l| down.links.binary_search(l).is_ok())
            })
        })
        .collect()
}

/// Both mitigations applied to a scenario.
pub fn mitigations(
    ev: &Evaluator,
    catalog: &SrgCatalog,
    down: &Down,
    setup: &AggregationSetup,
) -> Result<Vec<MitigationResult>, NotConverged> {
    let f = ev.fabric();
    let mut ws = ev.workspace();
    let mut out = Vec::new();
    let planes = touched_planes(f, catalog, down);
    if !planes.is_empty() {
        let mut drained = down.clone();
        for &p in &planes {
            let (d, l) = catalog.members(p);
            drained.add(d, l);
        }
        let o = ev.evaluate(&drained, &mut ws)?;
        out.push(MitigationResult {
            mitigation: "drain_bag_plane".to_owned(),
            acts_on: planes.iter().map(|&p| catalog.names[p].clone()).collect(),
            blackholes: blackholes_of(ev, &drained, setup)?,
            min_capacity_retained: impact(ev, &o),
        });
    }
    // Conditional aggregation: withdrawn borders stop attracting traffic.
    let cond = run_detector(ev, down, setup, Aggregation::Conditional { min: None })?;
    let withdrawn: Vec<&String> = cond.scopes.iter().flat_map(|s| &s.withdrawn).collect();
    if !withdrawn.is_empty() {
        let mut links = Vec::new();
        for name in &withdrawn {
            for l in border_bag_links(ev, name) {
                links.push(l);
            }
        }
        let mut d = down.clone();
        d.add(&[], &links);
        let o = ev.evaluate(&d, &mut ws)?;
        out.push(MitigationResult {
            mitigation: "conditional_aggregation".to_owned(),
            acts_on: withdrawn.iter().map(|s| (*s).clone()).collect(),
            blackholes: figures(&cond),
            min_capacity_retained: impact(ev, &o),
        });
    }
    Ok(out)
}

/// Links from the border named `name` (a device, or `<zone> (DSF)`) to BAG.
fn border_bag_links(ev: &Evaluator, name: &str) -> Vec<LinkId> {
    let f = ev.fabric();
    let g = &ev.g;
    let speaker = match name.strip_suffix(" (DSF)") {
        Some(zone) => (0..g.speakers.len()).find(|&v| {
            matches!(g.speakers[v].kind, SpeakerKind::DsfSystem(z) if f.zones()[z.idx()].name == zone)
        }),
        None => f.find_device(name).and_then(|d| g.speaker(d)).map(|v| v.idx()),
    };
    let Some(v) = speaker else {
        return Vec::new();
    };
    g.neighbors(aifabric_routing::bgp::SpeakerId::from_idx(v))
        .iter()
        .filter(|&&(_, u)| {
            matches!(g.speakers[u.idx()].kind,
                SpeakerKind::Device(d) if matches!(f.device(d).role, Role::Bag | Role::Hub))
        })
        .flat_map(|&(s, _)| g.links(s).iter().copied())
        .collect()
}
