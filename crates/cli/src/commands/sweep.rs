//! `aifabric sweep`: run a design-space sweep, one shard of it, its Slurm job array, or merge
//! shards (library: `aifabric::sweep`).

use crate::{emit_versioned, write_json, Failure};
use aifabric::sweep::slurm::{self, escape_controls as comment, SlurmOptions};
use aifabric::sweep::{merge, plan, Plan, Shard, SweepResult};
use std::fmt::Write as _;
use std::io::Write as _;
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

/// `--emit-slurm DIR` and its options.
pub(crate) struct Emit<'a> {
    pub(crate) dir: &'a Path,
    pub(crate) shards: Option<usize>,
    pub(crate) options: SlurmOptions,
}

pub(crate) fn run(
    file: &Path,
    shard: Option<&str>,
    outputs: Outputs<'_>,
    emit: Option<Emit<'_>>,
    json: bool,
) -> Result<(), Failure> {
    if let Some(e) = &emit {
        // Options first: a bad one is named before the sweep file is read.
        e.options.check()?;
    }
    let p = plan(file)?;
    if shard.is_some() && outputs.table.is_some() {
        return Err(Failure::BadArgument(
            "--table writes the merged results; give it to `sweep merge`, not to a --shard run"
                .into(),
        ));
    }
    if let Some(e) = emit {
        let n = e
            .shards
            .unwrap_or(p.tasks.len().min(64))
            .clamp(1, p.tasks.len().max(1));
        return emit_slurm(&p, file, e.dir, n, &e.options, json);
    }
    let (i, n) = match shard {
        Some(s) => shard_arg(s)?,
        None => (0, 1),
    };
    let tasks = p.shard(i, n).len();
    let start = std::time::Instant::now();
    if shard.is_some() {
        // A line to say which shard this is, where and with what: in a batch job's log, a
        // shard killed midway (time limit, memory) leaves this and no `done` line.
        let job = match (
            std::env::var("SLURM_ARRAY_JOB_ID"),
            std::env::var("SLURM_ARRAY_TASK_ID"),
        ) {
            (Ok(j), Ok(t)) => format!(", Slurm job {j}_{t}"),
            _ => String::new(),
        };
        let threads = match aifabric::threads() {
            1 => "1 thread".to_owned(),
            t => format!("{t} threads"),
        };
        // A line in a log never fails the run.
        let _ = writeln!(
            std::io::stderr(),
            "aifabric sweep {}: shard {i}/{n}, {tasks} of {} tasks, {threads}{job}, memory \
             limit {}",
            comment(&p.name),
            p.tasks.len(),
            aifabric::memory_limit(),
        );
    }
    let bar = progress(&p, tasks);
    let result = p.run_shard(i, n, &|done, _| bar.set_position(done as u64))?;
    bar.finish_and_clear();
    if shard.is_some() {
        // A shard is an intermediate file: JSON only.
        match outputs.json {
            Some(path) => write_json(path, &result)?,
            None => crate::print_json(&result)?,
        }
        let to = outputs
            .json
            .map_or_else(|| "standard output".into(), |o| o.display().to_string());
        let _ = writeln!(
            std::io::stderr(),
            "aifabric sweep {}: shard {i}/{n} done, {tasks} tasks in {:.1} s, written to {}",
            comment(&p.name),
            start.elapsed().as_secs_f64(),
            comment(&to),
        );
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

/// Write the Slurm job array of a sweep into `dir` (the scripts are the library's:
/// `aifabric::sweep::slurm::scripts`, every path and option in them quoted).
fn emit_slurm(
    p: &Plan,
    file: &Path,
    dir: &Path,
    n: usize,
    options: &SlurmOptions,
    json: bool,
) -> Result<(), Failure> {
    let abs = |x: &Path| std::path::absolute(x).unwrap_or_else(|_| x.to_path_buf());
    let exe = std::env::current_exe()
        .map_err(|e| Failure::Runtime(format!("cannot find the aifabric binary: {e}")))?;
    let s = slurm::scripts(p, n, &exe, &abs(file), &abs(dir), options)?;
    std::fs::create_dir_all(dir.join("logs"))
        .map_err(|e| Failure::Runtime(format!("cannot create {}: {e}", dir.display())))?;
    let manifest = serde_json::to_string_pretty(&aifabric::versioned(&s.manifest))
        .map_err(|e| Failure::Runtime(format!("encoding the manifest: {e}")))?;
    for (name, text) in [
        ("array.sbatch", s.array),
        ("merge.sbatch", s.merge),
        ("submit.sh", s.submit),
        (slurm::MANIFEST, manifest + "\n"),
    ] {
        let path = dir.join(name);
        crate::output::write_atomic(&path, |w| std::io::Write::write_all(w, text.as_bytes()))
            .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    let files = ["array.sbatch", "merge.sbatch", "submit.sh", slurm::MANIFEST];
    let summary = serde_json::json!({
        "sweep": p.name,
        "tasks": p.tasks.len(),
        "shards": n,
        "dir": dir.display().to_string(),
        "files": files,
        "options": options,
    });
    emit_versioned(json, &summary, |_| {
        format!(
            "{}: {} tasks in {n} shards; wrote array.sbatch, merge.sbatch, submit.sh and {} to \
             {} (run `bash {}` on the cluster)\n",
            p.name,
            p.tasks.len(),
            slurm::MANIFEST,
            dir.display(),
            dir.join("submit.sh").display()
        )
    })
}

fn status_text(s: &slurm::Status) -> String {
    let mut t = String::new();
    if s.failed.is_empty() {
        let _ = writeln!(
            t,
            "{}: all {} shards have their result in {}",
            comment(&s.sweep),
            s.shards,
            comment(&s.dir)
        );
        return t;
    }
    let _ = writeln!(
        t,
        "{}: {} of {} shards have no valid result in {}:",
        comment(&s.sweep),
        s.failed.len(),
        s.shards,
        comment(&s.dir)
    );
    for f in &s.failed {
        let log = match (&f.log, &f.log_ends) {
            (Some(l), Some(e)) => format!("; {l} ends: {e}"),
            (Some(l), None) => format!("; {l} is empty"),
            _ => "; no log".into(),
        };
        let _ = writeln!(t, "  shard {}: {}{log}", f.shard, f.problem);
    }
    if let Some(r) = &s.rerun {
        let _ = writeln!(t, "rerun them (and a merge after them): {}", comment(r));
    }
    t
}

/// `sweep status DIR`: exits 1 while a shard has no valid result.
pub(crate) fn status(dir: &Path, json: bool) -> Result<(), Failure> {
    let s = slurm::status(dir)?;
    emit_versioned(json, &s, status_text)?;
    if s.failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::Runtime(format!(
            "{} of {} shards have no valid result; rerun them with {}",
            s.failed.len(),
            s.shards,
            comment(s.rerun.as_deref().unwrap_or_default())
        )))
    }
}

/// `sweep rerun-failed DIR`.
pub(crate) fn rerun_failed(dir: &Path, json: bool) -> Result<(), Failure> {
    let r = slurm::rerun_failed(dir)?;
    emit_versioned(json, &r, |r| {
        if r.array.is_empty() {
            format!(
                "{}: all {} shards have their result; nothing to rerun (merge: sbatch {})\n",
                comment(&r.status.sweep),
                r.status.shards,
                comment(&slurm::sh(&dir.join("merge.sbatch").display().to_string()))
            )
        } else {
            format!(
                "{}rerunning shards {}: {}\n",
                status_text(&r.status)
                    .lines()
                    .filter(|l| !l.starts_with("rerun them"))
                    .map(|l| format!("{l}\n"))
                    .collect::<String>(),
                r.array,
                r.submitted
            )
        }
    })
}
