//! `aifabric traffic --engine packet|both`: the packet engine from the command line.

use assert_cmd::Command;
use serde_json::Value;

fn aifabric() -> Command {
    Command::cargo_bin("aifabric").unwrap()
}

fn scenario(file: &str) -> String {
    format!(
        "{}/../packet/scenarios/htsim-uec/{file}",
        env!("CARGO_MANIFEST_DIR")
    )
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
        serde_json::json!({"spray": 128})
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
        "M events/s",
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
            vec!["--engine", "packet", "--cc", "reno"],
            "nscc, dcqcn or line-rate",
        ),
        (vec!["--engine", "packet", "--ecn", "9"], "MIN:MAX"),
        (
            vec!["--engine", "packet", "--ecn", "900:100"],
            "below the second",
        ),
        (vec!["--engine", "packet", "--mtu", "40"], "header"),
        (vec!["--engine", "dsf", "--lb", "ecmp"], "possible values"),
        (vec!["--engine", "packet", "--size", "1T"], "over the limit"),
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
    let run = |json: bool| {
        let mut c = aifabric();
        c.args([
            "traffic",
            "dsf-l1-zone",
            "--pattern",
            "permutation",
            "--gpus",
            "64",
            "--placement",
            "spread",
            "--size",
            "256K",
            "--engine",
            "packet",
            "--preset",
            "roce",
        ]);
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
}
