//! Inputs that cannot finish or fit are refused up front (exit 2, the size, the limit and how
//! to narrow it); what runs reports progress; an interrupted run leaves no partial output.

use assert_cmd::Command;
use std::time::Duration;

fn aifabric() -> Command {
    let mut c = Command::cargo_bin("aifabric").unwrap();
    // A refusal is immediate; a run that starts instead is a failure, not a wait.
    c.timeout(Duration::from_secs(120));
    c
}

/// Run, expect exit 2 and every one of `needles` in the error.
fn refused(args: &[&str], needles: &[&str]) {
    let o = aifabric().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` missing from: {err}");
    }
}

#[test]
fn failure_sweeps_beyond_the_budget_are_refused_with_narrower_sweeps() {
    // 1,408 BAG line cards: 990,528 pairs, hours of evaluation.
    refused(
        &["failures", "prometheus", "--sweep", "pairs:linecard"],
        &[
            "990,528 pairs",
            "limit of 100,000",
            "single:linecard",
            "pairs:plane",
        ],
    );
    refused(
        &[
            "failures",
            "prometheus",
            "--sweep",
            "montecarlo",
            "--samples",
            "1000000000",
        ],
        &["1,000,000,000", "limit of 1,000,000"],
    );
    // Within the budget, the same class runs.
    let o = aifabric()
        .args(["failures", "nsf-l2", "--sweep", "pairs:plane", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
