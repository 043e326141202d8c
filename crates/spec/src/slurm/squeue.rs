//! Slurm's JSON job lists: `squeue --json` (Slurm 22.05 and later) and `scontrol show job
//! --json` (23.02 and later), both a `jobs` array.
//!
//! The fields read, and how they changed between versions (Slurm's OpenAPI plugins
//! `openapi/v0.0.38` in 22.05, data parsers `v0.0.39`...`v0.0.42` after it):
//! - `job_id`: an integer in every version.
//! - `name`, `nodes` (a hostlist: `node[001-004,007]`), `comment`: strings; a newer `comment`
//!   may be an object `{job, administrator, system}`, of which `job` is the user's.
//! - `job_state`: a string (`"RUNNING"`, 22.05) or a list of a base state and flags
//!   (`["RUNNING"]`, `["RUNNING", "CONFIGURING"]`, 23.02 on).
//! - `node_count`: an integer (22.05) or `{set, infinite, number}` (later).
//! - `current_working_directory`: where the job was submitted (relative `aifabric:` paths in
//!   the comment are read from there).
//!
//! Every other field is ignored, so fields added by later versions do no harm.

use crate::error::{Source, SpecError};
use serde::Deserialize;

/// One job as Slurm lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlurmJob {
    /// Slurm's job id.
    pub id: u64,
    /// The job's name (`sbatch -J`).
    pub name: String,
    /// Its state: a base state (`RUNNING`, `PENDING`...) and flags.
    pub state: Vec<String>,
    /// Its nodes, the node list expanded, in Slurm's order (rank order for block
    /// distribution).
    pub nodes: Vec<String>,
    /// The user's comment (`sbatch --comment`).
    pub comment: String,
    /// Where it was submitted from, when Slurm says.
    pub work_dir: Option<String>,
}

impl SlurmJob {
    /// Running now (a running job may carry flags such as `CONFIGURING`).
    pub fn running(&self) -> bool {
        self.state.iter().any(|s| s == "RUNNING")
    }

    /// The state as Slurm prints it (`PENDING`, `RUNNING+CONFIGURING`).
    pub fn state_name(&self) -> String {
        if self.state.is_empty() {
            "UNKNOWN".to_owned()
        } else {
            self.state.join("+")
        }
    }
}

#[derive(Deserialize)]
struct RawList {
    jobs: Vec<RawJob>,
    #[serde(default)]
    errors: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawJob {
    job_id: u64,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    job_state: Option<OneOrMany>,
    #[serde(default)]
    nodes: Option<String>,
    #[serde(default)]
    node_count: Option<Count>,
    #[serde(default)]
    comment: Option<Comment>,
    #[serde(default)]
    current_working_directory: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// An integer, or the later versions' `{set, infinite, number}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Count {
    Plain(u64),
    NoVal {
        #[serde(default)]
        set: bool,
        #[serde(default)]
        number: u64,
    },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Comment {
    Text(String),
    Parts {
        #[serde(default)]
        job: Option<String>,
    },
}

/// Read a `squeue --json` or `scontrol show job --json` text: every job, each node list
/// expanded. `name` is the file (or command) in error messages.
pub fn parse_jobs(name: &str, text: &str) -> Result<Vec<SlurmJob>, SpecError> {
    let src = Source {
        name: name.to_owned(),
        text: String::new(),
    };
    let raw: RawList = serde_json::from_str(text).map_err(|e| {
        src.error_at_line(
            e.line() as u64,
            e.column() as u64,
            format!("not Slurm's job list: {e}"),
            Some(
                "give the output of `squeue --json` (or `scontrol show job --json`): an object \
                 with a `jobs` array"
                    .into(),
            ),
        )
    })?;
    if !raw.errors.is_empty() {
        let said: Vec<String> = raw.errors.iter().map(error_text).collect();
        return Err(src.error_whole(
            format!("Slurm reported errors: {}", said.join("; ")),
            Some("fix what Slurm reports and run `squeue --json` again".into()),
        ));
    }
    raw.jobs
        .into_iter()
        .map(|j| {
            let nodes_expr = j.nodes.unwrap_or_default();
            let job_name = j.name.unwrap_or_default();
            let nodes = super::hostlist::expand(&nodes_expr).map_err(|e| {
                src.error_whole(
                    format!("Slurm job {} (`{job_name}`): {e}", j.job_id),
                    Some("give the JSON as squeue wrote it".into()),
                )
            })?;
            let count = match j.node_count {
                Some(Count::Plain(n)) => Some(n),
                Some(Count::NoVal { set: true, number }) => Some(number),
                _ => None,
            };
            let state = match j.job_state {
                Some(OneOrMany::One(s)) => vec![s],
                Some(OneOrMany::Many(v)) => v,
                None => Vec::new(),
            };
            // A pending job's node count is what it asks for; only an allocation's is checked.
            if let Some(n) = count.filter(|_| !nodes.is_empty()) {
                if n != nodes.len() as u64 {
                    return Err(src.error_whole(
                        format!(
                            "Slurm job {} (`{job_name}`): `node_count` is {n} but its node list \
                             `{nodes_expr}` names {} nodes",
                            j.job_id,
                            nodes.len()
                        ),
                        Some("give the JSON as squeue wrote it".into()),
                    ));
                }
            }
            let comment = match j.comment {
                Some(Comment::Text(s)) => s,
                Some(Comment::Parts { job }) => job.unwrap_or_default(),
                None => String::new(),
            };
            Ok(SlurmJob {
                id: j.job_id,
                name: job_name,
                state,
                nodes,
                comment,
                work_dir: j.current_working_directory.filter(|d| !d.is_empty()),
            })
        })
        .collect()
}

/// One entry of Slurm's `errors` array as text (22.05: `{error, error_number}`; later:
/// `{description, error, source, ...}`).
fn error_text(v: &serde_json::Value) -> String {
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).filter(|s| !s.is_empty());
    match (field("description"), field("error")) {
        (Some(d), Some(e)) => format!("{e}: {d}"),
        (Some(s), None) | (None, Some(s)) => s.to_owned(),
        (None, None) => v.to_string(),
    }
}
