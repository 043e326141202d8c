//! The machine side: whether it can run a lab, and the namespaces and veths [`up`] makes
//! (recorded first; the supervisor started last) and [`down`](crate::down) removes.

use crate::state::{LabEnd, LabLink, LabRouter, LabState};
use crate::{bad_request, run, runtime_in, STATE_FILE};
use aifabric::stages::routing::aggregation::Aggregation;
use aifabric::{Error, Study};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether this machine can run a lab: root (from `/proc/self/status`), iproute2 with network
/// namespaces allowed, and FRR's `zebra` and `bgpd` in `frr`. The error says which is missing
/// and how to get it.
pub fn environment(frr: &Path) -> Result<(), Error> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("");
    if uid != "0" {
        return Err(bad_request(
            "the lab needs root: network namespaces, veth pairs and FRR's daemons are made as \
             root (run it with sudo, or in a VM or container where you are root)"
                .into(),
        ));
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Err(bad_request(
            "no `ip` command: install iproute2 (apt-get install iproute2)".into(),
        ));
    }
    for daemon in ["zebra", "bgpd"] {
        if !frr.join(daemon).exists() {
            return Err(bad_request(format!(
                "FRR is not installed: no {}; install it (apt-get install frr) or give its \
                 daemon directory with --frr",
                frr.join(daemon).display()
            )));
        }
    }
    let probe = format!("afprobe{}", std::process::id());
    run("ip", &["netns", "add", &probe]).map_err(|e| {
        bad_request(format!(
            "network namespaces are not allowed here ({}); run the lab where `ip netns add` works",
            e.message()
        ))
    })?;
    let _ = run("ip", &["netns", "del", &probe]);
    Ok(())
}

/// FRR's version as `bgpd --version` prints it (`8.4.4`).
pub fn frr_version(frr: &Path) -> Result<String, Error> {
    let bgpd = frr.join("bgpd").display().to_string();
    let out = run(&bgpd, &["--version"])?;
    out.lines()
        .find_map(|l| l.strip_prefix("bgpd version "))
        .map(|v| v.trim().to_owned())
        .ok_or_else(|| Error::Runtime {
            message: format!("cannot read FRR's version from `{bgpd} --version`: {out}"),
            source: None,
        })
}

/// How finely FRR programs link-bandwidth weights into kernel next hops: 8.x scales each next
/// hop's share to an integer weight from 1 to 100 (bgpd's `bgp_zebra.c`, checked here on
/// 8.4.4: 2:1 over three links installs 33 + 33 and 33); later releases scale to 1-255 (from
/// FRR's release notes; not checked here, where only 8.4.4 is installed). A version it
/// cannot read is a bad request.
pub fn weight_steps(version: &str) -> Result<u32, Error> {
    let major: u32 = version
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .ok_or_else(|| {
            bad_request(format!(
                "--frr-version `{version}`: give a version like 8.4.4, or `auto`"
            ))
        })?;
    Ok(if major <= 8 { 100 } else { 255 })
}

/// A short tag of the lab directory, so that two labs' namespaces and veths never clash.
pub(crate) fn tag_of(dir: &Path) -> String {
    // FNV-1a over the path: stable across runs and platforms.
    let mut h: u32 = 0x811c_9dc5;
    for b in dir.as_os_str().as_encoded_bytes() {
        h = (h ^ u32::from(*b)).wrapping_mul(0x0100_0193);
    }
    format!("{:04x}", h & 0xffff)
}

/// How [`up`] builds a lab.
#[derive(Clone, Debug)]
pub struct UpOptions {
    /// FRR's daemon directory ([`FRR_DAEMONS`](crate::FRR_DAEMONS)).
    pub frr: PathBuf,
    /// FRR's version, or `None` to ask `bgpd --version`.
    pub frr_version: Option<String>,
    /// Zone aggregation (`unconditional`), or none.
    pub aggregation: Option<Aggregation>,
    /// The program run as `SUPERVISOR lab supervise --dir DIR` (the `aifabric` binary).
    pub supervisor: PathBuf,
    /// Refuse fabrics of more routers ([`DEFAULT_MAX_ROUTERS`](crate::DEFAULT_MAX_ROUTERS)).
    pub max_routers: usize,
}

/// Bring a lab of the study's fabric up in directory `dir` (created; it must not hold a lab):
/// see the module docs. `spec` and the study's control-plane options are recorded for
/// [`check`](crate::check). Refuses DSF fabrics, conditional aggregation and fabrics of more than
/// `opts.max_routers` routers.
pub fn up(study: &Study, spec: &str, dir: &Path, opts: &UpOptions) -> Result<LabState, Error> {
    let (frr, aggregation, max_routers) = (opts.frr.as_path(), opts.aggregation, opts.max_routers);
    let supervisor = opts.supervisor.as_path();
    let topo = study.frr_topology_aggregated(aggregation)?;
    if topo.routers.len() > max_routers {
        return Err(bad_request(format!(
            "{} has {} routers, more than the lab's budget of {max_routers} (two daemons and \
             a namespace each); use a smaller spec or raise --max-routers",
            topo.fabric,
            topo.routers.len()
        )));
    }
    if dir.join(STATE_FILE).exists() {
        let building = LabState::read(dir)
            .ok()
            .and_then(|s| s.builder)
            .filter(|p| crate::teardown::building(*p));
        return Err(bad_request(match building {
            Some(p) => format!(
                "{} holds a lab that `aifabric lab up` (process {p}) is bringing up; wait for \
                 it, or interrupt it (it then removes what it made)",
                dir.display()
            ),
            None => format!(
                "{} already holds a lab; take it down first (aifabric lab down --dir {})",
                dir.display(),
                dir.display()
            ),
        }));
    }
    if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) {
        return Err(bad_request(format!(
            "{} is not empty; give the lab a new or empty directory (`lab down` removes it)",
            dir.display()
        )));
    }
    // Its probe namespace is made and deleted in one step: an interrupt leaves none.
    crate::interrupt::step(|| environment(frr))?;
    reachable_by_daemons(dir)?;
    let version = match &opts.frr_version {
        Some(v) => v.clone(),
        None => frr_version(frr)?,
    };
    let steps = weight_steps(&version)?;
    let tag = tag_of(dir);
    let ns_of: BTreeMap<&str, String> = topo
        .routers
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), format!("af{tag}-{i}")))
        .collect();
    let mut state = LabState {
        schema_version: aifabric::SCHEMA_VERSION,
        spec: spec.to_owned(),
        fabric: topo.fabric.clone(),
        options: study.setup().bgp_options(),
        frr: frr.display().to_string(),
        frr_version: version,
        weight_steps: steps,
        routers: topo
            .routers
            .iter()
            .map(|r| LabRouter {
                name: r.name.clone(),
                namespace: ns_of[r.name.as_str()].clone(),
                role: r.role.clone(),
                asn: r.asn,
                originates: r.originates.clone(),
            })
            .collect(),
        links: topo
            .links
            .iter()
            .map(|l| LabLink {
                name: l.name.clone(),
                ends: [&l.a, &l.b].map(|e| LabEnd {
                    router: e.router.clone(),
                    namespace: ns_of[e.router.as_str()].clone(),
                    interface: e.interface.clone(),
                    address: e.address.clone(),
                }),
                capacity_gbps: l.capacity_gbps,
            })
            .collect(),
        supervisor: None,
        aggregation: aggregation.map(|a| a.to_string()),
        drained: Vec::new(),
        builder: Some(std::process::id()),
    };
    // Recorded before anything is made: `down` (and an interrupt, through `begin`) undoes a
    // half-made lab.
    let building = crate::interrupt::begin(dir, || {
        std::fs::create_dir_all(dir)
            .map_err(|e| runtime_in(&format!("cannot create {}", dir.display()), e))?;
        // The daemons drop to user `frr`: their state directories must be reachable.
        open_to_all(dir)?;
        state.write(dir)
    })?;
    crate::interrupt::step(|| study.export_frr_to(&dir.join("conf"), aggregation))
        .and_then(|_| make(&mut state, dir, &tag, supervisor))
        .map_err(|e| {
            if crate::interrupt::abandoned() {
                return e;
            }
            let hint = format!(
                "{} (the lab is half made: `aifabric lab down --dir {}` removes it)",
                e.message(),
                dir.display()
            );
            match e {
                Error::BadRequest { source, .. } => Error::BadRequest {
                    message: hint,
                    source,
                },
                Error::Runtime { source, .. } => Error::Runtime {
                    message: hint,
                    source,
                },
            }
        })?;
    // Complete: no longer a bring-up's leftovers (see `clear_leftovers`).
    state.builder = None;
    crate::interrupt::step(|| state.write(dir))?;
    building.done();
    Ok(state)
}

/// What [`up`] makes once the lab is recorded: namespaces, veths, state directories, the
/// supervisor (and its daemons). Each router and each link is one step of the bring-up (see
/// [`interrupt`](crate::interrupt)): an interrupt waits for it, then removes it with the rest.
fn make(state: &mut LabState, dir: &Path, tag: &str, supervisor: &Path) -> Result<(), Error> {
    use crate::interrupt::step;
    for r in &state.routers {
        step(|| make_router(r))?;
    }
    for (i, l) in state.links.iter().enumerate() {
        step(|| make_link(l, &veth_names(tag, i)))?;
    }
    step(|| {
        for r in &state.routers {
            let run_dir = dir.join("run").join(&r.namespace);
            std::fs::create_dir_all(&run_dir)
                .map_err(|e| runtime_in(&format!("cannot create {}", run_dir.display()), e))?;
            run("chown", &["frr:frr", &run_dir.display().to_string()])?;
        }
        Ok(())
    })?;
    crate::supervisor::start(state, dir, supervisor)
}

/// Router `r`'s namespace: IPv6 forwarding, `keep_addr_on_down`, `lo` up, and the rack's
/// in-namespace veth pair if it originates a prefix.
fn make_router(r: &LabRouter) -> Result<(), Error> {
    let n = r.namespace.as_str();
    run("ip", &["netns", "add", n])?;
    for k in ["all", "default"] {
        for (key, v) in [("keep_addr_on_down", "1"), ("forwarding", "1")] {
            let setting = format!("net.ipv6.conf.{k}.{key}={v}");
            run("ip", &["netns", "exec", n, "sysctl", "-qw", &setting])?;
        }
    }
    run("ip", &["-n", n, "link", "set", "lo", "up"])?;
    if !r.originates.is_empty() {
        // The rack's /64 (zebra.conf) sits on an in-namespace veth pair.
        run(
            "ip",
            &[
                "-n", n, "link", "add", "rack", "type", "veth", "peer", "name", "rackhost",
            ],
        )?;
        run("ip", &["-n", n, "link", "set", "rack", "up"])?;
        run("ip", &["-n", n, "link", "set", "rackhost", "up"])?;
    }
    Ok(())
}

/// The names link `i`'s veth pair has in the host namespace before its ends move into their
/// routers' namespaces (a killed `up` may leave them there; `down` looks for them).
pub(crate) fn veth_names(tag: &str, i: usize) -> [String; 2] {
    [format!("v{tag}{i}a"), format!("v{tag}{i}b")]
}

/// Link `l`'s veth pair, made in the host namespace as `names`, each end moved into its
/// router's namespace under its interface name and set up.
fn make_link(l: &LabLink, names: &[String; 2]) -> Result<(), Error> {
    let [va, vb] = names;
    run(
        "ip",
        &["link", "add", va, "type", "veth", "peer", "name", vb],
    )?;
    for (v, e) in [(va, &l.ends[0]), (vb, &l.ends[1])] {
        run(
            "ip",
            &[
                "link",
                "set",
                v,
                "netns",
                &e.namespace,
                "name",
                &e.interface,
            ],
        )?;
        run(
            "ip",
            &["-n", &e.namespace, "link", "set", &e.interface, "up"],
        )?;
    }
    Ok(())
}

/// FRR's daemons drop to user `frr`: every existing directory above `dir` must let others
/// through, or they cannot read their configuration (and the lab comes up with empty FIBs).
fn reachable_by_daemons(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    for a in dir.ancestors().skip(1) {
        if let Ok(m) = std::fs::metadata(a) {
            if m.permissions().mode() & 0o001 == 0 {
                return Err(bad_request(format!(
                    "FRR's daemons run as user frr and cannot reach {}: {} is closed to other users; choose a --dir under /tmp, or open it (chmod o+x {})",
                    dir.display(),
                    a.display(),
                    a.display()
                )));
            }
        }
    }
    Ok(())
}

fn open_to_all(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| runtime_in(&format!("cannot open {} to user frr", dir.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lab_tags_differ_by_directory_and_fit_interface_names() {
        let (a, b) = (tag_of(Path::new("/tmp/a")), tag_of(Path::new("/tmp/b")));
        assert_ne!(a, b);
        // Veth names are v<tag><link><a|b>: at most 15 bytes for 10,000 links.
        assert!(format!("v{a}9999a").len() <= 15);
    }
}
