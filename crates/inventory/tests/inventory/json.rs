//! The inventory as NetBox's API returns it and as `lldpctl -f json` reports it: the same
//! drift as from the CSV export of the same cabling; located errors for bad files.

use super::{damage, export, lines, plan, put};
use aifabric_inventory::{drift, lldp, read_dir, DriftReport, Inventory};
use aifabric_model::{DeviceId, Fabric, Role};
use aifabric_report::export::interface_name;
use serde_json::{json, Value};
use std::path::Path;

/// The plan's CSV export in `dir`, with two cables gone and two swapped at their B ends.
fn damaged_csv(f: &Fabric, dir: &Path) -> Inventory {
    export(f, dir);
    let mut cables = lines(dir, "cables.csv");
    damage(&mut cables);
    put(dir, "cables.csv", &cables);
    read_dir(dir).expect("the CSV export")
}

/// What a drift names, in a stable order (without the line each finding was read at).
fn named(r: &DriftReport) -> Vec<String> {
    let mut v: Vec<String> = r
        .findings
        .iter()
        .map(|x| {
            let s = format!("{x:?}");
            s.split(", line:").next().unwrap_or(&s).to_owned()
        })
        .collect();
    v.sort();
    v
}

/// `inv` as NetBox's API would return it, in `dir`: devices as one page, interfaces as
/// two pages, cables as plain records (the first in NetBox 3.2's form, the others 3.3's).
fn write_api(inv: &Inventory, dir: &Path) {
    let devices: Vec<Value> = inv
        .devices
        .iter()
        .map(|d| json!({"id": d.line, "name": d.name, "role": {"id": 1, "name": d.role}}))
        .collect();
    let mut ifaces: Vec<(&(String, String), &u64)> = inv.speeds_kbps.iter().collect();
    ifaces.sort();
    let ifaces: Vec<Value> = ifaces
        .into_iter()
        .map(|((d, n), s)| json!({"device": {"id": 7, "name": d}, "name": n, "speed": s}))
        .collect();
    let (p1, p2) = ifaces.split_at(ifaces.len() / 2);
    let end = |(d, n): &(String, String)| json!({"id": 3, "device": {"name": d}, "name": n});
    let cables: Vec<Value> = inv
        .cables
        .iter()
        .enumerate()
        .map(|(k, c)| {
            if k == 0 {
                json!({"id": k, "termination_a": end(&c.a), "termination_b": end(&c.b)})
            } else {
                json!({
                    "id": k,
                    "a_terminations": [{"object_type": "dcim.interface", "object_id": 1, "object": end(&c.a)}],
                    "b_terminations": [{"object_type": "dcim.interface", "object_id": 2, "object": end(&c.b)}],
                    "status": {"value": "connected"}
                })
            }
        })
        .collect();
    let page =
        |r: &[Value]| json!({"count": r.len(), "next": null, "previous": null, "results": r});
    std::fs::write(dir.join("devices.json"), page(&devices).to_string()).unwrap();
    std::fs::write(
        dir.join("interfaces.json"),
        json!([page(p1), page(p2)]).to_string(),
    )
    .unwrap();
    std::fs::write(dir.join("cables.json"), Value::Array(cables).to_string()).unwrap();
}

#[test]
fn the_netbox_api_gives_the_drift_its_csv_export_gives() {
    let f = plan();
    let csv = tempfile::tempdir().unwrap();
    let from_csv = damaged_csv(&f, csv.path());
    let api = tempfile::tempdir().unwrap();
    write_api(&from_csv, api.path());
    let from_api = read_dir(api.path()).expect("the API's JSON");
    assert_eq!(from_api.devices.len(), from_csv.devices.len());
    assert_eq!(from_api.speeds_kbps, from_csv.speeds_kbps);
    assert_eq!(from_api.cables.len(), from_csv.cables.len());
    let (a, b) = (
        drift(&f, &from_csv, interface_name),
        drift(&f, &from_api, interface_name),
    );
    assert_eq!(a.counts.get("missing_cable"), Some(&2));
    assert_eq!(a.counts.get("miswired"), Some(&4), "{:?}", a.counts);
    assert_eq!(a.counts, b.counts);
    assert_eq!(a.tiers, b.tiers);
    assert_eq!(named(&a), named(&b));
}

#[test]
fn lldpctl_json_per_device_agrees_with_netbox() {
    let f = plan();
    let csv = tempfile::tempdir().unwrap();
    let netbox = damaged_csv(&f, csv.path());
    // Each switch's neighbours as lldpctl reports them (GPUs run no LLDP): `-f json` for
    // most, one interface as a bare object where a switch has one, `-f json0` for every
    // third switch, and a neighbour whose port id is its MAC (the port in `descr`).
    let is_switch = |name: &str| {
        (0..f.devices().len())
            .map(DeviceId::from_idx)
            .any(|x| f.device_name(x) == name && f.device(x).role != Role::Gpu)
    };
    let mut per: std::collections::BTreeMap<&str, Vec<(&str, &str, &str)>> = Default::default();
    for c in &netbox.cables {
        for (l, r) in [(&c.a, &c.b), (&c.b, &c.a)] {
            if is_switch(&l.0) {
                per.entry(&l.0).or_default().push((&l.1, &r.0, &r.1));
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (k, (dev, ports)) in per.iter().enumerate() {
        let doc = if k % 3 == 2 {
            let ifaces: Vec<Value> = ports
                .iter()
                .map(|(p, rd, rp)| {
                    json!({"name": p, "via": "LLDP",
                        "chassis": [{"id": [{"type": "mac", "value": "02:00:00:00:00:01"}], "name": [{"value": rd}]}],
                        "port": [{"id": [{"type": "ifname", "value": rp}], "descr": [{"value": "uplink"}]}]})
                })
                .collect();
            json!({"lldp": [{"interface": ifaces}]})
        } else {
            let entry = |(p, rd, rp): &(&str, &str, &str), j: usize| {
                let port = if j == 0 {
                    json!({"id": {"type": "mac", "value": "02:00:00:00:00:02"}, "descr": rp})
                } else {
                    json!({"id": {"type": "ifname", "value": rp}, "descr": "to somewhere"})
                };
                json!({ *p: {"via": "LLDP", "rid": "1", "age": "0 day, 01:00:00",
                    "chassis": {*rd: {"id": {"type": "mac", "value": "02:00:00:00:00:03"}, "descr": "switch"}},
                    "port": port}})
            };
            let ifaces: Vec<Value> = ports.iter().enumerate().map(|(j, x)| entry(x, j)).collect();
            if ifaces.len() == 1 {
                json!({"lldp": {"interface": ifaces[0].clone()}})
            } else {
                json!({"lldp": {"interface": ifaces}})
            }
        };
        let file = dir.path().join(format!("{dev}.json"));
        std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        files.push(file);
    }
    let paths: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let seen = lldp::read(&paths).expect("lldpctl's JSON");
    assert_eq!(seen.len(), netbox.cables.len(), "each cable once");
    let by_lldp = netbox.clone().with_cables(seen, "lldpctl");
    let (a, b) = (
        drift(&f, &netbox, interface_name),
        drift(&f, &by_lldp, interface_name),
    );
    assert_eq!(a.counts, b.counts);
    assert_eq!(a.tiers, b.tiers);
}

#[test]
fn bad_json_files_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rtsw0.json");
    std::fs::write(&file, "{\"lldp\": {\"interface\":\n  [ {\"swp1\": } ]}}").unwrap();
    let e = lldp::read(&[file.as_path()]).unwrap_err();
    assert!(
        e.line == 2 && e.column > 0 && e.to_string().contains("not JSON"),
        "{e}"
    );
    std::fs::write(
        &file,
        json!({"lldp": {"interface": [{"swp1": {"chassis": {"leaf1": {}}}}, {"swp2": {"port": {}}}]}})
            .to_string(),
    )
    .unwrap();
    let e = lldp::read(&[file.as_path()]).unwrap_err();
    assert!(e.file.contains("lldp.interface[0].port"), "{e}");
    assert!(
        e.to_string().contains("swp1: the neighbour names no port"),
        "{e}"
    );

    std::fs::write(
        dir.path().join("devices.json"),
        json!({"results": [{"name": "a"}, {"name": null}]}).to_string(),
    )
    .unwrap();
    let e = read_dir(dir.path()).unwrap_err();
    assert!(e.file.contains("devices.json (results[1].name)"), "{e}");
    std::fs::write(
        dir.path().join("devices.json"),
        json!({"results": [{"name": "a"}]}).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("interfaces.json"),
        json!({"results": [{"device": {"name": "a"}, "name": "e1", "speed": "fast"}]}).to_string(),
    )
    .unwrap();
    let e = read_dir(dir.path()).unwrap_err();
    assert!(
        e.file.ends_with("interfaces.json") && e.line == 1 && e.column > 0,
        "{e}"
    );
    assert!(e.to_string().contains("not a NetBox API response"), "{e}");
    assert!(
        e.to_string().contains("invalid type: string \"fast\""),
        "{e}"
    );
    std::fs::remove_file(dir.path().join("interfaces.json")).unwrap();
    let e = read_dir(dir.path()).unwrap_err();
    assert!(
        e.to_string().contains("cannot read") && e.to_string().contains("GET /api/dcim"),
        "{e}"
    );
}
