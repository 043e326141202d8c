//! Taking a lab down: after `lab down`, after an interrupted `up` (its signal handler, through
//! [`abandon`](crate::abandon)), and for the leftovers of an `up` that was killed outright
//! ([`clear_leftovers`]). All work from the state file alone, which `up` writes before it
//! makes anything.

use crate::netns::{tag_of, veth_names};
use crate::state::LabState;
use crate::supervisor::alive;
use crate::{run, runtime_in, DAEMONS_FILE, STATE_FILE, STOP_FILE};
use aifabric::Error;
use serde::Serialize;
use std::path::Path;

/// What [`down`] removed, by name.
#[derive(Clone, Debug, Serialize)]
pub struct DownReport {
    /// The contract's version.
    pub schema_version: u32,
    /// The lab's directory.
    pub dir: String,
    /// Whether the directory was removed (it is kept if it holds files `up` did not make).
    pub dir_removed: bool,
    /// Namespaces deleted.
    pub namespaces: usize,
    /// Processes left after the supervisor (or without one) that had to be killed.
    pub killed: usize,
    /// The supervisor's process id, if it was running and was stopped.
    pub supervisor: Option<u32>,
    /// The namespaces deleted (with them their veth ends).
    pub namespace_names: Vec<String>,
    /// The processes killed, as `<pid> <command>`.
    pub processes: Vec<String>,
    /// Veth pairs found in the host namespace (a link `up` was making when it was killed),
    /// deleted.
    pub host_links: Vec<String>,
}

/// Take the lab in `dir` down: stop the supervisor (it kills and reaps the daemons), kill
/// whatever still runs in the lab's namespaces (a crashed supervisor's daemons), delete the
/// namespaces (and with them the veths), the veth pairs a killed `up` left in the host
/// namespace, the files `up` made, and the directory once empty.
pub fn down(dir: &Path) -> Result<DownReport, Error> {
    let state = LabState::read(dir)?;
    let supervisor = state
        .supervisor
        .filter(|pid| crate::supervisor::stop(dir, *pid));
    let mut report = DownReport {
        schema_version: aifabric::SCHEMA_VERSION,
        dir: dir.display().to_string(),
        dir_removed: false,
        namespaces: 0,
        killed: 0,
        supervisor,
        namespace_names: Vec::new(),
        processes: Vec::new(),
        host_links: Vec::new(),
    };
    let existing = run("ip", &["netns", "list"]).unwrap_or_default();
    for r in &state.routers {
        let present = existing
            .lines()
            .any(|l| l.split_whitespace().next() == Some(r.namespace.as_str()));
        if !present {
            continue;
        }
        let pids = run("ip", &["netns", "pids", &r.namespace]).unwrap_or_default();
        for p in pids.split_whitespace() {
            let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
            if run("kill", &["-9", p]).is_ok() {
                report.processes.push(format!("{p} {}", comm.trim()));
            }
        }
        run("ip", &["netns", "del", &r.namespace])?;
        report.namespace_names.push(r.namespace.clone());
    }
    // A link's pair is made in the host namespace, then its ends are moved: `up` killed in
    // between leaves it there (deleting one end deletes the pair).
    let links = run("ip", &["-o", "link", "show"]).unwrap_or_default();
    let tag = tag_of(dir);
    for i in 0..state.links.len() {
        let [a, _] = veth_names(&tag, i);
        let here = links.lines().any(|l| {
            l.split(':')
                .nth(1)
                .map(|n| n.trim().split('@').next() == Some(a.as_str()))
                .unwrap_or(false)
        });
        if here && run("ip", &["link", "del", &a]).is_ok() {
            report.host_links.push(a);
        }
    }
    // What `up` made, then the directory if nothing else is in it.
    for sub in ["conf", "run"] {
        let p = dir.join(sub);
        if p.exists() {
            std::fs::remove_dir_all(&p)
                .map_err(|e| runtime_in(&format!("cannot remove {}", p.display()), e))?;
        }
    }
    for file in [DAEMONS_FILE, STOP_FILE, "supervisor.log", STATE_FILE] {
        let _ = std::fs::remove_file(dir.join(file));
    }
    let _ = std::fs::remove_file(dir.join(STATE_FILE).with_extension("tmp"));
    // The export's staging directories (`.aifabric-partial-<pid>.<boot>-conf.new-*`, and
    // `.conf.old-*` between its two renames), had `up` been killed while writing it.
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let staging = name.starts_with(".conf.") || name.starts_with(".aifabric-partial-");
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if staging {
            let _ = if is_dir {
                std::fs::remove_dir_all(e.path())
            } else {
                std::fs::remove_file(e.path())
            };
        }
    }
    let _ = std::fs::remove_dir(dir);
    report.dir_removed = !dir.exists();
    report.namespaces = report.namespace_names.len();
    report.killed = report.processes.len();
    Ok(report)
}

/// Whether process `pid` is an `aifabric lab up` that is running (so a lab it records is
/// being brought up, not left behind).
pub(crate) fn building(pid: u32) -> bool {
    // A killed `up` whose pid this very process now has is not building anything.
    pid != std::process::id()
        && alive(pid)
        && std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.windows(7).any(|w| w == b"lab\0up\0"))
}

/// The leftovers of an `up` in `dir` that was killed before it finished (SIGKILL, a power
/// cut: no handler ran), removed with [`down`]; `None` when `dir` holds no lab, a complete
/// one, or one still being brought up.
pub fn clear_leftovers(dir: &Path) -> Result<Option<DownReport>, Error> {
    if !dir.join(STATE_FILE).exists() {
        return Ok(None);
    }
    let state = LabState::read(dir)?;
    match state.builder {
        Some(pid) if !building(pid) => down(dir).map(Some),
        _ => Ok(None),
    }
}
