//! `aifabric goodput`: the table, `--json`, and a rates file's error located with exit 2.

use std::path::Path;

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    crate::outcome(crate::aifabric().current_dir(examples()).args(args))
}

#[test]
fn llama3_16k_job_table_and_json() {
    let (code, out, err) = run(&[
        "goodput",
        "llama3-24k",
        "--jobs",
        "clusters/llama3-24k-16k.yaml",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let row: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with("llama3-405b-16k "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        row[..4],
        ["llama3-405b-16k", "16,384", "7.76", "3.09"],
        "{out}"
    );
    assert!(out.contains("dominated by: gpu 35%, hbm3 17%"), "{out}");
    let (code, out, _) = run(&[
        "goodput",
        "llama3-24k",
        "--jobs",
        "clusters/llama3-24k-16k.yaml",
        "--rates",
        "rates/llama3.yaml",
        "--json",
    ]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["rates"], "rates/llama3.yaml");
    let job = &v["jobs"][0];
    assert_eq!(job["checkpoint_write_s"], 30.0);
    assert!(job["mtbi_h"].as_f64().unwrap() > 3.09);
}

#[test]
fn a_bad_rates_file_is_located_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let rates = dir.path().join("r.yaml");
    std::fs::write(
        &rates,
        "per_element_per_day:\n  switch: 1e-5\n  cable: 1e-5\n",
    )
    .unwrap();
    let (code, _, err) = run(&[
        "goodput",
        "llama3-24k",
        "--jobs",
        "clusters/llama3-24k-16k.yaml",
        "--rates",
        rates.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("r.yaml:3:3: unknown element class `cable`"),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
}

/// The README's rates file runs as written.
#[test]
fn the_readme_rates_file_is_valid() {
    let readme = std::fs::read_to_string(examples().join("../README.md")).unwrap();
    let block = readme
        .split("```yaml\n")
        .find(|b| b.starts_with("per_gpu_per_day:"))
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rates = dir.path().join("rates.yaml");
    std::fs::write(&rates, block).unwrap();
    let (code, out, err) = run(&[
        "goodput",
        "llama3-24k",
        "--jobs",
        "clusters/llama3-24k-16k.yaml",
        "--rates",
        rates.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("checkpoint 30 s"), "{out}");
}
