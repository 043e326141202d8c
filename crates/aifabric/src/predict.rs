//! Collectives and training steps on the study's fabric: the flow engine's composition of
//! each collective's phases, every phase's bandwidth term from the fluid or, with
//! `--engine packet|hybrid`, from the packet engine ([`crate::packet::PacketTimer`]).

use crate::compare::{self, Both};
use crate::packet;
use crate::report::{
    CollectiveReport, CollectiveRow, JobReport, LbWeights, MemoryFit, Predicted, Prediction,
};
use crate::{notes, CollectiveRequest, Engine, Error, Setup, Study, SCHEMA_VERSION};
use aifabric_dataplane::{Forwarding, NetParams};
use aifabric_engine::job::{run_tuned, JobOptions};
use aifabric_engine::sim::{Collective, SimError};
use aifabric_engine::tune::Tuner;
use aifabric_workload::job::Iteration;
use aifabric_workload::schedule::Algo;
use aifabric_workload::{Placement, Proto};
use std::sync::Arc;

/// The network's parameters for a run timed by the packet engine: its switch and link
/// latencies (the chains pay the path latencies the packet runs see).
pub(crate) fn timed_params(p: NetParams, timing: Option<&packet::Timing<'_>>) -> NetParams {
    match timing {
        Some(t) => NetParams {
            switch_latency_s: t.cfg.switch_latency_ps as f64 * 1e-12,
            link_latency_s: t.cfg.link_latency_ps.map(|l| l as f64 * 1e-12),
            ..p
        },
        None => p,
    }
}

/// The setup of a run timed by the packet engine: the fluid's load balancing closest to
/// the packet engine's (for the phases' paths, latencies and fluid terms), its seed, and
/// its switch and link latencies.
pub(crate) fn timed_setup(s: Setup, timing: Option<&packet::Timing<'_>>) -> Setup {
    match timing {
        Some(t) => Setup {
            lb: aifabric_dataplane::Lb::from(t.cfg.lb).fluid_equivalent(),
            seed: t.cfg.seed,
            net: timed_params(s.net, timing),
            ..s
        },
        None => s,
    }
}

/// How a collective or a job runs at packet level: `packet` or `hybrid` with `cfg`.
fn packet_timing<'c>(
    cfg: &'c packet::Config,
    engine: Engine,
    command: &str,
    progress: Option<packet::PhaseProgressFn>,
) -> Result<packet::Timing<'c>, Error> {
    match engine {
        Engine::Packet | Engine::Hybrid => Ok(packet::Timing {
            cfg,
            engine,
            progress,
        }),
        Engine::Flow | Engine::Both => Err(Error::bad_request(format!(
            "a {command} runs with --engine flow (the default), packet or hybrid; for both \
             side by side, run it once with flow and once with packet"
        ))),
    }
}

/// A tuner timing every phase with `timer` when given, else with the fluid.
fn tuner(timer: &Option<Arc<packet::PacketTimer>>) -> Tuner {
    match timer {
        Some(t) => Tuner::timed(t.clone()),
        None => Tuner::default(),
    }
}

impl Study<'_> {
    /// A collective over `req.gpus` GPUs at every size of `req.sizes`: nccl-tests-style rows,
    /// the detail of the largest size, and with a damaging scenario the slowdown per size.
    pub fn collective(&self, req: &CollectiveRequest) -> Result<CollectiveReport, Error> {
        self.collective_timed(req, None)
    }

    /// [`Study::collective`] with every distinct phase of its schedule (one step of every
    /// group at once) run by the packet engine under `cfg` (`hybrid`: fast-forwarding its
    /// steady states), memoized, and composed as the flow engine composes its phases (each
    /// phase's term times its repeats, the per-step and path latencies of its chains).
    /// Scale-up (NVLink) transfers stay fluid. The report says what was simulated
    /// ([`CollectiveReport::packet`]).
    pub fn collective_packet(
        &self,
        req: &CollectiveRequest,
        cfg: &packet::Config,
        engine: Engine,
    ) -> Result<CollectiveReport, Error> {
        self.collective_timed(req, Some(&packet_timing(cfg, engine, "collective", None)?))
    }

    /// [`Study::collective_packet`], calling `progress` as the packet runs go (phases done,
    /// the running phase's flows and simulated time, from any thread).
    pub fn collective_packet_with_progress(
        &self,
        req: &CollectiveRequest,
        cfg: &packet::Config,
        engine: Engine,
        progress: packet::PhaseProgressFn,
    ) -> Result<CollectiveReport, Error> {
        let t = packet_timing(cfg, engine, "collective", Some(progress))?;
        self.collective_timed(req, Some(&t))
    }

    fn collective_timed(
        &self,
        req: &CollectiveRequest,
        timing: Option<&packet::Timing<'_>>,
    ) -> Result<CollectiveReport, Error> {
        let c = &timed_setup(self.setup, timing);
        let algo = req.algo.unwrap_or(Algo::Auto);
        let proto = req.proto.unwrap_or(Proto::Auto);
        let placed = self.place(req.gpus, req.placement, c.net.scale_up_gpus)?;
        let nets = Both::nets(self, c.net);
        let routes =
            nets.try_map(|n| Forwarding::new(n, placed.iter().copied()).map_err(SimError::from))?;
        // One tuner per fabric: `auto` calibrates each candidate once, then picks per size.
        let timers = nets.map(|_| timing.map(|t| Arc::new(packet::PacketTimer::new(t))));
        let mut tuners = timers.map(tuner);
        let mut rows = Vec::new();
        let mut largest = None;
        let mut largest_healthy = None;
        let mut used = Vec::new();
        for (k, &s) in req.sizes.iter().enumerate() {
            // The flows' completion times are the last size's (the `largest` row's).
            if k + 1 == req.sizes.len() {
                if let Some(t) = &timers.now {
                    t.count_from_here();
                }
            }
            let col = Collective {
                op: Some(req.op),
                algo,
                groups: vec![placed.clone()],
                bytes: s as f64,
                channels: c.channels,
                lb: c.lb,
                seed: c.seed,
                alpha_s: req.alpha_s,
                proto: Some(proto),
            };
            let r = tuners.now.simulate(&nets.now, &routes.now, &col)?;
            let slowdown = match (&mut tuners.healthy, &nets.healthy, &routes.healthy) {
                (Some(t), Some(h), Some(hr)) => {
                    let mut base = t.simulate(h, hr, &col)?;
                    used.push(std::mem::take(&mut base.used_links));
                    let slowdown = r.time_s / base.time_s;
                    largest_healthy = Some(base);
                    Some(slowdown)
                }
                _ => None,
            };
            rows.push(CollectiveRow {
                bytes: s,
                time_us: r.time_s * 1e6,
                alg_bw_gbytes_per_s: r.alg_bw_gbytes_per_s,
                bus_bw_gbytes_per_s: r.bus_bw_gbytes_per_s,
                slowdown,
                te_gap: r.te_gap,
                algo: r.algo,
                proto: r.proto,
                channels: r.channels,
                predicted: r
                    .tuned
                    .iter()
                    .map(|c| Predicted {
                        algo: c.algo,
                        proto: c.proto,
                        time_us: c.time_s * 1e6,
                    })
                    .collect(),
            });
            largest = Some(r);
        }
        let largest = largest.ok_or_else(|| Error::bad_request("no sizes given".into()))?;
        let differences = nets.now.weight_differences(&routes.now.all());
        let mut run = Prediction::new(largest, largest_healthy, compare::crossing(self, &used));
        run.notes.push(notes::weights(&differences));
        run.notes.extend(
            run.crossing
                .as_ref()
                .map(|c| notes::crossing(c, "collective")),
        );
        let packet = timers.now.as_ref().map(|t| t.stats());
        run.notes.extend(packet.as_ref().map(notes::packet_phases));
        Ok(CollectiveReport {
            schema_version: SCHEMA_VERSION,
            spec: self.fabric.name().to_owned(),
            packet,
            op: req.op,
            algorithm: algo,
            protocol: proto,
            gpus: req.gpus,
            placement: req.placement,
            lb: c.lb.name(),
            seed: c.seed,
            channels: c.channels,
            rows,
            run,
            placement_note: self.placement_note(&placed, req.placement, c.net.scale_up_gpus),
            weights: LbWeights {
                used: c.lb.weights().to_owned(),
                differences,
            },
        })
    }

    /// One training iteration of `it` (placed by `policy`, else the job's own placement): the
    /// step-time breakdown, and with a damaging scenario the healthy step and the slowdown.
    pub fn job(&self, it: &Iteration, policy: Option<Placement>) -> Result<JobReport, Error> {
        self.job_timed(it, policy, None)
    }

    /// [`Study::job`] with every distinct phase of its collectives run by the packet engine
    /// under `cfg`, memoized across the step: as [`Study::collective_packet`] does.
    pub fn job_packet(
        &self,
        it: &Iteration,
        policy: Option<Placement>,
        cfg: &packet::Config,
        engine: Engine,
    ) -> Result<JobReport, Error> {
        self.job_timed(it, policy, Some(&packet_timing(cfg, engine, "job", None)?))
    }

    /// [`Study::job_packet`], calling `progress` as the packet runs go.
    pub fn job_packet_with_progress(
        &self,
        it: &Iteration,
        policy: Option<Placement>,
        cfg: &packet::Config,
        engine: Engine,
        progress: packet::PhaseProgressFn,
    ) -> Result<JobReport, Error> {
        let t = packet_timing(cfg, engine, "job", Some(progress))?;
        self.job_timed(it, policy, Some(&t))
    }

    fn job_timed(
        &self,
        it: &Iteration,
        policy: Option<Placement>,
        timing: Option<&packet::Timing<'_>>,
    ) -> Result<JobReport, Error> {
        let c = &timed_setup(self.setup, timing);
        let mut params = c.net;
        params.scale_up_gpus = it.scale_up_gpus;
        params.scale_up_bytes_per_s = it.scale_up_bytes_per_s;
        let policy = policy.unwrap_or(it.placement);
        let placed = self.place(it.gpus, policy, params.scale_up_gpus)?;
        let memory = it.memory.clone().map(|need| MemoryFit {
            need,
            gpu_memory_bytes: placed
                .iter()
                .map(|&g| self.fabric.hardware(g).gpu_memory_bytes)
                .min()
                .filter(|&b| b > 0),
        });
        if let Some(m) = memory.as_ref().filter(|m| !m.fits()) {
            return Err(Error::bad_request(m.refusal(&it.name)));
        }
        let opts = JobOptions {
            lb: c.lb,
            seed: c.seed,
            channels: c.channels,
        };
        let nets = Both::nets(self, params);
        let timers = nets.map(|_| timing.map(|t| Arc::new(packet::PacketTimer::new(t))));
        let mut tuners = timers.map(tuner);
        let steps = nets.try_map_with(&mut tuners, |n, tuner| {
            let routes = Forwarding::new(n, placed.iter().copied())?;
            run_tuned(n, &routes, it, &placed, opts, tuner)
        })?;
        let crossing = compare::crossing(
            self,
            steps
                .healthy
                .iter()
                .flat_map(|h| h.comms.iter().map(|c| &c.detail.used_links)),
        );
        let mut run = Prediction::new(steps.now, steps.healthy, crossing);
        run.notes
            .extend(run.crossing.as_ref().map(|c| notes::crossing(c, "job")));
        run.notes
            .extend(notes::job(&run.result, run.slowdown, run.crossing.as_ref()));
        let packet = timers.now.as_ref().map(|t| t.stats());
        run.notes.extend(packet.as_ref().map(notes::packet_phases));
        Ok(JobReport {
            schema_version: SCHEMA_VERSION,
            spec: self.fabric.name().to_owned(),
            packet,
            placement: policy,
            lb: c.lb.name(),
            seed: c.seed,
            run,
            placement_note: self.placement_note(&placed, policy, params.scale_up_gpus),
            memory,
        })
    }
}
