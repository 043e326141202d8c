//! `aifabric sweep`: a single run, its shards merged, and its Slurm job array run locally
//! (each array task with `SLURM_ARRAY_TASK_ID` set, then the merge job) give the same bytes.

use assert_cmd::Command;
use std::path::Path;

const SWEEP: &str = r#"
spec: two.yaml
grid:
  inter_bag[0].topology: [planar, spread]
  regions[a].bag.planes: [2]
failures:
  sweep: montecarlo
  samples: 60
  seed: 9
  probability: [link=0.01, chassis=0.05]
draws_per_task: 20
"#;

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("two.yaml"),
        aifabric_fixtures::specs::TWO_REGIONS_NSF_2_PODS_PLANAR,
    )
    .unwrap();
    std::fs::write(dir.path().join("sweep.yaml"), SWEEP).unwrap();
    dir
}

fn aifabric(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::cargo_bin("aifabric")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn shards_and_the_slurm_array_give_the_single_run_byte_for_byte() {
    let tmp = setup();
    let dir = tmp.path();
    let o = aifabric(
        dir,
        &[
            "sweep",
            "sweep.yaml",
            "--out",
            "single.json",
            "--table",
            "single.arrow",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("2 designs") && text.contains("6 tasks"),
        "{text}"
    );
    let single = std::fs::read(dir.join("single.json")).unwrap();
    let table = std::fs::read(dir.join("single.arrow")).unwrap();
    assert!(table.starts_with(b"ARROW1"), "an Arrow IPC file");

    // Shards by hand, merged.
    for i in 0..4 {
        let s = format!("{i}/4");
        let out = format!("s{i}.json");
        let o = aifabric(dir, &["sweep", "sweep.yaml", "--shard", &s, "--out", &out]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = aifabric(
        dir,
        &[
            "sweep",
            "merge",
            "sweep.yaml",
            "s3.json",
            "s1.json",
            "s0.json",
            "s2.json",
            "--out",
            "merged.json",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read(dir.join("merged.json")).unwrap() == single,
        "merged shards differ"
    );
    // One shard short: refused, exit 2.
    let o = aifabric(dir, &["sweep", "merge", "sweep.yaml", "s0.json", "s1.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("tasks missing"));

    // The Slurm array, each task run as Slurm would run it, then the merge job.
    let o = aifabric(
        dir,
        &[
            "sweep",
            "sweep.yaml",
            "--emit-slurm",
            "slurm",
            "--shards",
            "3",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let array = std::fs::read_to_string(dir.join("slurm/array.sbatch")).unwrap();
    assert!(array.contains("#SBATCH --array=0-2"), "{array}");
    for i in 0..3 {
        let o = std::process::Command::new("bash")
            .arg(dir.join("slurm/array.sbatch"))
            .env("SLURM_ARRAY_TASK_ID", i.to_string())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = std::process::Command::new("bash")
        .arg(dir.join("slurm/merge.sbatch"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read(dir.join("slurm/sweep.json")).unwrap() == single,
        "the Slurm array's merge differs"
    );
    assert!(
        std::fs::read(dir.join("slurm/sweep.arrow")).unwrap() == table,
        "the Slurm array's table differs"
    );
    let submit = std::fs::read_to_string(dir.join("slurm/submit.sh")).unwrap();
    assert!(submit.contains("--dependency=afterany:"), "{submit}");
}

/// A stand-in `sbatch` (prints job ids 77, 78, ... and records its arguments, NUL-separated)
/// and `squeue` (prints the contents of `queue`) in a directory for PATH.
fn stand_ins(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let sbatch = format!(
        "#!/bin/bash\nprintf '%s\\0' \"$@\" >> '{args}'\nprintf '\\n' >> '{args}'\n\
         n=$(cat '{count}' 2>/dev/null || echo 77)\necho $((n + 1)) > '{count}'\necho \"$n;cluster\"\n",
        args = dir.join("sbatch-args").display(),
        count = dir.join("sbatch-count").display(),
    );
    let squeue = format!(
        "#!/bin/bash\ncat '{}' 2>/dev/null\n",
        dir.join("queue").display()
    );
    for (name, text) in [("sbatch", sbatch), ("squeue", squeue)] {
        std::fs::write(bin.join(name), text).unwrap();
        std::fs::set_permissions(
            bin.join(name),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
    }
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn bash(script: &Path, task: Option<usize>) -> std::process::Output {
    let mut c = std::process::Command::new("bash");
    c.arg(script).env_remove("AIFABRIC_MAX_MEMORY_BYTES");
    if let Some(i) = task {
        // As Slurm sets them for an array task given --mem=4G.
        c.env("SLURM_ARRAY_TASK_ID", i.to_string())
            .env("SLURM_ARRAY_JOB_ID", "77")
            .env("SLURM_MEM_PER_NODE", "4096");
    }
    c.output().unwrap()
}

#[test]
fn slurm_options_are_written_and_a_failed_shard_is_rerun_alone() {
    let tmp = setup();
    let dir = tmp.path();
    let o = aifabric(dir, &["sweep", "sweep.yaml", "--out", "single.json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let single = std::fs::read(dir.join("single.json")).unwrap();
    let o = aifabric(
        dir,
        &[
            "sweep",
            "sweep.yaml",
            "--emit-slurm",
            "slurm",
            "--shards",
            "3",
            "--partition",
            "debug,gpu",
            "--account",
            "netlab",
            "--time",
            "1-02:30:00",
            "--mem",
            "4G",
            "--cpus-per-task",
            "1",
            "--sbatch",
            "--qos=high",
            "--sbatch=--comment=two words \"quoted\" #not-a-comment",
            "--sbatch=--exclusive",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = dir.join("slurm");
    let array = std::fs::read_to_string(s.join("array.sbatch")).unwrap();
    let merge = std::fs::read_to_string(s.join("merge.sbatch")).unwrap();
    for line in [
        "#SBATCH --partition=debug,gpu\n",
        "#SBATCH --account=netlab\n",
        "#SBATCH --time=1-02:30:00\n",
        "#SBATCH --mem=4G\n",
        "#SBATCH --qos=high\n",
        "#SBATCH --comment=\"two words \\\"quoted\\\" #not-a-comment\"\n",
        "#SBATCH --exclusive\n",
    ] {
        assert!(
            array.contains(line),
            "array.sbatch lacks {line:?}:\n{array}"
        );
        assert!(
            merge.contains(line),
            "merge.sbatch lacks {line:?}:\n{merge}"
        );
    }
    assert!(array.contains("#SBATCH --cpus-per-task=1\n"), "{array}");
    assert!(!merge.contains("--cpus-per-task"), "{merge}");
    // Every #SBATCH line comes before the first command (sbatch stops reading them there).
    let first_command = array.find("\nset -euo").unwrap();
    assert!(array.rfind("#SBATCH").unwrap() < first_command);
    assert!(array.contains("RAYON_NUM_THREADS=\"${SLURM_CPUS_PER_TASK:-1}\""));

    // Shards 0 and 2 run; shard 1 fails (its task never writes a result).
    for i in [0, 2] {
        let o = bash(&s.join("array.sbatch"), Some(i));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // The shard says what it runs and when it is done (its log is not empty).
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!(
                "shard {i}/3, 2 of 6 tasks, 1 thread, Slurm job 77_{i}, memory limit 3.2 GiB \
                 (AIFABRIC_MAX_MEMORY_BYTES)"
            )) && err.contains(&format!("shard {i}/3 done, 2 tasks in")),
            "{err}"
        );
    }
    std::fs::write(
        s.join("logs/shard-77_1.log"),
        "slurmstepd: error: *** JOB 79 CANCELLED DUE TO TIME LIMIT ***\n",
    )
    .unwrap();
    // The merge job refuses, listing the shard, its log's last line and the rerun.
    let o = bash(&s.join("merge.sbatch"), None);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("1 of 3 shards have no valid result")
            && out.contains("shard 1: no result (shard-1.json is missing); logs/shard-77_1.log ends: slurmstepd: error: *** JOB 79 CANCELLED DUE TO TIME LIMIT ***")
            && out.contains("aifabric sweep rerun-failed '"),
        "{out}"
    );
    assert!(!s.join("sweep.json").exists());
    let o = aifabric(dir, &["sweep", "status", "slurm", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["done"], 2);
    assert_eq!(v["failed"][0]["shard"], 1);
    // A damaged result counts as none.
    std::fs::write(s.join("shard-2.json"), "{\"fingerprint\": \"x\"}").unwrap();
    let o = aifabric(dir, &["sweep", "status", "slurm"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("shard 2: shard-2.json is not a shard result"),
        "{out}"
    );
    let o = bash(&s.join("array.sbatch"), Some(2));
    assert!(o.status.success());

    // The rerun: refused while an array of this sweep is in the queue, else shard 1 alone
    // and a merge after it (afterany).
    let path = stand_ins(dir);
    std::fs::write(s.join("jobs.txt"), "array 70 0-2\nmerge 71\n").unwrap();
    std::fs::write(dir.join("queue"), "12\n70\n").unwrap();
    let o = Command::cargo_bin("aifabric")
        .unwrap()
        .current_dir(dir)
        .env("PATH", &path)
        .args(["sweep", "rerun-failed", "slurm"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("job array 70 of this sweep is still queued")
    );
    std::fs::write(dir.join("queue"), "12\n").unwrap();
    let o = Command::cargo_bin("aifabric")
        .unwrap()
        .current_dir(dir)
        .env("PATH", &path)
        .args(["sweep", "rerun-failed", "slurm"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "rerunning shards 1: submitted shards 1 as job array 77, and the merge as job 78"
        ),
        "{out}"
    );
    let args = std::fs::read_to_string(dir.join("sbatch-args")).unwrap();
    let calls: Vec<Vec<&str>> = args
        .lines()
        .map(|l| l.split('\0').filter(|a| !a.is_empty()).collect())
        .collect();
    assert_eq!(calls.len(), 2, "{args:?}");
    assert!(
        calls[0].contains(&"--array=1") && calls[0].contains(&"array.sbatch"),
        "{calls:?}"
    );
    assert!(
        calls[0]
            .iter()
            .any(|a| a.ends_with("/logs/shard-%A_%a.log")),
        "{calls:?}"
    );
    assert!(
        calls[1].contains(&"--dependency=afterany:77") && calls[1].contains(&"merge.sbatch"),
        "{calls:?}"
    );
    assert!(
        calls[1].iter().any(|a| a.ends_with("/logs/merge-%j.log")),
        "{calls:?}"
    );
    let jobs = std::fs::read_to_string(s.join("jobs.txt")).unwrap();
    assert!(jobs.ends_with("array 77 1\nmerge 78\n"), "{jobs}");

    // Slurm runs shard 1 again, then the merge: the single run's bytes.
    let o = bash(&s.join("array.sbatch"), Some(1));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = bash(&s.join("merge.sbatch"), None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("all 3 shards have their result"));
    assert!(std::fs::read(s.join("sweep.json")).unwrap() == single);
    // Nothing left to rerun.
    let o = aifabric(dir, &["sweep", "rerun-failed", "slurm"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("nothing to rerun"));
}

#[test]
fn bad_slurm_options_are_refused_naming_the_fix() {
    let tmp = setup();
    for (flag, value, says) in [
        (
            "--partition",
            "gpu nodes",
            "a Slurm partition name is letters",
        ),
        ("--account", "a,b", "a Slurm account name is letters"),
        ("--time", "2h", "write a Slurm time limit"),
        ("--mem", "4GB", "write a memory size as sbatch reads it"),
        ("--cpus-per-task", "0", "give 1 to 4096 CPUs per shard"),
        ("--sbatch", "-q high", "one long sbatch option per --sbatch"),
        (
            "--sbatch",
            "--array=0-3",
            "the scripts set --array themselves",
        ),
        ("--sbatch", "--time=10", "use --time"),
    ] {
        let o = aifabric(
            tmp.path(),
            &["sweep", "sweep.yaml", "--emit-slurm", "out", flag, value],
        );
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{flag} {value}: {err}");
        assert!(!tmp.path().join("out").exists(), "nothing written");
    }
    // The options belong to --emit-slurm.
    let o = aifabric(tmp.path(), &["sweep", "sweep.yaml", "--partition", "gpu"]);
    assert_eq!(o.status.code(), Some(2));
    // Not a directory --emit-slurm wrote.
    let o = aifabric(tmp.path(), &["sweep", "status", "."]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no Slurm sweep here"));
}

#[test]
fn bad_shards_are_refused() {
    let tmp = setup();
    for s in ["4/4", "1/0", "x"] {
        let o = aifabric(tmp.path(), &["sweep", "sweep.yaml", "--shard", s]);
        assert_eq!(o.status.code(), Some(2), "{s}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("write I/N"),
            "{s}"
        );
    }
    let o = aifabric(
        tmp.path(),
        &[
            "sweep",
            "sweep.yaml",
            "--shard",
            "0/2",
            "--table",
            "t.arrow",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sweep merge"));
}
