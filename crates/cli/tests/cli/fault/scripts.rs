//! Names hostile to a shell (newlines, quotes, `$()`, backquotes) in the paths that
//! `sweep --emit-slurm` writes into its scripts: the scripts run as written and nothing in a
//! name is executed.

use super::common::{aifabric, small_sweep, sweep_dir};
use std::path::Path;

/// Every file under `dir` whose name starts with `PWNED`: a command a name smuggled in ran.
fn pwned(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.starts_with("PWNED") {
            found.push(n);
        }
        if e.file_type().unwrap().is_dir() {
            found.extend(pwned(&e.path()));
        }
    }
    found
}

#[test]
fn slurm_scripts_quote_every_name() {
    let file = "nl\ntouch PWNED1\n$(touch PWNED2)`touch PWNED3`it's \"q\".yaml";
    let tmp = sweep_dir(file, &small_sweep(4, 2));
    let root = tmp.path();
    let out = "out\ntouch PWNED4\n$(touch PWNED5) 'dir'";
    // An option that would end its #SBATCH line (and run the rest) is refused, as is every
    // value a Slurm name, time or size cannot be; nothing is written.
    for (flag, value) in [
        ("--sbatch", "--comment=x\ntouch PWNED10"),
        ("--sbatch", "--comment=x\rtouch PWNED11"),
        ("--sbatch", "--comment=x\ttouch PWNED11"),
        ("--sbatch", "--$(touch PWNED12)"),
        ("--partition", "gpu\ntouch PWNED13"),
        ("--partition", "$(touch PWNED14)"),
        ("--account", "'; touch PWNED15; '"),
        ("--time", "10`touch PWNED16`"),
        ("--mem", "4G\ntouch PWNED17"),
    ] {
        let o = aifabric()
            .current_dir(root)
            .args(["sweep", file, "--emit-slurm", "refused", flag, value])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{flag} {value:?}");
        assert!(!root.join("refused").exists(), "{flag} {value:?}");
    }
    // Quotes, `$()`, backquotes and `#` in an extra option's value are data: written in
    // sbatch's quoting, on a line bash reads as a comment.
    let hostile = "--comment=it's \"$(touch PWNED6)\" `touch PWNED7` #x \\";
    let o = aifabric()
        .current_dir(root)
        .args(["sweep", file, "--emit-slurm", out, "--shards", "2"])
        .args(["--partition", "debug", "--time", "5", "--sbatch", hostile])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = root.join(out);
    // The name in the comments is escaped (a raw newline would end the comment); elsewhere
    // it is single-quoted, newlines and all, which running the scripts below checks.
    for script in ["array.sbatch", "merge.sbatch"] {
        let text = std::fs::read_to_string(dir.join(script)).unwrap();
        let second = text.lines().nth(1).unwrap();
        assert!(
            second.starts_with("# ") && second.contains(r"nl\ntouch PWNED1\n"),
            "{script}: {text}"
        );
    }
    // The array's tasks and the merge, as Slurm runs them (from another directory).
    let elsewhere = tempfile::tempdir().unwrap();
    for i in 0..2 {
        let o = std::process::Command::new("bash")
            .arg(dir.join("array.sbatch"))
            .current_dir(elsewhere.path())
            .env("SLURM_ARRAY_TASK_ID", i.to_string())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = std::process::Command::new("bash")
        .arg(dir.join("merge.sbatch"))
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        dir.join("sweep.json").is_file(),
        "the merge wrote sweep.json"
    );
    // submit.sh with a stand-in `sbatch` that records its arguments, one per line.
    let bin = tempfile::tempdir().unwrap();
    let record = bin.path().join("args");
    std::fs::write(
        bin.path().join("sbatch"),
        format!(
            "#!/bin/bash\nprintf '%s\\0' \"$@\" >> '{}'\necho 42\n",
            record.display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", &bin.path().join("sbatch").display().to_string()])
        .status()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = std::process::Command::new("bash")
        .arg(dir.join("submit.sh"))
        .current_dir(elsewhere.path())
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let args = std::fs::read_to_string(&record).unwrap();
    let array = std::fs::read_to_string(dir.join("array.sbatch")).unwrap();
    assert!(
        array.contains(
            "#SBATCH --comment=\"it's \\\"$(touch PWNED6)\\\" `touch PWNED7` #x \\\\\"\n"
        ),
        "{array}"
    );
    let want = format!(
        "--output={}",
        std::path::absolute(&dir)
            .unwrap()
            .join("logs/shard-%A_%a.log")
            .display()
    );
    assert!(
        args.split('\0').any(|a| a == want),
        "sbatch got the log path whole: {args:?}"
    );
    assert_eq!(pwned(root), Vec::<String>::new(), "a name ran as a command");
    assert_eq!(pwned(elsewhere.path()), Vec::<String>::new());
}
