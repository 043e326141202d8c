//! The jobs running on a Slurm cluster, imported as a cluster file (see [`crate::cluster`]).
//!
//! Input: Slurm's JSON job list ([`parse_jobs`]: `squeue --json`, or `scontrol show job
//! --json`). Only `RUNNING` jobs are taken. Output: the cluster file's YAML text, one entry
//! per job (`name:` the Slurm job name and id, `file:` its job file, `hosts:` its nodes'
//! hosts in rank order), for users to read, edit, and give to every command as `--jobs FILE`.
//!
//! **Which host a Slurm node is.** A host is one scale-up domain of the job's `scale_up.gpus`
//! GPUs (a server), named `<zone>.rack<R>.host<k>` (see [`aifabric_workload::cluster`]). The
//! first rule that applies, per node:
//! 1. the node's name is a host name of the fabric;
//! 2. the node is a row of the node map (`--node-map FILE.csv`, rows `slurm_node,host`);
//! 3. the node is `P<digits>` for the node prefix `P` (`--node-prefix P [--first N]`): host
//!    number `digits - N` in fabric order (the order of
//!    [`hosts`](aifabric_workload::cluster::hosts) on the healthy fabric), `N` 1 by default,
//!    so `gpu0001` is the fabric's first host.
//!
//! **Which job file a Slurm job runs.** Its comment `aifabric:PATH` (`sbatch --comment
//! aifabric:jobs/llama.yaml`; a relative `PATH` is read from the directory the job was
//! submitted from), else `DIR/NAME.yaml` for the job directory `DIR` (`--job-dir`) and the
//! Slurm job name `NAME`. The job's node count times the job file's `scale_up.gpus` must be
//! its GPU count.
//!
//! Every problem is a [`SpecError`] naming the Slurm job id, the node and the rule that
//! failed, with the fix. The same input gives the same bytes: jobs in id order, no
//! timestamps.

pub mod hostlist;
mod nodes;
pub mod squeue;

pub use nodes::{parse_node_map, MappedNode, NodeMap, NodePrefix, NodeRule};
pub use squeue::{parse_jobs, SlurmJob};

use crate::error::{Source, SpecError};
use aifabric_model::Fabric;
use nodes::{map_node, Hosts};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A Slurm comment naming the job file: `aifabric:PATH`.
pub const COMMENT_PREFIX: &str = "aifabric:";

/// How an import maps nodes and finds job files.
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    /// Rule 2, if given.
    pub node_map: Option<&'a NodeMap>,
    /// Rule 3, if given.
    pub node_prefix: Option<&'a NodePrefix>,
    /// `DIR/NAME.yaml` is the job file of the Slurm job `NAME` without an `aifabric:` comment.
    pub job_dir: Option<&'a Path>,
    /// The directory the cluster file will be written in: job files are written relative to
    /// it when they are below it, else absolute.
    pub out_dir: &'a Path,
    /// Where the jobs came from (a file, or `squeue --json`), for messages and the header.
    pub source: &'a str,
}

/// Where a job's file came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobFileRule {
    /// The Slurm comment `aifabric:PATH`.
    Comment,
    /// `--job-dir DIR`: `DIR/NAME.yaml`.
    JobDir,
}

/// One imported job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImportedJob {
    /// Its name in the cluster file: `<slurm name>-<slurm id>`.
    pub name: String,
    /// Slurm's job id.
    pub slurm_id: u64,
    /// Slurm's job name.
    pub slurm_name: String,
    /// The job file as the cluster file names it.
    pub file: String,
    /// How the job file was found.
    pub file_from: JobFileRule,
    /// GPUs (ranks).
    pub gpus: u32,
    /// GPUs per host (the job file's `scale_up.gpus`).
    pub gpus_per_host: u32,
    /// Its nodes and their hosts, in rank order.
    pub nodes: Vec<MappedNode>,
}

/// A job left out because it is not running.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkippedJob {
    /// Slurm's job id.
    pub slurm_id: u64,
    /// Slurm's job name.
    pub slurm_name: String,
    /// Its state (`PENDING`...).
    pub state: String,
}

/// An import: the jobs taken and left out, and the cluster file's text.
#[derive(Clone, Debug, Serialize)]
pub struct Import {
    /// The fabric's name.
    pub spec: String,
    /// Where the jobs came from.
    pub source: String,
    /// The running jobs, in Slurm id order.
    pub jobs: Vec<ImportedJob>,
    /// Jobs not running, in id order.
    pub skipped: Vec<SkippedJob>,
    /// GPUs of the jobs taken.
    pub gpus: u64,
    /// Nodes mapped.
    pub nodes: u64,
    /// The cluster file (YAML).
    #[serde(skip)]
    pub yaml: String,
}

/// Import the running `jobs` on `f`: each job's file read and checked, its nodes mapped to
/// hosts, and the cluster file made (and resolved, so it is known to load).
pub fn import(f: &Fabric, jobs: &[SlurmJob], opts: &Options<'_>) -> Result<Import, SpecError> {
    let src = Source {
        name: opts.source.to_owned(),
        text: String::new(),
    };
    let mut sorted: Vec<&SlurmJob> = jobs.iter().collect();
    sorted.sort_by_key(|j| j.id);
    let skipped: Vec<SkippedJob> = sorted
        .iter()
        .filter(|j| !j.running())
        .map(|j| SkippedJob {
            slurm_id: j.id,
            slurm_name: j.name.clone(),
            state: j.state_name(),
        })
        .collect();
    let running: Vec<&SlurmJob> = sorted.into_iter().filter(|j| j.running()).collect();
    if running.is_empty() {
        let mut states: Vec<String> = skipped.iter().map(|s| s.state.clone()).collect();
        states.sort();
        states.dedup();
        return Err(src.error_whole(
            format!(
                "no RUNNING job among Slurm's {} jobs{}",
                jobs.len(),
                if states.is_empty() {
                    String::new()
                } else {
                    format!(" (states: {})", states.join(", "))
                }
            ),
            Some("import when the jobs run (`squeue -t RUNNING` lists them)".into()),
        ));
    }
    let out_dir = std::fs::canonicalize(opts.out_dir).unwrap_or_else(|_| opts.out_dir.to_owned());
    let mut by_g: FxHashMap<u32, Hosts> = FxHashMap::default();
    let mut used: FxHashMap<String, (u64, String)> = FxHashMap::default();
    let mut out = Vec::with_capacity(running.len());
    for job in running {
        let label = format!("Slurm job {} (`{}`)", job.id, job.name);
        let (path, file_from) = job_file(job, opts, &src, &label)?;
        let text = aifabric_model::input::read_text(&path, aifabric_model::input::YAML_LIMIT_BYTES)
            .map_err(|e| {
                let (from, fix) = match file_from {
                    JobFileRule::Comment => (
                        format!("its comment `{}`", job.comment),
                        "fix the path after `aifabric:` (relative to the directory the job was \
                     submitted from) with `scontrol update job ID comment=aifabric:PATH`",
                    ),
                    JobFileRule::JobDir => (
                        "--job-dir".to_owned(),
                        "put a job file named after the Slurm job (`-J NAME`) in --job-dir, or \
                     submit with `--comment aifabric:PATH`",
                    ),
                };
                src.error_whole(
                    format!(
                        "{label}: cannot read its job file {} (from {from}): {e}",
                        path.display()
                    ),
                    Some(fix.into()),
                )
            })?;
        let it = crate::job::parse(&path.display().to_string(), &text)?;
        let g = it.scale_up_gpus.max(1);
        if job.nodes.len() as u64 * u64::from(g) != u64::from(it.gpus) {
            return Err(src.error_whole(
                format!(
                    "{label} runs on {} nodes, {} x {g} = {} GPUs, but its job file {} has {} \
                     GPUs",
                    job.nodes.len(),
                    job.nodes.len(),
                    job.nodes.len() as u64 * u64::from(g),
                    path.display(),
                    it.gpus
                ),
                Some(format!(
                    "a Slurm node is one host of `scale_up.gpus` ({g}) GPUs: make the job \
                     file's `gpus:` {} or run the job on {} nodes",
                    job.nodes.len() as u64 * u64::from(g),
                    it.gpus.div_ceil(g)
                )),
            ));
        }
        let hs = by_g.entry(g).or_insert_with(|| Hosts::new(f, g));
        let mut nodes = Vec::with_capacity(job.nodes.len());
        for node in &job.nodes {
            let (host, rule) = map_node(f, hs, g, node, opts, &src, &label)?;
            if let Some((other, other_node)) = used.get(&host) {
                let whose = if *other == job.id {
                    format!("its node `{other_node}`")
                } else {
                    format!("Slurm job {other}'s node `{other_node}`")
                };
                return Err(src.error_whole(
                    format!(
                        "{label}: node `{node}` is host {host} ({}), which is also {whose}; \
                         in aifabric each host runs one job",
                        rule.name()
                    ),
                    Some(
                        "map each Slurm node to its own host (the node map or --node-prefix), \
                         or leave one of the jobs out (`squeue --json -j ID` lists one)"
                            .into(),
                    ),
                ));
            }
            used.insert(host.clone(), (job.id, node.clone()));
            nodes.push(MappedNode {
                node: node.clone(),
                host,
                rule,
            });
        }
        out.push(ImportedJob {
            name: if job.name.is_empty() {
                format!("job-{}", job.id)
            } else {
                format!("{}-{}", job.name, job.id)
            },
            slurm_id: job.id,
            slurm_name: job.name.clone(),
            file: written_path(&path, &out_dir),
            file_from,
            gpus: it.gpus,
            gpus_per_host: g,
            nodes,
        });
    }
    let yaml = render(f, opts.source, &out);
    // The file must load as written: resolve it as `load_cluster` will.
    let (file, csrc) = crate::cluster::parse_cluster("the imported cluster file", &yaml)?;
    crate::cluster::resolve_cluster(f, &file, &csrc, &out_dir)?;
    Ok(Import {
        spec: f.name().to_owned(),
        source: opts.source.to_owned(),
        gpus: out.iter().map(|j| u64::from(j.gpus)).sum(),
        nodes: out.iter().map(|j| j.nodes.len() as u64).sum(),
        jobs: out,
        skipped,
        yaml,
    })
}

/// The job file of `job`: its comment's `aifabric:PATH`, else `DIR/NAME.yaml`.
fn job_file(
    job: &SlurmJob,
    opts: &Options<'_>,
    src: &Source,
    label: &str,
) -> Result<(PathBuf, JobFileRule), SpecError> {
    if let Some(p) = job.comment.trim().strip_prefix(COMMENT_PREFIX) {
        let p = Path::new(p.trim());
        let path = match &job.work_dir {
            Some(d) if p.is_relative() => Path::new(d).join(p),
            _ => p.to_owned(),
        };
        return Ok((path, JobFileRule::Comment));
    }
    if let Some(dir) = opts.job_dir {
        if job.name.is_empty() || job.name.contains(['/', '\\']) || job.name.starts_with('.') {
            return Err(src.error_whole(
                format!("{label}: its name cannot name a file in --job-dir",),
                Some("submit with `-J NAME` (no `/`), or with `--comment aifabric:PATH`".into()),
            ));
        }
        return Ok((dir.join(format!("{}.yaml", job.name)), JobFileRule::JobDir));
    }
    Err(src.error_whole(
        format!(
            "{label}: no job file: its comment is not `{COMMENT_PREFIX}PATH`{} and --job-dir is not given",
            if job.comment.is_empty() {
                String::new()
            } else {
                format!(" (it is `{}`)", job.comment)
            }
        ),
        Some(format!(
            "pass --job-dir DIR holding `{}.yaml`, or submit with `sbatch --comment aifabric:PATH`",
            if job.name.is_empty() { "NAME" } else { &job.name }
        )),
    ))
}

/// `path` as the cluster file names it: relative to `out_dir` when below it, else absolute.
fn written_path(path: &Path, out_dir: &Path) -> String {
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    match abs.strip_prefix(out_dir) {
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => abs.display().to_string(),
    }
}

/// The cluster file's text: a header saying where it came from, then one entry per job with
/// a comment naming the Slurm job and its nodes.
fn render(f: &Fabric, source: &str, jobs: &[ImportedJob]) -> String {
    let gpus: u64 = jobs.iter().map(|j| u64::from(j.gpus)).sum();
    let mut s = format!(
        "# The jobs running on {} as Slurm listed them ({}): {} jobs, {gpus} GPUs.\n\
         # Written by `aifabric slurm-import`: each Slurm node is one host (a scale-up domain),\n\
         # hosts in rank order. Edit freely; every command reads it with `--jobs FILE`.\n\
         jobs:\n",
        f.name(),
        comment_text(source),
        jobs.len()
    );
    for j in jobs {
        s.push_str(&format!(
            "  # Slurm job {} `{}`: {} nodes x {} GPUs\n",
            j.slurm_id,
            comment_text(&j.slurm_name),
            j.nodes.len(),
            j.gpus_per_host
        ));
        for n in &j.nodes {
            if n.rule != NodeRule::HostName {
                s.push_str(&format!(
                    "  #   {} -> {} ({})\n",
                    comment_text(&n.node),
                    n.host,
                    n.rule.name()
                ));
            }
        }
        s.push_str(&format!("  - name: {}\n", scalar(&j.name)));
        s.push_str(&format!("    file: {}\n", scalar(&j.file)));
        s.push_str("    hosts:\n");
        for n in &j.nodes {
            s.push_str(&format!("      - {}\n", scalar(&n.host)));
        }
    }
    s
}

/// `v` as one YAML scalar, quoted when it must be (serde-saphyr decides; a JSON string is a
/// YAML double-quoted scalar, the fallback).
fn scalar(v: &str) -> String {
    match serde_saphyr::to_string(&v) {
        Ok(y) if !y.trim_end().contains('\n') => y.trim_end().to_owned(),
        _ => serde_json::to_string(v).unwrap_or_default(),
    }
}

/// Text safe inside a YAML comment (one line).
fn comment_text(v: &str) -> String {
    v.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
