//! `aifabric sweep`: a single run, its shards merged, and its Slurm job array run locally
//! (each array task with `SLURM_ARRAY_TASK_ID` set, then the merge job) give the same bytes.

use assert_cmd::Command;
use std::path::Path;

const SWEEP: &str = r#"
spec: two.yaml
grid:
  inter_bag[0].topology: [planar, spread]
  regions[a].bag.planes: [2]
failures:
  sweep: montecarlo
  samples: 60
  seed: 9
  probability: [link=0.01, chassis=0.05]
draws_per_task: 20
"#;

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("two.yaml"),
        aifabric_fixtures::specs::TWO_REGIONS_NSF_2_PODS_PLANAR,
    )
    .unwrap();
    std::fs::write(dir.path().join("sweep.yaml"), SWEEP).unwrap();
    dir
}

fn aifabric(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::cargo_bin("aifabric")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn shards_and_the_slurm_array_give_the_single_run_byte_for_byte() {
    let tmp = setup();
    let dir = tmp.path();
    let o = aifabric(
        dir,
        &[
            "sweep",
            "sweep.yaml",
            "--out",
            "single.json",
            "--table",
            "single.arrow",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("2 designs") && text.contains("6 tasks"),
        "{text}"
    );
    let single = std::fs::read(dir.join("single.json")).unwrap();
    let table = std::fs::read(dir.join("single.arrow")).unwrap();
    assert!(table.starts_with(b"ARROW1"), "an Arrow IPC file");

    // Shards by hand, merged.
    for i in 0..4 {
        let s = format!("{i}/4");
        let out = format!("s{i}.json");
        let o = aifabric(dir, &["sweep", "sweep.yaml", "--shard", &s, "--out", &out]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = aifabric(
        dir,
        &[
            "sweep",
            "merge",
            "sweep.yaml",
            "s3.json",
            "s1.json",
            "s0.json",
            "s2.json",
            "--out",
            "merged.json",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read(dir.join("merged.json")).unwrap() == single,
        "merged shards differ"
    );
    // One shard short: refused, exit 2.
    let o = aifabric(dir, &["sweep", "merge", "sweep.yaml", "s0.json", "s1.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("tasks missing"));

    // The Slurm array, each task run as Slurm would run it, then the merge job.
    let o = aifabric(
        dir,
        &[
            "sweep",
            "sweep.yaml",
            "--emit-slurm",
            "slurm",
            "--shards",
            "3",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let array = std::fs::read_to_string(dir.join("slurm/array.sbatch")).unwrap();
    assert!(array.contains("#SBATCH --array=0-2"), "{array}");
    for i in 0..3 {
        let o = std::process::Command::new("bash")
            .arg(dir.join("slurm/array.sbatch"))
            .env("SLURM_ARRAY_TASK_ID", i.to_string())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = std::process::Command::new("bash")
        .arg(dir.join("slurm/merge.sbatch"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read(dir.join("slurm/sweep.json")).unwrap() == single,
        "the Slurm array's merge differs"
    );
    assert!(
        std::fs::read(dir.join("slurm/sweep.arrow")).unwrap() == table,
        "the Slurm array's table differs"
    );
    let submit = std::fs::read_to_string(dir.join("slurm/submit.sh")).unwrap();
    assert!(submit.contains("--dependency=afterok:"), "{submit}");
}

#[test]
fn bad_shards_are_refused() {
    let tmp = setup();
    for s in ["4/4", "1/0", "x"] {
        let o = aifabric(tmp.path(), &["sweep", "sweep.yaml", "--shard", s]);
        assert_eq!(o.status.code(), Some(2), "{s}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("write I/N"),
            "{s}"
        );
    }
    let o = aifabric(
        tmp.path(),
        &[
            "sweep",
            "sweep.yaml",
            "--shard",
            "0/2",
            "--table",
            "t.arrow",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sweep merge"));
}
