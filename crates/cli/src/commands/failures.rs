//! `aifabric failures`: the library's sweep with a progress bar.

use crate::Failure;
use aifabric::failures::planar_vs_spread_sweep;
use aifabric::failures::Comparison;
use aifabric::failures::FailureReport;
use aifabric::model::Fabric;
use aifabric::stages::spec::{build_inter_bag, spec::InterBagTopology};
use aifabric::{FailureRequest, Setup, Study};

/// Run the sweep on one fabric.
pub fn sweep(
    f: &Fabric,
    state: aifabric::model::Scenario,
    setup: Setup,
    req: &FailureRequest,
) -> Result<FailureReport, Failure> {
    let bar = crate::progress::Progress::bar("scenarios");
    let tick = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let report = Study::new(f, state, setup).failures(req, &tick)?;
    bar.finish_and_clear();
    Ok(report)
}

/// Run the sweep on the planar and the spread build of a spec.
pub fn compare(
    name: &str,
    text: &str,
    setup: &Setup,
    req: &FailureRequest,
) -> Result<Comparison, Failure> {
    let planar =
        build_inter_bag(name, text, InterBagTopology::Planar).map_err(Failure::BadInput)?;
    let spread =
        build_inter_bag(name, text, InterBagTopology::Spread).map_err(Failure::BadInput)?;
    let bar = crate::progress::Progress::bar("scenarios (planar, then spread)");
    let tick = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let cmp = planar_vs_spread_sweep(&planar, &spread, setup, req, &tick)?;
    bar.finish_and_clear();
    Ok(cmp)
}

/// The sweep on the healthy fabric, then its scenarios ranked by the jobs they hurt.
pub fn jobs_at_risk(
    f: &Fabric,
    setup: Setup,
    req: &FailureRequest,
    cluster: &aifabric::stages::workload::cluster::Cluster,
    simulate: usize,
) -> Result<aifabric::at_risk::AtRiskReport, Failure> {
    let study = Study::healthy(f, setup);
    let base = study.cluster_baseline(cluster)?;
    let report = sweep(f, aifabric::model::Scenario::healthy(f), setup, req)?;
    Ok(study.jobs_at_risk(&base, &report, simulate, usize::MAX)?)
}

/// The scenarios that hurt the jobs most, then each job's exposure.
pub fn render_at_risk(r: &aifabric::at_risk::AtRiskReport, top: usize) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} scenarios ({}) against {} jobs; {} hurt no job, {} simulated in full",
        r.spec,
        r.scenarios,
        r.sweep,
        r.jobs.len(),
        r.harmless,
        r.simulated
    );
    let _ = writeln!(
        out,
        "\n  {:<40} {:>11} {:>12} {:>10}  jobs",
        "scenario", "interrupted", "exposed", "lost GPUs"
    );
    for row in r.rows.iter().take(top) {
        let mut who: Vec<String> = row
            .interrupted
            .iter()
            .map(|(n, g)| format!("{n} stopped ({g} GPUs cut off)"))
            .collect();
        match &row.simulated {
            Some(sim) => who.extend(sim.iter().filter_map(|x| match &x.impact {
                aifabric::cluster::Impact::Slowed { slowdown, .. } => {
                    Some(format!("{} {slowdown:.3}x", x.job))
                }
                _ => None,
            })),
            None => who.extend(
                row.exposed
                    .iter()
                    .take(3)
                    .map(|(n, s)| format!("{n} {:.1}% of its bytes", s * 100.0)),
            ),
        }
        let lost = row
            .lost_gpus
            .map_or_else(|| "-".to_owned(), |l| format!("{l:.0}"));
        let _ = writeln!(
            out,
            "  {:<40} {:>11} {:>12.0} {:>10}  {}",
            super::cluster::short(&row.scenario, 40),
            row.interrupted_gpus,
            row.exposed_gpus,
            lost,
            if who.is_empty() {
                "none".to_owned()
            } else {
                who.join(", ")
            }
        );
    }
    let simulated: Vec<_> = r.rows.iter().filter(|x| x.simulated.is_some()).collect();
    if !simulated.is_empty() {
        let _ = writeln!(
            out,
            "\nSimulated in full (the most exposing): GPU-hours lost per hour, and each job hurt"
        );
        for row in simulated {
            let who: Vec<String> = row
                .simulated
                .iter()
                .flatten()
                .map(|x| super::cluster::impact_words(&x.job, &x.impact))
                .collect();
            let _ = writeln!(
                out,
                "  {:<40} {:>10.1}  {}",
                super::cluster::short(&row.scenario, 40),
                row.lost_gpus.unwrap_or(0.0),
                if who.is_empty() {
                    "no job slowed".to_owned()
                } else {
                    who.join(", ")
                }
            );
        }
    }
    let _ = writeln!(
        out,
        "\n  {:<24} {:>7} {:>15} {:>11}  first interrupting",
        "job", "GPUs", "interrupted by", "exposed to"
    );
    for j in &r.jobs {
        let _ = writeln!(
            out,
            "  {:<24} {:>7} {:>15} {:>11}  {}",
            j.job,
            j.gpus,
            j.interrupted_by,
            j.exposed_to,
            super::cluster::short(j.first_interrupting.as_deref().unwrap_or("-"), 60)
        );
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}
