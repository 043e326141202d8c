//! A RoCE zone under a BAG (issue 36): its ATSWs go up to the BAG, and every command sees
//! those uplinks. Expectations are the closed forms in `examples/specs/roce-under-bag.yaml`,
//! recomputed here from its counts.

use crate::aifabric;
use serde_json::Value;

fn spec() -> String {
    format!(
        "{}/../../examples/specs/roce-under-bag.yaml",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn json(args: &[&str]) -> Value {
    let out = aifabric().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The example's counts.
const PLANES: f64 = 4.0;
const ATSW: f64 = 2.0;
const ATSW_UPLINKS: f64 = 8.0;
const SPEED_GBPS: f64 = 400.0;
/// 2 AI zones x 4 racks x 16 GPUs at 400G.
const ROCE_GPU_GBPS: f64 = 2.0 * 4.0 * 16.0 * 400.0;

fn l2_to_bag(v: &Value, scope: &str) -> (f64, f64) {
    let t = v["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "l2_to_bag" && t["scope"] == scope)
        .unwrap_or_else(|| panic!("no l2_to_bag row for {scope}: {v}"));
    (
        t["down_gbps"].as_f64().unwrap(),
        t["up_gbps"].as_f64().unwrap(),
    )
}

#[test]
fn roce_zone_has_an_l2_to_bag_row_of_its_atsw_uplinks() {
    let v = json(&["capacity", &spec(), "--json"]);
    let (down, up) = l2_to_bag(&v, "east.dc2.roce");
    assert_eq!(down, ROCE_GPU_GBPS);
    assert_eq!(up, ATSW * ATSW_UPLINKS * SPEED_GBPS);
    // One BAG plane drained: each ATSW keeps (planes - 1) / planes of its uplinks.
    let v = json(&["capacity", &spec(), "--json", "--drain", "east.bag.plane0"]);
    let (_, drained) = l2_to_bag(&v, "east.dc2.roce");
    assert_eq!(drained, up * (PLANES - 1.0) / PLANES);
}

#[test]
fn default_atsw_uplinks_fill_the_default_atsw() {
    // `roce: {}` (Llama 3's 8 AI zones, 9 ATSWs of 576 x 400G, 384 CTSW links each) under a
    // 16-plane BAG: the default 192 uplinks per ATSW, 12 per plane.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.yaml");
    let yaml = "name: d\nregions:\n  - name: east\n    bag: {planes: 16}\n    buildings:\n      - name: dc1\n        zones:\n          - {name: llama, roce: {}}\n";
    std::fs::write(&p, yaml).unwrap();
    let v = json(&["capacity", p.to_str().unwrap(), "--json"]);
    let (down, up) = l2_to_bag(&v, "east.dc1.llama");
    assert_eq!(down, 24_576.0 * 400.0);
    assert_eq!(up, 9.0 * (576.0 - 8.0 * 16.0 * 3.0) * 400.0);
}

#[test]
fn roce_gpus_route_to_the_dsf_zone_through_atsw_and_bag() {
    let v = json(&[
        "routes",
        &spec(),
        "--device",
        "east.dc2.roce.rtsw0",
        "--prefix",
        "east.dc1.dsf.rack0",
        "--json",
    ]);
    let r = &v["routes"][0];
    assert_eq!(r["kind"], "bgp");
    // CTSW, ATSW, BAG, the DSF zone.
    assert_eq!(r["as_path"].as_array().unwrap().len(), 4, "{r}");
    // And back: the DSF zone reaches the RoCE racks over every BAG plane.
    let v = json(&[
        "routes",
        &spec(),
        "--device",
        "east.dc1.dsf.rdsw0",
        "--prefix",
        "east.dc2.roce.rack5",
        "--json",
    ]);
    let hops = v["routes"][0]["next_hops"].as_array().unwrap();
    assert_eq!(hops.len(), PLANES as usize, "{v}");
    // No blackholes, no unreachable racks.
    let v = json(&["blackholes", &spec(), "--json"]);
    assert!(v["blackholes"].as_array().unwrap().is_empty(), "{v}");
}

fn tier_used(tiers: &Value, name: &str) -> bool {
    tiers
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["tier"] == name && t["max"].as_f64().unwrap() > 0.0)
}

#[test]
fn spread_collective_crosses_the_bag_in_both_engines() {
    // Flow engine: an all-reduce over all 256 GPUs of both zones.
    let v = json(&[
        "collective",
        &spec(),
        "--gpus",
        "256",
        "--placement",
        "spread",
        "--sizes",
        "1M",
        "--json",
    ]);
    assert!(tier_used(&v["largest"]["tiers"], "atsw-bag"), "{v}");
    // Both engines: a ring all-reduce over GPUs spread over both zones.
    let v = json(&[
        "traffic",
        &spec(),
        "--pattern",
        "ring-allreduce",
        "--gpus",
        "32",
        "--placement",
        "spread",
        "--size",
        "256K",
        "--engine",
        "both",
        "--json",
    ]);
    assert!(tier_used(&v["flow"]["tiers"], "atsw-bag"), "{v}");
    let q = v["packet"]["queues"].as_array().unwrap();
    assert!(q.iter().any(|t| t["tier"] == "atsw-bag"), "{v}");
    assert_eq!(v["packet"]["unfinished"], 0, "{v}");
}

#[test]
fn a_bag_plane_takes_its_share_of_the_roce_zones_routed_capacity() {
    let v = json(&["failures", &spec(), "--sweep", "single:plane", "--json"]);
    // An AI zone and the DSF building share the ATSWs' BAG uplinks: 2 x 8 x 400G.
    let pair = "east.dc1<->east.dc2.roce.ai_zone0";
    assert_eq!(
        v["summary"]["healthy_gbps"][pair].as_f64(),
        Some(ATSW * ATSW_UPLINKS * SPEED_GBPS),
        "{v}"
    );
    for s in v["scenarios"].as_array().unwrap() {
        let kept = s["capacity_retained"][pair].as_f64().unwrap();
        assert!((kept - (PLANES - 1.0) / PLANES).abs() < 1e-9, "{s}");
        let t = s["tiers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tier"] == "l2_to_bag" && t["scope"] == "east.dc2.roce")
            .unwrap();
        let after = t["after"].as_f64().unwrap();
        assert!((after - 8.0 * PLANES / (PLANES - 1.0)).abs() < 1e-9, "{t}");
    }
}

/// `validate` on `yaml`: exit 2, and the error text.
fn refused(yaml: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, yaml).unwrap();
    let out = aifabric()
        .args(["validate", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn zones_that_cannot_reach_the_bag_are_refused_naming_zone_and_field() {
    let base = std::fs::read_to_string(spec()).unwrap();
    let e = refused(&base.replace("atsw_uplinks: 8 ", "atsw_uplinks: 6 "));
    assert!(e.contains("zone `east.dc2.roce`"), "{e}");
    assert!(e.contains("`atsw_uplinks`"), "{e}");
    assert!(e.contains("`atsw_uplinks: 4` or `8`"), "{e}");
    let e = refused(&base.replace("atsw_uplinks: 8 ", "atsw_uplinks: 0 "));
    assert!(
        e.contains("zone `east.dc2.roce`: `atsw_uplinks` is 0"),
        "{e}"
    );
    // More uplinks than the ATSW has ports beside its 16 CTSW links (576 x 400G).
    let e = refused(&base.replace("atsw_uplinks: 8 ", "atsw_uplinks: 564 "));
    assert!(
        e.contains("zone `east.dc2.roce`: `atsw_uplinks` = 564"),
        "{e}"
    );
    assert!(e.contains("`atsw_uplinks: 560`"), "{e}");
    // A fat tree and a DSF zone without EDSWs have nothing that goes up to BAG.
    let ft = base.replace(
        "dsf_l1: {rdsw: 8, fdsw: 4, edsw: 2, links_per_fdsw: 4, gpus_per_rdsw: 16, edsw_uplinks: 8}",
        "fat_tree: {k: 4}",
    );
    let e = refused(&ft);
    assert!(e.contains("zone `east.dc1.dsf` is a `fat_tree`"), "{e}");
    let e = refused(&base.replace("edsw: 2,", "edsw: 0,"));
    assert!(e.contains("zone `east.dc1.dsf` has `edsw: 0`"), "{e}");
}

#[test]
fn no_path_names_the_zone_left_unconnected() {
    // The same zones in a region without BAG: nothing joins the two buildings.
    let base = std::fs::read_to_string(spec()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nobag.yaml");
    std::fs::write(
        &p,
        base.replace("    bag: {planes: 4, chassis_per_plane: 1}\n", ""),
    )
    .unwrap();
    let p = p.to_str().unwrap();
    let out = aifabric()
        .args(["collective", p, "--gpus", "256", "--placement", "spread"])
        .args(["--sizes", "1M"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(e.contains("flows have no path"), "{e}");
    assert!(
        e.contains("zone `east.dc1.dsf` has no link out of itself"),
        "{e}"
    );
    assert!(e.contains("region `east` has no BAG layer"), "{e}");
    let out = aifabric()
        .args(["traffic", p, "--pattern", "permutation", "--gpus", "256"])
        .args([
            "--placement",
            "spread",
            "--size",
            "64K",
            "--engine",
            "packet",
        ])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(e.contains("has no BAG layer"), "{e}");
}
