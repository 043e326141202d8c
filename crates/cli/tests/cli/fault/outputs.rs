//! Special files as outputs: a device node, a FIFO, a symbolic link or a directory at an
//! output's path is refused before any work (exit 2, naming what is there) and left as it was.

use super::common::refused;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::time::Duration;

/// What is at `p`, without following a link.
fn kind(p: &Path) -> &'static str {
    let t = std::fs::symlink_metadata(p).unwrap().file_type();
    if t.is_symlink() {
        "link"
    } else if t.is_char_device() {
        "char"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_dir() {
        "dir"
    } else {
        "file"
    }
}

fn make(cmd: &str, args: &[&str]) -> bool {
    std::process::Command::new(cmd)
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn outputs_never_replace_special_files() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let target = d.join("target");
    std::fs::write(&target, "keep me").unwrap();
    let mut special = vec![];
    let null = d.join("null");
    // A character device needs root (mknod); the rest any user can make.
    if make("mknod", &[null.to_str().unwrap(), "c", "1", "3"]) {
        special.push((null, "a character device"));
    } else {
        eprintln!("skipping the device-node case: mknod needs root");
    }
    let fifo = d.join("fifo");
    assert!(make("mkfifo", &[fifo.to_str().unwrap()]));
    special.push((fifo, "a FIFO"));
    let link = d.join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    special.push((link, "a symbolic link"));
    let sub = d.join("sub");
    std::fs::create_dir(&sub).unwrap();
    special.push((sub, "a directory"));
    let sweep = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/sweeps/prometheus-drains.yaml"
    );
    for (path, says) in &special {
        let p = path.to_str().unwrap();
        let before = kind(path);
        let file_outputs = [
            (vec!["build", "htsim-k8", "--out", p], "--out"),
            (vec!["failures", "htsim-k8", "--out", p], "--out"),
            (vec!["sweep", sweep, "--out", p], "--out"),
            (vec!["sweep", sweep, "--table", p], "--table"),
        ];
        for (args, flag) in &file_outputs {
            refused(
                args,
                Duration::from_secs(30),
                &[says, flag, "give another path"],
            );
            assert_eq!(kind(path), before, "{args:?} changed {p}");
        }
        if *says != "a directory" {
            for args in [
                vec!["export", "htsim-k8", "--format", "graphml", "--out", p],
                vec!["report", "htsim-k8", "--out", p],
                vec!["demo", "--out", p],
            ] {
                refused(&args, Duration::from_secs(30), &[says]);
                assert_eq!(kind(path), before, "{args:?} changed {p}");
            }
        }
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
}

#[test]
fn an_export_keeps_a_users_own_frr_files() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("frr");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("mine.bgpd.conf"), "router bgp 1\n").unwrap();
    let r = super::common::run(&[
        "export",
        "htsim-k8",
        "--format",
        "frr",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_ne!(
        r.code,
        Some(0),
        "the export replaced a folder with a user's file"
    );
    assert!(r.stderr.contains("mine.bgpd.conf"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(out.join("mine.bgpd.conf")).unwrap(),
        "router bgp 1\n"
    );
    // An earlier export of its own is replaced as before.
    std::fs::remove_file(out.join("mine.bgpd.conf")).unwrap();
    for _ in 0..2 {
        let r = super::common::run(&[
            "export",
            "htsim-k8",
            "--format",
            "frr",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
    }
}

#[test]
fn files_inside_an_output_directory_are_checked_before_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    std::fs::create_dir(&out).unwrap();
    let page = out.join("report.html");
    assert!(make("mkfifo", &[page.to_str().unwrap()]));
    for args in [
        vec!["report", "htsim-k8", "--out", out.to_str().unwrap()],
        vec!["demo", "--quiet", "--out", out.to_str().unwrap()],
    ] {
        refused(&args, Duration::from_secs(10), &["report.html is a FIFO"]);
        assert_eq!(kind(&page), "fifo");
    }
}

#[test]
fn a_link_to_a_directory_is_written_through_not_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = tmp.path().join("traces");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let job = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/jobs/small-64.yaml"
    );
    let r = super::common::run(&[
        "chakra",
        "synth",
        "--job",
        job,
        "--out",
        link.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(kind(&link), "link", "the link stays a link");
    assert!(real.join("comm_group.json").exists() || std::fs::read_dir(&real).unwrap().count() > 0);
    // An export replaces its directory whole: a link there is refused, not replaced.
    refused(
        &[
            "export",
            "htsim-k8",
            "--format",
            "dot",
            "--out",
            link.to_str().unwrap(),
        ],
        Duration::from_secs(10),
        &["a symbolic link"],
    );
    assert_eq!(kind(&link), "link");
}
