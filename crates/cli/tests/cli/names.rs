//! Names and counts the tool prints: scopes that are selectors, "did you mean", GPUs that are
//! usable or explained, equal next hops kept equal, no debug text.

use crate::run;

#[test]
fn gpus_outside_whole_scale_up_domains_are_explained_and_reachable() {
    // dsf-l1-zone: 128 RDSWs x 36 GPUs = 4,608; domains of 8 hold 32 of each rack's 36.
    let (code, _, err) = run(&[
        "collective",
        "dsf-l1-zone",
        "--gpus",
        "4608",
        "--sizes",
        "1M",
    ]);
    assert_eq!(code, Some(2), "{err}");
    for want in [
        "4096 GPUs in whole scale-up domains of 8",
        "512 in 128 racks",
        "--scale-up 6",
    ] {
        assert!(err.contains(want), "`{want}` missing: {err}");
    }
    // The size it suggests uses every GPU.
    let (code, out, err) = run(&[
        "collective",
        "dsf-l1-zone",
        "--gpus",
        "4608",
        "--sizes",
        "1M",
        "--scale-up",
        "6",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("4608"), "{out}");
    // Prometheus: 216,192 GPUs, 20,480 of them in racks of 36 outside domains of 8.
    let (code, _, err) = run(&[
        "collective",
        "prometheus",
        "--gpus",
        "200000",
        "--sizes",
        "1M",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("of its 216192 live GPUs, 20480 in 5120 racks"),
        "{err}"
    );
    assert!(err.contains("--scale-up 4"), "{err}");
}

#[test]
fn every_tier_scope_the_capacity_report_prints_is_a_selector() {
    let (code, out, err) = run(&["capacity", "llama3-24k", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let scopes: Vec<String> = v["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["scope"].as_str().unwrap().to_owned())
        .collect();
    assert!(scopes.contains(&"east.dc1.llama.ai_zone0".to_owned()));
    for scope in scopes {
        let (code, out, err) = run(&["capacity", "llama3-24k", "--fail", &scope, "--json"]);
        assert_eq!(code, Some(0), "{scope}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        // An AI zone is 3,072 GPUs, 192 rack switches and 16 cluster switches.
        if scope == "east.dc1.llama.ai_zone0" {
            assert_eq!(v["failed_devices"], 3_072 + 192 + 16, "{scope}");
        }
    }
}

#[test]
fn unknown_devices_and_selectors_get_a_did_you_mean() {
    for (selector, want) in [
        // A typo in the device part, the zone part, a domain name, a class.
        ("east.dc1.nsf.ftws0", "did you mean `east.dc1.nsf.ftsw0`?"),
        ("east.dc1.nfs.ftsw0", "did you mean `east.dc1.nsf.ftsw0`?"),
        ("hall:east.dc1.hal0", "did you mean `hall:east.dc1.hall0`?"),
        ("hal:east.dc1.hall0", "did you mean `hall:east.dc1.hall0`?"),
        (
            "east.dc1.nsf.ftsw0--east.dc1.nsf.stws0",
            "did you mean `east.dc1.nsf.ftsw0--east.dc1.nsf.stsw0`?",
        ),
    ] {
        let (code, _, err) = run(&["capacity", "nsf-l2", "--fail", selector]);
        assert_eq!(code, Some(2), "{selector}: {err}");
        assert!(err.contains(want), "{selector}: {err}");
    }
    let (code, _, err) = run(&["routes", "nsf-l2", "--device", "east.dc1.nsf.ftws0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("did you mean `east.dc1.nsf.ftsw0`?"), "{err}");
    // A bare device name fits the same switch of every building equally: all are offered
    // (in name order), none picked at random; a zone typo before it still picks its zone.
    let (code, _, err) = run(&["routes", "prometheus", "--device", "ftsw0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("did you mean one of `east.dc6.nsf.ftsw0`, `west.dc6.nsf.ftsw0`?"),
        "{err}"
    );
    let (code, _, err) = run(&["capacity", "prometheus", "--fail", "ftsw0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("did you mean one of `east.dc6.nsf.ftsw0`,"),
        "{err}"
    );
    let (code, _, err) = run(&["routes", "prometheus", "--device", "west.dc6.nfs.ftsw0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("did you mean `west.dc6.nsf.ftsw0`?"), "{err}");
}

#[test]
fn equal_cost_next_hops_get_equal_entries() {
    // 16 STSWs, one link each: one entry each in a 16-entry group, not 4/64.
    let (code, out, err) = run(&[
        "routes",
        "nsf-l2",
        "--device",
        "east.dc1.nsf.ftsw0",
        "--prefix",
        "east.dc1.nsf.rack400",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let hops: Vec<&str> = out.lines().filter(|l| l.contains(" via ")).collect();
    assert_eq!(hops.len(), 16, "{out}");
    assert!(hops.iter().all(|l| l.ends_with("slots   1/16")), "{out}");
    // With an 8-entry limit, 16 next hops cannot all be programmed: quantized, and the
    // output says how many entries the group uses.
    let (code, out, err) = run(&[
        "routes",
        "nsf-l2",
        "--device",
        "east.dc1.nsf.ftsw0",
        "--prefix",
        "east.dc1.nsf.rack400",
        "--group-size",
        "8",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let r = &v["routes"][0];
    assert_eq!(r["group_entries"], 8);
    assert_eq!(r["group_size"], 8);
}

#[test]
fn no_debug_text_and_no_1_regions() {
    let (code, out, err) = run(&["build", "dsf-l1-zone"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("1 region, 1 building, 1 zone"), "{out}");
    let (code, out, err) = run(&["failures", "nsf-l2", "--sweep", "single:building"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("building       1 scenario "), "{out}");
    assert!(!out.contains("1 scenarios"), "{out}");
    let (code, out, err) = run(&[
        "blackholes",
        "nsf-l2",
        "--aggregation",
        "conditional",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("Conditional {"), "{out}");
    assert!(!out.contains("\"min\""), "{out}");
}

#[test]
fn the_pod_sites_a_sweep_prints_are_selectors() {
    // nsf-l2: 83 pods x 6 racks x 32 GPUs; pod 7 is 192 GPUs, 6 rack switches and the pod's
    // fabric switches (one per spine plane: 8).
    let (code, out, err) = run(&[
        "capacity",
        "nsf-l2",
        "--fail",
        "east.dc1.nsf.pod7",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["failed_devices"], 192 + 6 + 8, "{out}");
    let (code, _, err) = run(&["capacity", "nsf-l2", "--fail", "east.dc1.nsf.pdo7"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("did you mean `east.dc1.nsf.pod7`?"), "{err}");
}

#[test]
fn monte_carlo_draws_switches_of_a_role_and_single_links_named_as_selectors() {
    let (code, out, err) = run(&[
        "failures",
        "llama3-24k",
        "--sweep",
        "montecarlo",
        "--samples",
        "200",
        "--probability",
        "switch:atsw=0.05",
        "--probability",
        "link:dac=1e-4",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let srgs: Vec<String> = v["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["srgs"].as_array().unwrap().clone())
        .map(|x| x.as_str().unwrap().to_owned())
        .collect();
    let switches: Vec<&String> = srgs.iter().filter(|x| x.starts_with("switch:")).collect();
    let links: Vec<&String> = srgs.iter().filter(|x| !x.contains(':')).collect();
    assert!(!switches.is_empty() && !links.is_empty(), "{srgs:?}");
    // Only ATSWs among the switches; only copper (GPU -> rack switch) links.
    assert!(switches.iter().all(|x| x.contains(".atsw")), "{switches:?}");
    for l in links.iter().take(5) {
        assert!(l.contains(".gpu") && l.contains("--"), "{l}");
        // Each name is a selector for its link.
        let (code, out, err) = run(&["capacity", "llama3-24k", "--fail", l, "--json"]);
        assert_eq!(code, Some(0), "{l}: {err}");
        let c: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(c["failed_links"], 1, "{l}");
    }
    for (arg, want) in [
        (
            "link:zz=1e-4",
            "optic classes are dac, sr, dr, fr, lr, er, zr",
        ),
        ("switch:foo=1e-4", "unknown switch role `foo`"),
    ] {
        let (code, _, err) = run(&[
            "failures",
            "llama3-24k",
            "--sweep",
            "montecarlo",
            "--probability",
            arg,
        ]);
        assert_eq!(code, Some(2), "{arg}: {err}");
        assert!(err.contains(want), "{arg}: {err}");
    }
}
