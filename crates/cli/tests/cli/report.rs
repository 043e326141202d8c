//! `aifabric report --compare A.json B.json`: what changed between two reports.

use crate::run;
use serde_json::Value;

/// A report of the healthy fabric against one with an aggregation switch failed: the
/// comparison names the cluster tier's up capacity and ratio with both values (the closed
/// form: one of 16 aggregation uplinks' worth lost, 12.8 -> 12 Tb/s), the sections that did
/// not move, and nothing between a report and itself. Bad files exit 2 naming them.
#[test]
fn compare_names_what_moved_between_two_reports() {
    let dir = tempfile::tempdir().unwrap();
    let report = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let (code, _, err) = run(&[
            &["report", "htsim-k8", "--out", out.to_str().unwrap()],
            extra,
        ]
        .concat());
        assert_eq!(code, Some(0), "{err}");
        out.join("report.json").to_str().unwrap().to_owned()
    };
    let (a, b) = (report("a", &[]), report("b", &["--fail", "r.b.z.atsw0"]));
    let compare = |x: &str, y: &str| {
        let (code, out, err) = run(&["report", "--compare", x, y, "--json"]);
        assert_eq!(code, Some(0), "{err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };
    let same = compare(&a, &a);
    assert_eq!(same["changes"], Value::Array(vec![]));
    let c = compare(&a, &b);
    let changes = c["changes"].as_array().unwrap();
    let up = changes
        .iter()
        .find(|x| x["section"] == "tiers" && x["field"] == "up_tbps")
        .expect("the tier that lost capacity");
    assert_eq!(up["item"], "ctsw r.b.z");
    assert_eq!(
        (up["a"].as_f64(), up["b"].as_f64()),
        (Some(12.8), Some(12.0))
    );
    assert!(
        changes.iter().all(|x| x["section"] != "fabric"),
        "{changes:?}"
    );
    assert!(c["unchanged"]
        .as_array()
        .unwrap()
        .contains(&Value::from("fabric")));
    let (code, text, _) = run(&["report", "--compare", &a, &b]);
    assert_eq!(code, Some(0));
    assert!(
        text.contains("ctsw r.b.z: up_tbps 12.8 -> 12 (-6.25%)"),
        "{text}"
    );

    let (code, _, err) = run(&["report", "--compare", &a, "nowhere.json"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("cannot read nowhere.json"), "{err}");
    let not = dir.path().join("not.json");
    std::fs::write(&not, "{\"x\": 1}").unwrap();
    let (code, _, err) = run(&["report", "--compare", &a, not.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not a report"), "{err}");
}
