//! `aifabric traffic`: a traffic matrix (htsim's format, CSV, or a generated pattern) on the
//! fabric, event by event; flow completion times and link utilization out.

use crate::simulate::{damaged, place, sim_failure, Common};
use crate::Failure;
use aifabric_engine::traffic::{run, TrafficResult};
use aifabric_engine::Net;
use aifabric_model::{Fabric, Scenario};
use aifabric_workload::traffic::{Pattern, TrafficMatrix};
use aifabric_workload::Placement;
use serde::Serialize;
use std::fmt::Write;

/// Where the matrix comes from.
pub enum Source {
    /// A file (htsim `.cm`, or `.csv`).
    File(String),
    /// A generator over `gpus` GPUs, flows of `bytes`.
    Pattern {
        pattern: Pattern,
        gpus: u32,
        bytes: u64,
    },
}

/// What `aifabric traffic --json` prints.
#[derive(Serialize)]
pub struct TrafficReport {
    pub spec: String,
    /// The file, or the pattern.
    pub source: String,
    pub gpus: u32,
    pub placement: Placement,
    pub lb: String,
    pub seed: u64,
    pub result: TrafficResult,
    /// Makespan over the healthy fabric's (only with a scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<f64>,
    /// P99 FCT over the healthy fabric's (only with a scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_slowdown: Option<f64>,
}

/// Run `aifabric traffic`.
pub fn traffic(
    f: &Fabric,
    scenario: &Scenario,
    source: &Source,
    gpus: Option<u32>,
    policy: Placement,
    c: &Common,
) -> Result<TrafficReport, Failure> {
    let (tm, name): (TrafficMatrix, String) = match source {
        Source::File(path) => (
            aifabric_workload::traffic::load(path)
                .map_err(|e| Failure::BadArgument(e.to_string()))?,
            path.clone(),
        ),
        Source::Pattern {
            pattern,
            gpus,
            bytes,
        } => {
            if *gpus < pattern.min_nodes() {
                return Err(Failure::BadArgument(format!(
                    "--pattern needs at least {} GPUs; raise --gpus",
                    pattern.min_nodes()
                )));
            }
            let n = pattern.flow_count(*gpus);
            if n > aifabric_workload::traffic::MAX_FLOWS as u64 {
                return Err(Failure::BadArgument(format!(
                    "the pattern makes {n} flows, over the limit of {}; use fewer GPUs",
                    aifabric_workload::traffic::MAX_FLOWS
                )));
            }
            (
                pattern.generate(*gpus, *bytes, c.seed),
                pattern_name(*pattern, *bytes),
            )
        }
    };
    let n = gpus.unwrap_or(tm.nodes).max(tm.nodes);
    let placed = place(f, n, policy, &c.params)?;
    let net = Net::new(f, scenario, c.plan, c.cfg, c.params);
    let result = run(&net, &tm, &placed, c.lb, c.seed).map_err(sim_failure)?;
    let (mut slowdown, mut p99_slowdown) = (None, None);
    if damaged(scenario) {
        let h = Net::new(f, &Scenario::healthy(f), c.plan, c.cfg, c.params);
        let base = run(&h, &tm, &placed, c.lb, c.seed).map_err(sim_failure)?;
        slowdown = Some(result.makespan_s / base.makespan_s);
        p99_slowdown = Some(result.fct.p99_s / base.fct.p99_s);
    }
    Ok(TrafficReport {
        spec: f.name.clone(),
        source: name,
        gpus: n,
        placement: policy,
        lb: c.lb.name(),
        seed: c.seed,
        result,
        slowdown,
        p99_slowdown,
    })
}

fn pattern_name(p: Pattern, bytes: u64) -> String {
    let kind = match p {
        Pattern::Permutation => "permutation".to_string(),
        Pattern::Incast(n) => format!("incast:{n}"),
        Pattern::AllToAll => "all-to-all".to_string(),
        Pattern::Random(n) => format!("random:{n}"),
    };
    format!("{kind}, {bytes} B per flow")
}

fn us(s: f64) -> String {
    format!("{:.3}", s * 1e6)
}

/// The table.
pub fn render(r: &TrafficReport) -> String {
    let x = &r.result;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# traffic {} on {} GPUs of {}, {} placement, lb {}, seed {}",
        r.source,
        r.gpus,
        r.spec,
        r.placement.name(),
        r.lb,
        r.seed
    );
    let _ = writeln!(
        o,
        "{} flows, {:.3} GB; makespan {} us; {} rate re-solves (a flow leaving re-solves only flows at least as fast)",
        x.flows,
        x.bytes / 1e9,
        us(x.makespan_s),
        x.events
    );
    if x.never_started > 0 {
        let _ = writeln!(
            o,
            "{} flows never completed (waiting on a trigger that never fired)",
            x.never_started
        );
    }
    let _ = writeln!(o, "\nFlow completion time (us)");
    let _ = writeln!(
        o,
        "  {:>12} {:>12} {:>12} {:>12} {:>12}",
        "min", "p50", "p99", "max", "mean"
    );
    let _ = writeln!(
        o,
        "  {:>12} {:>12} {:>12} {:>12} {:>12}",
        us(x.fct.min_s),
        us(x.fct.p50_s),
        us(x.fct.p99_s),
        us(x.fct.max_s),
        us(x.fct.mean_s)
    );
    if let (Some(s), Some(p)) = (r.slowdown, r.p99_slowdown) {
        let _ = writeln!(
            o,
            "  against the healthy fabric: makespan x{s:.3}, p99 FCT x{p:.3}"
        );
    }
    let _ = writeln!(o, "\nSlowest flows");
    for s in &x.slowest {
        let _ = writeln!(
            o,
            "  {:>12} us  id {:<8} {} ({} B, start {} us)",
            us(s.fct_s),
            s.id,
            s.pair,
            s.bytes,
            us(s.start_s)
        );
    }
    crate::simulate::tiers_table(&mut o, &x.tiers, &x.bottlenecks, "the makespan");
    o
}
