//! Inputs that cannot finish or fit are refused up front (exit 2, the size, the limit and how
//! to narrow it); what runs reports progress; an interrupted run leaves no partial output.

use assert_cmd::Command;
use std::time::Duration;

fn aifabric() -> Command {
    let mut c = Command::cargo_bin("aifabric").unwrap();
    // A refusal is immediate; a run that starts instead is a failure, not a wait.
    c.timeout(Duration::from_secs(120));
    c
}

/// Run, expect exit 2 and every one of `needles` in the error.
fn refused(args: &[&str], needles: &[&str]) {
    let o = aifabric().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` missing from: {err}");
    }
}

#[test]
fn pod_sites_beyond_the_budget_are_refused() {
    // prometheus: 176 sites (2 x 83 NSF pods and 10 DSF buildings), 15,400 pairs.
    refused(
        &["failures", "prometheus", "--pod-sites"],
        &[
            "176 sites",
            "15,400 pairs",
            "limit of 4,000",
            "drop --pod-sites",
        ],
    );
}

#[test]
fn failure_sweeps_beyond_the_budget_are_refused_with_narrower_sweeps() {
    // 1,408 BAG line cards: 990,528 pairs, hours of evaluation.
    refused(
        &["failures", "prometheus", "--sweep", "pairs:linecard"],
        &[
            "990,528 pairs",
            "limit of 100,000",
            "single:linecard",
            "pairs:plane",
        ],
    );
    refused(
        &[
            "failures",
            "prometheus",
            "--sweep",
            "montecarlo",
            "--samples",
            "1000000000",
        ],
        &["1,000,000,000", "limit of 1,000,000"],
    );
    // Within the budget, the same class runs.
    let o = aifabric()
        .args(["failures", "nsf-l2", "--sweep", "pairs:plane", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn small_64() -> String {
    std::fs::read_to_string(format!(
        "{}/../../examples/jobs/small-64.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// `examples/jobs/small-64.yaml` with one line replaced, written into `dir`.
fn job_with(dir: &std::path::Path, from: &str, to: &str) -> String {
    let text = small_64();
    assert!(text.contains(from), "{from}");
    let path = dir.join("job.yaml");
    std::fs::write(&path, text.replace(from, to)).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn traces_beyond_the_budget_are_refused_before_anything_is_written() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let o = out.to_str().unwrap();
    // A billion layers: 64 ranks x 8 billion TP all-reduces each.
    let job = job_with(d.path(), "layers: 32\n", "layers: 1000000000\n");
    refused(
        &["chakra", "synth", "--job", &job, "--out", o],
        &["nodes", "limit of 200,000,000", "model.layers"],
    );
    let job = job_with(d.path(), "global_batch: 32\n", "global_batch: 4000000000\n");
    refused(
        &["chakra", "synth", "--job", &job, "--out", o],
        &["limit of 200,000,000", "model.global_batch"],
    );
    assert!(!out.exists(), "nothing is written for a refused trace");

    // Rescaling a 64-rank trace to 4,294,967,232 ranks (67,108,863 copies).
    let small = d.path().join("small");
    let job = job_with(d.path(), "layers: 32\n", "layers: 32\n");
    let s = aifabric()
        .args(["chakra", "synth", "--job", &job, "--out"])
        .arg(&small)
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    refused(
        &[
            "chakra",
            "scale",
            "--in",
            small.to_str().unwrap(),
            "--ranks",
            "4294967232",
            "--out",
            o,
        ],
        &[
            "4,294,967,232 rank files",
            "limit of 262,144",
            "fewer ranks",
        ],
    );
    assert!(!out.exists());
}

/// Every file under `dir`, recursively.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.push(p.clone());
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn ctrl_c_during_a_trace_leaves_no_partial_output() {
    let d = tempfile::tempdir().unwrap();
    // 6,400 layers: about 13 million nodes, seconds of writing, well within the budget.
    let job = job_with(d.path(), "layers: 32\n", "layers: 6400\n");
    let out = d.path().join("out");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("aifabric"))
        .args(["chakra", "synth", "--job", &job, "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once rank files are being written.
    let start = std::time::Instant::now();
    while !files_under(&out).iter().any(|p| p.is_file()) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before it could be interrupted"
        );
        assert!(start.elapsed() < Duration::from_secs(60), "nothing written");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let left = files_under(&out);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_job_that_does_not_fit_in_gpu_memory_is_refused_with_the_breakdown_and_the_knobs() {
    // Llama 3 405B in pure data parallelism on 8 H100s (80 GB): 810 GB of bf16 weights.
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("dp8.yaml");
    std::fs::write(
        &job,
        "name: dp8\ngpus: 8\nparallelism: { dp: 8 }\n\
         model: { card: llama3-405b, global_batch: 8 }\n\
         compute: { peak_tflops: 989, efficiency: 0.5 }\n",
    )
    .unwrap();
    refused(
        &["job", "llama3-24k", "--job", job.to_str().unwrap()],
        &[
            "does not fit",
            "weights",
            "optimizer state",
            "activations",
            "of 80.0 GiB",
            "recompute: full",
            "reduce_scatter_all_gather",
        ],
    );
    // The paper's plan fits, and the output says how much it needs and in which order the
    // ranks are laid out.
    let o = aifabric()
        .args([
            "job",
            "llama3-24k",
            "--job",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../examples/jobs/llama3-405b-16k.yaml"
            ),
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("rank order [tp, cp, pp, dp]"), "{out}");
    assert!(
        out.contains("memory: ") && out.contains("of 80.0 GiB"),
        "{out}"
    );
}
