//! Centralized traffic engineering: a controller that knows every flow and its candidate
//! paths assigns each flow to one path so as to minimize the busiest link (the min-max
//! multicommodity problem restricted to candidate paths, as Meta's RoCE controller places
//! flows from topology and job placement; Gangidi et al., SIGCOMM 2024).
//!
//! [`assign`] is greedy: largest flows first, each on the candidate whose busiest resource
//! would be least loaded afterwards (the classic LPT-style heuristic). [`lp_gap`] solves the
//! fractional relaxation exactly (good_lp with the pure-Rust microlp solver) on small
//! instances and reports how far the greedy maximum is above it: the LP is a lower bound
//! on any assignment, so the gap bounds the heuristic's loss.

use good_lp::{
    constraint, default_solver, variable, Expression, ProblemVariables, Solution, SolverModel,
};
use rustc_hash::FxHashMap;

/// A TE assignment.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// Candidate chosen per flow.
    pub picks: Vec<usize>,
    /// Largest load / capacity (seconds of transfer on the busiest resource).
    pub max_util: f64,
}

/// Candidates of flow `i`: `cands[i][k]` is a list of (resource, share).
pub type Candidates = [Vec<Vec<(u32, f64)>>];

/// Greedy min-max assignment.
pub fn assign(cands: &Candidates, bytes: &[f64], cap: impl Fn(u32) -> f64) -> Assignment {
    let mut order: Vec<usize> = (0..cands.len()).collect();
    order.sort_by(|&a, &b| bytes[b].total_cmp(&bytes[a]).then(a.cmp(&b)));
    let mut load: FxHashMap<u32, f64> = FxHashMap::default();
    let mut caps: FxHashMap<u32, f64> = FxHashMap::default();
    let mut picks = vec![0usize; cands.len()];
    for i in order {
        let mut best = (f64::INFINITY, 0usize);
        for (k, path) in cands[i].iter().enumerate() {
            let worst = path
                .iter()
                .map(|&(r, s)| {
                    let c = *caps.entry(r).or_insert_with(|| cap(r));
                    (load.get(&r).copied().unwrap_or(0.0) + s * bytes[i]) / c
                })
                .fold(0.0f64, f64::max);
            if worst < best.0 {
                best = (worst, k);
            }
        }
        picks[i] = best.1;
        for &(r, s) in cands[i].get(best.1).map_or(&[][..], |p| &p[..]) {
            *load.entry(r).or_default() += s * bytes[i];
        }
    }
    let max_util = load.iter().map(|(r, l)| l / caps[r]).fold(0.0f64, f64::max);
    Assignment { picks, max_util }
}

/// Largest instance (candidate paths) [`lp_gap`] solves.
pub const LP_MAX_PATHS: usize = 2_000;

/// `greedy_max / lp_optimum - 1` when the instance has at most [`LP_MAX_PATHS`] candidate
/// paths and more than one choice somewhere; `None` otherwise.
pub fn lp_gap(
    cands: &Candidates,
    bytes: &[f64],
    cap: impl Fn(u32) -> f64,
    greedy_max: f64,
) -> Option<f64> {
    let paths: usize = cands.iter().map(Vec::len).sum();
    if paths > LP_MAX_PATHS || cands.iter().all(|c| c.len() <= 1) {
        return None;
    }
    let opt = lp_optimum(cands, bytes, cap)?;
    (opt > 0.0).then(|| greedy_max / opt - 1.0)
}

/// The fractional optimum of the min-max problem over the candidate paths.
pub fn lp_optimum(cands: &Candidates, bytes: &[f64], cap: impl Fn(u32) -> f64) -> Option<f64> {
    let mut vars = ProblemVariables::new();
    let u = vars.add(variable().min(0.0));
    let x: Vec<Vec<_>> = cands
        .iter()
        .map(|c| {
            c.iter()
                .map(|_| vars.add(variable().min(0.0).max(1.0)))
                .collect()
        })
        .collect();
    let mut per_res: FxHashMap<u32, Expression> = FxHashMap::default();
    for (i, c) in cands.iter().enumerate() {
        for (k, path) in c.iter().enumerate() {
            for &(r, s) in path {
                *per_res.entry(r).or_default() += (s * bytes[i]) * x[i][k];
            }
        }
    }
    let mut model = vars.minimise(u).using(default_solver);
    for xi in &x {
        if !xi.is_empty() {
            let sum: Expression = xi.iter().copied().sum();
            model = model.with(constraint!(sum == 1.0));
        }
    }
    let mut res: Vec<(u32, Expression)> = per_res.into_iter().collect();
    res.sort_by_key(|e| e.0);
    for (r, load) in res {
        let c = cap(r);
        if c > 0.0 {
            model = model.with(constraint!(load <= c * u));
        }
    }
    let sol = model.solve().ok()?;
    Some(sol.value(u))
}
