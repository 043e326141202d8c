//! `aifabric slurm-import` end to end: recorded `squeue --json` output imported for
//! `llama3-24k`, the file it writes loaded as a cluster; and its refusals. (The import against
//! a real Slurm is `slurm_live.rs`.)

use crate::aifabric;
use aifabric::stages::model::FailureMask;
use aifabric::stages::spec::cluster::load_cluster;
use aifabric::stages::workload::cluster::hosts;
use aifabric_fixtures::slurm as fx;
use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The repository's `examples/jobs`, holding `small-64.yaml` for the job `small-64`.
fn examples_jobs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/jobs")
}

/// A work directory with `jobs/dp-16.yaml` (the comment `aifabric:jobs/dp-16.yaml`) and the
/// fixture, its `@WORKDIR@` replaced, as `squeue.json`.
fn workdir(fixture: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(
        dir.path().join("jobs/dp-16.yaml"),
        aifabric_fixtures::jobs::DP_16,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("squeue.json"),
        fixture.replace("@WORKDIR@", dir.path().to_str().unwrap()),
    )
    .unwrap();
    dir
}

fn import_cmd(dir: &Path) -> Command {
    let mut c = aifabric();
    c.args(["slurm-import", "llama3-24k", "--squeue-json"])
        .arg(dir.join("squeue.json"))
        .arg("--job-dir")
        .arg(examples_jobs())
        .arg("--out")
        .arg(dir.join("cluster.yaml"));
    c
}

#[test]
fn recorded_squeue_json_imports_and_the_file_loads_on_the_right_gpus() {
    let f = aifabric::stages::spec::load("llama3-24k").unwrap();
    let h = hosts(&f, 8, &FailureMask::none(&f));
    for fixture in [fx::SQUEUE_22_05_LLAMA3_24K, fx::SQUEUE_24_05_LLAMA3_24K] {
        let dir = workdir(fixture);
        let out = import_cmd(dir.path())
            .args(["--node-prefix", "gpu"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.starts_with("2 running Slurm jobs on llama3-24k: 80 GPUs on 10 nodes"),
            "{stdout}"
        );
        assert!(stdout.contains("not running, left out: "), "{stdout}");
        let path = dir.path().join("cluster.yaml");
        let c = load_cluster(&f, path.to_str().unwrap()).unwrap();
        let on = |idx: &[usize]| -> Vec<_> {
            idx.iter().flat_map(|&i| h[i].1.iter().copied()).collect()
        };
        assert_eq!(c.jobs()[0].name, "small-64-4101");
        assert_eq!(c.jobs()[0].gpus, on(&[0, 1, 2, 3, 4, 5, 6, 7]));
        assert_eq!(c.jobs()[1].name, "dp16-4102");
        assert_eq!(c.jobs()[1].gpus, on(&[8, 10]));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("    file: jobs/dp-16.yaml\n"), "{text}");
        assert!(text.contains(&format!("      - {}\n", h[10].0)), "{text}");
    }
}

#[test]
fn json_summary_names_each_node_and_its_rule() {
    let dir = workdir(fx::SQUEUE_24_05_LLAMA3_24K);
    let out = import_cmd(dir.path())
        .args(["--node-prefix", "gpu", "--first", "1", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], aifabric::SCHEMA_VERSION);
    assert_eq!(v["spec"], "llama3-24k");
    assert_eq!(v["gpus"], 80);
    assert_eq!(v["jobs"][1]["slurm_id"], 4102);
    assert_eq!(v["jobs"][1]["file_from"], "comment");
    assert_eq!(v["jobs"][0]["file_from"], "job-dir");
    assert_eq!(v["jobs"][1]["nodes"][1]["node"], "gpu0011");
    assert_eq!(v["jobs"][1]["nodes"][1]["rule"], "node-prefix");
    assert_eq!(v["skipped"][0]["state"], "COMPLETED+COMPLETING");
    // Run again: the same bytes.
    let first = std::fs::read(dir.path().join("cluster.yaml")).unwrap();
    assert!(import_cmd(dir.path())
        .args(["--node-prefix", "gpu"])
        .output()
        .unwrap()
        .status
        .success());
    assert_eq!(
        first,
        std::fs::read(dir.path().join("cluster.yaml")).unwrap()
    );
}

/// Runs `c`, expects exit `code` and every one of `wanted` in its stderr.
fn refused(c: &mut Command, code: i32, wanted: &[&str]) {
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    for w in wanted {
        assert!(err.contains(w), "`{w}` missing from: {err}");
    }
}

#[test]
fn refusals_name_the_slurm_job_the_node_and_the_fix() {
    let dir = workdir(fx::SQUEUE_22_05_LLAMA3_24K);
    // No rule maps `gpu0001`.
    refused(
        &mut import_cmd(dir.path()),
        2,
        &[
            "Slurm job 4101 (`small-64`): node `gpu0001` maps to no host of llama3-24k",
            "--node-map",
            "--node-prefix",
        ],
    );
    assert!(!dir.path().join("cluster.yaml").exists());
    // A node map row with a host that is not one.
    std::fs::write(dir.path().join("map.csv"), "gpu0001,east.nothing\n").unwrap();
    refused(
        import_cmd(dir.path())
            .arg("--node-map")
            .arg(dir.path().join("map.csv")),
        2,
        &["map.csv:1:1: Slurm job 4101 (`small-64`): node `gpu0001` maps to `east.nothing`"],
    );
    // --first needs --node-prefix.
    refused(
        import_cmd(dir.path()).args(["--first", "0"]),
        2,
        &["--node-prefix"],
    );
    // Not Slurm's JSON.
    std::fs::write(dir.path().join("squeue.json"), "{\"jobs\": 3}").unwrap();
    refused(
        &mut import_cmd(dir.path()),
        2,
        &[
            "squeue.json:1:",
            "not Slurm's job list",
            "hint: give the output of `squeue --json`",
        ],
    );
}

#[test]
fn an_output_that_is_not_a_regular_file_is_left_alone() {
    let dir = workdir(fx::SQUEUE_22_05_LLAMA3_24K);
    std::fs::create_dir(dir.path().join("cluster.yaml")).unwrap();
    // Refused before the import, as bad input naming what is there (issue 35).
    refused(
        import_cmd(dir.path()).args(["--node-prefix", "gpu"]),
        2,
        &["is a directory", "give another path"],
    );
    assert!(dir.path().join("cluster.yaml").is_dir());
}

#[test]
fn without_squeue_the_error_says_to_pass_the_json() {
    let dir = tempfile::tempdir().unwrap();
    refused(
        aifabric()
            .env("PATH", dir.path())
            .args(["slurm-import", "llama3-24k", "--out"])
            .arg(dir.path().join("c.yaml")),
        2,
        &["`squeue` is not installed here", "--squeue-json FILE"],
    );
}
