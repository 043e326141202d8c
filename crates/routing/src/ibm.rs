//! DSF Input Balanced Mode (Meta, "Disaggregated Scheduled Fabric ..." 2025): after remote
//! link failures, no device admits more input toward a destination than it can deliver, so
//! congestion does not spread.
//!
//! Model (fluid, per destination interface node d). A device x that can deliver a fraction
//! `r_x = delivered_x / nominal_x` of its nominal capacity toward d advertises d on that
//! fraction of its input links; an upstream device u then uses at most
//! `min(live(u, x), r_x * nominal(u, x))` toward d over its links to x, and its own delivered
//! capacity is the sum of that over its downstream devices. Evaluated from d back to the
//! sources: d's cluster FDSWs (their direct links to d), the SDSWs, the other clusters'
//! FDSWs, then the interface nodes. Every quantity only falls when links fail, so retained
//! capacity never increases with failures; and what a source retains is always deliverable
//! (it is at most the source-to-d max flow). "Admits no more input than it can deliver" holds
//! as shares: each node admits at most the fraction of its nominal input that it can still
//! deliver of its nominal output ([`balances`]).
//!
//! The three failure cases Meta's DSF post lists map onto this propagation: FDSW<->RDSW (the
//! FDSW's delivery toward that RDSW falls, then everything upstream of it), FDSW<->SDSW (both
//! directions: toward the FDSW's cluster through the SDSW, and out of it), and RDSW<->SDSW:
//! the FBOSS dual-stage zone has no direct RDSW-SDSW links, so an RDSW's reduction reaches
//! the SDSWs through its cluster's FDSWs and from them every remote RDSW.

use aifabric_model::*;
use serde::Serialize;

/// A DSF zone's fabric as local indices with per-bundle lane capacities (nominal, live), Mb/s.
struct DsfFabric {
    ifaces: Vec<DeviceId>,
    /// FDSWs and SDSWs, in local order.
    fd_dev: Vec<DeviceId>,
    sd_dev: Vec<DeviceId>,
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
        let l1 = f.zones()[z.idx()].kind == ZoneKind::DsfL1;
        // Index of each zone device among its kind (interface, FDSW, SDSW).
        let mut local = vec![None; f.devices().len()];
        let (mut ifaces, mut if_cluster, mut fd_cluster) = (Vec::new(), Vec::new(), Vec::new());
        let (mut fd_dev, mut sd_dev) = (Vec::new(), Vec::new());
        let mut n_sd = 0usize;
        for d in f.zone_devices(z).map(DeviceId::new) {
            let dev = f.device(d);
            let cluster = if l1 { 0 } else { dev.pod().unwrap_or(0) };
            match dev.role {
                Role::Rdsw | Role::Edsw => {
                    local[d.idx()] = Some(ifaces.len() as u32);
                    ifaces.push(d);
                    if_cluster.push(cluster);
                }
                Role::Fdsw => {
                    local[d.idx()] = Some(fd_cluster.len() as u32);
                    fd_cluster.push(cluster);
                    fd_dev.push(d);
                }
                Role::Sdsw => {
                    local[d.idx()] = Some(n_sd as u32);
                    n_sd += 1;
                    sd_dev.push(d);
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
            // Both ends are in zone `z`, so both have a local index.
            let (Some(a), Some(c)) = (local[b.a.idx()], local[b.b.idx()]) else {
                continue;
            };
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
            fd_dev,
            sd_dev,
            if_cluster,
            fd_cluster,
            n_sd,
            if_fd,
            fd_sd,
            sd_fd,
        }
    }

    /// (delivered, nominal) capacity toward interface node `d`, Mb/s, of every FDSW, SDSW
    /// and interface node (in their local orders).
    fn layers(&self, d: usize) -> Layers {
        let c = self.if_cluster[d];
        let mut fd = vec![(0.0f64, 0.0f64); self.fd_cluster.len()];
        for &(f, nom, live) in &self.if_fd[d] {
            fd[f as usize] = (live as f64, nom as f64);
        }
        let mut sd = vec![(0.0f64, 0.0f64); self.n_sd];
        for (s, links) in self.sd_fd.iter().enumerate() {
            for &(f, nom, live) in links {
                if self.fd_cluster[f as usize] == c {
                    sd[s].0 += admit(live, nom, fd[f as usize]);
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
                acc.0 += admit(live, nom, sd[s as usize]);
                acc.1 += nom as f64;
            }
            fd[f] = acc;
        }
        let iface = self
            .if_fd
            .iter()
            .map(|links| {
                links.iter().fold((0.0, 0.0), |acc, &(f, nom, live)| {
                    (acc.0 + admit(live, nom, fd[f as usize]), acc.1 + nom as f64)
                })
            })
            .collect();
        Layers { fd, sd, iface }
    }

    /// (delivered, nominal) capacity of every interface node toward interface node `d`, Mb/s.
    fn toward(&self, d: usize, out: &mut Vec<(f64, f64)>) {
        *out = self.layers(d).iface;
    }

    /// For destination `d`: each fabric node's admitted and nominal input toward `d` from the
    /// devices upstream of it, next to its delivered and nominal output.
    fn balance(&self, d: usize) -> Vec<NodeBalance> {
        let c = self.if_cluster[d];
        let l = self.layers(d);
        let mut input = vec![(0.0f64, 0.0f64); self.fd_cluster.len()];
        let mut sd_in = vec![(0.0f64, 0.0f64); self.n_sd];
        // Interface nodes feed their own cluster's FDSWs (d's cluster: directly toward d).
        for (i, links) in self.if_fd.iter().enumerate() {
            if i == d {
                continue;
            }
            for &(f, nom, live) in links {
                input[f as usize].0 += admit(live, nom, l.fd[f as usize]);
                input[f as usize].1 += nom as f64;
            }
        }
        // Remote FDSWs feed the SDSWs; the SDSWs feed d's cluster's FDSWs.
        for (f, links) in self.fd_sd.iter().enumerate() {
            for &(s, nom, live) in links {
                if self.fd_cluster[f] == c {
                    input[f].0 += admit(live, nom, l.fd[f]);
                    input[f].1 += nom as f64;
                } else {
                    sd_in[s as usize].0 += admit(live, nom, l.sd[s as usize]);
                    sd_in[s as usize].1 += nom as f64;
                }
            }
        }
        let nodes = |inp: &[(f64, f64)], out: &[(f64, f64)], devs: &[DeviceId]| {
            inp.iter()
                .zip(out)
                .zip(devs)
                .map(|((i, o), &device)| NodeBalance {
                    device,
                    admitted_in: i.0,
                    nominal_in: i.1,
                    delivered_out: o.0,
                    nominal_out: o.1,
                })
                .collect::<Vec<_>>()
        };
        let mut all = nodes(&input, &l.fd, &self.fd_dev);
        all.extend(nodes(&sd_in, &l.sd, &self.sd_dev));
        all
    }
}

/// Per-destination capacities of every layer.
struct Layers {
    fd: Vec<(f64, f64)>,
    sd: Vec<(f64, f64)>,
    iface: Vec<(f64, f64)>,
}

/// What an upstream device may use over links (`live` of `nom`) toward a device that delivers
/// `x = (delivered, nominal)`: its links, cut to the device's delivery ratio.
fn admit(live: u64, nom: u64, x: (f64, f64)) -> f64 {
    let ratio = if x.1 > 0.0 { x.0 / x.1 } else { 0.0 };
    (live as f64).min(ratio * nom as f64)
}

/// One fabric node's input and output toward one destination, Mb/s.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NodeBalance {
    /// The FDSW or SDSW.
    pub device: DeviceId,
    /// Input it admits from upstream devices.
    pub admitted_in: f64,
    /// Input upstream devices could send over its links when healthy.
    pub nominal_in: f64,
    /// Output it can still deliver.
    pub delivered_out: f64,
    /// Output when healthy.
    pub nominal_out: f64,
}

/// For every destination interface node of zone `z` (returned first, in zone order), the
/// balance of every fabric node (FDSWs, then SDSWs). By construction IBM keeps the admitted
/// share of a node's input at or below the delivered share of its output.
pub fn balances(
    f: &Fabric,
    z: ZoneId,
    mask: &FailureMask,
) -> (Vec<DeviceId>, Vec<Vec<NodeBalance>>) {
    let fab = DsfFabric::new(f, z, mask);
    let per_dest = (0..fab.ifaces.len()).map(|d| fab.balance(d)).collect();
    (fab.ifaces, per_dest)
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
    for (z, zone) in f.zones().iter().enumerate() {
        if !matches!(zone.kind, ZoneKind::DsfL1 | ZoneKind::DsfL2) {
            continue;
        }
        let zid = ZoneId::from_idx(z);
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
