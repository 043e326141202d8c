//! A sweep as a Slurm job array: the scripts `aifabric sweep --emit-slurm` writes (the shard
//! array, the merge job, `submit.sh`), which shards of a submitted array have no valid result
//! ([`status`]), and resubmitting only those ([`rerun_failed`]).
//!
//! The merge job runs once the array has ended, whether its shards succeeded or not (the
//! dependency is `afterany`, so it never waits forever behind a failed shard); it checks every
//! shard's result first and, when some are missing or damaged, exits 1 listing them with
//! the command that reruns them. A rerun submits those shards as a new array (same array
//! indices) and a new merge after it. Logs are `logs/shard-<array job>_<shard>.log` and
//! `logs/merge-<job>.log`, so a rerun never overwrites the first run's logs.
//!
//! Every user value that reaches a script is checked first (names, time limits, memory
//! sizes) and written quoted: paths single-quoted for bash, extra `#SBATCH` options in
//! sbatch's own quoting (a line bash never runs). Nothing in a name or an option can end a
//! line of a script or run as a command.

use super::{check_shard, plan, Plan, Shard};
use crate::Error;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file `--emit-slurm` writes beside the scripts: which sweep, how many shards.
pub const MANIFEST: &str = "sweep-slurm.json";

/// The file `submit.sh` appends the job ids it got to (`array ID SHARDS`, `merge ID`).
pub const JOBS: &str = "jobs.txt";

/// CPUs per shard when none are asked for: what the array has always asked for.
pub const DEFAULT_CPUS_PER_TASK: u32 = 2;

/// sbatch options the scripts set themselves, with what to use instead.
const RESERVED: &[(&str, &str)] = &[
    ("array", "--shards sets the array"),
    ("output", "submit.sh names the logs"),
    ("error", "submit.sh names the logs"),
    ("dependency", "submit.sh makes the merge wait for the array"),
    ("parsable", "submit.sh reads the job ids"),
    ("wrap", "the scripts are the jobs"),
    ("partition", "use --partition"),
    ("account", "use --account"),
    ("time", "use --time"),
    ("mem", "use --mem"),
    ("cpus-per-task", "use --cpus-per-task"),
];

/// The Slurm options of the array and the merge job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlurmOptions {
    /// Partition (`--partition`; a list `a,b` takes the first that can run the job).
    pub partition: Option<String>,
    /// Account charged (`--account`).
    pub account: Option<String>,
    /// Time limit per job, as sbatch writes it (`MM`, `MM:SS`, `HH:MM:SS`, `D-HH`,
    /// `D-HH:MM`, `D-HH:MM:SS`).
    pub time: Option<String>,
    /// Memory per node, as sbatch writes it (`4G`, `500M`; no suffix: megabytes).
    pub mem: Option<String>,
    /// CPUs per shard (`--cpus-per-task`); the shard runs that many threads.
    pub cpus_per_task: u32,
    /// Further sbatch options, one long option each (`--qos=high`), as `#SBATCH` lines of
    /// both jobs.
    pub extra: Vec<String>,
}

impl Default for SlurmOptions {
    fn default() -> Self {
        SlurmOptions {
            partition: None,
            account: None,
            time: None,
            mem: None,
            cpus_per_task: DEFAULT_CPUS_PER_TASK,
            extra: Vec::new(),
        }
    }
}

/// A partition or account name: letters, digits, `-`, `_`, `.`; a partition may be a list.
fn check_name(what: &str, v: &str, list: bool) -> Result<(), String> {
    let ok_name = |n: &str| {
        !n.is_empty()
            && n.len() <= 64
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    let ok = if list {
        v.split(',').all(ok_name)
    } else {
        ok_name(v)
    };
    if ok {
        Ok(())
    } else {
        let list = if list { " (a list: a,b)" } else { "" };
        Err(format!(
            "--{what} {}: a Slurm {what} name is letters, digits, `-`, `_` and `.`{list}",
            quoted(v)
        ))
    }
}

/// A value in a message, with control characters escaped.
fn quoted(v: &str) -> String {
    format!("`{}`", escape_controls(v))
}

/// Seconds of a Slurm time limit, as sbatch reads it (`--time`): `MM`, `MM:SS`, `HH:MM:SS`,
/// `D-HH`, `D-HH:MM`, `D-HH:MM:SS`; `None` when it is not one of those.
pub fn time_limit_seconds(v: &str) -> Option<u64> {
    let num = |s: &str| -> Option<u64> {
        if s.is_empty() || s.len() > 9 || !s.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            s.parse().ok()
        }
    };
    let (days, rest) = match v.split_once('-') {
        Some((d, r)) => (Some(num(d)?), r),
        None => (None, v),
    };
    let parts: Vec<u64> = rest.split(':').map(num).collect::<Option<_>>()?;
    let s = match (days, parts.as_slice()) {
        (None, [m]) => m * 60,
        (None, [m, s]) => m * 60 + s,
        (None, [h, m, s]) => h * 3600 + m * 60 + s,
        (Some(d), [h]) => d * 86_400 + h * 3600,
        (Some(d), [h, m]) => d * 86_400 + h * 3600 + m * 60,
        (Some(d), [h, m, s]) => d * 86_400 + h * 3600 + m * 60 + s,
        _ => return None,
    };
    Some(s)
}

/// Megabytes of a Slurm memory size (`--mem`): digits, then `K`, `M`, `G` or `T` (no
/// suffix: megabytes); `None` when it is not one.
pub fn mem_megabytes(v: &str) -> Option<u64> {
    let (digits, unit) = match v.chars().last()? {
        c if c.is_ascii_digit() => (v, 'M'),
        c => (&v[..v.len() - c.len_utf8()], c.to_ascii_uppercase()),
    };
    if digits.is_empty() || digits.len() > 12 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    match unit {
        'K' => Some(n.div_ceil(1024)),
        'M' => Some(n),
        'G' => n.checked_mul(1024),
        'T' => n.checked_mul(1024 * 1024),
        _ => None,
    }
}

impl SlurmOptions {
    /// Every value checked: what is wrong, and how to write it.
    ///
    /// # Errors
    /// A value sbatch would refuse or read otherwise, or one that could not be written
    /// into a script as one option.
    pub fn check(&self) -> Result<(), Error> {
        self.check_text().map_err(Error::bad_request)
    }

    fn check_text(&self) -> Result<(), String> {
        if let Some(p) = &self.partition {
            check_name("partition", p, true)?;
        }
        if let Some(a) = &self.account {
            check_name("account", a, false)?;
        }
        if let Some(t) = &self.time {
            if time_limit_seconds(t).is_none() {
                return Err(format!(
                    "--time {}: write a Slurm time limit: minutes (90), MM:SS, HH:MM:SS \
                     (01:30:00), D-HH, D-HH:MM or D-HH:MM:SS (1-12:00:00)",
                    quoted(t)
                ));
            }
        }
        if let Some(m) = &self.mem {
            if mem_megabytes(m).is_none() {
                return Err(format!(
                    "--mem {}: write a memory size as sbatch reads it: a number with K, M, G or \
                     T (4G, 500M; no suffix is megabytes)",
                    quoted(m)
                ));
            }
        }
        if self.cpus_per_task == 0 || self.cpus_per_task > 4096 {
            return Err(format!(
                "--cpus-per-task {}: give 1 to 4096 CPUs per shard",
                self.cpus_per_task
            ));
        }
        for e in &self.extra {
            check_extra(e)?;
        }
        Ok(())
    }

    /// The `#SBATCH` lines of the shard array (`array`) or of the merge job: partition,
    /// account, time, memory and the extra options in both; CPUs per task in the array
    /// only (the merge runs on one).
    fn lines(&self, array: bool) -> String {
        let mut s = String::new();
        if array {
            s += &format!("#SBATCH --cpus-per-task={}\n", self.cpus_per_task);
        }
        for (name, v) in [
            ("partition", &self.partition),
            ("account", &self.account),
            ("time", &self.time),
            ("mem", &self.mem),
        ] {
            if let Some(v) = v {
                s += &format!("#SBATCH --{name}={}\n", sbatch_word(v));
            }
        }
        for e in &self.extra {
            let (name, value) = match e.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (e.as_str(), None),
            };
            match value {
                Some(v) => s += &format!("#SBATCH {name}={}\n", sbatch_word(v)),
                None => s += &format!("#SBATCH {name}\n"),
            }
        }
        s
    }
}

/// One extra sbatch option: `--name` or `--name=value`, a long option sbatch knows the form
/// of; no control characters (a newline would end the `#SBATCH` line and make the rest a
/// command); not one the scripts set themselves.
fn check_extra(e: &str) -> Result<(), String> {
    let how = "write one long sbatch option per --sbatch, as `--qos=high` or `--exclusive`";
    let Some(body) = e.strip_prefix("--") else {
        return Err(format!("--sbatch {}: {how}", quoted(e)));
    };
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    let name_ok = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !name_ok {
        return Err(format!("--sbatch {}: {how}", quoted(e)));
    }
    if let Some((_, instead)) = RESERVED.iter().find(|(r, _)| *r == name) {
        return Err(format!(
            "--sbatch {}: the scripts set --{name} themselves ({instead})",
            quoted(e)
        ));
    }
    if value.is_some_and(|v| v.chars().any(char::is_control)) {
        return Err(format!(
            "--sbatch {}: a control character (a newline, a tab) cannot be in an #SBATCH line",
            quoted(e)
        ));
    }
    Ok(())
}

/// A value for an `#SBATCH` line, read back by sbatch as exactly `v`: as is when it holds
/// nothing sbatch treats specially, else in double quotes with `"` and `\` escaped (sbatch
/// splits `#SBATCH` lines at blanks, groups quoted text, drops a `\` before any character
/// and ends the line at an unquoted `#`). `v` holds no control characters (checked).
fn sbatch_word(v: &str) -> String {
    let plain = !v.is_empty()
        && v.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ',' | ':' | '/' | '+' | '@')
        });
    if plain {
        return v.to_owned();
    }
    let mut s = String::from('"');
    for c in v.chars() {
        if c == '"' || c == '\\' {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('"');
    s
}

/// A word for a POSIX shell: single-quoted, with each `'` closed, escaped and reopened.
pub fn sh(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Text for a `#` comment line of a script or a message: control characters (a newline
/// would end the comment and make the rest a command) written as escapes.
pub fn escape_controls(s: &str) -> String {
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

/// What `--emit-slurm` records beside the scripts, for [`status`] and [`rerun_failed`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The sweep file, absolute.
    pub sweep: PathBuf,
    /// The sweep's fingerprint when the scripts were written (a changed sweep file or spec
    /// makes the shards already run another sweep's).
    pub fingerprint: String,
    /// Shards of the array.
    pub shards: usize,
    /// Tasks of the sweep.
    pub tasks: usize,
    /// The Slurm options the scripts were written with.
    pub options: SlurmOptions,
}

/// The files `--emit-slurm` writes: `array.sbatch`, `merge.sbatch`, `submit.sh` and the
/// manifest.
#[derive(Clone, Debug)]
pub struct Scripts {
    /// The shard array.
    pub array: String,
    /// The merge job.
    pub merge: String,
    /// Submits the array (all shards, or a list) and a merge after it.
    pub submit: String,
    /// [`MANIFEST`]'s content.
    pub manifest: Manifest,
}

/// The scripts of `plan` as an array of `shards` jobs writing into `dir`, run by `exe` on
/// the sweep file `sweep` (all three absolute: a job runs from anywhere).
///
/// # Errors
/// An option [`SlurmOptions::check`] refuses; `shards` of 0.
pub fn scripts(
    plan: &Plan,
    shards: usize,
    exe: &Path,
    sweep: &Path,
    dir: &Path,
    opts: &SlurmOptions,
) -> Result<Scripts, Error> {
    opts.check()?;
    if shards == 0 {
        return Err(Error::bad_request("--shards 0: give at least 1".into()));
    }
    let n = shards;
    let last = n - 1;
    let (exe_q, file_q, dir_q) = (
        sh(&exe.display().to_string()),
        sh(&sweep.display().to_string()),
        sh(&dir.display().to_string()),
    );
    let dq = |x: &str| sh(&dir.join(x).display().to_string());
    let name = escape_controls(&plan.name);
    let array = format!(
        "#!/bin/bash\n\
         # aifabric sweep {name}: {tasks} tasks in {n} shards, one array task each.\n\
         # Submit with submit.sh (logs: logs/shard-<array job>_<shard>.log). sbatch's SBATCH_*\n\
         # variables (SBATCH_PARTITION, SBATCH_TIMELIMIT, ...) override these #SBATCH lines.\n\
         #SBATCH --job-name=aifabric-sweep\n\
         #SBATCH --array=0-{last}\n\
         {lines}\
         set -euo pipefail\n\
         # The shard runs as many threads as it has CPUs (rayon reads RAYON_NUM_THREADS).\n\
         export RAYON_NUM_THREADS=\"${{SLURM_CPUS_PER_TASK:-{cpus}}}\"\n\
         # Its memory limit (what its engines refuse to exceed) is {pct}% of the task's\n\
         # memory when Slurm sets one (--mem: SLURM_MEM_PER_NODE, megabytes), as it is of\n\
         # a machine's own; an AIFABRIC_MAX_MEMORY_BYTES given at submission wins.\n\
         if [ -n \"${{SLURM_MEM_PER_NODE:-}}\" ] && [ -z \"${{AIFABRIC_MAX_MEMORY_BYTES:-}}\" ]; then\n  \
         export AIFABRIC_MAX_MEMORY_BYTES=$(( SLURM_MEM_PER_NODE * 1048576 * {pct} / 100 ))\n\
         fi\n\
         exec {exe_q} sweep {file_q} --shard \"${{SLURM_ARRAY_TASK_ID}}/{n}\" \\\n  \
         --out {dir_q}/shard-\"${{SLURM_ARRAY_TASK_ID}}\".json\n",
        tasks = plan.tasks.len(),
        lines = opts.lines(true),
        cpus = opts.cpus_per_task,
        pct = (aifabric_model::limits::PHYSICAL_FRACTION * 100.0).round() as u32,
    );
    let shard_list: Vec<String> = (0..n).map(|i| dq(&format!("shard-{i}.json"))).collect();
    let merge = format!(
        "#!/bin/bash\n\
         # Merge the {n} shards of aifabric sweep {name} into sweep.json and its table\n\
         # sweep.arrow. Runs once the array has ended (afterany): a shard without its result\n\
         # stops it, listed with the command that reruns it (`aifabric sweep rerun-failed`).\n\
         #SBATCH --job-name=aifabric-sweep-merge\n\
         {lines}\
         set -euo pipefail\n\
         {exe_q} sweep status {dir_q}\n\
         exec {exe_q} sweep merge {file_q} {shards} --out {out} --table {table}\n",
        lines = opts.lines(false),
        shards = shard_list.join(" "),
        out = dq("sweep.json"),
        table = dq("sweep.arrow"),
    );
    // sbatch reads `%` in --output as a pattern (`%A`: the array's job id, `%a`: the array
    // index, `%j`: the job id): one in the directory's own name is written `%%`.
    let logs = dir.join("logs").display().to_string().replace('%', "%%");
    let submit = format!(
        "#!/bin/bash\n\
         # Submit the shard array (every shard, or those listed as the first argument the way\n\
         # sbatch writes an array: 3,5 or 0-3), then the merge, which runs once they have all\n\
         # ended and checks every shard's result. `aifabric sweep rerun-failed` runs this with\n\
         # the shards that have none.\n\
         set -euo pipefail\n\
         cd \"$(dirname \"$0\")\"\n\
         shards=\"${{1:-0-{last}}}\"\n\
         if ! [[ \"$shards\" =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]]; then\n  \
         echo \"submit.sh: shards \\`$shards\\`: list them as sbatch does, e.g. 3,5 or 0-3\" >&2\n  \
         exit 2\n\
         fi\n\
         array=$(sbatch --parsable --array=\"$shards\" --output={shard_log} array.sbatch)\n\
         array=\"${{array%%;*}}\"\n\
         echo \"array $array $shards\" >> {jobs}\n\
         merge=$(sbatch --parsable --dependency=afterany:\"$array\" --output={merge_log} merge.sbatch)\n\
         merge=\"${{merge%%;*}}\"\n\
         echo \"merge $merge\" >> {jobs}\n\
         echo \"submitted shards $shards as job array $array, and the merge as job $merge (after it)\"\n",
        shard_log = sh(&format!("{logs}/shard-%A_%a.log")),
        merge_log = sh(&format!("{logs}/merge-%j.log")),
        jobs = JOBS,
    );
    Ok(Scripts {
        array,
        merge,
        submit,
        manifest: Manifest {
            sweep: sweep.to_path_buf(),
            fingerprint: plan.fingerprint.clone(),
            shards: n,
            tasks: plan.tasks.len(),
            options: opts.clone(),
        },
    })
}

/// A shard of an array without a valid result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailedShard {
    /// Its index (the array index).
    pub shard: usize,
    /// Why its result does not count (missing, unreadable, damaged, another sweep's).
    pub problem: String,
    /// Its latest log (`logs/shard-<job>_<shard>.log`, relative to the directory), if any.
    pub log: Option<String>,
    /// The last line of that log, control characters escaped (what killed it, often).
    pub log_ends: Option<String>,
}

/// Which shards of an array written by `--emit-slurm` have their result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Status {
    /// The sweep file.
    pub sweep: String,
    /// The directory of the scripts and results.
    pub dir: String,
    /// Shards of the array.
    pub shards: usize,
    /// Shards with a valid result.
    pub done: usize,
    /// The others, by index.
    pub failed: Vec<FailedShard>,
    /// The command that resubmits the failed shards (and a merge after them).
    pub rerun: Option<String>,
}

/// The manifest of `dir`.
///
/// # Errors
/// No manifest (not a directory `--emit-slurm` wrote), or an unreadable one.
pub fn manifest(dir: &Path) -> Result<Manifest, Error> {
    let path = dir.join(MANIFEST);
    let text = crate::input::read_text(&path, crate::input::DATA_LIMIT_BYTES).map_err(|e| {
        Error::bad_request(format!(
            "{}: no Slurm sweep here ({e}); give the directory `aifabric sweep FILE \
             --emit-slurm DIR` wrote",
            dir.display()
        ))
    })?;
    serde_json::from_str(&text).map_err(|e| {
        Error::bad_request(format!(
            "{}: not a manifest of `aifabric sweep --emit-slurm` ({e}); write the scripts again",
            path.display()
        ))
    })
}

/// The latest log of shard `i` in `dir/logs` (the highest job id), relative to `dir`.
fn latest_log(dir: &Path, i: usize) -> Option<String> {
    let suffix = format!("_{i}.log");
    std::fs::read_dir(dir.join("logs"))
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            let job = name.strip_prefix("shard-")?.strip_suffix(&suffix)?;
            let id: u64 = job.parse().ok()?;
            Some((id, name))
        })
        .max()
        .map(|(_, name)| format!("logs/{name}"))
}

/// The last non-blank line of `path`, control characters escaped, at most 300 characters.
fn last_line(path: &Path) -> Option<String> {
    let text = crate::input::read_text(path, crate::input::DATA_LIMIT_BYTES).ok()?;
    // A progress bar's carriage returns: the last state of the line.
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?;
    let line = line.rsplit('\r').next().unwrap_or(line).trim();
    Some(escape_controls(&line.chars().take(300).collect::<String>()))
}

/// Which shards of the array in `dir` have no valid result, each with its latest log.
///
/// # Errors
/// `dir` holds no manifest; the sweep file cannot be read, or changed since the scripts
/// were written (its shards are then another sweep's: write the scripts again).
pub fn status(dir: &Path) -> Result<Status, Error> {
    let m = manifest(dir)?;
    let p = plan(&m.sweep)?;
    if p.fingerprint != m.fingerprint {
        return Err(Error::bad_request(format!(
            "{}: the sweep file or its spec changed since the scripts in {} were written; \
             write them again (`aifabric sweep FILE --emit-slurm DIR`) and submit them",
            m.sweep.display(),
            dir.display()
        )));
    }
    let n = m.shards;
    let mut failed = Vec::new();
    for i in 0..n {
        let file = format!("shard-{i}.json");
        let path = dir.join(&file);
        let problem = if !path.exists() {
            Some(format!("no result ({file} is missing)"))
        } else {
            match crate::input::read_text(&path, crate::input::DATA_LIMIT_BYTES) {
                Err(e) => Some(format!("{file} cannot be read: {e}")),
                Ok(text) => match serde_json::from_str::<Shard>(&text) {
                    Err(e) => Some(format!("{file} is not a shard result ({e})")),
                    Ok(s) => check_shard(&p, i, n, &s)
                        .err()
                        .map(|e| format!("{file} is not this shard's result: {e}")),
                },
            }
        };
        if let Some(problem) = problem {
            let log = latest_log(dir, i);
            let log_ends = log.as_ref().and_then(|l| last_line(&dir.join(l)));
            failed.push(FailedShard {
                shard: i,
                problem,
                log,
                log_ends,
            });
        }
    }
    let rerun = (!failed.is_empty()).then(|| {
        format!(
            "aifabric sweep rerun-failed {}",
            sh(&dir.display().to_string())
        )
    });
    Ok(Status {
        sweep: m.sweep.display().to_string(),
        dir: dir.display().to_string(),
        shards: n,
        done: n - failed.len(),
        failed,
        rerun,
    })
}

/// `3,5,6`: shard indices as sbatch's `--array` takes them.
pub fn array_list(shards: &[usize]) -> String {
    shards
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// What [`rerun_failed`] did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rerun {
    /// The status before the rerun (its failed shards are the ones resubmitted).
    pub status: Status,
    /// The shards resubmitted, as sbatch's `--array` (empty: nothing to rerun).
    pub array: String,
    /// What `submit.sh` printed (the job ids).
    pub submitted: String,
}

/// The array job ids `submit.sh` recorded in `dir`.
fn recorded_arrays(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(JOBS))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("array")).then(|| w.next().map(str::to_owned))?
        })
        .collect()
}

/// Resubmit the shards of the array in `dir` that have no valid result (as a new array with
/// the same indices) and a merge after them, through `dir/submit.sh`; nothing when every
/// shard has its result. Refused while a job array this directory submitted is still queued
/// or running (`squeue`): its shards have no result yet because they have not run.
///
/// # Errors
/// [`status`]'s; an array still in the queue; `squeue` or `submit.sh` (sbatch) failing.
pub fn rerun_failed(dir: &Path) -> Result<Rerun, Error> {
    let status = status(dir)?;
    let shards: Vec<usize> = status.failed.iter().map(|f| f.shard).collect();
    if shards.is_empty() {
        return Ok(Rerun {
            status,
            array: String::new(),
            submitted: String::new(),
        });
    }
    let ours = recorded_arrays(dir);
    if !ours.is_empty() {
        let out = std::process::Command::new("squeue")
            .args(["--noheader", "--format=%F"])
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| {
                Error::runtime_in("cannot ask squeue whether the array is still running", e)
            })?;
        if !out.status.success() {
            return Err(Error::Runtime {
                message: format!(
                    "squeue failed ({}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
                source: None,
            });
        }
        let queued = String::from_utf8_lossy(&out.stdout);
        let live: Vec<&String> = ours
            .iter()
            .filter(|id| queued.lines().any(|l| l.trim() == id.as_str()))
            .collect();
        if let Some(id) = live.first() {
            return Err(Error::bad_request(format!(
                "job array {id} of this sweep is still queued or running (squeue); rerun the \
                 failed shards once it has ended (its merge job lists them)"
            )));
        }
    }
    let array = array_list(&shards);
    let out = std::process::Command::new("bash")
        .arg(dir.join("submit.sh"))
        .arg(&array)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| Error::runtime_in("cannot run submit.sh", e))?;
    if !out.status.success() {
        return Err(Error::Runtime {
            message: format!(
                "submit.sh {array} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            source: None,
        });
    }
    Ok(Rerun {
        status,
        array,
        submitted: String::from_utf8_lossy(&out.stdout).trim().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_as_sbatch_reads_them() {
        assert_eq!(time_limit_seconds("90"), Some(5400));
        assert_eq!(time_limit_seconds("5:30"), Some(330));
        assert_eq!(time_limit_seconds("01:30:00"), Some(5400));
        assert_eq!(time_limit_seconds("2-0"), Some(172_800));
        assert_eq!(time_limit_seconds("1-12:30"), Some(131_400));
        assert_eq!(time_limit_seconds("1-00:00:01"), Some(86_401));
        for bad in ["", "1h", "1:2:3:4", "-5", "1-", "$(x)", "1 0", "1-2-3"] {
            assert_eq!(time_limit_seconds(bad), None, "{bad}");
        }
    }

    #[test]
    fn memory_sizes_as_sbatch_reads_them() {
        assert_eq!(mem_megabytes("500"), Some(500));
        assert_eq!(mem_megabytes("4G"), Some(4096));
        assert_eq!(mem_megabytes("4g"), Some(4096));
        assert_eq!(mem_megabytes("2048K"), Some(2));
        assert_eq!(mem_megabytes("1T"), Some(1 << 20));
        for bad in ["", "G", "4 G", "4GB", "-1", "1.5G", "4X"] {
            assert_eq!(mem_megabytes(bad), None, "{bad}");
        }
    }

    #[test]
    fn extra_options_are_one_long_option_each() {
        for ok in [
            "--qos=high",
            "--exclusive",
            "--comment=a b \"c\" #d 'e' \\f",
        ] {
            assert!(check_extra(ok).is_ok(), "{ok}");
        }
        for bad in [
            "-q high",
            "qos=high",
            "--qos=a\nrm -rf x",
            "--Qos=x",
            "--array=1",
            "--output=x",
            "--",
        ] {
            assert!(check_extra(bad).is_err(), "{bad:?}");
        }
        assert!(check_extra("--partition=gpu")
            .unwrap_err()
            .contains("use --partition"));
    }

    /// sbatch's reading of an `#SBATCH` word (its `_get_argument`): blanks split, quotes
    /// group, `\` escapes the next character, an unquoted `#` ends the line.
    fn sbatch_reads(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut cur: Option<String> = None;
        let (mut quote, mut escape) = (None, false);
        for c in line.chars() {
            if escape {
                cur.get_or_insert_with(String::new).push(c);
                escape = false;
            } else if c == '\\' {
                escape = true;
                cur.get_or_insert_with(String::new);
            } else if let Some(q) = quote {
                if c == q {
                    quote = None;
                } else {
                    cur.get_or_insert_with(String::new).push(c);
                }
            } else if c == '"' || c == '\'' {
                quote = Some(c);
                cur.get_or_insert_with(String::new);
            } else if c == '#' {
                break;
            } else if c == ' ' {
                words.extend(cur.take());
            } else {
                cur.get_or_insert_with(String::new).push(c);
            }
        }
        words.extend(cur);
        words
    }

    #[test]
    fn extra_values_read_back_whole() {
        for v in [
            "high",
            "a b",
            "x\"y",
            "it's",
            "a#b",
            "back\\slash",
            "$(touch x)",
            "",
        ] {
            let line = format!("--comment={}", sbatch_word(v));
            assert_eq!(
                sbatch_reads(&line),
                vec![format!("--comment={v}")],
                "{line}"
            );
        }
    }
}
