//! A maintenance plan against the running jobs ([`Study::plan`]): the order and batching of
//! operations that costs the jobs the fewest GPU-hours, beside the naive order's cost.
//!
//! **Cost.** A batch of operations runs for its longest operation's hours with everything
//! its operations take out of service out at once; meanwhile each job loses GPU-hours at
//! the rate [`Baseline::lost_gpus`] gives (an interrupted job all its GPUs, a slowed one
//! `GPUs x (1 - 1 / slowdown)`), from the jobs simulated together under the union of the
//! batch's operations ([`Study::cluster_impact`]). Batches run one after another, each
//! starting when the previous ends or, if later, when its operations' windows open, and
//! ending before any of them closes; the cost of a schedule is the sum over its batches, so
//! the order matters only through `after:` and the windows.
//!
//! **Search.** Exact (dynamic programming over the set of operations done and the time, every
//! ready batch
//! of at most `max_concurrent` operations) while the batches to simulate number at most
//! [`EXACT_BATCHES`] and the operations [`EXACT_OPS`]; beyond, greedy: operations in file order, each joining the open batch
//! when that costs less than running it alone. Either way the naive schedule (file order,
//! `max_concurrent` at a time) is a candidate, so the plan never costs more than it.

use crate::cluster::{Baseline, JobImpactRow};
use crate::{Error, Study, SCHEMA_VERSION};
use aifabric_model::Scenario;
use aifabric_spec::ops::Ops;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Batches simulated at most for an exact search.
pub const EXACT_BATCHES: usize = 64;
/// Operations at most for an exact search.
pub const EXACT_OPS: usize = 16;

/// One batch of a schedule.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanStep {
    /// Start, hours from the plan's start.
    pub start_h: f64,
    /// End, hours.
    pub end_h: f64,
    /// The operations run together.
    pub operations: Vec<String>,
    /// GPU-hours per hour the jobs lose meanwhile.
    pub lost_gpus: f64,
    /// GPU-hours lost over the batch.
    pub lost_gpu_hours: f64,
    /// The jobs it hurts.
    pub jobs: Vec<JobImpactRow>,
}

/// A schedule: batches in order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Schedule {
    /// The batches.
    pub steps: Vec<PlanStep>,
    /// Hours end to end.
    pub hours: f64,
    /// GPU-hours the jobs lose.
    pub lost_gpu_hours: f64,
    /// Whether every operation runs inside its window.
    pub meets_windows: bool,
}

/// The best schedule found and the naive one.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanReport {
    /// JSON contract version.
    pub schema_version: u32,
    /// Spec name.
    pub spec: String,
    /// Operations.
    pub operations: usize,
    /// Operations at once, at most.
    pub max_concurrent: u32,
    /// `exact` or `greedy`.
    pub search: String,
    /// What timed the jobs' collectives in each batch: the baseline's (`flow`, or `packet`
    /// or `hybrid` as `cluster --engine` runs them).
    pub engine: crate::Engine,
    /// Distinct batches simulated.
    pub batches_simulated: usize,
    /// The schedule that costs least.
    pub best: Schedule,
    /// File order, `max_concurrent` at a time.
    pub naive: Schedule,
    /// What the best saves over the naive, GPU-hours.
    pub saved_gpu_hours: f64,
    /// How the cost is counted.
    pub notes: Vec<String>,
}

/// A batch: a bitmask over the operations.
type Batch = u64;

/// A batch's simulated cost.
#[derive(Clone, Debug)]
struct Eval {
    lost_gpus: f64,
    jobs: Vec<JobImpactRow>,
}

impl Study<'_> {
    /// The schedule of `ops` that costs `base`'s jobs the fewest GPU-hours, and the naive
    /// one's cost (see the module docs for the model and the search).
    pub fn plan(&self, base: &Baseline<'_>, ops: &Ops) -> Result<PlanReport, Error> {
        let n = ops.ops.len();
        if n == 0 || n > 64 {
            return Err(Error::bad_request(format!(
                "a plan holds 1 to 64 operations, not {n}"
            )));
        }
        let k = ops.max_concurrent.max(1) as usize;
        let pred: Vec<Batch> = ops
            .ops
            .iter()
            .map(|o| o.after.iter().fold(0, |m, &j| m | 1 << j))
            .collect();
        let hours = |b: Batch| {
            (0..n)
                .filter(|&i| b >> i & 1 == 1)
                .map(|i| ops.ops[i].hours)
                .fold(0.0, f64::max)
        };
        // A batch starts when the previous one ends or, if later, when its windows open;
        // it meets its windows when it ends before they all close.
        let opens = |b: Batch| {
            (0..n)
                .filter(|&i| b >> i & 1 == 1)
                .filter_map(|i| ops.ops[i].window.map(|w| w.0))
                .fold(0.0, f64::max)
        };
        let closes = |b: Batch| {
            (0..n)
                .filter(|&i| b >> i & 1 == 1)
                .filter_map(|i| ops.ops[i].window.map(|w| w.1))
                .fold(f64::INFINITY, f64::min)
        };
        let timing = Timing {
            windowed: ops.ops.iter().any(|o| o.window.is_some()),
            opens: &opens,
            closes: &closes,
            hours: &hours,
        };
        let limits: Vec<(Batch, u32)> = ops
            .limits
            .iter()
            .map(|l| (l.ops.iter().fold(0, |m, &i| m | 1 << i), l.at_most))
            .collect();
        // A batch within the limits: at most k operations, and at most each limit's among
        // those touching its scope.
        let fits = |b: Batch| {
            b.count_ones() as usize <= k
                && limits.iter().all(|&(m, most)| (b & m).count_ones() <= most)
        };
        let naive = naive_batches(&pred, &fits, n);
        // The batches an exact search would simulate: every set within the limits none of
        // whose operations must follow another.
        let candidates = antichains(&pred, &fits, k, n, EXACT_BATCHES + 1);
        // The dynamic programming visits up to 2^n sets of operations done.
        let exact = candidates.len() <= EXACT_BATCHES && n <= EXACT_OPS;
        let mut cache: FxHashMap<Batch, Eval> = FxHashMap::default();
        let mut need: Vec<Batch> = naive.clone();
        if exact {
            need.extend(&candidates);
        } else {
            need.extend((0..n).map(|i| 1u64 << i));
        }
        self.plan_evaluate(base, ops, &mut cache, &mut need)?;
        let cost = |b: Batch, c: &FxHashMap<Batch, Eval>| hours(b) * c[&b].lost_gpus;
        let best_batches = if exact {
            exact_search(&pred, &candidates, n, &timing, |b| cost(b, &cache)).ok_or_else(|| {
                Error::bad_request(
                    "no order of the operations meets every window; widen the windows, allow \
                     more operations at once, or drop an `after:`"
                        .into(),
                )
            })?
        } else {
            // Greedy, in file order as far as `after:` allows.
            let order = topological(&pred, n);
            let mut batches: Vec<Batch> = Vec::new();
            let mut open: Batch = 0;
            for i in order {
                let b = 1u64 << i;
                let joined = open | b;
                if open != 0 && fits(joined) && pred[i] & open == 0 {
                    let mut want = vec![joined];
                    self.plan_evaluate(base, ops, &mut cache, &mut want)?;
                    if cost(joined, &cache) < cost(open, &cache) + cost(b, &cache) {
                        open = joined;
                        continue;
                    }
                }
                if open != 0 {
                    batches.push(open);
                }
                open = b;
            }
            batches.push(open);
            batches
        };
        let total = |bs: &[Batch]| bs.iter().map(|&b| cost(b, &cache)).sum::<f64>();
        let (best_meets, naive_meets) = (timing.meets(&best_batches), timing.meets(&naive));
        let best_batches = match (best_meets, naive_meets) {
            (true, true) if total(&best_batches) <= total(&naive) => best_batches,
            (true, false) => best_batches,
            (_, true) => naive.clone(),
            (false, false) => {
                return Err(Error::bad_request(
                    "neither the greedy nor the naive order meets every window; widen the \
                     windows or allow more operations at once"
                        .into(),
                ))
            }
        };
        let schedule = |bs: &[Batch]| {
            let mut t = 0.0f64;
            let steps: Vec<PlanStep> = bs
                .iter()
                .map(|&b| {
                    let h = hours(b);
                    let e = &cache[&b];
                    let start = t.max(opens(b));
                    let s = PlanStep {
                        start_h: start,
                        end_h: start + h,
                        operations: (0..n)
                            .filter(|&i| b >> i & 1 == 1)
                            .map(|i| ops.ops[i].name.clone())
                            .collect(),
                        lost_gpus: e.lost_gpus,
                        lost_gpu_hours: h * e.lost_gpus,
                        jobs: e.jobs.clone(),
                    };
                    t = start + h;
                    s
                })
                .collect();
            Schedule {
                hours: t,
                lost_gpu_hours: steps.iter().map(|s| s.lost_gpu_hours).sum::<f64>() + 0.0,
                meets_windows: timing.meets(bs),
                steps,
            }
        };
        let best = schedule(&best_batches);
        let naive = schedule(&naive);
        Ok(PlanReport {
            schema_version: SCHEMA_VERSION,
            spec: self.fabric.name().to_owned(),
            operations: n,
            max_concurrent: k as u32,
            search: if exact { "exact" } else { "greedy" }.into(),
            engine: base.engine(),
            batches_simulated: cache.len(),
            saved_gpu_hours: naive.lost_gpu_hours - best.lost_gpu_hours,
            best,
            naive,
            notes: vec![
                "a batch costs its longest operation's hours times the GPU-hours per hour the \
                 jobs lose with all its operations out at once (an interrupted job: all its \
                 GPUs; a slowed one: GPUs x (1 - 1/slowdown)); restarts after an \
                 interruption are not counted"
                    .into(),
                if exact {
                    format!(
                        "exact: every batch of at most {k} operations simulated ({} batches)",
                        cache.len()
                    )
                } else {
                    format!(
                        "greedy: more than {EXACT_BATCHES} possible batches or {EXACT_OPS} \
                         operations; each operation joins the open batch when that costs less \
                         than running it alone"
                    )
                },
            ]
            .into_iter()
            .chain((base.engine() != crate::Engine::Flow).then(|| {
                format!(
                    "each batch's jobs timed at packet level ({}) as `cluster --engine` times \
                     them: the fluid's shares, each job's collectives' phases run by the \
                     packet engine",
                    base.engine()
                )
            }))
            .collect(),
        })
    }

    /// Simulate the batches of `need` not in `cache` (in parallel).
    fn plan_evaluate(
        &self,
        base: &Baseline<'_>,
        ops: &Ops,
        cache: &mut FxHashMap<Batch, Eval>,
        need: &mut Vec<Batch>,
    ) -> Result<(), Error> {
        need.sort_unstable();
        need.dedup();
        need.retain(|b| !cache.contains_key(b));
        let evals = need
            .par_iter()
            .map(|&b| {
                let mut s = Scenario::healthy(self.fabric);
                for (i, o) in ops.ops.iter().enumerate() {
                    if b >> i & 1 == 1 {
                        s.failed.union_with(&o.scenario.failed);
                        s.drained_hard.union_with(&o.scenario.drained_hard);
                        s.drained_soft.union_with(&o.scenario.drained_soft);
                    }
                }
                let imp = self.cluster_impact(base, &s).map_err(|e| {
                    let names: Vec<&str> = (0..ops.ops.len())
                        .filter(|i| b >> i & 1 == 1)
                        .map(|i| ops.ops[i].name.as_str())
                        .collect();
                    e.prefixed(&format!("the batch {}: ", names.join(" + ")))
                })?;
                Ok((
                    b,
                    Eval {
                        lost_gpus: base.lost_gpus(&imp),
                        jobs: base.hurt(imp),
                    },
                ))
            })
            .collect::<Vec<Result<_, Error>>>();
        // The first batch that failed, in batch order (whichever thread ran it).
        for e in evals {
            let (b, eval) = e?;
            cache.insert(b, eval);
        }
        need.clear();
        Ok(())
    }
}

/// File order, as many at a time as `fits` allows; an operation whose predecessor is in the
/// open batch waits for the next one.
fn naive_batches(pred: &[Batch], fits: &dyn Fn(Batch) -> bool, n: usize) -> Vec<Batch> {
    let mut out = Vec::new();
    let mut done: Batch = 0;
    let mut left: Vec<usize> = (0..n).collect();
    while !left.is_empty() {
        let mut open: Batch = 0;
        let mut rest = Vec::new();
        for &i in &left {
            if fits(open | 1 << i) && pred[i] & !done == 0 {
                open |= 1 << i;
            } else {
                rest.push(i);
            }
        }
        out.push(open);
        done |= open;
        left = rest;
    }
    out
}

/// Every set of 1..=k operations that `fits` and none of which must follow another
/// (directly or not), up to `limit` of them.
fn antichains(
    pred: &[Batch],
    fits: &dyn Fn(Batch) -> bool,
    k: usize,
    n: usize,
    limit: usize,
) -> Vec<Batch> {
    // Transitive predecessors.
    let mut anc = pred.to_vec();
    for _ in 0..n {
        for i in 0..n {
            let mut a = anc[i];
            for j in 0..n {
                if anc[i] >> j & 1 == 1 {
                    a |= anc[j];
                }
            }
            anc[i] = a;
        }
    }
    // Related: one must follow the other.
    let related = |i: usize, set: Batch| {
        anc[i] & set != 0 || (0..n).any(|j| set >> j & 1 == 1 && anc[j] >> i & 1 == 1)
    };
    let mut out: Vec<Batch> = Vec::new();
    // Sets of the current size, each with its highest operation.
    let mut level: Vec<(Batch, usize)> = vec![(0, 0)];
    for size in 0..k {
        let mut next = Vec::new();
        for &(set, last) in &level {
            let from = if size == 0 { 0 } else { last + 1 };
            for i in from..n {
                // A set over a limit stays over it with more operations: not grown.
                if related(i, set) || !fits(set | 1 << i) {
                    continue;
                }
                if out.len() >= limit {
                    return out;
                }
                out.push(set | 1 << i);
                next.push((set | 1 << i, i));
            }
        }
        level = next;
    }
    out
}

/// Operations in an order that respects `after:` (file order among the ready ones).
fn topological(pred: &[Batch], n: usize) -> Vec<usize> {
    let mut done: Batch = 0;
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let i = (0..n)
            .find(|&i| done >> i & 1 == 0 && pred[i] & !done == 0)
            .expect("the operations file has no cycle");
        out.push(i);
        done |= 1 << i;
    }
    out
}

/// When batches may run: their windows open and close, their hours.
struct Timing<'a> {
    /// Whether any operation has a window (else the time does not matter to the search).
    windowed: bool,
    opens: &'a dyn Fn(Batch) -> f64,
    closes: &'a dyn Fn(Batch) -> f64,
    hours: &'a dyn Fn(Batch) -> f64,
}

impl Timing<'_> {
    /// Batch `b` after time `t`: its end, or `None` when it would end after a window closes.
    fn run(&self, b: Batch, t: f64) -> Option<f64> {
        let end = t.max((self.opens)(b)) + (self.hours)(b);
        (end <= (self.closes)(b)).then_some(end)
    }

    /// Whether the batches, one after another from time 0, meet every window.
    fn meets(&self, bs: &[Batch]) -> bool {
        let mut t = 0.0;
        bs.iter().all(|&b| match self.run(b, t) {
            Some(end) => {
                t = end;
                true
            }
            None => false,
        })
    }
}

/// The cheapest sequence of ready batches from `candidates` that does every operation and
/// meets every window: dynamic programming over (the set done, the time); `None` when no
/// sequence meets the windows.
fn exact_search(
    pred: &[Batch],
    candidates: &[Batch],
    n: usize,
    timing: &Timing<'_>,
    cost: impl Fn(Batch) -> f64,
) -> Option<Vec<Batch>> {
    let all: Batch = if n == 64 { u64::MAX } else { (1 << n) - 1 };
    /// What the recursion reads; its memo: (done, time) -> (cost to finish, next batch).
    struct Search<'s> {
        all: Batch,
        pred: &'s [Batch],
        candidates: &'s [Batch],
        timing: &'s Timing<'s>,
        cost: &'s dyn Fn(Batch) -> f64,
        memo: FxHashMap<(Batch, u64), (f64, Batch)>,
    }
    impl Search<'_> {
        fn go(&mut self, done: Batch, t: f64) -> f64 {
            if done == self.all {
                return 0.0;
            }
            if let Some(&(c, _)) = self.memo.get(&(done, t.to_bits())) {
                return c;
            }
            let mut best = (f64::INFINITY, 0);
            for k in 0..self.candidates.len() {
                let b = self.candidates[k];
                if b & done != 0 {
                    continue;
                }
                let ready = (0..self.pred.len())
                    .filter(|&i| b >> i & 1 == 1)
                    .all(|i| self.pred[i] & !done == 0);
                let Some(end) = self.timing.run(b, t).filter(|_| ready) else {
                    continue;
                };
                // Without windows every time is as good: one state per set done.
                let next = if self.timing.windowed { end } else { 0.0 };
                let c = (self.cost)(b) + self.go(done | b, next);
                if c < best.0 {
                    best = (c, b);
                }
            }
            self.memo.insert((done, t.to_bits()), best);
            best.0
        }
    }
    let mut search = Search {
        all,
        pred,
        candidates,
        timing,
        cost: &cost,
        memo: FxHashMap::default(),
    };
    if search.go(0, 0.0).is_infinite() {
        return None;
    }
    let memo = search.memo;
    let mut out = Vec::new();
    let (mut done, mut t) = (0, 0.0f64);
    while done != all {
        let b = memo[&(done, t.to_bits())].1;
        out.push(b);
        done |= b;
        let end = timing
            .run(b, t)
            .expect("the search kept only batches that meet their windows");
        t = if timing.windowed { end } else { 0.0 };
    }
    Some(out)
}
