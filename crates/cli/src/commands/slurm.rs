//! `aifabric slurm-import`: Slurm's running jobs as a cluster file. The import is
//! `aifabric_spec::slurm::import`; this file only gathers its inputs (the JSON from a file or
//! from `squeue --json`, the node map), writes the file and prints the summary.

use crate::args::SlurmImportArgs;
use crate::{emit_versioned, load, output, Failure};
use aifabric::stages::spec::slurm::{self, Import, NodePrefix, Options};
use aifabric::stages::spec::Source;
use std::io::Write;
use std::path::Path;

pub(crate) fn import(a: SlurmImportArgs) -> Result<(), Failure> {
    let SlurmImportArgs {
        spec,
        squeue_json,
        node_map,
        node_prefix,
        first,
        job_dir,
        out,
        json,
    } = a;
    let out_dir = check_out(&out)?;
    let f = load(&spec)?;
    let (source, text) = match &squeue_json {
        Some(p) => (
            p.display().to_string(),
            read(p, "the output of `squeue --json`")?,
        ),
        None => ("squeue --json".to_owned(), run_squeue()?),
    };
    let jobs = slurm::parse_jobs(&source, &text).map_err(Failure::BadInput)?;
    let map = match &node_map {
        Some(p) => Some(
            slurm::parse_node_map(
                &p.display().to_string(),
                &read(p, "a CSV file of `slurm_node,host` rows")?,
            )
            .map_err(Failure::BadInput)?,
        ),
        None => None,
    };
    let prefix = node_prefix.map(|prefix| NodePrefix { prefix, first });
    let done = slurm::import(
        &f,
        &jobs,
        &Options {
            node_map: map.as_ref(),
            node_prefix: prefix.as_ref(),
            job_dir: job_dir.as_deref(),
            out_dir: &out_dir,
            source: &source,
        },
    )
    .map_err(Failure::BadInput)?;
    output::write_atomic(&out, |w| w.write_all(done.yaml.as_bytes()))
        .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", out.display())))?;
    let summary = Summary {
        out: out.display().to_string(),
        import: &done,
    };
    emit_versioned(json, &summary, human)
}

/// The JSON summary: the import and where its file went.
#[derive(serde::Serialize)]
struct Summary<'a> {
    out: String,
    #[serde(flatten)]
    import: &'a Import,
}

fn human(s: &Summary<'_>) -> String {
    let i = s.import;
    let plural = |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut t = format!(
        "{} on {}: {} GPUs on {}; written to {}\n",
        plural(i.jobs.len() as u64, "running Slurm job"),
        i.spec,
        i.gpus,
        plural(i.nodes, "node"),
        s.out
    );
    for j in &i.jobs {
        let mut rules: Vec<&str> = j
            .nodes
            .iter()
            .map(|n| match n.rule {
                slurm::NodeRule::HostName => "host names",
                slurm::NodeRule::NodeMap => "node map",
                slurm::NodeRule::NodePrefix => "node prefix",
            })
            .collect();
        rules.dedup();
        t.push_str(&format!(
            "  {:<24} Slurm job {:<8} {:>6} GPUs  {:>4} nodes ({})  {}\n",
            j.name,
            j.slurm_id,
            j.gpus,
            j.nodes.len(),
            rules.join(", "),
            j.file
        ));
    }
    if !i.skipped.is_empty() {
        let ids: Vec<String> = i
            .skipped
            .iter()
            .map(|s| format!("{} {}", s.slurm_id, s.state))
            .collect();
        t.push_str(&format!("  not running, left out: {}\n", ids.join(", ")));
    }
    t
}

/// The directory `out` goes in; refused (exit 1) when it is missing or `out` exists and is
/// not a regular file: an output replaces only a file.
fn check_out(out: &Path) -> Result<std::path::PathBuf, Failure> {
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => std::path::PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(Failure::Runtime(format!(
            "cannot write {}: {} is not a directory",
            out.display(),
            dir.display()
        )));
    }
    if let Ok(m) = std::fs::symlink_metadata(out) {
        if !m.is_file() {
            return Err(Failure::Runtime(format!(
                "cannot write {}: it exists and is not a regular file (an output replaces only \
                 a file)",
                out.display()
            )));
        }
    }
    Ok(dir)
}

/// A whole input file, or a located error saying what it should be.
fn read(p: &Path, what: &str) -> Result<String, Failure> {
    aifabric::input::read_text(p, aifabric::input::DATA_LIMIT_BYTES).map_err(|e| {
        Failure::BadInput(
            Source {
                name: p.display().to_string(),
                text: String::new(),
            }
            .error_whole(format!("cannot read: {e}"), Some(format!("give {what}"))),
        )
    })
}

/// `squeue --json`'s output. A missing `squeue` is a bad request (exit 2: pass the file
/// instead); `squeue` failing (no controller) is a runtime failure.
fn run_squeue() -> Result<String, Failure> {
    let out = std::process::Command::new("squeue")
        .arg("--json")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Failure::BadArgument(
                    "`squeue` is not installed here (Slurm's client)\n  hint: run where Slurm's \
                     commands are, or pass --squeue-json FILE with the output of `squeue --json`"
                        .into(),
                )
            } else {
                Failure::Runtime(format!("cannot run `squeue --json`: {e}"))
            }
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(Failure::Runtime(format!(
            "`squeue --json` failed ({}): {}\n  hint: check that slurmctld answers (`sinfo`), \
             or pass --squeue-json FILE",
            out.status,
            err.trim()
        )));
    }
    String::from_utf8(out.stdout)
        .map_err(|_| Failure::Runtime("`squeue --json` wrote text that is not UTF-8".into()))
}
