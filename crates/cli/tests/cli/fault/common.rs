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
