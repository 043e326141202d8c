//! `aifabric lab up|check|status|exec|down`: thin over [`aifabric_lab`].

use crate::args::LabCommand;
use crate::{emit, load, Failure};
use aifabric_lab::{self as lab, LabCheck};
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Duration;

pub(crate) fn run(command: LabCommand) -> Result<(), Failure> {
    match command {
        LabCommand::Up {
            spec,
            dir,
            frr,
            max_routers,
            frr_version,
            aggregation,
            json,
            bgp,
            speeds,
        } => {
            let mut f = load(&spec)?;
            if speeds.apply(&mut f)? {
                let _ = writeln!(
                    std::io::stderr(),
                    "lab up: the links run at the speeds given; what the scenario fails or \
                     drains goes down at `lab check` given the same --scenario or --as-built"
                );
            }
            let study = aifabric::Study::healthy(&f, bgp.setup());
            // A spec file is recorded by its absolute path: `check` may run from elsewhere.
            let spec = match std::fs::canonicalize(&spec) {
                Ok(p) if p.is_file() => p.display().to_string(),
                _ => spec,
            };
            let exe = std::env::current_exe()
                .map_err(|e| Failure::Runtime(format!("cannot find the aifabric binary: {e}")))?;
            let dir = absolute(&dir)?;
            // An earlier `up` here killed outright (no handler ran) left its lab: remove it.
            if let Some(r) = lab::clear_leftovers(&dir)? {
                let said = format!(
                    "removed the leftovers of an interrupted `lab up` in {}: {}",
                    dir.display(),
                    removed(&r)
                );
                let _ = writeln!(std::io::stderr(), "{said}");
            }
            let opts = lab::UpOptions {
                frr,
                frr_version: (frr_version != "auto").then_some(frr_version),
                aggregation,
                supervisor: exe,
                max_routers,
            };
            let state = lab::up(&study, &spec, &dir, &opts)?;
            // The check must give the same speeds: named when they read as typed.
            let flags = speeds.flags();
            let plain = |a: &str| {
                !a.is_empty()
                    && a.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "._/-:=+,".contains(c))
            };
            let same = match flags.is_empty() {
                true => String::new(),
                false if flags.iter().all(|a| plain(a)) => format!(" {}", flags.join(" ")),
                false => " (with the same --scenario or --as-built)".to_owned(),
            };
            emit(json, &state, |s| {
                format!(
                    "lab {} up in {}: {} routers, {} links, FRR {} (weights in {} steps; supervisor pid {})\nnext: aifabric lab check {} --dir {}{same}\n",
                    s.fabric,
                    dir.display(),
                    s.routers.len(),
                    s.links.len(),
                    s.frr_version,
                    s.weight_steps,
                    s.supervisor.unwrap_or(0),
                    s.spec,
                    dir.display()
                )
            })
        }
        LabCommand::Check {
            spec,
            dir,
            timeout,
            json,
            scenario,
        } => {
            if !(timeout.is_finite() && timeout >= 0.0) {
                return Err(Failure::BadArgument(
                    "--timeout must be a number of seconds >= 0".into(),
                ));
            }
            let mut f = load(&spec)?;
            let s = scenario.resolve(&mut f)?;
            let describe = match scenario.describe() {
                d if d.is_empty() => "healthy".to_owned(),
                d => d,
            };
            let c = lab::check(&f, &dir, s, &describe, Duration::from_secs_f64(timeout))?;
            emit(json, &c, render)?;
            if c.agreed {
                Ok(())
            } else {
                let aggregates = c.aggregates.iter().filter(|a| a.aifabric != a.frr).count();
                Err(Failure::Runtime(format!(
                    "{} of {} routes and {aggregates} of {} aggregates disagree with FRR after {:.0} s",
                    c.mismatches.len(),
                    c.routes,
                    c.aggregates.len(),
                    c.seconds
                )))
            }
        }
        LabCommand::Down { dir, json } => {
            let r = lab::down(&dir)?;
            emit(json, &r, |r| {
                format!(
                    "lab in {} down: {} namespaces removed, {} processes killed after the supervisor\n{}\n",
                    dir.display(),
                    r.namespaces,
                    r.killed,
                    removed(r)
                )
            })
        }
        LabCommand::Status { dir, json } => {
            let s = lab::status(&dir)?;
            emit(json, &s, render_status)?;
            if s.healthy {
                Ok(())
            } else {
                Err(Failure::Runtime(format!(
                    "the lab in {} is not whole: {} of {} daemons run, supervisor {}{}; `aifabric lab down --dir {}` removes it",
                    dir.display(),
                    s.daemons_running,
                    s.daemons_expected,
                    if s.supervisor_running { "running" } else { "not running" },
                    if s.building.is_some() { ", `lab up` still building" } else { "" },
                    dir.display()
                )))
            }
        }
        LabCommand::Exec {
            router,
            dir,
            command,
        } => {
            let status = lab::exec(&dir, &router, &command)?;
            match status.code() {
                Some(0) => Ok(()),
                code => Err(Failure::Exit(code.unwrap_or(1))),
            }
        }
        LabCommand::Supervise { dir } => Ok(lab::supervise(&dir)?),
    }
}

/// The interrupt handler's part for the lab: undo a `lab up` in progress ([`lab::abandon`])
/// and say what was removed; otherwise the generic message.
pub(crate) fn on_interrupt() -> String {
    match lab::abandon() {
        None => "\ninterrupted: no partial output left\n".to_owned(),
        Some((_, Ok(r))) => format!(
            "\ninterrupted: `lab up` stopped and removed what it had made: {}\n",
            removed(&r)
        ),
        Some((dir, Err(e))) => format!(
            "\ninterrupted: `lab up` stopped, but removing what it had made failed: {}; remove \
             the rest with `aifabric lab down --dir {}`\n",
            e.message(),
            dir.display()
        ),
    }
}

/// What a take-down removed, by name.
fn removed(r: &lab::DownReport) -> String {
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(", ")
        }
    };
    let supervisor = r
        .supervisor
        .map_or("not running".to_owned(), |p| format!("{p} stopped"));
    format!(
        "supervisor {supervisor}; namespaces deleted: {}; processes killed: {}; host veths \
         deleted: {}; directory {} {}",
        list(&r.namespace_names),
        list(&r.processes),
        list(&r.host_links),
        r.dir,
        if r.dir_removed {
            "removed"
        } else {
            "kept (it holds other files)"
        }
    )
}

fn absolute(dir: &std::path::Path) -> Result<std::path::PathBuf, Failure> {
    std::path::absolute(dir)
        .map_err(|e| Failure::BadArgument(format!("--dir {}: {e}", dir.display())))
}

fn render_status(s: &lab::LabStatus) -> String {
    let mut out = format!(
        "lab {} in {} ({}): {} routers, {} links, FRR {}; supervisor {}; {} of {} daemons running{}\n",
        s.fabric,
        s.dir,
        s.spec,
        s.routers.len(),
        s.links,
        s.frr_version,
        match (s.supervisor, s.supervisor_running) {
            (Some(p), true) => format!("{p} running"),
            (Some(p), false) => format!("{p} not running"),
            (None, _) => "never started".to_owned(),
        },
        s.daemons_running,
        s.daemons_expected,
        s.building
            .map_or(String::new(), |p| format!("; `lab up` {p} still building")),
    );
    if !s.drained.is_empty() {
        let _ = writeln!(out, "drained link ends: {}", s.drained.join(", "));
    }
    let _ = writeln!(
        out,
        "  {:<40} {:<8} {:<12} zebra  bgpd",
        "router", "role", "namespace"
    );
    for r in &s.routers {
        let yes = |b: bool| if b { "up" } else { "DOWN" };
        let _ = writeln!(
            out,
            "  {:<40} {:<8} {:<12} {:<6} {}",
            r.name,
            r.role,
            if r.namespace_present {
                r.namespace.as_str()
            } else {
                "MISSING"
            },
            yes(r.zebra),
            yes(r.bgpd)
        );
    }
    let _ = writeln!(
        out,
        "next: aifabric lab exec ROUTER --dir {} -- vtysh -c 'show bgp summary'",
        s.dir
    );
    out
}

fn render(c: &LabCheck) -> String {
    let mut out = String::new();
    for a in &c.aggregates {
        let same = if a.aifabric == a.frr {
            "agree"
        } else {
            "DIFFER"
        };
        let view = |v: &lab::AggregateView| {
            let holes: Vec<String> = v
                .blackholes
                .iter()
                .map(|(b, p)| format!("{b} drops {}", p.len()))
                .collect();
            format!(
                "advertising {}, withdrawn {}, blackholes {}",
                v.advertising.len(),
                v.withdrawn.len(),
                if holes.is_empty() {
                    "none".to_owned()
                } else {
                    holes.join(", ")
                }
            )
        };
        let _ = writeln!(
            out,
            "aggregate {} ({}): {same}: aifabric [{}]  FRR [{}]",
            a.prefix,
            a.zone,
            view(&a.aifabric),
            view(&a.frr)
        );
    }
    out.insert_str(
        0,
        &format!(
            "lab {} ({}): {} routers, {} routes compared, links down: {}\n",
            c.fabric,
            c.scenario,
            c.routers,
            c.routes,
            if c.links_down.is_empty() {
                "none".to_owned()
            } else {
                c.links_down.join(", ")
            }
        ),
    );
    if c.agreed {
        let _ = writeln!(
            out,
            "every route agrees with aifabric's: next hops, links, shares, LOCAL_PREF, AS-path length (after {:.1} s)",
            c.seconds
        );
        return out;
    }
    let _ = writeln!(
        out,
        "{} routes disagree after {:.1} s:",
        c.mismatches.len(),
        c.seconds
    );
    let side = |s: &lab::Side| {
        let hops = s
            .hops
            .iter()
            .map(|(n, h)| format!("{n} x{} {:.3}", h.links, h.share))
            .collect::<Vec<_>>()
            .join(", ");
        let lp = s.local_pref.map_or("-".to_owned(), |x| x.to_string());
        format!("{hops}; local-pref {lp}, as-path {:?}", s.as_path)
    };
    for m in &c.mismatches {
        let _ = writeln!(
            out,
            "  {} -> {} ({}): aifabric [{}]  FRR [{}]  share gap {:.3}",
            m.router,
            m.prefix,
            m.origin,
            side(&m.aifabric),
            side(&m.frr),
            m.share_gap
        );
    }
    out
}
