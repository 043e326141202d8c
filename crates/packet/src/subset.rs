//! Part of a matrix at packet level ([`run_part`]): under `ecmp` every flow's path is
//! known before the run (the switches hash the flow alone), so a caller may look at the
//! paths, keep only the flows it needs packet by packet, and run those on the whole
//! matrix's network: the same forwarding tables, hash salts and congestion-control
//! parameters, so that each kept flow takes the very path it takes in the whole run.

use crate::ids::{HostId, PortId};
use crate::sim::{drive, Progress};
use crate::switch::ecmp_hop;
use crate::topo::Topo;
use crate::{setup, Config, PacketError, PacketLb, PacketResult};
use aifabric_dataplane::{Net, ResourceId};
use aifabric_model::DeviceId;
use aifabric_workload::traffic::{chained, TrafficMatrix};
use rustc_hash::FxHashMap;

/// Longest path a walk follows (hops); forwarding loops are the control plane's to prevent,
/// this only bounds a walk that would not end.
const MAX_HOPS: usize = 64;

/// One hop of a flow's path: the link direction it crosses and that port's rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathHop {
    /// The link direction (the data plane's resource).
    pub resource: ResourceId,
    /// The port's rate, bits per second.
    pub rate_bps: u64,
}

/// A DSF zone's cell fabric as a flow's data crosses it, one stage at either end: out of
/// its ingress interface node or into its egress one, each as one link of that node's live
/// fabric ports' rates summed (cells are sprayed over all of them; Input Balanced Mode's
/// subsets and a two-stage fabric's middle are not seen).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricStage {
    /// The interface node.
    pub node: DeviceId,
    /// Into the node (its egress side), else out of it.
    pub into: bool,
    /// Its live fabric ports' rates, summed, bits per second.
    pub rate_bps: u64,
}

/// Every flow's paths under `ecmp`, host link out to host link in: its data's, and its
/// acknowledgements' back (hashed on their own, so not always the data's path reversed). A
/// DSF zone's cell fabric, sprayed, is not a hop: a path goes from the ingress interface
/// node's VOQ to the egress port, and the data's crossing is told as [`FabricStage`]s.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowPaths {
    /// Flow k's data path is `hops[offsets[2k]..offsets[2k + 1]]`, its ACKs'
    /// `hops[offsets[2k + 1]..offsets[2k + 2]]`.
    offsets: Vec<u32>,
    hops: Vec<PathHop>,
    /// Flow k's data's fabric stages are `stages[stage_offsets[k]..stage_offsets[k + 1]]`.
    stage_offsets: Vec<u32>,
    stages: Vec<FabricStage>,
    /// Flow k's base round trip, picoseconds (as the run times it: each hop's delay both
    /// ways, an MTU and an ACK serialized on it).
    base_rtt_ps: Vec<u64>,
}

impl FlowPaths {
    /// Flows (the matrix's, in its order).
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1) / 2
    }

    /// Whether there are no flows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Flow `k`'s data path, source first.
    pub fn path(&self, k: usize) -> &[PathHop] {
        &self.hops[self.offsets[2 * k] as usize..self.offsets[2 * k + 1] as usize]
    }

    /// Flow `k`'s acknowledgements' path, destination first.
    pub fn ack_path(&self, k: usize) -> &[PathHop] {
        &self.hops[self.offsets[2 * k + 1] as usize..self.offsets[2 * k + 2] as usize]
    }

    /// Flow `k`'s base round trip, seconds: what its last packet and ACK take with nothing
    /// queued.
    pub fn base_rtt_s(&self, k: usize) -> f64 {
        self.base_rtt_ps[k] as f64 * 1e-12
    }

    /// The DSF cell fabrics flow `k`'s data crosses, in path order (empty outside DSF).
    pub fn fabric_stages(&self, k: usize) -> &[FabricStage] {
        &self.stages[self.stage_offsets[k] as usize..self.stage_offsets[k + 1] as usize]
    }
}

/// Each DSF interface node's live fabric ports' rates summed, out of it and into it.
fn fabric_rates(topo: &Topo) -> FxHashMap<DeviceId, (u64, u64)> {
    let mut rates: FxHashMap<DeviceId, (u64, u64)> = FxHashMap::default();
    for &p in topo.dsf.iter().flat_map(|d| &d.fabric_ports) {
        let port = &topo.ports[p.idx()];
        rates.entry(port.from).or_default().0 += port.rate_bps;
        rates.entry(port.to).or_default().1 += port.rate_bps;
    }
    rates
}

/// Each flow's path under `ecmp` on `topo` with the engine's own hash.
fn walk(topo: &Topo, tm: &TrafficMatrix, cfg: &Config) -> Result<FlowPaths, PacketError> {
    let salts = setup::salts(topo, cfg);
    let fabric = fabric_rates(topo);
    let mut paths = FlowPaths {
        offsets: Vec::with_capacity(2 * tm.flows.len() + 1),
        hops: Vec::new(),
        stage_offsets: Vec::with_capacity(tm.flows.len() + 1),
        stages: Vec::new(),
        base_rtt_ps: Vec::with_capacity(tm.flows.len()),
    };
    // Per (source, destination) rack: the base round trip.
    let mut rtt_of: FxHashMap<(u32, u32), u64> = FxHashMap::default();
    paths.offsets.push(0);
    paths.stage_offsets.push(0);
    let hop = |p: PortId| {
        let port = &topo.ports[p.idx()];
        PathHop {
            resource: port.resource,
            rate_bps: port.rate_bps,
        }
    };
    for fl in &tm.flows {
        let (src, dst) = (HostId::new(fl.src), HostId::new(fl.dst));
        let dest = |h: HostId| topo.host_dest[h.idx()].map_or(u32::MAX, |d| d.get());
        paths.base_rtt_ps.push(
            *rtt_of
                .entry((dest(src), dest(dst)))
                .or_insert_with(|| setup::base_rtt_ps(topo, src, dst, cfg)),
        );
        for (data, from, to) in [(true, src, dst), (false, dst, src)] {
            let target: DeviceId = topo.host_device[to.idx()];
            let mut p = topo.host_up[from.idx()];
            paths.hops.push(hop(p));
            let mut n = 1;
            loop {
                let v = topo.ports[p.idx()].to;
                if v == target {
                    break;
                }
                n += 1;
                if n > MAX_HOPS {
                    return Err(PacketError::Invalid(format!(
                        "flow {}: its path is longer than {MAX_HOPS} hops (a forwarding loop?)",
                        fl.id
                    )));
                }
                p = ecmp_hop(topo, &salts, v, to, fl.id);
                let w = topo.ports[p.idx()].from;
                if data && w != v {
                    // Across a cell fabric from interface node `v` to `w`.
                    let (out, into) = (fabric.get(&v), fabric.get(&w));
                    paths.stages.extend([
                        FabricStage {
                            node: v,
                            into: false,
                            rate_bps: out.map_or(0, |r| r.0),
                        },
                        FabricStage {
                            node: w,
                            into: true,
                            rate_bps: into.map_or(0, |r| r.1),
                        },
                    ]);
                }
                paths.hops.push(hop(p));
            }
            paths.offsets.push(paths.hops.len() as u32);
        }
        paths.stage_offsets.push(paths.stages.len() as u32);
    }
    Ok(paths)
}

/// What [`run_part`] ran: the kept flows' result, and how many flows it kept.
#[derive(Clone, Debug)]
pub struct PartRun {
    /// The packet run of the kept flows (its `flows` are those kept).
    pub result: PacketResult,
    /// Flows kept, of the matrix's.
    pub kept: u64,
}

/// What [`run_part`] asks which flows to keep: each flow's paths in, per flow whether to keep
/// it out (`None`: all of them).
pub type Choose<'a> = dyn FnMut(&FlowPaths) -> Result<Option<Vec<bool>>, PacketError> + 'a;

/// Run part of `tm` packet by packet: under `ecmp` with every flow started at a fixed time,
/// `choose` receives every flow's path and names the flows to keep (`None`: all of them;
/// an error stops the run before anything is simulated);
/// the kept flows run on the whole matrix's network, each on its path of the whole run.
/// Other modes (per-packet choices: `spray`, `mixed`, `adaptive`) and triggered flows run
/// whole, without asking `choose`. Flows keep their ids, so their hashes too.
pub fn run_part(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    gpus: &[DeviceId],
    cfg: &Config,
    choose: &mut Choose<'_>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<PartRun, PacketError> {
    let once = Chains {
        repeats: &[1],
        depth: None,
    };
    let mut runs = run_part_repeats(net, tm, gpus, cfg, once, Some(choose), progress)?;
    Ok(PartRun {
        kept: runs.kept,
        result: runs.results.pop().expect("one run"),
    })
}

/// The runs [`run_part_repeats`] makes of the kept flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chains<'a> {
    /// Per run, how many times the kept flows repeat, chained.
    pub repeats: &'a [u32],
    /// Most repeats of a connection in flight ([`aifabric_workload::traffic::chained`];
    /// `None`: no bound).
    pub depth: Option<u32>,
}

/// [`run_part`] once per entry of `chains.repeats` (none: no run): the kept flows repeated
/// that many times (0 or 1: once), chained ([`aifabric_workload::traffic::chained`]: each
/// node's next repeat starts once it has received its kept flows of this one), one run after
/// the other on the same network.
/// Each result's flows are the kept ones, repeat by repeat. The paths and the choice are
/// the first repeat's, asked once (no `choose`: every flow, no path walked); a repeat
/// reuses its flows' ids, so their paths.
pub fn run_part_repeats(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    gpus: &[DeviceId],
    cfg: &Config,
    chains: Chains<'_>,
    choose: Option<&mut Choose<'_>>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<PartRuns, PacketError> {
    let (topo, cfg) = setup::prepare(net, tm, gpus, cfg)?;
    let keep = match choose {
        Some(choose) if cfg.lb == PacketLb::Ecmp && tm.triggers.is_empty() => {
            choose(&walk(&topo, tm, &cfg)?)?
        }
        _ => None,
    };
    let mut part = None;
    if let Some(keep) = keep {
        if keep.len() == tm.flows.len() && keep.iter().any(|&k| !k) {
            part = Some(TrafficMatrix {
                nodes: tm.nodes,
                flows: tm
                    .flows
                    .iter()
                    .zip(&keep)
                    .filter(|(_, &k)| k)
                    .map(|(f, _)| f.clone())
                    .collect(),
                triggers: tm.triggers.clone(),
            });
        }
    }
    let one = part.as_ref().unwrap_or(tm);
    let mut results = Vec::with_capacity(chains.repeats.len());
    for &k in chains.repeats {
        let chain;
        let tm = if k > 1 {
            chain = chained(one, k, chains.depth).ok_or_else(|| {
                PacketError::Invalid(format!(
                    "{k} repeats of a matrix with triggers or of {} nodes cannot be chained \
                     (or a depth of {:?}: give at least 1)",
                    one.nodes, chains.depth
                ))
            })?;
            &chain
        } else {
            one
        };
        results.push(if cfg.partitions > 1 {
            crate::partition::run(net, tm, &topo, &cfg, None, progress)?
        } else {
            let sim = setup::build(net, tm, &topo, &cfg, None)?;
            drive(sim, progress).result(net, tm)
        });
    }
    Ok(PartRuns {
        kept: one.flows.len() as u64,
        results,
    })
}

/// What [`run_part_repeats`] ran: a result per entry of its [`Chains::repeats`], and how many
/// flows of one repeat it kept.
#[derive(Clone, Debug)]
pub struct PartRuns {
    /// The packet runs of the kept flows, chained as asked.
    pub results: Vec<PacketResult>,
    /// Flows kept, of the matrix's.
    pub kept: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use aifabric_dataplane::NetParams;
    use aifabric_model::{Fabric, Role, Scenario};
    use aifabric_routing::bgp::{AsnPlan, BgpConfig};
    use aifabric_workload::traffic::Pattern;

    fn net(f: &Fabric) -> Net<'_> {
        Net::new(
            f,
            &Scenario::healthy(f),
            AsnPlan::Rfc7938,
            BgpConfig::default(),
            NetParams::default(),
        )
    }

    /// Under `ecmp` a flow's paths are the ones it takes in the run: a part run's packets
    /// (data and acknowledgements) cross only the ports walked for its kept flows.
    #[test]
    fn walked_paths_are_the_runs_paths_and_a_part_keeps_them() {
        let f = aifabric_spec::load("htsim-k16").expect("built in");
        let net = net(&f);
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).take(64).collect();
        let tm = Pattern::Permutation.generate(64, 200_000, 7);
        let cfg = Config {
            lb: PacketLb::Ecmp,
            ..Config::default()
        };
        let mut seen = None;
        let whole = run_part(
            &net,
            &tm,
            &gpus,
            &cfg,
            &mut |p| {
                seen = Some(p.clone());
                Ok(None)
            },
            &mut |_| {},
        )
        .expect("run");
        let paths = seen.expect("ecmp asks");
        assert_eq!(paths.len(), tm.flows.len());
        assert_eq!(whole.kept, tm.flows.len() as u64);
        assert_eq!(
            whole.result,
            crate::run(&net, &tm, &gpus, &cfg).expect("run")
        );
        // Keep the odd flows: each keeps its path (the same hops as walked in the whole).
        let keep: Vec<bool> = (0..tm.flows.len()).map(|k| k % 2 == 1).collect();
        let mut again = None;
        let part = run_part(
            &net,
            &tm,
            &gpus,
            &cfg,
            &mut |p| {
                again = Some(p.clone());
                Ok(Some(keep.clone()))
            },
            &mut |_| {},
        )
        .expect("run");
        assert_eq!(again.as_ref(), Some(&paths));
        assert_eq!(part.kept, tm.flows.len() as u64 / 2);
        assert_eq!(part.result.flows, part.kept);
        assert_eq!(part.result.unfinished + part.result.never_started, 0);
        // Every port the part's packets crossed is on a kept flow's walked path.
        let on_kept: std::collections::BTreeSet<String> = (0..paths.len())
            .filter(|&k| keep[k])
            .flat_map(|k| paths.path(k).iter().chain(paths.ack_path(k)))
            .map(|h| net.resource_name(h.resource))
            .collect();
        assert!(!part.result.busiest.is_empty());
        for p in &part.result.busiest {
            assert!(on_kept.contains(&p.link), "{p:?} is on no kept flow's path");
        }
    }

    /// Modes that choose per packet run whole, without asking.
    #[test]
    fn sprayed_matrices_run_whole() {
        let f = aifabric_spec::load("htsim-k16").expect("built in");
        let net = net(&f);
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).take(16).collect();
        let tm = Pattern::Permutation.generate(16, 100_000, 7);
        let cfg = Config {
            lb: PacketLb::Spray(16),
            ..Config::default()
        };
        let r =
            run_part(&net, &tm, &gpus, &cfg, &mut |_| unreachable!(), &mut |_| {}).expect("run");
        assert_eq!(r.kept, 16);
        assert_eq!(r.result, crate::run(&net, &tm, &gpus, &cfg).expect("run"));
    }

    /// A DSF zone's fabric crossing is told as two stages, out of the ingress interface
    /// node and into the egress one, each its node's live fabric links summed (160 lanes
    /// of 106.25G per RDSW on `dsf-l1-zone`); a flow switched inside one node crosses none,
    /// and a failed fabric node takes its links out of both sums.
    #[test]
    fn a_dsf_crossing_is_two_fabric_stages_of_the_nodes_live_fabric_links() {
        let f = aifabric_spec::load("dsf-l1-zone").expect("built in");
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).take(72).collect();
        // GPU 0 -> 1 (the same RDSW: 36 GPUs each), GPU 0 -> 40 (across the fabric).
        let tm = TrafficMatrix {
            nodes: 72,
            flows: [(0, 1), (0, 40)]
                .iter()
                .enumerate()
                .map(|(k, &(src, dst))| aifabric_workload::traffic::TmFlow {
                    id: k as u64,
                    src,
                    dst,
                    bytes: 10_000,
                    start: aifabric_workload::traffic::Start::AtPs(0),
                    done_trigger: None,
                    recv_trigger: None,
                })
                .collect(),
            triggers: Default::default(),
        };
        let cfg = Config {
            lb: PacketLb::Ecmp,
            ..Config::default()
        };
        let stages = |scenario: &Scenario| {
            let net = Net::new(
                &f,
                scenario,
                AsnPlan::Rfc7938,
                BgpConfig::default(),
                NetParams::default(),
            );
            let mut seen = None;
            run_part(
                &net,
                &tm,
                &gpus,
                &cfg,
                &mut |p| {
                    seen = Some(p.clone());
                    Ok(Some(vec![false, false]))
                },
                &mut |_| {},
            )
            .expect("run");
            let p = seen.expect("ecmp asks");
            (p.fabric_stages(0).to_vec(), p.fabric_stages(1).to_vec())
        };
        let lane = 106_250_000_000u64;
        let (inside, across) = stages(&Scenario::healthy(&f));
        assert!(inside.is_empty(), "{inside:?}");
        assert_eq!(across.len(), 2, "{across:?}");
        assert!(!across[0].into && across[1].into);
        assert_ne!(across[0].node, across[1].node);
        assert_eq!(across[0].rate_bps, 160 * lane);
        assert_eq!(across[1].rate_bps, 160 * lane);
        let failed =
            Scenario::from_selectors(&f, &["lab.dc1.l1.fdsw0".into()], &[], &[]).expect("selector");
        let (_, across) = stages(&failed);
        assert_eq!(across[0].rate_bps, 156 * lane);
        assert_eq!(across[1].rate_bps, 156 * lane);
    }
}
