//! Bisection bandwidth of a zone by max-flow / min-cut.
//!
//! Definition used: split the zone's rack switches (RDSW / RTSW) in id order into two halves A
//! and B; the bisection is the max flow from A to B when each rack switch can inject (absorb)
//! what its live GPU links carry, over the zone's own links (BAG excluded). For a Clos zone
//! this cut is the worst balanced one by symmetry; for a non-blocking zone it equals the
//! GPU bandwidth of half the zone.

use crate::maxflow::FlowNetworkBuilder;
use aifabric_model::*;
use serde::Serialize;

/// Bisection of one zone.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bisection {
    /// Max flow from the first half of the racks to the second, Gb/s.
    pub bisection_gbps: f64,
    /// GPU bandwidth of the smaller half: the bisection of a non-blocking zone, Gb/s.
    pub half_gpu_gbps: f64,
}

/// The bisection of zone `z`, or `None` if it has fewer than two rack switches.
pub fn zone_bisection(f: &Fabric, z: ZoneId, mask: &FailureMask) -> Option<Bisection> {
    let range = f.zone_devices(z);
    let start = range.start;
    let leaves: Vec<DeviceId> = range
        .clone()
        .map(DeviceId::new)
        .filter(|&d| matches!(f.device(d).role, Role::Rdsw | Role::Rtsw))
        .collect();
    if leaves.len() < 2 {
        return None;
    }
    let n = (range.end - range.start) as usize;
    let (src, dst) = (n as u32, n as u32 + 1);
    let mut net = FlowNetworkBuilder::new(n + 2);
    let local = |d: DeviceId| d.get() - start;
    let in_zone = |d: DeviceId| range.contains(&d.get());
    // One arc pair per bundle: a bundle's links are consecutive in the incident list.
    for d in range.clone().map(DeviceId::new) {
        if f.device(d).role == Role::Gpu {
            continue;
        }
        let mut current: Option<(BundleId, DeviceId, u64)> = None;
        for &l in f.incident(d) {
            let link = f.link(l);
            if link.a != d || !in_zone(link.b) || link.kind == PortKind::Host {
                continue;
            }
            let cap = if f.link_up(l, mask) {
                u64::from(link.capacity_mbps)
            } else {
                0
            };
            match &mut current {
                Some((b, _, c)) if *b == link.bundle => *c += cap,
                _ => {
                    if let Some((_, peer, c)) = current.take() {
                        net.add_undirected(local(d), local(peer), c);
                    }
                    current = Some((link.bundle, link.b, cap));
                }
            }
        }
        if let Some((_, peer, c)) = current {
            net.add_undirected(local(d), local(peer), c);
        }
    }
    let half = leaves.len() / 2;
    let (mut host_a, mut host_b) = (0u64, 0u64);
    for (i, &leaf) in leaves.iter().enumerate() {
        let host = f.capacity_toward_mbps(leaf, Role::Gpu, mask);
        if i < half {
            net.add_arc(src, local(leaf), host);
            host_a += host;
        } else {
            net.add_arc(local(leaf), dst, host);
            host_b += host;
        }
    }
    let flow = net.build().max_flow(src, dst);
    Some(Bisection {
        bisection_gbps: flow as f64 / 1_000.0,
        half_gpu_gbps: host_a.min(host_b) as f64 / 1_000.0,
    })
}
