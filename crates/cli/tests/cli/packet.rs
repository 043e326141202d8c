//! `aifabric traffic --engine packet|both|hybrid`, and `collective` and `job` at packet level: the packet engine from the command line.

use crate::{aifabric, run};
use serde_json::Value;

fn scenario(file: &str) -> String {
    format!(
        "{}/../packet/scenarios/htsim-uec/{file}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// htsim's two trigger keys: `send_done_trigger` starts the next flow when the sender
/// holds the last ACK, `recv_done_trigger` when the receiver holds the last byte. In the
/// packet engine the second chain ends sooner by the ACK's way back (host 0 to host 127 of
/// htsim-k8 and back: 6 links of 1 us each way); the fluid fires both at the flow's end, so
/// its two answers are the same. The generated ring all-reduce uses the receiver's.
#[test]
fn send_and_recv_done_triggers_in_both_engines() {
    // Both engines on htsim-k8 under the preset, as JSON.
    let both = |args: &[&std::ffi::OsStr]| {
        let o = aifabric()
            .args([
                "traffic",
                "htsim-k8",
                "--engine",
                "both",
                "--preset",
                "uec-htsim",
            ])
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let d = tempfile::tempdir().unwrap();
    let run = |key: &str| {
        let cm = d.path().join(format!("{key}.cm"));
        std::fs::write(
            &cm,
            format!(
                "Nodes 128\nConnections 2\nTriggers 1\n0->127 id 1 start 0 size 1000000 {key} 1\n127->0 id 2 trigger 1 size 1000000\ntrigger id 1 oneshot\n"
            ),
        )
        .unwrap();
        both(&["--tm".as_ref(), cm.as_os_str()])
    };
    let (send, recv) = (run("send_done_trigger"), run("recv_done_trigger"));
    let makespan = |v: &Value, engine: &str| v[engine]["makespan_s"].as_f64().unwrap();
    let gap = makespan(&send, "packet") - makespan(&recv, "packet");
    assert!(
        (5e-6..7e-6).contains(&gap),
        "packet engine: {gap} s between the two rules"
    );
    assert_eq!(makespan(&send, "flow"), makespan(&recv, "flow"));
    for v in [&send, &recv] {
        assert_eq!(v["packet"]["never_started"], 0, "{v}");
    }
    // The generated ring: within 2% of the fluid on a packed ring of 8 GPUs.
    let ring = both(
        &[
            "--pattern",
            "ring-allreduce",
            "--gpus",
            "8",
            "--size",
            "64M",
        ]
        .map(std::ffi::OsStr::new),
    );
    let m = ring["ratios"]["makespan"].as_f64().unwrap();
    assert!((1.0..1.02).contains(&m), "packet / fluid makespan {m}");
}

/// What a run's numbers hide is said: timeouts for packets that were not lost (the DSF
/// incast with NSCC's 100 us timer: its packets wait in VOQs); `--nscc-base-rtt path` is
/// named in the model line, and a bad value exits 2.
#[test]
fn spurious_timeouts_and_nscc_base_rtt_are_said() {
    let csv = format!(
        "{}/../../examples/traffic/dsf-incast.csv",
        env!("CARGO_MANIFEST_DIR")
    );
    let run = |extra: &[&str]| {
        aifabric()
            .args(["traffic", "dsf-l1-zone", "--tm", &csv, "--gpus", "288"])
            .args(["--engine", "packet"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&["--nscc-base-rtt", "path"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("timeouts fired for packets that were not lost"),
        "{text}"
    );
    assert!(
        text.contains("each flow its own path's base RTT and window"),
        "{text}"
    );
    let o = run(&["--cc", "line-rate", "--rto-us", "10000"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.contains("not lost"), "{text}");
    let o = run(&["--nscc-base-rtt", "flow"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("network"));
}

#[test]
fn htsim_incast_under_the_preset_with_both_engines() {
    let o = aifabric()
        .args(["traffic", "htsim-k8", "--tm"])
        .arg(scenario("incast_8to1_128n_2MiB.cm"))
        .args(["--engine", "both", "--preset", "uec-htsim", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["engine"], "both");
    assert_eq!(v["packet"]["flows"], 8);
    assert_eq!(v["packet"]["unfinished"], 0);
    assert_eq!(v["packet"]["config"]["seed"], 13);
    assert_eq!(
        v["packet"]["config"]["lb"],
        serde_json::json!({"mixed": 128})
    );
    // 8 x 2 MiB through host 0's 100 Gb/s link: at least 1.34 ms for the last flow.
    let floor = 8.0 * 2_097_152.0 * 8.0 / 100e9;
    assert!(v["packet"]["makespan_s"].as_f64().unwrap() >= floor);
    assert!(v["flow"]["makespan_s"].as_f64().unwrap() >= floor * 0.999);
    assert!(v["ratios"]["max"].as_f64().unwrap() > 0.9);
    // The same run again: byte-identical JSON.
    let again = aifabric()
        .args(["traffic", "htsim-k8", "--tm"])
        .arg(scenario("incast_8to1_128n_2MiB.cm"))
        .args(["--engine", "both", "--preset", "uec-htsim", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.stdout, again.stdout);
}

#[test]
fn packet_table_names_the_model_and_counts_packets() {
    let o = aifabric()
        .args([
            "traffic",
            "htsim-k8",
            "--pattern",
            "permutation",
            "--gpus",
            "128",
            "--size",
            "256K",
            "--engine",
            "packet",
            "--lb",
            "ecmp",
            "--queue-bytes",
            "20000",
            "--drop-tail",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    for want in [
        "packet engine",
        "lb ecmp",
        "drop-tail",
        "Packets:",
        "Queues per tier",
        "M events per CPU second",
    ] {
        assert!(text.contains(want), "missing {want:?}:\n{text}");
    }
}

#[test]
fn packet_flags_without_the_packet_engine_and_bad_values_exit_2() {
    for (args, hint) in [
        (vec!["--preset", "uec-htsim"], "--engine packet"),
        (
            vec!["--engine", "packet", "--preset", "ns3"],
            "presets are uec-htsim",
        ),
        (vec!["--engine", "packet", "--lb", "ucmp"], "spray:N"),
        (
            vec!["--engine", "packet", "--cc", "dctcp"],
            "nscc, dcqcn, dcqcn-htsim or line-rate",
        ),
        (
            vec!["--engine", "packet", "--pfc", "1:2"],
            "XON at most XOFF",
        ),
        (
            vec!["--engine", "packet", "--pfc", "on", "--pfc-headroom", "x"],
            "auto",
        ),
        (
            vec!["--engine", "packet", "--pfc-headroom", "auto"],
            "PFC is off",
        ),
        (
            vec!["--engine", "packet", "--preset", "roce", "--trim"],
            "nothing is trimmed",
        ),
        (
            vec!["--engine", "packet", "--admission", "0:2"],
            "CHUNK:WINDOW",
        ),
        (vec!["--engine", "packet", "--ecn", "1:2:3"], "PMAX"),
        (
            vec!["--engine", "packet", "--dsf-cell-bytes", "0"],
            "at least 1",
        ),
        (vec!["--pfc", "on"], "packet"),
        (vec!["--engine", "packet", "--ecn", "9"], "MIN:MAX"),
        (
            vec!["--engine", "packet", "--ecn", "900:100"],
            "below the second",
        ),
        (vec!["--engine", "packet", "--mtu", "40"], "header"),
        (vec!["--engine", "dsf", "--lb", "ecmp"], "possible values"),
        (vec!["--engine", "packet", "--size", "1T"], "over the limit"),
        (
            vec!["--engine", "packet", "--partitions", "0"],
            "give 1 to 64",
        ),
        (
            vec![
                "--engine",
                "packet",
                "--partitions",
                "2",
                "--preset",
                "roce",
            ],
            "admission",
        ),
        (
            vec!["--engine", "hybrid", "--partitions", "2"],
            "--partitions 1",
        ),
        (
            vec!["--engine", "hybrid", "--dsf-cell-bytes", "512"],
            "whole packets",
        ),
    ] {
        let o = aifabric()
            .args([
                "traffic",
                "htsim-k8",
                "--pattern",
                "permutation",
                "--gpus",
                "16",
            ])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(hint), "{args:?}: {err}");
    }
}

#[test]
fn dsf_zones_run_with_credits_and_cells() {
    // `engine`'s run of a permutation across the zone: its text or its JSON.
    let run_on = |engine: &[&str], json: bool| {
        let mut c = aifabric();
        c.args(["traffic", "dsf-l1-zone", "--pattern", "permutation"])
            .args(["--gpus", "64", "--placement", "spread", "--size", "256K"])
            .args(["--preset", "roce"])
            .args(engine);
        if json {
            c.arg("--json");
        }
        let o = c.output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        o.stdout
    };
    let run = |json| run_on(&["--engine", "packet"], json);
    let text = String::from_utf8(run(false)).unwrap();
    for want in [
        "DSF:",
        "credits granted",
        "cells of 256 B",
        "VOQs at rdsw",
        "rdsw-fdsw",
    ] {
        assert!(text.contains(want), "missing {want:?}:\n{text}");
    }
    let v: Value = serde_json::from_slice(&run(true)).unwrap();
    let d = &v["packet"]["dsf"];
    assert!(d["credits_granted_bytes"].as_u64().unwrap() > 0, "{d}");
    assert_eq!(d["credits_granted_bytes"], d["sent_bytes"]);
    assert_eq!(d["cells_sent"], d["cells_reassembled"]);
    let cells = d["cells_sent"].as_u64().unwrap();
    // The hybrid crosses the fabric in whole packets, one cell each, and says so.
    let hybrid = run_on(&["--engine", "hybrid", "--admission", "off"], true);
    let v: Value = serde_json::from_slice(&hybrid).unwrap();
    let h = &v["packet"]["dsf"];
    let whole = h["cells_sent"].as_u64().unwrap();
    assert!(
        whole > 0 && whole * 4 < cells,
        "{whole} whole packets, {cells} cells"
    );
    let notes = v["notes"].to_string();
    let said = notes
        .split(" packets crossed a DSF fabric whole")
        .next()
        .and_then(|s| s.rsplit("hybrid: ").next())
        .map(|n| n.replace(',', ""));
    assert_eq!(said, Some(whole.to_string()), "{notes}");
}

#[test]
fn roce_preset_reports_pfc_and_admission() {
    let run = |extra: &[&str]| {
        let o = aifabric()
            .args([
                "traffic",
                "htsim-k8",
                "--pattern",
                "incast:12",
                "--gpus",
                "128",
            ])
            .args(["--size", "1M", "--engine", "packet", "--preset", "roce"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    let text = String::from_utf8(run(&[])).unwrap();
    assert!(text.contains("lossless data class (PFC"), "{text}");
    assert!(text.contains("receiver-driven admission"), "{text}");
    assert!(text.contains("\nPFC: "), "{text}");
    let on: Value = serde_json::from_slice(&run(&["--json"])).unwrap();
    let off: Value = serde_json::from_slice(&run(&["--json", "--admission", "off"])).unwrap();
    for v in [&on, &off] {
        assert_eq!(v["packet"]["counters"]["dropped"], 0);
        assert_eq!(v["packet"]["pfc"]["headroom_drops"], 0);
    }
    // 12 flows of 1 MiB in 512 KiB chunks: 24 clear-to-sends; none without admission.
    assert_eq!(on["packet"]["counters"]["cts"], 24);
    assert_eq!(off["packet"]["counters"]["cts"], 0);
    // Admission keeps the incast off the receiver's switch: fewer pauses.
    let pauses = |v: &Value| v["packet"]["pfc"]["pauses"].as_u64().unwrap();
    assert!(
        pauses(&on) < pauses(&off),
        "{} vs {}",
        pauses(&on),
        pauses(&off)
    );
    // The hints under the PFC line: on 10 us links the paused ports' XON (180 KB) is below
    // a round trip's bytes (12.5 B/ns x 22 us = 275 KB); headroom given too small names
    // the drops and the short links, and not the XON (the drops are the cause then).
    let slow = ["--admission", "off", "--link-latency-us", "10"];
    let text = String::from_utf8(run(&slow)).unwrap();
    assert!(
        text.contains("paused ports have XON (180000 B) below"),
        "{text}"
    );
    assert!(!text.contains("dropped, each resent"), "{text}");
    let text = String::from_utf8(run(&[&slow[..], &["--pfc-headroom", "8320"]].concat())).unwrap();
    assert!(text.contains("found their link's headroom full"), "{text}");
    assert!(
        text.contains("links hold less headroom than a PAUSE needs"),
        "{text}"
    );
    assert!(!text.contains("paused ports have XON"), "{text}");
}

#[test]
fn compare_fabrics_sets_three_zones_and_the_bag_links_side_by_side() {
    let o = aifabric()
        .args(["compare-fabrics", "--quick", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["gpus"], 288);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 9, "3 workloads x 3 fabrics");
    for r in runs {
        let fabric = r["fabric"].as_str().unwrap();
        let x = &r["result"];
        if x.is_null() {
            // Only a fabric the packet engine cannot run yet may be missing, with the reason.
            assert_eq!(fabric, "dsf", "{r}");
            assert!(r["error"].as_str().unwrap().contains("DSF"), "{r}");
            continue;
        }
        // Every fabric here is lossless: nothing dropped, every flow done.
        assert_eq!(x["counters"]["dropped"], 0, "{r}");
        assert_eq!(x["unfinished"], 0, "{r}");
    }
    // The incast's floor: 16 x 256 KiB through the receiver's 400 Gb/s link.
    let floor = 16.0 * 262_144.0 * 8.0 / 400e9;
    for r in runs
        .iter()
        .filter(|r| r["workload"].as_str().unwrap().starts_with("incast"))
    {
        if let Some(m) = r["result"]["makespan_s"].as_f64() {
            assert!(m >= floor, "{r}");
        }
    }
    // BAG links: 1, 10, 60 km x deep, shallow; a longer link never keeps more throughput,
    // and at 60 km the shallow BAG's headroom overflows where the deep one's does not.
    let bag = v["bag"].as_array().unwrap();
    assert_eq!(bag.len(), 6);
    let kept = |km: u64, buffer: &str| {
        let b = bag
            .iter()
            .find(|b| b["km"] == km && b["buffer"] == buffer)
            .unwrap();
        (
            b["throughput_kept"].as_f64().unwrap(),
            b["result"]["pfc"]["headroom_drops"].as_u64().unwrap(),
        )
    };
    for buffer in ["deep", "shallow"] {
        assert!(
            kept(1, buffer).0 >= kept(10, buffer).0 && kept(10, buffer).0 >= kept(60, buffer).0
        );
    }
    assert_eq!(kept(60, "deep").1, 0);
    assert!(kept(60, "shallow").1 > 0);
    assert!(kept(60, "shallow").0 < kept(60, "deep").0);
    // The cause is named: only the shallow 60 km BAG is short of headroom, and the deep
    // one's loss is XON below the long links' round trip: 800 Gb/s (100 B/ns) x (2 x (300 us
    // of cable + 1 us through the switch) + 1 us response) = 60.3 MB.
    let pfc = |km: u64, buffer: &str| {
        bag.iter()
            .find(|b| b["km"] == km && b["buffer"] == buffer)
            .unwrap()["result"]["pfc"]
            .clone()
    };
    for km in [1, 10, 60] {
        assert_eq!(pfc(km, "deep")["ports_short_of_headroom"], 0);
    }
    let short = pfc(60, "shallow");
    assert!(
        short["ports_short_of_headroom"].as_u64().unwrap() > 0,
        "{short}"
    );
    assert!(
        short["min_headroom_share"].as_f64().unwrap() < 1.0,
        "{short}"
    );
    let deep = pfc(60, "deep");
    assert!(
        deep["paused_ports_xon_below_round_trip"].as_u64().unwrap() > 0,
        "{deep}"
    );
    let rt = deep["max_round_trip_bytes"].as_u64().unwrap();
    assert_eq!(rt, 100 * (2 * (300_000 + 1_000) + 1_000));
    // The text output names the three fabrics and the BAG table.
    let o = aifabric()
        .args(["compare-fabrics", "--quick", "--no-bag"])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("  nsf ") && text.contains("  roce ") && text.contains("  dsf "),
        "{text}"
    );
    assert!(!text.contains("BAG-to-BAG"), "{text}");
    // With the BAG table, the notes say why rows agree and where throughput is lost
    // without a drop; thresholds raised for the distance keep every case near the ideal.
    let o = aifabric()
        .args(["compare-fabrics", "--quick"])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("at 1 and 10 km deep and shallow are alike"),
        "{text}"
    );
    assert!(text.contains("throughput lost without a drop"), "{text}");
    assert!(
        text.contains("60 km shallow: 31% of the headroom"),
        "{text}"
    );
    let o = aifabric()
        .args([
            "compare-fabrics",
            "--quick",
            "--json",
            "--bag-pfc",
            "8000000:6000000",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for b in v["bag"].as_array().unwrap() {
        assert!(b["throughput_kept"].as_f64().unwrap() > 0.98, "{b}");
        assert_eq!(b["result"]["pfc"]["headroom_drops"], 0, "{b}");
    }
    let o = aifabric()
        .args(["compare-fabrics", "--bag-pfc", "5:6"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("XON at most XOFF"));
    let o = aifabric()
        .args(["compare-fabrics", "--bag-pfc", "1000:0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--bag-pfc 1000:0: XOFF must hold"));
}

/// `--engine hybrid`: the packet engine jumping over steady states says what it skipped (in
/// the text and the JSON), agrees with the packet engine on the same matrix, and refuses
/// what it cannot fast-forward (receiver-driven admission) with the way out.
#[test]
fn the_hybrid_engine_says_what_it_skipped_and_agrees_with_packet() {
    let args = [
        "traffic",
        "htsim-k8",
        "--pattern",
        "permutation",
        "--gpus",
        "128",
        "--size",
        "16M",
        "--preset",
        "uec-htsim",
    ];
    let run = |engine: &str, json: bool| {
        let mut c = aifabric();
        c.args(args).args(["--engine", engine]);
        if json {
            c.arg("--json");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let text = run("hybrid", false);
    for want in [
        "packet engine fast-forwarding steady states (hybrid)",
        "hybrid: 1 steady state fast-forwarded",
        "data packets counted at their flow's measured rate",
        "  hybrid ",
    ] {
        assert!(text.contains(want), "missing {want:?}:\n{text}");
    }
    let h: Value = serde_json::from_str(&run("hybrid", true)).unwrap();
    let p: Value = serde_json::from_str(&run("packet", true)).unwrap();
    assert_eq!(h["engine"], "hybrid");
    let stats = &h["packet"]["hybrid"];
    assert!(stats["skipped_packets"].as_u64().unwrap() > 0, "{stats}");
    assert_eq!(
        stats["skipped_packets"].as_u64().unwrap() + stats["simulated_packets"].as_u64().unwrap(),
        p["packet"]["counters"]["data_new"].as_u64().unwrap()
    );
    assert!(
        p["packet"].get("hybrid").is_none(),
        "packet runs do not grow the key"
    );
    for k in ["makespan_s", "p50_s", "p99_s"] {
        let at = |v: &Value| {
            let r = &v["packet"];
            r.get(k)
                .or_else(|| r["fct"].get(k))
                .unwrap()
                .as_f64()
                .unwrap()
        };
        let e = at(&h) / at(&p) - 1.0;
        assert!(e.abs() <= 0.05, "{k}: hybrid off by {e}");
    }
    let o = aifabric()
        .args(&args[..args.len() - 2])
        .args(["--engine", "hybrid", "--preset", "roce"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("admission") && err.contains("--admission off"),
        "{err}"
    );
}

/// `traffic --engine hybrid --cut`: under ECMP the critical flows, samples of the populous
/// fluid levels and their links' others run packet by packet, the rest at their fluid
/// times scaled as their level's samples fared; said in the note and in `cut`, against the
/// whole packet run on the same matrix: the makespan within 5%, the tail within 7% and the
/// median within 8% (two levels of 128 flows are sampled, the others keep the fluid's). An incast keeps every flow (all critical);
/// what cannot be cut is refused with the way out.
#[test]
fn the_hybrid_cut_runs_a_matrix_s_critical_flows_and_times_the_rest_in_the_fluid() {
    let args = [
        "traffic",
        "htsim-k8",
        "--pattern",
        "permutation",
        "--gpus",
        "128",
        "--size",
        "4M",
        "--preset",
        "uec-htsim",
        "--lb",
        "ecmp",
        "--json",
    ];
    let run = |extra: &[&str]| -> Value {
        let o = aifabric().args(args).args(extra).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let p = run(&["--engine", "packet"]);
    let h = run(&["--engine", "hybrid", "--cut"]);
    let cut = &h["cut"];
    let (sim, fluid) = (
        cut["flows_simulated"].as_u64().unwrap(),
        cut["flows_fluid"].as_u64().unwrap(),
    );
    assert!(sim > 0 && fluid > 0, "{cut}");
    assert!(cut["flows_sampled"].as_u64().unwrap() > 0, "{cut}");
    assert_eq!(sim + fluid, 128);
    assert_eq!(h["packet"]["flows"], 128);
    assert_eq!(h["packet"]["bytes"], p["packet"]["bytes"]);
    let at = |v: &Value, k: &str| {
        let r = &v["packet"];
        r.get(k)
            .or_else(|| r["fct"].get(k))
            .unwrap()
            .as_f64()
            .unwrap()
    };
    for (k, within) in [("makespan_s", 0.05), ("p99_s", 0.07), ("p50_s", 0.08)] {
        let e = at(&h, k) / at(&p, k) - 1.0;
        assert!(e.abs() <= within, "{k}: the cut is off by {e}");
    }
    assert!(
        run(&["--engine", "hybrid"]).get("cut").is_none(),
        "no cut unless asked"
    );
    // A run stopped before any 4 MiB flow can end (335 us at line rate): every flow is
    // unfinished, those the fluid timed too.
    let stopped = run(&["--engine", "hybrid", "--cut", "--end-us", "100"]);
    assert_eq!(
        stopped["packet"]["unfinished"], 128,
        "{}",
        stopped["packet"]
    );
    // Every sender of an incast shares the receiver's link: all critical, none left out.
    let o = aifabric()
        .args([
            "traffic",
            "htsim-k8",
            "--pattern",
            "incast:16",
            "--gpus",
            "17",
        ])
        .args([
            "--size", "1M", "--lb", "ecmp", "--engine", "hybrid", "--cut", "--json",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cut"]["flows_fluid"], 0);
    assert_eq!(v["cut"]["flows_simulated"], 16);
    // What cannot be cut.
    for (extra, want) in [
        (&["--engine", "packet", "--cut"][..], "add --engine hybrid"),
        (
            &["--engine", "hybrid", "--cut", "--lb", "spray:8"],
            "--lb ecmp",
        ),
    ] {
        let o = aifabric()
            .args(&args[..args.len() - 3])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{err}");
    }
    let o = aifabric()
        .args([
            "traffic",
            "htsim-k8",
            "--pattern",
            "ring-allreduce",
            "--gpus",
            "16",
        ])
        .args(["--lb", "ecmp", "--engine", "hybrid", "--cut"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("from one start"));
}

/// `collective` and `job` at packet level: each distinct phase simulated once (a ring is
/// one phase, its 2(n - 1) steps reusing it), said in a note and in `packet`; the same
/// bytes on one thread as on two; `both` refused with the way out; the flow engine's JSON
/// without a `packet` key.
#[test]
fn collectives_and_jobs_time_their_phases_packet_by_packet() {
    let collective = [
        "collective",
        "htsim-k8",
        "--op",
        "all_reduce",
        "--algo",
        "ring",
        "--proto",
        "simple",
        "--gpus",
        "32",
        "--sizes",
        "4M",
        "--scale-up",
        "1",
    ];
    let json = |args: &[&str], extra: &[&str], threads: &str| {
        let o = aifabric()
            .args(args)
            .args(extra)
            .arg("--json")
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let packet = ["--engine", "packet", "--preset", "uec-htsim"];
    let two = json(&collective, &packet, "2");
    assert_eq!(
        two,
        json(&collective, &packet, "1"),
        "thread count changed the bytes"
    );
    let p: Value = serde_json::from_str(&two).unwrap();
    assert_eq!(p["packet"]["engine"], "packet");
    assert_eq!(p["packet"]["phases_simulated"], 1, "{}", p["packet"]);
    assert_eq!(p["packet"]["flows"], 32, "one flow per rank");
    let note = p["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["about"] == "packet_phases")
        .expect("a note says what the packet engine ran");
    assert!(note["text"].as_str().unwrap().contains("1 distinct phase"));
    // The fluid on the same load balancing and latencies: the packet engine's headers,
    // ramps and queues only add.
    let flow: Value = serde_json::from_str(&json(
        &collective,
        &["--lb", "spray", "--seed", "13", "--switch-latency-us", "0"],
        "2",
    ))
    .unwrap();
    assert!(
        flow.get("packet").is_none(),
        "the flow engine has no packet key"
    );
    let (tp, tf) = (
        p["rows"][0]["time_us"].as_f64().unwrap(),
        flow["rows"][0]["time_us"].as_f64().unwrap(),
    );
    assert!(tp > tf && tp < 2.0 * tf, "packet {tp} us, flow {tf} us");

    let (code, _, err) = run(&[&collective[..], &["--engine", "both"]].concat());
    assert_eq!(code, Some(2));
    assert!(
        err.contains("run it once with flow and once with packet"),
        "{err}"
    );
    // An all-to-all over 16,384 ranks is 16,383 distinct phases: refused with the estimate
    // before the fluid calibrates anything.
    let (code, _, err) = run(&[
        "collective",
        "llama3-24k",
        "--op",
        "all_to_all",
        "--gpus",
        "16384",
        "--sizes",
        "1G",
        "--engine",
        "packet",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("268,419,072 transfers") && err.contains("over the limit of"),
        "{err}"
    );

    let small = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/jobs/small-8.yaml");
    let job = ["job", "htsim-k8", "--job", small];
    let h: Value = serde_json::from_str(&json(
        &job,
        &["--engine", "hybrid", "--preset", "uec-htsim"],
        "2",
    ))
    .unwrap();
    let stats = &h["packet"];
    assert_eq!(stats["engine"], "hybrid");
    let simulated = stats["phases_simulated"].as_u64().unwrap();
    assert!(
        simulated >= 1 && stats["phases_timed"].as_u64().unwrap() > simulated,
        "{stats}"
    );
    assert!(
        stats["skipped_s"].as_f64().unwrap() > 0.0,
        "the DP phases are long: {stats}"
    );
    assert!(h["result"]["step_s"].as_f64().unwrap() > 0.0);

    // Under ecmp the hybrid cuts each phase to its critical flows and their links' others:
    // 64 GPUs spread over htsim-k16, whose DP rings collide on the spines.
    let small64 = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/jobs/small-64.yaml"
    );
    let job = [
        "job",
        "htsim-k16",
        "--job",
        small64,
        "--placement",
        "spread",
        "--engine",
        "hybrid",
        "--preset",
        "uec-htsim",
        "--lb",
        "ecmp",
    ];
    let two = json(&job, &[], "2");
    assert_eq!(two, json(&job, &[], "1"), "thread count changed the bytes");
    let h: Value = serde_json::from_str(&two).unwrap();
    let stats = &h["packet"];
    let (kept, left, critical) = (
        stats["flows"].as_u64().unwrap(),
        stats["flows_left_fluid"].as_u64().unwrap(),
        stats["flows_critical"].as_u64().unwrap(),
    );
    assert!(
        left > 0 && critical > 0 && critical <= kept,
        "nothing cut: {stats}"
    );
    let note = h["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["about"] == "packet_phases")
        .expect("a note says what the hybrid ran");
    let text = note["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("{left} flows left to the fluid"))
            && text.contains(&format!("{critical} critical flows")),
        "{text}"
    );

    // Inside a DSF zone an even collective's flows are alike (every one critical in the
    // fluid): the slowest few run and stand for the others, which the note and the JSON
    // count.
    let dsf = [
        "collective",
        "dsf-l1-zone",
        "--op",
        "all_reduce",
        "--gpus",
        "512",
        "--sizes",
        "16M",
        "--engine",
        "hybrid",
        "--preset",
        "uec-htsim",
        "--lb",
        "ecmp",
    ];
    let h: Value = serde_json::from_str(&json(&dsf, &[], "2")).unwrap();
    let stats = &h["packet"];
    let (kept, left, alike) = (
        stats["flows"].as_u64().unwrap(),
        stats["flows_left_fluid"].as_u64().unwrap(),
        stats["flows_critical_fluid"].as_u64().unwrap(),
    );
    assert!(alike > 0 && alike <= left && kept < left, "{stats}");
    // As the notes write counts: 1,736.
    let commas = |n: u64| {
        let d = n.to_string();
        let mut out = String::new();
        for (i, c) in d.chars().enumerate() {
            if i > 0 && (d.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let (left_s, alike_s) = (commas(left), commas(alike));
    let text = h["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["about"] == "packet_phases")
        .and_then(|n| n["text"].as_str())
        .expect("a note says what the hybrid ran");
    assert!(
        text.contains(&format!(
            "{left_s} flows left to the fluid: {alike_s} critical ("
        )) && text.contains("stand for them"),
        "{text}"
    );
}

/// `--draw-seed S`: another sample of the same network (the setting in the JSON, other
/// completion times, the same again for the same S), close to the seed's own draws; a
/// packet-engine flag, so refused with the flow engine.
#[test]
fn a_draw_seed_is_another_sample_of_the_same_network() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "traffic",
            "htsim-k8",
            "--pattern",
            "permutation",
            "--gpus",
            "128",
            "--size",
            "512K",
            "--engine",
            "packet",
            "--preset",
            "uec-htsim",
            "--lb",
            "ecmp",
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = aifabric().args(&args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    let own = run(&[]);
    let drawn = run(&["--draw-seed", "2"]);
    assert_eq!(drawn, run(&["--draw-seed", "2"]));
    assert_ne!(own, drawn);
    let (own, drawn): (Value, Value) = (
        serde_json::from_slice(&own).unwrap(),
        serde_json::from_slice(&drawn).unwrap(),
    );
    assert_eq!(drawn["packet"]["config"]["draw_seed"], 2);
    assert!(own["packet"]["config"].get("draw_seed").is_none());
    assert_eq!(
        own["packet"]["config"]["seed"],
        drawn["packet"]["config"]["seed"]
    );
    let p50 = |v: &Value| v["packet"]["fct"]["p50_s"].as_f64().unwrap();
    assert!((p50(&drawn) / p50(&own) - 1.0).abs() < 0.1);
    let o = aifabric()
        .args([
            "traffic",
            "htsim-k8",
            "--pattern",
            "permutation",
            "--gpus",
            "16",
            "--draw-seed",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--engine packet"), "{err}");
}

/// `--partitions 2`: the same bytes with one thread and two, the setting in the JSON and
/// the note, close to one engine's times; a collective's phases alike; a trigger within a
/// part runs, one across parts is refused with the reason.
#[test]
fn partitions_run_side_by_side_and_say_so() {
    let run = |parts: &str, threads: &str| {
        let o = aifabric()
            .env("RAYON_NUM_THREADS", threads)
            .args([
                "traffic",
                "htsim-k8",
                "--pattern",
                "permutation",
                "--gpus",
                "128",
                "--size",
                "512K",
                "--engine",
                "packet",
                "--preset",
                "uec-htsim",
                "--partitions",
                parts,
                "--json",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    let two = run("2", "2");
    assert_eq!(two, run("2", "1"), "the same bytes at any thread count");
    let v: Value = serde_json::from_slice(&two).unwrap();
    let one: Value = serde_json::from_slice(&run("1", "2")).unwrap();
    assert_eq!(v["packet"]["config"]["partitions"], 2);
    assert!(one["packet"]["config"].get("partitions").is_none());
    let p50 = |v: &Value| v["packet"]["fct"]["p50_s"].as_f64().unwrap();
    assert!((p50(&v) / p50(&one) - 1.0).abs() < 0.02);
    let notes = v["notes"].to_string();
    assert!(notes.contains("2 parts"), "{notes}");
    // A collective at packet level runs its phases as matrices of their own: cut too.
    let collective = |threads: &str| {
        let o = aifabric()
            .env("RAYON_NUM_THREADS", threads)
            .args([
                "collective",
                "htsim-k8",
                "--op",
                "all_reduce",
                "--gpus",
                "64",
                "--sizes",
                "4M",
                "--scale-up",
                "1",
                "--engine",
                "packet",
                "--partitions",
                "2",
                "--json",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    assert_eq!(collective("1"), collective("2"));
    // A trigger acts within a part: host 127's flow waiting on what host 127 received runs;
    // one waiting on host 0's last ACK (host 0 in the other part) is refused with its id.
    let d = tempfile::tempdir().unwrap();
    let chain = |on: &str| {
        let cm = d.path().join(format!("{on}.cm"));
        std::fs::write(
            &cm,
            format!(
                "Nodes 128\nConnections 2\nTriggers 1\n0->127 id 1 start 0 size 100000 \
                 {on} 1\n127->0 id 2 trigger 1 size 100000\ntrigger id 1 oneshot\n"
            ),
        )
        .unwrap();
        aifabric()
            .args(["traffic", "htsim-k8", "--tm"])
            .arg(&cm)
            .args(["--engine", "packet", "--partitions", "2", "--json"])
            .output()
            .unwrap()
    };
    let o = chain("recv_done_trigger");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["packet"]["unfinished"], 0);
    assert_eq!(v["packet"]["partitions"]["parts"], 2);
    let o = chain("send_done_trigger");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("trigger 1 would act across parts") && err.contains("--partitions 1"),
        "{err}"
    );
}
