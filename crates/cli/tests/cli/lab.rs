//! `aifabric lab` refusals, which need no root, namespaces or FRR: each exits 2 naming the
//! fix, before anything is made. (The lab itself runs in `tests/frr`, as root with FRR.)

use crate::aifabric;
use assert_cmd::Command;

/// Runs `c`, expects exit 2 and every one of `wanted` in its stderr.
fn refused(c: &mut Command, wanted: &[&str]) {
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for w in wanted {
        assert!(err.contains(w), "`{w}` missing from: {err}");
    }
}

#[test]
fn a_dsf_fabric_is_refused_for_the_lab() {
    let dir = tempfile::tempdir().unwrap();
    refused(
        aifabric()
            .args(["lab", "up", "dsf-l2-zone", "--dir"])
            .arg(dir.path().join("lab")),
        &["DSF zone: one BGP speaker"],
    );
    assert!(!dir.path().join("lab").exists());
}

#[test]
fn a_fabric_over_the_router_budget_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    refused(
        aifabric()
            .args(["lab", "up", "llama3-24k", "--dir"])
            .arg(dir.path().join("lab")),
        &["more than the lab's budget of 100", "--max-routers"],
    );
    assert!(!dir.path().join("lab").exists());
}

#[test]
fn check_and_down_without_a_lab_say_how_to_start_one() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["lab", "check", "llama3-24k", "--dir"],
        vec!["lab", "down", "--dir"],
        vec!["lab", "status", "--dir"],
        vec!["lab", "exec", "r.b.z.rtsw0", "--dir"],
    ] {
        let mut c = aifabric();
        c.args(&args).arg(dir.path());
        if args[1] == "exec" {
            c.args(["--", "vtysh"]);
        }
        refused(&mut c, &["no lab in", "aifabric lab up SPEC"]);
    }
}

#[test]
fn conditional_aggregation_is_refused_with_frrs_reason() {
    let dir = tempfile::tempdir().unwrap();
    refused(
        aifabric()
            .args([
                "lab",
                "up",
                "nsf-l2",
                "--aggregation",
                "conditional",
                "--dir",
            ])
            .arg(dir.path().join("lab")),
        &["cannot be configured in FRR", "--aggregation unconditional"],
    );
    refused(
        aifabric()
            .args(["export", "nsf-l2", "--format", "netbox", "--aggregation"])
            .args(["unconditional", "--out"])
            .arg(dir.path().join("x")),
        &["--aggregation applies to --format frr only"],
    );
}
