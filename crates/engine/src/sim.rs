//! Event-driven fluid simulation of collectives on a [`Net`].
//!
//! A collective is a [`Schedule`](aifabric_workload::Schedule) of phases per group; all
//! groups run at once, so phase `k` of the collective is the union of every group's phase
//! `k`. Each transfer becomes `channels x QPs` flows. A phase whose flows all have one size
//! is only counted (flows per resource): it ends when its busiest resource has carried its
//! bytes ([`equal_flows_makespan`]). A phase is simulated as a fluid: flows get max-min fair rates
//! ([`crate::maxmin`]); at the first completion the rates are recomputed for the flows
//! left, and so on until all are done (the makespan).
//!
//! **Timing.** Steps are pipelined, not in lockstep ([`crate::chain`]): a collective takes
//! the bandwidth term (each phase's makespan times its `repeat`), plus the per-step software
//! latency times the steps, plus the longest chain of path latencies through the steps (a
//! rank's step waits for its own previous step and for the data it depends on, which paid
//! the path latency of its transfer). A ring over two regions pays the cross-region fibre on
//! the steps whose chunk crosses it, not on every step.
//!
//! Phases are independent for bandwidth, so they are simulated in parallel (rayon) in
//! windows and folded in order: the result does not depend on the thread count.

use crate::chain::{Chain, Edge};
pub use crate::makespan::{equal_flows_makespan, makespan, FluidWs};
use crate::maxmin::FlowSet;
use crate::spray::{Sink, SprayMemo};
use crate::te;
use crate::timer::timed_phase;
pub use crate::timer::{NetTransfer, PhaseTimer};
use crate::unreached::{unreachable_error, Unreached};
pub(crate) use crate::utilization::utilization;
use aifabric_dataplane::{flow_hash, Forwarding, Lb, Net, NoPath, PathWs, ResourceId};
use aifabric_model::DeviceId;
use aifabric_routing::bgp::NotConverged;
use aifabric_workload::collective::{alg_bw_gbytes_per_s, bus_bw_gbytes_per_s, Op};
use aifabric_workload::schedule::{schedule, Algo, Phase, ScheduleError};
use aifabric_workload::Proto;
use fixedbitset::FixedBitSet;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// What to run.
#[derive(Clone, Debug)]
pub struct Collective {
    /// Operation (`None`: point-to-point, each group a (src, dst) pair sending `bytes`).
    pub op: Option<Op>,
    /// Algorithm.
    pub algo: Algo,
    /// Groups of GPUs; all run at once. Groups of a collective have the same size.
    pub groups: Vec<Vec<DeviceId>>,
    /// Size, nccl-tests convention.
    pub bytes: f64,
    /// Channels per collective, each an equal share on its own connections (0: one per GPU
    /// of the scale-up domain, NCCL's rail-aligned rings).
    pub channels: u32,
    /// Load balancing.
    pub lb: Lb,
    /// Seed of the switches' hashes.
    pub seed: u64,
    /// Per-step software latency, seconds (with a protocol: on top of NCCL's latencies).
    pub alpha_s: f64,
    /// NCCL protocol ([`Proto::Auto`]: the tuner's choice); `None`: no protocol model, the
    /// alpha-beta time (per-step `alpha_s`, Simple's bandwidth), as jobs and replays use.
    pub proto: Option<Proto>,
}

/// One candidate of the tuner and its predicted time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// The algorithm.
    pub algo: Algo,
    /// The protocol (`None`: the alpha-beta model).
    pub proto: Option<Proto>,
    /// Predicted time at the size, seconds.
    pub time_s: f64,
}

/// A simulation that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The algorithm does not apply.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// BGP did not settle (the routing error is the source).
    #[error("control plane: {0}")]
    Routing(#[from] NotConverged),
    /// Some transfers have no path.
    #[error("{count} flows have no path (first: {first}): {why}")]
    Unreachable {
        /// Flows without a path.
        count: u64,
        /// The first, by name.
        first: String,
        /// Why.
        why: String,
    },
    /// Bad request.
    #[error("{0}")]
    Invalid(String),
}

/// Utilization of one tier: over the resources of the tier that carried traffic.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierUtil {
    /// Tier, e.g. `rtsw-ftsw`.
    pub tier: String,
    /// Resources that carried traffic.
    pub resources: u64,
    /// Highest utilization, 0..=1.
    pub max: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Mean.
    pub mean: f64,
}

/// A busy resource.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bottleneck {
    /// Name.
    pub resource: String,
    /// Tier.
    pub tier: String,
    /// Utilization over the collective's transfer time, 0..=1.
    pub utilization: f64,
}

/// Result of one collective.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CollectiveResult {
    /// Bytes (nccl-tests convention).
    pub bytes: f64,
    /// Completion time, seconds.
    pub time_s: f64,
    /// Of which latency (per-step software latency and path latency), seconds.
    pub latency_s: f64,
    /// Algorithm bandwidth, GB/s (10^9 B).
    pub alg_bw_gbytes_per_s: f64,
    /// Bus bandwidth, GB/s.
    pub bus_bw_gbytes_per_s: f64,
    /// Latency-paying steps.
    pub steps: u64,
    /// Flows simulated (distinct phases x flows each).
    pub flows: u64,
    /// Utilization per tier, time-averaged over the transfer time.
    pub tiers: Vec<TierUtil>,
    /// The busiest resources.
    pub bottlenecks: Vec<Bottleneck>,
    /// Resources that carried traffic by utilization: bin k counts those in
    /// [5k %, 5(k+1) %), the last bin includes 100%.
    pub utilization_histogram: Vec<u64>,
    /// Max link utilization of the TE assignment over the LP optimum minus 1 (TE on small
    /// instances only).
    pub te_gap: Option<f64>,
    /// The algorithm simulated.
    pub algo: Algo,
    /// The NCCL protocol timed (`None`: the alpha-beta model, no protocol).
    pub proto: Option<Proto>,
    /// Channels (NCCL's rings or trees) the time assumes.
    pub channels: u32,
    /// With `auto` (algorithm or protocol): every candidate's predicted time at this size
    /// (the chosen one is the lowest); empty when both were given.
    pub tuned: Vec<Candidate>,
    /// The links that carried traffic (by link index), to tell whether a scenario touches
    /// what the collective uses. Not serialized.
    #[serde(skip)]
    pub used_links: FixedBitSet,
    /// Bytes each resource carried (resource index, bytes), ascending by resource: what
    /// the collective loads, for jobs sharing the fabric. Not serialized.
    #[serde(skip)]
    pub carried: Vec<(u32, f64)>,
}

/// One phase's flows on local (compacted) resources.
#[derive(Default)]
pub(crate) struct PhaseWs {
    pub(crate) path: PathWs,
    pub(crate) uses: Vec<(u32, f64)>,
    /// Dense map global resource -> local id + 1 (0: not seen in this phase); cleared by
    /// walking `global` after each phase.
    local: Vec<u32>,
    pub(crate) global: Vec<u32>,
    pub(crate) cap: Vec<f64>,
    pub(crate) flows: FlowSet,
    pub(crate) bytes: Vec<f64>,
    fluid: FluidWs,
    /// Path latency of each transfer of each group (group-major), seconds: the slowest of
    /// its queue pairs and, when split, of its branches.
    latency: Vec<f64>,
    /// Sprayed flows' hops and splits, memoized for this phase.
    pub(crate) spray: SprayMemo,
    /// The splits of the flow being pushed.
    srefs: Vec<u32>,
    /// Counting mode (every flow of the phase has the same bytes): flows are not stored,
    /// only how many cross each local resource (`count`, shares summed) and each split
    /// (`split_count`); [`equal_flows_makespan`] needs nothing else.
    counting: bool,
    count: Vec<f64>,
    split_count: Vec<f64>,
    counted: u64,
    /// Counting mode, sprayed flows: per GPU (device index), flows on its host link out and
    /// in, and the GPUs with any.
    host_count: Vec<[f64; 2]>,
    host_touched: Vec<DeviceId>,
}

/// Phase workspaces kept between simulations: each holds dense maps as large as the
/// network (20 MB on `prometheus`), and allocating and zeroing them for every collective
/// cost more than the phases of a small job on a large fabric.
static SPARE_WORKSPACES: std::sync::Mutex<Vec<PhaseWs>> = std::sync::Mutex::new(Vec::new());

/// Spare workspaces kept at most.
const MAX_SPARE_WORKSPACES: usize = 16;

/// `n` workspaces, spare ones first, each as a fresh one would start: its dense maps are
/// clean after every phase, and its spray memo (routing classes of the last network, kept
/// across phases) is dropped.
fn take_workspaces(n: usize) -> Vec<PhaseWs> {
    let mut spare = SPARE_WORKSPACES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let keep = spare.len().saturating_sub(n);
    let mut v = spare.split_off(keep);
    drop(spare);
    for ws in &mut v {
        ws.spray = SprayMemo::default();
    }
    v.resize_with(n, PhaseWs::default);
    v
}

/// Keep `v` for the next simulation.
fn give_back_workspaces(v: Vec<PhaseWs>) {
    let mut spare = SPARE_WORKSPACES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    spare.extend(v);
    spare.truncate(MAX_SPARE_WORKSPACES);
}

/// Result of one phase.
struct PhaseOut {
    makespan_s: f64,
    flows: u64,
    te_gap: Option<f64>,
    unreachable: Option<Unreached>,
    /// The phase timer's error, if it could not time the phase.
    failed: Option<SimError>,
}

/// The per-phase outputs too big to allocate at every phase, reused across windows.
#[derive(Default)]
struct PhaseBuf {
    /// Every transfer as the chain sees it.
    edges: Vec<Edge>,
    /// (global resource, bytes carried in one repetition).
    carried: Vec<(u32, f64)>,
}

impl PhaseWs {
    /// Forget the previous phase's flows, resources and splits.
    pub(crate) fn reset(&mut self, net: &Net<'_>) {
        if self.local.len() < net.resources() as usize {
            self.local = vec![0; net.resources() as usize];
        }
        for &g in &self.global {
            self.local[g as usize] = 0;
        }
        self.global.clear();
        // The routes it looked next hops up in may be gone by the next phase.
        self.path.forget();
        self.cap.clear();
        self.flows.clear();
        self.bytes.clear();
        self.spray.clear();
        self.srefs.clear();
        self.counting = false;
        if self.host_count.len() < net.f.devices().len() {
            self.host_count = vec![[0.0; 2]; net.f.devices().len()];
        }
        for g in self.host_touched.drain(..) {
            self.host_count[g.idx()] = [0.0; 2];
        }
        self.count.clear();
        self.split_count.clear();
        self.counted = 0;
    }

    /// Put the host-link counts of sprayed flows (per GPU: out, in) on the phase's
    /// resources, and clear them.
    fn fold_host_counts(&mut self, net: &Net<'_>) {
        let PhaseWs {
            local,
            global,
            cap,
            count,
            host_count,
            host_touched,
            ..
        } = self;
        for g in host_touched.drain(..) {
            let [out, inn] = std::mem::take(&mut host_count[g.idx()]);
            let (up, down) = net
                .host_link_resources(g)
                .expect("a counted GPU is attached");
            for (r, k) in [(up, out), (down, inn)] {
                if k > 0.0 {
                    let l = local_id(net, local, global, cap, r.get()) as usize;
                    if count.len() <= l {
                        count.resize(l + 1, 0.0);
                    }
                    count[l] += k;
                }
            }
        }
    }

    /// Bytes each local resource carries when every flow moves its bytes once (a split's
    /// links counted once for all its flows).
    pub(crate) fn carried(&self) -> Vec<f64> {
        let mut carried = Vec::new();
        self.flows
            .resource_sums(&self.bytes, self.cap.len(), &mut Vec::new(), &mut carried);
        carried
    }

    /// Add a sprayed flow of `bytes` from `src` to `dst` (whose rack switches are `key`): its
    /// host links, and the splits between the rack switches, computed once per pair and
    /// shared hop by hop ([`SprayMemo`]). Returns its path latency.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn push_sprayed(
        &mut self,
        net: &Net<'_>,
        routes: &Forwarding,
        src: DeviceId,
        dst: DeviceId,
        key: (DeviceId, DeviceId),
        seed: u64,
        bytes: f64,
    ) -> Result<f64, NoPath> {
        let PhaseWs {
            path,
            local,
            global,
            cap,
            flows,
            spray,
            srefs,
            ..
        } = self;
        let mut local_id = |r: u32| local_id(net, local, global, cap, r);
        let mut sink = Sink {
            flows,
            local_id: &mut local_id,
        };
        let p = spray.pair(net, routes, src, dst, key, seed, path, &mut sink)?;
        let middle_s = p.lat;
        if self.counting {
            // Host links counted per GPU (each is one GPU's), folded into the phase's
            // resources once at the end (`fold_host_counts`): no resource lookup per flow.
            for (g, side) in [(src, 0), (dst, 1)] {
                let slot = &mut self.host_count[g.idx()];
                if *slot == [0.0; 2] {
                    self.host_touched.push(g);
                }
                slot[side] += 1.0;
            }
            self.split_count.resize(self.flows.splits(), 0.0);
            for &sp in self.spray.ids(&p) {
                self.split_count[sp as usize] += 1.0;
            }
            self.counted += 1;
            return Ok(middle_s + net.host_cables_s(src, dst));
        }
        srefs.clear();
        srefs.extend_from_slice(spray.ids(&p));
        let (a, b) = net
            .host_resources(src, dst)
            .expect("a spray key means both GPUs are attached");
        self.uses.clear();
        self.uses.extend([(a.get(), 1.0), (b.get(), 1.0)]);
        let srefs = std::mem::take(&mut self.srefs);
        push_flow(net, self, bytes, &srefs);
        self.srefs = srefs;
        Ok(middle_s + net.host_cables_s(src, dst))
    }
}

fn run_phase(
    net: &Net<'_>,
    routes: &Forwarding,
    c: &Collective,
    phase: &Phase,
    ws: &mut PhaseWs,
    buf: &mut PhaseBuf,
) -> PhaseOut {
    ws.reset(net);
    let qps = c.lb.qps();
    let nt = phase.transfers.len();
    // Transfers of one size (most phases): count flows per resource instead of storing them.
    let same_bytes = phase.transfers.first().map(|t| t.bytes);
    ws.counting = c.lb != Lb::Te
        && same_bytes.is_some_and(|b| b > 0.0 && phase.transfers.iter().all(|t| t.bytes == b));
    let mut latency = std::mem::take(&mut ws.latency);
    latency.clear();
    latency.resize(c.groups.len() * nt, 0.0);
    let mut te_transfer: Vec<usize> = Vec::new();
    let mut unreachable: Option<Unreached> = None;
    let mut te_cands: Vec<Vec<Vec<(u32, f64)>>> = Vec::new();
    let mut te_lat: Vec<Vec<f64>> = Vec::new();
    let te_k: u32 = 8;
    for (gi, grp) in c.groups.iter().enumerate() {
        for (ti, t) in phase.transfers.iter().enumerate() {
            let tix = gi * nt + ti;
            let (src, dst) = (grp[t.src as usize], grp[t.dst as usize]);
            let r = net.dest_speaker(dst).and_then(|s| routes.get(s));
            let share = t.bytes / f64::from(qps);
            // Sprayed flows, and flows whose path no hash changes (inside one DSF zone), share
            // one split per rack-switch pair: the same resources, found once.
            if c.lb.is_spray() || (c.lb != Lb::Te && net.hash_free(src, dst)) {
                if let Some(key) = net.spray_key(src, dst) {
                    for _ in 0..qps {
                        match ws.push_sprayed(net, routes, src, dst, key, c.seed, share) {
                            Ok(lat) => latency[tix] = lat,
                            Err(e) => {
                                let u = unreachable.get_or_insert((0, (src, dst), e));
                                u.0 += 1;
                            }
                        }
                    }
                    continue;
                }
            }
            for q in 0..qps {
                let h = flow_hash(src, dst, t.channel * qps + q);
                let mut cands: Vec<(Vec<(u32, f64)>, f64)> = Vec::new();
                let mut path_latency = 0.0f64;
                let tries = if c.lb == Lb::Te { te_k } else { 1 };
                let lb = if c.lb == Lb::Te { Lb::Ucmp } else { c.lb };
                let mut failed = None;
                for k in 0..tries {
                    ws.uses.clear();
                    let hk = if k == 0 {
                        h
                    } else {
                        aifabric_dataplane::mix(h ^ u64::from(k))
                    };
                    match net.path(r, src, dst, hk, lb, c.seed, &mut ws.path, &mut ws.uses) {
                        // A resource without capacity: the flow would never finish (for TE,
                        // the candidate is dropped).
                        Ok(_) if ws.uses.iter().any(|u| net.is_dead(ResourceId::new(u.0))) => {
                            if c.lb != Lb::Te {
                                failed = Some(NoPath::NoCapacity);
                                break;
                            }
                        }
                        Ok(lat) => {
                            path_latency = lat;
                            if c.lb == Lb::Te {
                                let mut u = ws.uses.clone();
                                u.sort_unstable_by_key(|x| x.0);
                                if !cands.iter().any(|c| c.0 == u) {
                                    cands.push((u, lat));
                                }
                            }
                        }
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                if c.lb == Lb::Te && failed.is_none() && cands.is_empty() {
                    failed = Some(NoPath::NoCapacity);
                }
                if let Some(e) = failed {
                    let u = unreachable.get_or_insert((0, (src, dst), e));
                    u.0 += 1;
                    continue;
                }
                if c.lb == Lb::Te {
                    te_lat.push(cands.iter().map(|c| c.1).collect());
                    te_cands.push(cands.into_iter().map(|c| c.0).collect());
                    te_transfer.push(tix);
                    ws.bytes.push(share);
                    continue;
                }
                latency[tix] = latency[tix].max(path_latency);
                push_flow(net, ws, share, &[]);
            }
        }
    }
    let mut te_gap = None;
    if c.lb == Lb::Te && !te_cands.is_empty() {
        let choice = te::assign(&te_cands, &ws.bytes, |r| {
            net.capacity_bps(ResourceId::new(r))
        });
        let bytes = std::mem::take(&mut ws.bytes);
        for (i, (cands, &k)) in te_cands.iter().zip(&choice.picks).enumerate() {
            ws.uses.clear();
            ws.uses.extend_from_slice(&cands[k]);
            let tix = te_transfer[i];
            latency[tix] = latency[tix].max(te_lat[i][k]);
            push_flow(net, ws, bytes[i], &[]);
        }
        // The LP optimum is a lower bound: a negative gap is the solver's tolerance.
        te_gap = te::lp_gap(
            &te_cands,
            &bytes,
            |r| net.capacity_bps(ResourceId::new(r)),
            choice.max_util,
        )
        .map(|g| g.max(0.0));
    }
    buf.carried.clear();
    let (n, t) = if ws.counting {
        ws.fold_host_counts(net);
        // Every split's links carry its flows.
        ws.count.resize(ws.cap.len(), 0.0);
        ws.split_count.resize(ws.flows.splits(), 0.0);
        for (sp, &k) in ws.split_count.iter().enumerate() {
            for (r, s) in ws.flows.split_uses(sp as u32) {
                ws.count[r as usize] += s * k;
            }
        }
        let b = same_bytes.unwrap_or(0.0) / f64::from(qps);
        let t = equal_flows_makespan(b, &ws.cap, &ws.count);
        buf.carried
            .extend(ws.global.iter().zip(&ws.count).map(|(&r, &k)| (r, k * b)));
        (ws.counted, t)
    } else {
        let t = makespan(&ws.cap, &ws.flows, &ws.bytes, &mut ws.fluid);
        buf.carried
            .extend(ws.global.iter().copied().zip(ws.carried()));
        (ws.flows.len() as u64, t)
    };
    ws.latency = latency;
    PhaseOut {
        makespan_s: if phase.transfers.is_empty() { 0.0 } else { t },
        flows: n,
        te_gap,
        unreachable,
        failed: None,
    }
}

/// The phase-local id of global resource `r`, added on first sight.
fn local_id(
    net: &Net<'_>,
    local: &mut [u32],
    global: &mut Vec<u32>,
    cap: &mut Vec<f64>,
    r: u32,
) -> u32 {
    let slot = &mut local[r as usize];
    if *slot == 0 {
        global.push(r);
        cap.push(net.capacity_bps(ResourceId::new(r)));
        *slot = global.len() as u32;
    }
    *slot - 1
}

/// Add a flow of `bytes` using `ws.uses` (global resources) and the splits `splits` of
/// `ws.flows`.
pub(crate) fn push_flow(net: &Net<'_>, ws: &mut PhaseWs, bytes: f64, splits: &[u32]) {
    let PhaseWs {
        uses,
        local,
        global,
        cap,
        flows,
        bytes: b,
        ..
    } = ws;
    for u in uses.iter_mut() {
        u.0 = local_id(net, local, global, cap, u.0);
    }
    if ws.counting {
        ws.count.resize(cap.len(), 0.0);
        for &(r, s) in uses.iter() {
            ws.count[r as usize] += s;
        }
        ws.split_count.resize(flows.splits(), 0.0);
        for &sp in splits {
            ws.split_count[sp as usize] += 1.0;
        }
        ws.counted += 1;
        return;
    }
    flows.push_split_flow(uses.iter().copied(), splits);
    b.push(bytes);
}

/// Channels of a collective: as asked, or by default one per GPU of the scale-up domain for
/// rings and trees whose groups are made of whole domains (rail-aligned rings, NCCL's trees
/// of node chains, one head per NIC), and one otherwise
/// (a group with one GPU per server, like a data-parallel group under tensor parallelism,
/// already has every GPU on its own NIC; channels would only split the same flows).
pub fn channels(net: &Net<'_>, c: &Collective) -> u32 {
    let g = net.params.scale_up_gpus.max(1);
    match (c.channels, c.algo) {
        (0, Algo::Ring | Algo::Tree) if g > 1 && domain_aligned(net, &c.groups) => g,
        (0, _) => 1,
        (n, _) => n,
    }
}

/// Whether every group is made of whole scale-up domains, in order (positions
/// `k*g..(k+1)*g` share one).
pub fn domain_aligned(net: &Net<'_>, groups: &[Vec<DeviceId>]) -> bool {
    let g = net.params.scale_up_gpus.max(1) as usize;
    groups.iter().all(|grp| {
        grp.len() % g == 0
            && grp
                .chunks(g)
                .all(|d| d.iter().all(|&x| net.same_domain(x, d[0])))
    })
}

/// Most flows the phases simulated at once may hold (a flow, its path and its solver state
/// take about [`FLOW_BYTES`]: 64M is about 3.5 GB).
pub const MAX_FLOWS_AT_ONCE: u64 = 64 << 20;

/// Memory a simulated flow takes, bytes (measured: a 131,072-GPU ring with 64 queue pairs,
/// 67M flows, peaks at 3.5 GB).
pub const FLOW_BYTES: u64 = 52;

/// Simulate one collective (with [`Algo::Auto`], the fastest applicable algorithm: see
/// [`crate::tune`]; a [`crate::tune::Tuner`] kept across calls calibrates each collective
/// shape once).
pub fn simulate(
    net: &Net<'_>,
    routes: &Forwarding,
    c: &Collective,
) -> Result<CollectiveResult, SimError> {
    crate::tune::Tuner::default().simulate(net, routes, c)
}

/// The schedule of `c` (its algorithm, not [`Algo::Auto`]) over groups of `n` ranks.
pub(crate) fn schedule_of(
    net: &Net<'_>,
    c: &Collective,
    n: u32,
) -> Result<aifabric_workload::Schedule, SimError> {
    Ok(match c.op {
        Some(op) => schedule(
            op,
            c.algo,
            n,
            c.bytes,
            net.params.scale_up_gpus,
            channels(net, c),
        )?,
        None => aifabric_workload::Schedule::new(vec![Phase::repeated(
            vec![aifabric_workload::Transfer {
                src: 0,
                dst: 1,
                bytes: c.bytes,
                channel: 0,
            }],
            1,
        )]),
    })
}

/// Simulate `c` with `algo` (not [`Algo::Auto`]), each phase's bandwidth term from `timer`
/// when given, else the fluid's.
pub(crate) fn simulate_algo(
    net: &Net<'_>,
    routes: &Forwarding,
    c: &Collective,
    algo: Algo,
    timer: Option<&dyn PhaseTimer>,
) -> Result<CollectiveResult, SimError> {
    crate::check_lb(c.lb).map_err(SimError::Invalid)?;
    let owned;
    let c = if c.algo == algo {
        c
    } else {
        owned = Collective { algo, ..c.clone() };
        &owned
    };
    let n = c.groups.first().map_or(0, Vec::len) as u32;
    if c.groups.iter().any(|g| g.len() as u32 != n) {
        return Err(SimError::Invalid(
            "groups of one collective must have the same size".into(),
        ));
    }
    if c.algo == Algo::Nvls {
        return crate::nccl::nvls(net, c);
    }
    if c.algo == Algo::Hierarchical && !domain_aligned(net, &c.groups) {
        return Err(SimError::Invalid(format!(
            "hierarchical needs groups made of whole scale-up domains of {} GPUs, in order; \
             use ring or place the group in whole domains",
            net.params.scale_up_gpus
        )));
    }
    let sched = schedule_of(net, c, n)?;
    // Phases run in parallel in windows, one workspace per chunk of a window (its dense
    // resource map is large), and are folded in order: chains need the phases in sequence,
    // and a window bounds the per-transfer latencies held at once.
    // Memory: refuse a phase too big to hold; run fewer phases at once when they are big.
    let qps = u64::from(c.lb.qps());
    let groups = c.groups.len() as u64;
    let biggest = sched.widest() as u64 * groups * qps;
    if biggest > MAX_FLOWS_AT_ONCE {
        return Err(SimError::Invalid(format!(
            "one step of this collective is {biggest} simulated flows ({groups} group(s) x {} \
             transfers x {qps} queue pair(s)), over the limit of {MAX_FLOWS_AT_ONCE} \
             (about {:.1} GB at {FLOW_BYTES} B a flow); use fewer queue pairs (eecmp:N), \
             channels or GPUs",
            biggest / groups.max(1) / qps.max(1),
            MAX_FLOWS_AT_ONCE as f64 * FLOW_BYTES as f64 / 1e9,
        )));
    }
    if let Some(t) = timer {
        let (transfers, bytes) = sched.distinct_work();
        t.check_work(transfers.saturating_mul(groups), bytes * groups as f64)?;
    }
    let threads = rayon::current_num_threads();
    let fit = (MAX_FLOWS_AT_ONCE / biggest.max(1)).max(1) as usize;
    let chunks = (4 * threads).min(fit);
    let window = (chunks * 16).max(1);
    let mut wss = take_workspaces(chunks.min(sched.len()));
    let nch = sched.channel_count() as usize;
    let slot = |g: usize, ch: u32, rank: u32| (g * nch + ch as usize) * n as usize + rank as usize;
    let mut chain = Chain::new(c.groups.len() * nch * n as usize);
    let mut unreachable: Option<Unreached> = None;
    let mut alpha_total = 0.0;
    let mut xfer = 0.0;
    let mut flows = 0;
    // Bytes per resource over the whole collective: folded in phase order. Sparse: a
    // collective touches few of a large fabric's resources.
    let mut carried: FxHashMap<u32, f64> = FxHashMap::default();
    let mut te_gap: Option<f64> = None;
    let mut bufs: Vec<PhaseBuf> = (0..window.min(sched.len()))
        .map(|_| PhaseBuf::default())
        .collect();
    for first in (0..sched.len()).step_by(window) {
        // Phases are made (all-to-all rounds on demand) and run in the parallel part.
        let win: Vec<usize> = (first..(first + window).min(sched.len())).collect();
        let chunk = win.len().div_ceil(chunks).max(1);
        let outs: Vec<(u32, u32, PhaseOut)> = win
            .par_chunks(chunk)
            .zip(bufs[..win.len()].par_chunks_mut(chunk))
            .zip(wss.par_iter_mut())
            .flat_map_iter(|((ps, bs), ws)| {
                ps.iter()
                    .zip(bs.iter_mut())
                    .map(|(&i, buf)| {
                        let p = sched.phase(i);
                        let mut o = run_phase(net, routes, c, &p, ws, buf);
                        if let Some(timer) = timer.filter(|_| o.unreachable.is_none()) {
                            match timed_phase(net, c, &p, timer, o.makespan_s) {
                                Ok(t) => o.makespan_s = t,
                                Err(e) => o.failed = Some(e),
                            }
                        }
                        let nt = p.transfers.len();
                        let lat = &ws.latency;
                        buf.edges.clear();
                        buf.edges.extend((0..c.groups.len()).flat_map(|gi| {
                            p.transfers.iter().enumerate().map(move |(ti, t)| {
                                (
                                    slot(gi, t.channel, t.src) as u32,
                                    slot(gi, t.channel, t.dst) as u32,
                                    lat[gi * nt + ti],
                                )
                            })
                        }));
                        (p.repeat, p.steps, o)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        for ((repeat, steps, o), buf) in outs.into_iter().zip(&bufs) {
            if let Some(e) = o.failed {
                give_back_workspaces(wss);
                return Err(e);
            }
            if let Some(u) = o.unreachable {
                let e = unreachable.get_or_insert((0, u.1, u.2));
                e.0 += u.0;
            }
            if unreachable.is_some() {
                continue;
            }
            let r = f64::from(repeat);
            alpha_total += f64::from(steps) * c.alpha_s;
            xfer += r * o.makespan_s;
            flows += o.flows;
            for &(res, b) in &buf.carried {
                *carried.entry(res).or_insert(0.0) += r * b;
            }
            if let Some(g) = o.te_gap {
                te_gap = Some(te_gap.map_or(g, |x: f64| x.max(g)));
            }
            chain.apply(&buf.edges, steps);
        }
    }
    give_back_workspaces(wss);
    if let Some(u) = unreachable {
        return Err(unreachable_error(net, u));
    }
    let lat = alpha_total + chain.longest();
    let time = xfer + lat;
    // The links the collective used, noted on the way (resources `2 l` and `2 l + 1` are
    // link `l`'s directions).
    let links = net.f.links().len();
    let mut used_links = FixedBitSet::with_capacity(links);
    let mut carried: Vec<(u32, f64)> = carried.into_iter().filter(|&(_, b)| b > 0.0).collect();
    carried.sort_unstable_by_key(|x| x.0);
    for &(r, _) in &carried {
        if (r as usize) < 2 * links {
            used_links.insert(r as usize / 2);
        }
    }
    let (tiers, bottlenecks, utilization_histogram) =
        utilization(net, carried.iter().copied(), xfer);
    let (alg, bus) = match c.op {
        Some(op) if time > 0.0 => (
            alg_bw_gbytes_per_s(c.bytes, time),
            bus_bw_gbytes_per_s(op, n, c.bytes, time),
        ),
        None if time > 0.0 => (
            alg_bw_gbytes_per_s(c.bytes, time),
            alg_bw_gbytes_per_s(c.bytes, time),
        ),
        _ => (0.0, 0.0),
    };
    Ok(CollectiveResult {
        bytes: c.bytes,
        time_s: time,
        latency_s: lat,
        alg_bw_gbytes_per_s: alg,
        bus_bw_gbytes_per_s: bus,
        steps: sched.steps(),
        flows,
        tiers,
        bottlenecks,
        utilization_histogram,
        te_gap,
        algo: c.algo,
        proto: None,
        channels: sched.channel_count(),
        tuned: Vec::new(),
        used_links,
        carried,
    })
}
