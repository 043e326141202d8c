//! End-to-end tests of the `aifabric` binary.

use crate::aifabric;
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let out = aifabric().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn specs_lists_every_builtin() {
    let v = json(&["specs", "--json"]);
    assert_eq!(v["schema_version"], 2, "every --json output is versioned");
    let names: Vec<&str> = v["specs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for n in [
        "prometheus",
        "dsf-l2-zone",
        "dsf-l1-zone",
        "nsf-l2",
        "llama3-24k",
    ] {
        assert!(names.contains(&n), "{n} missing");
    }
}

#[test]
fn capacity_json_contract() {
    let v = json(&["capacity", "dsf-l2-zone", "--json"]);
    for key in [
        "gpus",
        "switches",
        "links",
        "power_mw",
        "tiers",
        "region_pairs",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["gpus"], 18_432);
    let t = v["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "l2_to_bag")
        .unwrap();
    for key in ["name", "scope", "down_gbps", "up_gbps", "oversubscription"] {
        assert!(t.get(key).is_some(), "tier missing {key}");
    }
    assert_eq!(
        format!("{:.2}", t["oversubscription"].as_f64().unwrap()),
        "4.50"
    );
    let v = json(&["capacity", "prometheus", "--json"]);
    let p = &v["region_pairs"][0];
    for key in ["a", "b", "capacity_tbps"] {
        assert!(p.get(key).is_some(), "region pair missing {key}");
    }
}

#[test]
fn capacity_report_golden() {
    // The whole report of the small built-in, pinned: any change must be reviewed.
    let v = json(&["capacity", "dsf-l1-zone", "--json"]);
    insta::assert_json_snapshot!("capacity_dsf_l1_zone", v);
}

#[test]
fn capacity_human_table() {
    let out = aifabric().args(["capacity", "nsf-l2"]).output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("l2_to_bag"));
    assert!(s.contains("4.98:1"));
}

#[test]
fn build_writes_the_model_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("model.json");
    let v = json(&[
        "build",
        "dsf-l1-zone",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(v["gpus"], 4_608);
    let model: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(model["devices"].as_array().unwrap().len(), 4_608 + 184);
    assert_eq!(
        model["links"].as_array().unwrap().len(),
        v["links"].as_u64().unwrap() as usize
    );
    assert_eq!(model["devices"][0]["name"], "lab.dc1.l1.rdsw0");
    // Nothing but the output is left in the directory (the temp file was renamed).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn build_to_unwritable_path_is_a_runtime_failure() {
    aifabric()
        .args(["build", "dsf-l1-zone", "--out", "/nonexistent-dir/x.json"])
        .assert()
        .code(1);
}

#[test]
fn validate_accepts_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, aifabric_spec_text("dsf-l1-zone")).unwrap();
    let out = aifabric()
        .args(["validate", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("valid (4608 GPUs"));
}

fn aifabric_spec_text(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../spec/specs/{name}.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn bad_spec_exits_2_with_location_and_hint() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.yaml");
    let text = aifabric_spec_text("dsf-l2-zone").replace("planes: 16", "plnes: 16");
    std::fs::write(&p, &text).unwrap();
    let out = aifabric()
        .args(["capacity", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    let line = text.lines().position(|l| l.contains("plnes")).unwrap() + 1;
    assert!(err.contains(&format!("bad.yaml:{line}:")), "{err}");
    assert!(err.contains("did you mean `planes`?"), "{err}");
}

#[test]
fn bad_arguments_exit_2() {
    aifabric().args(["capacity"]).assert().code(2);
    // A protocol NCCL does not have; NVLS across scale-up domains; PAT with 8 GPUs per
    // domain; a protocol NVLS does not run: each a clear refusal, exit 2.
    for (args, says) in [
        (&["--gpus", "16", "--proto", "ll64"][..], "unknown protocol"),
        (&["--gpus", "16", "--algo", "nvls"][..], "NVSwitch domain"),
        (
            &["--gpus", "16", "--op", "all_gather", "--algo", "pat"][..],
            "one GPU per domain",
        ),
        (
            &["--gpus", "8", "--algo", "nvls", "--proto", "ll"][..],
            "nvls runs simple",
        ),
    ] {
        let out = aifabric()
            .args(["collective", "llama3-24k", "--sizes", "1M"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    aifabric()
        .args(["capacity", "no-such-spec"])
        .assert()
        .code(2);
}

#[test]
fn output_is_identical_whatever_the_thread_count() {
    let run = |threads: &str| {
        let out = aifabric()
            .env("RAYON_NUM_THREADS", threads)
            .args(["capacity", "nsf-l2", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    assert_eq!(run("1"), run("2"));
}

#[test]
fn capacity_takes_a_scenario() {
    let v = json(&[
        "capacity",
        "prometheus",
        "--json",
        "--drain",
        "east.bag.plane3,east.bag.plane4",
    ]);
    let per_dir = v["region_pairs"][0]["capacity_tbps_per_direction"]
        .as_f64()
        .unwrap();
    assert!((per_dir - 8_192.0 * 14.0 / 16.0).abs() < 1e-6);
    let out = aifabric()
        .args(["capacity", "dsf-l2-zone", "--fail", "east.nowhere"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("matches no device"));
}

#[test]
fn routes_shows_ucmp_weights_and_drains() {
    let dev = "east.dc1.nsf.rtsw0";
    let v = json(&[
        "routes",
        "nsf-l2",
        "--device",
        dev,
        "--prefix",
        "east.dc1.nsf.rack400",
        "--json",
    ]);
    let r = &v["routes"][0];
    assert_eq!(r["kind"], "bgp");
    assert_eq!(
        r["as_path"].as_array().unwrap().len(),
        4,
        "FTSW, STSW, FTSW, RTSW"
    );
    let hops = r["next_hops"].as_array().unwrap();
    assert_eq!(hops.len(), 8, "one FTSW per spine plane");
    // Eight equal next hops: one group entry each (an ECMP group), not 8 of 64.
    assert!(hops.iter().all(|h| h["slots"] == 1));
    assert_eq!(
        (r["group_entries"].as_u64(), r["group_size"].as_u64()),
        (Some(8), Some(64))
    );
    // Soft-drain the plane-0 FTSW of the rack's pod: the rack moves to the other 7 planes.
    let v = json(&[
        "routes",
        "nsf-l2",
        "--device",
        dev,
        "--prefix",
        "east.dc1.nsf.rack400",
        "--json",
        "--drain-soft",
        "east.dc1.nsf.ftsw0",
    ]);
    assert_eq!(v["routes"][0]["next_hops"].as_array().unwrap().len(), 7);
    // A rack switch is connected to its own prefix.
    let v = json(&[
        "routes", "nsf-l2", "--device", dev, "--prefix", dev, "--json",
    ]);
    assert_eq!(v["routes"][0]["kind"], "connected");
    // Unknown names are bad input.
    aifabric()
        .args(["routes", "nsf-l2", "--device", "nope"])
        .assert()
        .code(2);
}

#[test]
fn blackholes_under_unconditional_but_not_conditional_aggregation() {
    let cut = "east.dc1.nsf.ftsw528--east.dc1.nsf.stsw0";
    let v = json(&["blackholes", "nsf-l2", "--fail", cut, "--json"]);
    let b = v["blackholes"].as_array().unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!(b[0]["device"], "east.dc1.nsf.stsw0");
    assert_eq!(
        b[0]["prefixes"].as_array().unwrap().len(),
        6,
        "the 6 racks of pod 66"
    );
    let v = json(&[
        "blackholes",
        "nsf-l2",
        "--fail",
        cut,
        "--aggregation",
        "conditional",
        "--json",
    ]);
    assert!(v["blackholes"].as_array().unwrap().is_empty());
    assert_eq!(v["scopes"][0]["withdrawn"][0], "east.dc1.nsf.stsw0");
    aifabric()
        .args(["blackholes", "nsf-l2", "--aggregation", "sometimes"])
        .assert()
        .code(2);
}

#[test]
fn ibm_reports_reduced_pairs() {
    let v = json(&["ibm", "dsf-l1-zone", "--json"]);
    assert_eq!(v["zones"][0]["worst_fraction"], 1.0);
    let v = json(&[
        "ibm",
        "dsf-l1-zone",
        "--json",
        "--fail",
        "lab.dc1.l1.rdsw0--lab.dc1.l1.fdsw0",
    ]);
    // RDSW 0 lost 4 of its 160 lanes: it keeps 156/160 toward everyone, and everyone keeps
    // 156/160 toward it.
    let worst = v["zones"][0]["worst_fraction"].as_f64().unwrap();
    assert!((worst - 156.0 / 160.0).abs() < 1e-12, "{worst}");
}

#[test]
fn scenarios_can_be_yaml_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("what-if.yaml");
    std::fs::write(
        &p,
        "# lose two BAG planes in the east\nfail: [east.bag.plane3]\ndrain: [east.bag.plane4]\n",
    )
    .unwrap();
    let v = json(&[
        "capacity",
        "prometheus",
        "--json",
        "--scenario",
        p.to_str().unwrap(),
    ]);
    let per_dir = v["region_pairs"][0]["capacity_tbps_per_direction"]
        .as_f64()
        .unwrap();
    assert!((per_dir - 8_192.0 * 14.0 / 16.0).abs() < 1e-6);
    // A selector that matches nothing is located in the file.
    std::fs::write(&p, "fail:\n  - east.bag.plane3\n  - east.bag.plane99\n").unwrap();
    let out = aifabric()
        .args(["capacity", "prometheus", "--scenario", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("what-if.yaml:3:5"), "{err}");
    assert!(err.contains("east.bag.plane99"), "{err}");
    // Unknown keys get a suggestion.
    std::fs::write(&p, "drian: [east.bag.plane3]\n").unwrap();
    let out = aifabric()
        .args(["capacity", "prometheus", "--scenario", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("did you mean `drain`?"));
}

/// The README's YAML examples run as written.
#[test]
fn readme_examples_are_valid() {
    let readme =
        std::fs::read_to_string(format!("{}/../../README.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let blocks: Vec<&str> = readme
        .split("```yaml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.yaml");
    std::fs::write(
        &spec,
        blocks.iter().find(|b| b.contains("regions:")).unwrap(),
    )
    .unwrap();
    let scn = dir.path().join("scenario.yaml");
    std::fs::write(
        &scn,
        blocks.iter().find(|b| b.starts_with("fail:")).unwrap(),
    )
    .unwrap();
    aifabric()
        .args(["validate", spec.to_str().unwrap()])
        .assert()
        .success();
    aifabric()
        .args([
            "capacity",
            "prometheus",
            "--scenario",
            scn.to_str().unwrap(),
        ])
        .assert()
        .success();
}

#[test]
fn routes_from_fabric_nodes_and_gpus() {
    let v = json(&[
        "routes",
        "dsf-l1-zone",
        "--device",
        "lab.dc1.l1.fdsw0",
        "--prefix",
        "lab.dc1.l1.rack3",
        "--json",
    ]);
    assert_eq!(v["routes"][0]["kind"], "dsf_fabric");
    aifabric()
        .args(["routes", "dsf-l1-zone", "--device", "lab.dc1.l1.rack3.gpu0"])
        .assert()
        .code(2);
}

#[test]
fn failures_json_contract() {
    // Every BAG plane of Prometheus alone: 2 regions x 16 planes, planar inter-BAG.
    let v = json(&[
        "failures",
        "prometheus",
        "--sweep",
        "single:plane",
        "--json",
    ]);
    let s = &v["summary"];
    assert_eq!(s["scenarios"], 32);
    assert_eq!(s["draws"], 32);
    assert!(s["healthy_gbps"]["east<->west"].as_f64().unwrap() > 8.0e6);
    let recs = v["scenarios"].as_array().unwrap();
    assert_eq!(recs.len(), 32);
    for r in recs {
        for key in [
            "scenario",
            "srgs",
            "draws",
            "min_capacity_retained",
            "capacity_retained",
            "maxflow_retained",
            "gpus_disconnected",
            "blackholed_prefixes",
            "blackholed_share",
            "tiers",
        ] {
            assert!(r.get(key).is_some(), "record lacks {key}: {r}");
        }
        // Planar inter-BAG: one plane of 16 leaves 15/16 of east<->west.
        let x = r["capacity_retained"]["east<->west"].as_f64().unwrap();
        assert!((x - 15.0 / 16.0).abs() < 1e-9, "{x}");
    }
    // Sorted by impact.
    let keys: Vec<f64> = recs
        .iter()
        .map(|r| r["min_capacity_retained"].as_f64().unwrap())
        .collect();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn failures_table_and_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("failures.json");
    let o = aifabric()
        .args([
            "failures",
            "prometheus",
            "--sweep",
            "single:conduit",
            "--top",
            "3",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("Worst 3 scenarios"), "{text}");
    // A building's conduit isolates its 18,432 GPUs: its pairs read 0, and it ranks ahead
    // of the region conduit (0 too, but nothing isolated).
    assert!(
        text.lines().any(|l| l.contains("conduit:east.dc1")
            && l.contains("0.0000")
            && l.contains("18432")
            && l.contains("l2_to_bag 4.50->none up")),
        "{text}"
    );
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(file["summary"]["worst"], "conduit:east.dc1");
    let regions = file["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["scenario"] == "conduit:east--west")
        .expect("the region conduit");
    assert_eq!(regions["min_capacity_retained"], 0.0);
    assert_eq!(regions["gpus_isolated"], 0);
    insta::assert_json_snapshot!("failures_prometheus_conduits", file);
}

#[test]
fn failures_monte_carlo_is_reproducible() {
    let args = [
        "failures",
        "dsf-l2-zone",
        "--sweep",
        "montecarlo",
        "--samples",
        "300",
        "--seed",
        "9",
        "--probability",
        "plane=0.1,pd=0.001",
        "--json",
    ];
    let a = aifabric().args(args).output().unwrap();
    let b = aifabric().args(args).output().unwrap();
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert_eq!(a.stdout, b.stdout);
    let v: Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(v["summary"]["draws"], 300);
    // `--keep 2` lists the worst two of the same scenarios; the summary still counts all.
    let k = aifabric()
        .args(args)
        .args(["--keep", "2"])
        .output()
        .unwrap();
    assert!(k.status.success(), "{}", String::from_utf8_lossy(&k.stderr));
    let w: Value = serde_json::from_slice(&k.stdout).unwrap();
    assert_eq!(w["summary"]["scenarios"], v["summary"]["scenarios"]);
    assert_eq!(w["summary"]["scenarios_listed"], 2);
    assert_eq!(
        w["summary"]["capacity_retained"],
        v["summary"]["capacity_retained"]
    );
    assert_eq!(
        w["scenarios"].as_array().unwrap()[..],
        v["scenarios"].as_array().unwrap()[..2]
    );
    let text = aifabric()
        .args(&args[..args.len() - 1])
        .args(["--keep", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("the report lists the worst 2 in full"),
        "{text}"
    );
}

#[test]
fn failures_bad_arguments_exit_2_with_a_hint() {
    for (args, hint) in [
        (vec!["--sweep", "pairs"], "needs a class"),
        (vec!["--sweep", "single:rack"], "classes are"),
        (
            vec!["--sweep", "montecarlo", "--probability", "pd=2"],
            "between 0 and 1",
        ),
        (
            vec!["--sweep", "montecarlo", "--mtbf", "pd=5"],
            "MTBF_HOURS/MTTR_HOURS",
        ),
        (vec!["--sweep", "pairs:pd"], "montecarlo"),
        (vec!["--mitigations"], "--aggregation"),
        (vec!["--sweep", "everything"], "single, single:CLASS"),
        (vec!["--keep", "many"], "or `all`"),
    ] {
        let o = aifabric()
            .args(["failures", "prometheus"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(hint), "{args:?}: {err}");
    }
    let o = aifabric()
        .args(["failures", "dsf-l2-zone", "--compare-inter-bag"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("inter_bag"));
}

#[test]
fn collective_table_json_and_golden() {
    let o = aifabric()
        .args([
            "collective",
            "llama3-24k",
            "--gpus",
            "256",
            "--sizes",
            "1M:16M:4",
            "--lb",
            "eecmp:16",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("busbw GB/s") && text.contains("lb eecmp:16"),
        "{text}"
    );
    for size in ["1048576", "4194304", "16777216"] {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(size)),
            "{text}"
        );
    }
    assert!(text.contains("Busiest resources"), "{text}");
    let v = json(&[
        "collective",
        "dsf-l1-zone",
        "--gpus",
        "64",
        "--sizes",
        "1M:4M",
        "--json",
    ]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for r in rows {
        let (alg, bus) = (
            r["alg_bw_gbytes_per_s"].as_f64().unwrap(),
            r["bus_bw_gbytes_per_s"].as_f64().unwrap(),
        );
        // nccl-tests: busBW = algBW x 2 (n - 1) / n for all-reduce.
        assert!((bus - alg * 2.0 * 63.0 / 64.0).abs() < 1e-9 * bus, "{r}");
        let t = r["time_us"].as_f64().unwrap();
        let b = r["bytes"].as_f64().unwrap();
        assert!((alg - b / (t * 1e-6) / 1e9).abs() < 1e-9 * alg);
    }
    insta::assert_json_snapshot!("collective_dsf_l1_zone", v);
}

#[test]
fn collective_under_failure_reports_the_slowdown() {
    // Half the ATSWs of a 1:7 fabric gone: cross-zone rings slow down.
    let v = json(&[
        "collective",
        "llama3-24k",
        "--gpus",
        "6144",
        "--sizes",
        "256M",
        "--lb",
        "spray",
        "--fail",
        "east.dc1.llama.atsw1",
        "--json",
    ]);
    let s = v["rows"][0]["slowdown"].as_f64().unwrap();
    assert!(s >= 1.0, "{v}");
}

#[test]
fn collective_output_is_identical_whatever_the_thread_count() {
    let run = |threads: &str| {
        let o = aifabric()
            .env("RAYON_NUM_THREADS", threads)
            .args([
                "collective",
                "llama3-24k",
                "--gpus",
                "512",
                "--op",
                "all_to_all",
                "--placement",
                "fragmented:5",
                "--sizes",
                "1M:4M",
                "--json",
            ])
            .output()
            .unwrap();
        assert!(o.status.success());
        o.stdout
    };
    assert_eq!(run("1"), run("2"));
}

fn job_file() -> String {
    format!(
        "{}/../../examples/jobs/llama3-405b-16k.yaml",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn job_breakdown_and_slowdown() {
    let v = json(&["job", "prometheus", "--job", &job_file(), "--json"]);
    let r = &v["result"];
    let parts = r["compute_s"].as_f64().unwrap()
        + r["bubble_s"].as_f64().unwrap()
        + r["exposed_comm_s"].as_f64().unwrap();
    assert!((r["step_s"].as_f64().unwrap() - parts).abs() < 1e-9);
    let names: Vec<&str> = r["comms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "tp all_reduce",
            "pp send_recv",
            "dp reduce_scatter",
            "dp all_gather"
        ]
    );
    // Spread over buildings, a BAG plane down: slower or equal, and said so.
    let o = aifabric()
        .args([
            "job",
            "prometheus",
            "--job",
            &job_file(),
            "--placement",
            "spread",
        ])
        .args(["--fail", "plane:east.bag.plane0"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("slowdown") && text.contains("exposed communication"),
        "{text}"
    );
}

#[test]
fn simulation_bad_input_exits_2_with_a_hint() {
    for args in [
        vec!["collective", "prometheus", "--lb", "magic"],
        vec!["collective", "prometheus", "--sizes", "8G:1M"],
        vec!["collective", "prometheus", "--op", "gossip"],
        vec!["collective", "prometheus", "--gpus", "99999999"],
        vec!["collective", "prometheus", "--gpus", "12", "--algo", "hd"],
        vec!["collective", "prometheus", "--placement", "everywhere"],
        vec!["collective", "prometheus", "--lb", "eecmp:5000"],
        vec!["collective", "prometheus", "--switch-latency-us=-0.5"],
        vec!["collective", "prometheus", "--scale-up", "64"],
        vec!["job", "prometheus", "--job", "/nonexistent/job.yaml"],
    ] {
        let o = aifabric().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(!o.stderr.is_empty());
    }
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("job.yaml");
    let text = std::fs::read_to_string(job_file())
        .unwrap()
        .replace("gpus: 16384", "gpus: 1000");
    let line = 1 + text.lines().position(|l| l == "gpus: 1000").unwrap();
    std::fs::write(&bad, text).unwrap();
    let o = aifabric()
        .args(["job", "prometheus", "--job"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains(&format!("job.yaml:{line}:")) && err.contains("hint:"),
        "{err}"
    );
}

#[test]
fn bad_pp_virtual_exits_2_at_its_line_and_column() {
    let small = std::fs::read_to_string(format!(
        "{}/../../examples/jobs/small-64.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let line = small
        .lines()
        .position(|l| l.starts_with("parallelism:"))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("job.yaml");
    // 0 chunks; 32 layers over 2 x 3 chunks; 3 micro-batches per replica (global batch 12 over
    // 4 replicas) in rounds of 2 stages.
    for (v, batch, want) in [
        ("0", "32", "pp_virtual must be at least 1"),
        ("3", "32", "do not split evenly into pp x pp_virtual"),
        ("2", "12", "rounds of pp = 2"),
    ] {
        let text = small
            .replace("pp: 2,", &format!("pp: 2, pp_virtual: {v},"))
            .replace("global_batch: 32", &format!("global_batch: {batch}"));
        let col = text.lines().nth(line).unwrap().find("pp_virtual").unwrap() + 13;
        std::fs::write(&bad, text).unwrap();
        let o = aifabric()
            .args(["job", "llama3-24k", "--job"])
            .arg(&bad)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "pp_virtual {v}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(
            err.contains(&format!("job.yaml:{}:{col}:", line + 1))
                && err.contains(want)
                && err.contains("hint:"),
            "{err}"
        );
    }
}

#[test]
fn export_writes_every_file_atomically_and_names_bad_formats() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("netbox");
    let v = json(&[
        "export",
        "dsf-l1-zone",
        "--format",
        "netbox",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 12);
    for f in files {
        let p = std::path::Path::new(f["path"].as_str().unwrap());
        assert!(p.exists() && f["bytes"].as_u64().unwrap() > 0, "{f}");
    }
    // No temporary files left behind.
    assert!(std::fs::read_dir(&out).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with('.')));
    let head = std::fs::read_to_string(out.join("cables.csv")).unwrap();
    insta::assert_snapshot!(
        "netbox_csv_headers",
        [
            "devices.csv",
            "interfaces.csv",
            "cables.csv",
            "ip-addresses.csv",
            "asns.csv"
        ]
        .iter()
        .map(|f| format!(
            "{f}: {}",
            std::fs::read_to_string(out.join(f))
                .unwrap()
                .lines()
                .next()
                .unwrap()
        ))
        .collect::<Vec<_>>()
        .join("\n")
    );
    assert!(head.lines().count() > 1);
    // The text output ends with the total, which is what the files hold on disk.
    let o = aifabric()
        .args(["export", "dsf-l1-zone", "--format", "netbox", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let on_disk: u64 = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    let last = format!(
        "12 files, {:.1} MB in {}",
        on_disk as f64 / 1e6,
        out.display()
    );
    assert_eq!(text.lines().last(), Some(last.as_str()), "{text}");
    let o = aifabric()
        .args([
            "export",
            "dsf-l1-zone",
            "--format",
            "netbox",
            "--aggregation",
            "unconditional",
            "--out",
        ])
        .arg(dir.path().join("agg"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--format frr only"));
    let o = aifabric()
        .args(["export", "dsf-l1-zone", "--format", "excel", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("netbox, graphml"));
}

/// `aifabric demo --quiet --json --out TMP` plus `extra`, or `None` (said) without
/// `AIFABRIC_SLOW_TESTS`: about 18 s, run by `.ci/run`, skipped by a plain `cargo test`.
fn slow_demo(extra: &[&str]) -> Option<(tempfile::TempDir, Value)> {
    if std::env::var_os("AIFABRIC_SLOW_TESTS").is_none() {
        eprintln!("skipped: the end-to-end demo runs with AIFABRIC_SLOW_TESTS=1 (.ci/run sets it)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "demo",
        "--quiet",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let v = json(&args);
    Some((dir, v))
}

#[test]
fn demo_runs_the_main_job_end_to_end() {
    let Some((dir, v)) = slow_demo(&[]) else {
        return;
    };
    assert_eq!(v["gpus"], 216_192);
    assert_eq!(v["scenarios"], 4837);
    // A whole building down: its pairs read 0 and its 18,432 GPUs are lost.
    assert_eq!(v["worst"], "building:east.dc1");
    assert!(v["job_step_s"].as_f64().unwrap() > 0.0);
    // The failure that slows the job most of those it survives, and what helps there: its
    // packets sprayed instead of hashed.
    assert!(v["job_slowdown"].as_f64().unwrap() >= 1.0 - 1e-12);
    let under = v["job_step_under_failure_s"].as_f64().unwrap();
    let (lb, step) = (&v["mitigation"][0], v["mitigation"][1].as_f64().unwrap());
    assert_eq!(lb, "spray");
    assert!(step < under, "{step} s against {under} s");
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    for id in [
        "summary",
        "hierarchy",
        "tiers",
        "inter-bag",
        "failures",
        "collectives",
        "job",
        "utilization",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    let data: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(data["fabric"], "prometheus");
    // The report's job: healthy, under the failure, sprayed there, at the steps the demo
    // printed (its runs, reused).
    let bars = data["job"]["bars"].as_array().unwrap();
    let failure = v["job_failure"].as_str().unwrap();
    let labels: Vec<&str> = bars.iter().map(|b| b["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "healthy".to_owned(),
            format!("under {failure}"),
            format!("under {failure} with spray")
        ]
    );
    let ms = |i: usize| bars[i]["step_ms"].as_f64().unwrap();
    for (i, s) in [v["job_step_s"].as_f64().unwrap(), under, step]
        .iter()
        .enumerate()
    {
        assert!(
            (ms(i) - s * 1e3).abs() < 1e-6 * ms(i),
            "bar {i}: {} ms, {s} s",
            ms(i)
        );
    }
}

#[test]
fn report_writes_html_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let o = aifabric()
        .args([
            "report",
            "llama3-24k",
            "--sweep",
            "hall",
            "--gpus",
            "64",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.path().join("report.html").exists() && dir.path().join("report.json").exists());
    let bad = aifabric()
        .args(["report", "llama3-24k", "--sweep", "moon", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn traffic_reads_htsim_files_and_rejects_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    // The README's k = 8 fat tree (128 hosts, spec `ft8`).
    let spec = format!(
        "{}/../../examples/traffic/fat-tree-k8.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let spec = spec.as_str();
    let cm = dir.path().join("perm.cm");
    let mut text = String::from("Nodes 128\nConnections 128\n");
    for i in 0..128u32 {
        text += &format!(
            "{i}->{} id {} start 0 size 2097152\n",
            (i + 37) % 128,
            i + 1
        );
    }
    std::fs::write(&cm, &text).unwrap();
    let cm = cm.to_str().unwrap();
    let v = json(&[
        "traffic",
        spec,
        "--tm",
        cm,
        "--lb",
        "spray",
        "--scale-up",
        "1",
        "--json",
    ]);
    let r = &v["result"];
    assert_eq!(r["flows"], 128);
    // 2 MiB at 400 Gb/s is 41.9 us; every flow adds a few us of path latency.
    let p50 = r["fct"]["p50_s"].as_f64().unwrap();
    assert!(p50 > 41.9e-6 && p50 < 60e-6, "{p50}");
    // ECMP collides some flows: a longer tail than spraying's.
    let e = json(&[
        "traffic",
        spec,
        "--tm",
        cm,
        "--lb",
        "ecmp",
        "--scale-up",
        "1",
        "--json",
    ]);
    assert!(e["result"]["fct"]["max_s"].as_f64().unwrap() > r["fct"]["max_s"].as_f64().unwrap());
    // A bad line: exit 2, file:line and a hint.
    let bad = dir.path().join("bad.cm");
    std::fs::write(&bad, "Nodes 4\nConnections 1\n0->9 id 1 start 0 size 5\n").unwrap();
    let out = aifabric()
        .args(["traffic", spec, "--tm", bad.to_str().unwrap()])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("bad.cm:3:") && err.contains("hint"), "{err}");
    // A pattern, and a scenario's slowdown against the healthy fabric: 3 of the 16 core
    // switches down leave 13/16 of the core for a sprayed permutation.
    let v = json(&[
        "traffic",
        spec,
        "--pattern",
        "permutation",
        "--gpus",
        "128",
        "--scale-up",
        "1",
        "--lb",
        "spray",
        "--fail",
        "r.b.z.atsw0,r.b.z.atsw1,r.b.z.atsw2",
        "--json",
    ]);
    let s = v["slowdown"].as_f64().unwrap();
    assert!(s > 1.05 && s < 16.0 / 13.0 + 0.01, "{s}");
    // The receiver's rack cut off: no path, a runtime failure (exit 1) naming the flow.
    aifabric()
        .args([
            "traffic",
            spec,
            "--pattern",
            "incast:8",
            "--gpus",
            "16",
            "--scale-up",
            "1",
            "--fail",
            "r.b.z.rack0",
        ])
        .assert()
        .code(1);
}

#[test]
fn a_collective_too_big_for_memory_is_refused_before_it_runs() {
    // 131,072 GPUs x 8 channels x 1,024 queue pairs: a billion flows in one step.
    let out = aifabric()
        .args([
            "collective",
            "prometheus",
            "--gpus",
            "131072",
            "--lb",
            "eecmp:1024",
            "--sizes",
            "1G",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1073741824 simulated flows") && err.contains("over the limit of 67108864"),
        "{err}"
    );
}

#[test]
fn failures_and_report_start_from_a_maintenance_state() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("p4.yaml");
    std::fs::write(
        &spec,
        aifabric_fixtures::specs::TWO_REGIONS_NSF_4_PLANES_PLANAR,
    )
    .unwrap();
    let spec = spec.to_str().unwrap();
    let v = json(&[
        "failures",
        spec,
        "--sweep",
        "single:plane",
        "--drain",
        "a.bag.plane0",
        "--json",
    ]);
    let st = &v["summary"]["starting_state"];
    assert_eq!(st["description"], "drain a.bag.plane0");
    let min = v["summary"]["capacity_retained"]["min"].as_f64().unwrap();
    assert!((min - 2.0 / 3.0).abs() < 1e-9, "{min}");
    let table = aifabric()
        .args([
            "failures",
            spec,
            "--sweep",
            "single:plane",
            "--drain",
            "a.bag.plane0",
        ])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("starting state: drain a.bag.plane0"),
        "{table}"
    );
    assert!(table.contains("state a<->c: routed"), "{table}");
    // The report describes the state and sweeps from it.
    let out = dir.path().join("report");
    aifabric()
        .args([
            "report",
            spec,
            "--out",
            out.to_str().unwrap(),
            "--drain",
            "a.bag.plane0",
        ])
        .args(["--gpus", "8"])
        .assert()
        .success();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("Started from a maintenance state"),
        "no state in the report"
    );
    assert!(html.contains("drain a.bag.plane0"));
    // A soft drain is not a state to sweep from: bad input.
    aifabric()
        .args(["failures", spec, "--drain-soft", "a.bag.plane0"])
        .assert()
        .code(2);
}

/// Names and contents of the entries of `dir`, sorted.
use aifabric_fixtures::listing;

fn names(dir: &std::path::Path) -> Vec<String> {
    names_of(&listing(dir))
}

fn names_of(listing: &[(String, Vec<u8>)]) -> Vec<String> {
    listing.iter().map(|e| e.0.clone()).collect()
}

/// A 16-host fat tree, as a spec file in `dir`.
fn small_spec(dir: &std::path::Path) -> String {
    let path = dir.join("small.yaml");
    std::fs::write(
        &path,
        "name: small\nregions:\n  - name: lab\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            fat_tree: {k: 4}\n",
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn export_replaces_its_own_set_in_the_directory_as_a_whole() {
    let d = tempfile::tempdir().unwrap();
    let spec = small_spec(d.path());
    let out = d.path().join("exp");
    let export = |spec: &str, format: &str| {
        aifabric()
            .args(["export", spec, "--format", format, "--out"])
            .arg(&out)
            .output()
            .unwrap()
    };
    let o = export(&spec, "netbox");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let netbox = names(&out);
    assert_eq!(netbox.len(), 12);
    // Another format into the same directory: added beside the first (as .ci/run does for
    // NetworkX).
    let o = export(&spec, "graphml");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let graphml = std::fs::read(out.join("fabric.graphml")).unwrap();
    assert_eq!(names(&out).len(), 13);
    // The first format again, of another fabric: exactly its new set, the other kept.
    let before = listing(&out);
    let o = export("dsf-l1-zone", "netbox");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = listing(&out);
    assert_eq!(names(&out), names_of(&before));
    for ((name, new), (_, old)) in after.iter().zip(&before) {
        if name == "fabric.graphml" {
            assert_eq!(new, &graphml);
        } else if name == "sites.csv" {
            assert_ne!(new, old, "{name} is the new fabric's");
        }
    }
    assert!(netbox.iter().all(|n| out.join(n).exists()));
    // Nothing left beside it.
    assert_eq!(names(d.path()), ["exp", "small.yaml"]);
    // A directory holding anything else is not an export's: refused, untouched (exit 2).
    std::fs::write(out.join("notes.md"), "mine").unwrap();
    let before = listing(&out);
    let o = export(&spec, "dot");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("holds `notes.md`") && err.contains("new or empty directory"),
        "{err}"
    );
    assert!(listing(&out) == before, "now: {:?}", names(&out));
    assert_eq!(names(d.path()), ["exp", "small.yaml"]);
}

#[test]
fn a_killed_export_leaves_the_previous_set_whole() {
    let d = tempfile::tempdir().unwrap();
    let spec = small_spec(d.path());
    let out = d.path().join("exp");
    let o = aifabric()
        .args(["export", &spec, "--format", "netbox", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = listing(&out);
    // A larger fabric's export, killed midway: the file-size limit (RLIMIT_FSIZE, 64 blocks)
    // lets the small CSVs through and SIGXFSZ kills the process at devices.csv.
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -f 64 && exec '{}' export dsf-l1-zone --format netbox --out '{}'",
            env!("CARGO_BIN_EXE_aifabric"),
            out.display()
        ))
        .output()
        .unwrap();
    assert!(!o.status.success(), "the export was meant to die");
    // The old set, every file as it was: no mix of old and new.
    assert!(listing(&out) == before, "now: {:?}", names(&out));
    // Once it may finish, the new set replaces the old one.
    let o = aifabric()
        .args(["export", "dsf-l1-zone", "--format", "netbox", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = listing(&out);
    assert_eq!(after.len(), 12);
    assert!(after.iter().zip(&before).all(|(a, b)| a.0 == b.0));
    assert!(after != before, "the new set replaced the old");
}

/// Run `args`, expecting exit `code` and `want` in stderr.
fn exits(args: &[&str], code: i32, want: &str) {
    let o = aifabric().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: `{want}` not in {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn exit_codes_follow_one_rule() {
    // 1: an output that cannot be written (here, under a regular file: root ignores
    // permissions, not that).
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let under = |name: &str| file.join(name).to_str().unwrap().to_owned();
    let job = format!(
        "{}/../../examples/jobs/small-64.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    exits(
        &["build", "dsf-l1-zone", "--out", &under("model.json")],
        1,
        "cannot write",
    );
    exits(
        &[
            "export",
            "dsf-l1-zone",
            "--format",
            "dot",
            "--out",
            &under("x"),
        ],
        1,
        "cannot write",
    );
    exits(
        &["chakra", "synth", "--job", &job, "--out", &under("t")],
        1,
        "cannot write",
    );
    let trace = d.path().join("trace");
    let t = trace.to_str().unwrap();
    exits(&["chakra", "synth", "--job", &job, "--out", t], 0, "");
    exits(
        &[
            "chakra",
            "scale",
            "--in",
            t,
            "--ranks",
            "128",
            "--out",
            &under("t"),
        ],
        1,
        "cannot write",
    );
    // 2: bad input, whatever stage finds it.
    exits(
        &["chakra", "synth", "--job", &job, "--out", t],
        2,
        "already holds a trace",
    );
    std::fs::write(trace.join("trace.3.et.gz"), "not gzip, not protobuf").unwrap();
    exits(&["replay", "llama3-24k", "--trace", t], 2, "trace.3.et");
    exits(&["validate", "no-such-spec"], 2, "cannot read spec");
    exits(&["capacity", "dsf-l1-zone", "--fail", "moon"], 2, "moon");
    // A fabric the IPv6 plan cannot number: the spec must change.
    let zones: String = (0..257)
        .map(|i| format!("          - name: z{i}\n            fat_tree: {{k: 2}}\n"))
        .collect();
    let big = d.path().join("big.yaml");
    std::fs::write(
        &big,
        format!("name: big\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n{zones}"),
    )
    .unwrap();
    let out = d.path().join("plan");
    exits(
        &[
            "export",
            big.to_str().unwrap(),
            "--format",
            "ipplan",
            "--out",
            out.to_str().unwrap(),
        ],
        2,
        "more than 256 zones",
    );
    assert!(!out.exists());
}

#[test]
fn demo_refuses_a_soft_drain_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let o = aifabric()
        .args([
            "demo",
            "--quiet",
            "--drain-soft",
            "east.bag.plane5",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("soft drain") && err.contains("--drain"),
        "{err}"
    );
    assert!(
        !err.contains("  carries"),
        "one line, no stray spaces: {err}"
    );
    assert!(listing(dir.path()).is_empty(), "nothing written");
}

#[test]
fn demo_runs_from_a_maintenance_state() {
    let Some((dir, v)) = slow_demo(&["--drain", "east.bag.plane5"]) else {
        return;
    };
    assert_eq!(v["starting_state"], "drain east.bag.plane5");
    // 15 of 16 planes between the regions: 16.4 Pb/s -> 15.4.
    let inter = v["inter_region_tbps"].as_f64().unwrap();
    assert!((inter - 16_384.0 * 15.0 / 16.0).abs() < 1.0, "{inter}");
    assert!(v["job_slowdown"].as_f64().unwrap() >= 1.0 - 1e-12);
    let data: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(
        data["failures"]["starting_state"]["description"],
        "drain east.bag.plane5"
    );
}

/// The 32k RoCE example: a power domain that takes 4 of an AI zone's 18 CTSWs leaves 14/18
/// of its uplinks, so the AI zone -> ATSW tier goes from 6.22:1 to 8.00:1 and the AI zone's
/// pairs keep 14/18 of their routed capacity; nothing is isolated.
#[test]
fn the_32k_roce_example_shows_the_tier_change_of_a_power_domain() {
    let spec = format!(
        "{}/../../examples/specs/roce-32k.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let v = json(&[
        "failures",
        &spec,
        "--sweep",
        "single:pd",
        "--top",
        "1",
        "--json",
    ]);
    let worst = &v["scenarios"][0];
    let left = worst["min_capacity_retained"].as_f64().unwrap();
    assert!((left - 14.0 / 18.0).abs() < 1e-9, "{left}");
    assert_eq!(worst["gpus_isolated"], 0);
    let tier = worst["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tier"] == "ai_zone_to_atsw")
        .expect("the AI zone tier");
    let (before, after) = (
        tier["before"].as_f64().unwrap(),
        tier["after"].as_f64().unwrap(),
    );
    assert!((before - 1612.8 / 259.2).abs() < 1e-9, "{before}");
    assert!((after - 8.0).abs() < 1e-9, "{after}");
}

/// One `--lb` vocabulary, each engine refusing what it does not run with exit 2 and the
/// modes it does: a packet-level mode for the flow engine, a flow-level hash for the packet
/// engine; each message names the other engine's way out.
#[test]
fn each_engine_refuses_the_modes_it_does_not_run_with_the_list() {
    // What a refused request prints, after checking it exits 2.
    let refusal = |args: &[&str]| {
        let out = aifabric()
            .args(args)
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        String::from_utf8_lossy(&out).into_owned()
    };
    let e = refusal(&[
        "collective",
        "htsim-k8",
        "--gpus",
        "8",
        "--sizes",
        "1M",
        "--lb",
        "mixed:4",
    ]);
    assert!(e.contains("packet-level mode"), "{e}");
    assert!(e.contains("ecmp, eecmp:N, ucmp, spray or te"), "{e}");
    let e = refusal(&[
        "traffic",
        "htsim-k8",
        "--pattern",
        "permutation",
        "--gpus",
        "8",
        "--size",
        "64K",
        "--engine",
        "packet",
        "--lb",
        "ucmp",
    ]);
    assert!(e.contains("the packet engine takes ecmp, spray:N"), "{e}");
}
