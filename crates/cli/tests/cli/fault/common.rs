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
