//! aifabric against a real Slurm: a one-node cluster (Debian's `slurm-wlm` and `munge`)
//! started in a temporary directory with its own munge socket and ports.
//!
//! `slurm-import`: two batch jobs running on the node, and the import run live (it calls
//! `squeue --json` itself). The one node maps to one host, so the two jobs share it: the
//! import must refuse that, naming both Slurm jobs; with one of them cancelled it imports the
//! other onto the mapped host.
//!
//! `sweep --emit-slurm`: the array submitted to a partition other than the default with a
//! time limit and an extra option; one shard made to fail, the merge job reporting it, the
//! shard rerun alone by `sweep rerun-failed` and the new merge giving the single run's bytes.
//!
//! Skips, saying why, when not root, when Slurm or munge is not installed (`.ci/run` installs
//! them), or when the daemons cannot start here. The daemons and jobs are stopped at the end,
//! also when an assertion fails; the tests take turns (one cluster at a time).

use aifabric::stages::model::FailureMask;
use aifabric::stages::spec::cluster::load_cluster;
use aifabric::stages::workload::cluster::hosts;
use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Output, Stdio};
use std::time::{Duration, Instant};

/// An 8-GPU job (one host of 8): what each Slurm job runs.
const ONE_HOST_JOB: &str = "\
# One server's worth of GPUs, for the real-Slurm test.
name: one-host
gpus: 8
parallelism: { tp: 8, pp: 1, dp: 1 }
model:
  parameters: 1.0e9
  layers: 8
  hidden: 2048
  sequence_length: 2048
  micro_batch: 1
  global_batch: 8
compute: { peak_tflops: 989, efficiency: 0.4 }
";

/// The program `name` in PATH or the sbin directories (root's daemons).
fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Why this machine cannot run the test, if it cannot.
fn unavailable() -> Option<String> {
    let uid = Process::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some("not root (the Slurm daemons run as root here)".into());
    }
    let missing: Vec<&str> = [
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "squeue",
        "scancel",
        "sinfo",
    ]
    .into_iter()
    .filter(|p| find(p).is_none())
    .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{} not installed (apt-get install slurm-wlm munge)",
            missing.join(", ")
        )
    })
}

/// The running test cluster; dropping it cancels the jobs and stops the daemons.
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
    jobs: Vec<String>,
}

impl Cluster {
    fn cmd(&self, program: &str) -> Process {
        let mut c = Process::new(find(program).unwrap_or_else(|| program.into()));
        c.env("SLURM_CONF", &self.conf)
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        c
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        self.cmd(program).args(args).output().unwrap()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The last lines of the daemons' logs, for a message.
    fn logs(&self) -> String {
        ["log/munged.log", "log/slurmctld.log", "log/slurmd.log"]
            .iter()
            .map(|l| {
                let text = std::fs::read_to_string(self.path(l)).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(5).collect();
                format!(
                    "{l}:\n  {}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n  ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Job id -> state, from squeue.
    fn states(&self) -> Vec<(String, String)> {
        let out = self.run("squeue", &["-h", "-o", "%i %T"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(i, s)| (i.to_owned(), s.trim().to_owned()))
            .collect()
    }

    fn pid(&self, file: &str) -> Option<u32> {
        std::fs::read_to_string(self.path(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for id in &self.jobs {
            let _ = self.run("scancel", &[id]);
        }
        until(Duration::from_secs(10), || self.states().is_empty());
        for pidfile in ["slurmd.pid", "slurmctld.pid", "munged.pid"] {
            let Some(pid) = self.pid(pidfile) else {
                continue;
            };
            let alive = || Path::new(&format!("/proc/{pid}")).exists();
            let _ = Process::new("kill").arg(pid.to_string()).status();
            if !until(Duration::from_secs(5), || !alive()) {
                let _ = Process::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// Poll `done` every 200 ms until it holds (true) or `limit` passes (false).
fn until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if done() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A free TCP port on this machine.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Start munged, slurmctld and slurmd for one node named `node`, or say why not.
fn start(node: &str) -> Result<Cluster, String> {
    // A short path: munge's socket name must fit in a Unix socket address.
    let dir = tempfile::Builder::new()
        .prefix("afslurm")
        .tempdir_in("/tmp")
        .map_err(|e| e.to_string())?;
    let d = dir
        .path()
        .to_str()
        .ok_or("temporary path is not UTF-8")?
        .to_owned();
    for sub in ["state", "spool", "log", "jobs"] {
        std::fs::create_dir(dir.path().join(sub)).map_err(|e| e.to_string())?;
    }
    let mut key = vec![0u8; 1024];
    std::io::Read::read_exact(
        &mut std::fs::File::open("/dev/urandom").map_err(|e| e.to_string())?,
        &mut key,
    )
    .map_err(|e| e.to_string())?;
    let key_path = dir.path().join("munge.key");
    std::fs::write(&key_path, key).map_err(|e| e.to_string())?;
    std::fs::set_permissions(
        &key_path,
        std::os::unix::fs::PermissionsExt::from_mode(0o400),
    )
    .map_err(|e| e.to_string())?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (ctld_port, slurmd_port) = (free_port(), free_port());
    let conf = format!(
        "ClusterName=aifabrictest\n\
         SlurmctldHost={node}(127.0.0.1)\n\
         SlurmUser=root\n\
         SlurmdUser=root\n\
         AuthType=auth/munge\n\
         AuthInfo=socket={d}/munge.sock\n\
         CredType=cred/munge\n\
         SlurmctldPort={ctld_port}\n\
         SlurmdPort={slurmd_port}\n\
         StateSaveLocation={d}/state\n\
         SlurmdSpoolDir={d}/spool\n\
         SlurmctldPidFile={d}/slurmctld.pid\n\
         SlurmdPidFile={d}/slurmd.pid\n\
         SlurmctldLogFile={d}/log/slurmctld.log\n\
         SlurmdLogFile={d}/log/slurmd.log\n\
         ProctrackType=proctrack/linuxproc\n\
         TaskPlugin=task/none\n\
         JobAcctGatherType=jobacct_gather/none\n\
         AccountingStorageType=accounting_storage/none\n\
         JobCompType=jobcomp/none\n\
         SchedulerType=sched/builtin\n\
         SelectType=select/cons_tres\n\
         SelectTypeParameters=CR_Core\n\
         ReturnToService=2\n\
         MpiDefault=none\n\
         NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
         PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES\n\
         PartitionName=sweeps Nodes=ALL MaxTime=30 State=UP OverSubscribe=YES\n"
    );
    let conf_path = dir.path().join("slurm.conf");
    std::fs::write(&conf_path, conf).map_err(|e| e.to_string())?;
    let cluster = Cluster {
        dir,
        conf: conf_path.clone(),
        jobs: Vec::new(),
    };
    let started = |out: std::io::Result<Output>, what: &str| -> Result<(), String> {
        match out {
            Ok(o) if o.status.success() => Ok(()),
            Ok(o) => Err(format!(
                "{what} did not start ({}): {}",
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Err(format!("{what} did not start: {e}")),
        }
    };
    started(
        cluster
            .cmd("munged")
            .args(["--force", "--key-file"])
            .arg(&key_path)
            .arg(format!("--socket={d}/munge.sock"))
            .arg(format!("--pid-file={d}/munged.pid"))
            .arg(format!("--log-file={d}/log/munged.log"))
            .arg(format!("--seed-file={d}/munge.seed"))
            .output(),
        "munged",
    )?;
    let c = conf_path.to_str().unwrap_or_default();
    started(
        cluster
            .cmd("slurmctld")
            .args(["-c", "-i", "-f", c])
            .output(),
        "slurmctld",
    )?;
    started(
        cluster
            .cmd("slurmd")
            .args(["-c", "-f", c, "-N", node])
            .output(),
        "slurmd",
    )?;
    let idle = until(Duration::from_secs(20), || {
        let out = cluster.run("sinfo", &["-h", "-o", "%T"]);
        let s = String::from_utf8_lossy(&out.stdout);
        s.trim() == "idle" || s.trim() == "mixed"
    });
    if !idle {
        return Err(format!(
            "the node did not come up in 20 s\n{}",
            cluster.logs()
        ));
    }
    Ok(cluster)
}

fn submit(cluster: &mut Cluster, name: &str) -> String {
    let out = cluster.run(
        "sbatch",
        &[
            "--parsable",
            "-J",
            name,
            "-c",
            "1",
            "--oversubscribe",
            "-o",
            "/dev/null",
            "--comment",
            "aifabric:jobs/one-host.yaml",
            "--wrap",
            "sleep 300",
        ],
    );
    assert!(
        out.status.success(),
        "sbatch: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    cluster.jobs.push(id.clone());
    id
}

fn import(cluster: &Cluster) -> Output {
    Command::cargo_bin("aifabric")
        .unwrap()
        .env("SLURM_CONF", &cluster.conf)
        .args(["slurm-import", "llama3-24k", "--node-map"])
        .arg(cluster.path("nodes.csv"))
        .arg("--out")
        .arg(cluster.path("cluster.yaml"))
        .output()
        .unwrap()
}

/// One test cluster at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The node's name and a started cluster, or `None` after saying why `test` skips.
fn cluster_for(test: &str) -> Option<(String, Cluster)> {
    if let Some(why) = unavailable() {
        eprintln!("skipped: the real-Slurm {test} test: {why}");
        return None;
    }
    let node = Process::new("hostname")
        .arg("-s")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    if node.is_empty() {
        eprintln!("skipped: the real-Slurm {test} test: no host name");
        return None;
    }
    match start(&node) {
        Ok(c) => Some((node, c)),
        Err(why) => {
            eprintln!("skipped: the real-Slurm {test} test: Slurm cannot start here: {why}");
            None
        }
    }
}

#[test]
fn slurm_import_reads_a_real_slurm() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some((node, mut cluster)) = cluster_for("import") else {
        return;
    };
    let f = aifabric::stages::spec::load("llama3-24k").unwrap();
    let h = hosts(&f, 8, &FailureMask::none(&f));
    let host = &h[0].0;
    std::fs::write(cluster.path("jobs/one-host.yaml"), ONE_HOST_JOB).unwrap();
    std::fs::write(
        cluster.path("nodes.csv"),
        format!("slurm_node,host\n{node},{host}\n"),
    )
    .unwrap();

    let a = submit(&mut cluster, "train-a");
    let b = submit(&mut cluster, "train-b");
    let running = until(Duration::from_secs(20), || {
        let s = cluster.states();
        [&a, &b]
            .iter()
            .all(|id| s.iter().any(|(i, st)| i == *id && st == "RUNNING"))
    });
    assert!(
        running,
        "the jobs did not start: {:?}\n{}",
        cluster.states(),
        cluster.logs()
    );

    // Both jobs on the one node: one host cannot run two jobs.
    let out = import(&cluster);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "Slurm job {b} (`train-b`): node `{node}` is host {host} (node map), which is also \
             Slurm job {a}'s node `{node}`"
        )),
        "{err}"
    );
    assert!(!cluster.path("cluster.yaml").exists());

    // With train-b cancelled, train-a is imported onto the mapped host.
    assert!(cluster.run("scancel", &[&b]).status.success());
    assert!(until(Duration::from_secs(15), || {
        !cluster.states().iter().any(|(i, _)| *i == b)
    }));
    let out = import(&cluster);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("1 running Slurm job on llama3-24k: 8 GPUs on 1 node;"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(cluster.path("cluster.yaml")).unwrap();
    assert!(
        text.contains(&format!(
            "  - name: train-a-{a}\n    file: jobs/one-host.yaml\n    hosts:\n      - {host}\n"
        )),
        "{text}"
    );
    let c = load_cluster(&f, cluster.path("cluster.yaml").to_str().unwrap()).unwrap();
    assert_eq!(c.jobs().len(), 1);
    assert_eq!(c.jobs()[0].gpus, h[0].1);
}

const SWEEP: &str = "\
spec: two.yaml
grid:
  inter_bag[0].topology: [planar, spread]
failures: { sweep: montecarlo, samples: 40, seed: 3, probability: [link=0.01] }
draws_per_task: 10
";

/// `scontrol show job ID` as one line of `Key=Value` words.
fn show_job(cluster: &Cluster, id: &str) -> String {
    let out = cluster.run("scontrol", &["show", "job", "--oneliner", id]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The job ids `submit.sh` recorded (`array ID SHARDS` / `merge ID` lines), in order.
fn recorded(dir: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(dir.join("jobs.txt"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?.to_owned(), w.next()?.to_owned()))
        })
        .collect()
}

/// Wait until none of `ids` is in the queue (60 s at most).
fn until_ended(cluster: &Cluster, ids: &[String]) -> bool {
    until(Duration::from_secs(60), || {
        let s = cluster.states();
        !s.iter().any(|(i, _)| {
            let job = i.split('_').next().unwrap_or(i);
            ids.iter().any(|id| id == job)
        })
    })
}

#[test]
fn a_sweep_array_runs_on_a_real_slurm_and_a_failed_shard_is_rerun() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some((_node, mut cluster)) = cluster_for("sweep array") else {
        return;
    };
    let work = cluster.path("jobs");
    std::fs::write(
        work.join("two.yaml"),
        aifabric_fixtures::specs::TWO_REGIONS_NSF_2_PODS_PLANAR,
    )
    .unwrap();
    std::fs::write(work.join("sweep.yaml"), SWEEP).unwrap();
    let aifabric = |args: &[&str]| {
        Command::cargo_bin("aifabric")
            .unwrap()
            .current_dir(&work)
            .env("SLURM_CONF", &cluster.conf)
            .args(args)
            .output()
            .unwrap()
    };
    let o = aifabric(&["sweep", "sweep.yaml", "--out", "single.json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let single = std::fs::read(work.join("single.json")).unwrap();
    let comment = "it's \"two words\" #x";
    let o = aifabric(&[
        "sweep",
        "sweep.yaml",
        "--emit-slurm",
        "slurm",
        "--shards",
        "3",
        "--partition",
        "sweeps",
        "--time",
        "5",
        "--cpus-per-task",
        "1",
        "--sbatch",
        &format!("--comment={comment}"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = work.join("slurm");
    // Shard 1 fails: its result's path is a directory, which it cannot replace.
    std::fs::create_dir(dir.join("shard-1.json")).unwrap();
    let o = cluster
        .cmd("bash")
        .arg(dir.join("submit.sh"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let jobs = recorded(&dir);
    cluster.jobs.extend(jobs.iter().map(|(_, id)| id.clone()));
    let (array, merge) = (jobs[0].1.clone(), jobs[1].1.clone());
    assert_eq!(jobs[0].0, "array");
    // Submitted as asked: the partition, the time limit, the comment read back whole.
    let shown = show_job(&cluster, &array);
    for want in [
        "Partition=sweeps",
        "TimeLimit=00:05:00",
        &format!("Comment={comment}"),
    ] {
        assert!(shown.contains(want), "{want}: {shown}");
    }
    assert!(show_job(&cluster, &merge).contains("Partition=sweeps"));
    assert!(
        until_ended(&cluster, &[array.clone(), merge.clone()]),
        "the array and its merge did not end: {:?}\n{}",
        cluster.states(),
        cluster.logs()
    );
    // The merge ran anyway (afterany), found shard 1 without its result and said so.
    assert!(show_job(&cluster, &merge).contains("JobState=FAILED"));
    let log = |name: &str| std::fs::read_to_string(dir.join("logs").join(name)).unwrap_or_default();
    let merge_log = log(&format!("merge-{merge}.log"));
    assert!(
        merge_log.contains("shard 1: shard-1.json is not a shard result")
            || merge_log.contains("shard 1: shard-1.json cannot be read"),
        "{merge_log}"
    );
    assert!(
        merge_log.contains("aifabric sweep rerun-failed"),
        "{merge_log}"
    );
    // Shard logs named by job and index, and not empty.
    let shard0 = log(&format!("shard-{array}_0.log"));
    assert!(shard0.contains("shard 0/3 done"), "{shard0}");
    assert!(!log(&format!("shard-{array}_1.log")).is_empty());

    // The cause removed, the rerun submits shard 1 alone and a new merge after it.
    std::fs::remove_dir(dir.join("shard-1.json")).unwrap();
    let o = aifabric(&["sweep", "rerun-failed", "slurm"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("rerunning shards 1:"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let jobs = recorded(&dir);
    assert_eq!(jobs.len(), 4, "{jobs:?}");
    let (array2, merge2) = (jobs[2].1.clone(), jobs[3].1.clone());
    cluster.jobs.extend([array2.clone(), merge2.clone()]);
    assert!(show_job(&cluster, &array2).contains("ArrayTaskId=1 "));
    assert!(
        until_ended(&cluster, &[array2.clone(), merge2.clone()]),
        "the rerun did not end: {:?}\n{}",
        cluster.states(),
        cluster.logs()
    );
    assert!(
        show_job(&cluster, &merge2).contains("JobState=COMPLETED"),
        "{}",
        log(&format!("merge-{merge2}.log"))
    );
    assert!(
        std::fs::read(dir.join("sweep.json")).unwrap() == single,
        "the merged array differs from the single run"
    );
    // The first run's logs are still there beside the rerun's.
    assert!(dir.join(format!("logs/shard-{array}_1.log")).is_file());
    assert!(log(&format!("shard-{array2}_1.log")).contains("shard 1/3 done"));
}
