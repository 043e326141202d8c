//! Per-record tables as Arrow record batches: failure scenarios, a sweep's design x scenario
//! rows, per-flow times and per-link loads. The JSON contracts carry summaries; these carry
//! every record, in columns that pandas and polars read without copies (the Python package
//! hands them over through the Arrow C stream interface) or from an Arrow IPC file
//! ([`write_ipc`], what `aifabric sweep --table` writes).
//!
//! Column names are the JSON contracts' field names; units are in the names (`_s`, `bytes`,
//! `_gbytes_per_s`). Rows keep the order of the report they come from, so the same inputs
//! give the same table, byte for byte.

use crate::sweep::SweepResult;
use crate::Error;
use aifabric_engine::traffic::TrafficDetail;
use aifabric_failures::report::FailureReport;
use aifabric_workload::traffic::TrafficMatrix;
use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array};
use arrow_schema::{ArrowError, Field, Schema};
use std::path::Path;
use std::sync::Arc;

pub use arrow_array;
pub use arrow_schema;

/// A batch of named columns, every column non-null except where the data has gaps.
fn batch(columns: Vec<(String, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(n, a.data_type().clone(), a.null_count() > 0))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
        .expect("columns built together have one length and match their fields")
}

fn strings<'a>(v: impl IntoIterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(v))
}
fn u64s(v: impl IntoIterator<Item = u64>) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(v))
}
fn f64s(v: impl IntoIterator<Item = f64>) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(v))
}

/// Every scenario of a failure sweep, one row each, in the report's order (worst first):
/// `scenario`, `srgs` (the selectors it fails, joined by ` + `), `draws`,
/// `min_capacity_retained`, `gpus_disconnected`, `gpus_isolated`, `blackholed_prefixes`,
/// `blackholed_share`, `unreachable_live_racks`, then `capacity_retained[PAIR]` and
/// `maxflow_retained[PAIR]` for every pair whose routed capacity (max-flow bound) the healthy
/// fabric reports.
pub fn scenarios(report: &FailureReport) -> RecordBatch {
    let s = &report.scenarios;
    let pairs: Vec<&String> = report.summary.healthy_gbps.keys().collect();
    let maxflow_pairs: Vec<&String> = report.summary.healthy_maxflow_gbps.keys().collect();
    let joined: Vec<String> = s.iter().map(|r| r.srgs.join(" + ")).collect();
    let mut cols: Vec<(String, ArrayRef)> = vec![
        (
            "scenario".into(),
            strings(s.iter().map(|r| r.scenario.as_str())),
        ),
        ("srgs".into(), strings(joined.iter().map(String::as_str))),
        ("draws".into(), u64s(s.iter().map(|r| r.draws))),
        (
            "min_capacity_retained".into(),
            f64s(s.iter().map(|r| r.min_capacity_retained)),
        ),
        (
            "gpus_disconnected".into(),
            u64s(s.iter().map(|r| r.gpus_disconnected)),
        ),
        (
            "gpus_isolated".into(),
            u64s(s.iter().map(|r| r.gpus_isolated)),
        ),
        (
            "blackholed_prefixes".into(),
            u64s(s.iter().map(|r| r.blackholed_prefixes as u64)),
        ),
        (
            "blackholed_share".into(),
            f64s(s.iter().map(|r| r.blackholed_share)),
        ),
        (
            "unreachable_live_racks".into(),
            u64s(s.iter().map(|r| r.unreachable_live_racks as u64)),
        ),
    ];
    // A pair a scenario does not list is null (every scenario lists every pair today).
    for p in &pairs {
        let col = s.iter().map(|r| r.capacity_retained.get(*p).copied());
        cols.push((
            format!("capacity_retained[{p}]"),
            Arc::new(Float64Array::from_iter(col)),
        ));
    }
    for p in &maxflow_pairs {
        let col = s.iter().map(|r| r.maxflow_retained.get(*p).copied());
        cols.push((
            format!("maxflow_retained[{p}]"),
            Arc::new(Float64Array::from_iter(col)),
        ));
    }
    batch(cols)
}

/// A sweep's results, one row per design x scenario x workload: each design's failure
/// scenarios (worst first), then its workload runs (in the sweep file's order, healthy first).
/// Columns: `design` (`d0`, ...), one per grid path with the design's value (as JSON text:
/// `8`, `"planar"`), `scenario`; with a failure study `srgs`, `draws`,
/// `min_capacity_retained`, `gpus_isolated` (null on workload rows); with workloads
/// `workload`, `time_us`, `bus_bw_gbytes_per_s`, `slowdown`, `error` (null on failure rows,
/// and where the run has none: a job's bus bandwidth, a healthy run's slowdown; `error` says
/// why a workload could not run under a scenario).
pub fn sweep(result: &SweepResult) -> RecordBatch {
    use crate::sweep::{Row, WorkloadRow};
    enum R<'a> {
        Failure(&'a Row),
        Work(&'a WorkloadRow),
    }
    let rows: Vec<(usize, R<'_>)> = result
        .designs
        .iter()
        .enumerate()
        .flat_map(|(d, x)| {
            let f = x.scenarios.iter().map(move |r| (d, R::Failure(r)));
            f.chain(x.workloads.iter().map(move |w| (d, R::Work(w))))
        })
        .collect();
    fn failure<'a>(r: &R<'a>) -> Option<&'a Row> {
        match r {
            R::Failure(x) => Some(x),
            R::Work(_) => None,
        }
    }
    fn work<'a>(r: &R<'a>) -> Option<&'a WorkloadRow> {
        match r {
            R::Work(w) => Some(w),
            R::Failure(_) => None,
        }
    }
    fn scenario<'a>(r: &R<'a>) -> &'a str {
        match r {
            R::Failure(x) => &x.scenario,
            R::Work(w) => &w.scenario,
        }
    }
    let mut cols: Vec<(String, ArrayRef)> = vec![(
        "design".into(),
        strings(rows.iter().map(|(d, _)| result.designs[*d].design.as_str())),
    )];
    let paths: Vec<&String> = result
        .designs
        .first()
        .map(|d| d.overrides.keys().collect())
        .unwrap_or_default();
    for p in paths {
        let values: Vec<String> = rows
            .iter()
            .map(|(d, _)| {
                result.designs[*d]
                    .overrides
                    .get(p)
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            })
            .collect();
        cols.push((p.clone(), strings(values.iter().map(String::as_str))));
    }
    cols.push((
        "scenario".into(),
        strings(rows.iter().map(|(_, r)| scenario(r))),
    ));
    if result.failures.is_some() {
        let f = || rows.iter().map(|(_, r)| failure(r));
        cols.extend([
            (
                "srgs".into(),
                Arc::new(StringArray::from_iter(
                    f().map(|x| x.map(|x| x.srgs.as_str())),
                )) as ArrayRef,
            ),
            (
                "draws".into(),
                Arc::new(UInt64Array::from_iter(f().map(|x| x.map(|x| x.draws)))),
            ),
            (
                "min_capacity_retained".into(),
                Arc::new(Float64Array::from_iter(
                    f().map(|x| x.map(|x| x.min_capacity_retained)),
                )),
            ),
            (
                "gpus_isolated".into(),
                Arc::new(UInt64Array::from_iter(
                    f().map(|x| x.map(|x| x.gpus_isolated)),
                )),
            ),
        ]);
    }
    if result.designs.iter().any(|d| !d.workloads.is_empty()) {
        let w = || rows.iter().map(|(_, r)| work(r));
        cols.extend([
            (
                "workload".into(),
                Arc::new(StringArray::from_iter(
                    w().map(|x| x.map(|x| x.workload.as_str())),
                )) as ArrayRef,
            ),
            (
                "time_us".into(),
                Arc::new(Float64Array::from_iter(
                    w().map(|x| x.and_then(|x| x.time_us)),
                )),
            ),
            (
                "bus_bw_gbytes_per_s".into(),
                Arc::new(Float64Array::from_iter(
                    w().map(|x| x.and_then(|x| x.bus_bw_gbytes_per_s)),
                )),
            ),
            (
                "slowdown".into(),
                Arc::new(Float64Array::from_iter(
                    w().map(|x| x.and_then(|x| x.slowdown)),
                )),
            ),
            (
                "error".into(),
                Arc::new(StringArray::from_iter(
                    w().map(|x| x.and_then(|x| x.error.as_deref())),
                )),
            ),
        ]);
    }
    batch(cols)
}

/// Every flow of a traffic run, in file order: `flow` (its id), `src` and `dst` (matrix
/// nodes), `src_gpu` and `dst_gpu` (the GPUs they were placed on), `bytes`, `start_s` and
/// `fct_s` (null for a flow that never started).
pub fn flows(
    tm: &TrafficMatrix,
    gpu_names: &[String],
    detail: &TrafficDetail,
    fct_s: &[f64],
) -> RecordBatch {
    let f = &tm.flows;
    let opt = |v: &[f64]| -> ArrayRef {
        Arc::new(Float64Array::from_iter(
            v.iter().map(|&x| (!x.is_nan()).then_some(x)),
        ))
    };
    batch(vec![
        ("flow".into(), u64s(f.iter().map(|x| x.id))),
        (
            "src".into(),
            Arc::new(UInt32Array::from_iter_values(f.iter().map(|x| x.src))),
        ),
        (
            "dst".into(),
            Arc::new(UInt32Array::from_iter_values(f.iter().map(|x| x.dst))),
        ),
        (
            "src_gpu".into(),
            strings(f.iter().map(|x| gpu_names[x.src as usize].as_str())),
        ),
        (
            "dst_gpu".into(),
            strings(f.iter().map(|x| gpu_names[x.dst as usize].as_str())),
        ),
        ("bytes".into(), u64s(f.iter().map(|x| x.bytes))),
        ("start_s".into(), opt(&detail.start_s)),
        ("fct_s".into(), opt(fct_s)),
    ])
}

/// Every resource that carried traffic in a run, busiest first: `resource`, `tier`,
/// `bytes`, `capacity_gbytes_per_s`, `utilization` (over the makespan).
pub fn links(detail: &TrafficDetail) -> RecordBatch {
    let l = &detail.links;
    batch(vec![
        (
            "resource".into(),
            strings(l.iter().map(|x| x.resource.as_str())),
        ),
        ("tier".into(), strings(l.iter().map(|x| x.tier.as_str()))),
        ("bytes".into(), f64s(l.iter().map(|x| x.bytes))),
        (
            "capacity_gbytes_per_s".into(),
            f64s(l.iter().map(|x| x.capacity_gbytes_per_s)),
        ),
        ("utilization".into(), f64s(l.iter().map(|x| x.utilization))),
    ])
}

/// An empty table with no columns (a request whose run has no records of that kind).
pub fn empty() -> RecordBatch {
    RecordBatch::new_empty(Arc::new(Schema::new(Vec::<Field>::new())))
}

/// Write `batch` to `path` as an Arrow IPC file (what `pandas.read_feather`,
/// `polars.read_ipc` and `pyarrow.ipc.open_file` read), atomically.
pub fn write_ipc(path: &Path, batch: &RecordBatch) -> Result<(), Error> {
    aifabric_chakra::io::write_atomic(path, |w| {
        let io = |e: ArrowError| std::io::Error::other(e.to_string());
        let mut fw = arrow_ipc::writer::FileWriter::try_new(w, &batch.schema()).map_err(io)?;
        fw.write(batch).map_err(io)?;
        fw.finish().map_err(io)
    })
    .map_err(|e| Error::Runtime {
        message: format!("cannot write {}: {e}", path.display()),
        source: Some(Box::new(e)),
    })
}

/// Every job of a cluster report, one row each, in the cluster file's order: `name`,
/// `gpus`, `placed_by`, `alone_step_s`, `together_step_s`, `interference_slowdown`, `mfu`,
/// and under a scenario `status` (`untouched`, `slowed`, `interrupted`; null on a healthy
/// study), `scenario_step_s` (null when interrupted) and `lost_gpus`.
pub fn cluster_jobs(report: &crate::cluster::ClusterReport) -> RecordBatch {
    use crate::cluster::Impact;
    let j = &report.jobs;
    let status = |i: &Option<Impact>| {
        i.as_ref().map(|i| match i {
            Impact::Untouched { .. } => "untouched",
            Impact::Slowed { .. } => "slowed",
            Impact::Interrupted { .. } => "interrupted",
        })
    };
    batch(vec![
        ("name".into(), strings(j.iter().map(|x| x.name.as_str()))),
        (
            "gpus".into(),
            Arc::new(UInt32Array::from_iter_values(j.iter().map(|x| x.gpus))),
        ),
        (
            "placed_by".into(),
            strings(j.iter().map(|x| x.placed_by.as_str())),
        ),
        (
            "alone_step_s".into(),
            f64s(j.iter().map(|x| x.alone_step_s)),
        ),
        (
            "together_step_s".into(),
            f64s(j.iter().map(|x| x.together_step_s)),
        ),
        (
            "interference_slowdown".into(),
            f64s(j.iter().map(|x| x.interference_slowdown)),
        ),
        ("mfu".into(), f64s(j.iter().map(|x| x.mfu))),
        (
            "status".into(),
            Arc::new(StringArray::from_iter(j.iter().map(|x| status(&x.impact)))),
        ),
        (
            "scenario_step_s".into(),
            Arc::new(Float64Array::from_iter(j.iter().map(|x| x.scenario_step_s))),
        ),
        (
            "lost_gpus".into(),
            Arc::new(UInt32Array::from_iter(j.iter().map(|x| {
                x.impact.as_ref().map(|i| match i {
                    Impact::Interrupted { lost_gpus, .. } => *lost_gpus,
                    _ => 0,
                })
            }))),
        ),
    ])
}

/// Every scenario of a jobs-at-risk ranking, one row each, in rank order: `scenario`,
/// `srgs` (joined by ` + `), `min_capacity_retained`, `interrupted_gpus`, `exposed_gpus`,
/// `lost_gpus` (null unless simulated), `interrupted` and `exposed` (the jobs, joined by
/// `, `).
pub fn at_risk(report: &crate::at_risk::AtRiskReport) -> RecordBatch {
    let r = &report.rows;
    let srgs: Vec<String> = r.iter().map(|x| x.srgs.join(" + ")).collect();
    let names = |v: &[(String, u32)]| {
        v.iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let interrupted: Vec<String> = r.iter().map(|x| names(&x.interrupted)).collect();
    let exposed: Vec<String> = r
        .iter()
        .map(|x| {
            x.exposed
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    batch(vec![
        (
            "scenario".into(),
            strings(r.iter().map(|x| x.scenario.as_str())),
        ),
        ("srgs".into(), strings(srgs.iter().map(String::as_str))),
        (
            "min_capacity_retained".into(),
            f64s(r.iter().map(|x| x.min_capacity_retained)),
        ),
        (
            "interrupted_gpus".into(),
            u64s(r.iter().map(|x| x.interrupted_gpus)),
        ),
        (
            "exposed_gpus".into(),
            f64s(r.iter().map(|x| x.exposed_gpus)),
        ),
        (
            "lost_gpus".into(),
            Arc::new(Float64Array::from_iter(r.iter().map(|x| x.lost_gpus))),
        ),
        (
            "interrupted".into(),
            strings(interrupted.iter().map(String::as_str)),
        ),
        (
            "exposed".into(),
            strings(exposed.iter().map(String::as_str)),
        ),
    ])
}

/// A plan's two schedules, one row per batch: `schedule` (`best` or `naive`), `start_h`,
/// `end_h`, `operations` (joined by ` + `), `lost_gpus` (GPU-hours per hour),
/// `lost_gpu_hours`, `jobs_hurt` (how many jobs it slows, speeds up or stops).
pub fn plan_steps(report: &crate::plan::PlanReport) -> RecordBatch {
    let rows: Vec<(&str, &crate::plan::PlanStep)> = report
        .best
        .steps
        .iter()
        .map(|s| ("best", s))
        .chain(report.naive.steps.iter().map(|s| ("naive", s)))
        .collect();
    let ops: Vec<String> = rows.iter().map(|(_, s)| s.operations.join(" + ")).collect();
    batch(vec![
        ("schedule".into(), strings(rows.iter().map(|r| r.0))),
        ("start_h".into(), f64s(rows.iter().map(|r| r.1.start_h))),
        ("end_h".into(), f64s(rows.iter().map(|r| r.1.end_h))),
        ("operations".into(), strings(ops.iter().map(String::as_str))),
        ("lost_gpus".into(), f64s(rows.iter().map(|r| r.1.lost_gpus))),
        (
            "lost_gpu_hours".into(),
            f64s(rows.iter().map(|r| r.1.lost_gpu_hours)),
        ),
        (
            "jobs_hurt".into(),
            u64s(rows.iter().map(|r| r.1.jobs.len() as u64)),
        ),
    ])
}

/// Every job of a goodput report, one row each: `name`, `gpus`, `interruptions_per_day`,
/// `mtbi_h` (null without interruptions), `checkpoint_write_s`, `restart_s`,
/// `young_interval_s`, `daly_interval_s`, `effective_training_fraction`.
pub fn goodput_jobs(report: &crate::goodput::GoodputReport) -> RecordBatch {
    let j = &report.jobs;
    batch(vec![
        ("name".into(), strings(j.iter().map(|x| x.name.as_str()))),
        (
            "gpus".into(),
            Arc::new(UInt32Array::from_iter_values(j.iter().map(|x| x.gpus))),
        ),
        (
            "interruptions_per_day".into(),
            f64s(j.iter().map(|x| x.interruptions_per_day)),
        ),
        (
            "mtbi_h".into(),
            Arc::new(Float64Array::from_iter(j.iter().map(|x| x.mtbi_h))),
        ),
        (
            "checkpoint_write_s".into(),
            f64s(j.iter().map(|x| x.checkpoint_write_s)),
        ),
        ("restart_s".into(), f64s(j.iter().map(|x| x.restart_s))),
        (
            "young_interval_s".into(),
            Arc::new(Float64Array::from_iter(
                j.iter().map(|x| x.young_interval_s),
            )),
        ),
        (
            "daly_interval_s".into(),
            Arc::new(Float64Array::from_iter(j.iter().map(|x| x.daly_interval_s))),
        ),
        (
            "effective_training_fraction".into(),
            f64s(j.iter().map(|x| x.effective_training_fraction)),
        ),
    ])
}
