//! `aifabric collective` and `aifabric job`: flags to library calls, results to tables.

use crate::Failure;
use aifabric_engine::job::{run as run_job, JobOptions, StepResult};
use aifabric_engine::sim::{
    Bottleneck, Collective, CollectiveResult, RouteCache, SimError, TierUtil,
};
use aifabric_engine::tune::Tuner;
use aifabric_engine::{Lb, Net, NetParams};
use aifabric_model::{DeviceId, Fabric, Scenario};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_workload::job::Iteration;
use aifabric_workload::{placement, Algo, Op, Placement};
use serde::Serialize;
use std::fmt::Write;

/// Flags shared by both commands.
pub struct Common {
    pub lb: Lb,
    pub seed: u64,
    pub channels: u32,
    pub plan: AsnPlan,
    pub cfg: BgpConfig,
    pub params: NetParams,
}

pub fn parse_lb(s: &str) -> Result<Lb, String> {
    Lb::parse(s).ok_or_else(|| format!("unknown load balancing `{s}`; use {}", Lb::HELP))
}

pub fn parse_placement(s: &str) -> Result<Placement, String> {
    Placement::parse(s).ok_or_else(|| format!("unknown placement `{s}`; use {}", Placement::HELP))
}

pub fn parse_op(s: &str) -> Result<Op, String> {
    match Op::parse(s) {
        Some(op @ (Op::AllReduce | Op::AllGather | Op::ReduceScatter | Op::AllToAll)) => Ok(op),
        _ => Err(format!(
            "unknown operation `{s}`; use all_reduce, all_gather, reduce_scatter or all_to_all"
        )),
    }
}

pub fn parse_algo(s: &str) -> Result<Algo, String> {
    Algo::parse(s).ok_or_else(|| {
        format!("unknown algorithm `{s}`; use auto, ring, tree, hd, direct or hierarchical")
    })
}

/// A size such as `1M`, `8G`, `512K` or `4096` (binary multiples, as nccl-tests).
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim().trim_end_matches(['B', 'b']);
    let (num, mult) = match t.chars().last()? {
        'K' | 'k' => (&t[..t.len() - 1], 1u64 << 10),
        'M' | 'm' => (&t[..t.len() - 1], 1 << 20),
        'G' | 'g' => (&t[..t.len() - 1], 1 << 30),
        'T' | 't' => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// Message sizes of a sweep, bytes.
#[derive(Clone, Debug)]
pub struct Sizes(pub Vec<u64>);

/// `MIN:MAX[:FACTOR]` (factor 2 by default) or one size.
pub fn parse_sizes(s: &str) -> Result<Sizes, String> {
    let bad =
        || format!("bad --sizes `{s}`; use MIN:MAX[:FACTOR] with sizes like 1M or 8G, e.g. 1M:8G");
    let parts: Vec<&str> = s.split(':').collect();
    let (lo, hi, fac) = match parts.as_slice() {
        [one] => {
            let v = parse_size(one).ok_or_else(bad)?;
            (v, v, 2)
        }
        [a, b] => (
            parse_size(a).ok_or_else(bad)?,
            parse_size(b).ok_or_else(bad)?,
            2,
        ),
        [a, b, c] => (
            parse_size(a).ok_or_else(bad)?,
            parse_size(b).ok_or_else(bad)?,
            c.parse::<u64>().map_err(|_| bad())?,
        ),
        _ => return Err(bad()),
    };
    if lo == 0 || hi < lo || fac < 2 {
        return Err(bad());
    }
    let mut v = Vec::new();
    let mut x = lo;
    while x <= hi && v.len() < 64 {
        v.push(x);
        x = match x.checked_mul(fac) {
            Some(y) => y,
            None => break,
        };
    }
    Ok(Sizes(v))
}

pub fn sim_failure(e: SimError) -> Failure {
    match e {
        SimError::Schedule(_) | SimError::Invalid(_) => Failure::BadArgument(e.to_string()),
        _ => Failure::Runtime(e.to_string()),
    }
}

/// One row of the collective table.
#[derive(Serialize)]
pub struct Row {
    pub bytes: u64,
    pub time_us: f64,
    pub alg_bw_gbs: f64,
    pub bus_bw_gbs: f64,
    /// Time over the healthy fabric's time (only with a scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub te_gap: Option<f64>,
    /// The algorithm simulated (the choice, with `--algo auto`).
    pub algo: Algo,
    /// With `--algo auto`: each candidate's predicted time, microseconds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub predicted_us: Vec<(Algo, f64)>,
}

/// What `aifabric collective --json` prints.
#[derive(Serialize)]
pub struct CollectiveReport {
    pub spec: String,
    pub op: Op,
    pub algorithm: Algo,
    pub gpus: u32,
    pub placement: Placement,
    pub lb: String,
    pub seed: u64,
    pub channels: u32,
    pub rows: Vec<Row>,
    /// Detail of the largest size (tiers and bottlenecks).
    pub largest: CollectiveResult,
}

pub fn place(
    f: &Fabric,
    n: u32,
    policy: Placement,
    params: &NetParams,
) -> Result<Vec<DeviceId>, Failure> {
    // Jobs are placed on the healthy fabric; a scenario then hits them where they run.
    let healthy = Scenario::healthy(f);
    placement::place(f, n, params.scale_up_gpus, policy, &healthy.unusable())
        .map_err(|e| Failure::BadArgument(e.to_string()))
}

/// Whether a scenario fails or drains anything (then results are compared with the healthy
/// fabric's).
pub fn damaged(s: &Scenario) -> bool {
    !s.unusable().is_empty() || !s.drained_soft.is_empty()
}

/// Run `aifabric collective`.
#[allow(clippy::too_many_arguments)]
pub fn collective(
    f: &Fabric,
    scenario: &Scenario,
    op: Op,
    algo: Option<Algo>,
    gpus: u32,
    policy: Placement,
    sizes: &[u64],
    alpha_s: f64,
    c: &Common,
) -> Result<CollectiveReport, Failure> {
    let algo = algo.unwrap_or(Algo::default_for(op));
    let placed = place(f, gpus, policy, &c.params)?;
    let damaged = damaged(scenario);
    let net = Net::new(f, scenario, c.plan, c.cfg, c.params);
    let routes = RouteCache::new(&net, placed.iter().copied()).map_err(sim_failure)?;
    let healthy = damaged.then(|| Net::new(f, &Scenario::healthy(f), c.plan, c.cfg, c.params));
    let healthy_routes = match &healthy {
        Some(h) => Some(RouteCache::new(h, placed.iter().copied()).map_err(sim_failure)?),
        None => None,
    };
    let mut rows = Vec::new();
    let mut largest = None;
    // One tuner per fabric: `auto` calibrates each candidate once, then picks per size.
    let (mut tuner, mut healthy_tuner) = (Tuner::default(), Tuner::default());
    let bar = crate::failures::progress_bar("sizes");
    bar.set_length(sizes.len() as u64);
    for &s in sizes {
        bar.inc(1);
        let col = Collective {
            op: Some(op),
            algo,
            groups: vec![placed.clone()],
            bytes: s as f64,
            channels: c.channels,
            lb: c.lb,
            seed: c.seed,
            alpha_s,
        };
        let r = tuner.simulate(&net, &routes, &col).map_err(sim_failure)?;
        let slowdown = match (&healthy, &healthy_routes) {
            (Some(h), Some(hr)) => {
                let base = healthy_tuner.simulate(h, hr, &col).map_err(sim_failure)?;
                Some(r.time_s / base.time_s)
            }
            _ => None,
        };
        rows.push(Row {
            bytes: s,
            time_us: r.time_s * 1e6,
            alg_bw_gbs: r.alg_bw_gbs,
            bus_bw_gbs: r.bus_bw_gbs,
            slowdown,
            te_gap: r.te_gap,
            algo: r.algo,
            predicted_us: r.tuned.iter().map(|&(a, t)| (a, t * 1e6)).collect(),
        });
        largest = Some(r);
    }
    bar.finish_and_clear();
    Ok(CollectiveReport {
        spec: f.name.clone(),
        op,
        algorithm: algo,
        gpus,
        placement: policy,
        lb: c.lb.name(),
        seed: c.seed,
        channels: c.channels,
        rows,
        largest: largest.ok_or_else(|| Failure::BadArgument("no sizes given".into()))?,
    })
}

/// The algorithm a collective ran, and with `auto` the runner-up it beat.
fn algo_note(r: &CollectiveResult) -> String {
    let runner_up = r
        .tuned
        .iter()
        .filter(|x| x.0 != r.algo)
        .min_by(|a, b| a.1.total_cmp(&b.1));
    match runner_up {
        Some((a, t)) => format!(
            "{} (auto; next best {} {:.1} us)",
            r.algo.name(),
            a.name(),
            t * 1e6
        ),
        None if !r.tuned.is_empty() => {
            format!("{} (auto; the only one that applies)", r.algo.name())
        }
        None => r.algo.name().to_string(),
    }
}

/// Why `auto` chose what it chose: every candidate's predicted time per size.
fn auto_choice(out: &mut String, rows: &[Row]) {
    let _ = writeln!(
        out,
        "\nAuto: the lowest predicted time (latency + bandwidth terms calibrated on this fabric)"
    );
    for row in rows {
        let others: Vec<String> = row
            .predicted_us
            .iter()
            .filter(|x| x.0 != row.algo)
            .map(|(a, t)| format!("{} {:.1}", a.name(), t))
            .collect();
        let _ = writeln!(
            out,
            "  {:>12} B  {} (others, us: {})",
            row.bytes,
            row.algo.name(),
            if others.is_empty() {
                "none applies".to_string()
            } else {
                others.join(", ")
            }
        );
    }
}

fn details(out: &mut String, r: &CollectiveResult) {
    let over = format!("the transfer time ({} B)", r.bytes);
    tiers_table(out, &r.tiers, &r.bottlenecks, &over);
}

/// Link utilization per tier and the busiest resources, averaged over `over`.
pub fn tiers_table(out: &mut String, tiers: &[TierUtil], bottlenecks: &[Bottleneck], over: &str) {
    let _ = writeln!(out, "\nLink utilization over {over}");
    let _ = writeln!(
        out,
        "  {:<16} {:>10} {:>8} {:>8} {:>8}",
        "tier", "resources", "max", "p99", "mean"
    );
    for t in tiers {
        let _ = writeln!(
            out,
            "  {:<16} {:>10} {:>7.1}% {:>7.1}% {:>7.1}%",
            t.tier,
            t.resources,
            t.max * 100.0,
            t.p99 * 100.0,
            t.mean * 100.0
        );
    }
    let _ = writeln!(out, "\nBusiest resources");
    for b in bottlenecks {
        let _ = writeln!(out, "  {:>6.1}%  {}", b.utilization * 100.0, b.resource);
    }
}

/// The nccl-tests-like table.
pub fn render_collective(r: &CollectiveReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# {} ({}) over {} GPUs of {}, {} placement, lb {}, seed {}, channels {}",
        r.op.as_str(),
        r.algorithm.name(),
        r.gpus,
        r.spec,
        r.placement.name(),
        r.lb,
        r.seed,
        if r.channels == 0 {
            "auto".to_string()
        } else {
            r.channels.to_string()
        }
    );
    let slow = r.rows.iter().any(|x| x.slowdown.is_some());
    let gap = r.rows.iter().any(|x| x.te_gap.is_some());
    let auto = r.algorithm == Algo::Auto;
    let _ = write!(
        out,
        "#{:>14} {:>14} {:>10} {:>10}",
        "size (B)", "time (us)", "algbw GB/s", "busbw GB/s"
    );
    if slow {
        let _ = write!(out, " {:>9}", "slowdown");
    }
    if gap {
        let _ = write!(out, " {:>9}", "TE gap");
    }
    if auto {
        let _ = write!(out, "  {:<16}", "algo");
    }
    out.push('\n');
    for row in &r.rows {
        let _ = write!(
            out,
            "{:>15} {:>14.1} {:>10.2} {:>10.2}",
            row.bytes, row.time_us, row.alg_bw_gbs, row.bus_bw_gbs
        );
        if let Some(s) = row.slowdown {
            let _ = write!(out, " {:>8.3}x", s);
        }
        if let Some(g) = row.te_gap {
            let _ = write!(out, " {:>8.1}%", g * 100.0);
        }
        if auto {
            let _ = write!(out, "  {:<16}", row.algo.name());
        }
        out.push('\n');
    }
    if auto {
        auto_choice(&mut out, &r.rows);
    }
    details(&mut out, &r.largest);
    out
}

/// What `aifabric job --json` prints.
#[derive(Serialize)]
pub struct JobReport {
    pub spec: String,
    pub placement: Placement,
    pub lb: String,
    pub seed: u64,
    pub result: StepResult,
    /// The healthy fabric's step, when a scenario was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub healthy: Option<StepResult>,
    /// Step time over the healthy one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<f64>,
}

/// Run `aifabric job`.
pub fn job(
    f: &Fabric,
    scenario: &Scenario,
    it: &Iteration,
    policy: Option<Placement>,
    c: &Common,
) -> Result<JobReport, Failure> {
    let mut params = c.params;
    params.scale_up_gpus = it.scale_up_gpus;
    params.scale_up_bytes_per_s = it.scale_up_bytes_per_s;
    let policy = policy.unwrap_or(it.placement);
    let placed = place(f, it.gpus, policy, &params)?;
    let opts = JobOptions {
        lb: c.lb,
        seed: c.seed,
        channels: c.channels,
    };
    let net = Net::new(f, scenario, c.plan, c.cfg, params);
    let result = run_job(&net, it, &placed, opts).map_err(sim_failure)?;
    let healthy = if damaged(scenario) {
        let h = Net::new(f, &Scenario::healthy(f), c.plan, c.cfg, params);
        Some(run_job(&h, it, &placed, opts).map_err(sim_failure)?)
    } else {
        None
    };
    let slowdown = healthy.as_ref().map(|h| result.step_s / h.step_s);
    Ok(JobReport {
        spec: f.name.clone(),
        placement: policy,
        lb: c.lb.name(),
        seed: c.seed,
        result,
        healthy,
        slowdown,
    })
}

fn ms(s: f64) -> String {
    format!("{:.2}", s * 1e3)
}

/// The step-time breakdown.
pub fn render_job(r: &JobReport) -> String {
    let s = &r.result;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} GPUs of {}, {} placement, lb {}",
        s.job,
        s.gpus,
        r.spec,
        r.placement.name(),
        r.lb
    );
    let _ = writeln!(
        out,
        "step {} ms = compute {} + bubble {} + exposed communication {}  ({:.0} tokens/s)",
        ms(s.step_s),
        ms(s.compute_s),
        ms(s.bubble_s),
        ms(s.exposed_comm_s),
        s.tokens_per_s
    );
    if let (Some(h), Some(x)) = (&r.healthy, r.slowdown) {
        let _ = writeln!(
            out,
            "healthy fabric: step {} ms; slowdown {:.3}x",
            ms(h.step_s),
            x
        );
        if (x - 1.0).abs() < 1e-9 {
            // Say why a failure changes nothing, rather than leave it silent.
            let mut tiers: Vec<&str> = r
                .result
                .comms
                .iter()
                .filter_map(|c| c.detail.bottlenecks.first().map(|b| b.tier.as_str()))
                .collect();
            tiers.sort_unstable();
            tiers.dedup();
            let _ = writeln!(
                out,
                "  no collective got slower: the scenario may move paths, but each collective's \
                 busiest links ({}) carry the same load as on the healthy fabric",
                tiers.join(", ")
            );
        }
    }
    let _ = writeln!(
        out,
        "\n  {:<20} {:>14} {:>7} {:>6} {:>6} {:>12} {:>10} {:>12}  algorithm",
        "collective",
        "size (B)",
        "groups",
        "ranks",
        "count",
        "time (us)",
        "busbw GB/s",
        "exposed (ms)",
    );
    for c in &s.comms {
        let _ = writeln!(
            out,
            "  {:<20} {:>14.0} {:>7} {:>6} {:>6} {:>12.1} {:>10.2} {:>12}  {}",
            c.name,
            c.bytes,
            c.groups,
            c.ranks,
            c.count,
            c.time_s * 1e6,
            c.bus_bw_gbs,
            ms(c.exposed_s),
            algo_note(&c.detail)
        );
    }
    if let Some(worst) = s
        .comms
        .iter()
        .max_by(|a, b| a.exposed_s.total_cmp(&b.exposed_s))
    {
        let _ = writeln!(out, "\nMost exposed: {}", worst.name);
        details(&mut out, &worst.detail);
    }
    out
}
