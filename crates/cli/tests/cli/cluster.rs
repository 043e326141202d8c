//! `aifabric cluster`, `failures --jobs` and `plan` end to end: a job alone in a cluster is
//! the job `aifabric job` predicts; bad cluster and operations files exit 2 naming the line.

use assert_cmd::Command;

fn aifabric() -> Command {
    let mut c = Command::cargo_bin("aifabric").unwrap();
    // Paths in the examples are relative to the repository root.
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = aifabric().args(args).arg("--json").output().unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

const TWO: &str = "examples/clusters/llama3-24k-two.yaml";

#[test]
fn a_job_alone_in_a_cluster_steps_as_aifabric_job_predicts_it() {
    let job = json(&[
        "job",
        "llama3-24k",
        "--job",
        "examples/jobs/llama3-405b-16k.yaml",
    ]);
    let c = json(&["cluster", "llama3-24k", "--jobs", TWO]);
    assert_eq!(c["gpus_used"], 16384 + 4096);
    let jobs = c["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    // Packed first, the 16k job sits where `aifabric job` puts it: the same step alone.
    assert_eq!(jobs[0]["alone_step_s"], job["result"]["step_s"]);
    for j in jobs {
        let (alone, together) = (
            j["alone_step_s"].as_f64().unwrap(),
            j["together_step_s"].as_f64().unwrap(),
        );
        assert!(together >= alone * (1.0 - 1e-9), "{j}");
        assert!(
            j["impact"].is_null(),
            "a healthy run has no scenario impact"
        );
    }
    // Under a scenario: the rack switch of the 16k job's first rack interrupts it only.
    let c = json(&[
        "cluster",
        "llama3-24k",
        "--jobs",
        TWO,
        "--fail",
        "east.dc1.llama.rtsw0",
    ]);
    assert_eq!(c["jobs"][0]["impact"]["status"], "interrupted");
    assert_eq!(c["jobs"][0]["impact"]["lost_gpus"], 16);
    assert_ne!(c["jobs"][1]["impact"]["status"], "interrupted");
}

#[test]
fn failures_with_jobs_rank_what_interrupts_most_first() {
    let r = json(&[
        "failures",
        "llama3-24k",
        "--sweep",
        "single:hall",
        "--jobs",
        TWO,
        "--simulate",
        "1",
    ]);
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8, "every hall");
    let gpus: Vec<u64> = rows
        .iter()
        .map(|x| x["interrupted_gpus"].as_u64().unwrap())
        .collect();
    assert!(gpus.windows(2).all(|w| w[0] >= w[1]), "{gpus:?}");
    // A hall holding GPUs of both jobs stops both: all 20,480 GPUs.
    assert_eq!(gpus[0], 16384 + 4096);
    assert_eq!(r["simulated"], 1);
}

#[test]
fn plan_prints_the_best_and_the_naive_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let ops = dir.path().join("ops.yaml");
    std::fs::write(
        &ops,
        "max_concurrent: 2\noperations:\n\
         - { name: a, fail: [east.dc1.llama.rtsw0], hours: 2 }\n\
         - { name: b, drain: [east.dc1.llama.atsw0], hours: 3 }\n\
         - { name: c, fail: [east.dc1.llama.rtsw1], hours: 2 }\n",
    )
    .unwrap();
    let r = json(&[
        "plan",
        "llama3-24k",
        "--jobs",
        TWO,
        "--ops",
        ops.to_str().unwrap(),
    ]);
    let (best, naive) = (
        r["best"]["lost_gpu_hours"].as_f64().unwrap(),
        r["naive"]["lost_gpu_hours"].as_f64().unwrap(),
    );
    assert!(best <= naive, "{best} > {naive}");
    // Both rack switches stop the 16k job: together they cost one 2-hour stop.
    assert!(best <= 2.0 * 16384.0 + 3.0 * 4096.0, "{best}");
}

#[test]
fn bad_cluster_and_operations_files_exit_2_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    let small = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/jobs/small-64.yaml"
    );
    std::fs::write(
        &bad,
        format!("jobs:\n  - file: {small}\n    placement: packd\n"),
    )
    .unwrap();
    let o = aifabric()
        .args(["cluster", "llama3-24k", "--jobs", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.yaml:3"), "{err}");
    assert!(err.contains("packd"), "{err}");
    let ops = dir.path().join("ops.yaml");
    std::fs::write(
        &ops,
        "operations:\n  - { name: a, drain: [east.dc1.llama.atsw99], hours: 1 }\n",
    )
    .unwrap();
    let o = aifabric()
        .args([
            "plan",
            "llama3-24k",
            "--jobs",
            TWO,
            "--ops",
            ops.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("ops.yaml:2"), "{err}");
}

#[test]
fn the_report_has_the_running_jobs_and_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let ops = dir.path().join("ops.yaml");
    std::fs::write(
        &ops,
        "operations:\n  - { name: a, fail: [east.dc1.llama.rtsw0], hours: 2 }\n",
    )
    .unwrap();
    let out = dir.path().join("report");
    let o = aifabric()
        .args([
            "report",
            "llama3-24k",
            "--out",
            out.to_str().unwrap(),
            "--jobs",
            TWO,
            "--ops",
            ops.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let data: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let jobs = &data["jobs"];
    assert_eq!(jobs["rows"].as_array().unwrap().len(), 2);
    assert!(jobs["rows"][0]["scenario"].is_null(), "a healthy report");
    // One 2-hour outage of the 16k job's rack switch: 2 h x 16,384 GPUs.
    assert_eq!(jobs["plan_cost"][0], 2.0 * 16384.0);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("id=\"jobs\""));
    assert!(html.contains("Maintenance plan"));
    assert!(html.contains("llama3-70b-4k"));
}

/// The README's cluster and operations blocks load as written: the cluster next to the
/// example jobs on `llama3-24k`, the operations on `prometheus`.
#[test]
fn the_readme_cluster_and_operations_blocks_load() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let blocks: Vec<&str> = readme
        .split("```yaml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    let cluster = blocks.iter().find(|b| b.starts_with("jobs:")).unwrap();
    let (file, src) = aifabric::stages::spec::cluster::parse_cluster("README.md", cluster).unwrap();
    let f = aifabric::stages::spec::load("llama3-24k").unwrap();
    let dir = std::path::PathBuf::from(format!("{root}/examples/clusters"));
    let c = aifabric::stages::spec::cluster::resolve_cluster(&f, &file, &src, &dir).unwrap();
    assert_eq!(c.gpus(), 16384 + 4096);
    let ops = blocks
        .iter()
        .find(|b| b.starts_with("max_concurrent:"))
        .unwrap();
    let p = aifabric::stages::spec::load("prometheus").unwrap();
    let ops = aifabric::stages::spec::ops::parse_ops(&p, "README.md", ops).unwrap();
    assert_eq!(ops.ops.len(), 4);
    assert_eq!(ops.limits.len(), 1);
}

/// `drift --jobs` is what `cluster --as-built` says of each job: the 16k job slowed by the
/// spine cables not laid (eight cluster switches' downlinks), the 4k job untouched.
#[test]
fn drift_costs_the_jobs_what_cluster_as_built_says() {
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("nb");
    let nb_s = nb.to_str().unwrap();
    let o = aifabric()
        .args(["export", "llama3-24k", "--format", "netbox", "--out", nb_s])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cables = nb.join("cables.csv");
    let text = std::fs::read_to_string(&cables).unwrap();
    let to_spine_0_7 = |l: &str| {
        let b = l.split(',').nth(3).unwrap_or("");
        (0..8).any(|k| b == format!("east.dc1.llama.ctsw{k}"))
    };
    let kept: Vec<&str> = text.lines().filter(|l| !to_spine_0_7(l)).collect();
    std::fs::write(&cables, kept.join("\n") + "\n").unwrap();
    // `drift --jobs` on the export as it is now: exit 1 (drift found) and its JSON.
    let drift = || {
        let o = aifabric()
            .args([
                "drift",
                "--plan",
                "llama3-24k",
                "--netbox",
                nb_s,
                "--jobs",
                TWO,
                "--json",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let d = drift();
    let c = json(&["cluster", "llama3-24k", "--jobs", TWO, "--as-built", nb_s]);
    let (costs, rows) = (d["jobs"].as_array().unwrap(), c["jobs"].as_array().unwrap());
    assert_eq!(costs.len(), 2);
    for (cost, row) in costs.iter().zip(rows) {
        assert_eq!(cost["name"], row["name"]);
        assert_eq!(cost["as_built_step_s"], row["scenario_step_s"]);
        assert_eq!(cost["planned_step_s"], row["together_step_s"]);
        assert_eq!(cost["impact"], row["impact"]);
    }
    assert_eq!(costs[0]["impact"]["status"], "slowed", "{}", costs[0]);
    assert!(costs[0]["impact"]["slowdown"].as_f64().unwrap() > 1.01);
    assert_eq!(costs[1]["impact"]["status"], "untouched", "{}", costs[1]);

    // The cables laid, but the same switches' ports at half their speed: the 16k job is
    // slowed against the plan's step, and says why.
    std::fs::write(&cables, &text).unwrap();
    let ifaces = nb.join("interfaces.csv");
    let halved: Vec<String> = std::fs::read_to_string(&ifaces)
        .unwrap()
        .lines()
        .map(|l| {
            let mut f: Vec<String> = l.split(',').map(str::to_owned).collect();
            if (0..8).any(|k| f[0] == format!("east.dc1.llama.ctsw{k}")) {
                f[3] = (f[3].parse::<u64>().unwrap() / 2).to_string();
            }
            f.join(",")
        })
        .collect();
    std::fs::write(&ifaces, halved.join("\n") + "\n").unwrap();
    let slow = drift();
    assert_eq!(
        slow["counts"]["missing_cable"],
        serde_json::Value::Null,
        "{}",
        slow["counts"]
    );
    let costs = slow["jobs"].as_array().unwrap();
    assert_eq!(costs[0]["planned_step_s"], rows[0]["together_step_s"]);
    assert_eq!(costs[0]["impact"]["status"], "slowed", "{}", costs[0]);
    assert!(costs[0]["impact"]["slowdown"].as_f64().unwrap() > 1.01);
    let why = costs[0]["impact"]["why"].as_str().unwrap();
    assert!(why.contains("planned links run at another speed"), "{why}");
    assert_eq!(costs[1]["impact"]["status"], "untouched", "{}", costs[1]);
}

/// A 32-GPU job small enough for the packet engine in a test: four servers, two pipeline
/// stages of two data-parallel ranks of eight tensor-parallel GPUs.
const TINY: &str = "name: tiny-32\ngpus: 32\nparallelism: { tp: 8, pp: 2, dp: 2 }\nmodel: { \
                    parameters: 1.0e8, layers: 4, hidden: 1024, sequence_length: 1024, \
                    micro_batch: 1, global_batch: 8 }\ncompute: { peak_tflops: 989, \
                    efficiency: 0.4 }\nplacement: packed\n";

/// At packet level (`--engine packet`), a job alone in a cluster steps as `aifabric job
/// --engine packet` predicts it (the same phases run by the packet engine), and the JSON
/// says what ran; under a scenario the jobs' runs there are counted apart; `plan` takes the
/// engine too; `--engine both` is refused (exit 2).
#[test]
fn at_packet_level_a_job_alone_in_a_cluster_steps_as_aifabric_job_predicts_it() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("tiny.yaml");
    std::fs::write(&job, TINY).unwrap();
    let c = dir.path().join("c.yaml");
    std::fs::write(&c, "jobs:\n  - file: tiny.yaml\n").unwrap();
    let (job, c) = (job.to_str().unwrap(), c.to_str().unwrap());
    let j = json(&["job", "llama3-24k", "--job", job, "--engine", "packet"]);
    let r = json(&["cluster", "llama3-24k", "--jobs", c, "--engine", "packet"]);
    assert_eq!(r["engine"], "packet");
    let row = &r["jobs"][0];
    assert_eq!(row["alone_step_s"], j["result"]["step_s"]);
    assert_eq!(row["together_step_s"], row["alone_step_s"]);
    let p = &r["packet"];
    assert_eq!(
        p["alone"]["phases_simulated"],
        j["packet"]["phases_simulated"]
    );
    assert!(p["alone"]["events"].as_u64().unwrap() > 0);
    assert_eq!(
        p["together"]["phases_timed"], 0,
        "nothing shared, nothing more run"
    );
    assert!(p["scenario"].is_null());
    // The flow engine's cluster is another prediction.
    let flow = json(&["cluster", "llama3-24k", "--jobs", c]);
    assert_eq!(flow["engine"], "flow");
    assert!(flow["packet"].is_null());
    assert_ne!(flow["jobs"][0]["alone_step_s"], row["alone_step_s"]);
    // A drained cluster switch two of the job's links cross: the job runs again at packet
    // level there (counted apart), as fast.
    let s = json(&[
        "cluster",
        "llama3-24k",
        "--jobs",
        c,
        "--engine",
        "packet",
        "--drain",
        "east.dc1.llama.ctsw1",
    ]);
    assert!(s["packet"]["scenario"]["phases_timed"].as_u64().unwrap() > 0);
    let row = &s["jobs"][0];
    assert_eq!(row["impact"]["status"], "untouched");
    assert!(row["impact"]["why"]
        .as_str()
        .unwrap()
        .contains("2 links it uses are out"));
    assert_eq!(row["scenario_step_s"], row["together_step_s"]);
    // `plan` at packet level: the job's own rack switch interrupts it, the drain costs
    // nothing (run at packet level in its batch).
    let ops = dir.path().join("ops.yaml");
    std::fs::write(
        &ops,
        "max_concurrent: 1\noperations:\n  - { name: own, fail: [east.dc1.llama.rtsw0], hours: 2 }\n  \
         - { name: ctsw, drain: [east.dc1.llama.ctsw1], hours: 3 }\n",
    )
    .unwrap();
    let p = json(&[
        "plan",
        "llama3-24k",
        "--jobs",
        c,
        "--ops",
        ops.to_str().unwrap(),
        "--engine",
        "packet",
    ]);
    assert_eq!(p["engine"], "packet");
    assert_eq!(p["best"]["lost_gpu_hours"], 2.0 * 32.0);
    assert_eq!(p["batches_simulated"], 2);
    let o = aifabric()
        .args(["cluster", "llama3-24k", "--jobs", c, "--engine", "both"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("packet or hybrid"), "{err}");
}
