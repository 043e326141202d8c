//! `aifabric demo`: the main job on the built-in `prometheus`, end to end: build, capacity,
//! the single-SRG failure sweep, a reference training job healthy and under the failure that
//! slows it most of the worst few it survives (chosen by running it under each), what helps
//! there (spraying instead of hashing), and the HTML report with the job in it, those three
//! runs included.

use crate::Failure;
use aifabric::model::Scenario;
use aifabric::stages::spec;
use aifabric::Placement;
use serde::Serialize;
use std::path::Path;

/// Survivable failures the demo runs its job under, worst first by capacity.
const TRIED: usize = 3;

/// The reference job: Llama 3 405B on 16,384 GPUs with its paper's settings (examples/jobs/).
const JOB: &str = include_str!("../../../../examples/jobs/llama3-405b-16k.yaml");

/// What `aifabric demo --json` prints.
#[derive(Serialize)]
pub struct DemoSummary {
    pub spec: String,
    /// The maintenance state every step started from, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starting_state: Option<String>,
    pub gpus: u64,
    pub switches: u64,
    pub links: u64,
    pub inter_region_tbps: f64,
    pub scenarios: usize,
    pub worst: Option<String>,
    pub worst_capacity_retained: f64,
    pub job: String,
    pub job_step_s: f64,
    pub job_failure: Option<String>,
    pub job_step_under_failure_s: Option<f64>,
    pub job_slowdown: Option<f64>,
    /// The load balancing that shortens the step most under that failure, and its step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mitigation: Option<(String, f64)>,
    pub report: String,
}

/// Run the demo, printing as it goes unless `json`, from the maintenance state `state`
/// (none: the healthy fabric).
pub fn run(
    out: &Path,
    quiet: bool,
    json: bool,
    state: &crate::args::ScenarioArgs,
) -> Result<DemoSummary, Failure> {
    super::check_report_files(out)?;
    let say = |s: String| {
        if json {
            Ok(())
        } else {
            crate::print_line(&s)
        }
    };
    let hide = quiet || json;
    if hide {
        crate::progress::quiet();
    }
    let bar = crate::progress::Progress::bar;
    let mut f = spec::load("prometheus").map_err(Failure::BadInput)?;
    let setup = aifabric::Setup::default();
    let start = state.resolve(&mut f)?;
    let description = state.describe();
    // Refuse a soft drain before any work (a sweep cannot start from one).
    let starting = aifabric::failures::starting_state(&start, &description)?;
    if let Some(st) = &starting {
        say(format!(
            "starting state: {}; every step below starts from it",
            st.description
        ))?;
    }
    let study = aifabric::Study::new(&f, start.clone(), setup);
    let cap = study.capacity().report;
    let inter: f64 = cap.region_pairs.iter().map(|p| p.capacity_tbps).sum();
    say(format!(
        "1/5 built prometheus: {} GPUs, {} switches, {} links, {:.1} MW; {:.1} Pb/s between the regions",
        cap.gpus,
        cap.switches,
        cap.links,
        cap.power_mw,
        inter / 1000.0
    ))?;
    for t in cap.tiers.iter().filter(|t| t.name == "l2_to_bag").take(2) {
        say(format!(
            "    {} -> BAG {:.2}:1",
            t.scope,
            t.oversubscription.unwrap_or(f64::NAN)
        ))?;
    }

    let b = bar("failure sweep");
    let tick = |done: u64, total: u64| {
        b.set_length(total);
        b.set_position(done);
    };
    let rep = study.failures(
        &aifabric::FailureRequest {
            state: description.clone(),
            ..aifabric::FailureRequest::default()
        },
        &tick,
    )?;
    b.finish_and_clear();
    let (worst_cap, worst_isolated) = rep
        .scenarios
        .first()
        .map_or((1.0, 0), |s| (s.min_capacity_retained, s.gpus_isolated));
    say(format!(
        "2/5 failure sweep: {} shared-risk groups; worst {}: its worst building or region pair \
         keeps {:.1}% of routed capacity, {} GPUs isolated",
        rep.scenarios.len(),
        rep.summary.worst.as_deref().unwrap_or("-"),
        worst_cap * 100.0,
        worst_isolated
    ))?;

    let it = spec::job::parse("builtin:llama3-405b-16k.yaml", JOB).map_err(Failure::BadInput)?;
    // Spread over the buildings, so that BAG failures reach the job.
    // In the starting state (the healthy fabric without one).
    let base = study.job(&it, Some(Placement::Spread))?;
    say(format!(
        "3/5 {} on {} GPUs (spread over the buildings, ECMP): step {:.2} s, {:.0} tokens/s",
        it.name, it.gpus, base.run.result.step_s, base.run.result.tokens_per_s
    ))?;
    // Of the worst scenarios that leave every GPU and region connected (one that takes GPUs
    // away or isolates them stops the job outright: the sweep's isolated column), the one
    // that slows the job most.
    let mut under: Option<(String, aifabric::JobReport, Scenario)> = None;
    let survivable = rep
        .scenarios
        .iter()
        .filter(|s| s.gpus_isolated == 0 && s.capacity_retained.values().all(|&x| x > 0.0));
    let mut tried = 0;
    for s in survivable.take(TRIED) {
        let mut sc = Scenario::from_selectors(&f, std::slice::from_ref(&s.scenario), &[], &[])
            .map_err(|e| Failure::Runtime(e.to_string()))?;
        // On top of the starting state.
        sc.failed.union_with(&start.failed);
        sc.drained_hard.union_with(&start.drained_hard);
        match aifabric::Study::new(&f, sc.clone(), setup).job(&it, Some(Placement::Spread)) {
            Ok(r) => {
                tried += 1;
                if under
                    .as_ref()
                    .is_none_or(|u| r.run.result.step_s > u.1.run.result.step_s)
                {
                    under = Some((s.scenario.clone(), r, sc));
                }
            }
            Err(_) => say(format!("    {} cuts the job off", s.scenario))?,
        }
    }
    // What helps there: the job under the same failure with its packets sprayed (E-ECMP,
    // the other mode, takes several times as long to simulate at this size: `aifabric job`).
    let mut helps = None;
    let mut helped = None;
    if let Some((name, r, sc)) = &under {
        // Against the starting state's step (the healthy fabric's without one).
        let x = r.run.result.step_s / base.run.result.step_s;
        say(format!(
            "4/5 under {} (the slowest for this job of the {} worst failures it survives): \
             step {:.2} s, slowdown {:.3}x ({:+.2} ms){}",
            name,
            tried,
            r.run.result.step_s,
            x,
            (x - 1.0) * r.run.result.step_s / x * 1e3,
            if (x - 1.0).abs() < 1e-3 {
                ": the plane's traffic moves to the others, and no collective's busiest links \
                 carry much more (see `aifabric job` for the tiers)"
            } else {
                ""
            }
        ))?;
        let lb = aifabric::Lb::Spray(None);
        let m = aifabric::Study::new(&f, sc.clone(), aifabric::Setup { lb, ..setup })
            .job(&it, Some(Placement::Spread))?;
        helps = Some((lb, m.run.result.step_s));
        helped = Some(m);
        if let Some((lb, step)) = helps.filter(|h| h.1 < r.run.result.step_s) {
            say(format!(
                "    what helps: load balancing by {} there: step {:.2} s, {:.1}% shorter than \
                 ECMP's (its hashes pile flows onto some links: `aifabric job ... --lb {}`)",
                lb.name(),
                step,
                100.0 * (1.0 - step / r.run.result.step_s),
                lb.name()
            ))?;
        }
    }

    let b = bar("report");
    let (name, text) = spec::read("prometheus").map_err(Failure::BadInput)?;
    let opts = aifabric::ReportOptions {
        spec_text: Some((name, text)),
        ..Default::default()
    };
    // The job in the report: its step, and beside it under the failure above.
    let opts = aifabric::ReportOptions {
        state: starting,
        job: Some(aifabric::ReportJob {
            it: it.clone(),
            placement: Some(Placement::Spread),
            scenario: under.as_ref().map(|u| (u.0.clone(), u.2.clone())),
            // And what helps there, when it does.
            mitigation: helps
                .filter(|h| under.as_ref().is_some_and(|u| h.1 < u.1.run.result.step_s))
                .map(|h| h.0),
            // The runs above, not made again.
            ran: std::iter::once(base.clone())
                .chain(under.as_ref().map(|u| u.1.clone()))
                .chain(helped.filter(|m| {
                    under
                        .as_ref()
                        .is_some_and(|u| m.run.result.step_s < u.1.run.result.step_s)
                }))
                .collect(),
        }),
        ..opts
    };
    let (data, html) = study.report(&opts, &|i, n, what| {
        b.set_length(n);
        b.set_position(i);
        b.set_message(what.to_owned());
    })?;
    b.finish_and_clear();
    let page = super::write_report(out, &data, &html)?;
    say(format!("5/5 report: {}", page.display()))?;
    super::incomplete(&data)?;
    Ok(DemoSummary {
        spec: f.name().to_owned(),
        starting_state: rep
            .summary
            .starting_state
            .as_ref()
            .map(|s| s.description.clone()),
        gpus: cap.gpus,
        switches: cap.switches,
        links: cap.links,
        inter_region_tbps: inter,
        scenarios: rep.scenarios.len(),
        worst: rep.summary.worst.clone(),
        worst_capacity_retained: worst_cap,
        job: it.name.clone(),
        job_step_s: base.run.result.step_s,
        job_failure: under.as_ref().map(|u| u.0.clone()),
        job_step_under_failure_s: under.as_ref().map(|u| u.1.run.result.step_s),
        job_slowdown: under
            .as_ref()
            .map(|u| u.1.run.result.step_s / base.run.result.step_s),
        mitigation: helps
            .filter(|h| under.as_ref().is_some_and(|u| h.1 < u.1.run.result.step_s))
            .map(|(lb, step)| (lb.name(), step)),
        report: page.display().to_string(),
    })
}
