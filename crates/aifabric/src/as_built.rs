//! The network as built: a NetBox inventory (or LLDP's view) against the plan
//! ([`aifabric_inventory`]), and what the drift does to routing ([`as_found`](crate::as_built::as_found)).

pub use aifabric_inventory::*;

/// The drift from the plan `f` of the network as found: the NetBox export in `netbox`
/// (`devices.csv`, `interfaces.csv`, `cables.csv`, or the API's `devices.json`,
/// `interfaces.json`, `cables.json`) and, when given, the cables LLDP sees (`lldp`:
/// neighbour tables, `lldpctl -f json` per device or CSV, [`lldp::read`], which then
/// replace NetBox's cables): cables missing, extra, miswired, at the wrong speed or
/// address, devices missing or unexpected, by site, hall and switch, with the capacity
/// lost. A bad file is a bad request
/// naming its file, line and column.
pub fn drift_as_found(
    f: &aifabric_model::Fabric,
    netbox: Option<&std::path::Path>,
    lldp: &[&std::path::Path],
) -> Result<DriftReport, crate::Error> {
    drift_as_found_with_progress(f, netbox, lldp, &|_, _, _| {})
}

/// [`drift_as_found`], calling `progress(stage, done, total)` as it goes: `reading` (bytes
/// read of the files'), then `comparing` (with the plan; no count).
pub fn drift_as_found_with_progress(
    f: &aifabric_model::Fabric,
    netbox: Option<&std::path::Path>,
    lldp: &[&std::path::Path],
    progress: &dyn Fn(&str, u64, u64),
) -> Result<DriftReport, crate::Error> {
    let bad = crate::Error::bad_request_from;
    let reading = |done, total| progress("reading", done, total);
    let mut meter = Meter::new(bytes_to_read(netbox, lldp), &reading);
    let mut inv = match netbox {
        Some(dir) => read_dir_metered(dir, &mut meter).map_err(bad)?,
        None if lldp.is_empty() => {
            return Err(crate::Error::bad_request(
                "give the network as found: --netbox DIR, --lldp FILE..., or both".into(),
            ))
        }
        None => Inventory::default(),
    };
    if !lldp.is_empty() {
        let cables = lldp::read_metered(lldp, &mut meter).map_err(bad)?;
        let names: Vec<String> = lldp.iter().map(|p| p.display().to_string()).collect();
        inv = inv.with_cables(cables, &format!("LLDP {}", names.join(", ")));
    }
    progress("comparing", 0, 0);
    // Addresses are judged where the fabric fits the addressing plan.
    let plan = aifabric_routing::addressing::AddressPlan::new(f).ok();
    Ok(drift_with_addresses(
        f,
        &inv,
        aifabric_report::export::interface_name,
        |f, l, d| {
            plan.as_ref()
                .and_then(|p| aifabric_report::export::interface_address(f, p, l, d))
        },
    ))
}

/// The plan `f` and `scenario` with the network as found (the NetBox export in `netbox`
/// and the LLDP tables in `lldp`, as [`drift_as_found`] reads them) laid over them: every
/// link cabled as planned at the speed it runs at ([`DriftReport::as_built_fabric`]), and
/// every planned link missing or miswired failed ([`DriftReport::as_built_mask`]), so that
/// every question (capacity, routes, blackholes, failures, jobs, traffic) is answered on
/// what is there. Extra cables are not added (the plan has no link for them). Returns the
/// drift (from the plan) too.
pub fn lay_over(
    f: &mut aifabric_model::Fabric,
    netbox: Option<&std::path::Path>,
    lldp: &[&std::path::Path],
    scenario: &mut aifabric_model::Scenario,
) -> Result<DriftReport, crate::Error> {
    let r = drift_as_found(f, netbox, lldp)?;
    scenario.failed.union_with(&r.as_built_mask(f));
    r.as_built_fabric(f);
    Ok(r)
}

/// The network as built as a scenario file, what `--scenario` takes (`aifabric import`
/// writes it): the drift's missing and miswired planned links under `fail`, the links at
/// another speed under `link_speeds`, each by its link selector
/// ([`Fabric::link_selector`](aifabric_model::Fabric::link_selector)), with comments that say
/// where it came from. Every string is written as a double-quoted scalar (JSON's escapes,
/// which YAML reads the same).
pub fn scenario_yaml(f: &aifabric_model::Fabric, drift: &DriftReport) -> String {
    use std::fmt::Write;
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let comment = |s: &str| s.replace(|c: char| c.is_control(), " ");
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# The network as built: {} as found in {}.\n# {} planned link(s) missing or \
         miswired (failed), {} at another speed. Every command takes it as --scenario FILE.",
        comment(&drift.plan),
        comment(&drift.inventory),
        drift.lost_links.len(),
        drift.link_speeds.len(),
    );
    o.push_str(if drift.lost_links.is_empty() {
        "fail: []\n"
    } else {
        "fail:\n"
    });
    for &l in &drift.lost_links {
        let _ = writeln!(o, "  - {}", quoted(&f.link_selector(l)));
    }
    o.push_str(if drift.link_speeds.is_empty() {
        "link_speeds: []\n"
    } else {
        "link_speeds:\n"
    });
    for &(l, mbps) in &drift.link_speeds {
        let _ = writeln!(
            o,
            "  - {{link: {}, gbps: {}}}",
            quoted(&f.link_selector(l)),
            f64::from(mbps) / 1e3
        );
    }
    o
}

/// The plan with `drift`'s missing and miswired links failed: the network as built.
fn as_built(f: &aifabric_model::Fabric, drift: &DriftReport) -> aifabric_model::Scenario {
    let mut scenario = aifabric_model::Scenario::healthy(f);
    scenario.failed.union_with(&drift.as_built_mask(f));
    scenario
}

/// The drift, and what it does to routing.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct AsFound {
    /// The drift from the plan.
    #[serde(flatten)]
    pub drift: DriftReport,
    /// Routing on the network as built, when planned links are missing or miswired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routing: Option<AsBuiltRouting>,
    /// Each tier of each zone whose capacity the network as built changes (links missing,
    /// miswired or at another speed): its capacity and oversubscription planned and as
    /// built, in the capacity report's order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub oversubscription: Vec<TierAsBuilt>,
    /// What the drift costs the jobs of a cluster file ([`AsFound::cost_to_jobs`]), each
    /// against the plan, when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<Vec<JobCost>>,
}

/// A tier of a zone (the capacity report's) as planned and as built.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TierAsBuilt {
    /// The tier (`rtsw`, `l2_to_bag`, ...).
    pub tier: String,
    /// Its zone.
    pub scope: String,
    /// Bandwidth toward the GPUs, planned, Gb/s per direction.
    pub planned_down_gbps: f64,
    /// As built.
    pub down_gbps: f64,
    /// Bandwidth away from the GPUs, planned, Gb/s per direction.
    pub planned_up_gbps: f64,
    /// As built.
    pub up_gbps: f64,
    /// Down over up, planned (`null`: no up capacity).
    pub planned_oversubscription: Option<f64>,
    /// As built.
    pub oversubscription: Option<f64>,
}

/// The plan `f` at the speeds the drift found, when it found any.
fn at_found_speeds<'f>(
    f: &'f aifabric_model::Fabric,
    drift: &DriftReport,
) -> std::borrow::Cow<'f, aifabric_model::Fabric> {
    if drift.link_speeds.is_empty() {
        std::borrow::Cow::Borrowed(f)
    } else {
        let mut b = f.clone();
        drift.as_built_fabric(&mut b);
        std::borrow::Cow::Owned(b)
    }
}

/// The tiers whose capacity the drift changes: the capacity report of the plan against
/// that of the network as built (the plan at the speeds found, its lost links failed).
fn tiers_as_built(f: &aifabric_model::Fabric, drift: &DriftReport) -> Vec<TierAsBuilt> {
    let built = at_found_speeds(f, drift);
    let plan = aifabric_capacity::capacity_report(f, &aifabric_model::FailureMask::none(f));
    let found = aifabric_capacity::capacity_report(&built, &drift.as_built_mask(&built));
    // Each planned tier against the same tier and scope as built.
    plan.tiers
        .into_iter()
        .filter_map(|p| {
            let b = found
                .tiers
                .iter()
                .find(|b| b.name == p.name && b.scope == p.scope)?
                .clone();
            (p.up_gbps != b.up_gbps || p.down_gbps != b.down_gbps).then_some((p, b))
        })
        .map(|(p, b)| TierAsBuilt {
            tier: p.name,
            scope: p.scope,
            planned_down_gbps: p.down_gbps,
            down_gbps: b.down_gbps,
            planned_up_gbps: p.up_gbps,
            up_gbps: b.up_gbps,
            planned_oversubscription: p.oversubscription,
            oversubscription: b.oversubscription,
        })
        .collect()
}

/// What the network as built does to one job, against the plan.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct JobCost {
    /// The job.
    pub name: String,
    /// Its GPUs.
    pub gpus: u32,
    /// Its step on the plan, with the other jobs, seconds.
    pub planned_step_s: f64,
    /// Its step on the network as built, with the jobs that keep running (none when it
    /// cannot run), seconds.
    pub as_built_step_s: Option<f64>,
    /// Untouched, slowed (and how much) or interrupted, and why.
    pub impact: crate::cluster::Impact,
}

impl AsFound {
    /// The jobs of `cluster` on the plan and on the network as built (the drift's missing
    /// and miswired links failed), together on the flow engine under `setup`, as `cluster`
    /// runs them: each job's step on both and what the drift does to it. Sets
    /// [`AsFound::jobs`].
    pub fn cost_to_jobs(
        &mut self,
        f: &aifabric_model::Fabric,
        cluster: &aifabric_workload::cluster::Cluster,
        setup: crate::Setup,
    ) -> Result<(), crate::Error> {
        use crate::cluster::Impact;
        // Links at another speed make another fabric: the plan's steps come from the plan,
        // the as-built ones from the plan at the speeds found, failed where links are out.
        let speeds = self.drift.link_speeds.len();
        let built = at_found_speeds(f, &self.drift);
        let planned = if speeds == 0 {
            None
        } else {
            Some(crate::Study::healthy(f, setup).cluster(cluster)?)
        };
        let study = crate::Study::new(&built, as_built(&built, &self.drift), setup);
        let report = study.cluster(cluster)?;
        let untouched = || Impact::Untouched {
            why: "the network as built is the plan".into(),
        };
        let mut jobs = Vec::with_capacity(report.jobs.len());
        for (k, j) in report.jobs.into_iter().enumerate() {
            let as_built_step_s = if study.damaged() {
                j.scenario_step_s
            } else {
                Some(j.together_step_s)
            };
            let planned_step_s = planned
                .as_ref()
                .map_or(j.together_step_s, |p| p.jobs[k].together_step_s);
            let impact = match (&planned, j.impact) {
                (None, impact) => impact.unwrap_or_else(untouched),
                (Some(_), Some(i @ Impact::Interrupted { .. })) => i,
                (Some(_), impact) => {
                    let slower = format!("{speeds} planned links run at another speed");
                    let why = match impact {
                        Some(Impact::Slowed { why, .. }) => format!("{why}; {slower}"),
                        _ => slower,
                    };
                    match as_built_step_s {
                        Some(s) if (s - planned_step_s).abs() > 1e-9 * planned_step_s => {
                            Impact::Slowed {
                                slowdown: s / planned_step_s,
                                why,
                            }
                        }
                        _ => Impact::Untouched {
                            why: format!("its step is the plan's: {why}, none that sets it"),
                        },
                    }
                }
            };
            jobs.push(JobCost {
                as_built_step_s,
                impact,
                name: j.name,
                gpus: j.gpus,
                planned_step_s,
            });
        }
        self.jobs = Some(jobs);
        Ok(())
    }
}

/// Routing on the network as built: the plan with the drift's missing and miswired links
/// failed, under `blackholes`'s defaults (zone aggregates, unconditional aggregation).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct AsBuiltRouting {
    /// Live racks no advertising border reaches (an outage).
    pub unreachable_live_racks: u64,
    /// Switches advertising an aggregate they cannot deliver all of.
    pub blackholing_switches: u64,
    /// Rack prefixes some switch blackholes, sorted.
    pub blackholed_racks: Vec<String>,
    /// The whole blackhole report.
    pub blackholes: aifabric_routing::aggregation::BlackholeReport,
}

/// [`drift_as_found`], and when planned links are missing or miswired, routing on the
/// network as built ([`AsBuiltRouting`]): which racks it cuts off and which switches
/// blackhole them.
pub fn as_found(
    f: &aifabric_model::Fabric,
    netbox: Option<&std::path::Path>,
    lldp: &[&std::path::Path],
) -> Result<AsFound, crate::Error> {
    as_found_with_progress(f, netbox, lldp, &|_, _, _| {})
}

/// [`as_found`], calling `progress(stage, done, total)` as it goes: the stages of
/// [`drift_as_found_with_progress`], then `routing` (on the network as built; no count).
pub fn as_found_with_progress(
    f: &aifabric_model::Fabric,
    netbox: Option<&std::path::Path>,
    lldp: &[&std::path::Path],
    progress: &dyn Fn(&str, u64, u64),
) -> Result<AsFound, crate::Error> {
    let drift = drift_as_found_with_progress(f, netbox, lldp, progress)?;
    let routing = if drift.lost_links.is_empty() {
        None
    } else {
        progress("routing", 0, 0);
        let study = crate::Study::new(f, as_built(f, &drift), crate::Setup::default());
        let r = study.blackholes(
            aifabric_routing::aggregation::Aggregation::Unconditional,
            aifabric_routing::aggregation::AggregationTier::Zone,
        )?;
        let mut racks: Vec<String> = r
            .blackholes
            .iter()
            .flat_map(|b| b.prefixes.iter().cloned())
            .collect();
        racks.sort_unstable();
        racks.dedup();
        let mut switches: Vec<&str> = r.blackholes.iter().map(|b| b.device.as_str()).collect();
        switches.sort_unstable();
        switches.dedup();
        Some(AsBuiltRouting {
            unreachable_live_racks: r
                .scopes
                .iter()
                .map(|z| z.unreachable_live_racks as u64)
                .sum(),
            blackholing_switches: switches.len() as u64,
            blackholed_racks: racks,
            blackholes: r,
        })
    };
    let oversubscription = if drift.clean() {
        Vec::new()
    } else {
        progress("capacity", 0, 0);
        tiers_as_built(f, &drift)
    };
    Ok(AsFound {
        drift,
        routing,
        oversubscription,
        jobs: None,
    })
}
