//! Issue 34's speed targets on `prometheus` filled with 20 jobs of mixed sizes
//! (`examples/clusters/prometheus-20.yaml`, release, this 2-core machine): `cluster` <= 10 s;
//! every single-SRG scenario (4,837) against every job <= 60 s; a 10-operation plan
//! (`examples/ops/east-maintenance.yaml`) <= 60 s; memory < 4 GB. Each is timed as the CLI
//! runs it after building the fabric; the median of `AIFABRIC_BENCH_RUNS` runs (default 3,
//! the plan once) is printed with the others.
//! Run: `cargo bench -p aifabric --bench jobs` (add `-- cluster` to run one).
#![allow(missing_docs)]

use aifabric::{FailureRequest, Setup, Study};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(name: &str, runs: usize, mut f: impl FnMut()) {
    let v: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    println!(
        "{name:<24} median {:>8.2} s over {runs} run(s) (min {:.2} s, max {:.2} s)",
        median(v.clone()).as_secs_f64(),
        v.iter().min().unwrap().as_secs_f64(),
        v.iter().max().unwrap().as_secs_f64()
    );
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |n: &str| filter.is_empty() || filter.iter().any(|f| n.contains(f.as_str()));
    let runs: usize = std::env::var("AIFABRIC_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let f = aifabric_spec::load("prometheus").unwrap();
    let jobs = format!("{root}/examples/clusters/prometheus-20.yaml");
    let cluster = aifabric_spec::cluster::load_cluster(&f, &jobs).unwrap();
    let study = Study::healthy(&f, Setup::default());
    if want("cluster") {
        time("cluster", runs, || {
            std::hint::black_box(study.cluster(&cluster).unwrap());
        });
    }
    if want("at_risk") {
        let req = FailureRequest {
            sweep: "single".into(),
            ..FailureRequest::default()
        };
        time("failures --jobs", runs, || {
            let base = study.cluster_baseline(&cluster).unwrap();
            let sweep = study.failures(&req, &|_, _| {}).unwrap();
            std::hint::black_box(study.jobs_at_risk(&base, &sweep, 5, usize::MAX).unwrap());
        });
    }
    if want("plan") {
        let ops =
            aifabric_spec::ops::load_ops(&f, &format!("{root}/examples/ops/east-maintenance.yaml"))
                .unwrap();
        time("plan (10 operations)", 1, || {
            let base = study.cluster_baseline(&cluster).unwrap();
            std::hint::black_box(study.plan(&base, &ops).unwrap());
        });
    }
}
