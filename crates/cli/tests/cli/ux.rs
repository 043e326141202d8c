//! Issue 36's first-hour fixes, end to end: a report written in part when a section fails,
//! the scenario and the usable GPUs named, honest counts, "did you mean" and grouped help.

use crate::run;

#[test]
fn a_report_whose_collectives_fail_is_written_with_that_section_marked_and_exits_1() {
    // Two buildings of 36 GPUs under one BAG: the benchmark's 72 GPUs span both, and with
    // the whole BAG drained its ring has no path; the capacity and the sweep still work.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("tz.yaml");
    std::fs::write(&spec, aifabric_fixtures::specs::TWO_ZONES_UNDER_BAG).unwrap();
    let out = dir.path().join("report");
    let (code, stdout, err) = run(&[
        "report",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--drain",
        "a.bag",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(stdout.contains("report.html"), "{stdout}");
    assert!(
        err.contains("collectives") && err.contains("have no path"),
        "{err}"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(v["failed_sections"][0]["section"], "collectives");
    assert!(v["failed_sections"][0]["error"]
        .as_str()
        .unwrap()
        .contains("have no path"));
    assert!(v["collective"].is_null());
    // The sections that worked are all there.
    assert_eq!(v["gpus"], 72);
    assert!(!v["tiers"].as_array().unwrap().is_empty());
    assert!(v["failures"]["scenarios"].as_u64().unwrap() > 0);
    assert!(v["failures"]["starting_state"]["description"]
        .as_str()
        .unwrap()
        .contains("a.bag"));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Incomplete report"));
    assert!(html.contains("This part failed</b> (collectives)"));
    assert!(html.contains("id=\"failures\"") && html.contains("Worst scenarios"));
}

#[test]
fn capacity_names_the_scenario_it_applied() {
    let (code, out, err) = run(&[
        "capacity",
        "nsf-l2",
        "--drain",
        "east.dc1.nsf.stsw0",
        "--fail",
        "east.dc1.nsf.rack3",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let sc = &v["scenario"];
    assert_eq!(
        sc["description"],
        "fail east.dc1.nsf.rack3; drain east.dc1.nsf.stsw0"
    );
    assert_eq!(sc["drained"]["devices"], 1);
    assert!(sc["failed"]["devices"].as_u64().unwrap() > 0);
    let (_, out, _) = run(&["capacity", "nsf-l2", "--drain", "east.dc1.nsf.stsw0"]);
    assert!(
        out.contains("scenario: drain east.dc1.nsf.stsw0 (1 device drained)"),
        "{out}"
    );
    let (_, out, _) = run(&["capacity", "nsf-l2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["scenario"]["description"], "healthy");
}

#[test]
fn the_usable_gpus_are_printed_where_they_differ() {
    // prometheus: 216,192 GPUs in racks of 36; domains of 8 hold 32 of each (5,120 racks of
    // 36 in the DSF buildings leave 4 each: 20,480), so jobs can use 195,712.
    let want = "jobs can use 195712 of the 216192 live GPUs";
    let (code, out, err) = run(&["build", "prometheus"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(want), "{out}");
    let (_, out, _) = run(&["capacity", "prometheus"]);
    assert!(out.contains(want), "{out}");
    let (_, out, _) = run(&["build", "prometheus", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["usable_gpus"]["gpus"], 195_712);
    assert_eq!(v["usable_gpus"]["left_out"], 20_480);
    // Where every GPU fills a domain, nothing is said.
    let (_, out, _) = run(&["build", "llama3-24k"]);
    assert!(!out.contains("jobs can use"), "{out}");
}

#[test]
fn build_counts_zones_without_the_bag() {
    // prometheus: 2 regions x 6 buildings, one L2 zone each, and a BAG layer per region.
    let (code, out, err) = run(&["build", "prometheus"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("prometheus: 2 regions, 12 buildings, 12 zones under 2 BAG layers"),
        "{out}"
    );
    let (_, out, _) = run(&["build", "prometheus", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["zones"].clone(), v["bag_layers"].clone()),
        (12.into(), 2.into())
    );
}

#[test]
fn mistyped_devices_and_specs_get_a_did_you_mean() {
    for (args, want) in [
        (
            vec!["routes", "prometheus", "--device", "east.dc1.rdsw0"],
            "did you mean `east.dc1.l2.rdsw0`?",
        ),
        (
            vec!["routes", "nsf-l2", "--device", "ftsw0"],
            "did you mean `east.dc1.nsf.ftsw0`?",
        ),
        (
            vec!["capacity", "promethues"],
            "did you mean the built-in spec `prometheus`?",
        ),
        (
            vec!["collective", "nsf-l2", "--placement", "sprad"],
            "did you mean `spread`?",
        ),
        (
            vec!["collective", "nsf-l2", "--op", "allreduce"],
            "did you mean `all_reduce`?",
        ),
        (
            vec!["traffic", "nsf-l2", "--pattern", "permutaton"],
            "did you mean `permutation`?",
        ),
        (
            vec!["collective", "nsf-l2", "--lb", "ecmpp"],
            "did you mean `ecmp`?",
        ),
        (
            vec!["failures", "nsf-l2", "--sweep", "single:plnae"],
            "did you mean `plane`?",
        ),
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn help_groups_the_flags_and_defines_placements() {
    let (code, out, _) = run(&["traffic", "--help"]);
    assert_eq!(code, Some(0));
    for heading in [
        "Packet engine (--engine packet, both or hybrid):",
        "Simulation:",
        "Scenario (what failed or is drained):",
        "Control plane (BGP):",
    ] {
        assert!(out.contains(heading), "`{heading}` missing:\n{out}");
    }
    // The packet flags sit under their heading, not among the command's own.
    let own = &out[..out.find("Packet engine (").unwrap()];
    assert!(!own.contains("--pfc"), "{own}");
    let (_, out, _) = run(&["collective", "--help"]);
    assert!(
        out.contains("Packet engine ("),
        "collective runs at packet level:\n{out}"
    );
    for p in [
        "packed =",
        "spread =",
        "fragmented[:SEED] =",
        "topology-aware =",
    ] {
        assert!(out.contains(p), "`{p}` undefined:\n{out}");
    }
    let (_, out, _) = run(&["failures", "--help"]);
    assert!(out.contains("Starting state"), "{out}");
}

#[test]
fn job_commands_refuse_a_scale_up_they_would_ignore() {
    let (code, _, err) = run(&[
        "job",
        "nsf-l2",
        "--job",
        "../../examples/jobs/small-64.yaml",
        "--scale-up",
        "4",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("scale_up"), "{err}");
    // The flags they refuse are not offered in their help; the commands that read them
    // still list them.
    for cmd in ["job", "cluster", "plan"] {
        let (_, out, _) = run(&[cmd, "--help"]);
        assert!(!out.contains("--scale-up"), "{cmd} --help:\n{out}");
    }
    for cmd in ["collective", "traffic"] {
        let (_, out, _) = run(&[cmd, "--help"]);
        assert!(out.contains("--scale-up <"), "{cmd} --help:\n{out}");
        assert!(out.contains("--scale-up-gbs <"), "{cmd} --help:\n{out}");
    }
}

#[test]
fn ties_and_rankings_without_pairs_say_why() {
    // nsf-l2: one building, one zone: no pair of sites, so every scenario keeps 1.0000.
    let (code, out, err) = run(&["failures", "nsf-l2", "--sweep", "single:pd", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let note = v["summary"]["notes"][0].as_str().unwrap();
    assert!(
        note.contains("one site") && note.contains("--pod-sites"),
        "{note}"
    );
    // With pod sites there are pairs, and no such note.
    let (_, out, _) = run(&[
        "failures",
        "nsf-l2",
        "--sweep",
        "single:pd",
        "--pod-sites",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["summary"]["notes"].is_null(), "{}", v["summary"]);
    // Planar vs spread under single plane failures tie, and the output says why.
    let (code, out, err) = run(&[
        "failures",
        "prometheus",
        "--sweep",
        "single:plane",
        "--compare-inter-bag",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("planar and spread tie in all 32 scenarios") && out.contains("pairs:plane"),
        "{out}"
    );
}
