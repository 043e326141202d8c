//! Every scenario of a failure sweep against every running job ([`Study::jobs_at_risk`]):
//! which jobs each scenario interrupts (exactly: their GPUs cut off) and how much of each
//! other job's traffic crosses what it takes out (its exposure), ranked by the jobs they
//! hurt; the worst few simulated in full ([`Study::cluster_impact`]).

use crate::cluster::{Baseline, JobImpactRow};
use crate::{Error, Study, SCHEMA_VERSION};
use aifabric_failures::report::FailureReport;
use aifabric_model::{DeviceId, FailureMask, Role, Scenario};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// One scenario against the jobs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AtRiskRow {
    /// The scenario, as the sweep names it.
    pub scenario: String,
    /// Its shared-risk groups (selectors).
    pub srgs: Vec<String>,
    /// The sweep's figure for it: the least capacity retained between sites.
    pub min_capacity_retained: f64,
    /// Jobs it interrupts, with the GPUs each loses.
    pub interrupted: Vec<(String, u32)>,
    /// GPUs of the jobs it interrupts (a job stops whole).
    pub interrupted_gpus: u64,
    /// Jobs it does not interrupt whose traffic crosses what it takes out: the share of
    /// each one's bytes on those links.
    pub exposed: Vec<(String, f64)>,
    /// Their GPUs weighted by that share.
    pub exposed_gpus: f64,
    /// Simulated in full (the worst few): each job's impact.
    pub simulated: Option<Vec<JobImpactRow>>,
    /// Simulated in full: GPU-hours per hour the jobs lose (interrupted: all their GPUs;
    /// slowed: `GPUs x (1 - 1 / slowdown)`).
    pub lost_gpus: Option<f64>,
}

/// One job against every scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobRisk {
    /// The job.
    pub job: String,
    /// Its GPUs.
    pub gpus: u32,
    /// Scenarios that interrupt it.
    pub interrupted_by: usize,
    /// Scenarios that take out links its traffic crosses (not interrupting it).
    pub exposed_to: usize,
    /// The first scenario (in rank order) that interrupts it.
    pub first_interrupting: Option<String>,
}

/// Every scenario of a sweep against every job.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AtRiskReport {
    /// JSON contract version.
    pub schema_version: u32,
    /// Spec name.
    pub spec: String,
    /// The sweep (`single`, `single:plane`...).
    pub sweep: String,
    /// Scenarios ranked.
    pub scenarios: usize,
    /// Scenarios that hurt no job (interrupt none, cross no job's links).
    pub harmless: usize,
    /// Scenarios simulated in full.
    pub simulated: usize,
    /// Ranked: most interrupted GPUs first, then most exposed GPUs. At most `keep`.
    pub rows: Vec<AtRiskRow>,
    /// Per job.
    pub jobs: Vec<JobRisk>,
    /// How it was ranked.
    pub notes: Vec<String>,
}

impl Study<'_> {
    /// Rank the scenarios of `sweep` by the jobs of `base` they hurt: interruptions exactly
    /// (a job whose GPU loses its last link stops), slowdown by exposure (the share of a
    /// job's bytes, healthy, on links the scenario takes out), and the worst `simulate`
    /// scenarios run in full as `base` was timed (the flow engine, or the packet engine's
    /// baseline, [`Study::cluster_baseline_packet`]). Keeps the first `keep` rows.
    pub fn jobs_at_risk(
        &self,
        base: &Baseline<'_>,
        sweep: &FailureReport,
        simulate: usize,
        keep: usize,
    ) -> Result<AtRiskReport, Error> {
        let f = self.fabric;
        let jobs = base.cluster.jobs();
        let owner = base.cluster.owners(f);
        // Per link, the jobs that load it and their bytes per step (both directions).
        let links = f.links().len();
        let mut users: FxHashMap<u32, Vec<(u32, f64)>> = FxHashMap::default();
        let mut total = vec![0.0f64; jobs.len()];
        for (j, s) in base.run.together.iter().enumerate() {
            for c in &s.comms {
                for &(r, b) in &c.detail.carried {
                    if (r as usize) < 2 * links {
                        let bytes = c.count as f64 * b;
                        total[j] += bytes;
                        let u = users.entry(r / 2).or_default();
                        match u.last_mut() {
                            Some(last) if last.0 == j as u32 => last.1 += bytes,
                            _ => u.push((j as u32, bytes)),
                        }
                    }
                }
            }
        }
        let mut rows: Vec<AtRiskRow> = sweep
            .scenarios
            .par_iter()
            .map(|rec| {
                let scenario = Scenario::from_selectors(f, &rec.srgs, &[], &[])
                    .map_err(Error::bad_request_from)?;
                let mask = scenario.unusable();
                let (lost, out) = damage(f, &mask, &owner);
                let mut lost_per = vec![0u32; jobs.len()];
                for g in &lost {
                    if let Some(j) = owner[g.idx()] {
                        lost_per[j as usize] += 1;
                    }
                }
                let mut bytes = vec![0.0f64; jobs.len()];
                for l in out {
                    for &(j, b) in users.get(&l).map_or(&[][..], Vec::as_slice) {
                        bytes[j as usize] += b;
                    }
                }
                let interrupted: Vec<(String, u32)> = lost_per
                    .iter()
                    .enumerate()
                    .filter(|(_, &n)| n > 0)
                    .map(|(j, &n)| (jobs[j].name.clone(), n))
                    .collect();
                let exposed: Vec<(String, f64)> = bytes
                    .iter()
                    .enumerate()
                    .filter(|&(j, &b)| b > 0.0 && lost_per[j] == 0 && total[j] > 0.0)
                    .map(|(j, &b)| (jobs[j].name.clone(), b / total[j]))
                    .collect();
                let gpus = |name: &str| {
                    jobs.iter()
                        .find(|j| j.name == name)
                        .map_or(0, |j| j.iteration.gpus)
                };
                Ok(AtRiskRow {
                    scenario: rec.scenario.clone(),
                    srgs: rec.srgs.clone(),
                    min_capacity_retained: rec.min_capacity_retained,
                    interrupted_gpus: interrupted.iter().map(|(n, _)| u64::from(gpus(n))).sum(),
                    // `+ 0.0`: an empty sum is -0.
                    exposed_gpus: exposed
                        .iter()
                        .map(|(n, s)| f64::from(gpus(n)) * s)
                        .sum::<f64>()
                        + 0.0,
                    interrupted,
                    exposed,
                    simulated: None,
                    lost_gpus: None,
                })
            })
            .collect::<Result<_, Error>>()?;
        rows.sort_by(|a, b| {
            b.interrupted_gpus
                .cmp(&a.interrupted_gpus)
                .then(b.exposed_gpus.total_cmp(&a.exposed_gpus))
                .then(a.scenario.cmp(&b.scenario))
        });
        let harmless = rows
            .iter()
            .filter(|r| r.interrupted.is_empty() && r.exposed.is_empty())
            .count();
        // Interruptions are exact already: simulate where exposure leaves doubt, the most
        // exposed GPUs first.
        let mut by_exposure: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].exposed_gpus > 0.0)
            .collect();
        by_exposure.sort_by(|&a, &b| {
            rows[b]
                .exposed_gpus
                .total_cmp(&rows[a].exposed_gpus)
                .then(a.cmp(&b))
        });
        by_exposure.truncate(simulate);
        let simulate = by_exposure.len();
        for &i in &by_exposure {
            let row = &mut rows[i];
            let scenario = Scenario::from_selectors(f, &row.srgs, &[], &[])
                .map_err(Error::bad_request_from)?;
            let imp = self.cluster_impact(base, &scenario)?;
            row.lost_gpus = Some(base.lost_gpus(&imp));
            row.simulated = Some(base.hurt(imp));
        }

        let per_job = jobs
            .iter()
            .map(|j| JobRisk {
                job: j.name.clone(),
                gpus: j.iteration.gpus,
                interrupted_by: rows
                    .iter()
                    .filter(|r| r.interrupted.iter().any(|x| x.0 == j.name))
                    .count(),
                exposed_to: rows
                    .iter()
                    .filter(|r| r.exposed.iter().any(|x| x.0 == j.name))
                    .count(),
                first_interrupting: rows
                    .iter()
                    .find(|r| r.interrupted.iter().any(|x| x.0 == j.name))
                    .map(|r| r.scenario.clone()),
            })
            .collect();
        let scenarios = rows.len();
        rows.truncate(keep);
        Ok(AtRiskReport {
            schema_version: SCHEMA_VERSION,
            spec: f.name().to_owned(),
            sweep: sweep.summary.sweep.clone(),
            scenarios,
            harmless,
            simulated: simulate,
            rows,
            jobs: per_job,
            notes: vec![
                "interruptions are exact: a job stops when one of its GPUs loses its last \
                 link (the GPU, its host link or its rack switch fails)"
                    .into(),
                format!(
                    "the others are ranked by exposure (the share of each job's bytes, healthy, \
                     on links the scenario takes out), which misses traffic moved by routing \
                     alone; the {simulate} most exposing are simulated in full (`--simulate N` \
                     for more)"
                ),
            ],
        })
    }
}

/// The GPUs (of jobs, per `owner`) that `mask` cuts off, and the links it takes out.
fn damage(
    f: &aifabric_model::Fabric,
    mask: &FailureMask,
    owner: &[Option<u32>],
) -> (Vec<DeviceId>, Vec<u32>) {
    let mut out: Vec<u32> = mask.failed_links().map(|l| l.get()).collect();
    let mut candidates: Vec<DeviceId> = Vec::new();
    for d in mask.failed_devices() {
        out.extend(f.incident(d).iter().map(|l| l.get()));
        if f.device(d).role == Role::Gpu {
            candidates.push(d);
        } else {
            candidates.extend(
                f.incident(d)
                    .iter()
                    .map(|&l| f.link(l).other(d))
                    .filter(|&g| f.device(g).role == Role::Gpu),
            );
        }
    }
    for l in mask.failed_links() {
        let link = f.link(l);
        candidates.extend(
            [link.a, link.b]
                .into_iter()
                .filter(|&g| f.device(g).role == Role::Gpu),
        );
    }
    out.sort_unstable();
    out.dedup();
    candidates.sort_unstable();
    candidates.dedup();
    let lost = candidates
        .into_iter()
        .filter(|g| owner[g.idx()].is_some())
        .filter(|&g| mask.device_failed(g) || f.neighbors(g, mask).next().is_none())
        .collect();
    (lost, out)
}
