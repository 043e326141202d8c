//! Issue 37's scale targets (the jobs, and the 8,192-host permutation at packet level), each
//! timed as a user runs it: the release CLI in its own process, wall time and peak resident
//! memory (the child's `VmHWM`, read from `/proc` as it runs), the median of
//! `AIFABRIC_BENCH_RUNS` runs (default 3) printed beside the target.
//! The packet engine's own permutations are in `crates/packet/benches/packet.rs`.
//!
//! Run: `cargo bench -p aifabric-cli --bench scale` (add a name, e.g. `-- 131k`, to run the
//! rows whose name contains it).
#![allow(missing_docs)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// (name, the CLI's arguments, target wall seconds); every row's memory target is
/// [`TARGET_GB`]. The jobs' files are under `examples/jobs/`.
const ROWS: &[(&str, &[&str], f64)] = &[
    (
        "gpt-13b-128 packet",
        &[
            "job",
            "llama3-24k",
            "--job",
            "examples/jobs/gpt-13b-128.yaml",
            "--engine",
            "packet",
        ],
        30.0,
    ),
    (
        "gpt-13b-128 hybrid",
        &[
            "job",
            "llama3-24k",
            "--job",
            "examples/jobs/gpt-13b-128.yaml",
            "--engine",
            "hybrid",
        ],
        30.0,
    ),
    (
        "llama3-405b-2k hybrid",
        &[
            "job",
            "llama3-24k",
            "--job",
            "examples/jobs/llama3-405b-2k.yaml",
            "--engine",
            "hybrid",
        ],
        60.0,
    ),
    (
        "llama3-405b-16k hybrid (llama3-24k)",
        &[
            "job",
            "llama3-24k",
            "--job",
            "examples/jobs/llama3-405b-16k.yaml",
            "--engine",
            "hybrid",
        ],
        60.0,
    ),
    (
        "llama3-405b-16k hybrid (prometheus, one DSF building)",
        &[
            "job",
            "prometheus",
            "--job",
            "examples/jobs/llama3-405b-16k.yaml",
            "--engine",
            "hybrid",
        ],
        60.0,
    ),
    (
        "llama3-405b-131k hybrid (prometheus)",
        &[
            "job",
            "prometheus",
            "--job",
            "examples/jobs/llama3-405b-131k.yaml",
            "--engine",
            "hybrid",
        ],
        60.0,
    ),
    // Issue 37's 8 s for the full packet engine: htsim's 8,192-host permutation of 2 MiB,
    // cut into 8 parts on the machine's cores (faster than 2 on 2 cores: each part's share
    // of the state is smaller; README, "Parts").
    (
        "permutation 8,192 hosts packet, 8 parts",
        &[
            "traffic",
            "htsim-k32",
            "--pattern",
            "permutation",
            "--gpus",
            "8192",
            "--size",
            "2M",
            "--engine",
            "packet",
            "--preset",
            "uec-htsim",
            "--partitions",
            "8",
        ],
        8.0,
    ),
];

/// Peak memory every row must stay under, GB.
const TARGET_GB: f64 = 8.0;

/// The peak resident memory of process `pid` so far, bytes (`VmHWM`).
fn peak_bytes(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: u64 = s
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// One run: wall time and peak memory.
fn run(args: &[&str]) -> (Duration, u64) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_aifabric"))
        .args(args)
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the aifabric binary runs");
    let mut peak = 0;
    loop {
        if let Some(p) = peak_bytes(child.id()) {
            peak = peak.max(p);
        }
        if let Some(status) = child.try_wait().expect("waiting") {
            assert!(
                status.success(),
                "aifabric {} failed: {status}",
                args.join(" ")
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (t.elapsed(), peak)
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let runs: usize = std::env::var("AIFABRIC_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
        .max(1);
    for &(name, args, target_s) in ROWS {
        let target_gb = TARGET_GB;
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let mut walls = Vec::with_capacity(runs);
        let mut peak = 0;
        for _ in 0..runs {
            let (wall, bytes) = run(args);
            walls.push(wall);
            peak = peak.max(bytes);
        }
        walls.sort();
        let median = walls[walls.len() / 2].as_secs_f64();
        let gb = peak as f64 / 1e9;
        println!(
            "{name:<54} median {median:>7.2} s over {runs} (min {:.2}, max {:.2}); peak {gb:.2} GB; \
             target <= {target_s} s, <= {target_gb} GB: {}",
            walls[0].as_secs_f64(),
            walls[walls.len() - 1].as_secs_f64(),
            if median <= target_s && gb <= target_gb {
                "met"
            } else {
                "MISSED"
            }
        );
    }
}
