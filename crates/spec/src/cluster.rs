//! Cluster files: the jobs running on a fabric and where, read with located errors and
//! resolved into an `aifabric_workload::cluster::Cluster` (disjoint GPUs).
//!
//! ```yaml
//! # The jobs running now, placed in this order: each on GPUs the ones above left.
//! jobs:
//!   - file: ../jobs/llama3-405b-16k.yaml   # a job file, relative to this file
//!     placement: packed                    # a policy (default: the job file's own)
//!     within: [east.dc0]                   # only GPUs under these selectors (optional)
//!   - name: finetune                       # default: the job's own name
//!     job: { name: ft, gpus: 64, parallelism: { tp: 8, dp: 8 },
//!            model: { card: llama3-8b, sequence_length: 8192, global_batch: 64 },
//!            compute: { gpu: h100-sxm } }
//!     hosts: [east.dc1.z0.rack0.host0, ...]  # explicit hosts (scale-up domains), rank order
//! ```
//!
//! A host is one scale-up domain of the job's `scale_up.gpus` (see
//! [`aifabric_workload::cluster`]).

use crate::error::{FileKind, Source, SpecError};
use crate::job::JobFile;
use crate::spec::S;
use aifabric_model::{DeviceId, Fabric, FailureMask, Role};
use aifabric_workload::cluster::{hosts, place_free, Cluster, ClusterJob};
use aifabric_workload::job::Iteration;
use aifabric_workload::Placement;
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_saphyr::Location;
use std::path::{Path, PathBuf};

/// A cluster file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterFile {
    /// The running jobs, placed in order.
    pub jobs: Vec<S<ClusterEntry>>,
}

/// One running job.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterEntry {
    /// Name in reports (default: the job's).
    #[serde(default)]
    pub name: Option<S<String>>,
    /// A job file, relative to the cluster file.
    #[serde(default)]
    pub file: Option<S<String>>,
    /// The job written out (the job file's fields).
    #[serde(default)]
    pub job: Option<Box<JobFile>>,
    /// Placement policy (`packed`, `spread`, `fragmented:SEED`, `topology-aware`).
    #[serde(default)]
    pub placement: Option<S<String>>,
    /// Place only on GPUs under these selectors (zones, racks, buildings...).
    #[serde(default)]
    pub within: Vec<S<String>>,
    /// Explicit hosts, in rank order.
    #[serde(default)]
    pub hosts: Vec<S<String>>,
}

/// Parse a cluster file's text.
pub fn parse_cluster(name: &str, text: &str) -> Result<(ClusterFile, Source), SpecError> {
    let src = Source {
        name: name.to_owned(),
        text: text.to_owned(),
    };
    let opts = serde_saphyr::options! { with_snippet: false };
    match serde_saphyr::from_str_with_options::<ClusterFile>(text, opts) {
        Ok(c) => Ok((c, src)),
        Err(e) => Err(src.from_yaml_in(&e, FileKind::Cluster)),
    }
}

/// Read a cluster file and resolve it on `f`.
pub fn load_cluster(f: &Fabric, path: &str) -> Result<Cluster, SpecError> {
    let text = Source::read_yaml(
        path,
        "cannot read the cluster file",
        "give the path of a cluster YAML file, e.g. examples/clusters/prometheus-mixed.yaml",
    )?;
    let (file, src) = parse_cluster(path, &text)?;
    let dir = Path::new(path).parent().unwrap_or(Path::new("."));
    resolve_cluster(f, &file, &src, dir)
}

/// Resolve a parsed cluster file on `f`: each job read (job files relative to `dir`) and
/// placed, in order, on GPUs the jobs before it left.
pub fn resolve_cluster(
    f: &Fabric,
    file: &ClusterFile,
    src: &Source,
    dir: &Path,
) -> Result<Cluster, SpecError> {
    let healthy = FailureMask::none(f);
    let mut taken = vec![false; f.devices().len()];
    let mut host_maps: FxHashMap<u32, FxHashMap<String, Vec<DeviceId>>> = FxHashMap::default();
    let mut jobs = Vec::with_capacity(file.jobs.len());
    let mut at = Vec::with_capacity(file.jobs.len());
    if file.jobs.is_empty() {
        return Err(src.error_whole(
            "the cluster file lists no jobs",
            Some("list the running jobs under `jobs:`, each with `file:` or `job:`".into()),
        ));
    }
    for entry in &file.jobs {
        let here = entry.referenced;
        let e = &entry.value;
        let iteration = iteration(e, src, here, dir)?;
        let g = iteration.scale_up_gpus;
        let name = e
            .name
            .as_ref()
            .map_or_else(|| iteration.name.clone(), |n| n.value.clone());
        let (gpus, placed_by) = if !e.hosts.is_empty() {
            if let Some(p) = &e.placement {
                return Err(src.error(
                    p.referenced,
                    "a job placed on explicit hosts takes no placement policy",
                    Some("give either `hosts:` or `placement:` (with `within:`)".into()),
                ));
            }
            let map = host_maps.entry(g).or_insert_with(|| {
                hosts(f, g, &healthy)
                    .into_iter()
                    .collect::<FxHashMap<_, _>>()
            });
            let mut gpus = Vec::with_capacity(e.hosts.len() * g as usize);
            for h in &e.hosts {
                let Some(hg) = map.get(h.value.as_str()) else {
                    let near =
                        aifabric_model::did_you_mean(&h.value, map.keys().map(String::as_str));
                    return Err(src.error(
                        h.referenced,
                        format!(
                            "no host `{}` on {} (hosts are scale-up domains of {g} GPUs, \
                             named `<zone>.rack<R>.host<k>`)",
                            h.value,
                            f.name()
                        ),
                        Some(near.map_or_else(
                            || "list the fabric's GPUs with `aifabric build SPEC --out model.json`; GPU `<zone>.rack<R>.gpu<i>` is on host `i / scale_up.gpus`".into(),
                            |n| format!("did you mean `{n}`?"),
                        )),
                    ));
                };
                gpus.extend_from_slice(hg);
            }
            if gpus.len() != iteration.gpus as usize {
                return Err(src.error(
                    e.hosts[0].referenced,
                    format!(
                        "{} hosts of {g} GPUs are {} GPUs, but `{name}` has {} ranks",
                        e.hosts.len(),
                        gpus.len(),
                        iteration.gpus
                    ),
                    Some(format!("list {} hosts", iteration.gpus.div_ceil(g.max(1)))),
                ));
            }
            (gpus, "hosts".to_owned())
        } else {
            let (policy, p_at) = match &e.placement {
                Some(p) => (
                    Placement::parse(&p.value).ok_or_else(|| {
                        src.error(
                            p.referenced,
                            format!("unknown placement `{}`", p.value),
                            Some(
                                "placements: packed, spread, fragmented[:SEED], topology-aware"
                                    .into(),
                            ),
                        )
                    })?,
                    p.referenced,
                ),
                None => (iteration.placement, here),
            };
            let allowed = within(f, &e.within, src)?;
            let gpus = place_free(
                f,
                iteration.gpus,
                g,
                policy,
                &healthy,
                &taken,
                allowed.as_deref(),
            )
            .map_err(|err| {
                let free = if allowed.is_some() {
                    "free GPUs under `within`"
                } else {
                    "GPUs the jobs above left free"
                };
                src.error(
                    p_at,
                    format!("cannot place `{name}` on the {free}: {err}"),
                    Some(
                        "jobs are placed in file order: move a larger job up, widen `within`, \
                         or make the job smaller"
                            .into(),
                    ),
                )
            })?;
            let mut by = policy.name();
            if !e.within.is_empty() {
                let w: Vec<&str> = e.within.iter().map(|w| w.value.as_str()).collect();
                by = format!("{by} within {}", w.join(", "));
            }
            (gpus, by)
        };
        for g in &gpus {
            taken[g.idx()] = true;
        }
        at.push(here);
        jobs.push(ClusterJob {
            name,
            iteration,
            gpus,
            placed_by,
        });
    }
    Cluster::new(f, jobs).map_err(|e| {
        src.error(
            at[e.job],
            e.message,
            Some("give each job its own hosts".into()),
        )
    })
}

/// The job of an entry: its file (relative to `dir`) or written out.
fn iteration(
    e: &ClusterEntry,
    src: &Source,
    here: Location,
    dir: &Path,
) -> Result<Iteration, SpecError> {
    match (&e.file, &e.job) {
        (Some(p), None) => {
            let path: PathBuf = if Path::new(&p.value).is_absolute() {
                PathBuf::from(&p.value)
            } else {
                dir.join(&p.value)
            };
            let text =
                aifabric_model::input::read_text(&path, aifabric_model::input::YAML_LIMIT_BYTES)
                    .map_err(|err| {
                        src.error(
                            p.referenced,
                            format!("cannot read the job file {}: {err}", path.display()),
                            Some("job files are relative to the cluster file's directory".into()),
                        )
                    })?;
            crate::job::parse(&path.display().to_string(), &text)
        }
        (None, Some(j)) => crate::job::plan(j, src).map(|p| p.iteration()),
        (Some(p), Some(_)) => Err(src.error(
            p.referenced,
            "a job has either `file:` or `job:`, not both",
            None,
        )),
        (None, None) => Err(src.error(
            here,
            "this job has neither `file:` (a job file) nor `job:` (the job written out)",
            Some("add `file: PATH` relative to the cluster file".into()),
        )),
    }
}

/// The GPUs under `within`'s selectors (`None`: no restriction).
fn within(f: &Fabric, sels: &[S<String>], src: &Source) -> Result<Option<Vec<bool>>, SpecError> {
    if sels.is_empty() {
        return Ok(None);
    }
    let mut allowed = vec![false; f.devices().len()];
    for s in sels {
        let mut mask = FailureMask::none(f);
        crate::scenario::select_into(f, s, src, &mut mask)?;
        let mut any = false;
        for d in mask.failed_devices() {
            if f.device(d).role == Role::Gpu {
                allowed[d.idx()] = true;
                any = true;
            }
        }
        if !any {
            return Err(src.error(
                s.referenced,
                format!("`{}` holds no GPU", s.value),
                Some("select zones, racks or buildings (name prefixes such as `east.dc0`)".into()),
            ));
        }
    }
    Ok(Some(allowed))
}
