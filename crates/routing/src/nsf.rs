//! NSF capacity-aware path pruning (OCP talk "Capacity-Aware Adaptive Routing"; FBOSS). In
//! each spine plane a rack switch has P parallel links to its pod's FTSW. When links fail at
//! the destination rack or its pod's FTSW, the source stops using (weight 0) as many of its
//! own links in that plane, so congestion moves back to the source instead of piling up at
//! the failure:
//!
//! ```text
//! rack_failures  = P - live links between the destination rack and its FTSW of the plane
//! spine_failures = max(0, R x P - live downlinks of that FTSW), spread round robin over
//!                  the pod's racks (rack i gets floor(F/R) + [i < F mod R])
//! prunes         = max(0, max(rack_failures, spread share) - local failures)
//! usable         = P - local failures - prunes
//! ```

use aifabric_model::*;
use serde::Serialize;

/// One plane's decision for a (source rack, destination rack) pair.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanePrune {
    /// Spine plane.
    pub plane: u16,
    /// The source's FTSW in that plane (the next hop).
    pub ftsw: DeviceId,
    /// Nominal parallel links P.
    pub links: u32,
    /// Source links down in the plane.
    pub local_failures: u32,
    /// Links pruned (weight 0) for this destination.
    pub prunes: u32,
    /// Links left in use toward this destination.
    pub usable: u32,
}

/// Live and nominal links from rack switch `rack` to each FTSW of its pod, by plane.
fn rack_links(f: &Fabric, rack: DeviceId, mask: &FailureMask) -> Vec<(u16, DeviceId, u32, u32)> {
    let mut out: Vec<(u16, DeviceId, u32, u32)> = Vec::new();
    for &l in f.incident(rack) {
        let other = f.link(l).other(rack);
        let dev = f.device(other);
        if dev.role != Role::Ftsw {
            continue;
        }
        let live = u32::from(f.link_up(l, mask));
        match out.iter_mut().find(|e| e.1 == other) {
            Some(e) => {
                e.2 += 1;
                e.3 += live;
            }
            None => out.push((dev.plane().unwrap_or(0), other, 1, live)),
        }
    }
    out.sort_by_key(|e| e.0);
    out
}

/// The per-plane pruning of `src` (an NSF rack switch) toward destination rack switch `dst`.
/// Empty when either is not an NSF rack switch.
pub fn prune(f: &Fabric, src: DeviceId, dst: DeviceId, mask: &FailureMask) -> Vec<PlanePrune> {
    let (s, d) = (f.device(src), f.device(dst));
    let nsf = |x: &Device| x.role == Role::Rtsw && f.zones()[x.zone.idx()].kind == ZoneKind::Nsf;
    if !nsf(s) || !nsf(d) || s.zone != d.zone || src == dst {
        return Vec::new();
    }
    let local = rack_links(f, src, mask);
    let remote = rack_links(f, dst, mask);
    // Racks of the destination's pod, in order: the round-robin positions.
    let pod_racks: Vec<DeviceId> = f
        .zone_devices(d.zone)
        .map(DeviceId::new)
        .filter(|&x| f.device(x).role == Role::Rtsw && f.device(x).pod() == d.pod())
        .collect();
    let r = pod_racks.len() as u32;
    let pos = pod_racks.iter().position(|&x| x == dst).unwrap_or(0) as u32;
    let mut out = Vec::new();
    for &(plane, ftsw, p, live) in &local {
        let Some(&(_, remote_ftsw, rp, rlive)) = remote.iter().find(|e| e.0 == plane) else {
            continue;
        };
        let rack_failures = rp - rlive;
        // The destination FTSW's downlinks to racks: R x P nominal.
        let (mut down, mut down_live) = (0u32, 0u32);
        for &l in f.incident(remote_ftsw) {
            if f.device(f.link(l).other(remote_ftsw)).role == Role::Rtsw {
                down += 1;
                down_live += u32::from(f.link_up(l, mask));
            }
        }
        let spine_failures = (r * rp).min(down).saturating_sub(down_live);
        let share = spine_failures / r.max(1) + u32::from(pos < spine_failures % r.max(1));
        let local_failures = p - live;
        let prunes = rack_failures.max(share).saturating_sub(local_failures);
        out.push(PlanePrune {
            plane,
            ftsw,
            links: p,
            local_failures,
            prunes,
            usable: live.saturating_sub(prunes),
        });
    }
    out
}
