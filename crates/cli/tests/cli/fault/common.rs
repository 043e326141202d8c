//! Helpers of the fault-injection suite.

use assert_cmd::Command;
use std::time::{Duration, Instant};

/// The binary under test.
pub fn aifabric() -> Command {
    Command::cargo_bin("aifabric").unwrap()
}

/// What a refused run gave: exit code, standard error, how long it took.
pub struct Refusal {
    pub code: Option<i32>,
    pub stderr: String,
    pub took: Duration,
}

/// Run `args` (with `input` on standard input if given) and return how it ended; the test
/// asserts on it.
pub fn run(args: &[&str]) -> Refusal {
    run_env(args, &[])
}

/// [`run`] with the environment variables `env` set.
pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Refusal {
    let t = Instant::now();
    let out = aifabric()
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    Refusal {
        code: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: t.elapsed(),
    }
}

/// `args` must be refused as bad input (exit 2) within `within`, with every one of `says` in
/// the message: never a panic (101), an abort (a signal, no code) or a silent success.
pub fn refused(args: &[&str], within: Duration, says: &[&str]) -> Refusal {
    refused_env(args, &[], within, says)
}

/// [`refused`] with the environment variables `env` set (a memory limit, for a refusal that
/// must not depend on the machine's memory).
pub fn refused_env(
    args: &[&str],
    env: &[(&str, &str)],
    within: Duration,
    says: &[&str],
) -> Refusal {
    let r = run_env(args, env);
    assert_eq!(
        r.code,
        Some(2),
        "{args:?}: expected a refusal (exit 2), got {:?}: {}",
        r.code,
        r.stderr
    );
    assert!(
        !r.stderr.contains("panicked"),
        "{args:?} panicked: {}",
        r.stderr
    );
    for s in says {
        assert!(r.stderr.contains(s), "{args:?}: `{s}` not in: {}", r.stderr);
    }
    assert!(
        r.took <= within,
        "{args:?}: refused after {:?}, more than {within:?}",
        r.took
    );
    r
}

/// A small Monte Carlo sweep over planar and spread inter-BAG links of a two-region fixture
/// (`two.yaml`): `samples` draws, `per_task` a task.
pub fn small_sweep(samples: u64, per_task: u64) -> String {
    format!(
        "spec: two.yaml\ngrid:\n  inter_bag[0].topology: [planar, spread]\nfailures:\n  \
         sweep: montecarlo\n  samples: {samples}\n  seed: 9\n  probability: [link=0.01, \
         chassis=0.05]\ndraws_per_task: {per_task}\n"
    )
}

/// A directory holding the fixture `two.yaml` and `sweep` as `sweep_name`.
pub fn sweep_dir(sweep_name: &str, sweep: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("two.yaml"),
        aifabric_fixtures::specs::TWO_REGIONS_NSF_2_PODS_PLANAR,
    )
    .unwrap();
    std::fs::write(dir.path().join(sweep_name), sweep).unwrap();
    dir
}

/// Why the FRR lab cannot run here (not root, no `ip netns`, no FRR), or `None`: the lab's
/// tests then skip, printing it, as `tests/frr` does.
pub fn lab_unusable() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let root = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        == Some("0");
    if !root {
        return Some("not root: network namespaces need root".into());
    }
    if !std::path::Path::new("/usr/lib/frr/bgpd").exists() {
        return Some("FRR is not installed (apt-get install frr)".into());
    }
    // Tests run in parallel in one process: each probe needs its own name.
    static PROBES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let probe = format!("aftest{}-{n}", std::process::id());
    match std::process::Command::new("ip")
        .args(["netns", "add", &probe])
        .output()
    {
        Ok(o) if o.status.success() => {
            let _ = std::process::Command::new("ip")
                .args(["netns", "del", &probe])
                .status();
            None
        }
        Ok(o) => Some(format!(
            "network namespaces are not allowed here: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Some(format!("no iproute2: {e}")),
    }
}

/// How a spawned run ended.
pub struct Ended {
    pub code: Option<i32>,
    pub stderr: String,
}

/// A lab directory of one test, under a temporary directory FRR's daemons (user `frr`) can
/// reach; what is left of the lab is taken down when dropped.
pub struct Lab {
    _top: tempfile::TempDir,
    pub dir: std::path::PathBuf,
}

impl Lab {
    pub fn new() -> Lab {
        use std::os::unix::fs::PermissionsExt;
        let top = tempfile::Builder::new()
            .prefix("aifabric-lab-")
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::set_permissions(top.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let dir = top.path().join("lab");
        Lab { _top: top, dir }
    }

    /// `aifabric lab up SPEC --dir DIR`, running in a process group of its own (as a shell
    /// runs a job: [`Lab::signal_group`] is a terminal's Ctrl-C), its standard error piped.
    pub fn spawn_up(&self, spec: &str) -> std::process::Child {
        use std::os::unix::process::CommandExt;
        std::process::Command::new(assert_cmd::cargo::cargo_bin("aifabric"))
            .process_group(0)
            .args(["lab", "up", spec, "--dir"])
            .arg(&self.dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Send `SIG<signal>` to process `pid`.
    pub fn signal(pid: u32, signal: &str) {
        let ok = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .unwrap();
        assert!(ok.success(), "kill -{signal} {pid}");
    }

    /// Send `SIG<signal>` to the process group `pid` leads, as a terminal's Ctrl-C does.
    pub fn signal_group(pid: u32, signal: &str) {
        let ok = std::process::Command::new("kill")
            .args([&format!("-{signal}"), "--", &format!("-{pid}")])
            .status()
            .unwrap();
        assert!(ok.success(), "kill -{signal} -- -{pid}");
    }

    /// Wait for `child` to end (killed after `within`, failing the test), with its output.
    pub fn finish(child: &mut std::process::Child, within: Duration) -> Ended {
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > within {
                let _ = child.kill();
                panic!("still running {within:?} after the signal");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let status = child.wait().unwrap();
        let read = |s: Option<&mut dyn std::io::Read>| {
            let mut t = String::new();
            if let Some(s) = s {
                let _ = s.read_to_string(&mut t);
            }
            t
        };
        Ended {
            code: status.code(),
            stderr: read(child.stderr.as_mut().map(|s| s as &mut dyn std::io::Read)),
        }
    }

    fn state(&self) -> serde_json::Value {
        std::fs::read_to_string(self.dir.join("lab.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// The namespaces the lab's state file records (none before it is written).
    pub fn namespaces(&self) -> Vec<String> {
        self.state()["routers"]
            .as_array()
            .map(|rs| {
                rs.iter()
                    .filter_map(|r| r["namespace"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Those of [`Lab::namespaces`] that exist.
    pub fn live_namespaces(&self) -> Vec<String> {
        self.namespaces()
            .into_iter()
            .filter(|n| Lab::namespace_exists(n))
            .collect()
    }

    /// The supervisor's pid, once recorded.
    pub fn supervisor(&self) -> Option<u32> {
        self.state()["supervisor"]
            .as_u64()
            .and_then(|p| u32::try_from(p).ok())
    }

    /// Wait (at most 60 s) until `ready`, then return the recorded namespaces.
    pub fn wait_until(&self, ready: impl Fn(&Lab) -> bool) -> Vec<String> {
        let start = Instant::now();
        while !ready(self) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the bring-up did not get there in 60 s"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        self.namespaces()
    }

    /// Veths in the host namespace named after the lab's tag (`v<tag><link><a|b>`, made there
    /// before their ends move into the routers' namespaces), the tag read off `namespaces`
    /// (`af<tag>-<router>`).
    pub fn host_veths(namespaces: &[String]) -> Vec<String> {
        let Some(tag) = namespaces
            .first()
            .and_then(|n| n.strip_prefix("af"))
            .and_then(|n| n.split('-').next())
        else {
            return Vec::new();
        };
        let out = std::process::Command::new("ip")
            .args(["-o", "link", "show"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split(':').nth(1))
            .map(|n| n.trim().split('@').next().unwrap_or("").to_owned())
            .filter(|n| n.starts_with(&format!("v{tag}")))
            .collect()
    }

    /// Whether network namespace `name` exists.
    pub fn namespace_exists(name: &str) -> bool {
        std::path::Path::new("/run/netns").join(name).exists()
    }

    /// Whether `pid` runs (a zombie does not).
    pub fn alive(pid: u32) -> bool {
        aifabric_lab::alive(pid)
    }

    /// Running processes (zombies excluded) whose command line names the lab's directory:
    /// its daemons (`--vty_socket DIR/run/...`) and supervisor.
    pub fn daemons(&self) -> Vec<String> {
        let dir = self.dir.display().to_string();
        let mut found = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else {
                continue;
            };
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(&dir) && Lab::alive(pid) {
                found.push(format!("{pid} {cmd}"));
            }
        }
        found
    }

    /// `aifabric lab down --dir DIR`, if a lab is there.
    pub fn down(&self) {
        if self.dir.join("lab.json").exists() {
            let _ = aifabric()
                .args(["lab", "down", "--dir"])
                .arg(&self.dir)
                .output();
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.down();
    }
}
