//! Many jobs on one fabric ([`Study::cluster`]): each job's step alone and with the others,
//! who slows whom, and under the study's scenario each job's slowdown, interruption or
//! nothing, with why.

use crate::report::{About, MemoryFit, Note};
use crate::{Error, Study, SCHEMA_VERSION};
use aifabric_dataplane::{Net, NetParams};
use aifabric_engine::cluster::{self as engine, ClusterRun, JobIn, SharedResource};
use aifabric_engine::job::{JobOptions, StepResult};
use aifabric_model::{DeviceId, Scenario};
use aifabric_workload::cluster::Cluster;
use serde::Serialize;

/// What a scenario does to one job.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Impact {
    /// Its step is what it was on the healthy fabric.
    Untouched {
        /// Why.
        why: String,
    },
    /// It keeps running, at another speed.
    Slowed {
        /// The step under the scenario over the healthy one (below 1: faster, when an
        /// interrupted job's traffic is gone).
        slowdown: f64,
        /// Why.
        why: String,
    },
    /// It stops: some of its GPUs are failed or cut off, or its traffic has no path.
    Interrupted {
        /// GPUs lost.
        lost_gpus: u32,
        /// Why, naming the first GPUs lost.
        why: String,
    },
}

/// One job of the cluster.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterJobRow {
    /// Name.
    pub name: String,
    /// GPUs.
    pub gpus: u32,
    /// How it was placed.
    pub placed_by: String,
    /// Its step with the fabric to itself (healthy), seconds.
    pub alone_step_s: f64,
    /// Its step with the other jobs (healthy), seconds.
    pub together_step_s: f64,
    /// Together over alone.
    pub interference_slowdown: f64,
    /// Model FLOPs utilization together (healthy).
    pub mfu: f64,
    /// Under a damaging scenario: what it does to this job.
    pub impact: Option<Impact>,
    /// Its step under the scenario, with the jobs that keep running (when it runs).
    pub scenario_step_s: Option<f64>,
    /// The step together (under the scenario when there is one and it runs), in detail.
    pub step: StepResult,
}

/// Who slows whom, by name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InterferenceRow {
    /// The job slowed.
    pub victim: String,
    /// The job slowing it.
    pub by: String,
    /// Seconds of the victim's step attributed to it.
    pub extra_s: f64,
    /// Resources they share.
    pub shared_resources: u32,
    /// Where it takes the most.
    pub worst: String,
}

/// A resource two or more jobs load, with the jobs by name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SharedRow {
    /// The resource.
    #[serde(flatten)]
    pub resource: SharedResource,
    /// The jobs on it, by name, with their rates, GB/s.
    pub by_job: Vec<(String, f64)>,
}

/// Every job of a cluster, alone and together, healthy and under the study's scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterReport {
    /// JSON contract version.
    pub schema_version: u32,
    /// Spec name.
    pub spec: String,
    /// Load balancing.
    pub lb: String,
    /// Hash seed.
    pub seed: u64,
    /// GPUs in use, and the fabric's.
    pub gpus_used: u64,
    /// The fabric's GPUs.
    pub gpus_total: u64,
    /// The jobs, in the cluster file's order.
    pub jobs: Vec<ClusterJobRow>,
    /// Rounds of the healthy fixed point, and whether it converged.
    pub rounds: u32,
    /// Whether the fixed point met its tolerance.
    pub converged: bool,
    /// Who slows whom (healthy), most first.
    pub interference: Vec<InterferenceRow>,
    /// The busiest resources jobs share (healthy).
    pub shared: Vec<SharedRow>,
    /// What explains the numbers.
    pub notes: Vec<Note>,
}

impl Study<'_> {
    /// Every job of `cluster` simulated together on the flow engine (see
    /// [`aifabric_engine::cluster`] for the model): each job's step alone and with the
    /// others, who slows whom, and with a damaging scenario each job's slowdown,
    /// interruption (lost GPUs) or "untouched", with why.
    pub fn cluster(&self, cluster: &Cluster) -> Result<ClusterReport, Error> {
        let base = self.cluster_baseline(cluster)?;
        let scenario = if self.damaged() {
            Some(self.cluster_impact(&base, &self.scenario)?)
        } else {
            None
        };
        Ok(self.cluster_report(&base, scenario))
    }

    /// The cluster's jobs on the healthy fabric, alone and together: what every scenario
    /// of [`Study::cluster_impact`] is compared with.
    pub fn cluster_baseline<'c>(&self, cluster: &'c Cluster) -> Result<Baseline<'c>, Error> {
        let f = self.fabric;
        let jobs = cluster.jobs();
        let first = jobs
            .first()
            .ok_or_else(|| Error::bad_request("the cluster has no jobs".into()))?;
        // One network for all: the jobs must agree on the scale-up domain.
        for j in jobs {
            if j.iteration.scale_up_gpus != first.iteration.scale_up_gpus
                || j.iteration.scale_up_bytes_per_s != first.iteration.scale_up_bytes_per_s
            {
                return Err(Error::bad_request(format!(
                    "`{}` has a scale-up domain of {} GPUs at {:.0} GB/s, `{}` of {} at {:.0} \
                     GB/s: the jobs of one cluster run on one kind of server; give every job \
                     the same scale_up",
                    j.name,
                    j.iteration.scale_up_gpus,
                    j.iteration.scale_up_bytes_per_s / 1e9,
                    first.name,
                    first.iteration.scale_up_gpus,
                    first.iteration.scale_up_bytes_per_s / 1e9
                )));
            }
            if let Some(need) = &j.iteration.memory {
                let fit = MemoryFit {
                    need: need.clone(),
                    gpu_memory_bytes: j
                        .gpus
                        .iter()
                        .map(|&g| f.hardware(g).gpu_memory_bytes)
                        .min()
                        .filter(|&b| b > 0),
                };
                if !fit.fits() {
                    return Err(Error::bad_request(fit.refusal(&j.name)));
                }
            }
        }
        let c = &self.setup;
        let mut params: NetParams = c.net;
        params.scale_up_gpus = first.iteration.scale_up_gpus;
        params.scale_up_bytes_per_s = first.iteration.scale_up_bytes_per_s;
        let opts = JobOptions {
            lb: c.lb,
            seed: c.seed,
            channels: c.channels,
        };
        let mut healthy_net = Net::new(f, &Scenario::healthy(f), c.plan, c.bgp, params);
        let ins = inputs(cluster);
        let run = engine::run(&mut healthy_net, &ins, opts).map_err(|e| {
            let who = e
                .job
                .map_or(String::new(), |j| format!("`{}`: ", jobs[j].name));
            Error::from(e.error).prefixed(&who)
        })?;
        Ok(Baseline {
            cluster,
            run,
            params,
            opts,
        })
    }

    /// The cluster's report from its baseline and, with a scenario, what it does.
    pub fn cluster_report(
        &self,
        base: &Baseline<'_>,
        scenario: Option<ScenarioImpact>,
    ) -> ClusterReport {
        let f = self.fabric;
        let c = &self.setup;
        let cluster = base.cluster;
        let jobs = cluster.jobs();
        let healthy = &base.run;
        let mut notes = Vec::new();
        if !healthy.converged {
            notes.push(Note::new(
                About::Run,
                format!(
                    "the jobs' steps together did not settle within {} rounds (to {:.0e}); the \
                     last round is shown",
                    healthy.rounds,
                    engine::TOLERANCE
                ),
            ));
        }
        notes.push(Note::new(
            About::Run,
            "jobs share a link as max-min fairness among jobs says, each with its average \
             rate over its step (its bytes on the link over its step time), iterated until \
             the steps agree: the timing of their collectives within a step is averaged"
                .into(),
        ));
        let rows = jobs
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let (impact, now) = match &scenario {
                    Some(s) => (Some(s.impact[i].clone()), s.step[i].clone()),
                    None => (None, None),
                };
                let t = &healthy.together[i];
                ClusterJobRow {
                    name: j.name.clone(),
                    gpus: j.iteration.gpus,
                    placed_by: j.placed_by.clone(),
                    alone_step_s: healthy.alone[i].step_s,
                    together_step_s: t.step_s,
                    interference_slowdown: t.step_s / healthy.alone[i].step_s,
                    mfu: t.mfu,
                    impact,
                    scenario_step_s: now.as_ref().map(|s| s.step_s),
                    step: now.unwrap_or_else(|| t.clone()),
                }
            })
            .collect();
        let name = |k: u32| jobs[k as usize].name.clone();
        ClusterReport {
            schema_version: SCHEMA_VERSION,
            spec: f.name().to_owned(),
            lb: c.lb.name(),
            seed: c.seed,
            gpus_used: cluster.gpus() as u64,
            gpus_total: f.devices_with_role(aifabric_model::Role::Gpu).count() as u64,
            jobs: rows,
            rounds: healthy.rounds,
            converged: healthy.converged,
            interference: healthy
                .interference
                .iter()
                .map(|x| InterferenceRow {
                    victim: name(x.victim),
                    by: name(x.by),
                    extra_s: x.extra_s,
                    shared_resources: x.shared,
                    worst: x.worst.clone(),
                })
                .collect(),
            shared: healthy
                .shared
                .iter()
                .map(|s| SharedRow {
                    by_job: s.jobs.iter().map(|&(k, r)| (name(k), r)).collect(),
                    resource: s.clone(),
                })
                .collect(),
            notes,
        }
    }

    /// What `scenario` does to each job of the baseline's cluster: those that lose GPUs
    /// (or every path) are interrupted and their traffic leaves the fabric; the others run
    /// together again, and each is compared with its healthy step together.
    pub fn cluster_impact(
        &self,
        base: &Baseline<'_>,
        scenario: &Scenario,
    ) -> Result<ScenarioImpact, Error> {
        let f = self.fabric;
        let c = &self.setup;
        let (healthy, params, opts) = (&base.run, base.params, base.opts);
        let ins = inputs(base.cluster);
        let mut net = Net::new(f, scenario, c.plan, c.bgp, params);
        let n = ins.len();
        let mut impact: Vec<Option<Impact>> = vec![None; n];
        for (i, j) in ins.iter().enumerate() {
            let lost: Vec<DeviceId> = j
                .gpus
                .iter()
                .copied()
                .filter(|&g| net.attach(g).is_none())
                .collect();
            if !lost.is_empty() {
                impact[i] = Some(Impact::Interrupted {
                    lost_gpus: lost.len() as u32,
                    why: format!(
                        "{} of its GPUs are failed or cut off (first: {})",
                        lost.len(),
                        names(f, &lost)
                    ),
                });
            }
        }
        // Run the survivors; a job whose traffic finds no path is interrupted too, and the
        // rest run again without it.
        let mut step: Vec<Option<StepResult>> = vec![None; n];
        loop {
            let live: Vec<usize> = (0..n).filter(|&i| impact[i].is_none()).collect();
            if live.is_empty() {
                break;
            }
            let sub: Vec<JobIn<'_>> = live.iter().map(|&i| ins[i]).collect();
            match engine::run(&mut net, &sub, opts) {
                Ok(run) => {
                    for (k, &i) in live.iter().enumerate() {
                        step[i] = Some(run.together[k].clone());
                    }
                    break;
                }
                Err(e) => match (e.job, &e.error) {
                    (Some(k), aifabric_engine::SimError::Unreachable { .. }) => {
                        impact[live[k]] = Some(Impact::Interrupted {
                            lost_gpus: 0,
                            why: format!("its traffic has no path: {}", e.error),
                        });
                    }
                    _ => return Err(Error::from(e.error)),
                },
            }
        }
        let mut out = scenario.unusable();
        out.union_with(&scenario.drained_soft);
        let crossing = |i: usize| {
            let mut used = aifabric_engine::FixedBitSet::with_capacity(f.links().len());
            for c in &healthy.together[i].comms {
                used.union_with(&c.detail.used_links);
            }
            used.ones()
                .filter(|&l| !f.link_up(aifabric_model::LinkId::from_idx(l), &out))
                .count()
        };
        let impact = (0..n)
            .map(|i| {
                if let Some(x) = impact[i].take() {
                    return x;
                }
                let now = step[i].as_ref().map_or(f64::NAN, |s| s.step_s);
                let slowdown = now / healthy.together[i].step_s;
                let crossed = crossing(i);
                if (slowdown - 1.0).abs() <= 1e-9 {
                    Impact::Untouched {
                        why: if crossed == 0 {
                            "none of the links it uses is failed or drained".into()
                        } else {
                            format!(
                                "{crossed} links it uses are out, and the rest carry its \
                                 traffic as fast"
                            )
                        },
                    }
                } else {
                    let why = if crossed > 0 {
                        format!("{crossed} links it uses are out")
                    } else if slowdown < 1.0 {
                        "an interrupted job's traffic has left the links it shares".into()
                    } else {
                        "jobs rerouted by the scenario now share its links".into()
                    };
                    Impact::Slowed { slowdown, why }
                }
            })
            .collect();
        Ok(ScenarioImpact { impact, step })
    }
}

/// The jobs of a cluster on the healthy fabric, alone and together.
pub struct Baseline<'c> {
    /// The cluster.
    pub cluster: &'c Cluster,
    /// Its jobs' steps.
    pub run: ClusterRun,
    params: NetParams,
    opts: JobOptions,
}

/// One job under one scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobImpactRow {
    /// The job.
    pub job: String,
    /// What the scenario does to it.
    pub impact: Impact,
}

impl Baseline<'_> {
    /// The jobs `impact` hurts (slows, speeds up or interrupts), by name.
    pub fn hurt(&self, impact: ScenarioImpact) -> Vec<JobImpactRow> {
        self.cluster
            .jobs()
            .iter()
            .zip(impact.impact)
            .filter(|(_, i)| !matches!(i, Impact::Untouched { .. }))
            .map(|(j, impact)| JobImpactRow {
                job: j.name.clone(),
                impact,
            })
            .collect()
    }

    /// GPU-hours per hour the jobs lose under `impact`: an interrupted job all its GPUs, a
    /// slowed one `GPUs x (1 - 1 / slowdown)` (a faster one loses nothing).
    pub fn lost_gpus(&self, impact: &ScenarioImpact) -> f64 {
        self.cluster
            .jobs()
            .iter()
            .zip(&impact.impact)
            .map(|(j, i)| {
                let g = f64::from(j.iteration.gpus);
                match i {
                    Impact::Interrupted { .. } => g,
                    Impact::Slowed { slowdown, .. } => g * (1.0 - 1.0 / slowdown).max(0.0),
                    Impact::Untouched { .. } => 0.0,
                }
            })
            .sum()
    }
}

/// The jobs of a cluster under one scenario.
#[derive(Clone, Debug)]
pub struct ScenarioImpact {
    /// Per job (cluster order), what the scenario does to it.
    pub impact: Vec<Impact>,
    /// Per job, its step under the scenario (`None`: interrupted).
    pub step: Vec<Option<StepResult>>,
}

/// The engine's view of the cluster's jobs.
fn inputs(cluster: &Cluster) -> Vec<JobIn<'_>> {
    cluster
        .jobs()
        .iter()
        .map(|j| JobIn {
            it: &j.iteration,
            gpus: &j.gpus,
        })
        .collect()
}

/// The first three of `gpus` by name.
fn names(f: &aifabric_model::Fabric, gpus: &[DeviceId]) -> String {
    let mut v: Vec<String> = gpus.iter().take(3).map(|&g| f.device_name(g)).collect();
    if gpus.len() > 3 {
        v.push("...".into());
    }
    v.join(", ")
}
