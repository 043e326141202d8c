//! Human-readable tables.

use aifabric::capacity::{Capacity, Inventory};
use std::fmt::Write;

/// `n` and its noun, singular for 1: `1 region`, `2 regions`.
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

pub fn inventory(inv: &Inventory) -> String {
    let mut s = String::new();
    let bag = match inv.bag_layers {
        0 => String::new(),
        n => format!(" under {}", count(n as u64, "BAG layer", "BAG layers")),
    };
    let _ = writeln!(
        s,
        "{}: {}, {}, {}{bag}",
        inv.name,
        count(inv.regions as u64, "region", "regions"),
        count(inv.buildings as u64, "building", "buildings"),
        count(inv.zones as u64, "zone", "zones")
    );
    let _ = writeln!(
        s,
        "{}, {}, {} in {}",
        count(inv.gpus, "GPU", "GPUs"),
        count(inv.switches, "switch", "switches"),
        count(inv.links, "link", "links"),
        count(inv.bundles, "bundle", "bundles")
    );
    if let Some(usable) = inv.usable_gpus.sentence() {
        let _ = writeln!(s, "{usable}");
    }
    for (role, n) in &inv.devices_by_role {
        let _ = writeln!(s, "  {role:<6} {n:>9}");
    }
    s
}

fn tbps(gbps: f64) -> String {
    format!("{:.1}", gbps / 1_000.0)
}

pub fn capacity(c: &Capacity) -> String {
    let r = &c.report;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} GPUs, {} switches, {} links, {:.1} MW",
        r.name, r.gpus, r.switches, r.links, r.power_mw
    );
    let sc = &c.scenario;
    let counted = [
        ("failed", sc.failed),
        ("drained", sc.drained),
        ("soft-drained, still carrying traffic", sc.drained_soft),
    ]
    .iter()
    .filter(|(_, n)| n.devices + n.links > 0)
    .map(|(what, n)| {
        let parts: Vec<String> = [
            (n.devices, count(n.devices, "device", "devices")),
            (n.links, count(n.links, "link", "links")),
        ]
        .into_iter()
        .filter(|x| x.0 > 0)
        .map(|x| x.1)
        .collect();
        format!("{} {what}", parts.join(" and "))
    })
    .collect::<Vec<_>>();
    if counted.is_empty() {
        let _ = writeln!(s, "scenario: {}", sc.description);
    } else {
        let _ = writeln!(s, "scenario: {} ({})", sc.description, counted.join("; "));
    }
    if let Some(usable) = c.usable_gpus.sentence() {
        let _ = writeln!(s, "{usable}");
    }
    let _ = writeln!(s, "\nOversubscription (down : up, per direction)");
    let _ = writeln!(
        s,
        "  {:<16} {:<32} {:>12} {:>12} {:>8}",
        "tier", "scope", "down Tb/s", "up Tb/s", "ratio"
    );
    for t in &r.tiers {
        let ratio = match t.oversubscription {
            Some(x) => format!("{x:>7.2}:1"),
            None => "  no up".to_owned(),
        };
        let _ = writeln!(
            s,
            "  {:<16} {:<32} {:>12} {:>12} {ratio:>9}",
            t.name,
            t.scope,
            tbps(t.down_gbps),
            tbps(t.up_gbps),
        );
    }
    if !r.region_pairs.is_empty() {
        let _ = writeln!(s, "\nInter-region capacity");
        for p in &r.region_pairs {
            let _ = writeln!(
                s,
                "  {} <-> {}: {} links, {}",
                p.a,
                p.b,
                p.links,
                pbps_both_ways(p.capacity_tbps, p.capacity_tbps_per_direction)
            );
        }
    }
    if !r.hub_pairs.is_empty() {
        let _ = writeln!(s, "\nSpoke to spoke (max-flow through the hubs)");
        for p in &r.hub_pairs {
            let _ = writeln!(
                s,
                "  {} <-> {} via {}: {}",
                p.a,
                p.b,
                p.via.join(", "),
                pbps_both_ways(p.capacity_tbps, p.capacity_tbps_per_direction)
            );
        }
    }
    let _ = writeln!(s, "\nSwitches");
    for d in &r.devices_by_model {
        let _ = writeln!(s, "  {:<6} {:<22} {:>8}", d.role.as_str(), d.model, d.count);
    }
    let _ = writeln!(s, "\nLinks");
    for l in &r.links_by_kind {
        let _ = writeln!(s, "  {:<9} {:>8}G {:>10}", l.class, l.speed_gbps, l.count);
    }
    let _ = writeln!(s, "\nOptics by reach class (links, pluggable transceivers)");
    for l in &r.links_by_optic {
        let lanes = if l.fabric_lanes { " fabric lanes" } else { "" };
        let _ = writeln!(
            s,
            "  {:<9} {:>8}G {:>10}{lanes:<13} {:>10} transceivers",
            l.class, l.speed_gbps, l.links, l.transceivers
        );
    }
    let _ = writeln!(s, "\nPort use (used / available at the speed in use)");
    for p in &r.port_use {
        let _ = writeln!(
            s,
            "  {:<22} {:<9} {:>7}G {:>9} / {:<9} {:>5.1}% of bandwidth",
            p.model,
            p.kind.as_str(),
            p.speed_gbps,
            p.ports_used,
            p.ports_available,
            100.0 * p.used_gbps / p.available_gbps
        );
    }
    let _ = writeln!(s, "\nZones (bisection by max-flow between rack halves)");
    for z in &r.zones {
        match &z.bisection {
            Some(b) => {
                let _ = writeln!(
                    s,
                    "  {:<24} {:<7} {:>7} GPUs  bisection {:>8} Tb/s (half the GPUs: {} Tb/s)",
                    z.name,
                    z.kind.as_str(),
                    z.gpus,
                    tbps(b.bisection_gbps),
                    tbps(b.half_gpu_gbps)
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "  {:<24} {:<7} {:>7} switches",
                    z.name,
                    z.kind.as_str(),
                    z.switches
                );
            }
        }
    }
    let p = &r.pfc_headroom;
    let _ = writeln!(
        s,
        "\nPFC headroom (1 lossless priority, 9,216 B frames; `aifabric buffers` for the whole report)"
    );
    for w in &p.fullest {
        let _ = writeln!(
            s,
            "  {:<22} fullest {:>7.3}% of {:.1} MB  {}",
            w.model,
            w.share * 100.0,
            w.buffer_bytes as f64 / 1e6,
            w.switch
        );
    }
    let _ = writeln!(
        s,
        "  {}",
        match p.switches_over {
            0 => "every switch holds its headroom".to_owned(),
            n => format!("{n} switches cannot hold their headroom: see `aifabric buffers`"),
        }
    );
    s
}

pub fn routes(views: &[aifabric::routing::RouteView]) -> String {
    use aifabric::routing::RouteKind;
    let mut s = String::new();
    for v in views {
        let kind = match v.kind {
            RouteKind::Connected => "connected",
            RouteKind::DsfFabric => "DSF fabric (cells sprayed over live fabric links)",
            RouteKind::Bgp => "bgp",
            RouteKind::Unreachable => "UNREACHABLE",
        };
        let ip = v
            .ipv6
            .as_deref()
            .map(|i| format!(" ({i})"))
            .unwrap_or_default();
        let _ = write!(s, "{} -> {}{ip}: {kind}", v.device, v.prefix);
        if let Some(lp) = v.local_pref {
            let path: Vec<String> = v.as_path.iter().map(u32::to_string).collect();
            let _ = write!(s, ", local-pref {lp}, as-path [{}]", path.join(" "));
        }
        let _ = writeln!(s);
        for h in &v.next_hops {
            let soft = if h.soft_drained {
                " (soft-drained)"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "  via {:<36} {:>3} links {:>9} Gb/s  weight {:>6.2}%  slots {:>3}/{}{soft}",
                h.neighbor,
                h.links,
                h.capacity_gbps,
                100.0 * h.weight,
                h.slots,
                v.group_entries
            );
        }
    }
    s
}

pub fn blackholes(r: &aifabric::routing::BlackholeReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Aggregates at the {} tier ({} aggregation)",
        r.tier, r.aggregation
    );
    for z in &r.scopes {
        let agg = z.aggregate.as_deref().unwrap_or("-");
        let _ = writeln!(
            s,
            "  {:<24} {:<20} {:>6} racks ({} live)  {:>4} borders advertising, {:>4} withdrawn, {:>5} racks unreachable ({} live)",
            z.scope,
            agg,
            z.covered,
            z.live_racks,
            z.advertising.len(),
            z.withdrawn.len(),
            z.unreachable_prefixes,
            z.unreachable_live_racks
        );
    }
    // Live racks nobody can reach are an outage, blackholes or not.
    let outages: Vec<_> = r
        .scopes
        .iter()
        .filter(|z| z.unreachable_live_racks > 0)
        .collect();
    if !outages.is_empty() {
        let _ = writeln!(s, "\nOutages ({})", outages.len());
        for z in &outages {
            let why = z.outage.map_or("", |c| c.describe());
            let _ = writeln!(
                s,
                "  {}: {} of {} live racks unreachable ({:.1}% of its traffic): {why}",
                z.scope,
                z.unreachable_live_racks,
                z.live_racks,
                100.0 * z.outage_share
            );
        }
    }
    if r.blackholes.is_empty() {
        let _ = writeln!(s, "\nNo blackholes.");
    }
    for n in &r.notes {
        let _ = writeln!(s, "Note: {n}.");
    }
    if r.blackholes.is_empty() {
        return s;
    }
    let _ = writeln!(s, "\nBlackholes ({})", r.blackholes.len());
    for b in &r.blackholes {
        let shown: Vec<&str> = b.prefixes.iter().take(4).map(String::as_str).collect();
        let more = if b.prefixes.len() > 4 {
            format!(" (+{} more)", b.prefixes.len() - 4)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "  {} drops {} racks of {}: attracts {:.2}% of the aggregate's traffic, blackholes {:.3}%\n    {}{more}",
            b.device,
            b.prefixes.len(),
            b.scope,
            100.0 * b.attracted_share,
            100.0 * b.blackholed_share,
            shown.join(", ")
        );
    }
    s
}

pub fn ibm(zones: &[aifabric::routing::ZoneIbm]) -> String {
    let mut s = String::new();
    if zones.is_empty() {
        let _ = writeln!(s, "No DSF zones.");
    }
    for z in zones {
        let _ = writeln!(
            s,
            "{}: {} interface nodes, worst retained {:.4}% ({} source/cluster pairs reduced)",
            z.zone,
            z.interface_nodes,
            100.0 * z.worst_fraction,
            z.reduced.len()
        );
        let mut worst: Vec<_> = z.reduced.iter().collect();
        worst.sort_by(|a, b| {
            a.min_fraction
                .total_cmp(&b.min_fraction)
                .then(a.device.cmp(&b.device))
        });
        for r in worst.iter().take(10) {
            let _ = writeln!(
                s,
                "  {:<28} -> cluster{}: {:>9.2} Gb/s ({:.4}%)",
                r.device,
                r.cluster,
                r.min_gbps,
                100.0 * r.min_fraction
            );
        }
        if worst.len() > 10 {
            let _ = writeln!(s, "  ... {} more (--json lists all)", worst.len() - 10);
        }
    }
    s
}

/// `X Pb/s both ways (Y Pb/s per direction)` from Tb/s.
fn pbps_both_ways(both_tbps: f64, per_direction_tbps: f64) -> String {
    format!(
        "{:.2} Pb/s both ways ({:.2} Pb/s per direction)",
        both_tbps / 1_000.0,
        per_direction_tbps / 1_000.0
    )
}

fn share(x: f64) -> String {
    format!("{:.4}", x)
}

pub fn failures(r: &aifabric::failures::FailureReport, top: usize) -> String {
    let sm = &r.summary;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: failure sweep `{}`, {} ({})",
        r.fabric,
        sm.sweep,
        count(sm.scenarios as u64, "scenario", "scenarios"),
        count(sm.draws, "draw", "draws")
    );
    // From a maintenance state, "healthy" figures are the state's.
    let base = match &sm.starting_state {
        Some(st) => {
            let _ = writeln!(
                s,
                "starting state: {} ({} and {} out of service, {} cut off by it); every figure \
                 below is measured from this state",
                st.description,
                count(st.devices_out as u64, "device", "devices"),
                count(st.links_out as u64, "link", "links"),
                count(st.gpus_cut_off, "GPU", "GPUs")
            );
            "state"
        }
        None => "healthy",
    };
    for (pair, g) in &sm.healthy_maxflow_gbps {
        let routed = sm.healthy_gbps.get(pair).copied().unwrap_or(0.0);
        let _ = writeln!(
            s,
            "{base} {pair}: routed {} Tb/s per direction (max-flow bound {} Tb/s)",
            tbps(routed),
            tbps(*g)
        );
    }
    let d = &sm.capacity_retained;
    let _ = writeln!(
        s,
        "routed capacity retained: min {}  P1 {}  P50 {}  mean {}",
        share(d.min),
        share(d.p1),
        share(d.p50),
        share(d.mean)
    );
    let _ = writeln!(
        s,
        "{} capacity; at most {} isolated ({} cut off at their rack); {} with blackholes",
        match sm.scenarios_losing_capacity {
            1 => "1 scenario loses".to_owned(),
            n => format!("{n} scenarios lose"),
        },
        count(sm.max_gpus_isolated, "GPU", "GPUs"),
        sm.max_gpus_disconnected,
        sm.scenarios_with_blackholes
    );
    for n in &sm.notes {
        let _ = writeln!(s, "note: {n}");
    }
    if sm.scenarios_listed < sm.scenarios {
        let _ = writeln!(
            s,
            "the figures above count all {}; the report lists the worst {} in full (--keep N|all)",
            count(sm.scenarios as u64, "scenario", "scenarios"),
            sm.scenarios_listed
        );
    }
    let _ = writeln!(s, "\nWorst per class");
    for c in &sm.by_class {
        let _ = writeln!(
            s,
            "  {:<9} {:>6} {:<9}  worst {}  {}",
            c.class,
            c.scenarios,
            if c.scenarios == 1 {
                "scenario"
            } else {
                "scenarios"
            },
            share(c.min_capacity_retained),
            c.worst
        );
    }
    let _ = writeln!(
        s,
        "\nWorst {} (routed: capacity retained by the worst site or region pair; maxflow: bound \
         over region pairs; isolated: GPUs reaching no other site; worst tier: oversubscription \
         before -> after)",
        count(top.min(r.scenarios.len()) as u64, "scenario", "scenarios"),
    );
    // The scenario column fits the longest name shown (within reason).
    let w = r
        .scenarios
        .iter()
        .take(top)
        .map(|x| x.scenario.len())
        .max()
        .unwrap_or(8)
        .clamp(8, 90);
    let _ = writeln!(
        s,
        "  {:<w$} {:>8} {:>8} {:>9} {:>11}  {:<28} {:>6}",
        "scenario", "routed", "maxflow", "isolated", "blackholed", "worst tier", "draws"
    );
    for rec in r.scenarios.iter().take(top) {
        let maxflow = rec
            .maxflow_retained
            .values()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let maxflow = if maxflow.is_finite() {
            share(maxflow)
        } else {
            "-".to_owned()
        };
        let mut name = rec.scenario.clone();
        if name.len() > w {
            let cut = (0..=w - 3)
                .rev()
                .find(|&i| name.is_char_boundary(i))
                .unwrap_or(0);
            name.truncate(cut);
            name.push_str("...");
        }
        let _ = writeln!(
            s,
            "  {name:<w$} {:>8} {maxflow:>8} {:>9} {:>11}  {:<28} {:>6}",
            share(rec.min_capacity_retained),
            rec.gpus_isolated,
            rec.blackholed_prefixes,
            rec.worst_tier(),
            rec.draws
        );
        for m in &rec.mitigations {
            let mut on = m
                .acts_on
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if m.acts_on.len() > 3 {
                on.push_str(&format!(" and {} more", m.acts_on.len() - 3));
            }
            let _ = writeln!(
                s,
                "    mitigation {:<24} -> routed {}, blackholed {}, live racks unreachable {} ({on})",
                m.mitigation,
                share(m.min_capacity_retained),
                m.blackholes.blackholed_prefixes,
                m.blackholes.unreachable_live_racks,
            );
        }
    }
    s
}

pub fn comparison(c: &aifabric::failures::Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "planar vs spread inter-BAG wiring, {} each",
        count(c.scenarios as u64, "scenario", "scenarios")
    );
    let _ = writeln!(
        s,
        "  {:<8} {:>14} {:>8} {:>8} {:>8}  worst",
        "wiring", "healthy Tb/s", "min", "P1", "P50"
    );
    for d in [&c.planar, &c.spread] {
        let _ = writeln!(
            s,
            "  {:<8} {:>14} {:>8} {:>8} {:>8}  {}",
            d.topology,
            tbps(d.healthy_gbps),
            share(d.capacity_retained.min),
            share(d.capacity_retained.p1),
            share(d.capacity_retained.p50),
            d.worst.as_deref().unwrap_or("-")
        );
    }
    let _ = writeln!(
        s,
        "spread keeps more in {} scenarios, planar in {}",
        c.spread_better, c.planar_better
    );
    for n in &c.notes {
        let _ = writeln!(s, "{n}");
    }
    if !c.largest_differences.is_empty() {
        let _ = writeln!(s, "\nLargest differences (capacity retained)");
        for d in &c.largest_differences {
            let _ = writeln!(
                s,
                "  {:<48} planar {}  spread {}",
                d.scenario,
                share(d.planar),
                share(d.spread)
            );
        }
    }
    s
}

/// `aifabric buffers`.
pub fn buffers(r: &aifabric::capacity::BufferReport) -> String {
    let mut s = String::new();
    let o = &r.options;
    let _ = writeln!(
        s,
        "PFC headroom per port and lossless priority: rate x (2 x cable x 5 ns/m + response \
         time) + 2 x {} B; {} lossless {}",
        o.mtu_bytes,
        o.lossless_priorities,
        if o.lossless_priorities == 1 {
            "priority"
        } else {
            "priorities"
        }
    );
    let _ = writeln!(s, "\nPort classes (longest cable of each)");
    let _ = writeln!(
        s,
        "  {:<22} {:<6} {:>7} {:>9} {:>12} {:>14}",
        "model", "role", "Gb/s", "ports", "longest m", "headroom KB"
    );
    for c in &r.classes {
        let _ = writeln!(
            s,
            "  {:<22} {:<6} {:>7} {:>9} {:>12.1} {:>14.1}",
            c.model,
            c.role,
            c.speed_gbps,
            c.ports,
            c.longest_m,
            c.headroom_bytes / 1e3
        );
    }
    let _ = writeln!(
        s,
        "\nFullest switch of each model (headroom over HBM + SRAM)"
    );
    for w in &r.fullest {
        let _ = writeln!(
            s,
            "  {:<22} {:>10.2} MB of {:>10.1} MB ({:>7.3}%)  {} ({} lossless ports)",
            w.model,
            w.headroom_bytes / 1e6,
            w.buffer_bytes as f64 / 1e6,
            w.share * 100.0,
            w.switch,
            w.ports
        );
    }
    let _ = writeln!(
        s,
        "\nLongest lossless cable per model and speed (buffer shared by all ports at that speed)"
    );
    for l in &r.limits {
        let _ = writeln!(
            s,
            "  {:<22} {:>4} x {:>5} Gb/s, {:>10.1} MB: {:>10.0} m",
            l.model,
            l.ports,
            l.speed_gbps,
            l.buffer_bytes as f64 / 1e6,
            l.longest_m
        );
    }
    if r.switches_over == 0 {
        let _ = writeln!(s, "\nEvery switch holds its headroom.");
    } else {
        let _ = writeln!(
            s,
            "\n{} switches cannot hold their headroom (first {} listed):",
            r.switches_over,
            r.problems.len()
        );
        for p in &r.problems {
            let _ = writeln!(
                s,
                "  {} ({}): {:.1} MB needed, {:.1} MB; longest cable {}; fix: {}",
                p.switch,
                p.model,
                p.headroom_bytes / 1e6,
                p.buffer_bytes as f64 / 1e6,
                p.longest_link,
                p.fix
            );
        }
    }
    s
}

/// `aifabric validation`: one block per row.
pub fn validation(v: &aifabric::validation::Validation, derived_efficiency: f64) -> String {
    use aifabric::validation::Role;
    let mut s = String::new();
    let (ok, n) = v.score();
    let _ = writeln!(
        s,
        "Published figures against predictions: {ok} of {n} predictions within their stated \
         tolerance"
    );
    for c in &v.checks {
        let role = match c.role {
            Role::Calibration => "calibration",
            Role::Prediction if c.holds() => "ok",
            Role::Prediction => "MISS",
        };
        let _ = writeln!(
            s,
            "\n[{role}] {}\n  published {} {}, predicted {:.4} {} ({:+.1}%, tolerance {:.0}%)\n  \
             source: {}\n  setup: {}",
            c.figure,
            c.published,
            c.unit,
            c.predicted,
            c.unit,
            100.0 * c.error,
            100.0 * c.tolerance,
            c.source,
            c.setup
        );
        if !c.note.is_empty() {
            let _ = writeln!(s, "  note: {}", c.note);
        }
    }
    let _ = writeln!(
        s,
        "\nThe H100 card's kernel efficiency its calibration run derives now: {derived_efficiency:.4}"
    );
    s
}
