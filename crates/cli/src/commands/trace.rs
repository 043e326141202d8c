//! `aifabric chakra synth|scale` and `aifabric replay`: flags to library calls, results to
//! tables.

use crate::Failure;
use aifabric::stages::spec;
use aifabric::traces::Written;
use aifabric::traces::{DpGroups, Scaled};
use aifabric::ReplayReport;
use std::fmt::Write;
use std::path::Path;

/// Run `aifabric chakra synth`.
pub fn synth(job: &str, out: &Path, prefix: &str, gzip: bool) -> Result<Written, Failure> {
    let it = spec::job::load(job).map_err(Failure::BadInput)?;
    let bar = crate::progress::Progress::bar("ranks");
    bar.set_length(u64::from(it.gpus));
    let w = aifabric::traces::synthesize(&it, out, prefix, gzip, &|_| bar.inc(1))?;
    bar.finish_and_clear();
    Ok(w)
}

/// What `aifabric chakra synth` prints.
pub fn render_written(w: &Written, out: &Path) -> String {
    format!(
        "wrote {} ranks, {} nodes, {} process groups into {}\n",
        w.ranks,
        w.nodes,
        w.groups,
        out.display()
    )
}

/// Run `aifabric chakra scale`.
pub fn rescale(input: &Path, ranks: u32, out: &Path, dp: &str) -> Result<Scaled, Failure> {
    let dp = if dp == "auto" {
        DpGroups::Auto
    } else {
        DpGroups::Names(dp.split(',').map(|s| s.trim().to_owned()).collect())
    };
    let bar = crate::progress::Progress::bar("ranks");
    bar.set_length(u64::from(ranks));
    let s = aifabric::traces::rescale(input, ranks, out, &dp, &|_| bar.inc(1))?;
    bar.finish_and_clear();
    Ok(s)
}

/// What `aifabric chakra scale` prints.
pub fn render_scaled(s: &Scaled, out: &Path) -> String {
    format!(
        "wrote {} ranks ({}x the trace's {}), {} nodes, into {}\n\
         data-parallel groups grown {}x: {}\nother groups copied per replica: {}\n",
        s.ranks,
        s.ranks / s.from_ranks.max(1),
        s.from_ranks,
        s.nodes,
        out.display(),
        s.ranks / s.from_ranks.max(1),
        match s.dp_groups.len() {
            0 => "none".to_string(),
            n if n <= 8 => s.dp_groups.join(", "),
            n => format!("{} and {} more", s.dp_groups[..8].join(", "), n - 8),
        },
        s.replicated_groups
    )
}

/// Run `aifabric replay` through the library's study (healthy comparison included).
pub fn replay(
    study: &aifabric::Study<'_>,
    trace: &Path,
    req: &aifabric::ReplayRequest,
) -> Result<ReplayReport, Failure> {
    let set = aifabric::traces::discover(trace)?;
    let bar = crate::progress::Progress::counter("nodes replayed");
    let r = study.replay(&set, req, &|n| bar.set_position(n))?;
    bar.finish_and_clear();
    Ok(r)
}

fn ms(s: f64) -> String {
    format!("{:.3}", s * 1e3)
}

/// The replay summary.
pub fn render_replay(x: &ReplayReport) -> String {
    let r = &x.run.result;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} ranks, {} nodes on {}, {} placement, lb {}",
        x.trace.job.as_deref().unwrap_or("trace"),
        r.ranks,
        r.nodes,
        x.spec,
        x.placement,
        x.lb
    );
    let slowest = r.per_rank.iter().max_by(|a, b| {
        a.iteration_s
            .total_cmp(&b.iteration_s)
            .then(b.rank.cmp(&a.rank))
    });
    let fastest = r
        .per_rank
        .iter()
        .min_by(|a, b| a.iteration_s.total_cmp(&b.iteration_s));
    if let Some(n) = &x.placement_note {
        let _ = writeln!(out, "{n}");
    }
    let _ = writeln!(out, "iteration {} ms", ms(r.iteration_s));
    if let (Some(s), Some(f)) = (slowest, fastest) {
        let _ = write!(
            out,
            "  slowest rank {}: compute {} ms + exposed communication {} ms; ",
            s.rank,
            ms(s.compute_s),
            ms(s.exposed_comm_s)
        );
        if f.iteration_s < s.iteration_s {
            let _ = writeln!(
                out,
                "fastest rank {} ends at {} ms",
                f.rank,
                ms(f.iteration_s)
            );
        } else {
            let _ = writeln!(out, "every rank ends together");
        }
    }
    let _ = writeln!(
        out,
        "  {} collectives, {} transfers, {} engine simulations; roofline {:.1} TFLOP/s, alpha {} us",
        r.collectives,
        r.transfers,
        x.simulations,
        x.flops_per_s / 1e12,
        x.alpha_s * 1e6
    );
    if let (Some(h), Some(s)) = (&x.run.healthy, x.run.slowdown) {
        let _ = writeln!(
            out,
            "healthy fabric: iteration {} ms; slowdown {:.3}x ({:+.3} ms)",
            ms(h.iteration_s),
            s,
            (r.iteration_s - h.iteration_s) * 1e3
        );
        for n in x.run.notes(aifabric::About::Crossing) {
            let _ = writeln!(out, "{n}");
        }
        for n in x.run.notes(aifabric::About::Slowdown) {
            let _ = writeln!(out, "  {n}");
        }
    }
    let w = &r.warnings;
    if w.any() {
        let _ = writeln!(
            out,
            "warnings: {} unknown fields, {} unknown node types (no-ops), {} unknown collectives \
             (barriers), {} gathers/scatters/broadcasts/reduces approximated",
            w.unknown_fields,
            w.unknown_node_types,
            w.unknown_collectives,
            w.approximated_collectives
        );
    }
    for n in x.run.notes(aifabric::About::Run) {
        let _ = writeln!(out, "note: {n}");
    }
    // The critical path: time per kind, then its first and last steps.
    let path = &r.critical_path;
    let _ = writeln!(out, "\nCritical path: {} nodes", path.len());
    for kind in ["comp", "coll", "send", "recv", "other"] {
        let (n, t) = path
            .iter()
            .filter(|p| p.kind == kind)
            .fold((0u64, 0.0), |(n, t), p| (n + 1, t + p.end_s - p.start_s));
        if n > 0 {
            let _ = writeln!(out, "  {kind:<6} {n:>8} nodes {:>14} ms", ms(t));
        }
    }
    let _ = writeln!(
        out,
        "\n  {:>12} {:>12} {:>6} {:>10}  {:<5} name",
        "start (ms)", "end (ms)", "rank", "node", "kind"
    );
    let show = |out: &mut String, p: &aifabric::traces::PathStep| {
        let _ = writeln!(
            out,
            "  {:>12} {:>12} {:>6} {:>10}  {:<5} {}",
            ms(p.start_s),
            ms(p.end_s),
            p.rank,
            p.id,
            p.kind,
            p.name
        );
    };
    if path.len() <= 12 {
        path.iter().for_each(|p| show(&mut out, p));
    } else {
        path[..6].iter().for_each(|p| show(&mut out, p));
        let _ = writeln!(
            out,
            "  {:>12} ({} more; --json lists them all)",
            "...",
            path.len() - 12
        );
        path[path.len() - 6..]
            .iter()
            .for_each(|p| show(&mut out, p));
    }
    out
}
