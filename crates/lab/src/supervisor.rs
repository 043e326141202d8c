//! The supervisor: one process that runs every router's `zebra` and `bgpd` as its own
//! children and reaps them, started by [`up`](crate::up) and stopped by
//! [`down`](crate::down) through the stop file.

use crate::state::{write_atomic, LabState};
use crate::{runtime_in, DAEMONS_FILE, STOP_FILE};
use aifabric::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Start the supervisor of the lab in `dir` (`SUPERVISOR lab supervise --dir DIR`, in its own
/// process group, logging to `supervisor.log`), record it in the state, and wait until it has
/// started the daemons.
pub(crate) fn start(state: &mut LabState, dir: &Path, supervisor: &Path) -> Result<(), Error> {
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
            // Its own process group: a Ctrl-C at the terminal that ran `up` does not stop it.
            .process_group(0)
            .spawn()
            .map_err(|e| runtime_in(&format!("cannot start {}", supervisor.display()), e))?
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

/// Ask the supervisor `pid` of the lab in `dir` to stop (the stop file), and give it 10 s to
/// kill and reap the daemons and exit.
pub(crate) fn stop(dir: &Path, pid: u32) {
    let _ = std::fs::write(dir.join(STOP_FILE), b"");
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether process `pid` runs (a zombie does not).
pub(crate) fn alive(pid: u32) -> bool {
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
/// until [`down`](crate::down) asks it to stop (the stop file), when it kills and reaps them
/// all. A daemon that dies is logged on standard error.
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
                .map_err(|e| runtime_in(&format!("cannot start {daemon}"), e))?;
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
