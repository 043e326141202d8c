//! Capacity between regions joined through hubs (hub and spoke): the figure that matters for
//! spokes, which have no links to each other. Meta: "The central hub BAG employs a larger
//! chassis to accommodate numerous spokes" (Engineering at Meta, "Building Prometheus", 2026).
//!
//! Per pair of regions with GPUs, the maximum flow from the first region's BAG chassis to the
//! second's over the live inter-region links, with transit allowed only through hub regions:
//! eBGP does not carry spoke-to-spoke traffic through a third spoke (the hub's own AS number
//! is on the path back, so the hub rejects the spoke's re-advertisement; RFC 4271, 9.1.2).
//! Inside a chassis the fabric is taken as non-blocking, so a chassis is one node.

use crate::maxflow::FlowNetworkBuilder;
use aifabric_model::{DeviceId, Fabric, FailureMask, LinkId, Role};
use serde::Serialize;

/// Two regions with GPUs joined through one or more hubs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HubPair {
    /// First region (spec order).
    pub a: String,
    /// Second region.
    pub b: String,
    /// The hub regions with links to both.
    pub via: Vec<String>,
    /// Maximum flow one way, Tb/s: through the hubs plus any direct links.
    pub capacity_tbps_per_direction: f64,
    /// Both ways, Tb/s (how "Pbps per region pair" is quoted).
    pub capacity_tbps: f64,
}

fn is_bag(r: Role) -> bool {
    matches!(r, Role::Bag | Role::Hub)
}

/// Every pair of regions with GPUs that share a hub, with its capacity under `mask`; empty
/// when the fabric has no hub.
pub fn hub_pairs(f: &Fabric, mask: &FailureMask) -> Vec<HubPair> {
    let nr = f.regions().len();
    let region = |d: DeviceId| f.zones()[f.device(d).zone.idx()].region.idx();
    let mut gpus = vec![false; nr];
    let mut hub = vec![false; nr];
    // BAG and hub chassis get flow-network nodes 0..n in device order; the region of each.
    let mut chassis: Vec<usize> = Vec::new();
    let mut node = vec![u32::MAX; f.devices().len()];
    for (i, d) in f.devices().iter().enumerate() {
        let r = region(DeviceId::from_idx(i));
        match d.role {
            Role::Gpu => gpus[r] = true,
            Role::Hub => hub[r] = true,
            _ => {}
        }
        if is_bag(d.role) {
            node[i] = chassis.len() as u32;
            chassis.push(r);
        }
    }
    if !hub.contains(&true) {
        return Vec::new();
    }
    // Inter-region links between chassis: (node a, node b, region a, region b, live Mb/s),
    // and which regions each region has links to (as built: a pair stays listed when its
    // links fail).
    let mut links: Vec<(u32, u32, usize, usize, u64)> = Vec::new();
    let mut touches = vec![vec![false; nr]; nr];
    for (i, l) in f.links().iter().enumerate() {
        let (ra, rb) = (region(l.a), region(l.b));
        if ra == rb || !is_bag(f.device(l.a).role) || !is_bag(f.device(l.b).role) {
            continue;
        }
        touches[ra][rb] = true;
        touches[rb][ra] = true;
        if f.link_up(LinkId::from_idx(i), mask) {
            let mbps = u64::from(l.capacity_mbps);
            links.push((node[l.a.idx()], node[l.b.idx()], ra, rb, mbps));
        }
    }
    let n = chassis.len() as u32;
    let total: u64 = links.iter().map(|l| l.4).sum();
    let mut out = Vec::new();
    for a in (0..nr).filter(|&r| gpus[r]) {
        for b in (a + 1..nr).filter(|&r| gpus[r]) {
            let via: Vec<usize> = (0..nr)
                .filter(|&h| hub[h] && touches[h][a] && touches[h][b])
                .collect();
            if via.is_empty() {
                continue;
            }
            let allowed = |r: usize| r == a || r == b || hub[r];
            let (src, dst) = (n, n + 1);
            let mut net = FlowNetworkBuilder::new(n as usize + 2);
            for &(x, y, rx, ry, mbps) in &links {
                if allowed(rx) && allowed(ry) {
                    net.add_undirected(x, y, mbps);
                }
            }
            for (k, &r) in chassis.iter().enumerate() {
                if r == a {
                    net.add_arc(src, k as u32, total);
                } else if r == b {
                    net.add_arc(k as u32, dst, total);
                }
            }
            let mbps = net.build().max_flow(src, dst);
            out.push(HubPair {
                a: f.regions()[a].name.clone(),
                b: f.regions()[b].name.clone(),
                via: via.iter().map(|&h| f.regions()[h].name.clone()).collect(),
                capacity_tbps_per_direction: mbps as f64 / 1e6,
                capacity_tbps: 2.0 * mbps as f64 / 1e6,
            });
        }
    }
    out
}
