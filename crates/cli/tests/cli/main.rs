//! The integration tests of `aifabric-cli`, one binary (each module was its own binary).

mod budgets;
mod chakra;
mod cli;
mod cluster;
mod drift;
mod fault;
mod goodput;
mod lab;
mod names;
mod packet;
mod report;
mod roce_bag;
mod slurm;
mod slurm_live;
mod stdout;
mod sweep;
mod ux;

use assert_cmd::Command;

/// The CLI under test.
pub(crate) fn aifabric() -> Command {
    Command::cargo_bin("aifabric").unwrap()
}

/// A command run to its end: its exit code, standard output and standard error.
pub(crate) fn outcome(c: &mut Command) -> (Option<i32>, String, String) {
    let o = c.output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `aifabric ARGS`, run to its end ([`outcome`]).
pub(crate) fn run(args: &[&str]) -> (Option<i32>, String, String) {
    outcome(aifabric().args(args))
}
