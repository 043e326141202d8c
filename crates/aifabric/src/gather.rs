//! What the HTML report shows that has to be run: its failure sweep, planar vs spread, and
//! the collective benchmark per load-balancing mode. The report crate receives the results
//! ([`aifabric_report::data::Inputs`]) and runs nothing itself.

use crate::failures::PreparedFailures;
use crate::{Error, Study};
use aifabric_dataplane::Forwarding;
use aifabric_dataplane::{Lb, Net, NetParams};
use aifabric_engine::sim::{simulate, Collective, SimError};
use aifabric_failures::compare::{planar_vs_spread, Comparison};
use aifabric_failures::sweep::Sweep;
use aifabric_failures::Options;
use aifabric_model::{DeviceId, DomainClass, Fabric, FailureMask, Role, Scenario, SrgClass};
use aifabric_report::data::{BusBwSeries, FailedSection, Inputs};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_workload::{placement, Algo, Op, Placement};

/// What to put in the report.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// Failure sweep: every group of this class alone (`None`: every group).
    pub sweep: Option<SrgClass>,
    /// GPUs of the collective benchmark: `None` for 1,024 or every GPU of a smaller fabric;
    /// a number beyond the fabric's live GPUs is a bad request.
    pub gpus: Option<u32>,
    /// Message sizes, bytes.
    pub sizes: Vec<u64>,
    /// Load-balancing modes compared.
    pub lbs: Vec<Lb>,
    /// Hash seed.
    pub seed: u64,
    /// The spec's name and text, to build it planar and spread and compare the two under
    /// the same sweep (skipped when absent or the spec has no inter-BAG links).
    pub spec_text: Option<(String, String)>,
    /// The maintenance state the failure sweep starts from (`None`: the study's scenario,
    /// see [`crate::failures::starting_state`]).
    pub state: Option<aifabric_failures::State>,
    /// One table per site pair (buildings, zones, AI zones) and region pair: the scenarios
    /// that cost it most.
    pub pair_tables: bool,
    /// The running jobs: a section with each one's step alone and together (under the
    /// study's scenario when it has one).
    pub cluster: Option<aifabric_workload::cluster::Cluster>,
    /// A maintenance plan against those jobs: its best schedule in the section.
    pub ops: Option<aifabric_spec::ops::Ops>,
    /// One training job whose step the report draws (`report --job`, the demo's).
    pub job: Option<ReportJob>,
}

/// A job the report draws: its step on the report's fabric state, beside the healthy
/// fabric's (when the state damages anything) or a scenario's.
#[derive(Clone, Debug)]
pub struct ReportJob {
    /// The job.
    pub it: aifabric_workload::job::Iteration,
    /// Its placement (`None`: the job file's).
    pub placement: Option<Placement>,
    /// A scenario to set beside it (its name, and the scenario on the report's fabric).
    pub scenario: Option<(String, Scenario)>,
    /// A load balancing to run it with under that scenario too (what helps there): a bar
    /// `under SCENARIO with LB`.
    pub mitigation: Option<Lb>,
    /// Runs of this job the caller already made, reused instead of run again: with this
    /// placement and the study's setup, on the study's state, then under `scenario`, then
    /// under it with `mitigation`; those missing are run here.
    pub ran: Vec<crate::JobReport>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            sweep: Some(SrgClass::Domain(DomainClass::BagPlane)),
            gpus: None,
            sizes: (0..6).map(|k| 1u64 << (20 + 2 * k)).collect(),
            lbs: vec![Lb::Ecmp, Lb::Eecmp(16), Lb::Spray(None)],
            seed: 1,
            spec_text: None,
            state: None,
            pair_tables: false,
            cluster: None,
            ops: None,
            job: None,
        }
    }
}

/// Most scenarios of the cross-pair comparison (a group of one side with each of the other,
/// per inter-BAG pair): a handful of BAG planes or chassis, a few hundred line cards at most.
const MAX_CROSS_PAIRS: usize = 400;

/// Planar vs spread: the sweep's comparison, the cross pairs', and why (not) compared.
type Compared = (Option<Comparison>, Option<Comparison>, Option<String>);

impl Study<'_> {
    /// Run what the report shows (`opts.state` already set): the failure sweep from the
    /// starting state, planar vs spread, the collective per mode. `progress` gets (step,
    /// steps, what); the report's last step, the capacity, is its own. A section whose run
    /// fails is left out and listed in [`Inputs::failed`] with its error, so the others
    /// are still reported; only a request refused before any work (`--gpus` beyond the
    /// fabric) is an error here.
    pub(crate) fn report_inputs(
        &self,
        opts: &ReportOptions,
        progress: &dyn Fn(u64, u64, &str),
    ) -> Result<Inputs, Error> {
        let f = self.fabric;
        benchmark_gpus(f, opts)?;
        let steps = 2 + opts.lbs.len() as u64;
        progress(0, steps, "failure sweep");
        let catalog = f.srg_catalog();
        // A class the spec does not have (no BAG plane in a one-building RoCE spec) would
        // sweep nothing: every group is swept instead, and the label says why.
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
        let sweep_label = fopts.label.clone();
        let sweep_ = fopts.sweep.clone();
        let mut failed = Vec::new();
        let sweep = kept(
            &mut failed,
            "failures",
            PreparedFailures::new(f, catalog, fopts).and_then(|p| p.run(0, 0, &|_, _| {})),
        );
        // Planar vs spread runs the same sweep on two builds: not when the sweep failed.
        let (planar_vs_spread, planar_vs_spread_pairs, planar_vs_spread_note) =
            match (&opts.spec_text, &sweep) {
                (Some((name, text)), Some(_)) => kept(
                    &mut failed,
                    "planar_vs_spread",
                    compare(name, text, class, &sweep_),
                )
                .unwrap_or((None, None, None)),
                (Some((name, text)), None) => {
                    // Listed with its own entry, so the page does not just leave it out.
                    if has_inter_bag(name, text) {
                        failed.push(FailedSection {
                            section: "planar_vs_spread".into(),
                            error: "not run: it repeats the failure sweep on the planar and \
                                    the spread build, and the failure sweep failed"
                                .into(),
                        });
                    }
                    (None, None, None)
                }
                _ => (None, None, None),
            };
        let (collective, collective_note, busbw) = match kept(
            &mut failed,
            "collectives",
            collectives(f, opts, &|i| progress(1 + i, steps, "collectives")),
        ) {
            Some((what, note, busbw)) => (Some(what), note, busbw),
            None => (None, None, Vec::new()),
        };
        let jobs = match &opts.cluster {
            Some(c) => kept(&mut failed, "jobs", self.jobs_section(c, opts.ops.as_ref())),
            None => None,
        };
        let job = match &opts.job {
            Some(j) => kept(&mut failed, "job", self.job_section(j)),
            None => None,
        };
        progress(steps - 1, steps, "capacity");
        Ok(Inputs {
            state: opts.state.clone(),
            sweep,
            sweep_label,
            pair_tables: opts.pair_tables,
            planar_vs_spread,
            planar_vs_spread_pairs,
            planar_vs_spread_note,
            collective,
            collective_note,
            busbw,
            jobs,
            job,
            failed,
        })
    }

    /// The report's job: its step as bars, the healthy fabric's first (when the study's
    /// state damages anything), then on the study's state, then under the scenario given.
    fn job_section(&self, j: &ReportJob) -> Result<aifabric_report::data::JobStep, Error> {
        use aifabric_report::data::{JobStep, StepBar};
        let bar = |label: String, r: &aifabric_engine::job::StepResult| {
            let mut parts = vec![
                ("compute".to_owned(), r.compute_s * 1e3),
                ("pipeline bubble".to_owned(), r.bubble_s * 1e3),
            ];
            parts.extend(
                r.comms
                    .iter()
                    .filter(|c| c.exposed_s > 0.0)
                    .map(|c| (format!("{} exposed", c.name), c.exposed_s * 1e3)),
            );
            // What the parts leave of the step (latencies composed outside the collectives).
            let rest = r.step_s * 1e3 - parts.iter().map(|p| p.1).sum::<f64>();
            if rest.abs() > 1e-6 * r.step_s * 1e3 {
                parts.push(("other".to_owned(), rest));
            }
            StepBar {
                label,
                step_ms: r.step_s * 1e3,
                mfu: r.mfu,
                parts,
                tiers: tier_uses(r),
                busiest: busiest_links(r),
            }
        };
        // Matched by position: as many as this job's runs, at most.
        let runs =
            1 + usize::from(j.scenario.is_some()) * (1 + usize::from(j.mitigation.is_some()));
        if j.ran.len() > runs {
            return Err(Error::bad_request(format!(
                "the report's job was given {} runs made already, and makes {runs}",
                j.ran.len()
            )));
        }
        let mut ran = j.ran.iter().cloned();
        let r = match ran.next() {
            Some(r) => r,
            None => self.job(&j.it, j.placement)?,
        };
        let here = if self.damaged() {
            aifabric_report::data::STATE_BAR.to_owned()
        } else {
            "healthy".to_owned()
        };
        // The healthy step first, when the state damages anything: the others against it.
        let mut bars: Vec<StepBar> = r
            .run
            .healthy
            .iter()
            .map(|h| bar("healthy".to_owned(), h))
            .collect();
        bars.push(bar(here, &r.run.result));
        if let Some((name, sc)) = &j.scenario {
            let s = match ran.next() {
                Some(s) => s,
                None => Study::new(self.fabric, sc.clone(), self.setup).job(&j.it, j.placement)?,
            };
            bars.push(bar(format!("under {name}"), &s.run.result));
            if let Some(lb) = j.mitigation {
                let setup = crate::Setup { lb, ..self.setup };
                let m = match ran.next() {
                    Some(m) => m,
                    None => Study::new(self.fabric, sc.clone(), setup).job(&j.it, j.placement)?,
                };
                bars.push(bar(
                    format!("under {name} with {}", lb.name()),
                    &m.run.result,
                ));
            }
        }
        Ok(JobStep {
            name: r.run.result.job.clone(),
            gpus: r.run.result.gpus,
            placement: r.placement.to_string(),
            bars,
        })
    }

    /// The report's running-jobs section: the cluster under the study's scenario, and the
    /// plan's best schedule (from the healthy fabric) when operations are given.
    fn jobs_section(
        &self,
        c: &aifabric_workload::cluster::Cluster,
        ops: Option<&aifabric_spec::ops::Ops>,
    ) -> Result<aifabric_report::data::JobsSection, Error> {
        use crate::cluster::Impact;
        use aifabric_report::data::{JobRow, JobsSection, PlanRow};
        let words = |i: &Impact| match i {
            Impact::Untouched { .. } => "untouched".to_owned(),
            Impact::Slowed { slowdown, .. } => format!("slowed {slowdown:.4}x"),
            Impact::Interrupted { lost_gpus: 0, .. } => "interrupted (no path)".to_owned(),
            Impact::Interrupted { lost_gpus, .. } => format!("interrupted ({lost_gpus} GPUs)"),
        };
        let r = self.cluster(c)?;
        let mut section = JobsSection {
            rows: r
                .jobs
                .iter()
                .map(|j| JobRow {
                    name: j.name.clone(),
                    gpus: j.gpus,
                    placed_by: j.placed_by.clone(),
                    alone_ms: j.alone_step_s * 1e3,
                    together_ms: j.together_step_s * 1e3,
                    mfu: j.mfu,
                    scenario: j.impact.as_ref().map(words),
                })
                .collect(),
            interference: r
                .interference
                .iter()
                .take(10)
                .map(|x| {
                    (
                        x.victim.clone(),
                        x.by.clone(),
                        x.extra_s * 1e3,
                        x.worst.clone(),
                    )
                })
                .collect(),
            plan: Vec::new(),
            plan_cost: None,
        };
        if let Some(ops) = ops {
            let healthy = Study::healthy(self.fabric, self.setup);
            let base = healthy.cluster_baseline(c)?;
            let p = healthy.plan(&base, ops)?;
            section.plan_cost = Some((p.best.lost_gpu_hours, p.naive.lost_gpu_hours));
            section.plan = p
                .best
                .steps
                .iter()
                .map(|s| PlanRow {
                    start_h: s.start_h,
                    end_h: s.end_h,
                    operations: s.operations.join(" + "),
                    lost_gpu_hours: s.lost_gpu_hours,
                    jobs: s
                        .jobs
                        .iter()
                        .map(|j| format!("{} {}", j.job, words(&j.impact)))
                        .collect::<Vec<_>>()
                        .join(", "),
                })
                .collect();
        }
        Ok(section)
    }
}

/// `r`'s value, or `None` with the failure of `section` added to `failed`.
fn kept<T>(failed: &mut Vec<FailedSection>, section: &str, r: Result<T, Error>) -> Option<T> {
    r.map_err(|e| {
        failed.push(FailedSection {
            section: section.to_owned(),
            error: e.to_string(),
        })
    })
    .ok()
}

/// Whether the spec has inter-BAG links to compare planar and spread on.
fn has_inter_bag(name: &str, text: &str) -> bool {
    use aifabric_spec::spec::InterBagTopology;
    aifabric_spec::build_inter_bag(name, text, InterBagTopology::Planar).is_ok()
}

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
) -> Result<Compared, Error> {
    use aifabric_spec::build_inter_bag;
    use aifabric_spec::spec::InterBagTopology;
    // No inter-BAG links (see `has_inter_bag`): nothing to compare.
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
        .map_err(Error::runtime_from)
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

/// The GPUs of the report's collective benchmark ([`ReportOptions::gpus`]), checked before
/// any work.
fn benchmark_gpus(f: &Fabric, opts: &ReportOptions) -> Result<u32, Error> {
    let have = f.devices_with_role(Role::Gpu).count() as u32;
    match opts.gpus {
        None => Ok(1024.min(have)),
        Some(n) if n > have => Err(Error::bad_request(format!(
            "--gpus {n}: {} has {have} GPUs; ask for at most {have}",
            f.name()
        ))),
        Some(n) => Ok(n),
    }
}

/// The ring all-reduce of the report per load-balancing mode, on the starting state: what
/// ran, why it is placed so (or why the modes cannot differ), the bus bandwidth per mode.
/// `progress(i)` before mode `i`.
fn collectives(
    f: &Fabric,
    opts: &ReportOptions,
    progress: &dyn Fn(u64),
) -> Result<(String, Option<String>, Vec<BusBwSeries>), Error> {
    let start_down = opts
        .state
        .as_ref()
        .map_or_else(|| FailureMask::none(f), |s| s.down.mask.clone());
    let mut start = Scenario::healthy(f);
    start.failed = start_down.clone();
    let params = NetParams::default();
    let n = benchmark_gpus(f, opts)?;
    // Whole scale-up domains if the racks have them, else one GPU per domain.
    let (placed, params) =
        match placement::place(f, n, params.scale_up_gpus, Placement::Packed, &start_down) {
            Ok(p) => (p, params),
            Err(_) => {
                let one = NetParams {
                    scale_up_gpus: 1,
                    ..params
                };
                let p = placement::place(f, n, 1, Placement::Packed, &start_down)
                    .map_err(Error::bad_request_from)?;
                (p, one)
            }
        };
    let net = Net::new(f, &start, AsnPlan::Rfc7938, BgpConfig::default(), params);
    // The modes can only differ where a ring neighbour pair's path depends on the hash.
    let hashed = |g: &[DeviceId]| (0..g.len()).any(|i| !net.lb_free(g[i], g[(i + 1) % g.len()]));
    let mut how = "packed";
    let mut note = None;
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
                note = Some(format!(
                    "packed, these {n} GPUs stay inside one scale-up domain, rack switch or DSF \
                     zone, whose cells are sprayed whatever the mode, so the modes could not \
                     differ; the ring runs spread over the buildings, where they do"
                ));
                p
            }
            None => {
                note = Some(format!(
                    "every ring neighbour pair of these {n} GPUs stays inside one scale-up \
                     domain, rack switch or DSF zone (whose cells are sprayed whatever the \
                     mode), packed or spread: the modes cannot differ on this fabric at {n} GPUs"
                ));
                placed
            }
        }
    };
    let routes = Forwarding::new(&net, placed.iter().copied()).map_err(SimError::from)?;
    let mut busbw = Vec::new();
    for (i, &lb) in opts.lbs.iter().enumerate() {
        progress(i as u64);
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
                proto: None,
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
    if note.is_none()
        && busbw.len() > 1
        && busbw.iter().all(|b| {
            b.points
                .iter()
                .zip(&busbw[0].points)
                .all(|(x, y)| same(x.1, y.1))
        })
    {
        note = Some(
            "the modes give the same bus bandwidth at every size: none of them moves this \
             ring's bottleneck"
                .to_owned(),
        );
    }
    Ok((
        format!("ring all-reduce over {n} GPUs ({how}), seed {}", opts.seed),
        note,
        busbw,
    ))
}

/// Each tier's utilization during each collective of a step, in the step's order.
fn tier_uses(r: &aifabric_engine::job::StepResult) -> Vec<aifabric_report::data::TierUse> {
    r.comms
        .iter()
        .flat_map(|c| {
            c.detail
                .tiers
                .iter()
                .map(|t| aifabric_report::data::TierUse {
                    tier: t.tier.clone(),
                    collective: c.name.clone(),
                    resources: t.resources,
                    mean: t.mean,
                    p99: t.p99,
                    max: t.max,
                })
        })
        .collect()
}

/// The busiest fabric links of a step (a server's scale-up ports are not the fabric's):
/// each at its highest utilization over the collectives that expose time (those that
/// lengthen the step), busiest first, then by the collective's exposed time and the link's
/// name; at most [`aifabric_report::data::BUSIEST_LINKS`].
fn busiest_links(r: &aifabric_engine::job::StepResult) -> Vec<aifabric_report::data::BusyLink> {
    use aifabric_report::data::{BusyLink, BUSIEST_LINKS};
    let mut best: std::collections::BTreeMap<&str, (f64, f64, &str, &str)> = Default::default();
    for c in r.comms.iter().filter(|c| c.exposed_s > 0.0) {
        for b in c
            .detail
            .bottlenecks
            .iter()
            .filter(|b| b.tier != aifabric_dataplane::SCALE_UP_TIER)
        {
            let e = best.entry(b.resource.as_str()).or_insert((
                b.utilization,
                c.exposed_s,
                &b.tier,
                &c.name,
            ));
            if (b.utilization, c.exposed_s) > (e.0, e.1) {
                *e = (b.utilization, c.exposed_s, &b.tier, &c.name);
            }
        }
    }
    let mut v: Vec<_> = best.into_iter().collect();
    v.sort_by(|a, b| {
        (b.1 .0, b.1 .1)
            .partial_cmp(&(a.1 .0, a.1 .1))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(b.0))
    });
    v.into_iter()
        .take(BUSIEST_LINKS)
        .map(|(resource, (utilization, _, tier, collective))| BusyLink {
            resource: resource.to_owned(),
            tier: tier.to_owned(),
            collective: collective.to_owned(),
            utilization,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use aifabric_fixtures::specs;

    #[test]
    fn inter_bag_links_are_found_only_where_the_spec_has_them() {
        // One region: nothing to wire planar or spread. Two regions joined planar: there is.
        assert!(!super::has_inter_bag("tz.yaml", specs::TWO_ZONES_UNDER_BAG));
        assert!(super::has_inter_bag(
            "two.yaml",
            specs::TWO_REGIONS_NSF_4_PLANES_PLANAR
        ));
    }
}
