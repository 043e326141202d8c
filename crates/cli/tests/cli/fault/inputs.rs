//! Inputs without end: `/dev/zero` wherever a file is read is refused at a size limit.

use super::common::refused;
use std::time::Duration;

/// A sweep file of the examples (a shard is checked against it).
const SWEEP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/sweeps/prometheus-drains.yaml"
);

#[test]
fn endless_inputs_are_refused_at_the_limit() {
    for args in [
        &["build", "/dev/zero"][..],
        &["traffic", "htsim-k8", "--tm", "/dev/zero"],
        &["failures", "htsim-k8", "--scenario", "/dev/zero"],
        &["job", "htsim-k8", "--job", "/dev/zero"],
        &["sweep", "/dev/zero"],
        &["sweep", "merge", SWEEP, "/dev/zero"],
    ] {
        refused(args, Duration::from_secs(20), &["input limit"]);
    }
}

#[test]
fn requests_that_cannot_be_met_are_refused_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let out = out.to_str().unwrap();
    // Used to run with every GPU instead, silently.
    refused(
        &["report", "prometheus", "--out", out, "--gpus", "1000000"],
        Duration::from_secs(20),
        &["--gpus 1000000", "216192 GPUs"],
    );
    // A file where the demo's directory goes: refused at once, not after the whole run.
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").unwrap();
    refused(
        &["demo", "--quiet", "--out", file.to_str().unwrap()],
        Duration::from_secs(5),
        &["a regular file", "give another path"],
    );
    // A soft drain is not a state to sweep from: not offered by --help, refused with why.
    for cmd in ["demo", "report", "failures"] {
        let help = super::common::aifabric()
            .args([cmd, "--help"])
            .output()
            .unwrap();
        assert!(
            !String::from_utf8_lossy(&help.stdout).contains("--drain-soft"),
            "{cmd} --help offers --drain-soft"
        );
    }
    refused(
        &[
            "demo",
            "--quiet",
            "--drain-soft",
            "east.bag.plane1",
            "--out",
            out,
        ],
        Duration::from_secs(20),
        &["cannot start from a soft drain"],
    );
}
