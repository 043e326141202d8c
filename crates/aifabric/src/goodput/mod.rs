//! Goodput under interruptions: per job of a cluster, how often it stops, and how much of
//! its time training keeps with the best checkpoint interval ([`Study::goodput`]).
//!
//! Interruptions per day add up over what can stop the job: each host-side class's rate per
//! GPU times its GPUs; the switch and link rates times its single points of failure in the
//! fabric (`blast.rs`); and each named shared-risk group with a rate whose failure stops it.
//! The rates and their sources are [`aifabric_workload::interruptions`]'s: by default the
//! Llama 3 run's table 5, with the switch and cable row calibrated once on `llama3-24k` (so
//! that job's 3.09 h between interruptions is a consistency check, not a prediction).
//!
//! Out of scope: slowdowns. A redundant element (a spine, a CTSW, a BAG plane while others
//! carry traffic) stops no job; it only slows the jobs crossing it, which `aifabric job` and
//! `failures` measure and goodput does not count.

mod blast;

use crate::{Error, Study, SCHEMA_VERSION};
use aifabric_model::thousands;
pub use aifabric_workload::cluster::{Cluster, ClusterJob};
pub use aifabric_workload::interruptions::{
    daly_interval_s, effective_fraction, young_interval_s, Checkpointing, Rates,
    LLAMA3_SINGLE_POINT_ELEMENTS,
};
use aifabric_workload::interruptions::{
    LINK, LLAMA3_DAYS, LLAMA3_GPUS, LLAMA3_SWITCH_CABLE, LLAMA3_UNEXPECTED, SWITCH,
};
use serde::Serialize;

/// Every job's interruptions and effective training time.
#[derive(Clone, Debug, Serialize)]
pub struct GoodputReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The fabric's name.
    pub spec: String,
    /// Where the rates come from: `defaults` or the rates file.
    pub rates: String,
    /// One row per job, in the cluster file's order.
    pub jobs: Vec<JobGoodput>,
    /// What the figures rest on and what they leave out.
    pub notes: Vec<String>,
}

/// One job's interruptions and effective training time.
#[derive(Clone, Debug, Serialize)]
pub struct JobGoodput {
    /// The job's name in the cluster.
    pub name: String,
    /// GPUs it runs on.
    pub gpus: u32,
    /// How it was placed.
    pub placed_by: String,
    /// Host links each of whose failure isolates one of its GPUs.
    pub single_point_links: u64,
    /// Switches each of whose failure isolates some of its GPUs.
    pub single_point_switches: u64,
    /// The spec's named shared-risk groups whose failure stops it (with a rate or not).
    pub srgs: Vec<String>,
    /// Expected interruptions per day, all classes.
    pub interruptions_per_day: f64,
    /// Mean time between interruptions, hours (`None`: nothing stops it).
    pub mtbi_h: Option<f64>,
    /// Per class, largest first.
    pub classes: Vec<ClassRate>,
    /// Time to write a checkpoint, seconds.
    pub checkpoint_write_s: f64,
    /// Time from an interruption to training again, seconds.
    pub restart_s: f64,
    /// Young's optimum checkpoint interval, seconds (`None`: nothing stops it).
    pub young_interval_s: Option<f64>,
    /// Daly's higher-order optimum, seconds (`None`: nothing stops it).
    pub daly_interval_s: Option<f64>,
    /// Share of wall-clock time kept for training, checkpointing at Young's interval:
    /// `1 - C / T - (T / 2 + R) / M` (1 when nothing stops it).
    pub effective_training_fraction: f64,
}

/// One class's part of a job's interruptions.
#[derive(Clone, Debug, Serialize)]
pub struct ClassRate {
    /// `gpu`, `hbm3`, ... (host-side), `switch`, `link`, or `srg:NAME`.
    pub class: String,
    /// What the rate is per: `gpu`, `switch`, `link` or `srg`.
    pub per: &'static str,
    /// How many of those the job depends on.
    pub count: u64,
    /// The rate of one, per day.
    pub rate_per_day_each: f64,
    /// `count x rate_per_day_each`.
    pub interruptions_per_day: f64,
    /// Share of the job's interruptions.
    pub share: f64,
}

impl Study<'_> {
    /// Interruptions and effective training time of every job of `cluster` under `rates`:
    /// blast radius from the fabric (single points of failure per GPU, and the spec's named
    /// shared-risk groups), checkpointing at Young's optimum. Needs the healthy fabric.
    pub fn goodput(&self, cluster: &Cluster, rates: &Rates) -> Result<GoodputReport, Error> {
        if self.damaged() {
            return Err(Error::bad_request(
                "goodput starts from the healthy fabric: run it without --fail/--drain \
                 (interruptions are what the rates predict, not a scenario)"
                    .into(),
            ));
        }
        let f = self.fabric;
        let owners = cluster.owners(f);
        let sizes: Vec<u32> = cluster.jobs().iter().map(|j| j.gpus.len() as u32).collect();
        // Per named SRG, the jobs it stops.
        let mut srg_jobs: Vec<Vec<String>> = vec![Vec::new(); sizes.len()];
        let mut srg_rates: Vec<Vec<(String, f64)>> = vec![Vec::new(); sizes.len()];
        let mut unrated = Vec::new();
        for srg in f.srgs() {
            let stopped = blast::srg_interrupts(f, srg, &owners, &sizes);
            let rate = rates
                .srg_per_day
                .iter()
                .find(|(n, _)| *n == srg.name)
                .map(|&(_, r)| r);
            if rate.is_none() && !stopped.is_empty() {
                unrated.push(srg.name.clone());
            }
            for j in stopped {
                srg_jobs[j as usize].push(srg.name.clone());
                if let Some(r) = rate {
                    srg_rates[j as usize].push((srg.name.clone(), r));
                }
            }
        }
        let mut seen = vec![false; f.devices().len()];
        let jobs = cluster
            .jobs()
            .iter()
            .enumerate()
            .map(|(j, job)| {
                let sp = blast::single_points(f, &job.gpus, &mut seen);
                let gpus = job.gpus.len() as u64;
                let mut classes: Vec<ClassRate> = rates
                    .per_gpu_per_day
                    .iter()
                    .map(|(c, r)| class(c.clone(), "gpu", gpus, *r))
                    .collect();
                classes.push(class(
                    SWITCH.into(),
                    "switch",
                    sp.switches,
                    rates.switch_per_day,
                ));
                classes.push(class(LINK.into(), "link", sp.links, rates.link_per_day));
                for (n, r) in &srg_rates[j] {
                    classes.push(class(format!("srg:{n}"), "srg", 1, *r));
                }
                let per_day: f64 = classes.iter().map(|c| c.interruptions_per_day).sum();
                for c in &mut classes {
                    c.share = if per_day > 0.0 {
                        c.interruptions_per_day / per_day
                    } else {
                        0.0
                    };
                }
                // Largest first; ties keep the table's order (a stable sort).
                classes.sort_by(|a, b| b.interruptions_per_day.total_cmp(&a.interruptions_per_day));
                let ck = rates.checkpointing(&job.name);
                let mtbi_s = (per_day > 0.0).then(|| 86_400.0 / per_day);
                let young = mtbi_s.map(|m| young_interval_s(ck.write_s, m));
                let daly = mtbi_s.map(|m| daly_interval_s(ck.write_s, m));
                let effective = match (young, mtbi_s) {
                    (Some(t), Some(m)) => effective_fraction(ck, t, m),
                    _ => 1.0,
                };
                JobGoodput {
                    name: job.name.clone(),
                    gpus: gpus as u32,
                    placed_by: job.placed_by.clone(),
                    single_point_links: sp.links,
                    single_point_switches: sp.switches,
                    srgs: srg_jobs[j].clone(),
                    interruptions_per_day: per_day,
                    mtbi_h: mtbi_s.map(|m| m / 3600.0),
                    classes,
                    checkpoint_write_s: ck.write_s,
                    restart_s: ck.restart_s,
                    young_interval_s: young,
                    daly_interval_s: daly,
                    effective_training_fraction: effective,
                }
            })
            .collect();
        Ok(GoodputReport {
            schema_version: SCHEMA_VERSION,
            spec: f.name().to_owned(),
            rates: rates.source.clone(),
            jobs,
            notes: notes(rates, &unrated),
        })
    }
}

fn class(name: String, per: &'static str, count: u64, each: f64) -> ClassRate {
    ClassRate {
        class: name,
        per,
        count,
        rate_per_day_each: each,
        interruptions_per_day: count as f64 * each,
        share: 0.0,
    }
}

/// What the figures rest on, and what they leave out.
fn notes(rates: &Rates, unrated: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    if rates.network_calibrated() {
        out.push(format!(
            "switch and link rates: the Llama 3 run's {LLAMA3_SWITCH_CABLE} switch/cable \
             interruptions in {LLAMA3_DAYS} days (\"The Llama 3 Herd of Models\", table 5) \
             over the {} single points of failure of its {}-GPU job packed on llama3-24k \
             (host links and rack switches); that job's {:.2} h between interruptions \
             ({LLAMA3_DAYS} x 24 / {LLAMA3_UNEXPECTED}) is this calibration's consistency \
             check, not a prediction",
            thousands(u64::from(LLAMA3_SINGLE_POINT_ELEMENTS)),
            thousands(u64::from(LLAMA3_GPUS)),
            LLAMA3_DAYS * 24.0 / f64::from(LLAMA3_UNEXPECTED)
        ));
    }
    out.push(
        "blast radius: a job stops when one of its GPUs loses its only path (its host link, \
         or its rack switch when all its host links go there) or a named shared-risk group \
         with a rate cuts one off; redundant elements (spines, CTSWs, a BAG plane while \
         others carry traffic) stop nothing under a single failure, the same with planar or \
         spread inter-BAG wiring, and only slow jobs down, which goodput does not count"
            .into(),
    );
    if !unrated.is_empty() {
        out.push(format!(
            "shared-risk groups that would stop jobs but have no rate, so count for nothing: \
             {}; give them one under `srgs_per_day` in a rates file (--rates)",
            unrated.join(", ")
        ));
    }
    let d = Checkpointing::default();
    if rates.checkpoint == d && rates.jobs.is_empty() {
        out.push(format!(
            "checkpointing: {} s to write and {} s to restart are assumptions (the Llama 3 \
             paper gives neither); set `checkpoint` or per-job values in a rates file",
            d.write_s, d.restart_s
        ));
    }
    out.push(
        "effective training time: 1 - C/T - (T/2 + R)/M at Young's interval T = sqrt(2 C M) \
         (Young, CACM 1974), checkpoint C, restart R, mean time between interruptions M; \
         Daly's higher-order interval (FGCS 2006) beside it"
            .into(),
    );
    out
}
