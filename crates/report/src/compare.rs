//! Two reports side by side (`aifabric report --compare A.json B.json`): what changed between
//! two runs, a change to the spec or the scenario before and after. It reads the
//! `report.json` files as written (their contract, [`crate::data::ReportData`]), so reports
//! of two versions of aifabric compare as long as the fields are there; a field only one
//! of them has is a change too.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One figure that differs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// The report's section (`fabric`, `tiers`, `inter_bag`, `failures`, `collectives`,
    /// `job`, `jobs`).
    pub section: &'static str,
    /// What in it: a tier and its scope, a region pair, a job, a mode at a size.
    pub item: String,
    /// The figure.
    pub field: String,
    /// Its value in A (`null`: A has none).
    pub a: Value,
    /// Its value in B.
    pub b: Value,
    /// `b / a - 1` when both are numbers and `a` is not 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative: Option<f64>,
}

/// What changed from report A to report B.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// A's fabric.
    pub fabric_a: String,
    /// B's fabric.
    pub fabric_b: String,
    /// Every figure that differs, section by section.
    pub changes: Vec<Change>,
    /// The sections with no change.
    pub unchanged: Vec<&'static str>,
}

/// The sections compared, in the page's order.
pub const SECTIONS: [&str; 7] = [
    "fabric",
    "tiers",
    "inter_bag",
    "failures",
    "collectives",
    "job",
    "jobs",
];

/// Figures of one section: (item, field) -> value.
type Figures = BTreeMap<(String, String), Value>;

fn put(m: &mut Figures, item: impl Into<String>, field: &str, v: &Value) {
    m.insert((item.into(), field.to_owned()), v.clone());
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A section's figures, flattened.
fn figures(r: &Value, section: &str) -> Figures {
    let mut m = Figures::new();
    let arr = |k: &str| r[k].as_array().cloned().unwrap_or_default();
    match section {
        "fabric" => {
            for f in ["gpus", "switches", "links", "power_mw"] {
                put(&mut m, "", f, &r[f]);
            }
        }
        "tiers" => {
            for t in arr("tiers") {
                let item = format!("{} {}", text(&t["tier"]), text(&t["scope"]));
                for f in ["down_tbps", "up_tbps", "ratio"] {
                    put(&mut m, item.clone(), f, &t[f]);
                }
            }
        }
        "inter_bag" => {
            for p in arr("inter_bag") {
                let item = format!("{}-{}", text(&p[0]), text(&p[1]));
                put(&mut m, item, "tbps", &p[2]);
            }
        }
        "failures" => {
            let f = &r["failures"];
            if !f.is_null() {
                put(&mut m, "", "scenarios", &f["scenarios"]);
                let w = &f["worst"][0];
                put(&mut m, "worst", "scenario", &w["scenario"]);
                put(
                    &mut m,
                    "worst",
                    "capacity_retained",
                    &w["capacity_retained"],
                );
                put(&mut m, "worst", "gpus_isolated", &w["gpus_isolated"]);
                if let Some(cdf) = f["cdf"].as_object() {
                    for (pair, v) in cdf {
                        let min = v.as_array().and_then(|a| a.first()).cloned();
                        put(
                            &mut m,
                            pair.clone(),
                            "least kept",
                            &min.unwrap_or(Value::Null),
                        );
                    }
                }
            }
        }
        "collectives" => {
            for b in arr("busbw") {
                for p in b["points"].as_array().cloned().unwrap_or_default() {
                    let item = format!("{} at {} B", text(&b["lb"]), text(&p[0]));
                    put(&mut m, item, "busbw_gbps", &p[1]);
                }
            }
        }
        "job" => {
            let j = &r["job"];
            for b in j["bars"].as_array().cloned().unwrap_or_default() {
                let item = format!("{} {}", text(&j["name"]), text(&b["label"]));
                for f in ["step_ms", "mfu"] {
                    put(&mut m, item.clone(), f, &b[f]);
                }
            }
        }
        "jobs" => {
            for j in r["jobs"]["rows"].as_array().cloned().unwrap_or_default() {
                let item = text(&j["name"]);
                for f in ["gpus", "alone_ms", "together_ms", "mfu", "scenario"] {
                    put(&mut m, item.clone(), f, &j[f]);
                }
            }
        }
        _ => {}
    }
    m
}

/// Whether two values are the same figure (numbers within a part in 10^9).
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        _ => a == b,
    }
}

/// What changed from `a` to `b` (two `report.json` documents).
pub fn compare(a: &Value, b: &Value) -> Comparison {
    let mut changes = Vec::new();
    let mut unchanged = Vec::new();
    for section in SECTIONS {
        let (fa, fb) = (figures(a, section), figures(b, section));
        let before = changes.len();
        let keys: std::collections::BTreeSet<&(String, String)> =
            fa.keys().chain(fb.keys()).collect();
        // Sorted by item and field (a scope, a pair, a job: each with its figures together).
        for (item, field) in keys {
            let (x, y) = (
                fa.get(&(item.clone(), field.clone()))
                    .unwrap_or(&Value::Null),
                fb.get(&(item.clone(), field.clone()))
                    .unwrap_or(&Value::Null),
            );
            if same(x, y) {
                continue;
            }
            let relative = match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) if p != 0.0 => Some(q / p - 1.0),
                _ => None,
            };
            changes.push(Change {
                section,
                item: item.clone(),
                field: field.clone(),
                a: x.clone(),
                b: y.clone(),
                relative,
            });
        }
        if changes.len() == before {
            unchanged.push(section);
        }
    }
    Comparison {
        fabric_a: text(&a["fabric"]),
        fabric_b: text(&b["fabric"]),
        changes,
        unchanged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(up: f64, worst: &str, together: f64) -> Value {
        json!({
            "fabric": "f", "gpus": 64, "switches": 12, "links": 96, "power_mw": 0.1,
            "tiers": [
                {"tier": "rtsw", "scope": "r.b.z", "down_tbps": 6.4, "up_tbps": up, "ratio": 6.4 / up},
                {"tier": "ctsw", "scope": "r.b.z", "down_tbps": 6.4, "up_tbps": 3.2, "ratio": 2.0}
            ],
            "inter_bag": [],
            "failures": {"scenarios": 4, "worst": [{"scenario": worst, "capacity_retained": 0.75, "gpus_isolated": 0}], "cdf": {"a<->b": [0.75, 1.0]}},
            "busbw": [{"lb": "ecmp", "points": [[1048576, 10.5]]}],
            "jobs": {"rows": [{"name": "j", "gpus": 8, "alone_ms": 100.0, "together_ms": together, "mfu": 0.4, "scenario": null}]}
        })
    }

    #[test]
    fn the_same_report_has_no_change() {
        let r = report(6.4, "plane:p0", 110.0);
        let c = compare(&r, &r);
        assert!(c.changes.is_empty(), "{:?}", c.changes);
        assert_eq!(c.unchanged, SECTIONS);
    }

    #[test]
    fn each_figure_that_moved_is_named_with_both_values() {
        let c = compare(
            &report(6.4, "plane:p0", 110.0),
            &report(3.2, "plane:p1", 121.0),
        );
        let got: Vec<(&str, &str, &str)> = c
            .changes
            .iter()
            .map(|x| (x.section, x.item.as_str(), x.field.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("tiers", "rtsw r.b.z", "ratio"),
                ("tiers", "rtsw r.b.z", "up_tbps"),
                ("failures", "worst", "scenario"),
                ("jobs", "j", "together_ms"),
            ]
        );
        let up = &c.changes[1];
        assert_eq!((up.a.as_f64(), up.b.as_f64()), (Some(6.4), Some(3.2)));
        assert!((up.relative.unwrap() + 0.5).abs() < 1e-12);
        assert!((c.changes[3].relative.unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(c.unchanged, ["fabric", "inter_bag", "collectives", "job"]);
    }

    #[test]
    fn a_row_only_one_report_has_is_a_change() {
        let a = report(6.4, "plane:p0", 110.0);
        let mut b = a.clone();
        b["jobs"]["rows"].as_array_mut().unwrap().clear();
        let c = compare(&a, &b);
        assert!(c
            .changes
            .iter()
            .all(|x| x.section == "jobs" && x.item == "j" && x.b.is_null()));
        assert_eq!(
            c.changes.len(),
            4,
            "gpus, alone, together, mfu: {:?}",
            c.changes
        );
    }
}
