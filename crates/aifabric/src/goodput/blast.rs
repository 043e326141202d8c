//! Blast radius from the fabric: which network elements stop which jobs.
//!
//! A job stops when one of its GPUs loses its only path to the others. Per GPU, without
//! re-running routing per element, that is its **single points of failure**: its host link
//! when it has one, and its first switch (the rack switch, a DSF RDSW) when every host link
//! goes to that one switch. Above the first switch every built fabric is redundant (a rack
//! switch has several uplinks, a BAG layer several planes), so a single spine, CTSW or BAG
//! plane slows jobs down but stops none: the same for planar and spread inter-BAG wiring,
//! which differ only under combined failures.
//!
//! A named shared-risk group fails its members together, so it can stop a job no single
//! element stops (a conduit carrying all of a rack's uplinks): [`srg_interrupts`] evaluates
//! it as a mask around the GPUs it touches.

use aifabric_model::{DeviceId, Fabric, LinkId, Role, Srg};
use rustc_hash::{FxHashMap, FxHashSet};

/// A switch's links to other switches (its ways out above its GPUs).
fn uplinks(f: &Fabric, s: DeviceId) -> impl Iterator<Item = LinkId> + '_ {
    f.incident(s)
        .iter()
        .copied()
        .filter(move |&l| f.device(f.link(l).other(s)).role != Role::Gpu)
}

/// A GPU's host links (to switches).
fn host_links(f: &Fabric, g: DeviceId) -> impl Iterator<Item = LinkId> + '_ {
    f.incident(g)
        .iter()
        .copied()
        .filter(move |&l| f.device(f.link(l).other(g)).role != Role::Gpu)
}

/// The single points of failure of a set of GPUs: how many host links and how many distinct
/// switches, each of whose failure isolates one of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SinglePoints {
    /// Host links that are their GPU's only one.
    pub links: u64,
    /// Switches that are all of some GPU's host links' other end.
    pub switches: u64,
}

/// The single points of failure of `gpus` (duplicates across GPUs counted once). `seen` is
/// scratch space, one flag per device, all false on entry and on return.
pub(crate) fn single_points(f: &Fabric, gpus: &[DeviceId], seen: &mut [bool]) -> SinglePoints {
    let mut out = SinglePoints::default();
    let mut touched = Vec::new();
    for &g in gpus {
        let mut count = 0u32;
        let mut only: Option<DeviceId> = None;
        let mut one_switch = true;
        for l in host_links(f, g) {
            count += 1;
            let s = f.link(l).other(g);
            match only {
                None => only = Some(s),
                Some(o) if o != s => one_switch = false,
                Some(_) => {}
            }
        }
        if count == 1 {
            out.links += 1;
        }
        if let (Some(s), true) = (only, one_switch) {
            if !seen[s.idx()] {
                seen[s.idx()] = true;
                touched.push(s);
                out.switches += 1;
            }
        }
    }
    for s in touched {
        seen[s.idx()] = false;
    }
    out
}

/// The jobs (indices into the cluster) that shared-risk group `srg` stops: those with a GPU
/// it fails or cuts off from every switch, and those with a GPU confined under a switch it
/// cuts off from every uplink while the job also has GPUs elsewhere. `owners` is each
/// device's job, `sizes` each job's GPU count. Sorted, each once.
pub(crate) fn srg_interrupts(
    f: &Fabric,
    srg: &Srg,
    owners: &[Option<u32>],
    sizes: &[u32],
) -> Vec<u32> {
    let dev: FxHashSet<DeviceId> = srg.devices.iter().copied().collect();
    let link: FxHashSet<LinkId> = srg.links.iter().copied().collect();
    let down = |l: LinkId| {
        let k = f.link(l);
        link.contains(&l) || dev.contains(&k.a) || dev.contains(&k.b)
    };
    let mut hit: FxHashSet<u32> = FxHashSet::default();
    // The switches whose GPUs may have lost something: failed switches, the ends of failed
    // links, and the neighbours of failed devices (which may have lost every uplink).
    let mut switches: Vec<DeviceId> = Vec::new();
    let mut gpus: Vec<DeviceId> = Vec::new();
    let note = |d: DeviceId, switches: &mut Vec<DeviceId>, gpus: &mut Vec<DeviceId>| {
        if f.device(d).role == Role::Gpu {
            gpus.push(d);
        } else {
            switches.push(d);
        }
    };
    for &d in &srg.devices {
        note(d, &mut switches, &mut gpus);
        for &l in f.incident(d) {
            note(f.link(l).other(d), &mut switches, &mut gpus);
        }
    }
    for &l in &srg.links {
        let k = f.link(l);
        note(k.a, &mut switches, &mut gpus);
        note(k.b, &mut switches, &mut gpus);
    }
    switches.sort_unstable();
    switches.dedup();
    // Switches alive but with every uplink down: their GPUs reach only each other.
    let cut_off: FxHashSet<DeviceId> = switches
        .iter()
        .copied()
        .filter(|s| !dev.contains(s))
        .filter(|&s| {
            let mut ups = uplinks(f, s).peekable();
            ups.peek().is_some() && ups.all(down)
        })
        .collect();
    for &s in &switches {
        for &l in f.incident(s) {
            let g = f.link(l).other(s);
            if f.device(g).role == Role::Gpu {
                gpus.push(g);
            }
        }
    }
    gpus.sort_unstable();
    gpus.dedup();
    // Per cut-off switch, per job: the job's GPUs confined under it.
    let mut confined: FxHashMap<(DeviceId, u32), u32> = FxHashMap::default();
    for &g in &gpus {
        let Some(j) = owners[g.idx()] else { continue };
        if dev.contains(&g) {
            hit.insert(j);
            continue;
        }
        let live: Vec<DeviceId> = host_links(f, g)
            .filter(|&l| !down(l))
            .map(|l| f.link(l).other(g))
            .collect();
        if live.is_empty() {
            hit.insert(j);
        } else if live.iter().all(|s| cut_off.contains(s)) {
            *confined.entry((live[0], j)).or_default() += 1;
        }
    }
    for ((_, j), n) in confined {
        if n < sizes[j as usize] {
            hit.insert(j);
        }
    }
    let mut out: Vec<u32> = hit.into_iter().collect();
    out.sort_unstable();
    out
}
