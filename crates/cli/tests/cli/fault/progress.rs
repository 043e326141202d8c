//! Long runs are not silent off a terminal: with standard error piped (as in a batch job or
//! behind `2>log`), the heartbeat writes a line every few seconds (here every 0.2 s).

use super::common::aifabric;

fn lines(args: &[&str]) -> Vec<String> {
    let out = aifabric()
        .env("AIFABRIC_PROGRESS_SECS", "0.2")
        .env_remove("CI")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_packet_run_logs_how_far_it_is() {
    let l = lines(&[
        "traffic",
        "htsim-k8",
        "--pattern",
        "permutation",
        "--gpus",
        "128",
        "--engine",
        "packet",
        "--size",
        "8M",
    ]);
    assert!(
        l.iter().any(
            |x| x.starts_with("aifabric traffic: packets acknowledged (")
                && x.contains(" of 128 flows done")
                && x.contains("/262912 (")
        ),
        "no progress line: {l:?}"
    );
}

#[test]
fn a_run_without_a_bar_logs_that_it_runs() {
    let job = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/jobs/llama3-405b-16k.yaml"
    );
    let l = lines(&["job", "llama3-24k", "--job", job]);
    assert!(
        l.iter().any(|x| x.starts_with("aifabric job: running, ")),
        "no heartbeat: {l:?}"
    );
}
