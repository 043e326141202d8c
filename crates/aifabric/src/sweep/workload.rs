//! Workloads of a sweep: collectives and jobs run on every design, healthy and under each
//! of the sweep file's named scenarios (design x scenario x workload, one task each).
//!
//! ```yaml
//! workloads:
//!   - name: ar-1k
//!     collective: {op: all_reduce, gpus: 1024, size: 256M, placement: spread}
//!     options: {lb: spray}                 # the CLI's flags by name, as in Python
//!   - name: llama
//!     job: ../jobs/llama3-405b-16k.yaml    # relative to the sweep file
//! scenarios:                               # healthy is always run
//!   - {name: plane3-drained, drain: [east.bag.plane3]}
//! ```

use crate::{CollectiveRequest, Error, Setup, Study};
use aifabric_model::{Fabric, Scenario};
use aifabric_workload::job::Iteration;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A collective of a sweep file: one size.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveSpec {
    /// `all_reduce`, `all_gather`, `reduce_scatter` or `all_to_all`.
    #[serde(default = "default_op")]
    pub op: String,
    /// GPUs in the group.
    pub gpus: u32,
    /// Message size (`256M`, `1G`, bytes).
    #[serde(default = "default_size")]
    pub size: String,
    /// Algorithm (`auto`, NCCL's tuner's choice, when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algo: Option<String>,
    /// NCCL protocol: `ll`, `ll128`, `simple` (`auto` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proto: Option<String>,
    /// Placement.
    #[serde(default = "default_placement")]
    pub placement: String,
    /// Software latency per step on top of NCCL's protocol latencies, microseconds (the
    /// CLI's default, 0).
    #[serde(default = "default_alpha_us")]
    pub alpha_us: f64,
}

fn default_op() -> String {
    "all_reduce".into()
}
fn default_size() -> String {
    "1G".into()
}
fn default_placement() -> String {
    "packed".into()
}
fn default_alpha_us() -> f64 {
    0.0
}

/// A workload of a sweep file: a collective or a job file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Its name in the results (default `w0`, `w1`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A collective.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<CollectiveSpec>,
    /// A job file, relative to the sweep file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// The job's placement instead of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// Control-plane and engine options by the CLI's flag names (`lb`, `seed`, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, serde_json::Value>,
}

/// A what-if state the workloads also run under.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NamedScenario {
    /// Its name in the results.
    pub name: String,
    /// Failed devices or links (selectors).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail: Vec<String>,
    /// Hard-drained.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drain: Vec<String>,
    /// Soft-drained.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drain_soft: Vec<String>,
}

impl NamedScenario {
    /// The scenario on design `f`.
    pub fn resolve(&self, f: &Fabric) -> Result<Scenario, String> {
        Scenario::from_selectors(f, &self.fail, &self.drain, &self.drain_soft)
            .map_err(|e| e.to_string())
    }
}

/// One workload run on one design under one scenario.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct WorkloadRow {
    /// The workload's name.
    pub workload: String,
    /// `healthy` or the scenario's name.
    pub scenario: String,
    /// The collective's time, or the job's step time, microseconds (none: it cannot run
    /// under this scenario, `error` says why).
    pub time_us: Option<f64>,
    /// The collective's bus bandwidth, GB/s (jobs: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_bw_gbytes_per_s: Option<f64>,
    /// Time over the healthy design's (a scenario that fails or drains anything).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<f64>,
    /// Links the scenario takes out, and how many of them the healthy run used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crossing: Option<[u64; 2]>,
    /// Why the workload cannot run under this scenario (GPUs cut off, no path): the sweep
    /// goes on; a request the design itself refuses (too many GPUs) stops it instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A workload ready to run: its request and options, checked when the sweep is planned.
#[derive(Clone, Debug)]
pub(crate) enum Prepared {
    Collective(CollectiveRequest),
    Job(Box<Iteration>, Option<aifabric_workload::Placement>),
}

/// A workload checked: name, what it runs, its options.
#[derive(Clone, Debug)]
pub(crate) struct Checked {
    pub(crate) name: String,
    pub(crate) run: Prepared,
    pub(crate) setup: Setup,
    /// The job file's text (part of the sweep's fingerprint).
    pub(crate) text: String,
}

/// Check workload `i` of sweep file `sweep` (at `dir`).
pub(crate) fn check(
    sweep: &str,
    dir: &std::path::Path,
    i: usize,
    w: &Workload,
) -> Result<Checked, Error> {
    let name = w.name.clone().unwrap_or_else(|| format!("w{i}"));
    let bad = |m: String| Error::bad_request(format!("{sweep}: workload `{name}`: {m}"));
    let opts: BTreeMap<String, String> = w
        .options
        .iter()
        .map(|(k, v)| {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), text)
        })
        .collect();
    let setup = Setup::from_options(&opts).map_err(|e| bad(e.message().to_owned()))?;
    let parse = |what: &str, v: &str| -> Result<aifabric_workload::Placement, Error> {
        v.parse().map_err(|e| bad(format!("{what} `{v}`: {e}")))
    };
    let (run, text) = match (&w.collective, &w.job) {
        (Some(c), None) => {
            if w.placement.is_some() {
                return Err(bad(
                    "`placement` is for jobs; a collective sets its own".into()
                ));
            }
            if c.gpus < 2 {
                return Err(bad("a collective needs at least 2 GPUs".into()));
            }
            if !(c.alpha_us.is_finite() && c.alpha_us >= 0.0) {
                return Err(bad("alpha_us must be a number >= 0".into()));
            }
            let req = CollectiveRequest {
                op: crate::collective_op(&c.op).map_err(bad)?,
                algo: c
                    .algo
                    .as_deref()
                    .map(|a| a.parse().map_err(|e| bad(format!("algo `{a}`: {e}"))))
                    .transpose()?,
                proto: c
                    .proto
                    .as_deref()
                    .map(|p| p.parse().map_err(|e| bad(format!("proto `{p}`: {e}"))))
                    .transpose()?,
                gpus: c.gpus,
                placement: parse("placement", &c.placement)?,
                sizes: vec![crate::size::parse_size(&c.size).ok_or_else(|| {
                    bad(format!("size `{}`: give bytes or 64K, 256M, 1G", c.size))
                })?],
                alpha_s: c.alpha_us * 1e-6,
            };
            (Prepared::Collective(req), String::new())
        }
        (None, Some(job)) => {
            let path = dir.join(job);
            let shown = path.display().to_string();
            let text =
                aifabric_model::input::read_text(&path, aifabric_model::input::YAML_LIMIT_BYTES)
                    .map_err(|e| bad(format!("cannot read job file {shown}: {e}")))?;
            let it = aifabric_spec::job::parse(&shown, &text)
                .map_err(|e| bad(format!("job file {e}")))?;
            let placement = w
                .placement
                .as_deref()
                .map(|p| parse("placement", p))
                .transpose()?;
            (Prepared::Job(Box::new(it), placement), text)
        }
        _ => {
            return Err(bad(
                "give one of `collective: {gpus: N, ...}` or `job: FILE`".into(),
            ))
        }
    };
    Ok(Checked {
        name,
        run,
        setup,
        text,
    })
}

/// Run workload `w` on design `f` under `scenario` (named `label`); a run the scenario
/// makes impossible is a row with its `error`.
pub(crate) fn run(
    f: &Fabric,
    w: &Checked,
    label: &str,
    scenario: Scenario,
) -> Result<WorkloadRow, Error> {
    match run_one(f, w, label, scenario) {
        Err(Error::Runtime { message, .. }) => Ok(WorkloadRow {
            workload: w.name.clone(),
            scenario: label.to_owned(),
            time_us: None,
            bus_bw_gbytes_per_s: None,
            slowdown: None,
            crossing: None,
            error: Some(message),
        }),
        other => other,
    }
}

fn run_one(f: &Fabric, w: &Checked, label: &str, scenario: Scenario) -> Result<WorkloadRow, Error> {
    let study = Study::new(f, scenario, w.setup);
    let crossing =
        |c: &Option<crate::Crossing>| c.as_ref().map(|c| [c.links_out as u64, c.crossed as u64]);
    let row = match &w.run {
        Prepared::Collective(req) => {
            let r = study.collective(req)?;
            let row = &r.rows[0];
            WorkloadRow {
                workload: w.name.clone(),
                scenario: label.to_owned(),
                time_us: Some(row.time_us),
                bus_bw_gbytes_per_s: Some(row.bus_bw_gbytes_per_s),
                slowdown: row.slowdown,
                crossing: crossing(&r.run.crossing),
                error: None,
            }
        }
        Prepared::Job(it, placement) => {
            let r = study.job(it, *placement)?;
            WorkloadRow {
                workload: w.name.clone(),
                scenario: label.to_owned(),
                time_us: Some(r.run.result.step_s * 1e6),
                bus_bw_gbytes_per_s: None,
                slowdown: r.run.slowdown,
                crossing: crossing(&r.run.crossing),
                error: None,
            }
        }
    };
    Ok(row)
}
