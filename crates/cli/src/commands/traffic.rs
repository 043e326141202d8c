//! `aifabric traffic`: a traffic matrix (htsim's format, CSV, or a generated pattern) on the
//! fabric, event by event; flow completion times and link utilization out.

use aifabric::TrafficReport;
use std::fmt::Write;

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
    if x.flows > 0 && x.lb_free_flows == x.flows {
        let _ = writeln!(
            o,
            "every flow stays inside one scale-up domain, rack switch or DSF zone (whose cells \
             are sprayed whatever the mode): --lb cannot change these results; place GPUs \
             across zones or buildings (more --gpus, --placement spread) to compare modes"
        );
    }
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
    crate::commands::simulate::tiers_table(&mut o, &x.tiers, &x.bottlenecks, "the makespan");
    o
}
