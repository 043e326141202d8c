//! Design-space sweeps: a sweep file names a base spec, a grid of overrides (dotted paths into
//! the spec, every combination a *design*) and a failure study; it expands into *tasks* with
//! stable ids (a design's Monte Carlo draws are cut into tasks of `draws_per_task`, draw `i`
//! the same whichever task runs it). Tasks run in any process and any order: a shard runs
//! every task whose index is `I mod N`, and [`merge`] puts task results back together.
//! A whole run is its tasks merged the same way, so merged shards are byte-identical to it.
//!
//! ```yaml
//! spec: prometheus                       # built-in name, or a YAML file beside the sweep file
//! grid:
//!   regions[east].bag.planes: [8, 16]    # `[NAME]` picks the list element with that name
//!   inter_bag[0].topology: [planar, spread]
//! failures: {sweep: montecarlo, samples: 1000, seed: 1, probability: [link=1e-4]}
//! draws_per_task: 250
//! ```
//!
//! A sweep file may also name workloads (collectives, jobs) and scenarios: every workload
//! runs on every design, healthy and under each scenario, one task each ([`workload`]).

mod merge;
pub mod slurm;
pub mod workload;

pub use merge::{check_shard, merge};

use crate::failures::FailureRequest;
use crate::{Error, Setup, Study};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
pub use workload::{CollectiveSpec, NamedScenario, Workload, WorkloadRow};

/// The failure study of a sweep file (the `failures` command's options).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FailureStudy {
    /// `single`, `single:CLASS`, `pairs:CLASS` or `montecarlo`.
    #[serde(default = "default_sweep")]
    pub sweep: String,
    /// Monte Carlo draws per design.
    #[serde(default = "default_samples")]
    pub samples: u64,
    /// Monte Carlo seed.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// `CLASS=P` entries (`link=1e-4`, `switch:atsw=1e-3`, `pd=0.001`).
    #[serde(default)]
    pub probability: Vec<String>,
    /// `CLASS=MTBF/MTTR` entries, hours.
    #[serde(default)]
    pub mtbf: Vec<String>,
}

fn default_sweep() -> String {
    "single".into()
}
fn default_samples() -> u64 {
    1000
}
fn default_seed() -> u64 {
    1
}
fn default_draws_per_task() -> u64 {
    250
}

/// A sweep file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    /// Built-in spec name, or a YAML file (relative to the sweep file's directory).
    pub spec: String,
    /// Dotted paths into the spec, each with the values to try; every combination is a
    /// design, in path order (sorted), the last path varying fastest.
    #[serde(default)]
    pub grid: BTreeMap<String, Vec<serde_json::Value>>,
    /// The failure study run on every design.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<FailureStudy>,
    /// Monte Carlo draws per task.
    #[serde(default = "default_draws_per_task")]
    pub draws_per_task: u64,
    /// Collectives and jobs run on every design, healthy and under each scenario.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<Workload>,
    /// Named what-if states the workloads run under besides the healthy design.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<NamedScenario>,
}

/// Most tasks a sweep expands into.
pub const MAX_TASKS: usize = 100_000;

/// One task: a design and, for Monte Carlo, a range of draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// Index in the sweep (the stable id).
    pub index: usize,
    /// Design index.
    pub design: usize,
    /// Draws `first..first + samples` (Monte Carlo), else `0..0`.
    pub first: u64,
    /// Number of draws.
    pub samples: u64,
    /// A workload task: (workload, scenario), scenario 0 the healthy design and `k` the
    /// sweep file's scenario `k - 1`; `None` for a failure-study task.
    pub work: Option<(usize, usize)>,
}

/// A sweep ready to run: the file, the base spec's text, the designs and the tasks.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The sweep file's name, as given.
    pub name: String,
    /// The file.
    pub file: SweepFile,
    /// The base spec's name and text.
    pub spec: (String, String),
    /// Each design's overrides (path -> value).
    pub designs: Vec<BTreeMap<String, serde_json::Value>>,
    /// Every task, in index order.
    pub tasks: Vec<Task>,
    /// A fingerprint of the sweep file, the spec text and the job files: shards of different
    /// sweeps are not merged.
    pub fingerprint: String,
    /// The workloads, checked.
    workloads: Vec<workload::Checked>,
}

/// One scenario of a design, merged over its tasks.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Row {
    /// Scenario name.
    pub scenario: String,
    /// Every selector it fails, joined by ` + ` (the merge key).
    pub srgs: String,
    /// Draws that produced it.
    pub draws: u64,
    /// Least routed capacity kept over every site and region pair.
    pub min_capacity_retained: f64,
    /// GPUs reaching no other site.
    pub gpus_isolated: u64,
}

/// What one task produced.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct TaskResult {
    /// Task index.
    pub task: usize,
    /// Design index.
    pub design: usize,
    /// Scenarios, in the order the failure sweep reported them.
    pub rows: Vec<Row>,
    /// A workload task's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadRow>,
}

/// A shard's output: the task results of one `--shard I/N` run.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Shard {
    /// The sweep's fingerprint.
    pub fingerprint: String,
    /// Tasks in the whole sweep.
    pub tasks: usize,
    /// `[I, N]`.
    pub shard: [usize; 2],
    /// The results.
    pub results: Vec<TaskResult>,
}

/// One design's results.
#[derive(Clone, Debug, Serialize)]
pub struct DesignResult {
    /// `d0`, `d1`, ...
    pub design: String,
    /// Its overrides.
    pub overrides: BTreeMap<String, serde_json::Value>,
    /// Draws (or scenarios) in all.
    pub draws: u64,
    /// Capacity retained over the scenarios, weighted by draws (no failure study: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_retained: Option<aifabric_failures::report::Distribution>,
    /// Most GPUs isolated by one scenario.
    pub max_gpus_isolated: u64,
    /// Every scenario, worst first (least capacity, most GPUs isolated, then by name).
    pub scenarios: Vec<Row>,
    /// Every workload under every scenario (healthy first), in the sweep file's order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadRow>,
}

/// A whole sweep's results.
#[derive(Clone, Debug, Serialize)]
pub struct SweepResult {
    /// The sweep file's name (without its directory).
    pub sweep: String,
    /// The base spec, as the sweep file names it.
    pub spec: String,
    /// The failure study.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<FailureStudy>,
    /// Tasks run.
    pub tasks: usize,
    /// One entry per design.
    pub designs: Vec<DesignResult>,
}

/// Read a sweep file and expand it (spec read, every design checked to build).
pub fn plan(path: &std::path::Path) -> Result<Plan, Error> {
    let name = path.display().to_string();
    let text = aifabric_model::input::read_text(path, aifabric_model::input::YAML_LIMIT_BYTES)
        .map_err(|e| Error::bad_request(format!("cannot read sweep file {name}: {e}")))?;
    let opts = serde_saphyr::options! { strict_booleans: true };
    let file: SweepFile = serde_saphyr::from_str_with_options(&text, opts).map_err(|e| {
        Error::bad_request(format!(
            "{name}: {e} (a sweep file has `spec`, `grid`, `failures`, `draws_per_task`, \
             `workloads` and `scenarios`)"
        ))
    })?;
    let dir = path.parent().unwrap_or_else(|| std::path::Path::new("."));
    let spec_arg = if aifabric_spec::builtin::get(&file.spec).is_some() {
        file.spec.clone()
    } else {
        dir.join(&file.spec).display().to_string()
    };
    let spec = aifabric_spec::read(&spec_arg).map_err(Error::bad_request_from)?;
    let workloads = file
        .workloads
        .iter()
        .enumerate()
        .map(|(i, w)| workload::check(&name, dir, i, w))
        .collect::<Result<Vec<_>, _>>()?;
    plan_from(name, &text, file, spec, workloads)
}

fn plan_from(
    name: String,
    text: &str,
    file: SweepFile,
    spec: (String, String),
    workloads: Vec<workload::Checked>,
) -> Result<Plan, Error> {
    if file.failures.is_none() && workloads.is_empty() {
        return Err(Error::bad_request(format!(
            "{name}: nothing to run; give `failures` (a failure study) or `workloads`"
        )));
    }
    if !file.scenarios.is_empty() && workloads.is_empty() {
        return Err(Error::bad_request(format!(
            "{name}: `scenarios` are what workloads run under; give `workloads` too"
        )));
    }
    let mut seen = std::collections::BTreeSet::new();
    for w in &workloads {
        if !seen.insert(w.name.as_str()) {
            return Err(Error::bad_request(format!(
                "{name}: two workloads are named `{}`; give each its own name",
                w.name
            )));
        }
    }
    let mut seen = std::collections::BTreeSet::from(["healthy"]);
    for sc in &file.scenarios {
        if !seen.insert(sc.name.as_str()) {
            return Err(Error::bad_request(format!(
                "{name}: scenario name `{}` is taken (`healthy` is the design itself); give \
                 each scenario its own name",
                sc.name
            )));
        }
    }
    if file.draws_per_task == 0 {
        return Err(Error::bad_request(format!(
            "{name}: draws_per_task must be at least 1"
        )));
    }
    for (path, values) in &file.grid {
        if values.is_empty() {
            return Err(Error::bad_request(format!(
                "{name}: grid path `{path}` has no values; give a list, e.g. [8, 16]"
            )));
        }
    }
    let montecarlo = file
        .failures
        .as_ref()
        .is_some_and(|f| f.sweep.trim() == "montecarlo");
    let samples = file.failures.as_ref().map_or(0, |f| f.samples);
    if montecarlo && samples > aifabric_failures::sweep::MAX_DRAWS {
        return Err(Error::bad_request(format!(
            "{name}: failures.samples {}: above the limit of {} Monte Carlo draws per design \
             (about ten minutes on the largest built-in fabric on 2 cores); draw at most {}, \
             or raise a rare class's probability to see its failures more often",
            aifabric_model::thousands(samples),
            aifabric_model::thousands(aifabric_failures::sweep::MAX_DRAWS),
            aifabric_model::thousands(aifabric_failures::sweep::MAX_DRAWS),
        )));
    }
    // The size, counted before anything is expanded: a grid or a draw count too large for
    // memory is refused at once, not after building its task list.
    let n_designs = file
        .grid
        .values()
        .try_fold(1u64, |n, v| n.checked_mul(v.len() as u64))
        .unwrap_or(u64::MAX);
    let per_design = if montecarlo {
        samples.div_ceil(file.draws_per_task)
    } else {
        u64::from(file.failures.is_some())
    }
    .saturating_add((workloads.len() as u64).saturating_mul(file.scenarios.len() as u64 + 1));
    let n_tasks = n_designs.saturating_mul(per_design);
    if n_tasks > MAX_TASKS as u64 {
        return Err(Error::bad_request(format!(
            "{name}: {} designs x {} tasks each = {} tasks, more than the limit of {}; \
             raise draws_per_task, draw fewer samples or narrow the grid",
            aifabric_model::thousands(n_designs),
            aifabric_model::thousands(per_design),
            aifabric_model::thousands(n_tasks),
            aifabric_model::thousands(MAX_TASKS as u64)
        )));
    }
    let mut designs = vec![BTreeMap::new()];
    for (path, values) in &file.grid {
        designs = designs
            .into_iter()
            .flat_map(|d: BTreeMap<String, serde_json::Value>| {
                values.iter().map(move |v| {
                    let mut d = d.clone();
                    d.insert(path.clone(), v.clone());
                    d
                })
            })
            .collect();
    }
    let mut tasks = Vec::new();
    for d in 0..designs.len() {
        if montecarlo {
            let mut first = 0;
            while first < samples {
                let n = file.draws_per_task.min(samples - first);
                tasks.push(Task {
                    index: tasks.len(),
                    design: d,
                    first,
                    samples: n,
                    work: None,
                });
                first += n;
            }
        } else if file.failures.is_some() {
            tasks.push(Task {
                index: tasks.len(),
                design: d,
                first: 0,
                samples: 0,
                work: None,
            });
        }
        for w in 0..workloads.len() {
            for sc in 0..=file.scenarios.len() {
                tasks.push(Task {
                    index: tasks.len(),
                    design: d,
                    first: 0,
                    samples: 0,
                    work: Some((w, sc)),
                });
            }
        }
    }
    debug_assert_eq!(tasks.len() as u64, n_tasks);
    let fingerprint = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        spec.1.hash(&mut h);
        for w in &workloads {
            w.text.hash(&mut h);
        }
        format!("{:016x}", h.finish())
    };
    let plan = Plan {
        name,
        file,
        spec,
        designs,
        tasks,
        fingerprint,
        workloads,
    };
    // Every design must build, and every scenario resolve on it: a bad path, value or
    // selector is an error before any work.
    for d in 0..plan.designs.len() {
        let f = plan.design(d)?;
        for sc in &plan.file.scenarios {
            sc.resolve(&f).map_err(|e| {
                Error::bad_request(format!(
                    "{}: scenario `{}` on design d{d} ({}): {e}",
                    plan.name,
                    sc.name,
                    plan.describe(d)
                ))
            })?;
        }
    }
    Ok(plan)
}

/// Set `path` (dotted; `[N]` an index, `[NAME]` the element whose `name` is NAME) in `doc`.
fn set_path(
    doc: &mut serde_json::Value,
    path: &str,
    value: &serde_json::Value,
) -> Result<(), String> {
    let mut at = doc;
    for part in path.split('.') {
        let (key, pick) = match part.split_once('[') {
            Some((k, rest)) => {
                let inner = rest
                    .strip_suffix(']')
                    .ok_or_else(|| format!("`{part}`: a `[` without its `]`"))?;
                (k, Some(inner))
            }
            None => (part, None),
        };
        if !key.is_empty() {
            let obj = at
                .as_object_mut()
                .ok_or_else(|| format!("`{key}`: not a mapping here"))?;
            at = obj.entry(key.to_owned()).or_insert(serde_json::Value::Null);
        }
        if let Some(pick) = pick {
            let list = at
                .as_array_mut()
                .ok_or_else(|| format!("`{part}`: `{key}` is not a list"))?;
            let i = match pick.parse::<usize>() {
                Ok(i) if i < list.len() => i,
                Ok(i) => return Err(format!("`{part}`: index {i}, the list has {}", list.len())),
                Err(_) => list
                    .iter()
                    .position(|e| e.get("name").and_then(|n| n.as_str()) == Some(pick))
                    .ok_or_else(|| {
                        let names: Vec<&str> = list
                            .iter()
                            .filter_map(|e| e.get("name").and_then(|n| n.as_str()))
                            .collect();
                        format!(
                            "`{part}`: no element named `{pick}`; names are {}",
                            names.join(", ")
                        )
                    })?,
            };
            at = &mut list[i];
        }
    }
    *at = value.clone();
    Ok(())
}

impl Plan {
    /// The spec text of design `d`: the base spec with the design's overrides (as JSON, a
    /// subset of YAML the spec reader takes).
    pub fn design_text(&self, d: usize) -> Result<String, Error> {
        if self.designs[d].is_empty() {
            return Ok(self.spec.1.clone());
        }
        // YAML 1.2 booleans only: read untyped, a zone called `n` would become `false`.
        let opts = serde_saphyr::options! { strict_booleans: true };
        let mut doc: serde_json::Value = serde_saphyr::from_str_with_options(&self.spec.1, opts)
            .map_err(|e| Error::bad_request(format!("{}: {e}", self.spec.0)))?;
        for (path, v) in &self.designs[d] {
            set_path(&mut doc, path, v).map_err(|e| {
                Error::bad_request(format!("{}: grid path `{path}`: {e}", self.name))
            })?;
        }
        serde_json::to_string(&doc).map_err(Error::runtime_from)
    }

    /// Design `d` built, or why it does not build (the design and the spec's message).
    pub fn design(&self, d: usize) -> Result<aifabric_model::Fabric, Error> {
        let text = self.design_text(d)?;
        aifabric_spec::build_str(&format!("{} [d{d}]", self.spec.0), &text).map_err(|e| {
            Error::bad_request(format!(
                "{}: design d{d} ({}) does not build: {}",
                self.name,
                self.describe(d),
                e.message
            ))
        })
    }

    /// `path=value, ...` of design `d`.
    pub fn describe(&self, d: usize) -> String {
        let parts: Vec<String> = self.designs[d]
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if parts.is_empty() {
            "the base spec".into()
        } else {
            parts.join(", ")
        }
    }

    /// The tasks of shard `i` of `n` (every task whose index is `i mod n`).
    pub fn shard(&self, i: usize, n: usize) -> Vec<&Task> {
        self.tasks.iter().filter(|t| t.index % n == i).collect()
    }

    /// Run `tasks` (in index order, so a design's tasks are together: each design is built,
    /// and its evaluator made, once); `progress(done, of)` after each.
    pub fn run(
        &self,
        tasks: &[&Task],
        progress: &dyn Fn(usize, usize),
    ) -> Result<Vec<TaskResult>, Error> {
        let mut out = Vec::with_capacity(tasks.len());
        let req = self.file.failures.as_ref().map(|st| FailureRequest {
            sweep: st.sweep.clone(),
            samples: st.samples,
            seed: st.seed,
            probability: st.probability.clone(),
            mtbf: st.mtbf.clone(),
            top: 0,
            // Every scenario is a row: shards merge into the single run's table.
            keep: Some(usize::MAX),
            ..FailureRequest::default()
        });
        for group in tasks.chunk_by(|a, b| a.design == b.design) {
            let d = group[0].design;
            let f = self.design(d)?;
            let study = Study::healthy(&f, Setup::default());
            // The failure evaluator, made once per design when one of its tasks needs it.
            let mut prepared = None;
            for t in group {
                if let Some((w, sc)) = t.work {
                    let (label, scenario) = match sc.checked_sub(1) {
                        None => ("healthy", aifabric_model::Scenario::healthy(&f)),
                        Some(k) => {
                            let named = &self.file.scenarios[k];
                            let s = named.resolve(&f).map_err(Error::bad_request)?;
                            (named.name.as_str(), s)
                        }
                    };
                    let row = workload::run(&f, &self.workloads[w], label, scenario)?;
                    out.push(TaskResult {
                        task: t.index,
                        design: t.design,
                        rows: Vec::new(),
                        workload: Some(row),
                    });
                    progress(out.len(), tasks.len());
                    continue;
                }
                let req = req.as_ref().expect("failure tasks exist only with a study");
                if prepared.is_none() {
                    prepared = Some(study.prepare_failures(req)?);
                }
                let prepared = prepared.as_ref().expect("just made");
                let rep = prepared.run(t.first, t.samples, &|_, _| {})?;
                out.push(TaskResult {
                    task: t.index,
                    design: t.design,
                    rows: rep
                        .scenarios
                        .iter()
                        .map(|s| Row {
                            scenario: s.scenario.clone(),
                            srgs: s.srgs.join(" + "),
                            draws: s.draws,
                            min_capacity_retained: s.min_capacity_retained,
                            gpus_isolated: s.gpus_isolated,
                        })
                        .collect(),
                    workload: None,
                });
                progress(out.len(), tasks.len());
            }
        }
        Ok(out)
    }

    /// Run shard `i` of `n`.
    pub fn run_shard(
        &self,
        i: usize,
        n: usize,
        progress: &dyn Fn(usize, usize),
    ) -> Result<Shard, Error> {
        if n == 0 || i >= n {
            return Err(Error::bad_request(format!(
                "--shard {i}/{n}: write I/N with 0 <= I < N, e.g. 0/4"
            )));
        }
        Ok(Shard {
            fingerprint: self.fingerprint.clone(),
            tasks: self.tasks.len(),
            shard: [i, n],
            results: self.run(&self.shard(i, n), progress)?,
        })
    }
}
