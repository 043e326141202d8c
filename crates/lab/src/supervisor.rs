//! The supervisor: one process that runs every router's `zebra` and `bgpd` as its own
//! children and reaps them, started by [`up`](crate::up) and stopped by
//! [`down`](crate::down) through the stop file.
//!
//! bgpd starts only once zebra has its interfaces. FRR's daemons learn interfaces and
//! addresses from zebra over its API socket (FRR's user guide, "Zebra": zebra provides
//! "interface lookups" to the routing daemons; and frr-zebra(8), option `-d`: the other
//! daemons connect to zebra, so zebra must have finished its initialization first). zebra
//! itself applies the /127s and the rack's /64 from `zebra.conf`, and reports an address only
//! once the kernel has it (after duplicate address detection). A bgpd started earlier, as the
//! old fixed 150 ms wait allowed on a busy machine, received its neighbours' routes before
//! zebra had told it the connected routes their next hops resolve over, dropped them, and
//! did not recover until `clear bgp *` (80 of 152 routes of the k = 4 fat tree wrong for more
//! than 60 s, in 2 of 6 bring-ups under load). So every zebra is started, then each is asked
//! (`vtysh -d zebra -c 'show interface json'`, its vty answering also means it reached its
//! main loop) until every interface of its router is up with its address, and only then are
//! the bgpds started.

use crate::state::{write_atomic, LabRouter, LabState};
use crate::{run, runtime_in, DAEMONS_FILE, STATE_FILE, STOP_FILE};
use aifabric::Error;
use std::collections::BTreeMap;
use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long zebra may take to report its interfaces: a base and a share per router (the
/// zebras start together and compete for the CPU; 1-2 s each was measured on a busy
/// 2-core machine, mostly duplicate address detection).
const ZEBRA_READY_BASE: Duration = Duration::from_secs(30);
const ZEBRA_READY_PER_ROUTER: Duration = Duration::from_millis(500);

/// Start the supervisor of the lab in `dir` (`SUPERVISOR lab supervise --dir DIR`, in its own
/// process group, logging to `supervisor.log`) and record it in the state (one step of the
/// bring-up, so an interrupt sees its pid), then wait until it has started the daemons.
pub(crate) fn start(state: &mut LabState, dir: &Path, supervisor: &Path) -> Result<(), Error> {
    let pid = crate::interrupt::step(|| {
        let log = std::fs::File::create(dir.join("supervisor.log"))
            .map_err(|e| runtime_in("cannot create supervisor.log", e))?;
        let err = log
            .try_clone()
            .map_err(|e| runtime_in("supervisor.log", e))?;
        let child = {
            use std::os::unix::process::CommandExt;
            Command::new(supervisor)
                .args(["lab", "supervise", "--dir"])
                .arg(dir)
                .stdin(Stdio::null())
                .stdout(log)
                .stderr(err)
                // Its own process group: a Ctrl-C at the terminal that ran `up` does not stop
                // it; `up`'s interrupt handler stops it through the stop file.
                .process_group(0)
                .spawn()
                .map_err(|e| runtime_in(&format!("cannot start {}", supervisor.display()), e))?
        };
        state.supervisor = Some(child.id());
        state.write(dir)?;
        Ok(child.id())
    })?;
    // The supervisor writes the daemons' ids once all are started. Its own wait for zebra
    // is bounded, so this one is only a backstop.
    let limit = ZEBRA_READY_BASE + ZEBRA_READY_PER_ROUTER * count(state.routers.len()) * 2;
    let deadline = Instant::now() + limit;
    while !dir.join(DAEMONS_FILE).exists() {
        if crate::interrupt::abandoned() {
            return Err(Error::Runtime {
                message: "interrupted".into(),
                source: None,
            });
        }
        let (late, dead) = (Instant::now() > deadline, !alive(pid));
        if late || dead {
            let log = dir.join("supervisor.log");
            let last = std::fs::read_to_string(&log)
                .ok()
                .and_then(|t| {
                    t.lines()
                        .last()
                        .map(|l| l.trim_start_matches("error: ").to_owned())
                })
                .unwrap_or_default();
            let why = if dead {
                "the supervisor stopped before it started the daemons".to_owned()
            } else {
                format!(
                    "the supervisor did not start the daemons within {} s",
                    limit.as_secs()
                )
            };
            return Err(Error::Runtime {
                message: format!("{why}: {last} (see {})", log.display()),
                source: None,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Ask the supervisor `pid` of the lab in `dir` to stop (the stop file), and give it 10 s to
/// kill and reap the daemons and exit. Whether it had to be asked (it was running).
pub(crate) fn stop(dir: &Path, pid: u32) -> bool {
    if !alive(pid) {
        return false;
    }
    let _ = std::fs::write(dir.join(STOP_FILE), b"");
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

/// Whether process `pid` runs (a zombie does not).
pub fn alive(pid: u32) -> bool {
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

/// The daemons started so far: killed and reaped when dropped (a failed start leaves none).
struct Daemons(Vec<(String, Child)>);

impl Drop for Daemons {
    fn drop(&mut self) {
        for (_, c) in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Whether the supervisor should stop: `down` wrote the stop file, or the lab is gone (its
/// state file removed: a `down` that found no supervisor recorded, after `up` was killed).
fn stopping(dir: &Path) -> bool {
    dir.join(STOP_FILE).exists() || !dir.join(STATE_FILE).exists()
}

/// The supervisor of the lab in `dir`: starts every router's `zebra`, waits until each has
/// its interfaces up with their addresses (see the module docs), then starts every `bgpd`,
/// all in the foreground inside their namespaces, as its own children; writes their ids;
/// then reaps them until [`down`](crate::down) asks it to stop (the stop file), when it
/// kills and reaps them all. A daemon that dies is logged on standard error. A zebra that
/// does not get ready in time is an error naming its namespace; the daemons are then killed.
pub fn supervise(dir: &Path) -> Result<(), Error> {
    let state = LabState::read(dir)?;
    let mut daemons = Daemons(Vec::new());
    for r in &state.routers {
        if stopping(dir) {
            return Ok(());
        }
        daemons.0.push(spawn(&state, dir, r, "zebra")?);
    }
    let limit = ZEBRA_READY_BASE + ZEBRA_READY_PER_ROUTER * count(state.routers.len());
    let deadline = Instant::now() + limit;
    let log = |r: &LabRouter| dir.join("run").join(&r.namespace).join("zebra.log");
    for (i, r) in state.routers.iter().enumerate() {
        let want = interfaces(&state, r);
        loop {
            if stopping(dir) {
                return Ok(());
            }
            // A zebra that exited (a bad configuration) will not get ready: say so now.
            if let Ok(Some(status)) = daemons.0[i].1.try_wait() {
                return Err(Error::Runtime {
                    message: format!(
                        "zebra of {} (namespace {}) exited ({status}) before reporting its \
                         interfaces; see {}",
                        r.name,
                        r.namespace,
                        log(r).display()
                    ),
                    source: None,
                });
            }
            let missing = zebra_missing(dir, r, &want);
            if missing.is_empty() {
                break;
            }
            if Instant::now() > deadline {
                return Err(Error::Runtime {
                    message: format!(
                        "zebra of {} (namespace {}) did not report {} up with their addresses \
                         within {} s, so its bgpd was not started; see {}",
                        r.name,
                        r.namespace,
                        missing.join(", "),
                        limit.as_secs(),
                        log(r).display()
                    ),
                    source: None,
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    for r in &state.routers {
        if stopping(dir) {
            return Ok(());
        }
        daemons.0.push(spawn(&state, dir, r, "bgpd")?);
    }
    let pids: Vec<u32> = daemons.0.iter().map(|(_, c)| c.id()).collect();
    write_atomic(
        &dir.join(DAEMONS_FILE),
        serde_json::to_string(&pids).expect("ids").as_bytes(),
    )?;
    let mut running = vec![true; daemons.0.len()];
    while !stopping(dir) {
        for ((who, c), up) in daemons.0.iter_mut().zip(running.iter_mut()) {
            if *up {
                if let Ok(Some(status)) = c.try_wait() {
                    eprintln!("{who} exited: {status}");
                    *up = false;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(daemons);
    let _ = std::fs::remove_file(dir.join(DAEMONS_FILE));
    Ok(())
}

/// Start `daemon` (`zebra` or `bgpd`) of router `r` in its namespace, in the foreground.
fn spawn(
    state: &LabState,
    dir: &Path,
    r: &LabRouter,
    daemon: &str,
) -> Result<(String, Child), Error> {
    let run_dir = dir.join("run").join(&r.namespace);
    let bin = PathBuf::from(&state.frr).join(daemon).display().to_string();
    let child = Command::new("ip")
        .args(["netns", "exec", &r.namespace, &bin, "-P", "0", "-f"])
        .arg(dir.join("conf").join(format!("{}.{daemon}.conf", r.name)))
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
        .map_err(|e| runtime_in(&format!("cannot start {daemon} of {}", r.name), e))?;
    Ok((format!("{} {daemon}", r.name), child))
}

/// The interfaces router `r` must have before its bgpd starts, each with the address zebra
/// must report on it: every link end's /127, and `rack` with any global address (its /64's
/// first host, from `zebra.conf`).
fn interfaces(state: &LabState, r: &LabRouter) -> BTreeMap<String, Option<Ipv6Addr>> {
    let mut want = BTreeMap::new();
    for e in state.links.iter().flat_map(|l| &l.ends) {
        if e.router == r.name {
            want.insert(e.interface.clone(), e.address.parse().ok());
        }
    }
    if !r.originates.is_empty() {
        want.insert("rack".to_owned(), None);
    }
    want
}

/// What zebra of router `r` lacks of `want` (`eth1 2001:db8::1`; all of it while zebra does
/// not answer yet).
fn zebra_missing(
    dir: &Path,
    r: &LabRouter,
    want: &BTreeMap<String, Option<Ipv6Addr>>,
) -> Vec<String> {
    let run_dir = dir.join("run").join(&r.namespace).display().to_string();
    let text = run(
        "vtysh",
        &[
            "--vty_socket",
            &run_dir,
            "-d",
            "zebra",
            "-c",
            "show interface json",
        ],
    )
    .unwrap_or_default();
    let shown: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    want.iter()
        .filter(|(name, addr)| !ready(&shown[name.as_str()], **addr))
        .map(|(name, addr)| match addr {
            Some(a) => format!("{name} {a}"),
            None => name.clone(),
        })
        .collect()
}

/// Whether zebra shows interface `i` (its `show interface json` entry) operationally up with
/// address `addr` (or, for `None`, any address that is not link-local).
fn ready(i: &serde_json::Value, addr: Option<Ipv6Addr>) -> bool {
    if i["operationalStatus"] != "up" {
        return false;
    }
    let addrs = i["ipAddresses"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    addrs.iter().any(|a| {
        let shown = a["address"]
            .as_str()
            .and_then(|s| s.split('/').next())
            .and_then(|s| s.parse::<Ipv6Addr>().ok());
        match (shown, addr) {
            (Some(s), Some(want)) => s == want,
            (Some(s), None) => !s.is_unicast_link_local(),
            (None, _) => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_interface_is_ready_when_up_with_its_address() {
        let up = json!({"operationalStatus": "up", "ipAddresses": [
            {"address": "fe80::1/64"}, {"address": "2001:db8:0:0::1/127"}]});
        let want: Ipv6Addr = "2001:db8::1".parse().unwrap();
        assert!(ready(&up, Some(want)));
        assert!(ready(&up, None));
        assert!(!ready(&up, Some("2001:db8::3".parse().unwrap())));
        let tentative =
            json!({"operationalStatus": "up", "ipAddresses": [{"address": "fe80::1/64"}]});
        assert!(!ready(&tentative, Some(want)));
        assert!(
            !ready(&tentative, None),
            "a link-local address alone is not the rack's"
        );
        let down =
            json!({"operationalStatus": "down", "ipAddresses": [{"address": "2001:db8::1/127"}]});
        assert!(!ready(&down, Some(want)));
        assert!(
            !ready(&serde_json::Value::Null, None),
            "zebra does not answer yet"
        );
    }
}
