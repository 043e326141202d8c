//! Interrupts at several points: Ctrl-C (SIGINT) ends a run with 130 and leaves no partial
//! output; what a SIGKILL (which no process can catch) left is removed by the next run.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const BIG_JOB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/jobs/llama3-405b-16k.yaml"
);
const SMALL_JOB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/jobs/small-64.yaml"
);

fn spawn(args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("aifabric"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig}");
}

/// Hidden entries of `dir` (what a run writes before it is complete).
fn partials(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn ctrl_c_leaves_no_partial_trace_at_any_point() {
    for after_ms in [150, 400, 1200] {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("trace");
        let mut child = spawn(&[
            "chakra",
            "synth",
            "--job",
            BIG_JOB,
            "--out",
            out.to_str().unwrap(),
        ]);
        std::thread::sleep(Duration::from_millis(after_ms));
        signal(&child, "-INT");
        let status = child.wait().unwrap();
        if status.success() {
            continue; // finished before the signal: nothing to check
        }
        assert_eq!(status.code(), Some(130), "after {after_ms} ms");
        assert_eq!(partials(&out), Vec::<String>::new(), "after {after_ms} ms");
        assert_eq!(
            partials(tmp.path()),
            Vec::<String>::new(),
            "after {after_ms} ms"
        );
    }
}

#[test]
fn what_a_killed_trace_left_goes_with_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("trace");
    let mut child = spawn(&[
        "chakra",
        "synth",
        "--job",
        BIG_JOB,
        "--out",
        out.to_str().unwrap(),
    ]);
    // Until its staging directory exists (or it finished), then SIGKILL.
    for _ in 0..200 {
        if !partials(&out).is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&child, "-KILL");
    let status = child.wait().unwrap();
    if status.success() {
        eprintln!("the trace finished before the SIGKILL; nothing left to remove");
        return;
    }
    assert!(
        !partials(&out).is_empty(),
        "a SIGKILLed run leaves its staging directory"
    );
    let o = Command::new(assert_cmd::cargo::cargo_bin("aifabric"))
        .args([
            "chakra",
            "synth",
            "--job",
            SMALL_JOB,
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        partials(&out),
        Vec::<String>::new(),
        "the next run removed it"
    );
}

#[test]
fn ctrl_c_during_a_failure_sweep_writes_no_output() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("failures.json");
    for after_ms in [100, 700] {
        let mut child = spawn(&["failures", "prometheus", "--out", out.to_str().unwrap()]);
        std::thread::sleep(Duration::from_millis(after_ms));
        signal(&child, "-INT");
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "after {after_ms} ms");
        assert!(!out.exists(), "after {after_ms} ms");
        assert_eq!(partials(tmp.path()), Vec::<String>::new());
    }
}
