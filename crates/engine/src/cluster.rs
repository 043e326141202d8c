//! Several jobs on one fabric: each job's step with the others' traffic on the links they
//! share.
//!
//! **Model.** A job's step repeats; over a step, job `k` puts `bytes_k[r]` on resource `r`,
//! an average demand `d_k[r] = bytes_k[r] / step_k`. Job `j` is simulated alone on the
//! fabric with each shared resource's capacity reduced to what max-min fairness among
//! *jobs* leaves it: `j` (demand unbounded) and every other job with traffic on `r`
//! (demand capped at `d_k[r]`) water-fill the capacity, and `j` gets its level. The steps
//! depend on each other's demands, so they are iterated to a fixed point (Jacobi: every job
//! from the previous round's steps, so the order of the jobs does not matter), damped by
//! half, until no step moves by more than [`TOLERANCE`]. Two identical jobs that only
//! communicate over one link end at half the link each, the max-min share; a job that
//! shares nothing with the others keeps its step alone exactly.
//!
//! What it leaves out: the timing of phases (two jobs' collectives overlapping or
//! alternating in time is averaged over the step, so a job whose collectives always
//! coincide with another's is slowed more than predicted); fairness among jobs, not among
//! their flows (a job with many flows on a link does not take a larger share).

use crate::job::{run_routed, run_tuned, JobOptions, StepResult};
use crate::sim::SimError;
use crate::tune::Tuner;
use aifabric_dataplane::{Forwarding, Net, ResourceId};
use aifabric_model::DeviceId;
use aifabric_workload::job::Iteration;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Relative change of every step under which the fixed point stops.
pub const TOLERANCE: f64 = 1e-4;
/// Rounds at most.
pub const MAX_ROUNDS: u32 = 50;

/// One job: what one step does and where its ranks run.
#[derive(Clone, Copy, Debug)]
pub struct JobIn<'a> {
    /// One iteration.
    pub it: &'a Iteration,
    /// Rank `r` on `gpus[r]`.
    pub gpus: &'a [DeviceId],
}

/// A resource two or more jobs load.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SharedResource {
    /// Dense resource id (see [`Net::resource`]).
    #[serde(skip)]
    pub resource: u32,
    /// Name, e.g. `east.dc1.l2.rdsw3 -> east.dc1.l2.fdsw0`.
    pub name: String,
    /// Tier.
    pub tier: String,
    /// Capacity, GB/s.
    pub capacity_gbytes_per_s: f64,
    /// Each job's average rate on it over its step together, GB/s, by job index.
    pub jobs: Vec<(u32, f64)>,
    /// Their sum over the capacity.
    pub utilization: f64,
}

/// How much of job `victim`'s lost time job `by` accounts for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interference {
    /// The job slowed (index).
    pub victim: u32,
    /// The job slowing it (index).
    pub by: u32,
    /// Seconds of the victim's step attributed to `by`: its slowdown's extra time split
    /// over the other jobs in proportion to the capacity each takes from it, weighted by
    /// the victim's bytes on each shared resource.
    pub extra_s: f64,
    /// Resources the two share.
    pub shared: u32,
    /// The one where `by` takes the most from the victim (name).
    pub worst: String,
}

/// Every job alone and together.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterRun {
    /// Each job's step with the fabric to itself.
    pub alone: Vec<StepResult>,
    /// Each job's step with the others running.
    pub together: Vec<StepResult>,
    /// Rounds of the fixed point.
    pub rounds: u32,
    /// Whether it met [`TOLERANCE`] within [`MAX_ROUNDS`].
    pub converged: bool,
    /// Who slows whom, most extra time first.
    pub interference: Vec<Interference>,
    /// The busiest resources shared by two or more jobs (at most 10), busiest first.
    pub shared: Vec<SharedResource>,
    /// Per job, the shared resources it was last simulated on together and what was left
    /// of each to it, bytes/s (resource id order; empty: it shares nothing).
    #[serde(skip)]
    pub shares: Vec<Vec<(u32, f64)>>,
}

/// A job's bytes per resource over one step (every instance of every collective).
fn step_bytes(s: &StepResult) -> Vec<(u32, f64)> {
    let mut m: FxHashMap<u32, f64> = FxHashMap::default();
    for c in &s.comms {
        for &(r, b) in &c.detail.carried {
            *m.entry(r).or_default() += c.count as f64 * b;
        }
    }
    let mut v: Vec<(u32, f64)> = m.into_iter().collect();
    v.sort_unstable_by_key(|x| x.0);
    v
}

/// Max-min level of a player with unbounded demand among players of `demands` on
/// `capacity`: water-filling, the smallest demands met first.
fn level(capacity: f64, demands: &mut [f64]) -> f64 {
    demands.sort_unstable_by(f64::total_cmp);
    let mut left = capacity;
    let mut players = demands.len() + 1;
    for &d in demands.iter() {
        let fair = left / players as f64;
        if d >= fair {
            return fair;
        }
        left -= d;
        players -= 1;
    }
    left
}

/// A simulation that failed, and the job it failed for (`None`: the forwarding).
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct JobFailed {
    /// The job (index) whose step could not be simulated.
    pub job: Option<usize>,
    /// Why.
    pub error: SimError,
}

/// Simulate every job alone, then together to a fixed point. `net`'s capacities are
/// restored before it returns, error or not.
pub fn run(
    net: &mut Net<'_>,
    jobs: &[JobIn<'_>],
    opts: JobOptions,
) -> Result<ClusterRun, JobFailed> {
    let routes = forwarding(net, jobs)?;
    let alone = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| run_routed(net, &routes, j.it, j.gpus, opts).map_err(failed(i)))
        .collect::<Result<Vec<_>, _>>()?;
    let bytes: Vec<Vec<(u32, f64)>> = alone.iter().map(step_bytes).collect();
    let users = shared_users(&bytes);
    // Per job, the shared resources it loads (ascending).
    let mut shares: Vec<Vec<u32>> = vec![Vec::new(); jobs.len()];
    for (&r, u) in &users {
        for &(j, _) in u {
            shares[j as usize].push(r);
        }
    }
    for s in &mut shares {
        s.sort_unstable();
    }
    let mut step: Vec<f64> = alone.iter().map(|s| s.step_s).collect();
    let mut together = alone.clone();
    let (mut rounds, mut converged) = (0, true);
    if users.is_empty() {
        return Ok(ClusterRun {
            shares: vec![Vec::new(); alone.len()],
            alone,
            together,
            rounds,
            converged,
            interference: Vec::new(),
            shared: Vec::new(),
        });
    }
    converged = false;
    let mut demands = Vec::new();
    // Per job, the share of each of its shared resources it was last simulated with.
    let mut simulated: Vec<Vec<f64>> = shares.iter().map(|s| vec![0.0; s.len()]).collect();
    let mut level_now = Vec::new();
    while rounds < MAX_ROUNDS && !converged {
        rounds += 1;
        let mut next = step.clone();
        for (j, job) in jobs.iter().enumerate() {
            if shares[j].is_empty() {
                continue;
            }
            level_now.clear();
            for &r in &shares[j] {
                demands.clear();
                demands.extend(
                    users[&r]
                        .iter()
                        .filter(|&&(k, _)| k as usize != j)
                        .map(|&(k, b)| b / step[k as usize]),
                );
                let cap = net.capacity_bps(ResourceId::new(r));
                level_now.push(level(cap, &mut demands).max(cap * 1e-6));
            }
            // Shares that moved less than the tolerance would move the step less: keep it.
            let moved = level_now
                .iter()
                .zip(&simulated[j])
                .any(|(&a, &b)| (a - b).abs() > 0.1 * TOLERANCE * a);
            if !moved {
                // Its last simulation stands for this round.
                next[j] = together[j].step_s;
                continue;
            }
            simulated[j].clone_from(&level_now);
            let cut: Vec<(u32, f64)> = shares[j]
                .iter()
                .copied()
                .zip(level_now.iter().copied())
                .collect();
            let r = with_shares(net, &cut, |net| {
                run_routed(net, &routes, job.it, job.gpus, opts)
            })
            .map_err(failed(j))?;
            next[j] = r.step_s;
            together[j] = r;
        }
        // Damped: half the old step, half the new.
        converged = true;
        for (s, n) in step.iter_mut().zip(&next) {
            let new = 0.5 * (*s + n);
            if (new - *s).abs() > TOLERANCE * *s {
                converged = false;
            }
            *s = new;
        }
    }
    let interference = attribute(net, &alone, &together, &bytes, &users);
    let shared = busiest(net, &together, &users);
    let shares = shares
        .iter()
        .zip(&simulated)
        .map(|(rs, bps)| rs.iter().copied().zip(bps.iter().copied()).collect())
        .collect();
    Ok(ClusterRun {
        alone,
        together,
        rounds,
        converged,
        interference,
        shared,
        shares,
    })
}

/// The forwarding toward every GPU of `jobs` on `net`.
fn forwarding(net: &Net<'_>, jobs: &[JobIn<'_>]) -> Result<Forwarding, JobFailed> {
    Forwarding::new(net, jobs.iter().flat_map(|j| j.gpus.iter().copied())).map_err(|e| JobFailed {
        job: None,
        error: e.into(),
    })
}

/// A job's step failed: `error` for job `j`.
fn failed(j: usize) -> impl Fn(SimError) -> JobFailed {
    move |error| JobFailed {
        job: Some(j),
        error,
    }
}

/// `f` on `net` with each resource of `shares` cut to its share (bytes/s), restored after.
fn with_shares<T>(net: &mut Net<'_>, shares: &[(u32, f64)], f: impl FnOnce(&Net<'_>) -> T) -> T {
    for &(r, share) in shares {
        net.set_share_bps(ResourceId::new(r), share);
    }
    let out = f(net);
    for &(r, _) in shares {
        net.restore_capacity(ResourceId::new(r));
    }
    out
}

/// Who loads each resource two or more jobs load: (job, bytes per step), from each job's
/// bytes per resource.
fn shared_users(bytes: &[Vec<(u32, f64)>]) -> FxHashMap<u32, Vec<(u32, f64)>> {
    let mut users: FxHashMap<u32, Vec<(u32, f64)>> = FxHashMap::default();
    for (j, bs) in bytes.iter().enumerate() {
        for &(r, b) in bs {
            users.entry(r).or_default().push((j as u32, b));
        }
    }
    users.retain(|_, u| u.len() > 1);
    users
}

/// `fluid` (a [`run`] of `jobs` on this `net`) timed again with other simulations
/// (`tuner`: a new [`Tuner`] per job's step, e.g. [`Tuner::timed`] by the packet engine):
/// each job together, on its shared resources cut to the shares the fluid's fixed point left
/// it (its last round's), and with `with_alone` alone on `net` too; a job that shares nothing
/// runs once, on the whole net. `tuner`'s argument is `true` for a step on the whole net and
/// `false` for one on shares: a timer that memoizes a phase by its transfers alone must not
/// serve both (the same phase, other link rates). Who slows whom and the busiest shared
/// resources follow the new steps (no interference without `with_alone`: each job's alone
/// is then its together); the rounds are the fluid's. `net`'s capacities are restored
/// before it returns, error or not.
pub fn retime(
    net: &mut Net<'_>,
    jobs: &[JobIn<'_>],
    opts: JobOptions,
    fluid: &ClusterRun,
    with_alone: bool,
    tuner: &dyn Fn(bool) -> Tuner,
) -> Result<ClusterRun, JobFailed> {
    if fluid.shares.len() != jobs.len() {
        return Err(JobFailed {
            job: None,
            error: SimError::Invalid(format!(
                "a cluster run of {} jobs cannot time {} jobs again",
                fluid.shares.len(),
                jobs.len()
            )),
        });
    }
    let routes = forwarding(net, jobs)?;
    let mut alone = Vec::with_capacity(jobs.len());
    let mut together = Vec::with_capacity(jobs.len());
    for (j, job) in jobs.iter().enumerate() {
        let step = |net: &Net<'_>, whole: bool| {
            run_tuned(net, &routes, job.it, job.gpus, opts, &mut tuner(whole)).map_err(failed(j))
        };
        let shares = &fluid.shares[j];
        if shares.is_empty() {
            let a = step(net, true)?;
            alone.push(a.clone());
            together.push(a);
            continue;
        }
        if with_alone {
            alone.push(step(net, true)?);
        }
        let t = with_shares(net, shares, |net| step(net, false))?;
        if !with_alone {
            alone.push(t.clone());
        }
        together.push(t);
    }
    let bytes: Vec<Vec<(u32, f64)>> = alone.iter().map(step_bytes).collect();
    let users = shared_users(&bytes);
    Ok(ClusterRun {
        interference: attribute(net, &alone, &together, &bytes, &users),
        shared: busiest(net, &together, &users),
        alone,
        together,
        rounds: fluid.rounds,
        converged: fluid.converged,
        shares: fluid.shares.clone(),
    })
}

/// Split each slowed job's extra time over the jobs sharing its resources, in proportion to
/// the capacity each takes on them (its demand over the capacity) weighted by the victim's
/// bytes there.
fn attribute(
    net: &Net<'_>,
    alone: &[StepResult],
    together: &[StepResult],
    bytes: &[Vec<(u32, f64)>],
    users: &FxHashMap<u32, Vec<(u32, f64)>>,
) -> Vec<Interference> {
    let mut out = Vec::new();
    for (v, bs) in bytes.iter().enumerate() {
        let extra = together[v].step_s - alone[v].step_s;
        if extra <= alone[v].step_s * TOLERANCE {
            continue;
        }
        // by -> (weight, shared count, worst resource and its weight)
        let mut by: FxHashMap<u32, (f64, u32, u32, f64)> = FxHashMap::default();
        for &(r, b) in bs {
            let Some(u) = users.get(&r) else { continue };
            let cap = net.capacity_bps(ResourceId::new(r));
            for &(k, kb) in u {
                if k as usize == v {
                    continue;
                }
                let w = b * (kb / together[k as usize].step_s) / cap;
                let e = by.entry(k).or_insert((0.0, 0, r, 0.0));
                e.0 += w;
                e.1 += 1;
                if w > e.3 {
                    (e.2, e.3) = (r, w);
                }
            }
        }
        let total: f64 = by.values().map(|e| e.0).sum();
        if total <= 0.0 {
            continue;
        }
        for (k, (w, n, worst, _)) in by {
            out.push(Interference {
                victim: v as u32,
                by: k,
                extra_s: extra * w / total,
                shared: n,
                worst: net.resource_name(ResourceId::new(worst)),
            });
        }
    }
    out.sort_by(|a, b| {
        b.extra_s
            .total_cmp(&a.extra_s)
            .then(a.victim.cmp(&b.victim))
            .then(a.by.cmp(&b.by))
    });
    out
}

/// The ten busiest shared resources, at the jobs' rates together.
fn busiest(
    net: &Net<'_>,
    together: &[StepResult],
    users: &FxHashMap<u32, Vec<(u32, f64)>>,
) -> Vec<SharedResource> {
    let mut all: Vec<(u32, f64)> = users
        .iter()
        .map(|(&r, u)| {
            let cap = net.capacity_bps(ResourceId::new(r));
            let rate: f64 = u
                .iter()
                .map(|&(k, b)| b / together[k as usize].step_s)
                .sum();
            (r, rate / cap)
        })
        .collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    all.truncate(10);
    all.into_iter()
        .map(|(r, utilization)| {
            let rid = ResourceId::new(r);
            let mut jobs: Vec<(u32, f64)> = users[&r]
                .iter()
                .map(|&(k, b)| (k, b / together[k as usize].step_s / 1e9))
                .collect();
            jobs.sort_unstable_by_key(|x| x.0);
            SharedResource {
                resource: r,
                name: net.resource_name(rid),
                tier: net.resource_tier(rid),
                capacity_gbytes_per_s: net.capacity_bps(rid) / 1e9,
                jobs,
                utilization,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::level;

    #[test]
    fn water_filling_meets_small_demands_and_splits_the_rest() {
        // Nobody else: all of it.
        assert_eq!(level(10.0, &mut []), 10.0);
        // One other wanting more than half: half each.
        assert_eq!(level(10.0, &mut [8.0]), 5.0);
        // One other wanting 2: it gets 2, the job 8.
        assert_eq!(level(10.0, &mut [2.0]), 8.0);
        // Two others, 1 and 9: 1 met, then 9 and the job split the 9 left.
        assert_eq!(level(10.0, &mut [9.0, 1.0]), 4.5);
    }
}
