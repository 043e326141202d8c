//! `aifabric report --compare A.json B.json`: what changed between two reports.

use crate::{emit_versioned, Failure};
use std::fmt::Write;

/// Compare the reports `a` and `b` and print the changes.
pub(crate) fn run(a: &std::path::Path, b: &std::path::Path, json: bool) -> Result<(), Failure> {
    let c = aifabric::export::compare_reports(a, b)?;
    emit_versioned(json, &c, |c| render(c, a, b))
}

fn value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "-".to_owned(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) if n.is_f64() => {
            // Four decimals at most, trailing zeros dropped: 12.8, 1.0667, 12.
            let s = format!("{:.4}", n.as_f64().unwrap_or(f64::NAN));
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
        serde_json::Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

fn render(c: &aifabric::export::Comparison, a: &std::path::Path, b: &std::path::Path) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# {} ({}) -> {} ({}): {} change{}",
        a.display(),
        c.fabric_a,
        b.display(),
        c.fabric_b,
        c.changes.len(),
        if c.changes.len() == 1 { "" } else { "s" }
    );
    // Items alike (a tier's scopes built alike, moved the same way) are one line, as the
    // report groups them; the JSON lists each.
    let mut lines: Vec<(&aifabric::export::Change, Vec<&str>)> = Vec::new();
    for x in &c.changes {
        let kind = |i: &str| i.split(' ').next().unwrap_or("").to_owned();
        match lines.iter_mut().find(|(y, _)| {
            y.section == x.section
                && y.field == x.field
                && y.a == x.a
                && y.b == x.b
                && kind(&y.item) == kind(&x.item)
        }) {
            Some((_, items)) => items.push(&x.item),
            None => lines.push((x, vec![&x.item])),
        }
    }
    let mut section = "";
    for (x, items) in lines {
        if x.section != section {
            section = x.section;
            let _ = writeln!(o, "{section}");
        }
        let item = match items.len() {
            _ if x.item.is_empty() => String::new(),
            1 => format!("{}: ", x.item),
            n => format!("{} and {} more alike: ", x.item, n - 1),
        };
        let rel = x
            .relative
            .map_or_else(String::new, |r| format!(" ({:+.2}%)", 100.0 * r));
        let _ = writeln!(
            o,
            "  {item}{} {} -> {}{rel}",
            x.field,
            value(&x.a),
            value(&x.b)
        );
    }
    if !c.unchanged.is_empty() {
        let _ = writeln!(o, "unchanged: {}", c.unchanged.join(", "));
    }
    o
}
