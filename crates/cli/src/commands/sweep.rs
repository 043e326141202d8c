//! `aifabric sweep`: run a design-space sweep, one shard of it, its Slurm job array, or merge
//! shards (library: `aifabric::sweep`).

use crate::{emit_versioned, write_json, Failure};
use aifabric::sweep::{merge, plan, Plan, Shard, SweepResult};
use std::fmt::Write;
use std::path::Path;

fn shard_arg(s: &str) -> Result<(usize, usize), Failure> {
    let bad = || {
        Failure::BadArgument(format!(
            "--shard `{s}`: write I/N with 0 <= I < N, e.g. 0/4"
        ))
    };
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

fn progress(p: &Plan, tasks: usize) -> crate::progress::Progress {
    let bar = crate::progress::Progress::bar("sweep");
    bar.set_length(tasks as u64);
    bar.set_message(format!("{} tasks of {}", tasks, p.name));
    bar
}

/// Where a run's results go: `--out` (JSON) and `--table` (Arrow IPC).
pub(crate) struct Outputs<'a> {
    pub(crate) json: Option<&'a Path>,
    pub(crate) table: Option<&'a Path>,
}

pub(crate) fn run(
    file: &Path,
    shard: Option<&str>,
    outputs: Outputs<'_>,
    emit_slurm: Option<&Path>,
    shards: Option<usize>,
    json: bool,
) -> Result<(), Failure> {
    let p = plan(file)?;
    if shard.is_some() && outputs.table.is_some() {
        return Err(Failure::BadArgument(
            "--table writes the merged results; give it to `sweep merge`, not to a --shard run"
                .into(),
        ));
    }
    if let Some(dir) = emit_slurm {
        let n = shards
            .unwrap_or(p.tasks.len().min(64))
            .clamp(1, p.tasks.len().max(1));
        return slurm(&p, file, dir, n);
    }
    let (i, n) = match shard {
        Some(s) => shard_arg(s)?,
        None => (0, 1),
    };
    let bar = progress(&p, p.shard(i, n).len());
    let result = p.run_shard(i, n, &|done, _| bar.set_position(done as u64))?;
    bar.finish_and_clear();
    if shard.is_some() {
        // A shard is an intermediate file: JSON only.
        match outputs.json {
            Some(path) => write_json(path, &result)?,
            None => crate::print_json(&result)?,
        }
        return Ok(());
    }
    finish(&p, &[result], outputs, json)
}

pub(crate) fn merge_files(
    file: &Path,
    shard_files: &[std::path::PathBuf],
    out: Option<&Path>,
    table: Option<&Path>,
    json: bool,
) -> Result<(), Failure> {
    let p = plan(file)?;
    let shards = shard_files
        .iter()
        .map(|f| {
            let text =
                aifabric::input::read_text(f, aifabric::input::DATA_LIMIT_BYTES).map_err(|e| {
                    Failure::BadArgument(format!("cannot read shard {}: {e}", f.display()))
                })?;
            serde_json::from_str::<Shard>(&text).map_err(|e| {
                Failure::BadArgument(format!(
                    "{}: not a shard file of `aifabric sweep --shard` ({e})",
                    f.display()
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    finish(&p, &shards, Outputs { json: out, table }, json)
}

fn finish(p: &Plan, shards: &[Shard], outputs: Outputs<'_>, json: bool) -> Result<(), Failure> {
    let r = merge(p, shards)?;
    if let Some(path) = outputs.json {
        write_json(path, &aifabric::versioned(&r))?;
    }
    if let Some(path) = outputs.table {
        aifabric::tables::write_ipc(path, &aifabric::tables::sweep(&r))?;
    }
    emit_versioned(json, &r, |r| table(p, r))
}

fn table(p: &Plan, r: &SweepResult) -> String {
    let mut s = String::new();
    let study = match &r.failures {
        Some(f) => format!("failure sweep `{}`", f.sweep),
        None => "no failure sweep".into(),
    };
    let workloads = p.file.workloads.len();
    let _ = writeln!(
        s,
        "{}: {} designs of {}, {study}, {workloads} workloads x {} scenarios, {} tasks",
        r.sweep,
        r.designs.len(),
        r.spec,
        p.file.scenarios.len() + 1,
        r.tasks
    );
    if r.failures.is_some() {
        let _ = writeln!(
            s,
            "  {:<6} {:>7} {:>8} {:>8} {:>8} {:>8} {:>9}  overrides / worst scenario",
            "design", "draws", "min", "P1", "P50", "mean", "isolated"
        );
    }
    for (d, x) in r.designs.iter().enumerate() {
        match &x.capacity_retained {
            Some(c) => {
                let _ = writeln!(
                    s,
                    "  {:<6} {:>7} {:>8.4} {:>8.4} {:>8.4} {:>8.4} {:>9}  {}",
                    x.design,
                    x.draws,
                    c.min,
                    c.p1,
                    c.p50,
                    c.mean,
                    x.max_gpus_isolated,
                    p.describe(d)
                );
                if let Some(w) = x.scenarios.first() {
                    let _ = writeln!(s, "  {:<61}  worst: {}", "", w.scenario);
                }
            }
            None => {
                let _ = writeln!(s, "  {:<6} {}", x.design, p.describe(d));
            }
        }
        for w in &x.workloads {
            let bw = w
                .bus_bw_gbytes_per_s
                .map(|b| format!("{b:.1} GB/s bus"))
                .unwrap_or_default();
            let slow = w
                .slowdown
                .map(|v| format!("slowdown {v:.4}x"))
                .unwrap_or_default();
            let cross = match w.crossing {
                Some([out, 0]) => format!("(crosses none of {out} links out)"),
                Some([out, c]) => format!("(crosses {c} of {out} links out)"),
                None => String::new(),
            };
            let time = match (w.time_us, &w.error) {
                (Some(t), _) => format!("{t:>12.1} us {bw:>16} {slow} {cross}"),
                (None, e) => format!("cannot run: {}", e.as_deref().unwrap_or("")),
            };
            let _ = writeln!(
                s,
                "  {:<6} {:<20} {:<20} {}",
                "",
                w.workload,
                w.scenario,
                time.trim_end()
            );
        }
    }
    s
}

/// A word for a POSIX shell: single-quoted, with each `'` closed, escaped and reopened.
fn sh(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Text for a `#` comment line of a script: control characters (a newline would end the
/// comment and make the rest a command) written as escapes.
fn comment(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let esc: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            esc
        })
        .collect()
}

/// Write the Slurm job array of a sweep into `dir`. Every path and name in the scripts is
/// quoted for bash, or escaped in comments; none goes into an `#SBATCH` line (sbatch parses
/// those itself, with its own rules), so the log paths are given to `sbatch` in `submit.sh`.
fn slurm(p: &Plan, file: &Path, dir: &Path, n: usize) -> Result<(), Failure> {
    let abs = |x: &Path| std::path::absolute(x).unwrap_or_else(|_| x.to_path_buf());
    std::fs::create_dir_all(dir.join("logs"))
        .map_err(|e| Failure::Runtime(format!("cannot create {}: {e}", dir.display())))?;
    let exe = std::env::current_exe()
        .map_err(|e| Failure::Runtime(format!("cannot find the aifabric binary: {e}")))?;
    let (exe, file, d) = (
        sh(&exe.display().to_string()),
        sh(&abs(file).display().to_string()),
        abs(dir),
    );
    let dq = |x: &str| sh(&d.join(x).display().to_string());
    let array = format!(
        "#!/bin/bash\n\
         # aifabric sweep {name}: {tasks} tasks in {n} shards, one array task each.\n\
         # Submit with submit.sh (it sets the log files, logs/shard-<task>.log).\n\
         #SBATCH --job-name=aifabric-sweep\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --cpus-per-task=2\n\
         set -euo pipefail\n\
         exec {exe} sweep {file} --shard \"${{SLURM_ARRAY_TASK_ID}}/{n}\" \\\n  \
         --out {dir}/shard-\"${{SLURM_ARRAY_TASK_ID}}\".json\n",
        name = comment(&p.name),
        tasks = p.tasks.len(),
        last = n - 1,
        dir = sh(&d.display().to_string()),
    );
    let shard_list: Vec<String> = (0..n).map(|i| dq(&format!("shard-{i}.json"))).collect();
    let merge = format!(
        "#!/bin/bash\n\
         # Merge the {n} shards of aifabric sweep {name} into sweep.json and its table\n\
         # sweep.arrow (after the array).\n\
         #SBATCH --job-name=aifabric-sweep-merge\n\
         set -euo pipefail\n\
         exec {exe} sweep merge {file} {shards} --out {out} --table {table}\n",
        name = comment(&p.name),
        shards = shard_list.join(" "),
        out = dq("sweep.json"),
        table = dq("sweep.arrow"),
    );
    // sbatch reads `%` in --output as a pattern (`%a`: the array index): one in the
    // directory's own name is written `%%`.
    let logs = d.join("logs").display().to_string().replace('%', "%%");
    let submit = format!(
        "#!/bin/bash\n\
         # Submit the shard array, then the merge once every shard has succeeded.\n\
         set -euo pipefail\n\
         cd \"$(dirname \"$0\")\"\n\
         array=$(sbatch --parsable --output={shard_log} array.sbatch)\n\
         sbatch --dependency=afterok:\"${{array%%;*}}\" --output={merge_log} merge.sbatch\n",
        shard_log = sh(&format!("{logs}/shard-%a.log")),
        merge_log = sh(&format!("{logs}/merge.log")),
    );
    for (name, text) in [
        ("array.sbatch", array),
        ("merge.sbatch", merge),
        ("submit.sh", submit),
    ] {
        let path = dir.join(name);
        crate::output::write_atomic(&path, |w| std::io::Write::write_all(w, text.as_bytes()))
            .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    crate::print(&format!(
        "{}: {} tasks in {n} shards; wrote array.sbatch, merge.sbatch and submit.sh to {} \
         (run `bash {}` on the cluster)\n",
        p.name,
        p.tasks.len(),
        dir.display(),
        dir.join("submit.sh").display()
    ))
}
