//! Standard output that goes away: a reader that stops early ends the run quietly with 0 (as
//! filters such as `head` expect), an output that cannot be written (`/dev/full`) exits 1
//! with a message; never a panic.

use std::process::{Command, Stdio};

fn aifabric() -> Command {
    Command::new(env!("CARGO_BIN_EXE_aifabric"))
}

/// Run `args` with stdout a pipe whose reading end is closed before the command writes (the
/// command first builds a fabric, which takes far longer than closing a pipe).
fn with_closed_stdout(args: &[&str]) -> std::process::Output {
    let mut child = aifabric()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_pipe_ends_quietly_with_0() {
    for args in [
        &["routes", "nsf-l2", "--device", "east.dc1.nsf.rtsw0"][..],
        &[
            "routes",
            "nsf-l2",
            "--device",
            "east.dc1.nsf.rtsw0",
            "--json",
        ],
        &["validate", "dsf-l1-zone"],
        &["specs"],
    ] {
        let out = with_closed_stdout(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(
            stderr.is_empty(),
            "{args:?}: nothing on stderr, got {stderr}"
        );
    }
}

#[test]
fn a_full_device_is_an_output_that_cannot_be_written() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return; // not Linux: no /dev/full to write to
    };
    for args in [
        &["routes", "nsf-l2", "--device", "east.dc1.nsf.rtsw0"][..],
        &["capacity", "dsf-l1-zone", "--json"],
    ] {
        let out = aifabric()
            .args(args)
            .stdout(Stdio::from(full.try_clone().unwrap()))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot write to standard output") && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
    }
}
