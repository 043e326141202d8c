//! The Slurm import: Slurm's JSON as 22.05 records it and as 24.05 documents it, the node ->
//! host rules in their order, and every refusal naming the Slurm job, the node and the fix.

use aifabric_fixtures::slurm as fx;
use aifabric_model::{DeviceId, Fabric, FailureMask};
use aifabric_spec::cluster::load_cluster;
use aifabric_spec::slurm::{
    import, parse_jobs, parse_node_map, Import, NodeMap, NodePrefix, NodeRule, Options, SlurmJob,
};
use aifabric_spec::SpecError;
use aifabric_workload::cluster::hosts;
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

const SMALL_64: &str = include_str!("../../../../examples/jobs/small-64.yaml");

fn fabric() -> &'static Fabric {
    static F: OnceLock<Fabric> = OnceLock::new();
    F.get_or_init(|| aifabric_spec::load("llama3-24k").unwrap())
}

/// The fabric's hosts of 8 GPUs, in fabric order.
fn hosts8() -> &'static [(String, Vec<DeviceId>)] {
    static H: OnceLock<Vec<(String, Vec<DeviceId>)>> = OnceLock::new();
    H.get_or_init(|| hosts(fabric(), 8, &FailureMask::none(fabric())))
}

/// A directory laid out as the fixtures' jobs expect: `jobs/dp-16.yaml` (the comment's
/// path) and `by-name/small-64.yaml` (for `--job-dir`).
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::create_dir(dir.path().join("by-name")).unwrap();
    std::fs::write(
        dir.path().join("jobs/dp-16.yaml"),
        aifabric_fixtures::jobs::DP_16,
    )
    .unwrap();
    std::fs::write(dir.path().join("by-name/small-64.yaml"), SMALL_64).unwrap();
    dir
}

fn jobs_in(fixture: &str, dir: &Path) -> Vec<SlurmJob> {
    let text = fixture.replace("@WORKDIR@", dir.to_str().unwrap());
    parse_jobs("squeue.json", &text).unwrap()
}

fn run(
    jobs: &[SlurmJob],
    dir: &Path,
    map: Option<&NodeMap>,
    prefix: Option<&NodePrefix>,
) -> Result<Import, SpecError> {
    import(
        fabric(),
        jobs,
        &Options {
            node_map: map,
            node_prefix: prefix,
            job_dir: Some(&dir.join("by-name")),
            out_dir: dir,
            source: "squeue.json",
        },
    )
}

fn gpu_prefix() -> NodePrefix {
    NodePrefix {
        prefix: "gpu".into(),
        first: 1,
    }
}

fn job(id: u64, name: &str, nodes: &[&str], comment: &str) -> SlurmJob {
    SlurmJob {
        id,
        name: name.into(),
        state: vec!["RUNNING".into()],
        nodes: nodes.iter().map(|s| s.to_string()).collect(),
        comment: comment.into(),
        work_dir: None,
    }
}

#[test]
fn recorded_22_05_output_reads() {
    let jobs = parse_jobs("sq.json", fx::SQUEUE_22_05_SINGLE_NODE).unwrap();
    let short: Vec<(u64, &str, bool, Vec<String>, &str)> = jobs
        .iter()
        .map(|j| {
            (
                j.id,
                j.name.as_str(),
                j.running(),
                j.nodes.clone(),
                j.comment.as_str(),
            )
        })
        .collect();
    assert_eq!(
        short,
        vec![
            (
                1,
                "llama-a",
                true,
                vec!["vm".to_string()],
                "aifabric:jobs/a.yaml"
            ),
            (
                2,
                "llama-b",
                true,
                vec!["vm".to_string()],
                "aifabric:jobs/b.yaml"
            ),
            (3, "pend", false, vec![], ""),
        ]
    );
    assert_eq!(jobs[0].state, ["RUNNING"]);
    assert_eq!(jobs[2].state_name(), "PENDING");
    assert_eq!(jobs[0].work_dir.as_deref(), Some("/tmp/sl"));
}

#[test]
fn both_versions_read_alike() {
    let old = parse_jobs("old", fx::SQUEUE_22_05_LLAMA3_24K).unwrap();
    let new = parse_jobs("new", fx::SQUEUE_24_05_LLAMA3_24K).unwrap();
    // The running jobs but for their state flags, in id order.
    let running = |v: &[SlurmJob]| -> Vec<SlurmJob> {
        let mut r: Vec<SlurmJob> = v
            .iter()
            .filter(|j| j.running())
            .map(|j| SlurmJob {
                state: Vec::new(),
                ..j.clone()
            })
            .collect();
        r.sort_by_key(|j| j.id);
        r
    };
    assert_eq!(running(&old), running(&new));
    assert_eq!(running(&new).len(), 2);
    let states: Vec<String> = new.iter().map(SlurmJob::state_name).collect();
    assert_eq!(
        states,
        [
            "COMPLETED+COMPLETING",
            "RUNNING",
            "RUNNING+CONFIGURING",
            "PENDING"
        ]
    );
    assert_eq!(new[1].nodes.len(), 8);
    assert_eq!(new[1].nodes[7], "gpu0008");
}

/// Golden: both versions import to the same cluster file (but for the source named in its
/// header), which loads with the jobs on the hosts the rules give.
#[test]
fn llama3_24k_import_is_the_same_from_both_versions_and_loads() {
    let dir = workdir();
    let mut texts = Vec::new();
    for fixture in [fx::SQUEUE_22_05_LLAMA3_24K, fx::SQUEUE_24_05_LLAMA3_24K] {
        let jobs = jobs_in(fixture, dir.path());
        let done = run(&jobs, dir.path(), None, Some(&gpu_prefix())).unwrap();
        assert_eq!(done.gpus, 64 + 16);
        assert_eq!(done.nodes, 10);
        assert_eq!(done.jobs[0].name, "small-64-4101");
        assert_eq!(done.jobs[0].file, "by-name/small-64.yaml");
        assert_eq!(done.jobs[1].name, "dp16-4102");
        assert_eq!(done.jobs[1].file, "jobs/dp-16.yaml");
        assert!(done.jobs[1]
            .nodes
            .iter()
            .all(|n| n.rule == NodeRule::NodePrefix));
        assert_eq!(
            done.skipped
                .iter()
                .find(|s| s.slurm_id == 4103)
                .unwrap()
                .state,
            "PENDING"
        );
        texts.push(done.yaml);
    }
    assert_eq!(texts[0], texts[1]);
    let yaml = &texts[0];
    assert!(yaml.contains("  - name: dp16-4102\n    file: jobs/dp-16.yaml\n    hosts:\n"));
    assert!(yaml.contains("#   gpu0011 -> "), "{yaml}");

    let path = dir.path().join("cluster.yaml");
    std::fs::write(&path, yaml).unwrap();
    let c = load_cluster(fabric(), path.to_str().unwrap()).unwrap();
    let h = hosts8();
    let on = |idx: &[usize]| -> Vec<DeviceId> {
        idx.iter().flat_map(|&i| h[i].1.iter().copied()).collect()
    };
    assert_eq!(c.jobs().len(), 2);
    assert_eq!(c.jobs()[0].name, "small-64-4101");
    assert_eq!(c.jobs()[0].gpus, on(&[0, 1, 2, 3, 4, 5, 6, 7]));
    assert_eq!(c.jobs()[1].name, "dp16-4102");
    assert_eq!(c.jobs()[1].gpus, on(&[8, 10]));
    assert_eq!(c.gpus(), 80);
}

#[test]
fn rules_apply_in_order_host_name_then_map_then_prefix() {
    let dir = workdir();
    let h = hosts8();
    // gpu0002 is in the map (to host 5) and matches the prefix (host 1): the map wins.
    let map = parse_node_map(
        "map.csv",
        &format!(
            "slurm_node,host\n# a comment\nlogin-node-7,{}\ngpu0002,{}\n",
            h[20].0, h[5].0
        ),
    )
    .unwrap();
    let jobs = [job(
        9,
        "dp16",
        &[&h[30].0, "login-node-7"],
        "aifabric:jobs/dp-16.yaml",
    )];
    let mut jobs = jobs.to_vec();
    jobs[0].work_dir = Some(dir.path().to_str().unwrap().into());
    jobs.push(SlurmJob {
        work_dir: jobs[0].work_dir.clone(),
        ..job(
            10,
            "dp16",
            &["gpu0002", "gpu0001"],
            "aifabric:jobs/dp-16.yaml",
        )
    });
    let done = run(&jobs, dir.path(), Some(&map), Some(&gpu_prefix())).unwrap();
    let got: Vec<(&str, &str, NodeRule)> = done
        .jobs
        .iter()
        .flat_map(|j| j.nodes.iter())
        .map(|n| (n.node.as_str(), n.host.as_str(), n.rule))
        .collect();
    assert_eq!(
        got,
        [
            (h[30].0.as_str(), h[30].0.as_str(), NodeRule::HostName),
            ("login-node-7", h[20].0.as_str(), NodeRule::NodeMap),
            ("gpu0002", h[5].0.as_str(), NodeRule::NodeMap),
            ("gpu0001", h[0].0.as_str(), NodeRule::NodePrefix),
        ]
    );
    // `--first 0`: gpu0001 is the second host.
    let zero = NodePrefix {
        prefix: "gpu".into(),
        first: 0,
    };
    let done = run(&jobs[1..], dir.path(), None, Some(&zero)).unwrap();
    assert_eq!(done.jobs[0].nodes[1].host, h[1].0);
}

#[test]
fn an_unmapped_node_names_the_job_the_node_and_each_rule() {
    let dir = workdir();
    let mut j = job(77, "small-64", &[], "");
    j.nodes = (1..=8).map(|k| format!("node{k:03}")).collect();
    let e = run(&[j.clone()], dir.path(), None, None).unwrap_err();
    let msg = e.to_string();
    for want in [
        "Slurm job 77 (`small-64`): node `node001` maps to no host of llama3-24k",
        "1. it is not a host name",
        "2. no --node-map is given",
        "3. no --node-prefix is given",
        "hint: add a row `node001,<host>` to a --node-map CSV",
    ] {
        assert!(msg.contains(want), "`{want}` missing: {msg}");
    }
    let e = run(&[j.clone()], dir.path(), None, Some(&gpu_prefix())).unwrap_err();
    assert!(
        e.message.contains("3. it is not `gpu` followed by digits"),
        "{e}"
    );
    j.nodes = (1..=8).map(|k| format!("gpu{}", 99_000 + k)).collect();
    let e = run(&[j.clone()], dir.path(), None, Some(&gpu_prefix())).unwrap_err();
    assert!(e.message.contains("has 3072 hosts of 8 GPUs"), "{e}");
    j.nodes = (0..=7).map(|k| format!("gpu{k}")).collect();
    let e = run(&[j], dir.path(), None, Some(&gpu_prefix())).unwrap_err();
    assert!(e.message.contains("its number 0 is below --first 1"), "{e}");
}

#[test]
fn a_mistyped_host_in_the_node_map_points_at_its_line() {
    let dir = workdir();
    let h = &hosts8()[3].0;
    let typo = h.replace("host", "hots");
    let map = parse_node_map("map.csv", &format!("a,{}\nb,{typo}\n", hosts8()[2].0)).unwrap();
    let mut j = job(5, "dp16", &["a", "b"], "aifabric:jobs/dp-16.yaml");
    j.work_dir = Some(dir.path().to_str().unwrap().into());
    let e = run(&[j], dir.path(), Some(&map), None).unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("map.csv", 2));
    assert!(e.message.contains(&format!("maps to `{typo}`")), "{e}");
    assert_eq!(
        e.hint.as_deref(),
        Some(format!("did you mean `{h}`?").as_str())
    );
}

#[test]
fn node_map_rows_are_checked() {
    let e = parse_node_map("m.csv", "a,h1\nb,h2,extra\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.message.contains("3 fields"), "{e}");
    let e = parse_node_map("m.csv", "a,h1\n\na,h2\n").unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.message.contains("also mapped on line 1"), "{e}");
    assert!(parse_node_map("m.csv", "").is_ok());
}

#[test]
fn a_gpu_count_that_is_not_nodes_times_scale_up_names_both() {
    let dir = workdir();
    let j = job(12, "small-64", &["gpu0001", "gpu0002", "gpu0003"], "");
    let e = run(&[j], dir.path(), None, Some(&gpu_prefix())).unwrap_err();
    assert!(
        e.message.contains(
            "Slurm job 12 (`small-64`) runs on 3 nodes, 3 x 8 = 24 GPUs, but its job file"
        ) && e.message.contains("has 64 GPUs"),
        "{e}"
    );
    assert!(e.hint.unwrap().contains("run the job on 8 nodes"));
}

#[test]
fn two_jobs_on_one_host_are_refused_with_both_ids() {
    let dir = workdir();
    let wd = Some(dir.path().to_str().unwrap().to_owned());
    let a = SlurmJob {
        work_dir: wd.clone(),
        ..job(1, "a", &["gpu0001", "gpu0002"], "aifabric:jobs/dp-16.yaml")
    };
    let b = SlurmJob {
        work_dir: wd,
        ..job(2, "b", &["gpu0003", "gpu0002"], "aifabric:jobs/dp-16.yaml")
    };
    let e = run(&[b, a], dir.path(), None, Some(&gpu_prefix())).unwrap_err();
    assert!(
        e.message
            .contains("Slurm job 2 (`b`): node `gpu0002` is host")
            && e.message
                .contains("which is also Slurm job 1's node `gpu0002`"),
        "{e}"
    );
}

#[test]
fn job_files_come_from_the_comment_or_the_job_dir() {
    let dir = workdir();
    // Neither: the fix names both ways.
    let e = import(
        fabric(),
        &[job(3, "x", &["gpu0001"], "")],
        &Options {
            node_map: None,
            node_prefix: Some(&gpu_prefix()),
            job_dir: None,
            out_dir: dir.path(),
            source: "squeue.json",
        },
    )
    .unwrap_err();
    assert!(e.message.contains("Slurm job 3 (`x`): no job file"), "{e}");
    assert!(e.hint.unwrap().contains("--job-dir DIR holding `x.yaml`"));
    // The job dir without the file.
    let e = run(&[job(4, "nope", &["gpu0001"], "")], dir.path(), None, None).unwrap_err();
    assert!(e.message.contains("cannot read its job file"), "{e}");
    assert!(
        e.message.contains("by-name/nope.yaml (from --job-dir)"),
        "{e}"
    );
    // An absolute comment path, outside the output directory, is written absolute.
    let other = workdir();
    let abs = other.path().join("jobs/dp-16.yaml");
    let j = job(
        6,
        "dp16",
        &["gpu0001", "gpu0002"],
        &format!("aifabric:{}", abs.display()),
    );
    let done = run(&[j], dir.path(), None, Some(&gpu_prefix())).unwrap();
    assert_eq!(
        done.jobs[0].file,
        std::fs::canonicalize(&abs).unwrap().display().to_string()
    );
}

#[test]
fn nothing_running_is_an_error() {
    let dir = workdir();
    let mut j = job(3, "x", &[], "");
    j.state = vec!["PENDING".into()];
    let e = run(&[j], dir.path(), None, None).unwrap_err();
    assert!(e
        .message
        .contains("no RUNNING job among Slurm's 1 jobs (states: PENDING)"));
}

#[test]
fn bad_json_is_located() {
    let e = parse_jobs("sq.json", "{\"jobs\": [\n  {\"job_id\": \"x\"}]}").unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("sq.json", 2));
    let e = parse_jobs("sq.json", "{\"meta\": {}}").unwrap_err();
    assert!(e.message.contains("missing field `jobs`"), "{e}");
    let e = parse_jobs(
        "sq.json",
        r#"{"jobs": [{"job_id": 4, "name": "n", "nodes": "a[3-1]"}]}"#,
    )
    .unwrap_err();
    assert!(e.message.contains("Slurm job 4 (`n`)"), "{e}");
    let e = parse_jobs(
        "sq.json",
        r#"{"jobs": [], "errors": [{"error": "Unable to contact slurm controller", "error_number": 1}]}"#,
    )
    .unwrap_err();
    assert!(
        e.message.contains("Unable to contact slurm controller"),
        "{e}"
    );
    let e = parse_jobs(
        "sq.json",
        r#"{"jobs": [{"job_id": 4, "job_state": "RUNNING", "nodes": "a[1-3]", "node_count": 2}]}"#,
    )
    .unwrap_err();
    assert!(e.message.contains("`node_count` is 2"), "{e}");
}

#[test]
fn the_same_input_gives_the_same_bytes() {
    let dir = workdir();
    let jobs = jobs_in(fx::SQUEUE_24_05_LLAMA3_24K, dir.path());
    let mut reversed = jobs.clone();
    reversed.reverse();
    let a = run(&jobs, dir.path(), None, Some(&gpu_prefix())).unwrap();
    let b = run(&reversed, dir.path(), None, Some(&gpu_prefix())).unwrap();
    assert_eq!(a.yaml, b.yaml);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    /// Node `P<k>` is host `k - first`, whatever the padding.
    #[test]
    fn the_prefix_rule_numbers_hosts_in_fabric_order(
        k in 0usize..3000,
        first in 0u64..3,
        width in 1usize..6,
    ) {
        let dir = workdir();
        let h = hosts8();
        let n0 = k as u64 + first;
        let nodes: Vec<String> = [n0, n0 + 1].iter().map(|n| format!("gpu{n:0width$}")).collect();
        let mut j = job(1, "dp16", &[&nodes[0], &nodes[1]], "aifabric:jobs/dp-16.yaml");
        j.work_dir = Some(dir.path().to_str().unwrap().into());
        let p = NodePrefix { prefix: "gpu".into(), first };
        let done = run(&[j], dir.path(), None, Some(&p)).unwrap();
        prop_assert_eq!(&done.jobs[0].nodes[0].host, &h[k].0);
        prop_assert_eq!(&done.jobs[0].nodes[1].host, &h[k + 1].0);
    }
}
