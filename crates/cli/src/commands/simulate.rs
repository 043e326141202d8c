//! `aifabric collective` and `aifabric job`: their reports (from the `aifabric` library) as
//! tables.

use aifabric::flow::{Bottleneck, CollectiveResult, TierUtil};
use aifabric::{About, CollectiveReport, CollectiveRow, JobReport};
use aifabric::{Algo, Proto};
use std::fmt::Write;

/// `ring/simple`, or the algorithm alone when no protocol was modelled.
fn label(algo: Algo, proto: Option<Proto>) -> String {
    match proto {
        Some(p) => format!("{}/{}", algo.name(), p.name()),
        None => algo.name().to_string(),
    }
}

/// The algorithm and protocol a collective ran, and with `auto` the runner-up it beat.
fn algo_note(r: &CollectiveResult) -> String {
    let runner_up = r
        .tuned
        .iter()
        .filter(|x| (x.algo, x.proto) != (r.algo, r.proto))
        .min_by(|a, b| a.time_s.total_cmp(&b.time_s));
    // Channels are NCCL's with a protocol; the alpha-beta model (jobs) names the algorithm.
    let chosen = match r.proto {
        Some(_) => format!("{}, {} channels", label(r.algo, r.proto), r.channels),
        None => label(r.algo, r.proto),
    };
    match runner_up {
        Some(c) => format!(
            "{chosen} (auto; next best {} {:.1} us)",
            label(c.algo, c.proto),
            c.time_s * 1e6
        ),
        None if !r.tuned.is_empty() => format!("{chosen} (auto; the only one that applies)"),
        None => chosen,
    }
}

/// Why `auto` chose what it chose: the next candidates' predicted times per size.
fn auto_choice(out: &mut String, rows: &[CollectiveRow]) {
    let _ = writeln!(
        out,
        "\nAuto: the lowest predicted time (NCCL's protocol latencies and efficiencies over \
         the bandwidth and path latency simulated on this fabric)"
    );
    for row in rows {
        let mut others: Vec<_> = row
            .predicted
            .iter()
            .filter(|x| (x.algo, x.proto) != (row.algo, row.proto))
            .collect();
        others.sort_by(|a, b| a.time_us.total_cmp(&b.time_us));
        let others: Vec<String> = others
            .iter()
            .take(3)
            .map(|c| format!("{} {:.1}", label(c.algo, c.proto), c.time_us))
            .collect();
        let _ = writeln!(
            out,
            "  {:>12} B  {} (next, us: {})",
            row.bytes,
            label(row.algo, row.proto),
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
        "# {} ({}, protocol {}) over {} GPUs of {}, {} placement, lb {} ({}), seed {}, \
         channels {}",
        r.op.as_str(),
        r.algorithm.name(),
        r.protocol.name(),
        r.gpus,
        r.spec,
        r.placement.name(),
        r.lb,
        aifabric::Lb::parse(&r.lb).map_or("", aifabric::Lb::weights),
        r.seed,
        if r.channels == 0 {
            "auto".to_string()
        } else {
            r.channels.to_string()
        }
    );
    let slow = r.rows.iter().any(|x| x.slowdown.is_some());
    let gap = r.rows.iter().any(|x| x.te_gap.is_some());
    let auto = r.algorithm == Algo::Auto || r.protocol == Proto::Auto;
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
    let _ = write!(out, "  {:<16}", "algo/proto");
    out.push('\n');
    for row in &r.rows {
        let _ = write!(
            out,
            "{:>15} {:>14.1} {:>10.2} {:>10.2}",
            row.bytes, row.time_us, row.alg_bw_gbytes_per_s, row.bus_bw_gbytes_per_s
        );
        if let Some(s) = row.slowdown {
            let _ = write!(out, " {:>8.3}x", s);
        }
        if let Some(g) = row.te_gap {
            let _ = write!(out, " {:>8.1}%", g * 100.0);
        }
        let _ = write!(out, "  {:<16}", label(row.algo, row.proto));
        out.push('\n');
    }
    if auto {
        auto_choice(&mut out, &r.rows);
    }
    for n in r.run.notes(About::Crossing) {
        let _ = writeln!(out, "{n}");
    }
    if let Some(n) = &r.placement_note {
        let _ = writeln!(out, "{n}");
    }
    for n in r.run.notes(About::Weights) {
        let _ = writeln!(out, "weights: {n}");
    }
    for n in r.run.notes(About::PacketPhases) {
        let _ = writeln!(out, "{n}");
    }
    details(&mut out, &r.run.result);
    out
}

fn ms(s: f64) -> String {
    format!("{:.2}", s * 1e3)
}

/// The step-time breakdown.
pub fn render_job(r: &JobReport) -> String {
    let s = &r.run.result;
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
    let p = &s.pipeline;
    let schedule = if p.virtual_stages > 1 {
        format!(
            "interleaved 1F1B, {} stages x {} chunks",
            p.stages, p.virtual_stages
        )
    } else {
        format!("1F1B, {} stages", p.stages)
    };
    // The kernels' share of the peak, back from the MFU: mfu = efficiency x compute / step
    // / the recomputation's overhead.
    let kernels = if s.compute_s > 0.0 {
        s.mfu * s.step_s / s.compute_s * s.recompute_overhead
    } else {
        0.0
    };
    let _ = writeln!(
        out,
        "model FLOPs utilization {:.1}% end to end (kernels at {:.1}% of peak); pipeline: {}, \
         {} micro-batches per replica, bubble {:.1}% of compute",
        s.mfu * 100.0,
        kernels * 100.0,
        schedule,
        p.micro_batches,
        p.bubble_fraction() * 100.0
    );
    let default = if s.order == aifabric::stages::workload::job::MEGATRON {
        " (the default, Megatron-LM's)"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "rank order {}{default}, fastest first",
        s.order.label()
    );
    match &r.memory {
        Some(m) => {
            let _ = writeln!(out, "memory: {}", m.summary());
        }
        None => {
            let _ = writeln!(
                out,
                "memory: not checked (the model is a parameter count; give its architecture or \
                 a card to size weights, optimizer state and activations)"
            );
        }
    }
    if let Some(n) = &r.placement_note {
        let _ = writeln!(out, "{n}");
    }
    for n in r.run.notes(About::PacketPhases) {
        let _ = writeln!(out, "{n}");
    }
    if let (Some(h), Some(x)) = (&r.run.healthy, r.run.slowdown) {
        // The difference too: a slowdown that rounds to 1.000x is not nothing.
        let _ = writeln!(
            out,
            "healthy fabric: step {} ms; slowdown {:.3}x ({:+.2} ms)",
            ms(h.step_s),
            x,
            (s.step_s - h.step_s) * 1e3
        );
        for n in r.run.notes(About::Crossing) {
            let _ = writeln!(out, "{n}");
        }
        for n in r.run.notes(About::Slowdown) {
            let _ = writeln!(out, "  {n}");
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
            c.bus_bw_gbytes_per_s,
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
