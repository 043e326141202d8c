//! One training iteration on a fabric: compute from the roofline, plus the exposed time of
//! each collective, simulated with every group of its parallelism dimension running at once.
//!
//! Step time = compute + pipeline bubble + sum over collectives of
//! `count x time x exposed share` ([`aifabric_workload::job`] derives counts and sizes; the
//! bubble is 1F1B's, or the interleaved schedule's with `pp_virtual` model chunks per stage,
//! whose extra point-to-point sends are in the pipeline's count). Compute runs at the kernel
//! efficiency; the end-to-end model FLOPs utilization, the figure training reports publish,
//! is what is left of it once the bubble and the exposed communication are added.

use crate::sim::{Collective, CollectiveResult, SimError};
use crate::tune::Tuner;
use aifabric_dataplane::{Forwarding, Lb, Net};
use aifabric_model::DeviceId;
use aifabric_workload::job::{Iteration, Pipeline, RankOrder};
use serde::Serialize;

/// How to run the job's collectives.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct JobOptions {
    /// Load balancing.
    pub lb: Lb,
    /// Hash seed.
    pub seed: u64,
    /// Channels per collective.
    pub channels: u32,
}

/// One collective kind of the iteration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CommTime {
    /// Label, e.g. `dp all_reduce`.
    pub name: String,
    /// Size of one instance, bytes.
    pub bytes: f64,
    /// Groups running it at once.
    pub groups: usize,
    /// Ranks per group.
    pub ranks: usize,
    /// Instances per iteration on the critical path.
    pub count: u64,
    /// Time of one instance, seconds.
    pub time_s: f64,
    /// Bus bandwidth of one instance, GB/s.
    pub bus_bw_gbytes_per_s: f64,
    /// Exposed time per iteration, seconds.
    pub exposed_s: f64,
    /// The simulation of one instance (utilization per tier, bottlenecks).
    pub detail: CollectiveResult,
}

/// One iteration's time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepResult {
    /// Job name.
    pub job: String,
    /// GPUs.
    pub gpus: u32,
    /// Step time, seconds.
    pub step_s: f64,
    /// Compute, seconds.
    pub compute_s: f64,
    /// Pipeline bubble, seconds.
    pub bubble_s: f64,
    /// The pipeline schedule behind the bubble.
    pub pipeline: Pipeline,
    /// The rank order the groups follow, fastest dimension first (default Megatron-LM's
    /// `[tp, cp, dp, pp]`).
    pub order: RankOrder,
    /// Exposed communication, seconds.
    pub exposed_comm_s: f64,
    /// Per collective.
    pub comms: Vec<CommTime>,
    /// Tokens per second.
    pub tokens_per_s: f64,
    /// End-to-end model FLOPs utilization: the model's FLOPs over the step, as a share of
    /// the GPUs' peak (`efficiency x compute / step`, less what recomputation adds to the
    /// compute); what training reports publish as MFU.
    pub mfu: f64,
    /// Hardware FLOPs over model FLOPs: what recomputation adds to the compute (1: none).
    pub recompute_overhead: f64,
}

/// Simulate one iteration of `it` with rank `r` on `gpus[r]`.
pub fn run(
    net: &Net<'_>,
    it: &Iteration,
    gpus: &[DeviceId],
    opts: JobOptions,
) -> Result<StepResult, SimError> {
    let routes = Forwarding::new(net, gpus.iter().copied())?;
    run_routed(net, &routes, it, gpus, opts)
}

/// [`run`] with the job's forwarding already made (toward `gpus`, on `net`): what a
/// repeated simulation of one job on changing capacities reuses.
pub fn run_routed(
    net: &Net<'_>,
    routes: &Forwarding,
    it: &Iteration,
    gpus: &[DeviceId],
    opts: JobOptions,
) -> Result<StepResult, SimError> {
    run_tuned(net, routes, it, gpus, opts, &mut Tuner::default())
}

/// [`run_routed`] with `tuner`'s simulations (e.g. [`Tuner::timed`]: every phase's
/// bandwidth term from the packet engine).
pub fn run_tuned(
    net: &Net<'_>,
    routes: &Forwarding,
    it: &Iteration,
    gpus: &[DeviceId],
    opts: JobOptions,
    tuner: &mut Tuner,
) -> Result<StepResult, SimError> {
    if gpus.len() != it.gpus as usize {
        return Err(SimError::Invalid(format!(
            "the job has {} ranks but {} GPUs were placed",
            it.gpus,
            gpus.len()
        )));
    }
    let mut comms = Vec::with_capacity(it.comms.len());
    for c in &it.comms {
        let groups: Vec<Vec<DeviceId>> = c
            .groups
            .iter()
            .map(|g| g.iter().map(|&r| gpus[r as usize]).collect())
            .collect();
        let col = Collective {
            op: c.op,
            algo: c.algo,
            groups,
            bytes: c.bytes,
            channels: opts.channels,
            lb: opts.lb,
            seed: opts.seed,
            alpha_s: it.alpha_s,
            // Jobs keep the alpha-beta model (no NCCL protocol terms).
            proto: None,
        };
        let r = tuner.simulate(net, routes, &col)?;
        comms.push(CommTime {
            name: c.name.clone(),
            bytes: c.bytes,
            groups: c.groups.len(),
            ranks: c.groups.first().map_or(0, Vec::len),
            count: c.count,
            time_s: r.time_s,
            bus_bw_gbytes_per_s: r.bus_bw_gbytes_per_s,
            exposed_s: c.count as f64 * r.time_s * c.exposed,
            detail: r,
        });
    }
    let exposed: f64 = comms.iter().map(|c| c.exposed_s).sum();
    let step = it.compute_s + it.bubble_s + exposed;
    Ok(StepResult {
        job: it.name.clone(),
        gpus: it.gpus,
        step_s: step,
        compute_s: it.compute_s,
        bubble_s: it.bubble_s,
        pipeline: it.pipeline,
        order: it.order,
        exposed_comm_s: exposed,
        comms,
        tokens_per_s: it.tokens / step,
        mfu: it.efficiency * it.compute_s / step / it.recompute_overhead,
        recompute_overhead: it.recompute_overhead,
    })
}
