//! Exports: NetBox column names, referential integrity, GraphML / node-link round trips.

use aifabric_model::{Fabric, Role};
use aifabric_report::export::{self, Format};
use std::collections::{HashMap, HashSet};

/// NetBox's bulk-import fields per model (`netbox/dcim/forms/bulk_import.py` and
/// `netbox/ipam/forms/bulk_import.py`, NetBox 4.x), typed in from the forms' `Meta.fields`.
fn netbox_fields(file: &str) -> &'static [&'static str] {
    match file {
        "manufacturers.csv" => &["name", "slug", "description", "tags"],
        "device-roles.csv" => &[
            "name",
            "slug",
            "color",
            "vm_role",
            "config_template",
            "description",
            "tags",
        ],
        "device-types.csv" => &[
            "manufacturer",
            "default_platform",
            "model",
            "slug",
            "part_number",
            "u_height",
            "exclude_from_utilization",
            "is_full_depth",
            "subdevice_role",
            "airflow",
            "description",
            "weight",
            "weight_unit",
            "comments",
            "tags",
        ],
        "sites.csv" => &[
            "name",
            "slug",
            "status",
            "region",
            "group",
            "tenant",
            "facility",
            "time_zone",
            "description",
            "physical_address",
            "shipping_address",
            "latitude",
            "longitude",
            "comments",
            "tags",
        ],
        "locations.csv" => &[
            "site",
            "parent",
            "name",
            "slug",
            "status",
            "tenant",
            "facility",
            "description",
            "tags",
        ],
        "racks.csv" => &[
            "site",
            "location",
            "name",
            "facility_id",
            "tenant",
            "status",
            "role",
            "form_factor",
            "serial",
            "asset_tag",
            "width",
            "u_height",
            "desc_units",
            "outer_width",
            "outer_depth",
            "outer_unit",
            "mounting_depth",
            "airflow",
            "weight",
            "max_weight",
            "weight_unit",
            "description",
            "comments",
            "tags",
        ],
        "devices.csv" => &[
            "name",
            "role",
            "tenant",
            "manufacturer",
            "device_type",
            "platform",
            "serial",
            "asset_tag",
            "status",
            "site",
            "location",
            "rack",
            "position",
            "face",
            "latitude",
            "longitude",
            "parent",
            "device_bay",
            "airflow",
            "virtual_chassis",
            "vc_position",
            "vc_priority",
            "cluster",
            "description",
            "config_template",
            "comments",
            "tags",
        ],
        "interfaces.csv" => &[
            "device",
            "name",
            "label",
            "parent",
            "bridge",
            "lag",
            "type",
            "speed",
            "duplex",
            "enabled",
            "mark_connected",
            "wwn",
            "vdcs",
            "mtu",
            "mgmt_only",
            "description",
            "poe_mode",
            "poe_type",
            "mode",
            "vrf",
            "rf_role",
            "rf_channel",
            "rf_channel_frequency",
            "rf_channel_width",
            "tx_power",
            "tags",
        ],
        "cables.csv" => &[
            "side_a_device",
            "side_a_type",
            "side_a_name",
            "side_b_device",
            "side_b_type",
            "side_b_name",
            "type",
            "status",
            "tenant",
            "label",
            "color",
            "length",
            "length_unit",
            "description",
            "comments",
            "tags",
        ],
        "ip-addresses.csv" => &[
            "address",
            "vrf",
            "tenant",
            "status",
            "role",
            "device",
            "virtual_machine",
            "interface",
            "is_primary",
            "dns_name",
            "description",
            "comments",
            "tags",
        ],
        "asns.csv" => &["asn", "rir", "tenant", "description", "comments", "tags"],
        _ => panic!("unknown file {file}"),
    }
}

/// Fields NetBox requires in each import.
fn required(file: &str) -> &'static [&'static str] {
    match file {
        "manufacturers.csv" => &["name", "slug"],
        "device-roles.csv" => &["name", "slug"],
        "device-types.csv" => &["manufacturer", "model", "slug"],
        "sites.csv" | "locations.csv" => &["name", "slug", "status"],
        "racks.csv" => &["site", "name", "status", "width"],
        "devices.csv" => &["role", "manufacturer", "device_type", "status", "site"],
        "interfaces.csv" => &["device", "name", "type"],
        "cables.csv" => &[
            "side_a_device",
            "side_a_type",
            "side_a_name",
            "side_b_device",
            "side_b_type",
            "side_b_name",
        ],
        "ip-addresses.csv" => &["address", "status"],
        "asns.csv" => &["asn", "rir"],
        _ => &[],
    }
}

fn render(f: &Fabric, format: Format, name: &str) -> String {
    let mut out = Vec::new();
    export::write(f, format, name, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Rows as maps from column to value (no quoted commas in these exports' keys).
fn rows(text: &str) -> (Vec<String>, Vec<HashMap<String, String>>) {
    let mut lines = text.lines();
    let head: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    let rows = lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            head.iter()
                .cloned()
                .zip(cells.iter().map(|c| c.to_string()))
                .collect()
        })
        .collect();
    (head, rows)
}

fn llama() -> Fabric {
    aifabric_spec::load("llama3-24k").unwrap()
}

#[test]
fn netbox_csvs_use_netbox_field_names_and_reference_each_other() {
    let f = llama();
    let mut tables = HashMap::new();
    // device-asns.csv is a plain mapping beside the imports (NetBox has no device ASN field).
    for &file in Format::Netbox
        .files()
        .iter()
        .filter(|&&x| x != "device-asns.csv")
    {
        let (head, data) = rows(&render(&f, Format::Netbox, file));
        let allowed: HashSet<&str> = netbox_fields(file).iter().copied().collect();
        for h in &head {
            assert!(
                allowed.contains(h.as_str()),
                "{file}: `{h}` is not a NetBox import field"
            );
        }
        for r in required(file) {
            assert!(
                head.iter().any(|h| h == r),
                "{file}: required `{r}` missing"
            );
        }
        tables.insert(file, data);
    }
    let col = |file: &str, c: &str| -> HashSet<String> {
        tables[file].iter().map(|r| r[c].clone()).collect()
    };
    // Counts: a row per device, per link, and per link end.
    assert_eq!(tables["devices.csv"].len(), f.devices().len());
    assert_eq!(tables["cables.csv"].len(), f.links().len());
    assert_eq!(tables["interfaces.csv"].len(), 2 * f.links().len());
    // Every reference resolves within the export.
    let devices = col("devices.csv", "name");
    assert_eq!(devices.len(), f.devices().len(), "device names are unique");
    let sites = col("sites.csv", "name");
    let halls = col("locations.csv", "name");
    let racks = col("racks.csv", "name");
    let types = col("device-types.csv", "model");
    let roles = col("device-roles.csv", "name");
    for d in &tables["devices.csv"] {
        assert!(
            sites.contains(&d["site"])
                && types.contains(&d["device_type"])
                && roles.contains(&d["role"]),
            "{d:?}"
        );
        assert!(
            d["location"].is_empty() || halls.contains(&d["location"]),
            "{d:?}"
        );
        assert!(d["rack"].is_empty() || racks.contains(&d["rack"]), "{d:?}");
    }
    let interfaces: HashSet<(String, String)> = tables["interfaces.csv"]
        .iter()
        .map(|r| (r["device"].clone(), r["name"].clone()))
        .collect();
    assert_eq!(
        interfaces.len(),
        2 * f.links().len(),
        "interface names are unique per device"
    );
    for c in &tables["cables.csv"] {
        for side in ["a", "b"] {
            let key = (
                c[&format!("side_{side}_device")].clone(),
                c[&format!("side_{side}_name")].clone(),
            );
            assert!(interfaces.contains(&key), "{c:?}");
        }
        assert_eq!(c["length_unit"], "m");
        assert!(c["length"].parse::<f64>().unwrap() > 0.0);
    }
    for ip in &tables["ip-addresses.csv"] {
        assert!(ip["address"].contains('/'));
        if !ip["interface"].is_empty() {
            assert!(
                interfaces.contains(&(ip["device"].clone(), ip["interface"].clone())),
                "{ip:?}"
            );
        }
    }
    // RFC 6996 private 4-byte ASNs.
    assert!(tables["asns.csv"]
        .iter()
        .all(|r| r["asn"].parse::<u64>().unwrap() >= 4_200_000_000));
}

#[test]
fn graphml_and_node_link_round_trip() {
    let f = llama();
    let text = render(&f, Format::Graphml, "fabric.graphml");
    let doc = roxmltree::Document::parse(&text).unwrap();
    let nodes: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("node"))
        .collect();
    let edges: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("edge"))
        .collect();
    assert_eq!(nodes.len(), f.devices().len());
    assert_eq!(edges.len(), f.bundles().len());
    let ids: HashSet<&str> = nodes.iter().map(|n| n.attribute("id").unwrap()).collect();
    assert!(edges
        .iter()
        .all(|e| ids.contains(e.attribute("source").unwrap())
            && ids.contains(e.attribute("target").unwrap())));
    // The links of all bundles add up to the fabric's links.
    let links: u64 = edges
        .iter()
        .map(|e| {
            e.children()
                .find(|c| c.attribute("key") == Some("d3"))
                .unwrap()
                .text()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(links, f.links().len() as u64);

    let v: serde_json::Value =
        serde_json::from_str(&render(&f, Format::Nodelink, "fabric.json")).unwrap();
    assert_eq!(v["nodes"].as_array().unwrap().len(), f.devices().len());
    assert_eq!(v["links"].as_array().unwrap().len(), f.bundles().len());
    assert_eq!(v["directed"], false);
}

#[test]
fn ip_plan_and_dot_overview() {
    let f = llama();
    let plan = render(&f, Format::Ipplan, "ipplan.csv");
    let racks = f.devices_with_role(Role::Rtsw).count();
    assert_eq!(
        plan.lines().filter(|l| l.starts_with("rack,")).count(),
        racks
    );
    assert!(
        plan.lines()
            .any(|l| l.starts_with("region,east,fd00:a1::/40")),
        "{}",
        &plan[..200]
    );
    let prometheus = aifabric_spec::load("prometheus").unwrap();
    let dot = render(&prometheus, Format::Dot, "fabric.dot");
    assert!(dot.starts_with("graph \"prometheus\""));
    // Zones and BAG planes, not devices: 12 zones with GPUs + 2 x 16 planes.
    let nodes = dot
        .lines()
        .filter(|l| l.starts_with("  \"") && !l.contains(" -- "))
        .count();
    assert_eq!(nodes, 12 + 32, "{dot}");
    assert!(
        dot.contains("\"east.bag.plane0\" -- \"west.bag.plane0\""),
        "{dot}"
    );
}

#[test]
fn a_fabric_too_large_for_the_plan_is_a_plan_error_with_its_source() {
    use aifabric_routing::addressing::PlanError;
    use std::error::Error as _;
    let zones: String = (0..257)
        .map(|i| format!("          - name: z{i}\n            fat_tree: {{k: 2}}\n"))
        .collect();
    let yaml = format!(
        "name: big\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n{zones}"
    );
    let f = aifabric_spec::build_str("big.yaml", &yaml).unwrap();
    for (format, name) in [
        (Format::Ipplan, "ipplan.csv"),
        (Format::Netbox, "ip-addresses.csv"),
    ] {
        let e = export::write(&f, format, name, &mut Vec::new()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "addressing plan: region r has more than 256 zones"
        );
        let plan = e.source().and_then(|s| s.downcast_ref::<PlanError>());
        assert_eq!(plan.map(|p| p.to_string()), Some(e.to_string()));
    }
    let e = export::write(&f, Format::Netbox, "nope.csv", &mut Vec::new()).unwrap_err();
    assert_eq!(e.to_string(), "no file nope.csv in this export");
}

/// Every BGP speaker's ASN, not only the first device of each: each rack switch has one of
/// its own (RFC 7938 section 5.2.1), each listed ASN is in asns.csv, GPUs are not listed, and
/// a DSF zone's interface nodes all carry the zone's one ASN, its fabric nodes none.
#[test]
fn device_asns_list_every_switch_once_with_an_asn_of_the_plan() {
    for name in ["llama3-24k", "dsf-l2-zone"] {
        let f = aifabric_spec::load(name).unwrap();
        let (head, devs) = rows(&render(&f, Format::Netbox, "device-asns.csv"));
        assert_eq!(head, ["device", "asn", "speaker"]);
        let (_, asns) = rows(&render(&f, Format::Netbox, "asns.csv"));
        let listed: HashSet<String> = asns.iter().map(|r| r["asn"].clone()).collect();
        // DSF fabric nodes (FDSW, SDSW) carry cells inside the system and speak no BGP.
        let cells = |r: Role| matches!(r, Role::Fdsw | Role::Sdsw);
        let switches = f
            .devices()
            .iter()
            .filter(|d| d.role.is_switch() && !cells(d.role))
            .count();
        assert_eq!(
            devs.len(),
            switches,
            "{name}: one row per BGP switch, no GPU"
        );
        let names: HashSet<&str> = devs.iter().map(|r| r["device"].as_str()).collect();
        assert_eq!(names.len(), devs.len(), "{name}: each device once");
        assert!(devs.iter().all(|r| listed.contains(&r["asn"])), "{name}");
        let racks: Vec<&str> = devs
            .iter()
            .filter(|r| r["device"].contains("rtsw"))
            .map(|r| r["asn"].as_str())
            .collect();
        let distinct: HashSet<&str> = racks.iter().copied().collect();
        assert_eq!(
            distinct.len(),
            racks.len(),
            "{name}: rack switches share no ASN"
        );
        if name == "dsf-l2-zone" {
            assert!(racks.is_empty());
            let zone: HashSet<&str> = devs
                .iter()
                .filter(|r| r["speaker"].ends_with("(DSF system)"))
                .map(|r| r["asn"].as_str())
                .collect();
            assert_eq!(zone.len(), 1, "one ASN for the DSF system: {zone:?}");
        }
    }
}
