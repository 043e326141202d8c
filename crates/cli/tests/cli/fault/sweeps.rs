//! Sweeps: bombs refused before they allocate (draws, grids), and tampered shards refused by
//! the merge instead of a panic or wrong numbers.

use super::common::{aifabric, refused, small_sweep, sweep_dir};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn setup(sweep: &str) -> tempfile::TempDir {
    sweep_dir("sweep.yaml", sweep)
}

fn path(d: &Path, name: &str) -> String {
    d.join(name).display().to_string()
}

#[test]
fn sweep_bombs_are_refused_before_they_allocate() {
    // 10^12 draws with the default draws_per_task: 4 billion tasks (a 15 GB list) before.
    let t = setup(&small_sweep(1_000_000_000_000, 10).replace("draws_per_task: 10\n", ""));
    refused(
        &["sweep", &path(t.path(), "sweep.yaml")],
        Duration::from_secs(10),
        &["1,000,000,000,000", "limit of 1,000,000 Monte Carlo draws"],
    );
    // A grid of 20^4 = 160,000 designs: refused from its size, before any is expanded.
    let values: Vec<String> = (0..20).map(|i| format!("{}", i + 1)).collect();
    let grid = format!(
        "spec: two.yaml\ngrid:\n  a.x: [{v}]\n  a.y: [{v}]\n  a.z: [{v}]\n  a.w: [{v}]\n\
         failures: {{sweep: single}}\n",
        v = values.join(", ")
    );
    let t = setup(&grid);
    refused(
        &["sweep", &path(t.path(), "sweep.yaml")],
        Duration::from_secs(10),
        &["160,000 designs", "limit of 100,000"],
    );
}

#[test]
fn tampered_shards_are_refused_not_merged() {
    let t = setup(&small_sweep(40, 10));
    let d = t.path();
    let sweep = path(d, "sweep.yaml");
    for i in 0..2 {
        let o = aifabric()
            .args(["sweep", &sweep, "--shard", &format!("{i}/2")])
            .args(["--out", &path(d, &format!("s{i}.json"))])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let read = |i: usize| -> Value {
        serde_json::from_str(&std::fs::read_to_string(d.join(format!("s{i}.json"))).unwrap())
            .unwrap()
    };
    // The untouched shards merge.
    let o = aifabric()
        .args([
            "sweep",
            "merge",
            &sweep,
            &path(d, "s0.json"),
            &path(d, "s1.json"),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    type Tamper = fn(&mut Value);
    let cases: [(&str, Tamper, &str); 7] = [
        (
            "design out of range",
            |v| v["results"][0]["design"] = 99.into(),
            "design 99",
        ),
        (
            "draws inflated",
            |v| v["results"][0]["rows"][0]["draws"] = 500.into(),
            "draws where the task draws 10",
        ),
        (
            "capacity above 1",
            |v| v["results"][0]["rows"][0]["min_capacity_retained"] = 7.5.into(),
            "min_capacity_retained 7.5, outside [0, 1]",
        ),
        (
            "draws past any sweep's (sums that would overflow)",
            |v| v["results"][0]["rows"][0]["draws"] = u64::MAX.into(),
            "draws, outside 1..=1000000",
        ),
        (
            "shard index beyond its count",
            |v| v["shard"] = serde_json::json!([3, 2]),
            "shard 3/2",
        ),
        (
            "a task moved to the other shard",
            |v| v["results"][0]["task"] = 1.into(),
            "which is shard 1/2's",
        ),
        (
            "a failure row in a shard made a workload row",
            |v| {
                v["results"][0]["workload"] =
                    serde_json::json!({"workload": "x", "scenario": "healthy", "time_us": 1.0})
            },
            "a workload row in a failure-study task",
        ),
    ];
    for (what, tamper, says) in cases {
        let mut v = read(0);
        tamper(&mut v);
        std::fs::write(d.join("bad.json"), v.to_string()).unwrap();
        let r = refused(
            &[
                "sweep",
                "merge",
                &sweep,
                &path(d, "bad.json"),
                &path(d, "s1.json"),
            ],
            Duration::from_secs(30),
            &[says],
        );
        assert!(
            r.stderr.contains("run the shard again") || what.starts_with("shard index"),
            "{what}: {}",
            r.stderr
        );
    }
}
