//! A phase's makespan as an event-driven fluid: max-min fair rates recomputed at every
//! completion, per connected component of flows, with the exact shortcuts that skip the
//! events (every flow fits at its own tightest rate; all flows of one size counted per
//! resource).

use crate::fluid::Fluid;
use crate::maxmin::{FlowSet, MaxMin};

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
    pub(crate) parent: Vec<u32>,
    pub(crate) order: Vec<(u32, u32)>,
    pub(crate) local: Vec<u32>,
    pub(crate) global: Vec<u32>,
    pub(crate) uses: Vec<(u32, f64)>,
    pub(crate) srefs: Vec<u32>,
    pub(crate) local_split: Vec<u32>,
    pub(crate) split_seen: Vec<u32>,
    pub(crate) sub: FlowSet,
    pub(crate) cap: Vec<f64>,
    pub(crate) bytes: Vec<f64>,
    pub(crate) fluid: Fluid,
    pub(crate) mm: MaxMin,
    pub(crate) rate: Vec<f64>,
    pub(crate) load: Vec<f64>,
    pub(crate) split_rate: Vec<f64>,
    pub(crate) split_sums: Vec<f64>,
    pub(crate) active: Vec<u32>,
}
