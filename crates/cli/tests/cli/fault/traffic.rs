//! Traffic inputs (issue 35): runs that cannot fit refused before the engine starts, values
//! that would become silently wrong numbers refused at their line, a deadlocked trigger
//! cycle reported as a failure naming who waits on what (not an FCT table of zeros).

use super::common::{refused, refused_env, run};
use std::io::Write;
use std::time::Duration;

/// Generous for debug builds: the point is that the refusal comes before the heavy work.
const WITHIN: Duration = Duration::from_secs(30);

/// `text` written to `name` in `dir`; its path.
fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_owned()
}

#[test]
fn the_packet_engine_refuses_a_run_that_cannot_fit_before_it_starts() {
    // 131,072 GPUs of 1 MiB flows: aborted in the allocator after 41 s. The limit is set,
    // so the refusal does not depend on the machine's memory.
    let limit = [("AIFABRIC_MAX_MEMORY_BYTES", "8G")];
    let big = [
        "traffic",
        "prometheus",
        "--pattern",
        "permutation",
        "--gpus",
        "131072",
        "--size",
        "1M",
        "--engine",
        "packet",
    ];
    refused_env(
        &big,
        &limit,
        Duration::from_secs(60),
        &[
            "would need about",
            "memory limit of 8.0 GiB",
            "--engine flow",
            "fewer GPUs",
        ],
    );
    // Many flows (a 10M-flow file aborted after 67 s): 300,000 here, under a 512 MiB limit.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("many.cm");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    let flows = 300_000u32;
    writeln!(w, "Nodes 128\nConnections {flows}").unwrap();
    for i in 0..flows {
        writeln!(
            w,
            "{}->{} id {} start 0 size 4096",
            i % 128,
            (i + 1) % 128,
            i + 1
        )
        .unwrap();
    }
    drop(w);
    let limit = [("AIFABRIC_MAX_MEMORY_BYTES", "512M")];
    for engine in ["packet", "both"] {
        refused_env(
            &[
                "traffic",
                "htsim-k8",
                "--tm",
                p.to_str().unwrap(),
                "--engine",
                engine,
            ],
            &limit,
            WITHIN,
            &[
                "300,000 flows",
                "memory limit of 512.0 MiB (AIFABRIC_MAX_MEMORY_BYTES)",
            ],
        );
    }
    // The flow engine holds a few hundred bytes per flow: 300,000 fit in 512 MiB, not in 64.
    let limit = [("AIFABRIC_MAX_MEMORY_BYTES", "64M")];
    refused_env(
        &["traffic", "htsim-k8", "--tm", p.to_str().unwrap()],
        &limit,
        WITHIN,
        &[
            "the flow engine would need about",
            "memory limit of 64.0 MiB",
        ],
    );
    // A limit that is not a byte count is refused, not ignored.
    let bad = [("AIFABRIC_MAX_MEMORY_BYTES", "lots")];
    refused_env(
        &[
            "traffic",
            "htsim-k8",
            "--pattern",
            "permutation",
            "--gpus",
            "8",
            "--engine",
            "packet",
        ],
        &bad,
        WITHIN,
        &["AIFABRIC_MAX_MEMORY_BYTES", "8G"],
    );
}

/// (file name, text, what the refusal says) for malformed traffic files of both formats.
fn malformed() -> Vec<(&'static str, String, &'static str)> {
    let cm = |body: &str| format!("Nodes 8\nConnections 1\n{body}");
    let csv = |body: &str| format!("src,dst,bytes,start_us\n{body}");
    vec![
        ("t.cm", cm("0->1 id 1 start 0 size 18446744073709551615\n"), "t.cm:3: a flow of 18446744073709551615 bytes is over the largest flow"),
        ("t.cm", cm("0->1 id 1 start 18446744073709551615 size 5\n"), "t.cm:3: `start 18446744073709551615` is past the latest start"),
        ("t.cm", cm("0->1 id 1 start 0 size 5 size 9\n"), "t.cm:3: `size` is given twice on this line"),
        ("t.cm", "Nodes 8\nConnections 2\n0->1 id 1 start 0 size 5 send_done_trigger 1\n1->2 id 2 start 0 trigger 1 size 5\n".to_string(), "t.cm:4: the flow has both `start` and `trigger 1`"),
        ("t.cm", "Nodes 8\nConnections 1\nTriggers 5\n0->1 id 1 start 0 size 5\n".to_string(), "t.cm:3: `Triggers 5` but the file has 0 trigger lines"),
        ("t.csv", csv("0,1,100,1e300\n"), "t.csv:2: start `1e300` us is outside 0 to 1e12 us"),
        ("t.csv", csv("0,1,18446744073709551615,0\n"), "t.csv:2: a flow of 18446744073709551615 bytes"),
        ("t.csv", csv("0,1,100,-3\n"), "t.csv:2: start `-3` us is outside"),
        ("t.csv", csv("0,4294967295,100,0\n"), "t.csv:2: `4294967295` is not a node number"),
    ]
}

#[test]
fn malformed_traffic_files_are_refused_at_their_line_in_both_engines() {
    let d = tempfile::tempdir().unwrap();
    for (name, text, says) in malformed() {
        let p = file(&d, name, &text);
        for engine in ["flow", "packet"] {
            let r = refused(
                &["traffic", "htsim-k8", "--tm", &p, "--engine", engine],
                WITHIN,
                &[says, "hint:"],
            );
            assert!(r.stderr.contains(&p), "{text:?}: {}", r.stderr);
        }
    }
}

#[test]
fn a_byte_order_mark_is_read_in_both_formats() {
    let d = tempfile::tempdir().unwrap();
    let cm = file(
        &d,
        "bom.cm",
        "\u{feff}Nodes 4\nConnections 1\n0->1 id 1 start 0 size 4096\n",
    );
    let csv = file(
        &d,
        "bom.csv",
        "\u{feff}src,dst,bytes,start_us\n0,1,4096,0\n",
    );
    for p in [cm, csv] {
        let r = run(&[
            "traffic",
            "htsim-k8",
            "--tm",
            &p,
            "--scale-up",
            "1",
            "--json",
        ]);
        assert_eq!(r.code, Some(0), "{p}: {}", r.stderr);
    }
}

#[test]
fn huge_latencies_and_negative_sizes_are_refused_with_the_range() {
    for engine in ["flow", "packet", "both"] {
        refused(
            &[
                "traffic",
                "htsim-k8",
                "--pattern",
                "permutation",
                "--gpus",
                "8",
                "--switch-latency-us",
                "1e300",
                "--engine",
                engine,
            ],
            WITHIN,
            &["--switch-latency-us 1e300", "from 0 to 1e6"],
        );
    }
    let r = refused(
        &[
            "traffic",
            "htsim-k8",
            "--pattern",
            "permutation",
            "--gpus",
            "8",
            "--size",
            "-1",
        ],
        WITHIN,
        &["`-1` is not a size", "a size in bytes like 1M, 4KiB"],
    );
    assert!(
        !r.stderr.contains("-- -1"),
        "clap's tip is wrong here: {}",
        r.stderr
    );
    let ok = run(&[
        "traffic",
        "htsim-k8",
        "--pattern",
        "permutation",
        "--gpus",
        "8",
        "--size",
        "4KiB",
        "--scale-up",
        "1",
    ]);
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
}

#[test]
fn a_deadlocked_trigger_cycle_fails_naming_who_waits_on_what() {
    let d = tempfile::tempdir().unwrap();
    let p = file(
        &d,
        "cycle.cm",
        "Nodes 8\nConnections 3\n\
         0->1 id 1 trigger 2 size 4096 send_done_trigger 1\n\
         1->2 id 2 trigger 1 size 4096 send_done_trigger 2\n\
         2->3 id 3 start 0 size 4096\n",
    );
    for engine in ["flow", "packet", "both"] {
        let r = run(&["traffic", "htsim-k8", "--tm", &p, "--engine", engine]);
        assert_eq!(r.code, Some(1), "{engine}: {}", r.stderr);
        for says in [
            "deadlock: 2 of the 3 flows can never start",
            "flow 1 waits on trigger 2 (oneshot), fired by flow(s) 2",
            "flow 2 waits on trigger 1 (oneshot), fired by flow(s) 1",
        ] {
            assert!(
                r.stderr.contains(says),
                "{engine}: `{says}` not in {}",
                r.stderr
            );
        }
    }
}

#[test]
fn nodes_beyond_the_fabric_are_located_to_their_line() {
    let d = tempfile::tempdir().unwrap();
    // htsim-k8 has 128 GPUs: node 200 on line 4 is the culprit.
    let p = file(
        &d,
        "far.cm",
        "Nodes 256\nConnections 2\n0->1 id 1 start 0 size 4096\n1->200 id 2 start 0 size 4096\n",
    );
    refused(
        &["traffic", "htsim-k8", "--tm", &p, "--scale-up", "1"],
        WITHIN,
        &[
            &format!("{p}:4: node 200 is beyond the fabric"),
            "live GPUs",
        ],
    );
    // Flows that fit under a `Nodes` that does not: the `Nodes` line.
    let p = file(
        &d,
        "nodes.cm",
        "Nodes 256\nConnections 1\n0->1 id 1 start 0 size 4096\n",
    );
    refused(
        &["traffic", "htsim-k8", "--tm", &p, "--scale-up", "1"],
        WITHIN,
        &[&format!("{p}:1: `Nodes 256` is beyond")],
    );
    let p = file(
        &d,
        "far.csv",
        "src,dst,bytes,start_us\n0,1,4096,0\n3,300,4096,0\n",
    );
    refused(
        &["traffic", "htsim-k8", "--tm", &p, "--scale-up", "1"],
        WITHIN,
        &[&format!("{p}:3: node 300 is beyond")],
    );
}

/// Issue 35's reproducer (4 KiB flows on `htsim-k8`, flow i starting at i ps), at 3,000
/// flows to stay quick in a debug build: the starts and finishes picoseconds apart share
/// re-solves (a few hundred instead of one per start and nearly one per finish), the JSON
/// counts them and a note says what it costs; every flow completes.
#[test]
fn flows_starting_picoseconds_apart_share_re_solves() {
    let dir = tempfile::tempdir().unwrap();
    let n = 3000;
    let mut text = format!("Nodes 128\nConnections {n}\n");
    for i in 0..n {
        let (src, dst) = (i % 128, (i % 128 + 1 + (i / 128) % 127) % 128);
        text += &format!("{src}->{dst} id {} start {i} size 4096\n", i + 1);
    }
    let tm = file(&dir, "staggered.cm", &text);
    let out = super::common::aifabric()
        .args([
            "traffic",
            "htsim-k8",
            "--tm",
            &tm,
            "--scale-up",
            "1",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["result"];
    assert_eq!(r["flows"], n);
    assert_eq!(r["never_started"], 0);
    let (events, coalesced) = (
        r["events"].as_u64().unwrap(),
        r["coalesced_events"].as_u64().unwrap(),
    );
    assert!(events < 600, "{events} re-solves");
    assert!(coalesced > n as u64, "{coalesced} coalesced");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("fluid: ") && notes.contains("0.1%"),
        "{notes}"
    );
}
