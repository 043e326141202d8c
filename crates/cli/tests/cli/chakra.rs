//! End to end: `aifabric chakra synth|scale` and `aifabric replay`.

use crate::aifabric;
use serde_json::Value;
use std::path::Path;

fn job_file() -> String {
    format!(
        "{}/../../examples/jobs/small-64.yaml",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn run_json(args: &[&str]) -> Value {
    let out = aifabric().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn synth(dir: &Path) -> Value {
    run_json(&[
        "chakra",
        "synth",
        "--job",
        &job_file(),
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ])
}

#[test]
fn a_synthesized_trace_replays_to_the_job_step_time() {
    let d = tempfile::tempdir().unwrap();
    let w = synth(d.path());
    assert_eq!(w["ranks"], 64);
    assert!(d.path().join("trace.63.et.gz").exists());
    assert!(d.path().join("comm_group.json").exists());
    let t = d.path().to_str().unwrap();
    let r = run_json(&["replay", "llama3-24k", "--trace", t, "--json"]);
    let j = run_json(&["job", "llama3-24k", "--job", &job_file(), "--json"]);
    let (rt, jt) = (
        r["replay"]["iteration_s"].as_f64().unwrap(),
        j["result"]["step_s"].as_f64().unwrap(),
    );
    assert!((rt - jt).abs() / jt < 0.01, "replay {rt} s, job {jt} s");
    assert_eq!(r["placement"], "spread");
    assert_eq!(r["replay"]["per_rank"].as_array().unwrap().len(), 64);
    let path = r["replay"]["critical_path"].as_array().unwrap();
    assert_eq!(path.last().unwrap()["name"], "iteration_end");
    // Human output: the summary and the critical path.
    let out = aifabric()
        .args(["replay", "llama3-24k", "--trace", t])
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("small-64: 64 ranks"), "{s}");
    assert!(s.contains("Critical path:"), "{s}");
}

#[test]
fn replay_under_a_failure_reports_the_slowdown_and_is_deterministic() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    let t = d.path().to_str().unwrap();
    let args = [
        "replay",
        "llama3-24k",
        "--trace",
        t,
        "--fail",
        "east.dc1.llama.atsw1",
        "--json",
    ];
    let v = run_json(&args);
    let s = v["slowdown"].as_f64().unwrap();
    assert!(s >= 1.0, "slowdown {s}");
    assert!(v["healthy"]["iteration_s"].as_f64().unwrap() > 0.0);
    // Byte-identical whatever the thread count.
    let one = aifabric()
        .env("RAYON_NUM_THREADS", "1")
        .args(args)
        .output()
        .unwrap();
    let two = aifabric()
        .env("RAYON_NUM_THREADS", "2")
        .args(args)
        .output()
        .unwrap();
    assert!(one.status.success());
    assert_eq!(one.stdout, two.stdout);
}

#[test]
fn a_rescaled_trace_replays_with_the_new_rank_count() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    synth(a.path());
    let s = run_json(&[
        "chakra",
        "scale",
        "--in",
        a.path().to_str().unwrap(),
        "--ranks",
        "256",
        "--out",
        b.path().to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(s["ranks"], 256);
    assert_eq!(s["dp_groups"].as_array().unwrap().len(), 16);
    let r = run_json(&[
        "replay",
        "llama3-24k",
        "--trace",
        b.path().to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(r["replay"]["ranks"], 256);
    // Same compute per rank as the 64-rank trace.
    let r64 = run_json(&[
        "replay",
        "llama3-24k",
        "--trace",
        a.path().to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(
        r["replay"]["per_rank"][200]["compute_s"],
        r64["replay"]["per_rank"][200 % 64]["compute_s"]
    );
}

fn fails_with(args: &[&str], want: &[&str]) {
    let out = aifabric().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let e = String::from_utf8_lossy(&out.stderr);
    for w in want {
        assert!(e.contains(w), "`{w}` not in: {e}");
    }
}

#[test]
fn bad_traces_and_arguments_exit_2_with_the_place_and_the_fix() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    let t = d.path().to_str().unwrap();
    // Cut rank 5's file short (plain copy of its decompressed bytes, minus the tail).
    let f5 = d.path().join("trace.5.et.gz");
    let mut raw = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&f5).unwrap()),
        &mut raw,
    )
    .unwrap();
    std::fs::remove_file(&f5).unwrap();
    std::fs::write(d.path().join("trace.5.et"), &raw[..raw.len() - 5]).unwrap();
    fails_with(
        &["replay", "llama3-24k", "--trace", t],
        &["trace.5.et: byte ", "truncated message"],
    );
    fails_with(
        &["replay", "llama3-24k", "--trace", "/nonexistent/dir"],
        &["cannot read the trace directory"],
    );
    fails_with(
        &["replay", "llama3-24k", "--trace", t, "--efficiency=0"],
        &["--efficiency must be a positive number"],
    );
    let out = tempfile::tempdir().unwrap();
    fails_with(
        &[
            "chakra",
            "scale",
            "--in",
            t,
            "--ranks",
            "100",
            "--out",
            out.path().to_str().unwrap(),
        ],
        &["not a multiple of the trace's 64 ranks"],
    );
}

#[test]
fn a_synthesized_trace_replays_the_same_without_comm_group_json() {
    // README: without comm_group.json, a group is the set of ranks that name it.
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    let t = d.path().to_str().unwrap();
    let with = run_json(&["replay", "llama3-24k", "--trace", t, "--json"]);
    std::fs::remove_file(d.path().join("comm_group.json")).unwrap();
    let without = run_json(&["replay", "llama3-24k", "--trace", t, "--json"]);
    assert_eq!(without["replay"], with["replay"]);
}

#[test]
fn a_prefix_cannot_write_outside_the_output_directory() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let elsewhere = d.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let absolute = format!("{}/x", elsewhere.display());
    for prefix in ["../x", absolute.as_str(), "a/b", ""] {
        fails_with(
            &[
                "chakra",
                "synth",
                "--job",
                &job_file(),
                "--out",
                out.to_str().unwrap(),
                "--prefix",
                prefix,
            ],
            &[&format!("the trace prefix `{prefix}`"), "e.g. `trace`"],
        );
        // Nothing written, in the output directory or anywhere near it.
        let mut left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(left, ["elsewhere"], "{prefix:?}");
        assert_eq!(
            std::fs::read_dir(&elsewhere).unwrap().count(),
            0,
            "{prefix:?}"
        );
    }
    // A prefix with dots stays a plain name.
    let w = run_json(&[
        "chakra",
        "synth",
        "--job",
        &job_file(),
        "--out",
        out.to_str().unwrap(),
        "--prefix",
        "..x",
        "--json",
    ]);
    assert_eq!(w["ranks"], 64);
    assert!(out.join("..x.0.et.gz").exists());
}
