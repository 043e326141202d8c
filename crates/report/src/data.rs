//! The data of the HTML report (`report.json` is this, serialized): fabric summary and
//! hierarchy, oversubscription per tier, inter-BAG capacity (from the model), and what the
//! `aifabric` facade ran for it and hands over as [`Inputs`] (a failure sweep, planar vs
//! spread, collective bus bandwidth per load-balancing mode). Nothing here runs a
//! simulation or reads a spec.

use aifabric_capacity::capacity_report;
use aifabric_failures::compare::Comparison;
use aifabric_failures::report::FailureReport;
use aifabric_model::{Fabric, FailureMask, Role, ZoneKind};
use serde::Serialize;
use std::collections::BTreeMap;

/// A section of the report that could not be made: the report is written with the others,
/// and this one shown as failed with its error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailedSection {
    /// Which section: `failures`, `planar_vs_spread`, `collectives` or `jobs`.
    pub section: String,
    /// Why it failed (the error its run gave).
    pub error: String,
}

/// What the report shows that had to be run, run by the caller (the `aifabric` facade's
/// `Study::report`). A section whose run failed is `None` (empty for the bus bandwidth) and
/// listed in `failed`.
#[derive(Clone, Debug)]
pub struct Inputs {
    /// The maintenance state every section describes (`None`: the healthy fabric).
    pub state: Option<aifabric_failures::State>,
    /// The failure sweep from that state (`None`: it failed).
    pub sweep: Option<FailureReport>,
    /// How the sweep is named (`single:plane`, or why every group was swept instead).
    pub sweep_label: String,
    /// One table per site pair and region pair.
    pub pair_tables: bool,
    /// The same sweep on the spec built planar and built spread.
    pub planar_vs_spread: Option<Comparison>,
    /// The same class failed in pairs across the inter-BAG pairs, when single failures
    /// cannot tell the wirings apart.
    pub planar_vs_spread_pairs: Option<Comparison>,
    /// Why planar and spread were not compared, or why they give the same figures.
    pub planar_vs_spread_note: Option<String>,
    /// The collective benchmark: what ran (`None`: it failed).
    pub collective: Option<String>,
    /// Why it is placed as it is, or why the modes cannot differ on it.
    pub collective_note: Option<String>,
    /// Its bus bandwidth per mode.
    pub busbw: Vec<BusBwSeries>,
    /// The running jobs, when a cluster was given.
    pub jobs: Option<JobsSection>,
    /// One job's step, when asked.
    pub job: Option<JobStep>,
    /// The sections whose run failed, in the report's order, each with its error.
    pub failed: Vec<FailedSection>,
}

/// One training job's step as bars (`report --job`, the demo's job): on the report's fabric
/// state, and beside it the healthy fabric's or a scenario's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobStep {
    /// The job.
    pub name: String,
    /// Its GPUs.
    pub gpus: u32,
    /// How it was placed.
    pub placement: String,
    /// One bar per run: the healthy fabric's first when the report's state damages
    /// anything, then the report's state, then a scenario's.
    pub bars: Vec<StepBar>,
}

/// The label of the bar of a job's step on the report's own fabric state when that state
/// damages anything (the healthy fabric's bar is `healthy`).
pub const STATE_BAR: &str = "as the report's state";

/// One run of a job's step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepBar {
    /// Where it ran (`as the report's state`, `healthy`, a scenario).
    pub label: String,
    /// The step, ms.
    pub step_ms: f64,
    /// Model FLOPs utilization, 0-1.
    pub mfu: f64,
    /// What the step is made of, ms: compute, the pipeline bubble, then each collective's
    /// exposed time; they add up to the step.
    pub parts: Vec<(String, f64)>,
    /// How busy each tier is during each collective (the heat map), collectives in the
    /// step's order, tiers by name within each.
    pub tiers: Vec<TierUse>,
    /// The busiest links over the step's collectives, busiest first (at most
    /// [`BUSIEST_LINKS`]).
    pub busiest: Vec<BusyLink>,
}

/// Links a job's bar lists as its busiest.
pub const BUSIEST_LINKS: usize = 5;

/// One tier's utilization during one collective of a job's step (each resource's share of
/// its capacity used, time-averaged over the collective's transfer).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierUse {
    /// Tier, e.g. `rtsw-ftsw`.
    pub tier: String,
    /// The collective, e.g. `dp all_gather`.
    pub collective: String,
    /// Resources of the tier it used.
    pub resources: u64,
    /// Mean over them, 0-1.
    pub mean: f64,
    /// 99th percentile, 0-1.
    pub p99: f64,
    /// Highest, 0-1.
    pub max: f64,
}

/// One busy link of a job's step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BusyLink {
    /// The resource (a link's direction, a scale-up port).
    pub resource: String,
    /// Its tier.
    pub tier: String,
    /// The collective that loads it most.
    pub collective: String,
    /// Utilization during that collective, 0-1.
    pub utilization: f64,
}

/// The running jobs: each one's step alone and together, what the scenario or a maintenance
/// plan does to it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct JobsSection {
    /// One row per job, in the cluster file's order.
    pub rows: Vec<JobRow>,
    /// Who slows whom: (victim, by, extra ms, where it takes the most).
    pub interference: Vec<(String, String, f64, String)>,
    /// The maintenance plan's best schedule, when operations were given.
    pub plan: Vec<PlanRow>,
    /// The plan's cost, GPU-hours: (best, naive).
    pub plan_cost: Option<(f64, f64)>,
}

/// One job of the report's jobs section.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobRow {
    /// Name.
    pub name: String,
    /// GPUs.
    pub gpus: u32,
    /// How it was placed.
    pub placed_by: String,
    /// Its step alone, ms.
    pub alone_ms: f64,
    /// Its step with the other jobs, ms.
    pub together_ms: f64,
    /// Model FLOPs utilization together.
    pub mfu: f64,
    /// Under the study's scenario: `untouched`, `slowed 1.02x`, `interrupted (16 GPUs)`.
    pub scenario: Option<String>,
}

/// One batch of a maintenance plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanRow {
    /// Start and end, hours.
    pub start_h: f64,
    /// End, hours.
    pub end_h: f64,
    /// The operations run together.
    pub operations: String,
    /// GPU-hours the jobs lose.
    pub lost_gpu_hours: f64,
    /// The jobs it hurts, in words.
    pub jobs: String,
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
    /// Capacity of its live links into each of its region's BAG planes in the report's
    /// state, Tb/s per direction, by plane (empty without BAG planes).
    pub bag_plane_tbps: Vec<f64>,
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
    /// Failure sweep (`null` when it failed: see `failed_sections`).
    pub failures: Option<FailureSection>,
    /// Collective: what ran (`null` when it failed: see `failed_sections`).
    pub collective: Option<String>,
    /// Why the collective is placed as it is, or why the modes cannot differ on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collective_note: Option<String>,
    /// Bus bandwidth per mode.
    pub busbw: Vec<BusBwSeries>,
    /// The running jobs, when a cluster was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<JobsSection>,
    /// One job's step, when asked (`report --job`, the demo).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<JobStep>,
    /// The sections that could not be made, each with its error (absent when every section
    /// was made); the others are complete.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_sections: Vec<FailedSection>,
}

impl ReportData {
    /// Whether every section was made.
    pub fn is_complete(&self) -> bool {
        self.failed_sections.is_empty()
    }
}

/// The report's data: the model's figures under the starting state, and `inputs`.
pub fn build(f: &Fabric, inputs: Inputs) -> ReportData {
    let Inputs {
        state,
        sweep,
        sweep_label,
        pair_tables,
        planar_vs_spread,
        planar_vs_spread_pairs,
        planar_vs_spread_note,
        collective,
        collective_note,
        busbw,
        jobs,
        job,
        failed,
    } = inputs;
    // Every section describes the starting state: the healthy fabric, or the maintenance state.
    let start_down = state
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
    // Each building's live capacity into each BAG plane (plane numbers are per region).
    let mut building_plane = vec![Vec::<f64>::new(); f.buildings().len()];
    for (li, l) in f.links().iter().enumerate() {
        let (a, b) = (f.device(l.a), f.device(l.b));
        let (Some(bi), Some(p)) = (f.zones()[a.zone.idx()].building, b.plane()) else {
            continue;
        };
        if !matches!(b.role, Role::Bag | Role::Hub) || a.zone == b.zone {
            continue;
        }
        if !f.link_up(aifabric_model::LinkId::from_idx(li), &start_down) {
            continue;
        }
        let v = &mut building_plane[bi.idx()];
        if v.len() <= usize::from(p) {
            v.resize(usize::from(p) + 1, 0.0);
        }
        v[usize::from(p)] += f64::from(l.capacity_mbps) / 1e6;
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
                        bag_plane_tbps: {
                            let mut v = building_plane[bi].clone();
                            v.resize(planes as usize, 0.0);
                            v
                        },
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

    let failures = sweep.as_ref().map(|rep| {
        failure_section(
            rep,
            pair_tables,
            sweep_label,
            planar_vs_spread,
            planar_vs_spread_pairs,
            planar_vs_spread_note,
        )
    });

    ReportData {
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
        collective,
        collective_note,
        busbw,
        jobs,
        job,
        failed_sections: failed,
    }
}

/// The failure sweep's section of the report from its results.
fn failure_section(
    rep: &FailureReport,
    pair_tables: bool,
    sweep: String,
    planar_vs_spread: Option<Comparison>,
    planar_vs_spread_pairs: Option<Comparison>,
    planar_vs_spread_note: Option<String>,
) -> FailureSection {
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
    let worst_per_class = rep
        .summary
        .by_class
        .iter()
        .filter_map(|c| rep.scenarios.iter().find(|s| s.scenario == c.worst))
        .map(WorstScenario::of)
        .collect();
    let pair_tables = if pair_tables {
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
    FailureSection {
        planar_vs_spread,
        planar_vs_spread_pairs,
        planar_vs_spread_note,
        sweep,
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
    }
}
