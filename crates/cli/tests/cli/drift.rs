//! `aifabric drift`: the plan's own NetBox export has no drift (exit 0); a cable removed and
//! a device added are named, with the capacity lost, and exit 1 (a gate); a bad file exits
//! 2 naming its file, line and column; `--as-built DIR` fails the drift over the plan for
//! any command.

use crate::run;
use serde_json::Value;

#[test]
fn drift_gates_on_the_inventory_against_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("nb");
    let nb_s = nb.to_str().unwrap();
    let (code, _, err) = run(&["export", "htsim-k8", "--format", "netbox", "--out", nb_s]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = run(&["drift", "--plan", "htsim-k8", "--netbox", nb_s]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("no drift"), "{out}");
    // Damage: the first cable gone, a device nobody planned.
    let cables = nb.join("cables.csv");
    let text = std::fs::read_to_string(&cables).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let gone = lines.remove(1).to_owned();
    std::fs::write(&cables, lines.join("\n") + "\n").unwrap();
    let devices = nb.join("devices.csv");
    let mut d = std::fs::read_to_string(&devices).unwrap();
    d.push_str("rogue,rtsw,acme,x,active,,,,\n");
    std::fs::write(&devices, d).unwrap();
    let (code, out, _) = run(&["drift", "--plan", "htsim-k8", "--netbox", nb_s, "--json"]);
    assert_eq!(code, Some(1), "drift found is exit 1");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["counts"]["missing_cable"], 1);
    assert_eq!(v["counts"]["unexpected_device"], 1);
    let first = gone.split(',').next().unwrap();
    let missing = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == "missing_cable")
        .expect("the cable removed");
    assert_eq!(missing["a"]["device"], first, "{}", v["findings"]);
    assert!(v["tiers"][0]["lost_gbps"].as_f64().unwrap() > 0.0);
    let (code, out, _) = run(&["drift", "--plan", "htsim-k8", "--netbox", nb_s]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("1 missing cable,") && out.contains("rogue (rtsw; devices.csv:"),
        "{out}"
    );
    // Every question on the network as built: the cable removed is failed over the plan.
    let (code, out, err) = run(&["capacity", "htsim-k8", "--as-built", nb_s, "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["failed_links"], 1, "the missing cable, failed");
    assert!(
        err.contains("1 planned link(s) missing or miswired"),
        "{err}"
    );
    // A bad speed: located.
    let ifaces = nb.join("interfaces.csv");
    let t = std::fs::read_to_string(&ifaces).unwrap();
    let mut l: Vec<String> = t.lines().map(str::to_owned).collect();
    let parts: Vec<&str> = l[2].split(',').collect();
    l[2] = format!(
        "{},{},{},fast,{}",
        parts[0],
        parts[1],
        parts[2],
        parts[4..].join(",")
    );
    std::fs::write(&ifaces, l.join("\n") + "\n").unwrap();
    let (code, _, err) = run(&["drift", "--plan", "htsim-k8", "--netbox", nb_s]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("interfaces.csv:3:4") && err.contains("speed `fast`"),
        "{err}"
    );
}

/// What the drift does to routing is in `drift`'s own report (rtsw0's uplinks not laid:
/// rack0 cut off, the spines blackholing it), and `--as-built` takes LLDP tables too: the
/// same cabling seen by LLDP over a clean NetBox export answers as the damaged export does.
#[test]
fn drift_reports_the_racks_it_cuts_off_and_as_built_takes_lldp() {
    let dir = tempfile::tempdir().unwrap();
    let (clean, damaged) = (dir.path().join("clean"), dir.path().join("damaged"));
    for d in [&clean, &damaged] {
        let (code, _, err) = run(&[
            "export",
            "nsf-l2",
            "--format",
            "netbox",
            "--out",
            d.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(0), "{err}");
    }
    let text = std::fs::read_to_string(damaged.join("cables.csv")).unwrap();
    let uplink = |l: &str| l.starts_with("east.dc1.nsf.rtsw0,") && l.contains(",east.dc1.nsf.ftsw");
    let kept: Vec<&str> = text.lines().filter(|l| !uplink(l)).collect();
    assert_eq!(text.lines().count() - kept.len(), 32, "rtsw0's 32 uplinks");
    std::fs::write(damaged.join("cables.csv"), kept.join("\n") + "\n").unwrap();
    let damaged_s = damaged.to_str().unwrap();
    let (code, out, err) = run(&["drift", "--plan", "nsf-l2", "--netbox", damaged_s, "--json"]);
    assert_eq!(code, Some(1), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let routing = &v["routing"];
    assert_eq!(routing["unreachable_live_racks"], 1, "{routing}");
    assert_eq!(
        routing["blackholed_racks"],
        serde_json::json!(["east.dc1.nsf.rack0"])
    );
    assert!(routing["blackholing_switches"].as_u64().unwrap() > 0);
    let (_, out, _) = run(&["drift", "--plan", "nsf-l2", "--netbox", damaged_s]);
    assert!(
        out.contains("1 live rack unreachable") && out.contains("(east.dc1.nsf.rack0)"),
        "{out}"
    );
    // The same cabling as LLDP neighbour tables (switches' rows), over the clean export.
    let mut rows = vec!["local_device,local_port,remote_device,remote_port".to_owned()];
    for l in &kept[1..] {
        let v: Vec<&str> = l.split(',').collect();
        rows.push(format!("{},{},{},{}", v[3], v[5], v[0], v[2]));
    }
    let lldp = dir.path().join("lldp.csv");
    std::fs::write(&lldp, rows.join("\n") + "\n").unwrap();
    let blackholes = |as_built: &[&str]| {
        let (code, out, err) =
            run(&[&["blackholes", "nsf-l2", "--json", "--as-built"], as_built].concat());
        assert_eq!(code, Some(0), "{err}");
        assert!(err.contains("32 planned link(s) missing"), "{err}");
        out
    };
    assert_eq!(
        blackholes(&[clean.to_str().unwrap(), lldp.to_str().unwrap()]),
        blackholes(&[damaged_s])
    );
}

/// The round trip is exact: the plan exported, then taken as the network as built, answers
/// as the plan does (capacity but for the scenario's description; routes to the byte).
#[test]
fn the_plans_own_export_as_built_is_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("nb");
    let nb_s = nb.to_str().unwrap();
    let (code, _, err) = run(&["export", "htsim-k8", "--format", "netbox", "--out", nb_s]);
    assert_eq!(code, Some(0), "{err}");
    let json = |args: &[&str]| {
        let (code, out, err) = run(args);
        assert_eq!(code, Some(0), "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        v
    };
    let mut plan = json(&["capacity", "htsim-k8", "--json"]);
    let mut built = json(&["capacity", "htsim-k8", "--as-built", nb_s, "--json"]);
    assert_eq!(built["scenario"]["description"], format!("as built {nb_s}"));
    for v in [&mut plan, &mut built] {
        v["scenario"]["description"] = Value::Null;
    }
    assert_eq!(plan, built);
    let routes = |extra: &[&str]| {
        let (code, out, err) = run(&[
            &["routes", "htsim-k8", "--device", "r.b.z.atsw0", "--json"],
            extra,
        ]
        .concat());
        assert_eq!(code, Some(0), "{err}");
        out
    };
    assert_eq!(routes(&[]), routes(&["--as-built", nb_s]));
    // Imported once, the same: a scenario file with nothing in it.
    let file = dir.path().join("as-built.yaml");
    let file_s = file.to_str().unwrap();
    let (code, _, err) = run(&[
        "import", "--plan", "htsim-k8", "--netbox", nb_s, "--out", file_s,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("\nfail: []\n") && text.contains("\nlink_speeds: []\n"),
        "{text}"
    );
    assert_eq!(routes(&[]), routes(&["--scenario", file_s]));
}

/// `aifabric import` writes the drift as a scenario file every command takes: a cable not
/// laid failed and an interface at half its speed at that speed, so capacity answers as
/// `--as-built` does, and the tier above loses the closed form: 400 Gb/s for the cable,
/// 200 Gb/s for the slow link. A bad speed in such a file is refused at its line.
#[test]
fn import_writes_the_network_as_built_as_a_scenario_every_command_takes() {
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("nb");
    let nb_s = nb.to_str().unwrap();
    let (code, _, err) = run(&["export", "nsf-l2", "--format", "netbox", "--out", nb_s]);
    assert_eq!(code, Some(0), "{err}");
    let cables = std::fs::read_to_string(nb.join("cables.csv")).unwrap();
    let gone = "east.dc1.nsf.rtsw0,dcim.interface,eth32,east.dc1.nsf.ftsw0,";
    let kept: String = cables
        .lines()
        .filter(|l| !l.starts_with(gone))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(kept.len() + 1 < cables.len(), "one cable removed");
    std::fs::write(nb.join("cables.csv"), kept).unwrap();
    let ifaces = std::fs::read_to_string(nb.join("interfaces.csv")).unwrap();
    let slow = ifaces.replacen(
        "east.dc1.nsf.rtsw1,eth32,400gbase-x-qsfpdd,400000000,",
        "east.dc1.nsf.rtsw1,eth32,400gbase-x-qsfpdd,200000000,",
        1,
    );
    assert_ne!(slow, ifaces);
    std::fs::write(nb.join("interfaces.csv"), slow).unwrap();
    let file = dir.path().join("as-built.yaml");
    let file_s = file.to_str().unwrap();
    let (code, out, err) = run(&[
        "import", "--plan", "nsf-l2", "--netbox", nb_s, "--out", file_s, "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["failed_links"].as_u64(), v["link_speeds"].as_u64()),
        (Some(1), Some(1))
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("- \"east.dc1.nsf.rtsw0--east.dc1.nsf.ftsw0#0\"")
            && text.contains("{link: \"east.dc1.nsf.rtsw1--east.dc1.nsf.ftsw0#0\", gbps: 200}"),
        "{text}"
    );
    let capacity = |extra: &[&str]| {
        let (code, out, err) = run(&[&["capacity", "nsf-l2", "--json"], extra].concat());
        assert_eq!(code, Some(0), "{err}");
        let mut v: Value = serde_json::from_str(&out).unwrap();
        v["scenario"]["description"] = Value::Null;
        v
    };
    let (plan, imported) = (capacity(&[]), capacity(&["--scenario", file_s]));
    assert_eq!(imported, capacity(&["--as-built", nb_s]));
    let up = |v: &Value| v["tiers"][0]["up_gbps"].as_f64().unwrap();
    assert_eq!(plan["tiers"][0]["name"], "rtsw");
    assert_eq!(up(&plan) - up(&imported), 400.0 + 200.0);
    // `drift` gives the tiers that change, planned and as built.
    let (code, out, err) = run(&["drift", "--plan", "nsf-l2", "--netbox", nb_s, "--json"]);
    assert_eq!(code, Some(1), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let rtsw = &v["oversubscription"][0];
    assert_eq!(
        (&rtsw["tier"], &rtsw["scope"]),
        (&plan["tiers"][0]["name"], &plan["tiers"][0]["scope"])
    );
    assert_eq!(rtsw["planned_up_gbps"], plan["tiers"][0]["up_gbps"]);
    assert_eq!(rtsw["up_gbps"], imported["tiers"][0]["up_gbps"]);
    assert_eq!(
        rtsw["oversubscription"],
        imported["tiers"][0]["oversubscription"]
    );

    // An interface reported at 0 kb/s is named, but no link runs at 0: the file it imports
    // to keeps that link at its planned speed (and reads back).
    let zero = ifaces.replacen(
        "east.dc1.nsf.rtsw1,eth32,400gbase-x-qsfpdd,400000000,",
        "east.dc1.nsf.rtsw1,eth32,400gbase-x-qsfpdd,0,",
        1,
    );
    std::fs::write(nb.join("interfaces.csv"), zero).unwrap();
    let (code, out, err) = run(&[
        "import", "--plan", "nsf-l2", "--netbox", nb_s, "--out", file_s, "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["link_speeds"].as_u64(), Some(0), "{v}");
    assert_eq!(v["counts"]["wrong_speed"].as_u64(), Some(1), "{v}");
    let (code, _, err) = run(&["capacity", "nsf-l2", "--scenario", file_s]);
    assert_eq!(code, Some(0), "{err}");

    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "fail: []\nlink_speeds:\n  - {link: \"east.dc1.nsf.rtsw1--east.dc1.nsf.ftsw0#0\", gbps: -5}\n",
    )
    .unwrap();
    let (code, _, err) = run(&["capacity", "nsf-l2", "--scenario", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("bad.yaml") && err.contains("-5 Gb/s") && err.contains(":3:"),
        "{err}"
    );
}

/// Interface addresses (NetBox's `ip-addresses.csv`) against the plan's: one changed is
/// named with both addresses; the same address written otherwise is no drift.
#[test]
fn an_interface_at_another_address_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("nb");
    let nb_s = nb.to_str().unwrap();
    let (code, _, err) = run(&["export", "nsf-l2", "--format", "netbox", "--out", nb_s]);
    assert_eq!(code, Some(0), "{err}");
    let ips = nb.join("ip-addresses.csv");
    let text = std::fs::read_to_string(&ips).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let planned = lines[10].split(',').next().unwrap().to_owned();
    let (ip, len) = planned.split_once('/').unwrap();
    // The same address, upper case with its zeros written out: not a drift.
    let same: std::net::Ipv6Addr = ip.parse().unwrap();
    let segments: Vec<String> = same.segments().iter().map(|s| format!("{s:04X}")).collect();
    lines[10] = lines[10].replacen(&planned, &format!("{}/{len}", segments.join(":")), 1);
    std::fs::write(&ips, lines.join("\n") + "\n").unwrap();
    let (code, out, _) = run(&["drift", "--plan", "nsf-l2", "--netbox", nb_s]);
    assert_eq!(code, Some(0), "{out}");
    lines[11] = lines[11].replacen("/127", "0/127", 1); // ::1e3 -> ::1e30
    let wrong = lines[11].split(',').next().unwrap().to_owned();
    std::fs::write(&ips, lines.join("\n") + "\n").unwrap();
    let (code, out, _) = run(&["drift", "--plan", "nsf-l2", "--netbox", nb_s, "--json"]);
    assert_eq!(code, Some(1), "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["counts"], serde_json::json!({"wrong_address": 1}));
    let x = &v["findings"][0];
    assert_eq!(x["found"], wrong.as_str());
    assert_ne!(x["planned"], x["found"]);
}

/// The FRR export of the network as built: the link a scenario file sets to 100 Gb/s is
/// advertised with that link bandwidth from both ends, and nothing else changes.
#[test]
fn the_frr_export_carries_the_link_speeds_found() {
    let dir = tempfile::tempdir().unwrap();
    let spec = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/specs/fat-tree-k4.yaml"
    );
    let built = dir.path().join("as-built.yaml");
    std::fs::write(
        &built,
        "link_speeds:\n  - {link: \"r.b.z.rtsw0--r.b.z.ctsw0#0\", gbps: 100}\n",
    )
    .unwrap();
    let export = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let (code, _, err) = run(&[
            &[
                "export",
                spec,
                "--format",
                "frr",
                "--out",
                out.to_str().unwrap(),
            ],
            extra,
        ]
        .concat());
        assert_eq!(code, Some(0), "{err}");
        out
    };
    let (plan, found) = (
        export("plan", &[]),
        export("built", &["--scenario", built.to_str().unwrap()]),
    );
    let mut changed = Vec::new();
    for e in std::fs::read_dir(&plan).unwrap() {
        let name = e.unwrap().file_name();
        let (a, b) = (
            std::fs::read_to_string(plan.join(&name)).unwrap(),
            std::fs::read_to_string(found.join(&name)).unwrap(),
        );
        if a != b {
            changed.push(name.to_string_lossy().into_owned());
            if name.to_string_lossy().ends_with("bgpd.conf") {
                assert!(b.contains("route-map LB-100 out"), "{name:?}:\n{b}");
            }
        }
    }
    changed.sort();
    assert_eq!(
        changed,
        [
            "r.b.z.ctsw0.bgpd.conf",
            "r.b.z.rtsw0.bgpd.conf",
            "topology.json"
        ]
    );
}
