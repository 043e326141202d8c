//! DSF Input Balanced Mode (FACTS.md section 2): after remote link failures, no device admits
//! more input toward a destination than it can deliver, so congestion does not spread.
//!
//! Model (fluid, per destination interface node d). A device x that can deliver a fraction
//! `r_x = delivered_x / nominal_x` of its nominal capacity toward d advertises d on that
//! fraction of its input links; an upstream device u then uses at most
//! `min(live(u, x), r_x * nominal(u, x))` toward d over its links to x, and its own delivered
//! capacity is the sum of that over its downstream devices. Evaluated from d back to the
//! sources: d's cluster FDSWs (their direct links to d), the SDSWs, the other clusters'
//! FDSWs, then the interface nodes. Every quantity only falls when links fail, so retained
//! capacity never increases with failures; and what a source retains is always deliverable
//! (it is at most the source-to-d max flow).

use aifabric_model::*;
use serde::Serialize;

/// A DSF zone's fabric as local indices with per-bundle lane capacities (nominal, live), Mb/s.
struct DsfFabric {
    ifaces: Vec<DeviceId>,
    /// Cluster of each interface node (the edge pod is its own cluster; L1: all 0).
    if_cluster: Vec<u32>,
    fd_cluster: Vec<u32>,
    n_sd: usize,
    /// iface -> [(fdsw, nominal, live)]
    if_fd: Vec<Vec<(u32, u64, u64)>>,
    /// fdsw -> [(sdsw, nominal, live)]
    fd_sd: Vec<Vec<(u32, u64, u64)>>,
    /// sdsw -> [(fdsw, nominal, live)]
    sd_fd: Vec<Vec<(u32, u64, u64)>>,
}

impl DsfFabric {
    fn new(f: &Fabric, z: ZoneId, mask: &FailureMask) -> DsfFabric {
        let l1 = f.zones[z.idx()].kind == ZoneKind::DsfL1;
        let mut local = vec![u32::MAX; 0];
        local.resize(f.devices().len(), u32::MAX);
        let (mut ifaces, mut if_cluster, mut fd_cluster) = (Vec::new(), Vec::new(), Vec::new());
        let mut n_sd = 0usize;
        for d in f.zone_devices(z).map(DeviceId) {
            let dev = f.device(d);
            let cluster = if l1 { 0 } else { dev.pod };
            match dev.role {
                Role::Rdsw | Role::Edsw => {
                    local[d.idx()] = ifaces.len() as u32;
                    ifaces.push(d);
                    if_cluster.push(cluster);
                }
                Role::Fdsw => {
                    local[d.idx()] = fd_cluster.len() as u32;
                    fd_cluster.push(cluster);
                }
                Role::Sdsw => {
                    local[d.idx()] = n_sd as u32;
                    n_sd += 1;
                }
                _ => {}
            }
        }
        let mut if_fd = vec![Vec::new(); ifaces.len()];
        let mut fd_sd = vec![Vec::new(); fd_cluster.len()];
        let mut sd_fd = vec![Vec::new(); n_sd];
        for b in f.bundles() {
            let (ra, rb) = (f.device(b.a).role, f.device(b.b).role);
            if f.device(b.a).zone != z || f.device(b.b).zone != z {
                continue;
            }
            let (mut nom, mut live) = (0u64, 0u64);
            for l in b.links() {
                let cap = u64::from(f.link(l).capacity_mbps);
                nom += cap;
                if f.link_up(l, mask) {
                    live += cap;
                }
            }
            let (a, c) = (local[b.a.idx()], local[b.b.idx()]);
            match (ra, rb) {
                (Role::Rdsw | Role::Edsw, Role::Fdsw) => if_fd[a as usize].push((c, nom, live)),
                (Role::Fdsw, Role::Sdsw) => {
                    fd_sd[a as usize].push((c, nom, live));
                    sd_fd[c as usize].push((a, nom, live));
                }
                _ => {}
            }
        }
        DsfFabric {
            ifaces,
            if_cluster,
            fd_cluster,
            n_sd,
            if_fd,
            fd_sd,
            sd_fd,
        }
    }

    /// (delivered, nominal) capacity of every interface node toward interface node `d`, Mb/s.
    fn toward(&self, d: usize, out: &mut Vec<(f64, f64)>) {
        let c = self.if_cluster[d];
        let n_fd = self.fd_cluster.len();
        // (delivered, nominal) per FDSW and SDSW.
        let mut fd = vec![(0.0f64, 0.0f64); n_fd];
        for &(f, nom, live) in &self.if_fd[d] {
            fd[f as usize] = (live as f64, nom as f64);
        }
        let ratio = |x: (f64, f64)| if x.1 > 0.0 { x.0 / x.1 } else { 0.0 };
        let mut sd = vec![(0.0f64, 0.0f64); self.n_sd];
        for (s, links) in self.sd_fd.iter().enumerate() {
            for &(f, nom, live) in links {
                if self.fd_cluster[f as usize] == c {
                    let r = ratio(fd[f as usize]);
                    sd[s].0 += (live as f64).min(r * nom as f64);
                    sd[s].1 += nom as f64;
                }
            }
        }
        for (f, links) in self.fd_sd.iter().enumerate() {
            if self.fd_cluster[f] == c {
                continue;
            }
            let mut acc = (0.0, 0.0);
            for &(s, nom, live) in links {
                let r = ratio(sd[s as usize]);
                acc.0 += (live as f64).min(r * nom as f64);
                acc.1 += nom as f64;
            }
            fd[f] = acc;
        }
        out.clear();
        for links in &self.if_fd {
            let mut acc = (0.0, 0.0);
            for &(f, nom, live) in links {
                let r = ratio(fd[f as usize]);
                acc.0 += (live as f64).min(r * nom as f64);
                acc.1 += nom as f64;
            }
            out.push(acc);
        }
    }
}

/// What one interface node keeps toward one destination cluster.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Retained {
    /// Source interface node.
    pub device: String,
    /// Destination cluster (`cluster<N>`; the edge pod is the last).
    pub cluster: u32,
    /// Worst destination of the cluster: capacity kept, Gb/s.
    pub min_gbps: f64,
    /// ... as a fraction of its healthy capacity.
    pub min_fraction: f64,
}

/// IBM result for one DSF zone.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZoneIbm {
    /// The zone.
    pub zone: String,
    /// Interface nodes (RDSW and EDSW).
    pub interface_nodes: usize,
    /// Worst retained fraction over all source / destination pairs.
    pub worst_fraction: f64,
    /// Every (source, destination cluster) pair that keeps less than all of its capacity.
    pub reduced: Vec<Retained>,
}

/// Capacity each interface node retains toward every other, per destination, under `mask`:
/// `(delivered, nominal)` Mb/s indexed `[source][destination]` over the zone's interface nodes
/// (RDSWs then EDSWs, in device order). For tests and tools that need the full matrix.
pub fn retained_matrix(
    f: &Fabric,
    z: ZoneId,
    mask: &FailureMask,
) -> (Vec<DeviceId>, Vec<Vec<(f64, f64)>>) {
    let fab = DsfFabric::new(f, z, mask);
    let n = fab.ifaces.len();
    let mut m = vec![Vec::new(); n];
    let mut col = Vec::new();
    for d in 0..n {
        fab.toward(d, &mut col);
        for (s, &x) in col.iter().enumerate() {
            m[s].push(x);
        }
    }
    (fab.ifaces, m)
}

/// Input Balanced Mode over every DSF zone of the fabric under `mask`.
pub fn input_balanced(f: &Fabric, mask: &FailureMask) -> Vec<ZoneIbm> {
    let mut out = Vec::new();
    for (z, zone) in f.zones.iter().enumerate() {
        if !matches!(zone.kind, ZoneKind::DsfL1 | ZoneKind::DsfL2) {
            continue;
        }
        let zid = ZoneId(z as u32);
        let fab = DsfFabric::new(f, zid, mask);
        let n = fab.ifaces.len();
        let clusters = fab.if_cluster.iter().copied().max().map_or(0, |c| c + 1) as usize;
        // [source][cluster] -> (min delivered, min fraction)
        let mut worst = vec![vec![(f64::INFINITY, f64::INFINITY); clusters]; n];
        let mut col = Vec::new();
        for d in 0..n {
            fab.toward(d, &mut col);
            let c = fab.if_cluster[d] as usize;
            for (s, &(got, nom)) in col.iter().enumerate() {
                if s == d || nom == 0.0 {
                    continue;
                }
                let w = &mut worst[s][c];
                w.0 = w.0.min(got);
                w.1 = w.1.min(got / nom);
            }
        }
        let mut reduced = Vec::new();
        let mut worst_fraction: f64 = 1.0;
        for (s, row) in worst.iter().enumerate() {
            for (c, &(gbps, frac)) in row.iter().enumerate() {
                if frac.is_finite() && frac < 1.0 - 1e-12 {
                    worst_fraction = worst_fraction.min(frac);
                    reduced.push(Retained {
                        device: f.device_name(fab.ifaces[s]),
                        cluster: c as u32,
                        min_gbps: gbps / 1_000.0,
                        min_fraction: frac,
                    });
                }
            }
        }
        out.push(ZoneIbm {
            zone: zone.name.clone(),
            interface_nodes: n,
            worst_fraction,
            reduced,
        });
    }
    out
}
