//! `aifabric lab`: the fabric's FRR export run by FRRouting in Linux network namespaces, and
//! every router's kernel FIB compared with what aifabric computes.
//!
//! - [`up`] writes the export (`export --format frr`) into the lab directory, records the lab
//!   in its state file (`lab.json`) before making anything, so that [`down`] can undo a lab
//!   that failed half-way, then makes one namespace per router (IPv6 forwarding on, and
//!   `keep_addr_on_down`, so a link taken down and up again keeps its address and its BGP
//!   session comes back), a veth pair per link with the export's interface names and
//!   addresses, and the rack's /64 on an in-namespace veth pair (no `dummy` module is needed).
//!   The daemons are started by one supervisor process ([`supervise`], the caller's
//!   `aifabric lab supervise`): it runs `zebra` and `bgpd` of each router in the foreground as
//!   its own children, so it reaps them (a container's PID 1 may not), and stops them when
//!   [`down`] asks.
//! - [`check`] applies a scenario live: a failed or hard-drained link or device has its links
//!   set down (in both namespaces); a soft-drained session sends the drained twin of its
//!   outbound route-map (the export's `-DRAIN` maps: the graceful-shutdown community of RFC
//!   8326 from both ends, which every router's inbound map turns into LOCAL_PREF 0, or, with
//!   `--soft-drain prepend:N`, the draining end's ASN prepended N times). It then waits until
//!   every router agrees with aifabric's routes under that scenario, or a time limit passes,
//!   and reports each disagreement: the router, the prefix, both sides and the share gap. A
//!   route agrees when it has the same next-hop neighbours in the kernel FIB, the same
//!   number of live links to each, each neighbour's share equal to aifabric's weight within
//!   FRR 8.x's rounding (zebra programs `floor(100 x bandwidth / total)` per link, so a
//!   share may be off by 1% per link), and bgpd's best path has the same LOCAL_PREF and an
//!   AS path of the same length ([`disagreement`]).
//! - [`down`] stops the supervisor (or, after a crash, kills what is left in the lab's
//!   namespaces), deletes the namespaces and the lab directory.
//!
//! Needs root, `ip netns` (iproute2) and FRR's daemons (Debian's `frr`); [`environment`] says
//! which is missing. DSF fabrics are refused (a DSF zone is one BGP speaker over many
//! switches), and so are fabrics above a router budget.

use crate::{Error, Setup, Study};
use aifabric_model::{Fabric, Scenario};
use aifabric_routing::aggregation::{Aggregation, AggregationTier};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The lab's state file, in the lab directory.
pub const STATE_FILE: &str = "lab.json";
/// The daemons' process ids, written by the supervisor.
const DAEMONS_FILE: &str = "daemons.json";
/// Asks the supervisor to stop the daemons and exit.
const STOP_FILE: &str = "stop";
/// Where FRR's daemons are (Debian's package).
pub const FRR_DAEMONS: &str = "/usr/lib/frr";
/// Most routers `up` builds unless told otherwise (each is two daemons and a namespace).
pub const DEFAULT_MAX_ROUTERS: usize = 100;

/// A router of the lab.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LabRouter {
    /// Device name.
    pub name: String,
    /// Its network namespace.
    pub namespace: String,
    /// Its role (`rtsw`, `stsw`, `bag`, ...).
    pub role: String,
    /// Its ASN.
    pub asn: u32,
    /// Prefixes it originates (its rack's /64).
    pub originates: Vec<String>,
}

/// One end of a lab link.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LabEnd {
    /// Router name.
    pub router: String,
    /// Namespace.
    pub namespace: String,
    /// Interface name inside it.
    pub interface: String,
    /// Its address on the link's /127 (the peer's BGP neighbour address).
    pub address: String,
}

/// A link of the lab: a veth pair.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LabLink {
    /// `A--B#k`, the `--fail` selector of the link.
    pub name: String,
    /// Its ends.
    pub ends: [LabEnd; 2],
    /// Capacity, Gb/s (its outbound route-map is `LB-<Gb/s>`).
    pub capacity_gbps: u64,
}

/// `lab.json`: what [`up`] made, so that [`check`] and [`down`] (also after a crash) know it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LabState {
    /// The contract's version.
    pub schema_version: u32,
    /// The spec as given to `up` (a built-in name, or a file made absolute).
    pub spec: String,
    /// The fabric's name.
    pub fabric: String,
    /// Control-plane options by the CLI's flag names (see [`Setup::from_options`]).
    pub options: BTreeMap<String, String>,
    /// FRR's daemon directory.
    pub frr: String,
    /// FRR's version (`bgpd --version`, or as given).
    pub frr_version: String,
    /// The steps FRR scales a next hop's link-bandwidth share into (see [`weight_steps`]):
    /// shares agree within one step per link.
    pub weight_steps: u32,
    /// Routers.
    pub routers: Vec<LabRouter>,
    /// Links.
    pub links: Vec<LabLink>,
    /// The supervisor's process id, once started.
    pub supervisor: Option<u32>,
    /// Zone aggregation configured (`unconditional`), or none.
    #[serde(default)]
    pub aggregation: Option<String>,
    /// Link ends whose session now sends the drained route-map (`<link>:<0|1>`), as the
    /// last `check` set them.
    #[serde(default)]
    pub drained: Vec<String>,
}

impl LabState {
    /// The lab recorded in directory `dir`.
    pub fn read(dir: &Path) -> Result<LabState, Error> {
        let path = dir.join(STATE_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::bad_request(format!(
                "no lab in {}: cannot read {} ({e}); start one with `aifabric lab up SPEC --dir {}`",
                dir.display(),
                path.display(),
                dir.display()
            ))
        })?;
        serde_json::from_str(&text).map_err(|e| {
            Error::bad_request(format!(
                "{}: not a lab state file ({e}); remove the directory by hand",
                path.display()
            ))
        })
    }

    fn write(&self, dir: &Path) -> Result<(), Error> {
        let text = serde_json::to_string_pretty(self).expect("the state serializes");
        write_atomic(&dir.join(STATE_FILE), text.as_bytes())
    }

    /// The control-plane setup the lab's configuration was written with.
    pub fn setup(&self) -> Result<Setup, Error> {
        Setup::from_options(&self.options)
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| Error::runtime_in(&format!("cannot write {}", path.display()), e))
}

/// Run a command; its stderr is the error.
fn run(program: &str, args: &[&str]) -> Result<String, Error> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::runtime_in(&format!("cannot run {program}"), e))?;
    if !out.status.success() {
        return Err(Error::Runtime {
            message: format!(
                "{program} {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            source: None,
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

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
        return Err(Error::bad_request(
            "the lab needs root: network namespaces, veth pairs and FRR's daemons are made as \
             root (run it with sudo, or in a VM or container where you are root)"
                .into(),
        ));
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Err(Error::bad_request(
            "no `ip` command: install iproute2 (apt-get install iproute2)".into(),
        ));
    }
    for daemon in ["zebra", "bgpd"] {
        if !frr.join(daemon).exists() {
            return Err(Error::bad_request(format!(
                "FRR is not installed: no {}; install it (apt-get install frr) or give its \
                 daemon directory with --frr",
                frr.join(daemon).display()
            )));
        }
    }
    let probe = format!("afprobe{}", std::process::id());
    run("ip", &["netns", "add", &probe]).map_err(|e| {
        Error::bad_request(format!(
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
            Error::bad_request(format!(
                "--frr-version `{version}`: give a version like 8.4.4, or `auto`"
            ))
        })?;
    Ok(if major <= 8 { 100 } else { 255 })
}

/// A short tag of the lab directory, so that two labs' namespaces and veths never clash.
fn tag_of(dir: &Path) -> String {
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
    /// FRR's daemon directory ([`FRR_DAEMONS`]).
    pub frr: PathBuf,
    /// FRR's version, or `None` to ask `bgpd --version`.
    pub frr_version: Option<String>,
    /// Zone aggregation (`unconditional`), or none.
    pub aggregation: Option<Aggregation>,
    /// The program run as `SUPERVISOR lab supervise --dir DIR` (the `aifabric` binary).
    pub supervisor: PathBuf,
    /// Refuse fabrics of more routers ([`DEFAULT_MAX_ROUTERS`]).
    pub max_routers: usize,
}

/// Bring a lab of the study's fabric up in directory `dir` (created; it must not hold a lab):
/// see the module docs. `spec` and the study's control-plane options are recorded for
/// [`check`]. Refuses DSF fabrics, conditional aggregation and fabrics of more than
/// `opts.max_routers` routers.
pub fn up(study: &Study, spec: &str, dir: &Path, opts: &UpOptions) -> Result<LabState, Error> {
    let (frr, aggregation, max_routers) = (opts.frr.as_path(), opts.aggregation, opts.max_routers);
    let supervisor = opts.supervisor.as_path();
    let topo = study.frr_topology_aggregated(aggregation)?;
    if topo.routers.len() > max_routers {
        return Err(Error::bad_request(format!(
            "{} has {} routers, more than the lab's budget of {max_routers} (two daemons and \
             a namespace each); use a smaller spec or raise --max-routers",
            topo.fabric,
            topo.routers.len()
        )));
    }
    if dir.join(STATE_FILE).exists() {
        return Err(Error::bad_request(format!(
            "{} already holds a lab; take it down first (aifabric lab down --dir {})",
            dir.display(),
            dir.display()
        )));
    }
    if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) {
        return Err(Error::bad_request(format!(
            "{} is not empty; give the lab a new or empty directory (`lab down` removes it)",
            dir.display()
        )));
    }
    environment(frr)?;
    reachable_by_daemons(dir)?;
    let version = match &opts.frr_version {
        Some(v) => v.clone(),
        None => frr_version(frr)?,
    };
    let steps = weight_steps(&version)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::runtime_in(&format!("cannot create {}", dir.display()), e))?;
    // The daemons drop to user `frr`: their state directories must be reachable.
    open_to_all(dir)?;
    study.export_frr_to(&dir.join("conf"), aggregation)?;
    let tag = tag_of(dir);
    let ns_of: BTreeMap<&str, String> = topo
        .routers
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), format!("af{tag}-{i}")))
        .collect();
    let mut state = LabState {
        schema_version: crate::SCHEMA_VERSION,
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
    };
    // Recorded before anything is made: `down` undoes a half-made lab.
    state.write(dir)?;
    make(&mut state, dir, &tag, supervisor).map_err(|e| {
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
    Ok(state)
}

/// What [`up`] makes once the lab is recorded: namespaces, veths, state directories, the
/// supervisor (and its daemons).
fn make(state: &mut LabState, dir: &Path, tag: &str, supervisor: &Path) -> Result<(), Error> {
    for r in &state.routers {
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
    }
    for (i, l) in state.links.iter().enumerate() {
        let (va, vb) = (format!("v{tag}{i}a"), format!("v{tag}{i}b"));
        run(
            "ip",
            &["link", "add", &va, "type", "veth", "peer", "name", &vb],
        )?;
        for (v, e) in [(&va, &l.ends[0]), (&vb, &l.ends[1])] {
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
    }
    for r in &state.routers {
        let run_dir = dir.join("run").join(&r.namespace);
        std::fs::create_dir_all(&run_dir)
            .map_err(|e| Error::runtime_in(&format!("cannot create {}", run_dir.display()), e))?;
        run("chown", &["frr:frr", &run_dir.display().to_string()])?;
    }
    let log = std::fs::File::create(dir.join("supervisor.log"))
        .map_err(|e| Error::runtime_in("cannot create supervisor.log", e))?;
    let err = log
        .try_clone()
        .map_err(|e| Error::runtime_in("supervisor.log", e))?;
    let child = {
        use std::os::unix::process::CommandExt;
        Command::new(supervisor)
            .args(["lab", "supervise", "--dir"])
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            // Its own process group: a Ctrl-C at the terminal that ran `up` does not stop it.
            .process_group(0)
            .spawn()
            .map_err(|e| Error::runtime_in(&format!("cannot start {}", supervisor.display()), e))?
    };
    state.supervisor = Some(child.id());
    state.write(dir)?;
    // The supervisor writes the daemons' ids once all are started.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !dir.join(DAEMONS_FILE).exists() {
        if Instant::now() > deadline || !alive(child.id()) {
            return Err(Error::Runtime {
                message: format!(
                    "the supervisor did not start the daemons; see {}",
                    dir.join("supervisor.log").display()
                ),
                source: None,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
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
                return Err(Error::bad_request(format!(
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
        .map_err(|e| Error::runtime_in(&format!("cannot open {} to user frr", dir.display()), e))
}

fn alive(pid: u32) -> bool {
    // A zombie (exited, not yet reaped) is not alive.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

/// The supervisor of the lab in `dir`: starts `zebra` then `bgpd` of every router, in the
/// foreground inside its namespace, as its own children; writes their ids; then reaps them
/// until [`down`] asks it to stop (the stop file), when it kills and reaps them all. A daemon
/// that dies is logged on standard error.
pub fn supervise(dir: &Path) -> Result<(), Error> {
    let state = LabState::read(dir)?;
    let frr = PathBuf::from(&state.frr);
    let conf = dir.join("conf");
    let mut children = Vec::new();
    for r in &state.routers {
        let run_dir = dir.join("run").join(&r.namespace);
        for daemon in ["zebra", "bgpd"] {
            let bin = frr.join(daemon).display().to_string();
            let child = Command::new("ip")
                .args(["netns", "exec", &r.namespace, &bin, "-P", "0", "-f"])
                .arg(conf.join(format!("{}.{daemon}.conf", r.name)))
                .arg("-i")
                .arg(run_dir.join(format!("{daemon}.pid")))
                .arg("-z")
                .arg(run_dir.join("zserv.api"))
                .arg("--vty_socket")
                .arg(&run_dir)
                .arg("--log")
                .arg(format!("file:{}/{daemon}.log", run_dir.display()))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .map_err(|e| Error::runtime_in(&format!("cannot start {daemon}"), e))?;
            children.push((format!("{} {daemon}", r.name), child));
            if daemon == "zebra" {
                // bgpd connects to zebra's socket: give it a moment to open it.
                std::thread::sleep(Duration::from_millis(150));
            }
        }
    }
    let pids: Vec<u32> = children.iter().map(|(_, c)| c.id()).collect();
    write_atomic(
        &dir.join(DAEMONS_FILE),
        serde_json::to_string(&pids).expect("ids").as_bytes(),
    )?;
    let stop = dir.join(STOP_FILE);
    let mut running = vec![true; children.len()];
    while !stop.exists() {
        for ((who, c), up) in children.iter_mut().zip(running.iter_mut()) {
            if *up {
                if let Ok(Some(status)) = c.try_wait() {
                    eprintln!("{who} exited: {status}");
                    *up = false;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for (_, c) in &mut children {
        let _ = c.kill();
        let _ = c.wait();
    }
    let _ = std::fs::remove_file(dir.join(DAEMONS_FILE));
    Ok(())
}

/// What [`down`] removed.
#[derive(Clone, Debug, Serialize)]
pub struct DownReport {
    /// The contract's version.
    pub schema_version: u32,
    /// Namespaces deleted.
    pub namespaces: usize,
    /// Processes left after the supervisor (or without one) that had to be killed.
    pub killed: usize,
}

/// Take the lab in `dir` down: stop the supervisor (it kills and reaps the daemons), kill
/// whatever still runs in the lab's namespaces (a crashed supervisor's daemons), delete the
/// namespaces (and with them the veths), the files `up` made, and the directory once empty.
pub fn down(dir: &Path) -> Result<DownReport, Error> {
    let state = LabState::read(dir)?;
    if let Some(pid) = state.supervisor {
        let _ = std::fs::write(dir.join(STOP_FILE), b"");
        let deadline = Instant::now() + Duration::from_secs(10);
        while alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let mut killed = 0;
    let mut namespaces = 0;
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
            if run("kill", &["-9", p]).is_ok() {
                killed += 1;
            }
        }
        run("ip", &["netns", "del", &r.namespace])?;
        namespaces += 1;
    }
    // What `up` made, then the directory if nothing else is in it.
    for sub in ["conf", "run"] {
        let p = dir.join(sub);
        if p.exists() {
            std::fs::remove_dir_all(&p)
                .map_err(|e| Error::runtime_in(&format!("cannot remove {}", p.display()), e))?;
        }
    }
    for file in [DAEMONS_FILE, STOP_FILE, "supervisor.log", STATE_FILE] {
        let _ = std::fs::remove_file(dir.join(file));
    }
    let _ = std::fs::remove_dir(dir);
    Ok(DownReport {
        schema_version: crate::SCHEMA_VERSION,
        namespaces,
        killed,
    })
}

/// One next hop of a route, as a side sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hop {
    /// Live links to the neighbour.
    pub links: u32,
    /// Its share of the traffic.
    pub share: f64,
}

/// A router's route toward a prefix, as one side sees it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Side {
    /// Next hops by neighbour (aifabric's multipaths; the kernel FIB's).
    pub hops: BTreeMap<String, Hop>,
    /// LOCAL_PREF of the best route (FRR: bgpd's best path; 100 when eBGP set none).
    pub local_pref: Option<u32>,
    /// AS path of the best route, nearest first.
    pub as_path: Vec<u32>,
}

/// A route on which FRR and aifabric disagree.
#[derive(Clone, Debug, Serialize)]
pub struct Mismatch {
    /// The router.
    pub router: String,
    /// The prefix (a rack's /64).
    pub prefix: String,
    /// The router that originates it.
    pub origin: String,
    /// aifabric's route.
    pub aifabric: Side,
    /// FRR's: the kernel FIB's next hops, bgpd's best path.
    pub frr: Side,
    /// The largest share gap over the neighbours of either side.
    pub share_gap: f64,
}

/// What one side says of a zone's aggregate.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AggregateView {
    /// Borders that advertise the /48 to BAG.
    pub advertising: Vec<String>,
    /// Borders that do not.
    pub withdrawn: Vec<String>,
    /// Advertising borders that cannot reach some live covered rack (its traffic meets the
    /// discard route behind the aggregate), with those racks' /64s.
    pub blackholes: BTreeMap<String, Vec<String>>,
}

/// A zone's aggregate, both sides.
#[derive(Clone, Debug, Serialize)]
pub struct AggregateCheck {
    /// The zone.
    pub zone: String,
    /// Its /48.
    pub prefix: String,
    /// aifabric's blackhole detector (`blackholes --tier zone`).
    pub aifabric: AggregateView,
    /// FRR: the BAG routers' tables (who sends the /48) and the borders' FIBs (which /64s).
    pub frr: AggregateView,
}

/// The answer of [`check`].
#[derive(Clone, Debug, Serialize)]
pub struct LabCheck {
    /// The contract's version.
    pub schema_version: u32,
    /// The fabric.
    pub fabric: String,
    /// The scenario applied (the selectors, `healthy` for none).
    pub scenario: String,
    /// Links set down.
    pub links_down: Vec<String>,
    /// Routers.
    pub routers: usize,
    /// Routes compared (router x rack prefix, the origin's own excluded).
    pub routes: usize,
    /// Zone aggregates compared (with aggregation), each agreeing or not.
    pub aggregates: Vec<AggregateCheck>,
    /// Whether every route and aggregate agreed before the time limit.
    pub agreed: bool,
    /// Seconds from the links set to the last comparison.
    pub seconds: f64,
    /// The disagreements at the last comparison.
    pub mismatches: Vec<Mismatch>,
}

/// Check the lab in `dir` under `scenario` of fabric `f` (the lab's own, loaded from its
/// state): set its links, then compare every FIB with aifabric's routes every second until
/// they all agree or `timeout` passes. `describe` names the scenario in the answer.
pub fn check(
    f: &Fabric,
    dir: &Path,
    scenario: Scenario,
    describe: &str,
    timeout: Duration,
) -> Result<LabCheck, Error> {
    let mut state = LabState::read(dir)?;
    if f.name() != state.fabric {
        return Err(Error::bad_request(format!(
            "the lab in {} runs {}, not {}; give its spec or its directory",
            dir.display(),
            state.fabric,
            f.name()
        )));
    }
    if !state
        .supervisor
        .is_some_and(|p| alive(p) && dir.join(DAEMONS_FILE).exists())
    {
        return Err(Error::Runtime {
            message: format!(
                "the lab's supervisor is not running (see {}); take the lab down and up again",
                dir.join("supervisor.log").display()
            ),
            source: None,
        });
    }
    let study = Study::new(f, scenario, state.setup()?);
    let aggregation: Option<Aggregation> = state
        .aggregation
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: String| Error::bad_request(format!("{STATE_FILE}: aggregation: {e}")))?;
    let topo = study.frr_topology_aggregated(aggregation)?;
    let unusable = study.scenario().unusable();
    let mut links_down = Vec::new();
    for (l, t) in state.links.iter().zip(&topo.links) {
        let up = f.link_up(t.link(), &unusable);
        if !up {
            links_down.push(l.name.clone());
        }
        for e in &l.ends {
            let to = if up { "up" } else { "down" };
            run("ip", &["-n", &e.namespace, "link", "set", &e.interface, to])?;
        }
    }
    let drained = set_drains(&state, f, study.scenario(), &topo, dir)?;
    state.drained = drained;
    state.write(dir)?;
    // aifabric's side, once: every router's routes toward every rack prefix.
    let origin_of: BTreeMap<&str, &str> = state
        .routers
        .iter()
        .flat_map(|r| {
            r.originates
                .iter()
                .map(move |p| (p.as_str(), r.name.as_str()))
        })
        .collect();
    // With aggregation, a zone's racks are seen from outside only as its /48: their routes
    // are checked through the aggregate (who advertises it, who blackholes what), not one by
    // one.
    let unusable = study.scenario().unusable();
    let all = aifabric_routing::fib::prefixes(f);
    let watched: Vec<Watched> = topo
        .aggregates
        .iter()
        .map(|a| Watched {
            zone: a.zone.clone(),
            prefix: a.prefix.clone(),
            borders: a.borders.clone(),
            live: all
                .iter()
                .filter(|p| {
                    f.zones()[f.device(p.rack_switch).zone.idx()].name == a.zone
                        && !unusable.device_failed(p.rack_switch)
                })
                .filter_map(|p| p.ipv6.clone())
                .collect(),
        })
        .collect();
    let aggregated: std::collections::BTreeSet<&str> = watched
        .iter()
        .flat_map(|w| {
            all.iter()
                .filter(move |p| f.zones()[f.device(p.rack_switch).zone.idx()].name == w.zone)
                .filter_map(|p| p.ipv6.as_deref())
        })
        .collect();
    let expected_aggregates = match aggregation {
        Some(a) if !watched.is_empty() => aifabric_aggregates(&study, a, &watched, &all)?,
        _ => Vec::new(),
    };
    let mut want: Vec<(String, String, Side)> = Vec::new();
    for r in &state.routers {
        for v in study.routes(&r.name, None)? {
            let Some(prefix) = v.ipv6 else { continue };
            match origin_of.get(prefix.as_str()) {
                Some(&o) if o != r.name && !aggregated.contains(prefix.as_str()) => {}
                _ => continue,
            }
            let hops = v
                .next_hops
                .iter()
                .map(|h| {
                    (
                        h.neighbor.clone(),
                        Hop {
                            links: h.links,
                            share: h.weight,
                        },
                    )
                })
                .collect();
            let side = Side {
                hops,
                local_pref: v.local_pref,
                as_path: v.as_path,
            };
            want.push((r.name.clone(), prefix, side));
        }
    }
    let start = Instant::now();
    loop {
        let (mismatches, views) = compare(&state, dir, &origin_of, &want, &watched)?;
        let aggregates: Vec<AggregateCheck> = watched
            .iter()
            .zip(views)
            .zip(&expected_aggregates)
            .map(|((w, frr), ours)| AggregateCheck {
                zone: w.zone.clone(),
                prefix: w.prefix.clone(),
                aifabric: ours.clone(),
                frr,
            })
            .collect();
        let agreed = mismatches.is_empty() && aggregates.iter().all(|a| a.aifabric == a.frr);
        if agreed || start.elapsed() >= timeout {
            return Ok(LabCheck {
                schema_version: crate::SCHEMA_VERSION,
                fabric: state.fabric.clone(),
                scenario: describe.to_owned(),
                links_down,
                routers: state.routers.len(),
                routes: want.len(),
                aggregates,
                agreed,
                seconds: start.elapsed().as_secs_f64(),
                mismatches,
            });
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Soft drains, live: each link end whose session the scenario soft-drains sends the
/// drained twin of its outbound route-map (`-DRAIN`: the graceful-shutdown community on both
/// ends of a drained session, or, when drains prepend, the ASN prepended by the end that
/// drains: a drained link's both ends, a drained device's own), every other end its plain
/// one; only ends that change are reconfigured (vtysh, then an outbound soft reset). Returns
/// the drained ends.
fn set_drains(
    state: &LabState,
    f: &Fabric,
    scenario: &Scenario,
    topo: &aifabric_report::frr::Topology,
    dir: &Path,
) -> Result<Vec<String>, Error> {
    let soft = &scenario.drained_soft;
    let prepend = topo.soft_drain.starts_with("prepend:");
    let unusable = scenario.unusable();
    let mut drained = Vec::new();
    for (l, t) in state.links.iter().zip(&topo.links) {
        let id = t.link();
        let link = f.link(id);
        let is_soft = f.link_up(id, &unusable) && !f.link_up(id, soft);
        for (side, dev) in [link.a, link.b].into_iter().enumerate() {
            let drains_here = soft.link_failed(id) || soft.device_failed(dev);
            let want = is_soft && (!prepend || drains_here);
            let key = format!("{}:{side}", l.name);
            let had = state.drained.contains(&key);
            if want {
                drained.push(key);
            }
            if want == had {
                continue;
            }
            let (me, peer) = (&l.ends[side], &l.ends[1 - side]);
            let asn = state
                .routers
                .iter()
                .find(|r| r.name == me.router)
                .map_or(0, |r| r.asn);
            let map = |d| aifabric_report::frr::out_map(&topo.bandwidth, l.capacity_gbps, d);
            let set = match (map(want), map(!want)) {
                (Some(m), _) => format!("neighbor {} route-map {m} out", peer.address),
                (None, Some(old)) => format!("no neighbor {} route-map {old} out", peer.address),
                (None, None) => continue,
            };
            let run_dir = dir.join("run").join(&me.namespace).display().to_string();
            let router = format!("router bgp {asn}");
            let clear = format!("clear bgp ipv6 unicast {} soft out", peer.address);
            run(
                "vtysh",
                &[
                    "--vty_socket",
                    &run_dir,
                    "-c",
                    "configure terminal",
                    "-c",
                    &router,
                    "-c",
                    "address-family ipv6 unicast",
                    "-c",
                    &set,
                    "-c",
                    "end",
                    "-c",
                    &clear,
                ],
            )?;
        }
    }
    Ok(drained)
}

/// Every route of `want` (router, prefix, next hops) against the kernel FIBs.
/// A zone's aggregate as [`compare`] looks at it: the zone, its /48, its borders, and the
/// /64s of its live racks.
struct Watched {
    zone: String,
    prefix: String,
    borders: Vec<String>,
    live: Vec<String>,
}

/// aifabric's view of each watched aggregate: its blackhole detector at the zone tier.
fn aifabric_aggregates(
    study: &Study,
    aggregation: Aggregation,
    watched: &[Watched],
    all: &[aifabric_routing::fib::Prefix],
) -> Result<Vec<AggregateView>, Error> {
    let report = study.blackholes(aggregation, AggregationTier::Zone)?;
    let ipv6_of: BTreeMap<&str, &str> = all
        .iter()
        .filter_map(|p| Some((p.name.as_str(), p.ipv6.as_deref()?)))
        .collect();
    Ok(watched
        .iter()
        .map(|w| {
            let mut view = AggregateView::default();
            if let Some(scope) = report.scopes.iter().find(|s| s.scope == w.zone) {
                view.advertising = scope.advertising.clone();
                view.withdrawn = scope.withdrawn.clone();
            }
            for b in report.blackholes.iter().filter(|b| b.scope == w.zone) {
                let mut v: Vec<String> = b
                    .prefixes
                    .iter()
                    .filter_map(|p| ipv6_of.get(p.as_str()).map(|x| (*x).to_owned()))
                    .collect();
                v.sort();
                view.blackholes.insert(b.device.clone(), v);
            }
            view.advertising.sort();
            view.withdrawn.sort();
            view
        })
        .collect())
}

/// FRR's view of an aggregate: who among its borders sends it to a BAG router, and which
/// live covered /64s an advertising border has no route for.
fn frr_aggregate(
    state: &LabState,
    a: &Watched,
    senders: &BTreeMap<&str, Senders>,
    fibs: &BTreeMap<&str, BTreeMap<String, BTreeMap<String, Hop>>>,
) -> AggregateView {
    let router_at: BTreeMap<&str, &str> = state
        .links
        .iter()
        .flat_map(|l| {
            l.ends
                .iter()
                .map(|e| (e.address.as_str(), e.router.as_str()))
        })
        .collect();
    let mut view = AggregateView::default();
    for b in &a.borders {
        let advertises = senders.values().any(|table| {
            table.get(&a.prefix).is_some_and(|peers| {
                peers
                    .iter()
                    .any(|p| router_at.get(p.as_str()) == Some(&b.as_str()))
            })
        });
        if !advertises {
            view.withdrawn.push(b.clone());
            continue;
        }
        view.advertising.push(b.clone());
        let missing: Vec<String> = a
            .live
            .iter()
            .filter(|p| !fibs[b.as_str()].contains_key(p.as_str()))
            .cloned()
            .collect();
        let mut missing = missing;
        missing.sort();
        if !missing.is_empty() {
            view.blackholes.insert(b.clone(), missing);
        }
    }
    view
}

fn compare(
    state: &LabState,
    dir: &Path,
    origin_of: &BTreeMap<&str, &str>,
    want: &[(String, String, Side)],
    watched: &[Watched],
) -> Result<(Vec<Mismatch>, Vec<AggregateView>), Error> {
    let mut tables: BTreeMap<&str, BTreeMap<String, Side>> = BTreeMap::new();
    let mut senders: BTreeMap<&str, Senders> = BTreeMap::new();
    let mut fibs = BTreeMap::new();
    for r in &state.routers {
        let (mut routes, sent) = bgp_table(dir, r)?;
        let fib = fib(state, r)?;
        for (prefix, hops) in &fib {
            routes.entry(prefix.clone()).or_default().hops = hops.clone();
        }
        tables.insert(r.name.as_str(), routes);
        if matches!(r.role.as_str(), "bag" | "hub") {
            senders.insert(r.name.as_str(), sent);
        }
        fibs.insert(r.name.as_str(), fib);
    }
    let views = watched
        .iter()
        .map(|a| frr_aggregate(state, a, &senders, &fibs))
        .collect();
    let none = Side::default();
    let mut out = Vec::new();
    for (router, prefix, side) in want {
        let got = tables[router.as_str()].get(prefix).unwrap_or(&none);
        if let Some(gap) = disagreement(side, got, state.weight_steps) {
            out.push(Mismatch {
                router: router.clone(),
                prefix: prefix.clone(),
                origin: origin_of[prefix.as_str()].to_owned(),
                aifabric: side.clone(),
                frr: got.clone(),
                share_gap: gap,
            });
        }
    }
    Ok((out, views))
}

/// `None` when FRR's route `got` agrees with aifabric's `want`, else the largest share gap
/// (0 when only the attributes differ). They agree with the same next-hop neighbours, the
/// same live links to each, each share within one of FRR's `steps` per link (8.x programs
/// `floor(100 x share)`: 1% per link; see [`weight_steps`]), the same LOCAL_PREF and an AS path of the same length. Not the same AS path:
/// with multipath-relax, several equally good paths through different ASNs tie, and bgpd
/// picks its best among them by age and router id, which aifabric does not model.
pub fn disagreement(want: &Side, got: &Side, steps: u32) -> Option<f64> {
    let (w, g) = (&want.hops, &got.hops);
    let gap = w
        .keys()
        .chain(g.keys())
        .map(|n| {
            let s = |m: &BTreeMap<String, Hop>| m.get(n).map_or(0.0, |h| h.share);
            (s(w) - s(g)).abs()
        })
        .fold(0.0, f64::max);
    let same_hops = w.len() == g.len()
        && w.iter().all(|(n, h)| {
            g.get(n).is_some_and(|x| {
                x.links == h.links
                    && (x.share - h.share).abs() <= f64::from(h.links) / f64::from(steps) + 1e-9
            })
        });
    let same_attributes =
        want.local_pref == got.local_pref && want.as_path.len() == got.as_path.len();
    (!(same_hops && same_attributes)).then_some(gap)
}

/// bgpd's best path toward each prefix of one router (`show bgp ipv6 unicast json` through
/// vtysh): its LOCAL_PREF (100 when absent: eBGP carries none) and AS path. A router's own
/// prefix has an empty path.
type Senders = BTreeMap<String, Vec<String>>;

/// [`best_paths`], and every prefix's senders: the neighbour address of each of its paths.
fn bgp_table(dir: &Path, r: &LabRouter) -> Result<(BTreeMap<String, Side>, Senders), Error> {
    let run_dir = dir.join("run").join(&r.namespace).display().to_string();
    let text = run(
        "vtysh",
        &["--vty_socket", &run_dir, "-c", "show bgp ipv6 unicast json"],
    )?;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let mut out = BTreeMap::new();
    let mut senders = Senders::new();
    let Some(routes) = v["routes"].as_object() else {
        return Ok((out, senders));
    };
    for (prefix, paths) in routes {
        senders.insert(
            prefix.clone(),
            paths
                .as_array()
                .map(|p| {
                    p.iter()
                        .filter_map(|x| x["peerId"].as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        );
        let Some(best) = paths
            .as_array()
            .and_then(|p| p.iter().find(|x| x["bestpath"].as_bool() == Some(true)))
        else {
            continue;
        };
        let as_path = best["path"]
            .as_str()
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|a| a.parse().ok())
            .collect();
        let local_pref = Some(best["locPrf"].as_u64().map_or(100, |x| x as u32));
        out.insert(
            prefix.clone(),
            Side {
                hops: BTreeMap::new(),
                local_pref,
                as_path,
            },
        );
    }
    Ok((out, senders))
}

/// One router's kernel FIB toward the rack prefixes: prefix -> neighbour -> (links, share).
fn fib(state: &LabState, r: &LabRouter) -> Result<BTreeMap<String, BTreeMap<String, Hop>>, Error> {
    let text = run("ip", &["-n", &r.namespace, "-6", "-j", "route", "show"])?;
    let routes: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap_or_default();
    let peer_of: BTreeMap<&str, &str> = state
        .links
        .iter()
        .flat_map(|l| {
            [(0, 1), (1, 0)]
                .into_iter()
                .filter(move |&(i, _)| l.ends[i].router == r.name)
                .map(move |(i, j)| (l.ends[i].interface.as_str(), l.ends[j].router.as_str()))
        })
        .collect();
    let mut out = BTreeMap::new();
    for route in &routes {
        let Some(dst) = route["dst"].as_str() else {
            continue;
        };
        let hops: Vec<(&str, f64)> = match route["nexthops"].as_array() {
            Some(list) => list
                .iter()
                .filter_map(|h| Some((h["dev"].as_str()?, h["weight"].as_f64().unwrap_or(1.0))))
                .collect(),
            None => route["dev"]
                .as_str()
                .map(|d| vec![(d, 1.0)])
                .unwrap_or_default(),
        };
        let total: f64 = hops.iter().map(|h| h.1).sum();
        let mut by_peer: BTreeMap<String, Hop> = BTreeMap::new();
        for (dev, w) in hops {
            let Some(&peer) = peer_of.get(dev) else {
                continue;
            };
            let h = by_peer.entry(peer.to_owned()).or_insert(Hop {
                links: 0,
                share: 0.0,
            });
            h.links += 1;
            h.share += w / total;
        }
        if !by_peer.is_empty() {
            out.insert(dst.to_owned(), by_peer);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hops(v: &[(&str, u32, f64)]) -> Side {
        Side {
            hops: v
                .iter()
                .map(|&(n, links, share)| (n.to_owned(), Hop { links, share }))
                .collect(),
            local_pref: Some(100),
            as_path: vec![1, 2],
        }
    }

    #[test]
    fn shares_agree_within_frr_rounding_and_neighbours_must_match() {
        // 2:1 over three links, as FRR 8.4 programs it: 33 + 33 and 33 of 99 per link.
        let want = hops(&[("a", 2, 2.0 / 3.0), ("b", 1, 1.0 / 3.0)]);
        assert_eq!(
            disagreement(&want, &hops(&[("a", 2, 0.666), ("b", 1, 0.334)]), 100),
            None
        );
        // A neighbour missing, a link missing, a share off by more than 1% per link.
        assert!(disagreement(&want, &hops(&[("a", 2, 1.0)]), 100).is_some());
        assert!(disagreement(&want, &hops(&[("a", 1, 0.5), ("b", 1, 0.5)]), 100).is_some());
        let gap = disagreement(&want, &hops(&[("a", 2, 0.5), ("b", 1, 0.5)]), 100).unwrap();
        assert!((gap - (2.0 / 3.0 - 0.5)).abs() < 1e-12);
        // The same next hops under another LOCAL_PREF or a longer AS path disagree; another
        // path of the same length (a multipath-relax tie) does not.
        let mut drained = want.clone();
        drained.local_pref = Some(0);
        assert_eq!(disagreement(&want, &drained, 100), Some(0.0));
        let mut longer = want.clone();
        longer.as_path.push(3);
        assert!(disagreement(&want, &longer, 100).is_some());
        let mut tie = want.clone();
        tie.as_path = vec![1, 7];
        assert_eq!(disagreement(&want, &tie, 100), None);
        // Finer weights (1-255) leave less room: 0.8% off on a one-link neighbour agrees
        // under 8.x's 100 steps, not under 255.
        let off = hops(&[("a", 2, 2.0 / 3.0 - 0.008), ("b", 1, 1.0 / 3.0 + 0.008)]);
        assert_eq!(disagreement(&want, &off, 100), None);
        assert!(disagreement(&want, &off, 255).is_some());
        assert_eq!(weight_steps("8.4.4").unwrap(), 100);
        assert_eq!(weight_steps("10.2").unwrap(), 255);
        assert!(weight_steps("latest").is_err());
    }

    #[test]
    fn lab_tags_differ_by_directory_and_fit_interface_names() {
        let (a, b) = (tag_of(Path::new("/tmp/a")), tag_of(Path::new("/tmp/b")));
        assert_ne!(a, b);
        // Veth names are v<tag><link><a|b>: at most 15 bytes for 10,000 links.
        assert!(format!("v{a}9999a").len() <= 15);
    }
}
