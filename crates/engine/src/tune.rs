//! Algorithm choice, as NCCL's tuner makes it: per collective and size, the applicable
//! algorithm with the lowest predicted time, predicted as a latency term plus a bandwidth
//! term.
//!
//! NCCL predicts `time = latency(algo) + bytes / bandwidth(algo)` from static tables per GPU
//! generation and topology. Here both terms come from the fabric itself: one simulation of
//! each candidate gives its latency term (per-step alpha plus the longest chain of path
//! latencies, which do not depend on the size) and its bandwidth term (the fluid makespans,
//! which scale exactly with the size: every transfer of a phase grows by the same factor
//! and max-min rates do not depend on sizes). So `time(S) = latency + S x seconds_per_byte`
//! holds for every size once calibrated, and the choice is the exact argmin of what the
//! engine would simulate, including ECMP collisions and oversubscribed tiers that a table
//! cannot know.
//!
//! Where it can differ from NCCL: NCCL chooses among ring, tree, CollNet, NVLS and PAT and
//! among protocols (LL, LL128, Simple) too, and caps tree to inter-node use; it has no
//! halving-doubling and no hierarchical ring (this model's stand-ins for NVLS-like
//! intra-node reduction). NCCL's tables are calibrated on a healthy fabric; this tuner sees
//! failures and drains, so a degraded plane can change the choice.

use crate::sim::{domain_aligned, simulate_algo, Collective, CollectiveResult, SimError};
use aifabric_dataplane::Forwarding;
use aifabric_dataplane::Net;
use aifabric_workload::collective::Op;
use aifabric_workload::schedule::Algo;
use rustc_hash::{FxHashMap, FxHasher};
use serde::Serialize;
use std::hash::{Hash, Hasher};

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

/// The algorithms that apply to `c` on `net`, in NCCL's order of preference for ties.
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

/// Calibrated estimates per collective shape, reused across sizes (a sweep, a job's
/// repeated collectives, a trace).
#[derive(Default)]
pub struct Tuner {
    cache: FxHashMap<u64, Vec<Estimate>>,
}

/// Size a collective of 0 bytes is calibrated at.
const CALIBRATION_BYTES: f64 = (1u64 << 20) as f64;

impl Tuner {
    /// Simulate `c`; if its algorithm is [`Algo::Auto`], with the candidate predicted
    /// fastest at its size (the result says which, and every candidate's prediction).
    pub fn simulate(
        &mut self,
        net: &Net<'_>,
        routes: &Forwarding,
        c: &Collective,
    ) -> Result<CollectiveResult, SimError> {
        if c.algo != Algo::Auto {
            return simulate_algo(net, routes, c, c.algo);
        }
        let key = shape_key(c);
        let mut fresh: FxHashMap<Algo, CollectiveResult> = FxHashMap::default();
        if let std::collections::hash_map::Entry::Vacant(slot) = self.cache.entry(key) {
            let s0 = if c.bytes > 0.0 {
                c.bytes
            } else {
                CALIBRATION_BYTES
            };
            let at = Collective {
                bytes: s0,
                ..c.clone()
            };
            let mut est = Vec::new();
            for algo in candidates(net, c) {
                let r = simulate_algo(net, routes, &at, algo)?;
                est.push(Estimate {
                    algo,
                    latency_s: r.latency_s,
                    s_per_byte: ((r.time_s - r.latency_s) / s0).max(0.0),
                });
                if s0 == c.bytes {
                    fresh.insert(algo, r);
                }
            }
            slot.insert(est);
        }
        let est = &self.cache[&key];
        let best = est
            .iter()
            .min_by(|a, b| a.time_s(c.bytes).total_cmp(&b.time_s(c.bytes)))
            .copied()
            .ok_or_else(|| SimError::Invalid("no algorithm applies".into()))?;
        let mut r = match fresh.remove(&best.algo) {
            Some(r) => r,
            None => simulate_algo(net, routes, c, best.algo)?,
        };
        r.tuned = est.iter().map(|e| (e.algo, e.time_s(c.bytes))).collect();
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
