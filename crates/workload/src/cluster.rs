//! A cluster state: the jobs running on one fabric, each on its own GPUs.
//!
//! Jobs are placed in order, each on GPUs the jobs before it left: by a policy
//! ([`Placement`]) among all free GPUs or within some racks or zones, or on explicit hosts.
//! A **host** is one scale-up domain of the job's size `g` (a server): the GPUs `k g ..
//! (k + 1) g - 1` of a rack, named `<zone>.rack<R>.host<k>` (GPU `<zone>.rack<R>.gpu<i>` is on
//! host `i / g`). Schedulers hand out hosts, so this is what a Slurm node list maps to.
//!
//! Invariant: the jobs of a [`Cluster`] use disjoint GPUs, each job has exactly as many GPUs
//! as ranks, and none is failed on the healthy fabric.

use crate::job::Iteration;
use crate::placement::{place, Domains, Placement, PlacementError};
use aifabric_model::{DeviceId, Fabric, FailureMask, Ordinal, Role};
use rustc_hash::FxHashMap;

/// One running job and where it runs.
#[derive(Clone, Debug)]
pub struct ClusterJob {
    /// Name, unique in the cluster.
    pub name: String,
    /// What one step does.
    pub iteration: Iteration,
    /// Rank `r` runs on `gpus[r]`.
    pub gpus: Vec<DeviceId>,
    /// How the placement was given, for reports (`packed`, `hosts`, `within east.b0`...).
    pub placed_by: String,
}

/// Jobs on disjoint GPUs of one fabric.
#[derive(Clone, Debug, Default)]
pub struct Cluster {
    jobs: Vec<ClusterJob>,
}

/// Why a cluster cannot be made: the job (index) it is about and the message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("job {job}: {message}")]
pub struct ClusterError {
    /// Index of the job in the cluster file.
    pub job: usize,
    /// What is wrong.
    pub message: String,
}

impl Cluster {
    /// The cluster of `jobs`, checked: unique names, one GPU per rank, no GPU used twice.
    pub fn new(f: &Fabric, jobs: Vec<ClusterJob>) -> Result<Self, ClusterError> {
        let mut owner: FxHashMap<DeviceId, usize> = FxHashMap::default();
        let mut names: FxHashMap<&str, usize> = FxHashMap::default();
        for (j, job) in jobs.iter().enumerate() {
            if let Some(first) = names.insert(&job.name, j) {
                return Err(ClusterError {
                    job: j,
                    message: format!(
                        "the name `{}` is also job {first}'s; give each job its own name",
                        job.name
                    ),
                });
            }
            if job.gpus.len() != job.iteration.gpus as usize {
                return Err(ClusterError {
                    job: j,
                    message: format!(
                        "`{}` has {} ranks but {} GPUs were placed",
                        job.name,
                        job.iteration.gpus,
                        job.gpus.len()
                    ),
                });
            }
            for &g in &job.gpus {
                if f.device(g).role != Role::Gpu {
                    return Err(ClusterError {
                        job: j,
                        message: format!("{} is not a GPU", f.device_name(g)),
                    });
                }
                if let Some(other) = owner.insert(g, j) {
                    return Err(ClusterError {
                        job: j,
                        message: format!(
                            "`{}` is placed on {}, which job {other} (`{}`) already uses; \
                             jobs run on disjoint GPUs",
                            job.name,
                            f.device_name(g),
                            jobs[other].name
                        ),
                    });
                }
            }
        }
        Ok(Cluster { jobs })
    }

    /// The jobs, in file order.
    pub fn jobs(&self) -> &[ClusterJob] {
        &self.jobs
    }

    /// GPUs in use.
    pub fn gpus(&self) -> usize {
        self.jobs.iter().map(|j| j.gpus.len()).sum()
    }

    /// Each device's job (`None`: no job, or not a GPU), indexed by device.
    pub fn owners(&self, f: &Fabric) -> Vec<Option<u32>> {
        let mut o = vec![None; f.devices().len()];
        for (j, job) in self.jobs.iter().enumerate() {
            for &g in &job.gpus {
                o[g.idx()] = Some(j as u32);
            }
        }
        o
    }
}

/// The host (scale-up domain of `g` GPUs) a GPU is on: `<zone>.rack<R>.host<k>`.
pub fn host_name(f: &Fabric, gpu: DeviceId, g: u32) -> String {
    let d = f.device(gpu);
    format!(
        "{}.rack{}.host{}",
        f.zones()[d.zone.idx()].name,
        Ordinal(d.rack()),
        d.index / g.max(1)
    )
}

/// The hosts of `f` for domains of `g` GPUs: each whole domain's name and GPUs, in fabric
/// order (failed GPUs of `down` left out, as placement leaves them).
pub fn hosts(f: &Fabric, g: u32, down: &FailureMask) -> Vec<(String, Vec<DeviceId>)> {
    let doms = Domains::new(f, g, down);
    (0..doms.len())
        .map(|k| {
            let gpus = doms.gpus(k).to_vec();
            (host_name(f, gpus[0], g), gpus)
        })
        .collect()
}

/// Place `n` ranks by `policy` on the GPUs of `allowed` (all live GPUs when `None`) that are
/// not `taken`, in domains of `g`.
pub fn place_free(
    f: &Fabric,
    n: u32,
    g: u32,
    policy: Placement,
    down: &FailureMask,
    taken: &[bool],
    allowed: Option<&[bool]>,
) -> Result<Vec<DeviceId>, PlacementError> {
    let mut mask = down.clone();
    for d in f.devices_with_role(Role::Gpu) {
        if taken[d.idx()] || allowed.is_some_and(|a| !a[d.idx()]) {
            mask.fail_device(d);
        }
    }
    place(f, n, g, policy, &mask)
}
