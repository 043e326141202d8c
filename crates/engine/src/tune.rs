//! Algorithm and protocol choice, as NCCL's tuner makes it (`ncclTopoGetAlgoTime` in
//! NCCL's `src/graph/tuning.cc`): per collective and size, the applicable (algorithm,
//! protocol) with the lowest predicted time, `latency + bytes / bandwidth`.
//!
//! NCCL predicts both terms from static tables per GPU generation and topology. Here the
//! bandwidth term and the path latency come from the fabric itself: one simulation of each
//! candidate algorithm gives its latency (per-step alpha plus the longest chain of path
//! latencies, which do not depend on the size) and its bandwidth term (the fluid makespans,
//! which scale exactly with the size: every transfer of a phase grows by the same factor
//! and max-min rates do not depend on sizes). The protocol then adds NCCL's own latency
//! (base plus per step and link type) and divides the bandwidth term by its efficiency,
//! bounded by its caps ([`crate::nccl`]). So `time(S)` is known for every size once
//! calibrated, and the choice is the exact argmin of what the engine would simulate,
//! including ECMP collisions and oversubscribed tiers that a table cannot know.
//!
//! With a protocol (the `collective` command), the candidates are NCCL's: ring, tree
//! (all-reduce), NVLS (inside one scale-up domain) and PAT (all-gather and reduce-scatter
//! with one GPU per domain), each with LL, LL128 and Simple where NCCL runs them. Without
//! one (jobs and replays, the alpha-beta model), they are ring, tree, halving-doubling and
//! hierarchical, as before the protocols.
//!
//! Where it differs from NCCL: no CollNet and no NVLS across nodes (NVLS-tree); NCCL's
//! tables are calibrated on a healthy fabric, this tuner sees failures and drains, so a
//! degraded plane can change the choice.

use crate::nccl::{apply, scale, ProtoTerms};
use crate::sim::{
    domain_aligned, simulate_algo, Candidate, Collective, CollectiveResult, PhaseTimer, SimError,
};
use crate::timer::check_work;
use aifabric_dataplane::Forwarding;
use aifabric_dataplane::Net;
use aifabric_workload::collective::Op;
use aifabric_workload::schedule::Algo;
use aifabric_workload::{nccl, Proto};
use rustc_hash::{FxHashMap, FxHasher};
use serde::Serialize;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// One candidate's predicted time: `latency_s + bytes x s_per_byte`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// The algorithm.
    pub algo: Algo,
    /// Latency term, seconds.
    pub latency_s: f64,
    /// Bandwidth term per byte, seconds.
    pub s_per_byte: f64,
}

impl Estimate {
    /// Predicted time at `bytes`, seconds.
    pub fn time_s(&self, bytes: f64) -> f64 {
        self.latency_s + bytes * self.s_per_byte
    }
}

/// The algorithms that apply to `c` on `net` in the alpha-beta model (no protocol), in
/// NCCL's order of preference for ties.
pub fn candidates(net: &Net<'_>, c: &Collective) -> Vec<Algo> {
    let n = c.groups.first().map_or(0, Vec::len) as u32;
    let g = net.params.scale_up_gpus.max(1);
    let hier = g > 1 && n > g && domain_aligned(net, &c.groups);
    let pow2 = n.is_power_of_two();
    let mut v = Vec::new();
    match c.op {
        Some(Op::AllReduce) => {
            v.extend([Algo::Ring, Algo::Tree]);
            if pow2 {
                v.push(Algo::HalvingDoubling);
            }
            if hier {
                v.push(Algo::Hierarchical);
            }
        }
        Some(Op::ReduceScatter | Op::AllGather) => {
            v.push(Algo::Ring);
            if pow2 {
                v.push(Algo::HalvingDoubling);
            }
            if hier {
                v.push(Algo::Hierarchical);
            }
        }
        Some(Op::AllToAll) | None => v.push(Algo::Direct),
        Some(Op::Broadcast | Op::Reduce) => v.push(Algo::Ring),
    }
    v
}

/// NCCL's (algorithm, protocol) candidates for `c`: the algorithm given or, with
/// [`Algo::Auto`], ring, tree, NVLS and PAT; the protocol given or, with [`Proto::Auto`],
/// LL, LL128 and Simple; those NCCL runs at this scale. A given algorithm NCCL does not
/// model (halving-doubling, hierarchical, direct) runs without a protocol.
pub fn nccl_candidates(net: &Net<'_>, c: &Collective, proto: Proto) -> Vec<(Algo, Option<Proto>)> {
    let Some(op) = c.op else {
        return vec![(Algo::Direct, None)];
    };
    let s = scale(net, c);
    let algos: Vec<Algo> = match c.algo {
        Algo::Auto if op == Op::AllToAll => return vec![(Algo::Direct, None)],
        Algo::Auto => vec![Algo::Ring, Algo::Tree, Algo::Nvls, Algo::Pat],
        a @ (Algo::HalvingDoubling | Algo::Hierarchical | Algo::Direct) => return vec![(a, None)],
        a => vec![a],
    };
    let protos: Vec<Proto> = match proto {
        Proto::Auto => Proto::ALL.to_vec(),
        p => vec![p],
    };
    let mut v = Vec::new();
    for &a in &algos {
        for &p in &protos {
            if nccl::applies(op, a, p, s) {
                v.push((a, Some(p)));
            }
        }
    }
    v
}

/// One algorithm's calibration: `latency_s + bytes x s_per_byte` without a protocol.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Calibration {
    algo: Algo,
    latency_s: f64,
    s_per_byte: f64,
}

/// Calibrated algorithms per collective shape, reused across sizes (a sweep, a job's
/// repeated collectives, a trace).
#[derive(Default)]
pub struct Tuner {
    cache: FxHashMap<u64, Vec<Calibration>>,
    /// Times every phase's bandwidth term instead of the fluid (the packet engine).
    timer: Option<Arc<dyn PhaseTimer>>,
}

/// Size a collective of 0 bytes is calibrated at.
const CALIBRATION_BYTES: f64 = (1u64 << 20) as f64;

impl Tuner {
    /// A tuner whose simulations take each phase's bandwidth term from `timer`. Candidates
    /// are still calibrated and chosen on the fluid, as NCCL's tuner chooses from a model:
    /// only the chosen algorithm is simulated with the timer, and the candidates' times in
    /// [`CollectiveResult::tuned`] are the fluid's predictions.
    pub fn timed(timer: Arc<dyn PhaseTimer>) -> Tuner {
        Tuner {
            cache: FxHashMap::default(),
            timer: Some(timer),
        }
    }

    /// Simulate `c`; with [`Algo::Auto`] or [`Proto::Auto`], the candidate predicted
    /// fastest at its size (the result says which, and every candidate's prediction).
    pub fn simulate(
        &mut self,
        net: &Net<'_>,
        routes: &Forwarding,
        c: &Collective,
    ) -> Result<CollectiveResult, SimError> {
        let cands: Vec<(Algo, Option<Proto>)> = match c.proto {
            None if c.algo != Algo::Auto => {
                return simulate_algo(net, routes, c, c.algo, self.timer.as_deref())
            }
            None => candidates(net, c).into_iter().map(|a| (a, None)).collect(),
            Some(p) => nccl_candidates(net, c, p),
        };
        if cands.is_empty() {
            let s = scale(net, c);
            return Err(SimError::Invalid(format!(
                "NCCL runs no {} with protocol {} for {} over {} ranks in {} scale-up \
                 domain(s): nvls runs simple inside one NVSwitch domain, pat runs simple \
                 for all_gather or reduce_scatter with one GPU per domain, tree runs \
                 all_reduce; use --algo auto or ring",
                c.algo.name(),
                c.proto.map_or("none", Proto::name),
                c.op.map_or("send_recv", Op::as_str),
                s.ranks,
                s.nodes
            )));
        }
        let mut algos: Vec<Algo> = cands.iter().map(|x| x.0).collect();
        algos.dedup();
        // At a timer's level, a request none of whose candidates it could run is refused
        // before the fluid calibrates them (the chosen one is checked again when it runs).
        if let Some(t) = self.timer.as_deref() {
            let mut refused = None;
            for &a in &algos {
                match check_work(net, c, a, t) {
                    Ok(()) => {
                        refused = None;
                        break;
                    }
                    Err(e) => {
                        refused.get_or_insert(e);
                    }
                }
            }
            if let Some(e) = refused {
                return Err(e);
            }
        }
        let explicit = c.algo != Algo::Auto && c.proto != Some(Proto::Auto);
        let key = shape_key(c);
        let mut fresh: FxHashMap<Algo, CollectiveResult> = FxHashMap::default();
        let cached = self.cache.entry(key).or_default();
        let s0 = if c.bytes > 0.0 {
            c.bytes
        } else {
            CALIBRATION_BYTES
        };
        for &algo in &algos {
            if cached.iter().any(|e| e.algo == algo) {
                continue;
            }
            let at = Collective {
                bytes: s0,
                ..c.clone()
            };
            // Candidates are calibrated and chosen on the fluid (NCCL's tuner chooses from
            // a model too); only the choice is simulated with the timer.
            let r = simulate_algo(net, routes, &at, algo, None)?;
            cached.push(Calibration {
                algo,
                latency_s: r.latency_s,
                s_per_byte: ((r.time_s - r.latency_s) / s0).max(0.0),
            });
            if s0 == c.bytes && self.timer.is_none() {
                fresh.insert(algo, r);
            }
        }
        let sc = c.op.map(|_| scale(net, c));
        let mut tuned = Vec::with_capacity(cands.len());
        for &(algo, proto) in &cands {
            let cal = cached
                .iter()
                .find(|e| e.algo == algo)
                .copied()
                .expect("calibrated above");
            let bw = c.bytes * cal.s_per_byte;
            let time_s = match (proto, c.op, sc) {
                (Some(p), Some(op), Some(s)) => ProtoTerms::of(op, algo, p, s, c.bytes)
                    .map_or(f64::INFINITY, |t| t.time_s(cal.latency_s, bw)),
                _ => cal.latency_s + bw,
            };
            tuned.push(Candidate {
                algo,
                proto,
                time_s,
            });
        }
        let best = tuned
            .iter()
            .min_by(|a, b| a.time_s.total_cmp(&b.time_s))
            .copied()
            .ok_or_else(|| SimError::Invalid("no algorithm applies".into()))?;
        let r = match fresh.remove(&best.algo) {
            Some(r) => r,
            None => simulate_algo(net, routes, c, best.algo, self.timer.as_deref())?,
        };
        let mut r = match best.proto {
            Some(p) => apply(net, c, r, p)?,
            None => r,
        };
        if !explicit {
            r.tuned = tuned;
        }
        Ok(r)
    }
}

/// What a calibration depends on: everything but the size.
fn shape_key(c: &Collective) -> u64 {
    let mut h = FxHasher::default();
    c.op.map(Op::as_str).hash(&mut h);
    c.groups.hash(&mut h);
    c.channels.hash(&mut h);
    c.lb.name().hash(&mut h);
    c.seed.hash(&mut h);
    c.alpha_s.to_bits().hash(&mut h);
    h.finish()
}
