//! Traffic matrices on a [`Net`]: flows that arrive and leave, simulated event by event.
//!
//! Each flow takes its path under the load-balancing mode (sprayed flows between the same
//! two rack switches share one split; hashed modes hash the flow's id, as htsim does). The
//! fluid advances from event to event: a flow starting (at its time, or when a trigger it
//! waits on fires), or flows draining their last byte. Between events, rates are max-min
//! fair over the flows active. A flow completes one path latency after its last byte leaves
//! (its completion time, FCT, is that minus its start); its `send_done_trigger` fires then.
//!
//! What the fluid cannot show: queues and their delay, ECN and congestion-control
//! transients (a new flow gets its fair share at once), losses, trimming and retransmission
//! under incast, PFC pauses. Those are the packet engine's.

use crate::fluid::Fluid;
use crate::maxmin::key;
use crate::sim::{push_flow, utilization, Bottleneck, PhaseWs, SimError, TierUtil};
use crate::unreached::{pair_name, unreachable_error, Unreached};
use aifabric_dataplane::{
    flow_hash, mix, FctStats, Forwarding, Lb, Net, NoPath, ResourceId, SlowFlow,
};
use aifabric_model::DeviceId;
use aifabric_workload::traffic::{Start, TrafficMatrix, TriggerKind};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// What a traffic matrix does on the fabric.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrafficResult {
    /// Flows.
    pub flows: u64,
    /// Bytes, all flows.
    pub bytes: f64,
    /// When the last flow completes, seconds.
    pub makespan_s: f64,
    /// Flow completion times.
    pub fct: FctStats,
    /// The slowest flows, slowest first.
    pub slowest: Vec<SlowFlow>,
    /// Rate recomputations (events).
    pub events: u64,
    /// Starts and finishes that shared a rate recomputation with a neighbour closer than
    /// [`FLUID_TOLERANCE`] of the elapsed time (flows starting or finishing nanoseconds
    /// apart); 0 when every event was recomputed on its own, exactly.
    pub coalesced_events: u64,
    /// Flows that never started (waiting on a trigger that never fired).
    pub never_started: u64,
    /// Flows whose path no load-balancing mode changes: inside one scale-up domain, or
    /// between GPUs of one rack switch or one DSF zone (whose cells are sprayed whatever the
    /// mode). When it is every flow, `--lb` cannot change the result.
    pub lb_free_flows: u64,
    /// Utilization per tier over the makespan.
    pub tiers: Vec<TierUtil>,
    /// The busiest resources over the makespan.
    pub bottlenecks: Vec<Bottleneck>,
    /// Resources that carried traffic by utilization (bins of 5%).
    pub utilization_histogram: Vec<u64>,
    /// Each flow's completion time in file order, seconds (NaN: never started).
    #[serde(skip)]
    pub fct_s: Vec<f64>,
}

/// The fluid's coalescing tolerance for traffic matrices ([`crate::fluid`]): events closer
/// than 0.1% of the elapsed time share one re-solve, so that flows starting picoseconds
/// apart cost a number of re-solves logarithmic in their span instead of one per start and
/// one per finish (30,000 such flows: about 50,000 re-solves of up to 30,000 flows each
/// before, a few hundred now). Completion times move by about 0.1% (the tests' random
/// instances: a few tenths of a percent at worst), far inside the fluid's own error against
/// the packet engine (queues, congestion control). Events farther apart than the window,
/// as when every flow starts at once, re-solve one by one as before.
pub const FLUID_TOLERANCE: f64 = 1e-3;

/// Most simulated flows (flows x queue pairs) one run takes: about 200 bytes each plus its
/// path, so 20M stays within a few GB.
pub const MAX_SUBFLOWS: u64 = 20_000_000;

/// Most (link, share) entries the sprayed splits of one run may hold (12 bytes each, so
/// about 3 GB). Splits are per distinct hop, shared by every rack pair whose spreading
/// reaches it alike (see `spray`), so real fabrics stay far below.
pub const MAX_SPLIT_ENTRIES: u64 = 256 << 20;

/// One resource (a link direction, a DSF interface or stage, a scale-up port) that carried
/// traffic in a run: a row of the per-link table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkUse {
    /// Name, e.g. `east.dc6.nsf.rtsw3 -> east.dc6.nsf.ftsw12 #1`.
    pub resource: String,
    /// Tier, e.g. `rtsw-ftsw`.
    pub tier: String,
    /// Bytes carried over the run.
    pub bytes: f64,
    /// Capacity, GB/s (10^9 bytes per second).
    pub capacity_gbytes_per_s: f64,
    /// Bytes carried over what the capacity could carry in the makespan, 0..=1.
    pub utilization: f64,
}

/// What [`run_detailed`] adds to a [`TrafficResult`]: every flow's start and every resource
/// that carried traffic (the per-record tables of the Python package).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrafficDetail {
    /// Each flow's start in file order, seconds (NaN: never started).
    pub start_s: Vec<f64>,
    /// Every resource that carried traffic, busiest first (ties by resource index).
    pub links: Vec<LinkUse>,
}

/// Simulate `tm` with node `i` on `gpus[i]`.
pub fn run(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    gpus: &[DeviceId],
    lb: Lb,
    seed: u64,
) -> Result<TrafficResult, SimError> {
    run_inner(net, tm, gpus, lb, seed, false, FLUID_TOLERANCE).map(|(r, _)| r)
}

/// [`run`] without coalescing: every start and finish re-solves on its own (the exact
/// fluid, slow when flows start picoseconds apart; for checks against the definition).
pub fn run_exact(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    gpus: &[DeviceId],
    lb: Lb,
    seed: u64,
) -> Result<TrafficResult, SimError> {
    run_inner(net, tm, gpus, lb, seed, false, 0.0).map(|(r, _)| r)
}

/// [`run`], also returning each flow's start and every resource's load ([`TrafficDetail`]);
/// naming every resource costs time, so [`run`] leaves it out.
pub fn run_detailed(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    gpus: &[DeviceId],
    lb: Lb,
    seed: u64,
) -> Result<(TrafficResult, TrafficDetail), SimError> {
    run_inner(net, tm, gpus, lb, seed, true, FLUID_TOLERANCE)
}

fn run_inner(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    gpus: &[DeviceId],
    lb: Lb,
    seed: u64,
    detail: bool,
    tolerance: f64,
) -> Result<(TrafficResult, TrafficDetail), SimError> {
    crate::check_lb(lb).map_err(SimError::Invalid)?;
    if lb == Lb::Te {
        return Err(SimError::Invalid(
            "te assigns the flows of a collective; use ecmp, eecmp:N, ucmp or spray for a traffic matrix".into(),
        ));
    }
    if (gpus.len() as u64) < u64::from(tm.nodes) {
        return Err(SimError::Invalid(format!(
            "the matrix has {} nodes but {} GPUs were placed",
            tm.nodes,
            gpus.len()
        )));
    }
    let qps = lb.qps();
    let subflows = tm.flows.len() as u64 * u64::from(qps);
    if subflows > MAX_SUBFLOWS {
        return Err(SimError::Invalid(format!(
            "{} flows x {qps} queue pairs = {subflows} simulated flows, over the limit of {MAX_SUBFLOWS}; \
             use fewer flows or queue pairs",
            tm.flows.len()
        )));
    }
    let routes = Forwarding::new(net, tm.flows.iter().map(|f| gpus[f.dst as usize]))?;
    // Paths: subflow k of flow i is `i * qps + k`.
    let mut ws = PhaseWs::default();
    ws.reset(net);
    let mut latency = vec![0.0f64; tm.flows.len()];
    let mut unreachable: Option<Unreached> = None;
    for (i, fl) in tm.flows.iter().enumerate() {
        let (src, dst) = (gpus[fl.src as usize], gpus[fl.dst as usize]);
        let r = net.dest_speaker(dst).and_then(|s| routes.get(s));
        let share = fl.bytes as f64 / f64::from(qps);
        let fail = |e: NoPath, u: &mut Option<Unreached>| {
            u.get_or_insert((0, (src, dst), e)).0 += 1;
        };
        if lb.is_spray() {
            if let Some(key) = net.spray_key(src, dst) {
                match ws.push_sprayed(net, &routes, src, dst, key, seed, share) {
                    Ok(lat) => latency[i] = lat,
                    Err(e) => fail(e, &mut unreachable),
                }
                let held = ws.flows.split_entries() as u64;
                if held > MAX_SPLIT_ENTRIES {
                    return Err(SimError::Invalid(format!(
                        "sprayed flows between {} distinct rack pairs already spread over {held} \
                         (link, share) entries after {} of {} flows, over the limit of \
                         {MAX_SPLIT_ENTRIES} (about {:.1} GB): the pairs' hops differ too much to \
                         share; use fewer flows or racks, or ecmp / eecmp:N",
                        ws.spray.pairs(),
                        i + 1,
                        tm.flows.len(),
                        MAX_SPLIT_ENTRIES as f64 * 12.0 / 1e9
                    )));
                }
                continue;
            }
        }
        for q in 0..qps {
            ws.uses.clear();
            let h = mix(flow_hash(src, dst, q) ^ fl.id);
            match net.path(r, src, dst, h, lb, seed, &mut ws.path, &mut ws.uses) {
                Ok(_) if ws.uses.iter().any(|u| net.is_dead(ResourceId::new(u.0))) => {
                    fail(NoPath::NoCapacity, &mut unreachable);
                }
                Ok(lat) => {
                    latency[i] = latency[i].max(lat);
                    push_flow(net, &mut ws, share, &[]);
                }
                Err(e) => fail(e, &mut unreachable),
            }
        }
    }
    // Any flow without a path fails the run before simulating (so subflow k of flow i is
    // always `i * qps + k` below).
    if let Some(u) = unreachable {
        return Err(unreachable_error(net, u));
    }
    let fct = fluid(&ws, tm, qps as usize, &latency, tolerance);
    let carried: Vec<(u32, f64)> = ws.global.iter().copied().zip(ws.carried()).collect();
    let makespan = fct
        .end_s
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    let (tiers, bottlenecks, utilization_histogram) =
        utilization(net, carried.iter().copied(), makespan);
    let links = if detail {
        link_uses(net, &carried, makespan)
    } else {
        Vec::new()
    };
    let mut done: Vec<(f64, usize)> = fct
        .fct_s
        .iter()
        .enumerate()
        .filter(|(_, x)| x.is_finite())
        .map(|(i, &x)| (x, i))
        .collect();
    done.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut sorted: Vec<f64> = done.iter().map(|x| x.0).collect();
    sorted.reverse();
    let stats = FctStats::of_sorted(&sorted);
    let slowest = done
        .iter()
        .take(5)
        .map(|&(x, i)| {
            let fl = &tm.flows[i];
            SlowFlow {
                id: fl.id,
                pair: pair_name(net, gpus[fl.src as usize], gpus[fl.dst as usize]),
                bytes: fl.bytes,
                start_s: fct.start_s[i],
                fct_s: x,
            }
        })
        .collect();
    let result = TrafficResult {
        flows: tm.flows.len() as u64,
        bytes: tm.flows.iter().map(|f| f.bytes as f64).sum(),
        makespan_s: makespan,
        fct: stats,
        slowest,
        events: fct.events,
        coalesced_events: fct.coalesced,
        never_started: fct.fct_s.iter().filter(|x| x.is_nan()).count() as u64,
        lb_free_flows: tm
            .flows
            .iter()
            .filter(|fl| net.lb_free(gpus[fl.src as usize], gpus[fl.dst as usize]))
            .count() as u64,
        tiers,
        bottlenecks,
        utilization_histogram,
        fct_s: fct.fct_s,
    };
    let detail = TrafficDetail {
        start_s: if detail { fct.start_s } else { Vec::new() },
        links,
    };
    Ok((result, detail))
}

/// Every resource of `carried` with bytes on it, busiest first, as [`LinkUse`] rows.
fn link_uses(net: &Net<'_>, carried: &[(u32, f64)], makespan_s: f64) -> Vec<LinkUse> {
    let mut out: Vec<(u32, f64, f64)> = carried
        .iter()
        .filter(|&&(_, b)| b > 0.0)
        .map(|&(r, b)| {
            let cap = net.capacity_bps(ResourceId::new(r));
            let u = if cap > 0.0 && makespan_s > 0.0 {
                b / (cap * makespan_s)
            } else {
                0.0
            };
            (r, b, u)
        })
        .collect();
    out.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    out.into_iter()
        .map(|(r, bytes, utilization)| LinkUse {
            resource: net.resource_name(ResourceId::new(r)),
            tier: net.resource_tier(ResourceId::new(r)),
            bytes,
            capacity_gbytes_per_s: net.capacity_bps(ResourceId::new(r)) / 1e9,
            utilization,
        })
        .collect()
}

struct Fct {
    start_s: Vec<f64>,
    end_s: Vec<f64>,
    fct_s: Vec<f64>,
    events: u64,
    coalesced: u64,
}

/// Picoseconds as seconds.
fn ps_to_s(ps: u64) -> f64 {
    ps as f64 * 1e-12
}

/// The event loop: starts (timed or triggered), max-min rates between events, completions.
fn fluid(ws: &PhaseWs, tm: &TrafficMatrix, qps: usize, latency: &[f64], tolerance: f64) -> Fct {
    let nf = tm.flows.len();
    let all = &ws.flows;
    let mut start_s = vec![f64::NAN; nf];
    let mut end_s = vec![f64::NAN; nf];
    let mut subs_left = vec![qps as u32; nf];
    // Arrivals: (time, flow) in time then file order.
    let mut arrivals: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut waiting: FxHashMap<u32, VecDeque<usize>> = FxHashMap::default();
    for (i, f) in tm.flows.iter().enumerate() {
        match f.start {
            Start::AtPs(ps) => arrivals.push(Reverse((key(ps_to_s(ps)), i))),
            Start::Trigger(k) => waiting.entry(k).or_default().push_back(i),
        }
    }
    let mut activations: FxHashMap<u32, u32> = FxHashMap::default();
    // Completions waiting for their path latency: (time, flow).
    let mut completions: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut fl = Fluid::default();
    fl.reset(all, &ws.bytes, ws.cap.len());
    fl.set_tolerance(tolerance);
    let mut done: Vec<u32> = Vec::new();
    let mut starting: Vec<u32> = Vec::new();
    // The next timed event: a start or a completion (its path latency after its last byte).
    let due_next = |a: &BinaryHeap<Reverse<(u64, usize)>>,
                    c: &BinaryHeap<Reverse<(u64, usize)>>| {
        a.peek()
            .into_iter()
            .chain(c.peek())
            .map(|r| f64::from_bits(r.0 .0))
            .fold(f64::INFINITY, f64::min)
    };
    loop {
        let next_due = due_next(&arrivals, &completions);
        let drain = fl.next_finish();
        if !drain.is_finite() && !next_due.is_finite() {
            // Nothing left, or active flows that can never finish (zero capacity).
            break;
        }
        if drain <= next_due {
            // Subflows drain their last byte; a flow is done with its last subflow.
            done.clear();
            let t = fl.finish_next(all, &ws.cap, &mut done);
            for &s in &done {
                let f = s as usize / qps;
                subs_left[f] -= 1;
                if subs_left[f] == 0 {
                    completions.push(Reverse((key(t + latency[f]), f)));
                }
            }
            fl.settle(all, &ws.cap, t, due_next(&arrivals, &completions));
            continue;
        }
        let t = next_due;
        // Completions due: record, fire triggers.
        while let Some(&Reverse((tk, f))) = completions.peek() {
            if f64::from_bits(tk) > t {
                break;
            }
            completions.pop();
            let te = f64::from_bits(tk);
            end_s[f] = te;
            // The fluid's end is its last byte in: both kinds of trigger fire then.
            let fired = [tm.flows[f].done_trigger, tm.flows[f].recv_trigger];
            for k in fired.into_iter().flatten() {
                let kind = tm.triggers.get(&k).copied().unwrap_or(TriggerKind::Oneshot);
                let n = activations.entry(k).or_default();
                *n += 1;
                let starts: Vec<usize> = match kind {
                    TriggerKind::Oneshot if *n == 1 => {
                        waiting.remove(&k).map(Vec::from).unwrap_or_default()
                    }
                    TriggerKind::Barrier(c) if *n == c => {
                        waiting.remove(&k).map(Vec::from).unwrap_or_default()
                    }
                    TriggerKind::Multishot => waiting
                        .get_mut(&k)
                        .and_then(VecDeque::pop_front)
                        .into_iter()
                        .collect(),
                    _ => Vec::new(),
                };
                for s in starts {
                    arrivals.push(Reverse((key(te), s)));
                }
            }
        }
        // Arrivals due join together.
        starting.clear();
        while let Some(&Reverse((tk, f))) = arrivals.peek() {
            if f64::from_bits(tk) > t {
                break;
            }
            arrivals.pop();
            start_s[f] = t;
            starting.extend((0..qps).map(|q| (f * qps + q) as u32));
        }
        fl.start(all, &ws.cap, t, &starting);
        fl.settle(all, &ws.cap, t, due_next(&arrivals, &completions));
    }
    let (events, coalesced) = (fl.solves().0, fl.coalesced());
    let fct_s = start_s
        .iter()
        .zip(&end_s)
        .map(|(s, e)| if e.is_finite() { e - s } else { f64::NAN })
        .collect();
    Fct {
        start_s,
        end_s,
        fct_s,
        events,
        coalesced,
    }
}
