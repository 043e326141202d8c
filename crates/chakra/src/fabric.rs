//! Replay on a fabric: ranks placed on GPUs, communication timed by the flow-level engine.
//!
//! Each collective is timed as if every process group of its *family* ran it at the same
//! moment: groups with the same shape (the same rank offsets from their first member, e.g.
//! all tensor-parallel groups, or all data-parallel groups) are the replicas of one
//! parallelism dimension, which move in lockstep in data-, tensor- and pipeline-parallel
//! training. This is how `aifabric job` times a dimension's collectives, so a trace
//! synthesized from a job replays to the job's step time. Traffic of different families
//! that overlaps in time does not contend in this model. Results are memoized per (family,
//! operation, algorithm, size): a trace repeats the same few collectives many times.

use crate::info::TraceInfo;
use crate::io::TraceSet;
use crate::replay::RankId;
use crate::replay::{self, ps, Groups, Ps, Replay, ReplayConfig, ReplayError, Timer};
use aifabric_dataplane::{Forwarding, Lb, Net, NetParams};
use aifabric_engine::sim::Collective;
use aifabric_engine::tune::Tuner;
use aifabric_model::{DeviceId, Fabric, Scenario};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_workload::{placement, Algo, Op, Placement};
use rustc_hash::FxHashMap;

/// What a point-to-point transfer's time is remembered by: a pair family of two-rank groups
/// (every pair of the family, one direction, one size) or one pair of ranks.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum P2pKey {
    Family(u32, bool, u64),
    Pair(RankId, RankId, u64),
}

/// Communication timed on a [`Net`].
pub struct FabricTimer<'a> {
    net: &'a Net<'a>,
    routes: Forwarding,
    gpus: &'a [DeviceId],
    groups: &'a Groups,
    family: Vec<u32>,
    families: Vec<Vec<u32>>,
    memo: FxHashMap<(u32, Option<Op>, Algo, u64), Ps>,
    p2p_memo: FxHashMap<P2pKey, Ps>,
    lb: Lb,
    seed: u64,
    channels: u32,
    alpha_s: f64,
    tuner: Tuner,
    /// Engine simulations run (distinct collectives and transfers).
    pub simulations: u64,
    /// Links any simulated collective or transfer used.
    pub used_links: aifabric_engine::FixedBitSet,
}

/// Group processes by shape: (size, offsets from the first member). A group with the same
/// members as one already in its family (e.g. the implied world group and a group of all
/// ranks) joins the family but is not simulated twice.
fn families(groups: &Groups) -> (Vec<u32>, Vec<Vec<u32>>) {
    let mut by_shape: FxHashMap<Vec<i64>, u32> = FxHashMap::default();
    let mut family = Vec::with_capacity(groups.len());
    let mut families: Vec<Vec<u32>> = Vec::new();
    let mut seen: rustc_hash::FxHashSet<&[u32]> = rustc_hash::FxHashSet::default();
    for (g, m) in groups.members.iter().enumerate() {
        let first = m.first().map_or(0, |&x| i64::from(x));
        let shape: Vec<i64> = m.iter().map(|&x| i64::from(x) - first).collect();
        let next = families.len() as u32;
        let f = *by_shape.entry(shape).or_insert(next);
        if f == next {
            families.push(Vec::new());
        }
        if seen.insert(m.as_slice()) {
            families[f as usize].push(g as u32);
        }
        family.push(f);
    }
    (family, families)
}

/// A replay on one network ([`Prepared::run`]).
#[derive(Clone, Debug)]
pub struct ReplayRun {
    /// What the trace does.
    pub replay: Replay,
    /// Engine simulations run.
    pub simulations: u64,
    /// Links its collectives and transfers used.
    pub used_links: aifabric_engine::FixedBitSet,
}

impl<'a> FabricTimer<'a> {
    /// Time communication of `groups` with rank `r` on `gpus[r]`.
    pub fn new(
        net: &'a Net<'a>,
        gpus: &'a [DeviceId],
        groups: &'a Groups,
        lb: Lb,
        seed: u64,
        channels: u32,
        alpha_s: f64,
    ) -> Result<FabricTimer<'a>, ReplayError> {
        let routes =
            Forwarding::new(net, gpus.iter().copied()).map_err(|source| ReplayError::Sim {
                context: None,
                source: source.into(),
            })?;
        let (family, families) = families(groups);
        Ok(FabricTimer {
            net,
            routes,
            gpus,
            groups,
            family,
            families,
            memo: FxHashMap::default(),
            p2p_memo: FxHashMap::default(),
            lb,
            seed,
            channels,
            alpha_s,
            tuner: Tuner::default(),
            simulations: 0,
            used_links: aifabric_engine::FixedBitSet::with_capacity(net.f.links().len()),
        })
    }

    fn run(
        &mut self,
        op: Option<Op>,
        algo: Algo,
        groups: Vec<Vec<DeviceId>>,
        bytes: u64,
        what: &str,
    ) -> Result<Ps, ReplayError> {
        self.simulations += 1;
        let c = Collective {
            op,
            algo,
            groups,
            bytes: bytes as f64,
            channels: self.channels,
            lb: self.lb,
            seed: self.seed,
            alpha_s: self.alpha_s,
            proto: None,
        };
        let r = self
            .tuner
            .simulate(self.net, &self.routes, &c)
            .map_err(|source| ReplayError::Sim {
                context: Some(what.to_owned()),
                source,
            })?;
        self.used_links.union_with(&r.used_links);
        Ok(ps(r.time_s))
    }
}

impl Timer for FabricTimer<'_> {
    fn collective(
        &mut self,
        pg: u32,
        op: Option<Op>,
        algo: Option<Algo>,
        bytes: u64,
    ) -> Result<Ps, ReplayError> {
        let Some(op) = op else {
            // A barrier: one software latency.
            return Ok(ps(self.alpha_s));
        };
        // As NCCL: the tuner's choice unless the trace names an algorithm.
        let algo = algo.unwrap_or(Algo::Auto);
        let f = self.family[pg as usize];
        if let Some(&t) = self.memo.get(&(f, Some(op), algo, bytes)) {
            return Ok(t);
        }
        let groups: Vec<Vec<DeviceId>> = self.families[f as usize]
            .iter()
            .map(|&g| {
                self.groups.members[g as usize]
                    .iter()
                    .map(|&r| self.gpus[r as usize])
                    .collect()
            })
            .collect();
        let what = format!(
            "{} of {bytes} B on process group `{}`",
            op.as_str(),
            self.groups.names[pg as usize]
        );
        let t = self.run(Some(op), algo, groups, bytes, &what)?;
        self.memo.insert((f, Some(op), algo, bytes), t);
        Ok(t)
    }

    fn p2p(
        &mut self,
        src: RankId,
        dst: RankId,
        pg: Option<u32>,
        bytes: u64,
    ) -> Result<Ps, ReplayError> {
        // On a two-rank group: with every pair of its family, in the same direction.
        let pair = pg.and_then(|g| {
            let m = &self.groups.members[g as usize];
            match m.as_slice() {
                [a, b] if (*a, *b) == (src.get(), dst.get()) => Some((g, true)),
                [a, b] if (*a, *b) == (dst.get(), src.get()) => Some((g, false)),
                _ => None,
            }
        });
        let (key, groups) = match pair {
            Some((g, fwd)) => {
                let f = self.family[g as usize];
                let key = P2pKey::Family(f, fwd, bytes);
                if let Some(&t) = self.p2p_memo.get(&key) {
                    return Ok(t);
                }
                let groups = self.families[f as usize]
                    .iter()
                    .map(|&g| {
                        let m = &self.groups.members[g as usize];
                        let (a, b) = (self.gpus[m[0] as usize], self.gpus[m[1] as usize]);
                        if fwd {
                            vec![a, b]
                        } else {
                            vec![b, a]
                        }
                    })
                    .collect();
                (key, groups)
            }
            None => {
                let key = P2pKey::Pair(src, dst, bytes);
                if let Some(&t) = self.p2p_memo.get(&key) {
                    return Ok(t);
                }
                (key, vec![vec![self.gpus[src.idx()], self.gpus[dst.idx()]]])
            }
        };
        let what = format!("transfer of {bytes} B from rank {src} to rank {dst}");
        let t = self.run(None, Algo::Direct, groups, bytes, &what)?;
        self.p2p_memo.insert(key, t);
        Ok(t)
    }
}

/// How to replay on a fabric.
#[derive(Clone, Copy, Debug)]
pub struct FabricOptions {
    /// Placement (default: the trace's, else packed).
    pub placement: Option<Placement>,
    /// Load balancing.
    pub lb: Lb,
    /// Hash seed.
    pub seed: u64,
    /// Channels per collective (0: auto).
    pub channels: u32,
    /// ASN plan.
    pub plan: AsnPlan,
    /// BGP settings.
    pub bgp: BgpConfig,
    /// Network parameters (the scale-up domain is the trace's unless `scale_up_fixed`).
    pub params: NetParams,
    /// Keep `params`' scale-up domain even if the trace names one.
    pub scale_up_fixed: bool,
    /// Per-step collective latency, seconds (default: the trace's, else 5 us).
    pub alpha_s: Option<f64>,
    /// Peak FLOP/s per GPU for `num_ops` (default: the trace's, else an H100's).
    pub peak_flops_per_s: Option<f64>,
    /// Share of the peak reached (default: the trace's, else 40%).
    pub efficiency: Option<f64>,
    /// Window, nodes per rank.
    pub window: u32,
}

impl Default for FabricOptions {
    /// ECMP, seed 1, automatic channels, RFC 7938 ASNs, default BGP and network, the trace's
    /// placement, roofline and latency, a window of 1,024 nodes.
    fn default() -> Self {
        FabricOptions {
            placement: None,
            lb: Lb::Ecmp,
            seed: 1,
            channels: 0,
            plan: AsnPlan::Rfc7938,
            bgp: BgpConfig::default(),
            params: NetParams::default(),
            scale_up_fixed: false,
            alpha_s: None,
            peak_flops_per_s: None,
            efficiency: None,
            window: 1024,
        }
    }
}

/// H100 SXM dense bf16 peak, FLOP/s, and a typical share of it (Llama 3: 38-43% MFU).
pub const DEFAULT_ROOFLINE: (f64, f64) = (989e12, 0.4);
/// Default per-step collective latency, seconds.
pub const DEFAULT_ALPHA_S: f64 = 5e-6;

/// A trace set placed on a fabric, ready to replay on its network under any scenario: the
/// metadata checked, the communicator groups, the ranks placed on the healthy fabric (a
/// scenario then hits the job where it runs), the engine parameters and the roofline.
pub struct Prepared {
    info: TraceInfo,
    groups: Groups,
    gpus: Vec<DeviceId>,
    params: NetParams,
    policy: Placement,
    cfg: ReplayConfig,
    alpha_s: f64,
}

impl Prepared {
    /// Read `set`'s metadata and groups and place its ranks on `f` as `opts` says.
    pub fn new(f: &Fabric, set: &TraceSet, opts: &FabricOptions) -> Result<Self, ReplayError> {
        let (_, meta) = crate::io::Reader::open(&set.files[0])?;
        let info = TraceInfo::from_metadata(&meta);
        info.check().map_err(|what| ReplayError::Metadata {
            file: set.files[0].clone(),
            what,
        })?;
        let peak = opts
            .peak_flops_per_s
            .or(info.peak_flops_per_s)
            .unwrap_or(DEFAULT_ROOFLINE.0);
        let eff = opts
            .efficiency
            .or(info.efficiency)
            .unwrap_or(DEFAULT_ROOFLINE.1);
        if !(eff > 0.0 && eff <= 1.0) {
            return Err(ReplayError::Input(format!(
                "the efficiency is the share of the peak reached: above 0 and at most 1, not {eff}"
            )));
        }
        let groups = replay::groups_of(set)?;
        let mut params = opts.params;
        if !opts.scale_up_fixed {
            if let Some(g) = info.scale_up_gpus {
                params.scale_up_gpus = g;
            }
            if let Some(b) = info.scale_up_bytes_per_s {
                params.scale_up_bytes_per_s = b;
            }
        }
        let policy = match (opts.placement, &info.placement) {
            (Some(p), _) => p,
            (None, Some(name)) => Placement::parse(name).unwrap_or(Placement::Packed),
            (None, None) => Placement::Packed,
        };
        let gpus = placement::place(
            f,
            set.ranks(),
            params.scale_up_gpus,
            policy,
            &Scenario::healthy(f).unusable(),
        )
        .map_err(|source| ReplayError::Placement {
            ranks: set.ranks(),
            source,
        })?;
        let alpha_s = opts.alpha_s.or(info.alpha_s).unwrap_or(DEFAULT_ALPHA_S);
        Ok(Prepared {
            info,
            groups,
            gpus,
            params,
            policy,
            cfg: ReplayConfig {
                flops_per_s: peak * eff,
                window: opts.window,
            },
            alpha_s,
        })
    }

    /// The engine parameters the replay runs with (the trace's scale-up domain, unless fixed).
    pub fn params(&self) -> NetParams {
        self.params
    }

    /// Replay `set` on `net` (built with [`Prepared::params`]); the replay and the engine
    /// simulations it ran.
    pub fn run(
        &self,
        net: &Net<'_>,
        set: &TraceSet,
        opts: &FabricOptions,
        progress: &dyn Fn(u64),
    ) -> Result<ReplayRun, ReplayError> {
        let mut timer = FabricTimer::new(
            net,
            &self.gpus,
            &self.groups,
            opts.lb,
            opts.seed,
            opts.channels,
            self.alpha_s,
        )?;
        let replay = replay::replay(set, &self.groups, &mut timer, self.cfg, progress)?;
        Ok(ReplayRun {
            replay,
            simulations: timer.simulations,
            used_links: timer.used_links,
        })
    }

    /// The placement the ranks took.
    pub fn placement(&self) -> Placement {
        self.policy
    }

    /// The GPU of each rank.
    pub fn gpus(&self) -> &[DeviceId] {
        &self.gpus
    }

    /// Effective FLOP/s a compute node's `num_ops` runs at.
    pub fn flops_per_s(&self) -> f64 {
        self.cfg.flops_per_s
    }

    /// Per-step collective latency, seconds.
    pub fn alpha_s(&self) -> f64 {
        self.alpha_s
    }

    /// What the trace's metadata said.
    pub fn info(&self) -> &TraceInfo {
        &self.info
    }
}

/// Replay `set` on the healthy `f`: the replay and the engine simulations it ran (the
/// `aifabric` facade's `Study::replay` adds scenarios and the comparison with the healthy
/// fabric).
pub fn replay_healthy(
    f: &Fabric,
    set: &TraceSet,
    opts: &FabricOptions,
    progress: &dyn Fn(u64),
) -> Result<(Replay, u64), ReplayError> {
    let p = Prepared::new(f, set, opts)?;
    let net = Net::new(f, &Scenario::healthy(f), opts.plan, opts.bgp, p.params());
    let r = p.run(&net, set, opts, progress)?;
    Ok((r.replay, r.simulations))
}
