//! Many jobs on one fabric ([`Study::cluster`]): each job's step alone and with the others,
//! who slows whom, and under the study's scenario each job's slowdown, interruption or
//! nothing, with why.

use crate::packet::{self, PacketPhases, PacketTimer, PhaseProgress, PhaseProgressFn, Timing};
use crate::report::{About, MemoryFit, Note};
use crate::{Engine, Error, Study, SCHEMA_VERSION};
use aifabric_dataplane::Net;
use aifabric_engine::cluster::{self as engine, ClusterRun, JobIn, SharedResource};
use aifabric_engine::job::{JobOptions, StepResult};
use aifabric_engine::tune::Tuner;
use aifabric_model::{DeviceId, Scenario};
use aifabric_workload::cluster::Cluster;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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

/// What the packet engine ran for a cluster's jobs (`--engine packet|hybrid`), per set of
/// runs (each with its own memo: the same phase on other link rates is another run).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterPackets {
    /// Every job alone on the healthy fabric.
    pub alone: PacketPhases,
    /// The jobs that share resources, together: on their shares' rates.
    pub together: PacketPhases,
    /// Under the scenario, the jobs that keep running, together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<PacketPhases>,
}

/// Every job of a cluster, alone and together, healthy and under the study's scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterReport {
    /// JSON contract version.
    pub schema_version: u32,
    /// Spec name.
    pub spec: String,
    /// What timed the jobs' collectives: `flow`, or `packet` or `hybrid` (each job's phases
    /// packet by packet, memoized, as `job` runs them; the shares from the fluid).
    pub engine: Engine,
    /// At packet level: what the packet engine ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet: Option<ClusterPackets>,
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
        self.cluster_from(&base)
    }

    /// [`Study::cluster`] with each job's collectives timed by the packet engine under `cfg`
    /// (`packet`, or `hybrid`: see [`Study::job_packet`]), calling `progress` as the runs
    /// go. The jobs' shares of the resources they share are the fluid's fixed point's; each
    /// job then runs at packet level alone, and together on its shared links cut to its
    /// shares (see [`Study::cluster_baseline_packet`]).
    pub fn cluster_packet(
        &self,
        cluster: &Cluster,
        cfg: &packet::Config,
        engine: Engine,
        progress: Option<PhaseProgressFn>,
    ) -> Result<ClusterReport, Error> {
        let base = self.cluster_baseline_packet(cluster, cfg, engine, progress)?;
        self.cluster_from(&base)
    }

    fn cluster_from(&self, base: &Baseline<'_>) -> Result<ClusterReport, Error> {
        let scenario = if self.damaged() {
            Some(self.cluster_impact(base, &self.scenario)?)
        } else {
            None
        };
        Ok(self.cluster_report(base, scenario))
    }

    /// The cluster's jobs on the healthy fabric, alone and together: what every scenario
    /// of [`Study::cluster_impact`] is compared with.
    pub fn cluster_baseline<'c>(&self, cluster: &'c Cluster) -> Result<Baseline<'c>, Error> {
        self.baseline(cluster, None)
    }

    /// [`Study::cluster_baseline`] at packet level: the fluid's fixed point gives each job
    /// its share of every resource it shares (the fluid's load balancing closest to the
    /// packet engine's, its seed and latencies, as [`Study::job_packet`]); then each job's
    /// step is timed with its collectives' phases run by the packet engine under `cfg`
    /// (memoized), alone on the healthy fabric and together on its shared links cut to its
    /// shares. Every scenario of [`Study::cluster_impact`] on this baseline runs the same
    /// way.
    pub fn cluster_baseline_packet<'c>(
        &self,
        cluster: &'c Cluster,
        cfg: &packet::Config,
        engine: Engine,
        progress: Option<PhaseProgressFn>,
    ) -> Result<Baseline<'c>, Error> {
        if !matches!(engine, Engine::Packet | Engine::Hybrid) {
            return Err(Error::bad_request(format!(
                "the jobs of a cluster run at packet level with --engine packet or hybrid \
                 (or with the flow engine, the default), not {engine}"
            )));
        }
        let settings = PacketSettings {
            cfg: cfg.clone(),
            engine,
            progress,
            done: AtomicU64::new(0),
        };
        self.baseline(cluster, Some(settings))
    }

    fn baseline<'c>(
        &self,
        cluster: &'c Cluster,
        packet: Option<PacketSettings>,
    ) -> Result<Baseline<'c>, Error> {
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
        let mut setup = crate::predict::timed_setup(
            self.setup,
            packet.as_ref().map(PacketSettings::timing).as_ref(),
        );
        setup.net.scale_up_gpus = first.iteration.scale_up_gpus;
        setup.net.scale_up_bytes_per_s = first.iteration.scale_up_bytes_per_s;
        let opts = job_options(&setup);
        let mut healthy_net = Net::new(f, &Scenario::healthy(f), setup.plan, setup.bgp, setup.net);
        let ins = inputs(cluster);
        let failed = |e: engine::JobFailed| {
            let who = e
                .job
                .map_or(String::new(), |j| format!("`{}`: ", jobs[j].name));
            Error::from(e.error).prefixed(&who)
        };
        let run = engine::run(&mut healthy_net, &ins, opts).map_err(failed)?;
        let (run, packets) = match &packet {
            None => (run, None),
            Some(p) => {
                let (run, [alone, together]) = p
                    .retime(&mut healthy_net, &ins, opts, &run, true)
                    .map_err(failed)?;
                let packets = ClusterPackets {
                    alone,
                    together,
                    scenario: None,
                };
                (run, Some(packets))
            }
        };
        Ok(Baseline {
            cluster,
            run,
            setup,
            packet,
            packets,
        })
    }

    /// The cluster's report from its baseline and, with a scenario, what it does.
    pub fn cluster_report(
        &self,
        base: &Baseline<'_>,
        scenario: Option<ScenarioImpact>,
    ) -> ClusterReport {
        let f = self.fabric;
        let c = &base.setup;
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
        let packets = base.packets.as_ref().map(|p| ClusterPackets {
            scenario: scenario.as_ref().and_then(|s| s.packet.clone()),
            ..p.clone()
        });
        if let Some(p) = &packets {
            notes.push(Note::new(
                About::PacketPhases,
                "at packet level each job's step is timed as `job --engine packet|hybrid` \
                 times it, its collectives' distinct phases run by the packet engine: alone, \
                 then together with each link it shares with other jobs at the rate the \
                 fluid's fixed point leaves it there (the other jobs' packets are not in \
                 its queues; a share of a DSF zone's fabric, which the fluid holds as its \
                 interface nodes' and cluster stages' capacities, cuts each of their \
                 links in proportion)"
                    .into(),
            ));
            // Nothing shared: each job's together is its alone, and nothing more ran.
            let together = Some(("together", &p.together)).filter(|t| t.1.phases_timed > 0);
            for (what, ran) in [("alone", &p.alone)]
                .into_iter()
                .chain(together)
                .chain(p.scenario.as_ref().map(|s| ("under the scenario", s)))
            {
                let mut n = crate::notes::packet_phases(ran);
                n.text = format!("{what}: {}", n.text);
                notes.push(n);
            }
        }
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
            engine: base.engine(),
            packet: packets,
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
        let c = &base.setup;
        let (healthy, opts) = (&base.run, job_options(c));
        let ins = inputs(base.cluster);
        let mut net = Net::new(f, scenario, c.plan, c.bgp, c.net);
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
        let mut packet = None;
        loop {
            let live: Vec<usize> = (0..n).filter(|&i| impact[i].is_none()).collect();
            if live.is_empty() {
                break;
            }
            let sub: Vec<JobIn<'_>> = live.iter().map(|&i| ins[i]).collect();
            let run = engine::run(&mut net, &sub, opts).and_then(|run| match &base.packet {
                None => Ok(run),
                Some(p) => {
                    let (run, [_, together]) = p.retime(&mut net, &sub, opts, &run, false)?;
                    packet = Some(together);
                    Ok(run)
                }
            });
            match run {
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
                    (k, _) => {
                        let who = k.map_or(String::new(), |k| {
                            format!("`{}`: ", base.cluster.jobs()[live[k]].name)
                        });
                        return Err(Error::from(e.error).prefixed(&who));
                    }
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
        Ok(ScenarioImpact {
            impact,
            step,
            packet,
        })
    }
}

/// The jobs of a cluster on the healthy fabric, alone and together.
pub struct Baseline<'c> {
    /// The cluster.
    pub cluster: &'c Cluster,
    /// Its jobs' steps.
    pub run: ClusterRun,
    /// The setup it ran with: the jobs' scale-up domain, and when timed by the packet
    /// engine its latencies, seed and closest load balancing.
    setup: crate::Setup,
    /// At packet level: how every scenario on this baseline is timed.
    packet: Option<PacketSettings>,
    /// At packet level: what the healthy runs simulated.
    packets: Option<ClusterPackets>,
}

/// How a cluster's jobs are timed at packet level (`--engine packet|hybrid`), kept with
/// its baseline so that every scenario runs as the healthy fabric did.
struct PacketSettings {
    cfg: packet::Config,
    engine: Engine,
    progress: Option<PhaseProgressFn>,
    /// Phases the finished sets of runs simulated (the progress counts on from them).
    done: AtomicU64,
}

impl PacketSettings {
    fn timing(&self) -> Timing<'_> {
        Timing {
            cfg: &self.cfg,
            engine: self.engine,
            progress: self.progress.clone(),
        }
    }

    /// `fluid` timed again at packet level ([`engine::retime`]), each set of runs with its
    /// own timer: the jobs' steps alone on the whole net, and their steps together (on
    /// their shares; without `with_alone`, a job that shares nothing runs there too, on the
    /// whole net). A timer memoizes a phase by its transfers, so it must not see the same
    /// phase on other link rates: it never does within a set, whose jobs run on disjoint
    /// GPUs. What the two timers ran: alone's (empty without `with_alone`), together's.
    fn retime(
        &self,
        net: &mut Net<'_>,
        jobs: &[JobIn<'_>],
        opts: JobOptions,
        fluid: &ClusterRun,
        with_alone: bool,
    ) -> Result<(ClusterRun, [PacketPhases; 2]), engine::JobFailed> {
        let before = self.done.load(Ordering::Relaxed);
        let t = Timing {
            progress: self.progress.clone().map(|f| -> PhaseProgressFn {
                // The phases the earlier sets of runs simulated count too.
                Arc::new(move |p: &PhaseProgress| {
                    f(&PhaseProgress {
                        phases_done: before + p.phases_done,
                        ..*p
                    })
                })
            }),
            ..self.timing()
        };
        let alone = Arc::new(PacketTimer::new(&t));
        let together = Arc::new(PacketTimer::new(&t));
        let tuner = |whole: bool| {
            Tuner::timed(if whole && with_alone {
                alone.clone()
            } else {
                together.clone()
            })
        };
        let run = engine::retime(net, jobs, opts, fluid, with_alone, &tuner)?;
        let ran = [alone.stats(), together.stats()];
        self.done.fetch_add(
            ran[0].phases_simulated + ran[1].phases_simulated,
            Ordering::Relaxed,
        );
        Ok((run, ran))
    }
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
    /// What times the jobs' collectives: `flow`, or the packet engine (`packet`, `hybrid`).
    pub fn engine(&self) -> Engine {
        self.packet.as_ref().map_or(Engine::Flow, |p| p.engine)
    }

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
    /// At packet level: what the packet engine ran for the jobs together.
    pub packet: Option<PacketPhases>,
}

/// What the engine's jobs run with under `s`.
fn job_options(s: &crate::Setup) -> JobOptions {
    JobOptions {
        lb: s.lb,
        seed: s.seed,
        channels: s.channels,
    }
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
