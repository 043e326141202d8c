//! `aifabric drift`: the network as found against the plan, what it does to routing and,
//! with `--jobs`, to each job.

use crate::args::{DriftArgs, ImportArgs, InventoryArgs};
use crate::commands::cluster;
use crate::{emit_versioned, load, Failure};
use aifabric::stages::spec;
use std::fmt::Write;

pub(crate) fn run(a: DriftArgs) -> Result<(), Failure> {
    let DriftArgs {
        inventory: InventoryArgs { plan, netbox, lldp },
        jobs,
        show,
        json,
    } = a;
    let f = load(&plan)?;
    let lldp: Vec<&std::path::Path> = lldp.iter().map(std::path::Path::new).collect();
    let r = with_progress(|progress| {
        aifabric::as_built::as_found_with_progress(
            &f,
            netbox.as_deref().map(std::path::Path::new),
            &lldp,
            progress,
        )
    });
    let mut r = r?;
    if let Some(jobs) = jobs {
        let cluster = spec::cluster::load_cluster(&f, &jobs).map_err(Failure::BadInput)?;
        r.cost_to_jobs(&f, &cluster, aifabric::Setup::default())?;
    }
    emit_versioned(json, &r, |r| {
        let mut o = render(r, show);
        if let Some(costs) = &r.jobs {
            o.push_str(&cluster::job_costs(costs));
        }
        o
    })?;
    if r.drift.clean() {
        Ok(())
    } else {
        Err(Failure::Exit(1))
    }
}

/// `run(progress)` under a bar of bytes while reading, then a line for each stage without
/// a count.
fn with_progress<T>(run: impl FnOnce(&dyn Fn(&str, u64, u64)) -> T) -> T {
    let bar = std::cell::RefCell::new(crate::progress::Progress::bytes("reading the inventory"));
    let stage = std::cell::RefCell::new(String::from("reading"));
    let r = run(&|now, done, total| {
        if now != stage.borrow().as_str() {
            now.clone_into(&mut stage.borrow_mut());
            bar.borrow().finish_and_clear();
            *bar.borrow_mut() = crate::progress::Progress::counter(match now {
                "comparing" => "comparing with the plan",
                "capacity" => "capacity as built",
                _ => "routing on the network as built",
            });
        }
        let b = bar.borrow();
        b.set_length(total);
        b.set_position(done);
    });
    bar.borrow().finish_and_clear();
    r
}

/// What `aifabric import` wrote.
#[derive(serde::Serialize)]
struct Imported<'a> {
    plan: &'a str,
    inventory: &'a str,
    /// The scenario file written.
    out: String,
    /// Planned links missing or miswired: failed in it.
    failed_links: usize,
    /// Links at another speed: at the speed found in it.
    link_speeds: usize,
    /// The drift's findings by kind.
    counts: &'a std::collections::BTreeMap<String, u64>,
}

/// `aifabric import`: the drift written as a scenario file every command takes.
pub(crate) fn import(a: ImportArgs) -> Result<(), Failure> {
    let ImportArgs {
        inventory: InventoryArgs { plan, netbox, lldp },
        out,
        json,
    } = a;
    let f = load(&plan)?;
    let lldp: Vec<&std::path::Path> = lldp.iter().map(std::path::Path::new).collect();
    let drift = with_progress(|progress| {
        aifabric::as_built::drift_as_found_with_progress(
            &f,
            netbox.as_deref().map(std::path::Path::new),
            &lldp,
            progress,
        )
    })?;
    let yaml = aifabric::as_built::scenario_yaml(&f, &drift);
    crate::output::write_atomic(&out, |w| std::io::Write::write_all(w, yaml.as_bytes()))
        .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", out.display())))?;
    let done = Imported {
        plan: &drift.plan,
        inventory: &drift.inventory,
        out: out.display().to_string(),
        failed_links: drift.lost_links.len(),
        link_speeds: drift.link_speeds.len(),
        counts: &drift.counts,
    };
    emit_versioned(json, &done, |d| {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "# {} as built ({}): {} planned link(s) missing or miswired, failed; {} at another \
             speed, at the speed found",
            d.plan, d.inventory, d.failed_links, d.link_speeds
        );
        if !d.counts.is_empty() {
            let kinds: Vec<String> = d.counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
            let _ = writeln!(
                o,
                "drift: {} (`aifabric drift` lists them)",
                kinds.join(", ")
            );
        }
        let _ = writeln!(
            o,
            "wrote {} ({} bytes): every command takes it, e.g. `aifabric capacity {} --scenario {}`",
            d.out,
            yaml.len(),
            plan,
            d.out
        );
        o
    })
}

/// `aifabric drift`: the counts, routing as built, the capacity lost per tier, per place
/// and per switch, then up to `show` findings of each kind.
fn render(found: &aifabric::as_built::AsFound, show: usize) -> String {
    use aifabric::as_built::Finding;
    let r = &found.drift;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# {} as built ({}): {} planned links, {} cables in the inventory",
        r.plan, r.inventory, r.planned_links, r.cables
    );
    if r.clean() {
        let _ = writeln!(
            o,
            "no drift: every planned device and cable is there, as planned"
        );
        return o;
    }
    const KINDS: [&str; 7] = [
        "missing_cable",
        "miswired",
        "wrong_speed",
        "wrong_address",
        "extra_cable",
        "missing_device",
        "unexpected_device",
    ];
    let counts: Vec<String> = KINDS
        .iter()
        .filter_map(|k| r.counts.get(*k).map(|&n| drift_label(k, n)))
        .collect();
    let _ = writeln!(o, "drift: {}", counts.join(", "));
    if let Some(x) = &found.routing {
        let s = |n: u64| if n == 1 { "" } else { "s" };
        let (u, b, n) = (
            x.unreachable_live_racks,
            x.blackholing_switches,
            x.blackholed_racks.len() as u64,
        );
        let racks = match x.blackholed_racks.as_slice() {
            [] => String::new(),
            r => format!(
                " ({}{})",
                r[..r.len().min(show)].join(", "),
                if r.len() > show { ", ..." } else { "" }
            ),
        };
        let what = if u == 0 && b == 0 {
            "every live rack reachable, no blackhole".to_owned()
        } else {
            format!(
                "{u} live rack{} unreachable, {b} switch{} blackholing {n} rack{}{racks}",
                s(u),
                if b == 1 { "" } else { "es" },
                s(n)
            )
        };
        let _ = writeln!(
            o,
            "as built, routing (zone aggregates, unconditional): {what}"
        );
    }
    if !r.tiers.is_empty() {
        let _ = writeln!(o, "\nPlanned capacity lost (links missing or miswired)");
        let _ = writeln!(
            o,
            "  {:<16} {:>8} {:>8} {:>12} {:>7}",
            "tier", "links", "lost", "lost Gb/s", "share"
        );
        for t in &r.tiers {
            let _ = writeln!(
                o,
                "  {:<16} {:>8} {:>8} {:>12.0} {:>6.2}%",
                t.tier,
                t.links,
                t.lost_links,
                t.lost_gbps,
                100.0 * t.lost_share
            );
        }
    }
    if !found.oversubscription.is_empty() {
        let ratio = |x: Option<f64>| x.map_or("no up".to_owned(), |x| format!("{x:.4}:1"));
        let _ = writeln!(
            o,
            "\nCapacity and oversubscription as built (tiers that change, down : up)"
        );
        let _ = writeln!(
            o,
            "  {:<16} {:<24} {:>12} {:>10} {:>12} {:>10} {:>10} {:>10}",
            "tier", "scope", "down Gb/s", "as built", "up Gb/s", "as built", "ratio", "as built"
        );
        for t in &found.oversubscription {
            let _ = writeln!(
                o,
                "  {:<16} {:<24} {:>12.0} {:>10.0} {:>12.0} {:>10.0} {:>10} {:>10}",
                t.tier,
                t.scope,
                t.planned_down_gbps,
                t.down_gbps,
                t.planned_up_gbps,
                t.up_gbps,
                ratio(t.planned_oversubscription),
                ratio(t.oversubscription)
            );
        }
    }
    let _ = writeln!(o, "\nBy place");
    for g in &r.groups {
        let mut kinds: Vec<String> = KINDS
            .iter()
            .filter_map(|k| g.findings.get(*k).map(|&n| drift_label(k, n)))
            .collect();
        if g.lost_gbps > 0.0 {
            kinds.push(format!("{:.0} Gb/s lost", g.lost_gbps));
        }
        let mut place = if g.hall.is_empty() {
            g.site.clone()
        } else {
            g.hall.clone()
        };
        if let Some(p) = g.plane {
            place.push_str(&format!(" plane {p}"));
        }
        let _ = writeln!(o, "  {place}: {}", kinds.join(", "));
    }
    if !r.switches.is_empty() {
        let _ = writeln!(o, "\nBy switch (most findings first)");
        for sw in r.switches.iter().take(show) {
            let kinds: Vec<String> = KINDS
                .iter()
                .filter_map(|k| sw.findings.get(*k).map(|&n| drift_label(k, n)))
                .collect();
            let _ = writeln!(o, "  {}: {} on {}", sw.device, kinds.join(", "), sw.ports);
            if let Some(h) = &sw.hint {
                let _ = writeln!(o, "    {h}");
            }
        }
        if r.switches.len() > show {
            let _ = writeln!(o, "  ... and {} more switches", r.switches.len() - show);
        }
    }
    for k in KINDS {
        let of_kind: Vec<&Finding> = r.findings.iter().filter(|x| x.kind() == k).collect();
        if of_kind.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n{}", drift_label(k, of_kind.len() as u64));
        for x in of_kind.iter().take(show) {
            let line = match x {
                Finding::MissingCable { a, b, tier, gbps } => {
                    format!("{a} -- {b} ({tier}, {gbps:.0} Gb/s)")
                }
                Finding::Miswired {
                    at,
                    planned_peer,
                    found_peer,
                    how,
                    line,
                } => format!(
                    "{at}: to {found_peer}, planned {planned_peer} ({how}; cables.csv:{line})"
                ),
                Finding::ExtraCable { a, b, line } => format!("{a} -- {b} (cables.csv:{line})"),
                Finding::WrongSpeed {
                    at,
                    planned_gbps,
                    found_gbps,
                } => format!("{at}: {found_gbps:.0} Gb/s, planned {planned_gbps:.0}"),
                Finding::WrongAddress { at, planned, found } => {
                    format!("{at}: {found}, planned {planned}")
                }
                Finding::MissingDevice { name, role } => format!("{name} ({role})"),
                Finding::UnexpectedDevice { name, role, line } => {
                    format!("{name} ({role}; devices.csv:{line})")
                }
            };
            let _ = writeln!(o, "  {line}");
        }
        if of_kind.len() > show {
            let _ = writeln!(
                o,
                "  ... and {} more (--show N, or --json)",
                of_kind.len() - show
            );
        }
    }
    o
}

/// `n` findings of kind `k`, in words.
fn drift_label(k: &str, n: u64) -> String {
    let s = if n == 1 { "" } else { "s" };
    match k {
        "missing_cable" => format!("{n} missing cable{s}"),
        "miswired" => format!("{n} miswired cable end{s}"),
        "wrong_speed" => format!("{n} interface{s} at the wrong speed"),
        "wrong_address" => format!("{n} interface{s} at the wrong address"),
        "extra_cable" => format!("{n} extra cable{s}"),
        "missing_device" => format!("{n} missing device{s}"),
        "unexpected_device" => format!("{n} unexpected device{s}"),
        _ => format!("{n} {k}"),
    }
}
