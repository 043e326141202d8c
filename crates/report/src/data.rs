//! The data of the HTML report, gathered from the other crates (`report.json` is this,
//! serialized): fabric summary and hierarchy, oversubscription per tier, inter-BAG capacity,
//! a failure sweep, collective bus bandwidth per load-balancing mode, link utilization.

use aifabric_capacity::capacity_report;
use aifabric_engine::sim::{simulate, Collective, RouteCache, SimError};
use aifabric_engine::{Lb, Net, NetParams};
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
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            sweep: Some(SrgClass::Domain(DomainClass::BagPlane)),
            gpus: 1024,
            sizes: (0..6).map(|k| 1u64 << (20 + 2 * k)).collect(),
            lbs: vec![Lb::Ecmp, Lb::Eecmp(16), Lb::Spray],
            seed: 1,
            spec_text: None,
            state: None,
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
    /// BAG planes.
    pub bag_planes: u32,
    /// BAG chassis.
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
    /// Worst scenarios, worst first: (scenario, smallest capacity retained).
    pub worst: Vec<(String, f64)>,
    /// The same sweep on the spec built planar and built spread (from the healthy fabric).
    pub planar_vs_spread: Option<aifabric_failures::compare::Comparison>,
    /// Why planar and spread were not compared, when the spec has inter-BAG links.
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
    /// Failure sweep.
    pub failures: FailureSection,
    /// Collective: what ran.
    pub collective: String,
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

/// Planar vs spread under `sweep`, if the spec has inter-BAG links; or why they are not
/// compared (the spec cannot be wired spread).
fn compare(
    name: &str,
    text: &str,
    sweep: &Sweep,
) -> Result<
    (
        Option<aifabric_failures::compare::Comparison>,
        Option<String>,
    ),
    ReportError,
> {
    use aifabric_failures::compare::planar_vs_spread;
    use aifabric_spec::build_inter_bag;
    use aifabric_spec::spec::InterBagTopology;
    let Ok(planar) = build_inter_bag(name, text, InterBagTopology::Planar) else {
        return Ok((None, None));
    };
    let spread = match build_inter_bag(name, text, InterBagTopology::Spread) {
        Ok(s) => s,
        Err(e) => {
            let why = e.to_string();
            let first = why.lines().next().unwrap_or_default();
            return Ok((
                None,
                Some(format!("the spec cannot be wired spread ({first})")),
            ));
        }
    };
    planar_vs_spread(
        &planar,
        &spread,
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        sweep,
        5,
        &|_, _| {},
    )
    .map(|c| (Some(c), None))
    .map_err(ReportError::from)
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
    let hierarchy = f
        .regions()
        .iter()
        .enumerate()
        .map(|(r, region)| {
            let bag: Vec<_> = f
                .devices()
                .iter()
                .filter(|d| d.role == Role::Bag && f.zones()[d.zone.idx()].region.idx() == r)
                .collect();
            let planes = bag
                .iter()
                .filter_map(|d| d.plane())
                .map(|p| u32::from(p) + 1)
                .max()
                .unwrap_or(0);
            RegionNode {
                name: region.name.clone(),
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
    let fopts = Options {
        sweep: Sweep::Single(opts.sweep),
        label: match opts.sweep {
            Some(c) => format!("single:{}", c.prefix()),
            None => "single".into(),
        },
        aggregation: None,
        mitigations: false,
        top: 10,
        plan: AsnPlan::Rfc7938,
        cfg: BgpConfig::default(),
        state: opts.state.clone(),
    };
    let catalog = f.srg_catalog();
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
    let (planar_vs_spread, planar_vs_spread_note) = match &opts.spec_text {
        Some((name, text)) => compare(name, text, &fopts.sweep)?,
        None => (None, None),
    };
    let failures = FailureSection {
        planar_vs_spread,
        planar_vs_spread_note,
        sweep: fopts.label.clone(),
        starting_state: rep.summary.starting_state.clone(),
        scenarios: rep.scenarios.len(),
        cdf,
        worst: rep
            .scenarios
            .iter()
            .take(10)
            .map(|s| (s.scenario.clone(), s.min_capacity_retained))
            .collect(),
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
    let routes = RouteCache::new(&net, placed.iter().copied())?;
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
    Ok(ReportData {
        fabric: f.name().to_owned(),
        gpus: cap.gpus,
        switches: cap.switches,
        links: cap.links,
        power_mw: cap.power_mw,
        hierarchy,
        tiers,
        inter_bag,
        failures,
        collective: format!("ring all-reduce over {n} GPUs (packed), seed {}", opts.seed),
        busbw,
    })
}
