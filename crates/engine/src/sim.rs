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
use crate::fluid::Fluid;
use crate::maxmin::{FlowSet, MaxMin};
use crate::net::{flow_hash, Lb, Net, NoPath, PathWs};
use crate::spray::{Sink, SprayMemo};
use crate::te;
use aifabric_model::DeviceId;
use aifabric_routing::bgp::{routes_to, NotConverged, RoutesTo, SpeakerId};
use aifabric_workload::collective::{alg_bw_gbytes_per_s, bus_bw_gbytes_per_s, Op};
use aifabric_workload::schedule::{schedule, Algo, Phase, ScheduleError};
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
    /// Per-step software latency, seconds.
    pub alpha_s: f64,
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
    /// With `auto`: every candidate's predicted time at this size, seconds (the chosen one
    /// is the lowest); empty when the algorithm was given.
    pub tuned: Vec<(Algo, f64)>,
    /// The links that carried traffic (by link index), to tell whether a scenario touches
    /// what the collective uses. Not serialized.
    #[serde(skip)]
    pub used_links: FixedBitSet,
}

/// Routes toward every destination speaker a collective needs, computed in parallel.
pub struct RouteCache {
    /// Speaker id -> index in `routes`, if wanted.
    index: Vec<Option<u32>>,
    routes: Vec<RoutesTo>,
}

impl RouteCache {
    /// Converged routes toward the rack of every GPU in `gpus`.
    pub fn new(net: &Net<'_>, gpus: impl Iterator<Item = DeviceId>) -> Result<Self, SimError> {
        let mut want: Vec<SpeakerId> = gpus.filter_map(|g| net.dest_speaker(g)).collect();
        want.sort_unstable();
        want.dedup();
        let routes: Vec<RoutesTo> = want
            .par_iter()
            .map(|&s| routes_to(&net.g, &net.states, s, &net.cfg))
            .collect::<Result<_, _>>()?;
        let mut index = vec![None; want.last().map_or(0, |&s| s.idx() + 1)];
        for (i, &s) in want.iter().enumerate() {
            index[s.idx()] = Some(i as u32);
        }
        Ok(RouteCache { index, routes })
    }

    /// Every destination's routes, in speaker order.
    pub fn all(&self) -> &[RoutesTo] {
        &self.routes
    }

    /// The routes toward destination speaker `s`, if it was one of the cache's.
    pub fn get(&self, s: SpeakerId) -> Option<&RoutesTo> {
        let i = (*self.index.get(s.idx())?)?;
        self.routes.get(i as usize)
    }
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

/// Result of one phase.
struct PhaseOut {
    makespan_s: f64,
    flows: u64,
    te_gap: Option<f64>,
    unreachable: Option<(u64, String, NoPath)>,
}

/// The per-phase outputs too big to allocate at every phase, reused across windows.
#[derive(Default)]
struct PhaseBuf {
    /// Every transfer as the chain sees it.
    edges: Vec<Edge>,
    /// (global resource, bytes carried in one repetition).
    carried: Vec<(u32, f64)>,
}

/// Fluid makespan of `flows` carrying `bytes` over resources of `cap`: event-driven, max-min
/// fair rates recomputed at every completion (for the flows a completion can change: see
/// [`crate::fluid`]).
///
/// Flows that share no resource, directly or through other flows, cannot change each other's
/// rates, so each connected component (union-find over resources) runs its own event
/// sequence on its own compacted resources; the makespan is the latest component's. This is
/// exact, and it keeps the NVLink rings of thousands of scale-up domains from forcing
/// re-solves of the scale-out flows at every one of their completions.
pub fn makespan(cap: &[f64], flows: &FlowSet, bytes: &[f64], ws: &mut FluidWs) -> f64 {
    if let Some(t) = one_solve_makespan(cap, flows, bytes, ws) {
        return t;
    }
    let nr = cap.len();
    ws.parent.clear();
    ws.parent.extend(0..nr as u32);
    fn find(p: &mut [u32], mut x: u32) -> u32 {
        while p[x as usize] != x {
            let up = p[p[x as usize] as usize];
            p[x as usize] = up;
            x = up;
        }
        x
    }
    fn union(p: &mut [u32], mut it: impl Iterator<Item = u32>) {
        if let Some(first) = it.next() {
            let a = find(p, first);
            for r in it {
                let b = find(p, r);
                if a != b {
                    p[b as usize] = a;
                }
            }
        }
    }
    for sp in 0..flows.splits() as u32 {
        union(&mut ws.parent, flows.split_uses(sp).map(|u| u.0));
    }
    for f in 0..flows.len() as u32 {
        let split_firsts = flows
            .splits_of(f)
            .iter()
            .filter_map(|&sp| flows.split_uses(sp).next())
            .map(|u| u.0);
        union(
            &mut ws.parent,
            flows.direct_uses(f).map(|u| u.0).chain(split_firsts),
        );
    }
    // Flows grouped by component (flows on no resource finish at once and are skipped).
    ws.order.clear();
    for f in 0..flows.len() as u32 {
        if bytes[f as usize] <= 0.0 {
            continue;
        }
        if let Some((first, _)) = flows.uses(f).next() {
            let root = find(&mut ws.parent, first);
            ws.order.push((root, f));
        }
    }
    ws.order.sort_unstable();
    if ws.local.len() < nr {
        ws.local.resize(nr, 0);
    }
    ws.local_split.clear();
    ws.local_split.resize(flows.splits(), u32::MAX);
    let mut worst = 0.0f64;
    let mut i = 0;
    while i < ws.order.len() {
        let root = ws.order[i].0;
        let mut j = i;
        while j < ws.order.len() && ws.order[j].0 == root {
            j += 1;
        }
        // Compact the component's resources and splits.
        ws.sub.clear();
        ws.cap.clear();
        ws.global.clear();
        ws.bytes.clear();
        ws.split_seen.clear();
        let FluidWs {
            local,
            global,
            cap: lcap,
            sub,
            local_split,
            split_seen,
            order,
            bytes: lbytes,
            uses,
            srefs,
            ..
        } = &mut *ws;
        let mut to_local = |r: u32| {
            let slot = &mut local[r as usize];
            if *slot == 0 {
                global.push(r);
                lcap.push(cap[r as usize]);
                *slot = global.len() as u32;
            }
            *slot - 1
        };
        for &(_, f) in &order[i..j] {
            srefs.clear();
            for &sp in flows.splits_of(f) {
                if local_split[sp as usize] == u32::MAX {
                    uses.clear();
                    uses.extend(flows.split_uses(sp).map(|(r, s)| (to_local(r), s)));
                    local_split[sp as usize] = sub.add_split(uses.iter().copied());
                    split_seen.push(sp);
                }
                srefs.push(local_split[sp as usize]);
            }
            uses.clear();
            uses.extend(flows.direct_uses(f).map(|(r, s)| (to_local(r), s)));
            sub.push_split_flow(uses.iter().copied(), srefs);
            lbytes.push(bytes[f as usize]);
        }
        for &r in &ws.global {
            ws.local[r as usize] = 0;
        }
        for &sp in &ws.split_seen {
            ws.local_split[sp as usize] = u32::MAX;
        }
        let t = component_makespan(ws);

        worst = worst.max(t);
        i = j;
    }
    worst
}

/// The makespan of a phase that needs no event loop, found on the whole flow set without
/// splitting it into components, or `None`. Exact in two cases:
/// - every flow has the same bytes `b` (a ring step, an all-to-all round): see
///   [`equal_flows_makespan`];
/// - every flow at its own tightest rate fits on every resource: those are the max-min
///   rates, and they stay as flows leave; the makespan is the slowest flow's.
fn one_solve_makespan(
    cap: &[f64],
    flows: &FlowSet,
    bytes: &[f64],
    ws: &mut FluidWs,
) -> Option<f64> {
    let FluidWs {
        rate,
        load,
        split_rate,
        split_sums,
        ..
    } = ws;
    let nf = flows.len();
    let Some(&b) = bytes.first() else {
        return Some(0.0);
    };
    // Flows on no resource finish at once; the general case skips them.
    if (0..nf as u32).any(|f| flows.uses(f).next().is_none()) {
        return None;
    }
    if b > 0.0 && bytes.iter().all(|&x| x == b) {
        rate.clear();
        rate.resize(nf, 1.0);
        flows.resource_sums(rate, cap.len(), split_sums, load);
        return Some(equal_flows_makespan(b, cap, load));
    }
    tightest_rates(cap, flows, split_rate, rate);
    if rate.iter().any(|r| !r.is_finite() || *r <= 0.0) {
        return None;
    }
    flows.resource_sums(rate, cap.len(), split_sums, load);
    if load.iter().zip(cap).all(|(&u, &c)| u <= c * (1.0 + 1e-12)) {
        let t = bytes
            .iter()
            .zip(rate.iter())
            .map(|(b, r)| b / r)
            .fold(0.0f64, f64::max);
        return Some(t);
    }
    None
}

/// The rate each flow of `flows` would get alone (its tightest resource), into `rate`; the
/// splits' are computed once each, into `split_rate`.
fn tightest_rates(cap: &[f64], flows: &FlowSet, split_rate: &mut Vec<f64>, rate: &mut Vec<f64>) {
    let tight = |it: &mut dyn Iterator<Item = (u32, f64)>| {
        it.map(|(r, s)| cap[r as usize] / s)
            .fold(f64::INFINITY, f64::min)
    };
    split_rate.clear();
    split_rate.extend((0..flows.splits() as u32).map(|sp| tight(&mut flows.split_uses(sp))));
    rate.clear();
    rate.extend((0..flows.len() as u32).map(|f| {
        let split = flows
            .splits_of(f)
            .iter()
            .map(|&sp| split_rate[sp as usize])
            .fold(f64::INFINITY, f64::min);
        tight(&mut flows.direct_uses(f)).min(split)
    }));
}

/// Makespan of flows of `b` bytes each, all starting together, when `count[r]` of them (their
/// shares summed) cross resource `r` of capacity `cap[r]`: `b` over the lowest `cap / count`,
/// that is the busiest resource's bytes over its capacity. No event loop is needed:
/// - no flow is slower than `lowest = min cap / count`: progressive filling raises every
///   rate together until the first resource fills, at `lowest`; as flows leave, counts only
///   fall, so at every instant the first level to fill, hence every rate, is still at least
///   `lowest`, and every flow is done by `b / lowest`;
/// - the resource where `lowest` is reached carries `count x b` bytes at `cap`, which takes
///   `b / lowest`.
///
/// A resource of capacity 0 that carries a flow gives infinity (the flow never finishes).
pub fn equal_flows_makespan(b: f64, cap: &[f64], count: &[f64]) -> f64 {
    // Four running maxima, so that the divisions overlap instead of waiting on one chain
    // (a phase of an all-to-all among 16,384 GPUs has ~35k resources, and there are 16,383
    // of them); the maximum does not depend on the order.
    let n = cap.len().min(count.len());
    let (cap, count) = (&cap[..n], &count[..n]);
    let mut m = [0.0f64; 4];
    let (c4, n4) = (cap.chunks_exact(4), count.chunks_exact(4));
    let (c_rest, n_rest) = (c4.remainder(), n4.remainder());
    for (c, k) in c4.zip(n4) {
        for j in 0..4 {
            if k[j] > 0.0 {
                m[j] = m[j].max(k[j] / c[j]);
            }
        }
    }
    for (&c, &k) in c_rest.iter().zip(n_rest) {
        if k > 0.0 {
            m[0] = m[0].max(k / c);
        }
    }
    b * m[0].max(m[1]).max(m[2].max(m[3]))
}

/// The event loop over one component (in `ws.sub`, `ws.cap`, `ws.bytes`).
fn component_makespan(ws: &mut FluidWs) -> f64 {
    let FluidWs {
        sub,
        cap,
        bytes,
        fluid,
        mm,
        rate,
        load,
        split_rate,
        active,
        ..
    } = ws;
    // Uncontended: if every flow at its own tightest rate fits on every resource, those
    // are the max-min rates, and they never change as flows leave.
    tightest_rates(cap, sub, split_rate, rate);
    sub.resource_sums(rate, cap.len(), split_rate, load);
    let fits = load
        .iter()
        .zip(cap.iter())
        .all(|(&u, &c)| u <= c * (1.0 + 1e-12));
    if !fits {
        // Often every flow still finishes at once (a permutation at line rate): one solve
        // says so.
        mm.solve(cap, sub, rate);
    }
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for (b, r) in bytes.iter().zip(rate.iter()) {
        let t = b / r;
        lo = lo.min(t);
        hi = hi.max(t);
    }
    if !fits && hi <= lo * (1.0 + crate::fluid::SAME_TIME) {
        return hi;
    }
    if fits {
        return hi;
    }
    fluid.reset(sub, bytes, cap.len());
    active.clear();
    active.extend(0..sub.len() as u32);
    fluid.start(sub, cap, 0.0, active);
    let mut t = 0.0;
    while fluid.active() > 0 {
        active.clear();
        t = fluid.finish_next(sub, cap, active);
        if !t.is_finite() {
            // Zero-rate flows (a resource of capacity 0) never finish.
            return f64::INFINITY;
        }
    }
    t
}

/// Buffers of [`makespan`], reused across phases.
#[derive(Default)]
pub struct FluidWs {
    parent: Vec<u32>,
    order: Vec<(u32, u32)>,
    local: Vec<u32>,
    global: Vec<u32>,
    uses: Vec<(u32, f64)>,
    srefs: Vec<u32>,
    local_split: Vec<u32>,
    split_seen: Vec<u32>,
    sub: FlowSet,
    cap: Vec<f64>,
    bytes: Vec<f64>,
    fluid: Fluid,
    mm: MaxMin,
    rate: Vec<f64>,
    load: Vec<f64>,
    split_rate: Vec<f64>,
    split_sums: Vec<f64>,
    active: Vec<u32>,
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
                    let l = local_id(net, local, global, cap, r) as usize;
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
        routes: &RouteCache,
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
        self.uses.extend([(a, 1.0), (b, 1.0)]);
        let srefs = std::mem::take(&mut self.srefs);
        push_flow(net, self, bytes, &srefs);
        self.srefs = srefs;
        Ok(middle_s + net.host_cables_s(src, dst))
    }
}

fn run_phase(
    net: &Net<'_>,
    routes: &RouteCache,
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
    let mut unreachable: Option<(u64, String, NoPath)> = None;
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
            if c.lb == Lb::Spray || (c.lb != Lb::Te && net.hash_free(src, dst)) {
                if let Some(key) = net.spray_key(src, dst) {
                    for _ in 0..qps {
                        match ws.push_sprayed(net, routes, src, dst, key, c.seed, share) {
                            Ok(lat) => latency[tix] = lat,
                            Err(e) => {
                                let u = unreachable.get_or_insert((0, pair_name(net, src, dst), e));
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
                        crate::net::mix(h ^ u64::from(k))
                    };
                    match net.path(r, src, dst, hk, lb, c.seed, &mut ws.path, &mut ws.uses) {
                        // A resource without capacity: the flow would never finish (for TE,
                        // the candidate is dropped).
                        Ok(_) if ws.uses.iter().any(|u| net.is_dead(u.0)) => {
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
                    let u = unreachable.get_or_insert((0, pair_name(net, src, dst), e));
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
        let choice = te::assign(&te_cands, &ws.bytes, |r| net.capacity_bps(r));
        let bytes = std::mem::take(&mut ws.bytes);
        for (i, (cands, &k)) in te_cands.iter().zip(&choice.picks).enumerate() {
            ws.uses.clear();
            ws.uses.extend_from_slice(&cands[k]);
            let tix = te_transfer[i];
            latency[tix] = latency[tix].max(te_lat[i][k]);
            push_flow(net, ws, bytes[i], &[]);
        }
        // The LP optimum is a lower bound: a negative gap is the solver's tolerance.
        te_gap = te::lp_gap(&te_cands, &bytes, |r| net.capacity_bps(r), choice.max_util)
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
        cap.push(net.capacity_bps(r));
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
/// rings whose groups are made of whole domains (rail-aligned rings), and one otherwise
/// (a group with one GPU per server, like a data-parallel group under tensor parallelism,
/// already has every GPU on its own NIC; channels would only split the same flows).
pub fn channels(net: &Net<'_>, c: &Collective) -> u32 {
    let g = net.params.scale_up_gpus.max(1);
    match (c.channels, c.algo) {
        (0, Algo::Ring) if g > 1 && domain_aligned(net, &c.groups) => g,
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

/// Why a flow has no path, in words.
pub(crate) fn no_path_reason(why: NoPath) -> &'static str {
    match why {
        NoPath::GpuDown => "a GPU or its link is down",
        NoPath::NoRoute => "a switch on the way has no route",
        NoPath::NoCapacity => "the path crosses a resource with no capacity left",
    }
}

pub(crate) fn pair_name(net: &Net<'_>, a: DeviceId, b: DeviceId) -> String {
    format!("{} -> {}", net.f.device_name(a), net.f.device_name(b))
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
    routes: &RouteCache,
    c: &Collective,
) -> Result<CollectiveResult, SimError> {
    crate::tune::Tuner::default().simulate(net, routes, c)
}

/// Simulate `c` with `algo` (not [`Algo::Auto`]).
pub(crate) fn simulate_algo(
    net: &Net<'_>,
    routes: &RouteCache,
    c: &Collective,
    algo: Algo,
) -> Result<CollectiveResult, SimError> {
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
    if c.algo == Algo::Hierarchical && !domain_aligned(net, &c.groups) {
        return Err(SimError::Invalid(format!(
            "hierarchical needs groups made of whole scale-up domains of {} GPUs, in order; \
             use ring or place the group in whole domains",
            net.params.scale_up_gpus
        )));
    }
    let sched = match c.op {
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
    };
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
    let threads = rayon::current_num_threads();
    let fit = (MAX_FLOWS_AT_ONCE / biggest.max(1)).max(1) as usize;
    let chunks = (4 * threads).min(fit);
    let window = (chunks * 16).max(1);
    let mut wss: Vec<PhaseWs> = (0..chunks.min(sched.len()))
        .map(|_| PhaseWs::default())
        .collect();
    let nch = sched.channel_count() as usize;
    let slot = |g: usize, ch: u32, rank: u32| (g * nch + ch as usize) * n as usize + rank as usize;
    let mut chain = Chain::new(c.groups.len() * nch * n as usize);
    let mut unreachable: Option<(u64, String, NoPath)> = None;
    let mut alpha_total = 0.0;
    let mut xfer = 0.0;
    let mut flows = 0;
    // Bytes per resource over the whole collective, dense: folded in phase order.
    let mut carried = vec![0.0f64; net.resources() as usize];
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
                        let o = run_phase(net, routes, c, &p, ws, buf);
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
                carried[res as usize] += r * b;
            }
            if let Some(g) = o.te_gap {
                te_gap = Some(te_gap.map_or(g, |x: f64| x.max(g)));
            }
            chain.apply(&buf.edges, steps);
        }
    }
    if let Some((count, first, why)) = unreachable {
        return Err(SimError::Unreachable {
            count,
            first,
            why: no_path_reason(why).into(),
        });
    }
    let lat = alpha_total + chain.longest();
    let time = xfer + lat;
    // The links the collective used, noted on the way (resources `2 l` and `2 l + 1` are
    // link `l`'s directions).
    let links = net.f.links().len();
    let mut used_links = FixedBitSet::with_capacity(links);
    let carried = carried
        .iter()
        .enumerate()
        .filter(|(_, &b)| b > 0.0)
        .map(|(r, &b)| (r as u32, b))
        .inspect(|&(r, _)| {
            if (r as usize) < 2 * links {
                used_links.insert(r as usize / 2);
            }
        });
    let (tiers, bottlenecks, utilization_histogram) = utilization(net, carried, xfer);
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
        tuned: Vec::new(),
        used_links,
    })
}

pub(crate) fn utilization(
    net: &Net<'_>,
    carried: impl Iterator<Item = (u32, f64)>,
    xfer_s: f64,
) -> (Vec<TierUtil>, Vec<Bottleneck>, Vec<u64>) {
    let mut hist = vec![0u64; 20];
    if xfer_s <= 0.0 {
        return (Vec::new(), Vec::new(), hist);
    }
    let mut per: Vec<(u32, f64)> = carried
        .filter(|&(_, b)| b > 0.0)
        .map(|(r, b)| {
            let cap = net.capacity_bps(r);
            (r, if cap > 0.0 { b / (cap * xfer_s) } else { 0.0 })
        })
        .collect();
    per.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for &(_, u) in &per {
        hist[((u * 20.0) as usize).min(19)] += 1;
    }
    let mut tiers: FxHashMap<String, Vec<f64>> = FxHashMap::default();
    for &(r, u) in &per {
        tiers.entry(net.resource_tier(r)).or_default().push(u);
    }
    let mut out: Vec<TierUtil> = tiers
        .into_iter()
        .map(|(tier, v)| {
            // v is sorted high to low.
            let k = ((v.len() as f64) * 0.01).floor() as usize;
            TierUtil {
                resources: v.len() as u64,
                max: v[0],
                p99: v[k.min(v.len() - 1)],
                mean: v.iter().sum::<f64>() / v.len() as f64,
                tier,
            }
        })
        .collect();
    out.sort_by(|a, b| a.tier.cmp(&b.tier));
    let bottlenecks = per
        .iter()
        .take(5)
        .map(|&(r, u)| Bottleneck {
            resource: net.resource_name(r),
            tier: net.resource_tier(r),
            utilization: u,
        })
        .collect();
    (out, bottlenecks, hist)
}
