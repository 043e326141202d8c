//! `aifabric cluster`: many jobs on one fabric.

use crate::args::{ClusterArgs, PlanArgs};
use crate::{emit, load, Failure};
use aifabric::cluster::{ClusterReport, Impact};
use aifabric::plan::{PlanReport, Schedule};
use aifabric::stages::spec;
use std::fmt::Write;

pub(crate) fn run(a: ClusterArgs) -> Result<(), Failure> {
    let ClusterArgs {
        spec: spec_name,
        jobs,
        json,
        packet,
        sim,
        scenario,
        bgp,
    } = a;
    sim.setup_for_jobs(&bgp, "cluster")?;
    let (cfg, setup) = super::engine_setup(&sim, &packet, &bgp)?;
    let mut f = load(&spec_name)?;
    let cluster = spec::cluster::load_cluster(&f, &jobs).map_err(Failure::BadInput)?;
    let state = scenario.resolve(&mut f)?;
    let study = aifabric::Study::new(&f, state, setup);
    let report = match &cfg {
        Some(cfg) => super::with_phase_counter(|progress| {
            study.cluster_packet(&cluster, cfg, packet.engine, Some(progress))
        })?,
        None => study.cluster(&cluster)?,
    };
    emit(json, &report, render)
}

pub(crate) fn plan(a: PlanArgs) -> Result<(), Failure> {
    let PlanArgs {
        spec: spec_name,
        jobs,
        ops,
        json,
        packet,
        sim,
        bgp,
    } = a;
    sim.setup_for_jobs(&bgp, "plan")?;
    let (cfg, setup) = super::engine_setup(&sim, &packet, &bgp)?;
    let f = load(&spec_name)?;
    let cluster = spec::cluster::load_cluster(&f, &jobs).map_err(Failure::BadInput)?;
    let ops = spec::ops::load_ops(&f, &ops).map_err(Failure::BadInput)?;
    let study = aifabric::Study::healthy(&f, setup);
    let report = match &cfg {
        Some(cfg) => super::with_phase_counter(|progress| {
            study
                .cluster_baseline_packet(&cluster, cfg, packet.engine, Some(progress))
                .and_then(|base| study.plan(&base, &ops))
        })?,
        None => study.plan(&study.cluster_baseline(&cluster)?, &ops)?,
    };
    emit(json, &report, render_plan)
}

/// `s` in at most `n` characters (an ellipsis at the end when cut).
pub(crate) fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(n - 3).collect();
        t.push_str("...");
        t
    }
}

/// What timed the jobs' collectives, when not the flow engine.
fn packet_level(e: aifabric::Engine) -> String {
    match e {
        aifabric::Engine::Flow => String::new(),
        e => format!(", collectives at packet level ({e})"),
    }
}

/// One impact in a few words.
pub(crate) fn impact_words(job: &str, i: &Impact) -> String {
    match i {
        Impact::Interrupted { lost_gpus: 0, .. } => format!("{job} stopped (no path)"),
        Impact::Interrupted { lost_gpus, .. } => {
            format!("{job} stopped ({lost_gpus} GPUs cut off)")
        }
        Impact::Slowed { slowdown, .. } => format!("{job} {slowdown:.4}x"),
        Impact::Untouched { .. } => job.to_owned(),
    }
}

fn render_schedule(out: &mut String, s: &Schedule) {
    for st in &s.steps {
        let who: Vec<String> = st
            .jobs
            .iter()
            .map(|j| impact_words(&j.job, &j.impact))
            .collect();
        let _ = writeln!(
            out,
            "  {:>6.1} - {:>6.1} h  {:<40} {:>12.1}  {}",
            st.start_h,
            st.end_h,
            st.operations.join(" + "),
            st.lost_gpu_hours,
            if who.is_empty() {
                "no job hurt".to_owned()
            } else {
                who.join(", ")
            }
        );
    }
    let _ = writeln!(
        out,
        "  total {:.1} h, {:.1} GPU-hours lost",
        s.hours, s.lost_gpu_hours
    );
}

/// The best schedule, then the naive one, and what the best saves.
pub(crate) fn render_plan(r: &PlanReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} operations, at most {} at once; {} search, {} batches simulated{}",
        r.spec,
        r.operations,
        r.max_concurrent,
        r.search,
        r.batches_simulated,
        packet_level(r.engine)
    );
    let _ = writeln!(
        out,
        "\nBest schedule                                                    GPU-hours lost"
    );
    render_schedule(&mut out, &r.best);
    let _ = writeln!(
        out,
        "\nNaive (file order, {} at a time){}",
        r.max_concurrent,
        if r.naive.meets_windows {
            ""
        } else {
            ": misses a window"
        }
    );
    render_schedule(&mut out, &r.naive);
    let _ = writeln!(
        out,
        "\nthe best saves {:.1} GPU-hours over the naive order{}",
        r.saved_gpu_hours,
        if r.saved_gpu_hours <= 0.0 {
            " (the naive order is already the cheapest)"
        } else {
            ""
        }
    );
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// The per-job table, who slows whom, the busiest shared links.
pub(crate) fn render(r: &ClusterReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} jobs on {} of {} GPUs, lb {}{}",
        r.spec,
        r.jobs.len(),
        r.gpus_used,
        r.gpus_total,
        r.lb,
        packet_level(r.engine)
    );
    let scenario = r.jobs.iter().any(|j| j.impact.is_some());
    let _ = write!(
        out,
        "\n  {:<24} {:>7}  {:<32} {:>10} {:>10} {:>9} {:>6}",
        "job", "GPUs", "placed", "alone ms", "shared ms", "slowdown", "MFU"
    );
    if scenario {
        let _ = write!(out, "  {:>11} {:>9}", "scenario ms", "slowdown");
    }
    out.push('\n');
    for j in &r.jobs {
        let _ = write!(
            out,
            "  {:<24} {:>7}  {:<32} {:>10.2} {:>10.2} {:>8.3}x {:>5.1}%",
            j.name,
            j.gpus,
            short(&j.placed_by, 32),
            j.alone_step_s * 1e3,
            j.together_step_s * 1e3,
            j.interference_slowdown,
            j.mfu * 100.0
        );
        if let Some(i) = &j.impact {
            match i {
                Impact::Interrupted { .. } => {
                    let _ = write!(out, "  {:>11} {:>9}", "-", "stopped");
                }
                Impact::Untouched { .. } => {
                    let _ = write!(
                        out,
                        "  {:>11.2} {:>8.3}x",
                        j.scenario_step_s.unwrap_or(f64::NAN) * 1e3,
                        1.0
                    );
                }
                Impact::Slowed { slowdown, .. } => {
                    let _ = write!(
                        out,
                        "  {:>11.2} {:>8.3}x",
                        j.scenario_step_s.unwrap_or(f64::NAN) * 1e3,
                        slowdown
                    );
                }
            }
        }
        out.push('\n');
    }
    if scenario {
        let _ = writeln!(out, "\nUnder the scenario");
        for j in &r.jobs {
            let line = match j.impact.as_ref() {
                Some(Impact::Interrupted { lost_gpus, why }) => {
                    format!("interrupted ({lost_gpus} GPUs lost): {why}")
                }
                Some(Impact::Untouched { why }) => format!("untouched: {why}"),
                Some(Impact::Slowed { slowdown, why }) => {
                    format!("{slowdown:.3}x: {why}")
                }
                None => continue,
            };
            let _ = writeln!(out, "  {:<24} {line}", j.name);
        }
    }
    if r.interference.is_empty() {
        let _ = writeln!(
            out,
            "\nNo job slows another: no two jobs load the same link (or none is busy enough)"
        );
    } else {
        let _ = writeln!(
            out,
            "\nWho slows whom (healthy; the victim's extra step time split by the capacity each \
             other job takes on its links)"
        );
        for x in r.interference.iter().take(10) {
            let _ = writeln!(
                out,
                "  {:<24} by {:<24} +{:>8.2} ms over {} shared resources, most at {}",
                x.victim,
                x.by,
                x.extra_s * 1e3,
                x.shared_resources,
                x.worst
            );
        }
    }
    if !r.shared.is_empty() {
        let _ = writeln!(out, "\nBusiest shared resources (jobs together, healthy)");
        for s in r.shared.iter().take(5) {
            let jobs: Vec<String> = s
                .by_job
                .iter()
                .map(|(n, gb)| format!("{n} {gb:.1} GB/s"))
                .collect();
            let _ = writeln!(
                out,
                "  {:>6.1}%  {} ({}, {:.0} GB/s): {}",
                s.resource.utilization * 100.0,
                s.resource.name,
                s.resource.tier,
                s.resource.capacity_gbytes_per_s,
                jobs.join(", ")
            );
        }
    }
    let _ = writeln!(
        out,
        "\nfixed point: {} rounds{}",
        r.rounds,
        if r.converged { "" } else { " (not converged)" }
    );
    for n in &r.notes {
        let _ = writeln!(out, "note: {}", n.text);
    }
    out
}

/// What the network as built costs each job (`drift --jobs`).
pub(crate) fn job_costs(costs: &[aifabric::as_built::JobCost]) -> String {
    let mut o = String::from("\nThe jobs on the network as built (against the plan)\n");
    let _ = writeln!(
        o,
        "  {:<26} {:>7} {:>12} {:>12}  impact",
        "job", "GPUs", "plan ms", "as built ms"
    );
    for c in costs {
        let why = match &c.impact {
            Impact::Untouched { why }
            | Impact::Slowed { why, .. }
            | Impact::Interrupted { why, .. } => why,
        };
        let _ = writeln!(
            o,
            "  {:<26} {:>7} {:>12.2} {:>12}  {}: {}",
            short(&c.name, 26),
            c.gpus,
            c.planned_step_s * 1e3,
            c.as_built_step_s
                .map_or_else(|| "-".to_owned(), |s| format!("{:.2}", s * 1e3)),
            match &c.impact {
                Impact::Untouched { .. } => "untouched".to_owned(),
                other => impact_words("", other).trim().to_owned(),
            },
            short(why, 70)
        );
    }
    o
}
