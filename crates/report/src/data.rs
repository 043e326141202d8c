//! The data of the HTML report, gathered from the other crates (`report.json` is this,
//! serialized): fabric summary and hierarchy, oversubscription per tier, inter-BAG capacity,
//! a failure sweep, collective bus bandwidth per load-balancing mode, link utilization.

use aifabric_capacity::capacity_report;
use aifabric_dataplane::{Forwarding, Lb, Net, NetParams};
use aifabric_engine::sim::{simulate, Collective, SimError};
use aifabric_failures::sweep::Sweep;
use aifabric_failures::{analyze, Options};
use aifabric_model::{DomainClass, Fabric, FailureMask, Role, Scenario, SrgClass, ZoneKind};
use aifabric_routing::bgp::{AsnPlan, BgpConfig, NotConverged};
use aifabric_workload::{placement, Algo, Op, Placement};
use serde::Serialize;
use std::collections::BTreeMap;

/// What to put in the report.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// Failure sweep: every group of this class alone (`None`: every group).
    pub sweep: Option<SrgClass>,
    /// GPUs of the collective benchmark (capped at the fabric's).
    pub gpus: u32,
    /// Message sizes, bytes.
    pub sizes: Vec<u64>,
    /// Load-balancing modes compared.
    pub lbs: Vec<Lb>,
    /// Hash seed.
    pub seed: u64,
    /// The spec's name and text, to build it planar and spread and compare the two under
    /// the same sweep (skipped when absent or the spec has no inter-BAG links).
    pub spec_text: Option<(String, String)>,
    /// The maintenance state the failure sweep starts from (`None`: the healthy fabric).
    pub state: Option<aifabric_failures::State>,
    /// One table per site pair (buildings, zones, AI zones) and region pair: the scenarios
    /// that cost it most.
    pub pair_tables: bool,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            sweep: Some(SrgClass::Domain(DomainClass::BagPlane)),
            gpus: 1024,
            sizes: (0..6).map(|k| 1u64 << (20 + 2 * k)).collect(),
            lbs: vec![Lb::Ecmp, Lb::Eecmp(16), Lb::Spray(None)],
            seed: 1,
            spec_text: None,
            state: None,
            pair_tables: false,
        }
    }
}

/// A zone in the hierarchy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZoneNode {
    /// Name.
    pub name: String,
    /// Builder.
    pub kind: String,
    /// GPUs.
    pub gpus: u64,
    /// Capacity of its links into BAG, Tb/s per direction.
    pub uplink_tbps: f64,
}

/// A building in the hierarchy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BuildingNode {
    /// Name.
    pub name: String,
    /// Its L2 zones.
    pub zones: Vec<ZoneNode>,
}

/// A region in the hierarchy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RegionNode {
    /// Name.
    pub name: String,
    /// GPUs.
    pub gpus: u64,
    /// Whether its BAG is a hub (hub and spoke): it joins the regions in `spokes`.
    pub hub: bool,
    /// For a hub, the regions it has links to.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spokes: Vec<String>,
    /// BAG planes.
    pub bag_planes: u32,
    /// BAG (or hub) chassis.
    pub bag_chassis: u64,
    /// Buildings.
    pub buildings: Vec<BuildingNode>,
}

/// One tier's oversubscription.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierRow {
    /// Tier.
    pub tier: String,
    /// Scope.
    pub scope: String,
    /// Down, Tb/s.
    pub down_tbps: f64,
    /// Up, Tb/s.
    pub up_tbps: f64,
    /// Down / up.
    pub ratio: Option<f64>,
}

/// One scenario as the report shows it: what it costs, where, and to which tier.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorstScenario {
    /// Scenario (its groups' selectors).
    pub scenario: String,
    /// Class of its groups (`plane`, `hall`, ...; `mixed`).
    pub class: String,
    /// Least routed capacity kept over every site and region pair.
    pub capacity_retained: f64,
    /// The pair that keeps least (`None`: no pair loses capacity).
    pub worst_pair: Option<String>,
    /// GPUs reaching no other site.
    pub gpus_isolated: u64,
    /// GPUs down or cut off at their rack.
    pub gpus_cut_off: u64,
    /// Tier whose oversubscription grew most, `tier before->after`, `+N` others; `-` none.
    pub worst_tier: String,
}

impl WorstScenario {
    fn of(s: &aifabric_failures::report::ScenarioRecord) -> Self {
        WorstScenario {
            scenario: s.scenario.clone(),
            class: s.class(),
            capacity_retained: s.min_capacity_retained,
            worst_pair: s.worst_pair().map(|p| p.0.to_owned()),
            gpus_isolated: s.gpus_isolated,
            gpus_cut_off: s.gpus_disconnected,
            worst_tier: s.worst_tier(),
        }
    }
}

/// One site or region pair's own worst scenarios.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairTable {
    /// Pair (`east.dc1<->east.dc2`, `east<->west`).
    pub pair: String,
    /// Routed capacity with nothing (more) failed, Tb/s per direction.
    pub healthy_tbps: f64,
    /// Scenarios that cost it capacity, worst first (at most 5): (scenario, share kept).
    pub worst: Vec<(String, f64)>,
    /// Scenarios that cost it anything.
    pub scenarios_losing: usize,
}

/// The failure sweep's part.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FailureSection {
    /// Sweep run.
    pub sweep: String,
    /// The state the sweep started from, if not the healthy fabric.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starting_state: Option<aifabric_failures::report::StartingState>,
    /// Scenarios.
    pub scenarios: usize,
    /// Per region pair (or site pair), capacity retained by each scenario, sorted (the CDF).
    pub cdf: BTreeMap<String, Vec<f64>>,
    /// Worst scenarios, worst first.
    pub worst: Vec<WorstScenario>,
    /// The worst scenario of each class swept.
    pub worst_per_class: Vec<WorstScenario>,
    /// One table per pair, when asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pair_tables: Vec<PairTable>,
    /// The same sweep on the spec built planar and built spread (from the healthy fabric).
    pub planar_vs_spread: Option<aifabric_failures::compare::Comparison>,
    /// When single failures cannot tell the wirings apart: the same class failed in pairs,
    /// one group on each side of an inter-BAG pair, where they do differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planar_vs_spread_pairs: Option<aifabric_failures::compare::Comparison>,
    /// Why planar and spread were not compared, or why they give the same figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planar_vs_spread_note: Option<String>,
}

/// One load-balancing mode's bus bandwidth per size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BusBwSeries {
    /// Mode.
    pub lb: String,
    /// (bytes, busBW GB/s).
    pub points: Vec<(u64, f64)>,
    /// Utilization histogram of the largest size (20 bins of 5%).
    pub utilization_histogram: Vec<u64>,
}

/// `report.json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReportData {
    /// Spec name.
    pub fabric: String,
    /// GPUs.
    pub gpus: u64,
    /// Switches.
    pub switches: u64,
    /// Links.
    pub links: u64,
    /// Power, MW.
    pub power_mw: f64,
    /// Regions -> buildings -> zones, with BAG.
    pub hierarchy: Vec<RegionNode>,
    /// Oversubscription per tier.
    pub tiers: Vec<TierRow>,
    /// Inter-BAG capacity: (region a, region b, Tb/s both ways).
    pub inter_bag: Vec<(String, String, f64)>,
    /// Regions with GPUs joined through hubs: spoke-to-spoke capacity by max-flow.
    pub hub_pairs: Vec<aifabric_capacity::HubPair>,
    /// PFC headroom against each switch model's buffer.
    pub pfc_headroom: aifabric_capacity::PfcSummary,
    /// Failure sweep.
    pub failures: FailureSection,
    /// Collective: what ran.
    pub collective: String,
    /// Why the collective is placed as it is, or why the modes cannot differ on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collective_note: Option<String>,
    /// Bus bandwidth per mode.
    pub busbw: Vec<BusBwSeries>,
}

/// Report failures: the stage that failed, its error the source.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The spread build of the spec (for planar vs spread) failed.
    #[error("{0}")]
    Spec(#[from] aifabric_spec::SpecError),
    /// BGP did not settle during the failure sweep.
    #[error("{0}")]
    Routing(#[from] NotConverged),
    /// The benchmark's GPUs could not be placed.
    #[error("{0}")]
    Placement(#[from] placement::PlacementError),
    /// A benchmark collective could not be simulated.
    #[error("{0}")]
    Sim(#[from] SimError),
}

/// Most scenarios of the cross-pair comparison (a group of one side with each of the other,
/// per inter-BAG pair): a handful of BAG planes or chassis, a few hundred line cards at most.
const MAX_CROSS_PAIRS: usize = 400;

/// Planar vs spread, if the spec has inter-BAG links.
type Compared = (
    Option<aifabric_failures::compare::Comparison>,
    Option<aifabric_failures::compare::Comparison>,
    Option<String>,
);

/// Planar vs spread under `sweep`, if the spec has inter-BAG links; or why they are not
/// compared (the spec cannot be wired spread). When the sweep's single failures keep the
/// same capacity under both wirings, the same class is failed in pairs across each
/// inter-BAG pair (one group on each side), where the wirings do differ, and a note says
/// why the single failures could not.
fn compare(
    name: &str,
    text: &str,
    class: Option<SrgClass>,
    sweep: &Sweep,
) -> Result<Compared, ReportError> {
    use aifabric_failures::compare::planar_vs_spread;
    use aifabric_spec::build_inter_bag;
    use aifabric_spec::spec::InterBagTopology;
    let Ok(planar) = build_inter_bag(name, text, InterBagTopology::Planar) else {
        return Ok((None, None, None));
    };
    let spread = match build_inter_bag(name, text, InterBagTopology::Spread) {
        Ok(s) => s,
        Err(e) => {
            let why = e.to_string();
            let first = why.lines().next().unwrap_or_default();
            return Ok((
                None,
                None,
                Some(format!(
                    "not compared: the spec cannot be wired spread ({first})"
                )),
            ));
        }
    };
    let run = |sw: &Sweep| {
        planar_vs_spread(
            &planar,
            &spread,
            AsnPlan::Rfc7938,
            BgpConfig::default(),
            sw,
            5,
            &|_, _| {},
        )
    };
    let single = run(sweep)?;
    if single.spread_better + single.planar_better > 0 {
        return Ok((Some(single), None, None));
    }
    let n = single.scenarios;
    let Some(class) = class else {
        let note =
            format!("planar and spread keep the same capacity in all {n} scenarios of this sweep");
        return Ok((Some(single), None, Some(note)));
    };
    let same = format!(
        "one {c} failed alone takes the same inter-BAG links whether they are wired planar or \
         spread, so the {n} single scenarios keep the same capacity either way",
        c = class.prefix()
    );
    let cross = cross_pairs(&planar, class);
    if cross.is_empty() || cross.len() > MAX_CROSS_PAIRS {
        let why = if cross.is_empty() {
            format!(
                "no {} lies on both sides of an inter-BAG pair",
                class.prefix()
            )
        } else {
            format!(
                "{} pairs across the inter-BAG pairs are more than the report runs ({MAX_CROSS_PAIRS}; \
                 `aifabric failures SPEC --sweep pairs:{} --compare-inter-bag` runs them)",
                cross.len(),
                class.prefix()
            )
        };
        return Ok((Some(single), None, Some(format!("{same}; {why}"))));
    }
    let pairs = run(&Sweep::Named(cross))?;
    let note = format!(
        "{same}. They differ when a {c} fails on each side of an inter-BAG pair: with the \
         first {c} of one side and each {c} of the other in turn, spread keeps more in {} of \
         those {} scenarios, planar in {}",
        pairs.spread_better,
        pairs.scenarios,
        pairs.planar_better,
        c = class.prefix()
    );
    Ok((Some(single), Some(pairs), Some(note)))
}

/// Pairs of groups of `class` across each pair of regions with inter-BAG links between them:
/// the first group of one region with every group of the other, named `a + b` as pair
/// sweeps name them.
fn cross_pairs(f: &Fabric, class: SrgClass) -> Vec<(String, Vec<usize>)> {
    let catalog = f.srg_catalog();
    let region_of = |i: usize| {
        let (d, l) = catalog.members(i);
        let dev = d
            .first()
            .copied()
            .or_else(|| l.first().map(|&l| f.link(l).a))?;
        Some(f.zones()[f.device(dev).zone.idx()].region.idx())
    };
    let groups: Vec<(usize, usize)> = catalog
        .of_class(class)
        .into_iter()
        .filter_map(|i| region_of(i).map(|r| (i, r)))
        .collect();
    let mut joined = std::collections::BTreeSet::new();
    for l in f.links() {
        let (ra, rb) = (
            f.zones()[f.device(l.a).zone.idx()].region.idx(),
            f.zones()[f.device(l.b).zone.idx()].region.idx(),
        );
        if ra != rb {
            joined.insert((ra.min(rb), ra.max(rb)));
        }
    }
    let mut out = Vec::new();
    for &(ra, rb) in &joined {
        // The first group of one side with each group of the other: planar wiring pairs it
        // with exactly one of them, spread with all, which is where the two differ.
        for &(g, _) in groups.iter().filter(|x| x.1 == ra).take(1) {
            for &(h, _) in groups.iter().filter(|x| x.1 == rb) {
                out.push((
                    format!("{} + {}", catalog.names[g], catalog.names[h]),
                    vec![g, h],
                ));
            }
        }
    }
    out
}

/// Gather the report's data. `progress(step, of, what)` is called before each stage.
pub fn build(
    f: &Fabric,
    opts: &ReportOptions,
    progress: &dyn Fn(u64, u64, &str),
) -> Result<ReportData, ReportError> {
    let steps = 2 + opts.lbs.len() as u64;
    progress(0, steps, "capacity");
    // Every section describes the starting state: the healthy fabric, or the maintenance state.
    let start_down = opts
        .state
        .as_ref()
        .map_or_else(|| FailureMask::none(f), |s| s.down.mask.clone());
    let cap = capacity_report(f, &start_down);
    let mut zone_up = vec![0.0f64; f.zones().len()];
    let mut zone_gpus = vec![0u64; f.zones().len()];
    for l in f.links() {
        let (a, b) = (f.device(l.a), f.device(l.b));
        if a.role == Role::Gpu {
            zone_gpus[a.zone.idx()] += 1;
        }
        if matches!(b.role, Role::Bag | Role::Hub) && a.zone != b.zone {
            zone_up[a.zone.idx()] += f64::from(l.capacity_mbps) / 1e6;
        }
    }
    let mut region_gpus = vec![0u64; f.regions().len()];
    for (z, &g) in zone_gpus.iter().enumerate() {
        region_gpus[f.zones()[z].region.idx()] += g;
    }
    let hierarchy = f
        .regions()
        .iter()
        .enumerate()
        .map(|(r, region)| {
            let bag: Vec<_> = f
                .devices()
                .iter()
                .filter(|d| {
                    matches!(d.role, Role::Bag | Role::Hub)
                        && f.zones()[d.zone.idx()].region.idx() == r
                })
                .collect();
            let hub = bag.iter().any(|d| d.role == Role::Hub);
            let planes = bag
                .iter()
                .filter_map(|d| d.plane())
                .map(|p| u32::from(p) + 1)
                .max()
                .unwrap_or(0);
            let spokes = if hub {
                cap.region_pairs
                    .iter()
                    .filter_map(|p| {
                        if p.a == region.name {
                            Some(p.b.clone())
                        } else if p.b == region.name {
                            Some(p.a.clone())
                        } else {
                            None
                        }
                    })
                    .collect()
            } else {
                Vec::new()
            };
            RegionNode {
                name: region.name.clone(),
                gpus: region_gpus[r],
                hub,
                spokes,
                bag_planes: planes,
                bag_chassis: bag.len() as u64,
                buildings: f
                    .buildings()
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.region.idx() == r)
                    .map(|(bi, b)| BuildingNode {
                        name: b.name.clone(),
                        zones: f
                            .zones()
                            .iter()
                            .enumerate()
                            .filter(|(_, z)| z.building.map(|x| x.idx()) == Some(bi))
                            .filter(|(_, z)| z.kind != ZoneKind::Bag)
                            .map(|(zi, z)| ZoneNode {
                                name: z.name.clone(),
                                kind: z.kind.as_str().to_owned(),
                                gpus: zone_gpus[zi],
                                uplink_tbps: zone_up[zi],
                            })
                            .collect(),
                    })
                    .collect(),
            }
        })
        .collect();
    let tiers = cap
        .tiers
        .iter()
        .map(|t| TierRow {
            tier: t.name.clone(),
            scope: t.scope.clone(),
            down_tbps: t.down_gbps / 1000.0,
            up_tbps: t.up_gbps / 1000.0,
            ratio: t.oversubscription,
        })
        .collect();
    let inter_bag = cap
        .region_pairs
        .iter()
        .map(|p| (p.a.clone(), p.b.clone(), p.capacity_tbps))
        .collect();

    progress(1, steps, "failure sweep");
    let catalog = f.srg_catalog();
    // A class the spec does not have (no BAG plane in a one-building RoCE spec) would sweep
    // nothing: every group is swept instead, and the label says why.
    let (class, label) = match opts.sweep {
        Some(c) if catalog.of_class(c).is_empty() => (
            None,
            format!("single (every group: {} has no {})", f.name(), c.prefix()),
        ),
        Some(c) => (Some(c), format!("single:{}", c.prefix())),
        None => (None, "single".into()),
    };
    let fopts = Options {
        sweep: Sweep::Single(class),
        label,
        aggregation: None,
        mitigations: false,
        top: 10,
        plan: AsnPlan::Rfc7938,
        cfg: BgpConfig::default(),
        state: opts.state.clone(),
        pod_sites: false,
        keep: None,
    };
    let rep = analyze(f, &catalog, &fopts, &|_, _| {})?;
    let mut cdf: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    // Region pairs when there are several regions (their names have no dots), else site pairs.
    let regional: Vec<&String> = rep
        .summary
        .healthy_gbps
        .keys()
        .filter(|k| !k.contains('.'))
        .collect();
    let pairs: Vec<&String> = if regional.is_empty() {
        rep.summary.healthy_gbps.keys().collect()
    } else {
        regional
    };
    for pair in pairs {
        let mut v: Vec<f64> = rep
            .scenarios
            .iter()
            .map(|s| s.capacity_retained.get(pair).copied().unwrap_or(1.0))
            .collect();
        v.sort_by(f64::total_cmp);
        cdf.insert(pair.clone(), v);
    }
    let (planar_vs_spread, planar_vs_spread_pairs, planar_vs_spread_note) = match &opts.spec_text {
        Some((name, text)) => compare(name, text, class, &fopts.sweep)?,
        None => (None, None, None),
    };
    let worst_per_class = rep
        .summary
        .by_class
        .iter()
        .filter_map(|c| rep.scenarios.iter().find(|s| s.scenario == c.worst))
        .map(WorstScenario::of)
        .collect();
    let pair_tables = if opts.pair_tables {
        rep.summary
            .healthy_gbps
            .iter()
            .map(|(pair, &gbps)| {
                let mut hit: Vec<(String, f64)> = rep
                    .scenarios
                    .iter()
                    .filter_map(|s| {
                        let x = s.capacity_retained.get(pair).copied()?;
                        (x < 1.0 - 1e-9).then(|| (s.scenario.clone(), x))
                    })
                    .collect();
                // Stable: ties keep the sweep's worst-first order.
                hit.sort_by(|a, b| a.1.total_cmp(&b.1));
                let scenarios_losing = hit.len();
                hit.truncate(5);
                PairTable {
                    pair: pair.clone(),
                    healthy_tbps: gbps / 1000.0,
                    worst: hit,
                    scenarios_losing,
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let failures = FailureSection {
        planar_vs_spread,
        planar_vs_spread_pairs,
        planar_vs_spread_note,
        sweep: fopts.label.clone(),
        starting_state: rep.summary.starting_state.clone(),
        scenarios: rep.scenarios.len(),
        cdf,
        worst: rep
            .scenarios
            .iter()
            .take(10)
            .map(WorstScenario::of)
            .collect(),
        worst_per_class,
        pair_tables,
    };

    let mut start = Scenario::healthy(f);
    start.failed = start_down.clone();
    let params = NetParams::default();
    let gpus_avail = f.devices_with_role(Role::Gpu).count() as u32;
    let n = opts.gpus.min(gpus_avail);
    // Whole scale-up domains if the racks have them, else one GPU per domain.
    let (placed, params) =
        match placement::place(f, n, params.scale_up_gpus, Placement::Packed, &start_down) {
            Ok(p) => (p, params),
            Err(_) => {
                let one = NetParams {
                    scale_up_gpus: 1,
                    ..params
                };
                let p = placement::place(f, n, 1, Placement::Packed, &start_down)?;
                (p, one)
            }
        };
    let net = Net::new(f, &start, AsnPlan::Rfc7938, BgpConfig::default(), params);
    // The modes can only differ where a ring neighbour pair's path depends on the hash.
    let hashed = |g: &[aifabric_model::DeviceId]| {
        (0..g.len()).any(|i| !net.lb_free(g[i], g[(i + 1) % g.len()]))
    };
    let mut how = "packed";
    let mut collective_note = None;
    let placed = if hashed(&placed) {
        placed
    } else {
        let spread = (f.buildings().len() > 1)
            .then(|| {
                placement::place(f, n, params.scale_up_gpus, Placement::Spread, &start_down).ok()
            })
            .flatten()
            .filter(|p| hashed(p));
        match spread {
            Some(p) => {
                how = "spread over the buildings";
                collective_note = Some(format!(
                    "packed, these {n} GPUs stay inside one scale-up domain, rack switch or DSF \
                     zone, whose cells are sprayed whatever the mode, so the modes could not \
                     differ; the ring runs spread over the buildings, where they do"
                ));
                p
            }
            None => {
                collective_note = Some(format!(
                    "every ring neighbour pair of these {n} GPUs stays inside one scale-up \
                     domain, rack switch or DSF zone (whose cells are sprayed whatever the \
                     mode), packed or spread: the modes cannot differ on this fabric at {n} GPUs"
                ));
                placed
            }
        }
    };
    let routes = Forwarding::new(&net, placed.iter().copied())?;
    let mut busbw = Vec::new();
    for (i, &lb) in opts.lbs.iter().enumerate() {
        progress(2 + i as u64, steps, "collectives");
        let mut points = Vec::new();
        let mut hist = Vec::new();
        for &bytes in &opts.sizes {
            let c = Collective {
                op: Some(Op::AllReduce),
                algo: Algo::Ring,
                groups: vec![placed.clone()],
                bytes: bytes as f64,
                channels: 0,
                lb,
                seed: opts.seed,
                alpha_s: 5e-6,
            };
            let r = simulate(&net, &routes, &c)?;
            points.push((bytes, r.bus_bw_gbytes_per_s));
            hist = r.utilization_histogram;
        }
        busbw.push(BusBwSeries {
            lb: lb.name(),
            points,
            utilization_histogram: hist,
        });
    }
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    if collective_note.is_none()
        && busbw.len() > 1
        && busbw.iter().all(|b| {
            b.points
                .iter()
                .zip(&busbw[0].points)
                .all(|(x, y)| same(x.1, y.1))
        })
    {
        collective_note = Some(
            "the modes give the same bus bandwidth at every size: none of them moves this \
             ring's bottleneck"
                .to_owned(),
        );
    }
    Ok(ReportData {
        fabric: f.name().to_owned(),
        gpus: cap.gpus,
        switches: cap.switches,
        links: cap.links,
        power_mw: cap.power_mw,
        hierarchy,
        tiers,
        inter_bag,
        hub_pairs: cap.hub_pairs.clone(),
        pfc_headroom: cap.pfc_headroom.clone(),
        failures,
        collective: format!("ring all-reduce over {n} GPUs ({how}), seed {}", opts.seed),
        collective_note,
        busbw,
    })
}
