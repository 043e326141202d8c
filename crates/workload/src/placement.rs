//! Placement: which GPU runs which rank.
//!
//! GPUs are allocated in whole scale-up domains (the `g` GPUs of a rack that share NVLink:
//! GPU `index / g` within its rack), the way schedulers hand out hosts; a rack's leftover
//! GPUs that do not fill a domain (36 GPUs in domains of 8 leave 4) are not allocated, so a
//! tensor-parallel group never straddles two domains. Ranks then follow the
//! allocation order, `g` consecutive ranks per domain, so tensor parallelism stays inside a
//! domain. Policies:
//! - `packed`: domains in fabric order (rack after rack, zone after zone);
//! - `spread`: round-robin over buildings, one domain at a time (a job across buildings);
//! - `fragmented`: domains drawn at random (seeded) from the whole fabric, as left by other
//!   jobs, then sorted in fabric order (a scheduler's host list is sorted);
//! - `topology-aware`: the fewest L2 zones: the smallest zone that holds the job, otherwise the
//!   largest zones first, each filled in order (minimizes cross-zone traffic).
//!
//! Failed GPUs (and GPUs of failed racks) are never allocated.

use aifabric_model::{DeviceId, Fabric, FailureMask, Role};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// A placement policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Fabric order.
    Packed,
    /// Round-robin over buildings.
    Spread,
    /// Random domains, seeded.
    Fragmented {
        /// Seed of the draw.
        seed: u64,
    },
    /// Fewest zones.
    TopologyAware,
}

impl Placement {
    /// Parse `packed`, `spread`, `fragmented[:SEED]`, `topology-aware`.
    pub fn parse(s: &str) -> Option<Placement> {
        Some(match s {
            "packed" => Placement::Packed,
            "spread" => Placement::Spread,
            "fragmented" => Placement::Fragmented { seed: 1 },
            "topology-aware" | "topology_aware" => Placement::TopologyAware,
            _ => {
                let seed = s.strip_prefix("fragmented:")?.parse().ok()?;
                Placement::Fragmented { seed }
            }
        })
    }

    /// The name [`Placement::parse`] reads back.
    pub fn name(self) -> String {
        match self {
            Placement::Packed => "packed".into(),
            Placement::Spread => "spread".into(),
            Placement::Fragmented { seed } => format!("fragmented:{seed}"),
            Placement::TopologyAware => "topology-aware".into(),
        }
    }

    /// The accepted spellings, for hints.
    pub const HELP: &'static str = "packed, spread, fragmented[:SEED] or topology-aware";

    /// What each policy does, for help texts (the CLI's `--placement`).
    pub const DEFINED: &'static str = "Where the ranks run, in whole scale-up domains (a \
        rack's GPUs that fill none are left out; ranks fill a domain before the next, so \
        tensor parallelism stays inside one): packed = domains in fabric order, rack after \
        rack, zone after zone; spread = one domain per building in turn (a job across \
        buildings); fragmented[:SEED] = domains drawn at random from the whole fabric \
        (seeded, default 1), as a cluster other jobs left in pieces, then taken in fabric \
        order; topology-aware = the smallest zone that holds the job, else the largest zones \
        first (fewest zones). Failed GPUs and racks are never used.";
}

impl std::str::FromStr for Placement {
    type Err = String;

    fn from_str(s: &str) -> Result<Placement, String> {
        Placement::parse(s).ok_or_else(|| {
            format!(
                "unknown placement `{s}`{}; use {}",
                aifabric_model::did_you_mean_hint(
                    s,
                    &["packed", "spread", "fragmented", "topology-aware"]
                ),
                Placement::HELP
            )
        })
    }
}

impl std::fmt::Display for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// Not enough GPUs, or a bad domain size.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlacementError(pub String);

/// The scale-up domains of a fabric: runs of live GPUs sharing a rack and `index / g`.
#[derive(Clone, Debug)]
pub struct Domains {
    /// GPUs of domain `k`: `gpus[off[k]..off[k + 1]]`.
    off: Vec<u32>,
    gpus: Vec<DeviceId>,
    /// Live GPUs left out: they do not fill a domain of their rack.
    left_out: u64,
    /// Racks that leave some out.
    racks_left_out: u64,
    /// Greatest common divisor of the racks' live GPU counts (0: no rack).
    rack_gcd: u32,
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Domains {
    /// Group the live GPUs of `f` into domains of `g` (leftovers dropped).
    pub fn new(f: &Fabric, g: u32, down: &FailureMask) -> Self {
        let g = g.max(1);
        let mut off = vec![0u32];
        let mut gpus = Vec::new();
        let mut key = None;
        // Per rack: its live GPUs, to count what whole domains leave out.
        let (mut rack, mut in_rack) = (None, 0u32);
        let (mut left_out, mut racks_left_out, mut rack_gcd) = (0u64, 0u64, 0u32);
        let mut end_rack = |in_rack: u32| {
            if in_rack > 0 {
                rack_gcd = gcd(rack_gcd, in_rack);
                if !in_rack.is_multiple_of(g) {
                    left_out += u64::from(in_rack % g);
                    racks_left_out += 1;
                }
            }
        };
        for (i, d) in f.devices().iter().enumerate() {
            if d.role != Role::Gpu {
                continue;
            }
            let id = DeviceId::from_idx(i);
            // A GPU whose only links are down is as good as failed.
            let live = !down.device_failed(id) && f.neighbors(id, down).next().is_some();
            if !live {
                continue;
            }
            if rack != Some((d.zone, d.rack)) {
                end_rack(in_rack);
                rack = Some((d.zone, d.rack));
                in_rack = 0;
            }
            in_rack += 1;
            let k = (d.zone, d.rack, d.index / g);
            if key != Some(k) {
                close(&mut off, &mut gpus, g);
            }
            key = Some(k);
            gpus.push(id);
        }
        close(&mut off, &mut gpus, g);
        end_rack(in_rack);
        Domains {
            off,
            gpus,
            left_out,
            racks_left_out,
            rack_gcd,
        }
    }

    /// Live GPUs that no whole domain holds (a rack of 36 leaves 4 out of domains of 8), and
    /// the racks that leave some out.
    pub fn left_out(&self) -> (u64, u64) {
        (self.left_out, self.racks_left_out)
    }

    /// The largest domain size up to `g` that leaves no live GPU out: the largest divisor of
    /// every rack's live GPU count (1 at worst; 0 without GPUs).
    pub fn whole_size(&self, g: u32) -> u32 {
        (1..=g.min(self.rack_gcd))
            .rev()
            .find(|d| self.rack_gcd.is_multiple_of(*d))
            .unwrap_or(0)
    }

    /// Number of domains.
    pub fn len(&self) -> usize {
        self.off.len() - 1
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// GPUs of domain `k`.
    pub fn gpus(&self, k: usize) -> &[DeviceId] {
        &self.gpus[self.off[k] as usize..self.off[k + 1] as usize]
    }

    /// Live GPUs in all.
    pub fn total_gpus(&self) -> usize {
        self.gpus.len()
    }
}

/// End the open domain: keep it if it is full, else drop its GPUs.
fn close(off: &mut Vec<u32>, gpus: &mut Vec<DeviceId>, g: u32) {
    let start = *off.last().unwrap_or(&0) as usize;
    if gpus.len() - start == g as usize {
        off.push(gpus.len() as u32);
    } else {
        gpus.truncate(start);
    }
}

/// Place `n` ranks on the live GPUs of `f`, in domains of `g`: rank `r` runs on the returned
/// `[r]`.
pub fn place(
    f: &Fabric,
    n: u32,
    g: u32,
    policy: Placement,
    down: &FailureMask,
) -> Result<Vec<DeviceId>, PlacementError> {
    if n == 0 {
        return Err(PlacementError("a job needs at least one GPU".into()));
    }
    let doms = Domains::new(f, g, down);
    if doms.is_empty()
        && f.devices_with_role(aifabric_model::Role::Gpu)
            .next()
            .is_some()
    {
        return Err(PlacementError(format!(
            "no rack of {} holds a whole scale-up domain of {g} GPUs; use a smaller scale-up domain",
            f.name()
        )));
    }
    if doms.total_gpus() < n as usize {
        let (out, racks) = doms.left_out();
        let live = doms.total_gpus() as u64 + out;
        return Err(PlacementError(if out == 0 {
            format!("{n} GPUs asked, but {} has only {live} live GPUs", f.name())
        } else {
            // Whole domains only: a domain never straddles racks, so a rack whose GPU count
            // is not a multiple of g leaves its remainder unallocated.
            format!(
                "{n} GPUs asked, but {} has {} GPUs in whole scale-up domains of {g}: of its \
                 {live} live GPUs, {out} in {racks} racks do not fill a domain of their rack \
                 (a domain never straddles racks) and are not allocated; ask for at most {}, \
                 or a scale-up domain size that divides every rack's GPUs (the largest up \
                 to {g} is {w}: `--scale-up {w}`, or scale_up.gpus in a job file)",
                f.name(),
                doms.total_gpus(),
                doms.total_gpus(),
                w = doms.whole_size(g),
            )
        }));
    }
    let zone_of = |k: usize| f.device(doms.gpus(k)[0]).zone;
    let order: Vec<usize> = match policy {
        Placement::Packed => (0..doms.len()).collect(),
        Placement::Spread => {
            let mut per: Vec<Vec<usize>> = vec![Vec::new(); f.buildings().len().max(1)];
            for k in 0..doms.len() {
                let b = f.zones()[zone_of(k).idx()].building.map_or(0, |b| b.idx());
                per[b].push(k);
            }
            let longest = per.iter().map(Vec::len).max().unwrap_or(0);
            (0..longest)
                .flat_map(|i| per.iter().filter_map(move |v| v.get(i).copied()))
                .collect()
        }
        Placement::Fragmented { seed } => {
            let mut all: Vec<usize> = (0..doms.len()).collect();
            all.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(seed));
            // Enough domains for n GPUs, then in fabric order.
            let mut taken = Vec::new();
            let mut have = 0usize;
            for k in all {
                if have >= n as usize {
                    break;
                }
                have += doms.gpus(k).len();
                taken.push(k);
            }
            taken.sort_unstable();
            taken
        }
        Placement::TopologyAware => {
            let mut per: Vec<(usize, Vec<usize>)> = Vec::new();
            for k in 0..doms.len() {
                let z = zone_of(k).idx();
                match per.last_mut() {
                    Some((zz, v)) if *zz == z => v.push(k),
                    _ => per.push((z, vec![k])),
                }
            }
            let size = |v: &Vec<usize>| v.iter().map(|&k| doms.gpus(k).len()).sum::<usize>();
            // Best fit: the smallest zone that holds the whole job.
            let fit = per
                .iter()
                .filter(|(_, v)| size(v) >= n as usize)
                .min_by_key(|(z, v)| (size(v), *z));
            match fit {
                Some((_, v)) => v.clone(),
                None => {
                    per.sort_by_key(|(z, v)| (std::cmp::Reverse(size(v)), *z));
                    per.into_iter().flat_map(|(_, v)| v).collect()
                }
            }
        }
    };
    let gpus: Vec<DeviceId> = order
        .into_iter()
        .flat_map(|k| doms.gpus(k).iter().copied())
        .take(n as usize)
        .collect();
    Ok(gpus)
}
