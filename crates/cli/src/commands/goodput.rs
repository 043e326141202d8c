//! `aifabric goodput`: its flags, the library call and the table.

use crate::{emit, load, Failure};
use aifabric::goodput::GoodputReport;
use aifabric::stages::model::thousands;
use aifabric::stages::spec;
use aifabric::{Setup, Study};

// `aifabric goodput` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct GoodputArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// The cluster file: the running jobs and their placements (see examples/clusters/).
    #[arg(long)]
    pub(crate) jobs: String,
    /// A rates file overriding the default failure rates and checkpointing (see README,
    /// "Goodput under interruptions").
    #[arg(long, value_name = "FILE")]
    pub(crate) rates: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(a: GoodputArgs) -> Result<(), Failure> {
    let f = load(&a.spec)?;
    let cluster = spec::cluster::load_cluster(&f, &a.jobs).map_err(Failure::BadInput)?;
    let rates = match &a.rates {
        Some(path) => {
            let names: Vec<&str> = cluster.jobs().iter().map(|j| j.name.as_str()).collect();
            spec::rates::load_rates(&f, &names, path).map_err(Failure::BadInput)?
        }
        None => aifabric::goodput::Rates::default(),
    };
    let report = Study::healthy(&f, Setup::default()).goodput(&cluster, &rates)?;
    emit(a.json, &report, render)
}

/// Minutes, for checkpoint intervals.
fn minutes(s: Option<f64>) -> String {
    s.map_or_else(|| "-".into(), |s| format!("{:.1}", s / 60.0))
}

/// The per-job table, each job's largest classes, and the notes.
pub(crate) fn render(r: &GoodputReport) -> String {
    let mut out = format!("goodput on {} (rates: {})\n\n", r.spec, r.rates);
    let width = r
        .jobs
        .iter()
        .map(|j| j.name.len())
        .max()
        .unwrap_or(3)
        .max(3);
    out += &format!(
        "{:<width$}  {:>7}  {:>9}  {:>7}  {:>9}  {:>9}  {:>9}\n",
        "job", "GPUs", "interr./d", "MTBI h", "ckpt min", "Daly min", "effective"
    );
    for j in &r.jobs {
        out += &format!(
            "{:<width$}  {:>7}  {:>9.2}  {:>7}  {:>9}  {:>9}  {:>8.1}%\n",
            j.name,
            thousands(u64::from(j.gpus)),
            j.interruptions_per_day,
            j.mtbi_h.map_or_else(|| "-".into(), |h| format!("{h:.2}")),
            minutes(j.young_interval_s),
            minutes(j.daly_interval_s),
            100.0 * j.effective_training_fraction,
        );
    }
    out += "\n";
    for j in &r.jobs {
        let top: Vec<String> = j
            .classes
            .iter()
            .filter(|c| c.interruptions_per_day > 0.0)
            .take(4)
            .map(|c| format!("{} {:.0}%", c.class, 100.0 * c.share))
            .collect();
        out += &format!(
            "{}: {} GPUs ({}); single points: {} host links, {} switches; checkpoint {} s, \
             restart {} s\n  dominated by: {}\n",
            j.name,
            thousands(u64::from(j.gpus)),
            j.placed_by,
            thousands(j.single_point_links),
            thousands(j.single_point_switches),
            j.checkpoint_write_s,
            j.restart_s,
            if top.is_empty() {
                "nothing (no rate applies)".into()
            } else {
                top.join(", ")
            }
        );
        if !j.srgs.is_empty() {
            out += &format!("  stopped by shared-risk groups: {}\n", j.srgs.join(", "));
        }
    }
    out += "\n";
    for n in &r.notes {
        out += &format!("note: {n}\n");
    }
    out
}
