//! `aifabric traffic`: a traffic matrix (htsim's format, CSV, or a generated pattern) on the
//! fabric, event by event; flow completion times and link utilization out.

use aifabric::{About, Engine, TrafficReport};
use std::fmt::Write;

fn us(s: f64) -> String {
    format!("{:.3}", s * 1e6)
}

/// The slowest flows, one line each.
fn slowest(o: &mut String, flows: &[aifabric::flow::SlowFlow]) {
    let _ = writeln!(o, "\nSlowest flows");
    for s in flows {
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
}

/// The table.
pub fn render(r: &TrafficReport) -> String {
    let x = &r.run.result;
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
    for n in r.run.notes(About::Lb).chain(r.run.notes(About::Run)) {
        let _ = writeln!(o, "{n}");
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
    if let (Some(s), Some(p)) = (r.run.slowdown, r.p99_slowdown) {
        let _ = writeln!(
            o,
            "  against the healthy fabric: makespan x{s:.3}, p99 FCT x{p:.3}"
        );
    }
    slowest(&mut o, &x.slowest);
    crate::commands::simulate::tiers_table(&mut o, &x.tiers, &x.bottlenecks, "the makespan");
    o
}

/// The packet engine's table (and, with `--engine both`, the flow engine's beside it).
/// What a packet run took on this machine (not part of the result, which is the same on any
/// machine): wall time and, where the system tells, the CPU time of the whole process.
#[derive(Clone, Copy, Debug)]
pub struct RunTime {
    /// Wall-clock seconds, setup included.
    pub wall_s: f64,
    /// CPU seconds of every thread of the process over the same span (`None` where
    /// `getrusage` is not available).
    pub cpu_s: Option<f64>,
}

/// CPU seconds this process has used so far (user + system, every thread).
#[cfg(unix)]
pub fn cpu_seconds() -> Option<f64> {
    use nix::sys::resource::{getrusage, UsageWho};
    use nix::sys::time::TimeValLike;
    let u = getrusage(UsageWho::RUSAGE_SELF).ok()?;
    Some((u.user_time().num_microseconds() + u.system_time().num_microseconds()) as f64 * 1e-6)
}

/// CPU seconds this process has used so far: not known here.
#[cfg(not(unix))]
pub fn cpu_seconds() -> Option<f64> {
    None
}

pub fn render_packet(r: &aifabric::PacketTrafficReport, run: RunTime) -> String {
    use aifabric::packet::Cc;
    let x = &r.run.result;
    let c = &x.config;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# traffic {} on {} GPUs of {}, {} placement, packet engine{}, seed {}",
        r.source,
        r.gpus,
        r.spec,
        r.placement.name(),
        match r.engine {
            Engine::Both => " and flow engine",
            Engine::Hybrid => " fast-forwarding steady states (hybrid)",
            _ => "",
        },
        c.seed
    );
    let cc = match c.cc {
        Cc::Nscc(p) => format!(
            "NSCC (base RTT {:.3} us, target delay {:.3} us, window {:.0} B{})",
            p.base_rtt_ps as f64 * 1e-6,
            p.target_delay_ps as f64 * 1e-6,
            p.max_cwnd_bytes,
            if c.nscc_path_rtt {
                "; each flow its own path's base RTT and window"
            } else {
                ""
            }
        ),
        Cc::NsccAuto => "NSCC".to_owned(),
        Cc::LineRate => "line rate, no congestion control".to_owned(),
        Cc::Dcqcn(p) => format!(
            "DCQCN (line rate {} Gb/s, g {}, timers {:.0} us, byte counter {} B, F {}, R_AI {} Mb/s, R_HAI {} Mb/s)",
            p.line_rate_bps as f64 / 1e9,
            p.g,
            p.rate_timer_ps as f64 * 1e-6,
            p.byte_counter_bytes,
            p.fast_recovery_steps,
            p.rate_ai_bps as f64 / 1e6,
            p.rate_hai_bps as f64 / 1e6
        ),
        Cc::DcqcnAuto | Cc::DcqcnHtsimAuto => "DCQCN".to_owned(),
    };
    let _ = writeln!(
        o,
        "model: lb {}, {cc}{}; MTU {} B, {}, ECN {}, ACK every {} B, links {}, switches {} us, RTO {:.3} us{}",
        c.lb.name(),
        c.admission.map_or(String::new(), |a| format!(
            ", receiver-driven admission ({} B chunks, {} per receiver)",
            a.chunk_bytes, a.window
        )),
        c.mtu_bytes,
        match c.pfc {
            Some(p) => format!(
                "lossless data class (PFC: XOFF {} B, XON {} B, headroom {} per ingress link; no egress limit)",
                p.xoff_bytes,
                p.xon_bytes,
                match (p.headroom_bytes, p.buffer_limited) {
                    (None, false) => "each link's own".to_owned(),
                    (None, true) => "each link's own within the switch's buffer".to_owned(),
                    (Some(h), false) => format!("{h} B"),
                    (Some(h), true) => format!("{h} B within the switch's buffer"),
                }
            ),
            None => format!(
                "queues {} B ({})",
                c.queue_bytes,
                if c.trim { "trimming" } else { "drop-tail" }
            ),
        },
        c.ecn_bytes.map_or("off".to_owned(), |(a, b)| if c.ecn_max_probability < 1.0 {
            format!("{a}:{b} B (P {} at {b} B)", c.ecn_max_probability)
        } else {
            format!("{a}:{b} B")
        }),
        c.ack_every_bytes,
        c.link_latency_ps
            .map_or("at 5 ns/m of cable".to_owned(), |l| format!(
                "{} us each",
                l as f64 * 1e-6
            )),
        c.switch_latency_ps as f64 * 1e-6,
        c.rto_ps as f64 * 1e-6,
        r.run
            .notes(About::Rto)
            .map(|n| format!(" ({n})"))
            .collect::<String>()
    );
    // The rate is per CPU second of the whole run (topology, tables and the engine; the flow
    // engine too with `both`), so a busy machine's waits do not count against it.
    let rate = match run.cpu_s {
        Some(cpu) => format!(
            "{:.3} s CPU, {:.3} s wall: {:.2} M events per CPU second, setup included",
            cpu,
            run.wall_s,
            x.events as f64 / cpu.max(1e-9) / 1e6
        ),
        None => format!(
            "{:.3} s wall: {:.2} M events per wall-clock second, setup included",
            run.wall_s,
            x.events as f64 / run.wall_s.max(1e-9) / 1e6
        ),
    };
    let _ = writeln!(
        o,
        "{} flows, {:.3} GB; makespan {} us; {} events in {rate}",
        x.flows,
        x.bytes as f64 / 1e9,
        us(x.makespan_s),
        x.events,
    );
    let notes = [About::Run, About::Hybrid, About::Partitions];
    for n in notes.into_iter().flat_map(|a| r.run.notes(a)) {
        let _ = writeln!(o, "{n}");
    }
    let _ = writeln!(o, "\nFlow completion time (us)");
    let _ = writeln!(
        o,
        "  {:<8} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "", "min", "p50", "p99", "max", "mean"
    );
    let row = |o: &mut String, name: &str, f: &aifabric::flow::FctStats| {
        let _ = writeln!(
            o,
            "  {:<8} {:>12} {:>12} {:>12} {:>12} {:>12}",
            name,
            us(f.min_s),
            us(f.p50_s),
            us(f.p99_s),
            us(f.max_s),
            us(f.mean_s)
        );
    };
    row(
        &mut o,
        if r.engine == Engine::Hybrid {
            "hybrid"
        } else {
            "packet"
        },
        &x.fct,
    );
    if let (Some(flow), None) = (&r.flow, &r.ratios) {
        row(&mut o, "flow", &flow.fct);
    }
    if let (Some(flow), Some(q)) = (&r.flow, &r.ratios) {
        row(&mut o, "flow", &flow.fct);
        let _ = writeln!(
            o,
            "  {:<8} {:>12.3} {:>12.3} {:>12.3} {:>12.3}   makespan x{:.3}",
            "ratio", q.min, q.p50, q.p99, q.max, q.makespan
        );
        let _ = writeln!(
            o,
            "  (flow engine with lb {}: max-min fair rates, no queues, no losses)",
            r.flow_lb.as_deref().unwrap_or("?")
        );
    }
    if let (Some(h), Some(s)) = (&r.run.healthy, r.run.slowdown) {
        let _ = writeln!(
            o,
            "  against the healthy fabric (packet engine, same placement): makespan {} us, x{s:.3}",
            us(h.makespan_s)
        );
    }
    for n in r.run.notes(About::Slowdown) {
        let _ = writeln!(o, "  {n}");
    }
    let k = &x.counters;
    let _ = writeln!(
        o,
        "\nPackets: {} new, {} retransmitted, {} ACKs, {} NACKs, {} trimmed, {} dropped, {} ECN-marked, {} timeouts, {} CNPs, {} CTS",
        k.data_new,
        k.data_retransmitted,
        k.acks,
        k.nacks,
        k.trimmed,
        k.dropped,
        k.ecn_marked,
        k.timeouts,
        k.cnps,
        k.cts
    );
    for n in r.run.notes(About::Packets) {
        let _ = writeln!(o, "  {n}");
    }
    let _ = writeln!(o, "\nQueues per tier (ports that carried packets)");
    let _ = writeln!(
        o,
        "  {:<16} {:>7} {:>12} {:>12}",
        "tier", "ports", "peak B", "mean B"
    );
    for q in &x.queues {
        let _ = writeln!(
            o,
            "  {:<16} {:>7} {:>12} {:>12.0}",
            q.tier, q.ports, q.peak_bytes, q.mean_bytes
        );
    }
    if let Some(p) = &x.pfc {
        let _ = writeln!(
            o,
            "\nPFC: {} PAUSE and {} RESUME frames sent, {} data packets dropped for want of headroom, largest ingress count {} B",
            p.pauses, p.resumes, p.headroom_drops, p.peak_ingress_bytes
        );
        for n in r.run.notes(About::Pfc) {
            let _ = writeln!(o, "  {n}");
        }
        if p.tiers.is_empty() {
            let _ = writeln!(o, "  no port was paused");
        } else {
            let _ = writeln!(
                o,
                "  {:<16} {:>13} {:>8} {:>14} {:>16}",
                "paused tier", "ports paused", "pauses", "paused us", "max per port us"
            );
            for t in &p.tiers {
                let _ = writeln!(
                    o,
                    "  {:<16} {:>13} {:>8} {:>14} {:>16}",
                    t.tier,
                    t.ports_paused,
                    t.pauses,
                    us(t.paused_s),
                    us(t.max_paused_s)
                );
            }
        }
    }
    if let Some(d) = &x.dsf {
        let cells = if x.config.dsf_whole_packets() {
            "cells of whole packets".to_owned()
        } else {
            format!("cells of {} B", d.settings.cell_bytes)
        };
        let _ = writeln!(
            o,
            "\nDSF: {} packets through VOQs, {} credit requests, {} grants; credits granted {} B, sent {} B, still queued {} B; {cells} (credit {} B): {} sent, {} reassembled",
            d.packets,
            d.requests,
            d.grants,
            d.credits_granted_bytes,
            d.sent_bytes,
            d.queued_bytes,
            d.settings.credit_bytes,
            d.cells_sent,
            d.cells_reassembled
        );
        for v in &d.voqs {
            let _ = writeln!(
                o,
                "  VOQs at {:<8} {:>7} used, peak {} B",
                v.tier, v.voqs, v.peak_bytes
            );
        }
        let _ = writeln!(
            o,
            "  {:<16} {:>7} {:>14} {:>10} {:>10}",
            "fabric tier", "links", "bytes", "mean util", "max util"
        );
        for t in &d.fabric {
            let _ = writeln!(
                o,
                "  {:<16} {:>7} {:>14} {:>9.1}% {:>9.1}%",
                t.tier,
                t.links,
                t.bytes,
                100.0 * t.mean_utilization,
                100.0 * t.max_utilization
            );
        }
    }
    slowest(&mut o, &x.slowest);
    o
}

/// `compare-fabrics`: one table per workload (a row per fabric), then the BAG links.
pub fn render_fabrics(r: &aifabric::fabrics::CompareFabricsReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# DSF, NSF and RoCE zones of {} GPUs each (400 Gb/s per GPU), packet by packet",
        r.gpus
    );
    let _ = writeln!(
        o,
        "#   dsf: VOQs in HBM, credits and cells inside the zone, line-rate senders, no PFC"
    );
    let _ = writeln!(
        o,
        "#   nsf: adaptive routing, DCQCN on ECN (5 KB:200 KB:1%), PFC, shallow buffers"
    );
    let _ = writeln!(
        o,
        "#   roce: per-flow ECMP, PFC, line-rate senders, receiver-driven admission"
    );
    let mut workload = "";
    for run in &r.runs {
        if run.workload != workload {
            workload = &run.workload;
            let _ = writeln!(o, "\n{workload}");
            let _ = writeln!(
                o,
                "  {:<6} {:>11} {:>11} {:>11} {:>11} {:>8} {:>8}  peak queue (tier)",
                "fabric", "FCT p50 us", "p99 us", "max us", "makespan", "pauses", "drops",
            );
        }
        match (&run.result, &run.error) {
            (Some(x), _) => {
                let peak = x
                    .queues
                    .iter()
                    .max_by_key(|q| q.peak_bytes)
                    .map_or("-".to_owned(), |q| {
                        format!("{} B ({})", q.peak_bytes, q.tier)
                    });
                let _ = writeln!(
                    o,
                    "  {:<6} {:>11} {:>11} {:>11} {:>11} {:>8} {:>8}  {}",
                    run.fabric,
                    us(x.fct.p50_s),
                    us(x.fct.p99_s),
                    us(x.fct.max_s),
                    us(x.makespan_s),
                    x.pfc.as_ref().map_or(0, |p| p.pauses),
                    x.counters.dropped,
                    peak
                );
            }
            (None, Some(e)) => {
                let _ = writeln!(o, "  {:<6} not run: {e}", run.fabric);
            }
            _ => {}
        }
    }
    if !r.bag.is_empty() {
        let _ = writeln!(
            o,
            "\nBAG-to-BAG links under a lossless incast: {}",
            r.bag_workload
        );
        let _ = writeln!(
            o,
            "  (ideal: the data on the wire at the receiver's rate plus the cable's round trip; throughput kept = ideal / makespan;\n   least headroom: the smallest share of what a PAUSE needs that any switch's link holds, named below when short)"
        );
        let _ = writeln!(
            o,
            "  {:>6} {:<8} {:>12} {:>10} {:>16} {:>8} {:>15} {:>15} {:>9}",
            "km",
            "buffer",
            "makespan us",
            "ideal us",
            "throughput kept",
            "pauses",
            "least headroom",
            "headroom drops",
            "timeouts"
        );
        for b in &r.bag {
            let x = &b.result;
            let held = x
                .pfc
                .as_ref()
                .map_or(1.0, |p| p.min_headroom_share)
                .min(1.0);
            let _ = writeln!(
                o,
                "  {:>6} {:<8} {:>12} {:>10} {:>15.1}% {:>8} {:>14.0}% {:>15} {:>9}",
                b.km,
                b.buffer,
                us(x.makespan_s),
                us(b.ideal_s),
                b.throughput_kept * 100.0,
                x.pfc.as_ref().map_or(0, |p| p.pauses),
                held * 100.0,
                x.pfc.as_ref().map_or(0, |p| p.headroom_drops),
                x.counters.timeouts
            );
        }
        for n in aifabric::notes_about(&r.notes, About::Bag) {
            let _ = writeln!(o, "  {n}");
        }
    }
    o
}
