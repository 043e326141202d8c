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
