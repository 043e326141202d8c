//! What a lab is now ([`status`]): from its state file, each router's namespace and daemons
//! (their pid files), the supervisor and an `up` still building; and a command run inside one
//! router's namespace ([`exec`]), `vtysh` pointed at that router's daemons.

use crate::state::LabState;
use crate::supervisor::alive;
use crate::{bad_request, runtime_in};
use aifabric::Error;
use serde::Serialize;
use std::path::Path;
use std::process::{Command, ExitStatus};

/// One router of a lab, now.
#[derive(Clone, Debug, Serialize)]
pub struct RouterStatus {
    /// Device name (what `lab exec` takes).
    pub name: String,
    /// Its network namespace.
    pub namespace: String,
    /// Role (`rtsw`, `ctsw`, ...).
    pub role: String,
    /// Whether its namespace exists.
    pub namespace_present: bool,
    /// Whether its zebra runs (by its pid file).
    pub zebra: bool,
    /// Whether its bgpd runs.
    pub bgpd: bool,
}

/// A lab, now: `aifabric lab status`.
#[derive(Clone, Debug, Serialize)]
pub struct LabStatus {
    /// The contract's version.
    pub schema_version: u32,
    /// The lab's directory.
    pub dir: String,
    /// The spec it runs, and the fabric's name.
    pub spec: String,
    /// The fabric's name.
    pub fabric: String,
    /// FRR's version.
    pub frr_version: String,
    /// Links (veth pairs).
    pub links: usize,
    /// The supervisor's pid and whether it runs.
    pub supervisor: Option<u32>,
    /// Whether the supervisor runs.
    pub supervisor_running: bool,
    /// An `up` still bringing the lab up (its pid), if one runs.
    pub building: Option<u32>,
    /// Daemons running, of the two per router a complete lab has.
    pub daemons_running: usize,
    /// Two per router.
    pub daemons_expected: usize,
    /// Whether every namespace exists and every daemon runs under a live supervisor.
    pub healthy: bool,
    /// Link ends the last `check` drained (`<link>:<end>`).
    pub drained: Vec<String>,
    /// Zone aggregation configured, if any.
    pub aggregation: Option<String>,
    /// Each router.
    pub routers: Vec<RouterStatus>,
}

/// The lab in `dir` as it is now. A directory without a lab is a bad request saying how to
/// start one.
pub fn status(dir: &Path) -> Result<LabStatus, Error> {
    let state = LabState::read(dir)?;
    let running = |ns: &str, daemon: &str| {
        std::fs::read_to_string(dir.join("run").join(ns).join(format!("{daemon}.pid")))
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
            .is_some_and(alive)
    };
    let routers: Vec<RouterStatus> = state
        .routers
        .iter()
        .map(|r| RouterStatus {
            name: r.name.clone(),
            namespace: r.namespace.clone(),
            role: r.role.clone(),
            namespace_present: Path::new("/run/netns").join(&r.namespace).exists(),
            zebra: running(&r.namespace, "zebra"),
            bgpd: running(&r.namespace, "bgpd"),
        })
        .collect();
    let daemons_running = routers
        .iter()
        .map(|r| usize::from(r.zebra) + usize::from(r.bgpd))
        .sum();
    let supervisor_running = state.supervisor.is_some_and(alive);
    let building = state.builder.filter(|&p| crate::teardown::building(p));
    let healthy = supervisor_running
        && building.is_none()
        && routers
            .iter()
            .all(|r| r.namespace_present && r.zebra && r.bgpd);
    Ok(LabStatus {
        schema_version: 1,
        dir: dir.display().to_string(),
        spec: state.spec,
        fabric: state.fabric,
        frr_version: state.frr_version,
        links: state.links.len(),
        supervisor: state.supervisor,
        supervisor_running,
        building,
        daemons_running,
        daemons_expected: 2 * routers.len(),
        healthy,
        drained: state.drained,
        aggregation: state.aggregation,
        routers,
    })
}

/// Run `command` inside router `router`'s namespace of the lab in `dir`, with this process's
/// standard input and output, and return how it ended. `vtysh` is given the router's socket
/// directory (`--vty_socket`), so `lab exec R -- vtysh -c 'show bgp summary'` talks to R's
/// daemons. An unknown router is a bad request naming the closest names.
pub fn exec(dir: &Path, router: &str, command: &[String]) -> Result<ExitStatus, Error> {
    let state = LabState::read(dir)?;
    let Some(r) = state.routers.iter().find(|r| r.name == router) else {
        let mut near: Vec<(f64, &str)> = state
            .routers
            .iter()
            .map(|r| (strsim::jaro_winkler(router, &r.name), r.name.as_str()))
            .filter(|&(s, _)| s > 0.8)
            .collect();
        near.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        let hint = if near.is_empty() {
            format!(
                "`aifabric lab status --dir {}` lists the {} routers",
                dir.display(),
                state.routers.len()
            )
        } else {
            let names: Vec<&str> = near.iter().take(3).map(|x| x.1).collect();
            format!("did you mean {}?", names.join(", "))
        };
        return Err(bad_request(format!(
            "the lab in {} has no router `{router}`: {hint}",
            dir.display()
        )));
    };
    let Some((program, args)) = command.split_first() else {
        return Err(bad_request(
            "give the command to run after `--`, e.g. `-- vtysh -c 'show bgp summary'`".into(),
        ));
    };
    let mut c = Command::new("ip");
    c.args(["netns", "exec", &r.namespace, program]);
    if Path::new(program).file_name().is_some_and(|n| n == "vtysh") {
        c.arg("--vty_socket")
            .arg(dir.join("run").join(&r.namespace));
    }
    c.args(args);
    c.status()
        .map_err(|e| runtime_in(&format!("cannot run `ip netns exec {}`", r.namespace), e))
}
