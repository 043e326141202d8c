//! The partitioned engine: the fabric cut into `Config::partitions` parts, each an engine of
//! its own ([`Sim`]) over the devices it owns, run side by side in windows of simulated time
//! with conservative synchronization (Chandy and Misra's lookahead; Unison, Bai et al.,
//! EuroSys 2024, runs ns-3 this way).
//!
//! - **Ownership.** Each device (host or switch) belongs to one part; a part owns the ports
//!   that leave its devices, the flows its hosts send (the sender's side of each) and the
//!   receiving side of the flows its hosts receive.
//! - **Lookahead.** Whatever one part does to another crosses a link whose far end the other
//!   owns: a packet arriving, or a PFC frame reaching the upstream port. Both take at least
//!   the link's delay, so no event of one part can touch another sooner than the smallest
//!   delay of a link between parts, the lookahead `L`.
//! - **Windows.** From the earliest event anywhere, `t0`, every part runs its own events
//!   before `t0 + L` on its own, in any order and on any thread: what it sends another part
//!   arrives at `t0 + L` or later. Between windows, the messages go to their parts in a fixed
//!   order (by sending part, then as sent), so each part sees the same inputs however many
//!   threads ran the window: **the same bytes at any thread count**.
//! - **What differs from one part.** Each part draws its own random numbers (ECN marks, trim
//!   victims), and a packet from another part joins the calendar between windows, after the
//!   events the part had scheduled by then for the same picosecond. The run ends with the
//!   window in which its last flow completes (up to one lookahead later than one engine's
//!   would: its events and the queues' time averages cover that span). A run with 2 parts is
//!   as valid a sample as one with 1, not the same one; `partitions` is a model setting,
//!   shown in the result.
//! - **Triggers** act at once (no lookahead), so each must fire and act within one part:
//!   a host's flow that waits on what that host received (a ring's next step, htsim's
//!   `recv_done_trigger` chains) or sent is local wherever the cut falls; a trigger whose
//!   activating flows and waiting flows' senders lie in two parts is refused with its id.
//! - **What it does not cut** (refused with the reason): receiver-driven admission
//!   (the receiver's grants read the sender's flows), the hybrid's fast-forward (it reads
//!   every flow at once). A DSF zone is never cut: its interface nodes are one unit of the
//!   cut (the cell fabric's credits are one scheduler per egress port, across the zone).

use crate::cc::FlowCc;
use crate::event::Event;
use crate::events::Events;
use crate::ids::FlowId;
use crate::packet::{Packet, SackCopy};
use crate::pfc::PortPfc;
use crate::port::PortState;
use crate::sim::{Progress, Sim};
use crate::topo::Topo;
use crate::PacketError;
use crate::{setup, Config, PacketResult, PartitionStats};
use aifabric_dataplane::{mix, Net};
use aifabric_model::DeviceId;
use aifabric_workload::traffic::{Start, TrafficMatrix};
use rayon::prelude::*;

/// Most parts a run may be cut into.
pub const MAX_PARTITIONS: u32 = 64;

/// [`crate::run_with_progress`] with `cfg.partitions` parts (more than 1), on the topology
/// `prepare` built.
pub(crate) fn run(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    topo: &Topo,
    cfg: &Config,
    law: Option<FlowCc>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<PacketResult, PacketError> {
    let n = cfg.partitions;
    let refuse = |why: &str| {
        Err(PacketError::Invalid(format!(
            "--partitions {n}: {why}; run it with --partitions 1"
        )))
    };
    if n > MAX_PARTITIONS {
        return refuse(&format!("at most {MAX_PARTITIONS} parts"));
    }
    if cfg.admission.is_some() {
        return refuse("receiver-driven admission (--admission) reads the senders' flows");
    }
    if cfg.fast_forward.is_some() {
        return refuse("the hybrid's fast-forward reads every flow at once");
    }
    let map = cut(topo, n)?;
    if let Some((t, a, b)) = trigger_across_parts(tm, topo, &map) {
        return refuse(&format!(
            "trigger {t} would act across parts {a} and {b}: it fires where a flow \
             naming it ends (a send-done trigger at the sender, a receive-done one at the \
             receiver) and starts its waiting flows at their senders, at once, with no \
             lookahead; each trigger must do both within one part, as when a host's flow \
             waits on what that host received"
        ));
    }
    let built: Vec<Result<Sim<'_>, PacketError>> = (0..map.count)
        .into_par_iter()
        .map(|_| setup::build(net, tm, topo, cfg, law))
        .collect();
    let mut parts = Vec::with_capacity(map.count);
    for (me, s) in built.into_iter().enumerate() {
        let mut s = s?;
        // Only the flows this part sends start here, in the matrix's order.
        s.events = Events::new();
        let mut sends = 0;
        for (k, fl) in tm.flows.iter().enumerate() {
            let src = topo.host_device[fl.src as usize];
            if map.of(src) == me {
                sends += 1;
                if let Start::AtPs(t) = fl.start {
                    s.events.push(t, Event::Start(FlowId::from_idx(k)));
                }
            }
        }
        // The cut may make fewer parts than asked: each prefetches by its own flows.
        s.prefetch = crate::prefetch::worth_prefetching(sends, topo);
        if me > 0 {
            s.rng = mix(s.rng ^ mix(me as u64));
        }
        s.part = Some(PartLink {
            map: &map,
            me: me as u16,
            outboxes: (0..map.count).map(|_| Vec::new()).collect(),
            earliest_ps: u64::MAX,
        });
        parts.push(s);
    }
    let (parts, windows, messages) = drive(parts, map.lookahead_ps.unwrap_or(u64::MAX), progress);
    let events_per_part = parts.iter().map(|s| s.events_done).collect();
    let mut r = merge(parts).result(net, tm);
    r.partitions = Some(PartitionStats {
        parts: map.count as u32,
        lookahead_s: map.lookahead_ps.map(|ps| ps as f64 * 1e-12),
        windows,
        messages,
        events_per_part,
    });
    Ok(r)
}

/// The first trigger (in the matrix's order) that would act across parts, with the part of
/// the first flow naming it and the other part: `(trigger, part, other part)`. A trigger fires
/// where its activating flow ends (a send-done trigger at the sender, which holds the last
/// ACK; a receive-done trigger at the receiver, or at the sender for an empty flow, which
/// delivers nothing) and starts its waiting flows at their senders; within one part it runs
/// as in one engine.
fn trigger_across_parts(
    tm: &TrafficMatrix,
    topo: &Topo,
    map: &Partitioning,
) -> Option<(u32, usize, usize)> {
    let mut at: rustc_hash::FxHashMap<u32, usize> = Default::default();
    let part = |host: u32| map.of(topo.host_device[host as usize]);
    for fl in &tm.flows {
        let (src, dst) = (part(fl.src), part(fl.dst));
        let waits = match fl.start {
            Start::Trigger(t) => Some((t, src)),
            Start::AtPs(_) => None,
        };
        let done = fl.done_trigger.map(|t| (t, src));
        let recv = fl
            .recv_trigger
            .map(|t| (t, if fl.bytes == 0 { src } else { dst }));
        for (t, p) in [waits, done, recv].into_iter().flatten() {
            let first = *at.entry(t).or_insert(p);
            if first != p {
                return Some((t, first, p));
            }
        }
    }
    None
}

/// Which part owns each device, and the lookahead between parts.
pub(crate) struct Partitioning {
    /// Per device index: its part (devices no port touches: part 0).
    pub of_device: Vec<u16>,
    /// Parts: as many as asked, or as many as the traffic's rack switches when fewer.
    pub count: usize,
    /// The smallest delay of a link between two parts, picoseconds (`None`: no link joins
    /// two parts, which then run in one window).
    pub lookahead_ps: Option<u64>,
}

impl Partitioning {
    /// The part of device `d`.
    #[inline]
    pub fn of(&self, d: DeviceId) -> usize {
        usize::from(self.of_device[d.idx()])
    }
}

/// Cut `topo`'s devices into `count` parts: rack switches (with their hosts) in contiguous
/// runs by their first host, then tier by tier upward each switch with the part most of its
/// already placed neighbours are in (ties spread round robin, so a fat tree's core switches
/// split evenly).
pub(crate) fn cut(topo: &Topo, asked: u32) -> Result<Partitioning, PacketError> {
    let count = asked;
    let nd = topo.host_of_device.len();
    const UNSET: u16 = u16::MAX;
    let mut part = vec![UNSET; nd];
    // Neighbours over ports, both directions.
    let mut adj: Vec<Vec<DeviceId>> = vec![Vec::new(); nd];
    for p in &topo.ports {
        adj[p.from.idx()].push(p.to);
        adj[p.to.idx()].push(p.from);
    }
    for a in &mut adj {
        a.sort_unstable();
        a.dedup();
    }
    let mut racks: Vec<DeviceId> = Vec::new();
    for &up in &topo.host_up {
        let tor = topo.ports[up.idx()].to;
        if part[tor.idx()] == UNSET {
            part[tor.idx()] = 0;
            racks.push(tor);
        }
    }
    // The units cut: each rack switch, but a DSF zone's interface nodes together (its cell
    // fabric's credits are one scheduler per egress port, across the zone).
    let zone_of = |d: DeviceId| {
        let x = topo.dsf.as_ref()?;
        x.node[d.idx()].map(|n| x.node_zone[n.idx()])
    };
    let mut unit_of_zone: rustc_hash::FxHashMap<u32, usize> = Default::default();
    let mut units = 0usize;
    let unit: Vec<usize> = racks
        .iter()
        .map(|&tor| {
            let mut fresh = || {
                units += 1;
                units - 1
            };
            match zone_of(tor) {
                Some(z) => *unit_of_zone.entry(z).or_insert_with(fresh),
                None => fresh(),
            }
        })
        .collect();
    // No more parts than units: a part without one would hold nothing.
    let count = (count as usize).min(units).max(1);
    for (&tor, &u) in racks.iter().zip(&unit) {
        part[tor.idx()] = (u * count / units.max(1)) as u16;
    }
    for (h, &up) in topo.host_up.iter().enumerate() {
        part[topo.host_device[h].idx()] = part[topo.ports[up.idx()].to.idx()];
    }
    // Upward, a layer at a time: the unplaced neighbours of what was placed last.
    let mut layer = racks;
    loop {
        let mut next: Vec<DeviceId> = layer
            .iter()
            .flat_map(|&d| adj[d.idx()].iter().copied())
            .filter(|d| part[d.idx()] == UNSET)
            .collect();
        next.sort_unstable();
        next.dedup();
        if next.is_empty() {
            break;
        }
        let placed: Vec<u16> = next
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                let mut votes = vec![0u32; count];
                for &m in &adj[d.idx()] {
                    if part[m.idx()] != UNSET {
                        votes[usize::from(part[m.idx()])] += 1;
                    }
                }
                let best = votes.iter().copied().max().unwrap_or(0);
                let tied: Vec<usize> = (0..votes.len()).filter(|&x| votes[x] == best).collect();
                tied[k % tied.len()] as u16
            })
            .collect();
        for (&d, &q) in next.iter().zip(&placed) {
            part[d.idx()] = q;
        }
        layer = next;
    }
    for q in &mut part {
        if *q == UNSET {
            *q = 0;
        }
    }
    // Every node of a DSF zone in one part: cells, requests and grants never leave it.
    if let Some(x) = &topo.dsf {
        let mut zone_part: rustc_hash::FxHashMap<u32, u16> = Default::default();
        for (d, n) in x.node.iter().enumerate() {
            let Some(n) = n else { continue };
            let q = part[d];
            if *zone_part.entry(x.node_zone[n.idx()]).or_insert(q) != q {
                return Err(PacketError::Invalid(format!(
                    "--partitions {asked}: a DSF zone's nodes fell in two parts, and its cell \
                     fabric cannot be cut; use one partition"
                )));
            }
        }
    }
    let lookahead_ps = topo
        .ports
        .iter()
        .filter(|p| part[p.from.idx()] != part[p.to.idx()])
        .map(|p| p.delay_ps)
        .min();
    if lookahead_ps == Some(0) {
        return Err(PacketError::Invalid(format!(
            "--partitions {asked}: a link between two parts has no delay, so the parts \
             cannot run apart; give links a latency (--link-latency-us) or use one partition"
        )));
    }
    Ok(Partitioning {
        of_device: part,
        count,
        lookahead_ps,
    })
}

/// What one part sends another: a packet reaching the far end of a link, or an event on a
/// port the other part owns (a PFC frame).
pub(crate) enum Remote {
    /// The packet, and an ACK's SACK list.
    Packet(Packet, Option<SackCopy>),
    Event(Event),
}

/// Messages from one part to another, each with the time it takes effect, as sent.
pub(crate) type Mail = Vec<(u64, Remote)>;

/// A part's link to the others: who it is, who owns what, and what it sends this window.
pub(crate) struct PartLink<'a> {
    pub map: &'a Partitioning,
    pub me: u16,
    /// What it sent this window, by the part it goes to (handed over whole between
    /// windows: no message is copied on the way).
    pub outboxes: Vec<Mail>,
    /// The earliest time among them (`u64::MAX`: none).
    pub earliest_ps: u64,
}

impl PartLink<'_> {
    /// Send `what` to part `to`, taking effect at `time_ps`.
    #[inline]
    pub fn send(&mut self, to: u16, time_ps: u64, what: Remote) {
        self.earliest_ps = self.earliest_ps.min(time_ps);
        self.outboxes[usize::from(to)].push((time_ps, what));
    }
}

impl Sim<'_> {
    /// Take in a message from another part.
    fn deliver(&mut self, time_ps: u64, what: Remote) {
        match what {
            Remote::Packet(mut pk, sack) => {
                pk.next = None;
                pk.sack = sack.map(|list| self.packets.copy_sack(&list));
                let i = self.packets.alloc(pk);
                self.events.push(time_ps, Event::Arrive(i));
            }
            Remote::Event(e) => self.events.push(time_ps, e),
        }
    }

    /// Run this part's events before `end`.
    /// With `own` (no link joins two parts: each part's flows start and end in it), stop
    /// as one engine does, once that many flows it sends are done.
    fn run_before(&mut self, end: u64, own: Option<usize>) {
        while own.is_none_or(|n| self.done_flows < n) {
            let Some(e) = self.events.pop_before(end) else {
                break;
            };
            self.now = e.time_ps;
            self.events_done += 1;
            if self.prefetch {
                self.prefetch_soon();
            }
            self.dispatch(e.what);
        }
    }
}

/// Run the parts window by window until every flow is done, nothing is left to happen or
/// the configuration's end; `progress` as [`crate::run_with_progress`] calls it (between
/// windows, every 2^20 events or so); with the windows run and the messages sent.
pub(crate) fn drive<'a>(
    mut parts: Vec<Sim<'a>>,
    lookahead_ps: u64,
    progress: &mut dyn FnMut(&Progress),
) -> (Vec<Sim<'a>>, u64, u64) {
    let cfg = parts[0].cfg;
    let flows = parts[0].flows.len();
    let packets: u64 = parts[0].flows.iter().map(|f| u64::from(f.packets)).sum();
    // Apart (no link between parts), a part is done when the flows it sends are.
    let own: Vec<Option<usize>> = parts
        .iter()
        .map(|s| {
            let link = s.part.as_ref().expect("a part's link");
            (lookahead_ps == u64::MAX).then(|| {
                s.flows
                    .iter()
                    .filter(|f| {
                        link.map.of(s.topo.host_device[f.src.idx()]) == usize::from(link.me)
                    })
                    .count()
            })
        })
        .collect();
    // What each part receives next window, by the part that sent it.
    let n = parts.len();
    let mut inboxes: Vec<Vec<Mail>> = (0..n)
        .map(|_| (0..n).map(|_| Vec::new()).collect())
        .collect();
    let mut reported = 0u64;
    let (mut windows, mut messages) = (0u64, 0u64);
    // One parallel step per window: each part takes the messages sent to it, runs its
    // events before the window's end and tells its next event's time; the next window
    // starts at the earliest of those and of the messages in flight (which land in the next
    // step, before that part's own events, as if delivered first).
    let mut end: Option<u64> = None;
    loop {
        let next: Vec<Option<u64>> = parts
            .par_iter_mut()
            .zip(inboxes.par_iter_mut())
            .zip(&own)
            .map(|((s, inbox), &own)| {
                for mail in inbox.iter_mut() {
                    for (t, what) in mail.drain(..) {
                        s.deliver(t, what);
                    }
                }
                if let Some(end) = end {
                    s.run_before(end, own);
                }
                // Apart, a part whose own flows are done has nothing left that matters (its
                // leftover timers would hold the next window at their time forever when a
                // flow elsewhere never starts, its trigger never fired).
                if own.is_some_and(|n| s.done_flows >= n) {
                    None
                } else {
                    s.events.next_time()
                }
            })
            .collect();
        let mut in_flight = None;
        if end.is_some() {
            windows += 1;
            // In the order of the sending part, then as sent: the same at any thread count.
            // The outboxes are swapped with the inboxes emptied last window.
            for (from, s) in parts.iter_mut().enumerate() {
                let link = s.part.as_mut().expect("a part's link");
                if link.earliest_ps != u64::MAX {
                    in_flight = Some(in_flight.unwrap_or(u64::MAX).min(link.earliest_ps));
                }
                link.earliest_ps = u64::MAX;
                for (to, mail) in link.outboxes.iter_mut().enumerate() {
                    messages += mail.len() as u64;
                    std::mem::swap(mail, &mut inboxes[to][from]);
                }
            }
            let p = merged_progress(&parts, packets);
            if cfg.check_conservation {
                check(&parts, &inboxes);
            }
            if p.events >= reported + (1 << 20) {
                reported = p.events;
                progress(&p);
            }
            if p.flows_done as usize >= flows {
                break;
            }
        }
        let Some(t0) = next.into_iter().flatten().chain(in_flight).min() else {
            break;
        };
        if t0 > cfg.end_ps {
            break;
        }
        end = Some(
            t0.saturating_add(lookahead_ps)
                .min(cfg.end_ps.saturating_add(1)),
        );
    }
    progress(&merged_progress(&parts, packets));
    (parts, windows, messages)
}

fn merged_progress(parts: &[Sim<'_>], packets: u64) -> Progress {
    Progress {
        flows_done: parts.iter().map(|s| s.done_flows as u64).sum(),
        flows: parts[0].flows.len() as u64,
        now_ps: parts.iter().map(|s| s.now).max().unwrap_or(0),
        events: parts.iter().map(|s| s.events_done).sum(),
        packets_done: parts.iter().map(|s| s.packets_acked).sum(),
        packets,
    }
}

/// Conservation over all parts, messages in transit included: every byte hosts put on the
/// wire was delivered, dropped, trimmed off, or is still in some part or on its way.
fn check(parts: &[Sim<'_>], inboxes: &[Vec<Mail>]) {
    let sum = |f: fn(&Sim<'_>) -> u64| parts.iter().map(f).sum::<u64>();
    let in_transit: u64 = inboxes
        .iter()
        .flatten()
        .flatten()
        .map(|(_, m)| match m {
            Remote::Packet(pk, _) => u64::from(pk.bytes),
            Remote::Event(_) => 0,
        })
        .sum();
    let live = sum(|s| s.packets.live_bytes()) + in_transit;
    let (injected, delivered) = (sum(|s| s.ledger.injected), sum(|s| s.ledger.delivered));
    let (dropped, trimmed) = (sum(|s| s.ledger.dropped), sum(|s| s.ledger.trimmed_off));
    assert_eq!(
        injected,
        delivered + dropped + trimmed + live,
        "bytes put on the wire = delivered + dropped + trimmed off + in the parts or between them"
    );
}

/// The parts folded into one engine's state for the result: each port as its owner left it
/// (its PFC ingress count as the part downstream of it left it), each flow as its sender's
/// part left it, counters and ledgers summed, the clock at the latest part's.
pub(crate) fn merge<'a>(mut parts: Vec<Sim<'a>>) -> Sim<'a> {
    let map = parts[0].part.as_ref().expect("a part's link").map;
    let topo = parts[0].topo;
    let ports: Vec<PortState> = topo
        .ports
        .iter()
        .enumerate()
        .map(|(p, port)| {
            let up = map.of(port.from);
            std::mem::replace(&mut parts[up].ports[p], PortState::new(*port))
        })
        .collect();
    // PFC: the pauses as the sender's part saw them, the ingress as the receiver's did.
    let pfc_ports: Vec<PortPfc> = (0..parts[0].pfc_ports.len())
        .map(|p| {
            let port = &topo.ports[p];
            let (up, down) = (map.of(port.from), map.of(port.to));
            let d = parts[down].pfc_ports[p];
            PortPfc {
                ingress: d.ingress,
                pause_sent: d.pause_sent,
                headroom: d.headroom,
                ingress_peak: d.ingress_peak,
                ..parts[up].pfc_ports[p]
            }
        })
        .collect();
    for k in 0..parts[0].flows.len() {
        let owner = map.of(topo.host_device[parts[0].flows[k].src.idx()]);
        if owner > 0 {
            let (first, rest) = parts.split_at_mut(1);
            std::mem::swap(&mut first[0].flows[k], &mut rest[owner - 1].flows[k]);
        }
    }
    let mut rest: Vec<Sim<'a>> = parts.drain(1..).collect();
    let mut base = parts.pop().expect("part 0");
    base.ports = ports;
    base.pfc_ports = pfc_ports;
    for s in &mut rest {
        base.fabric.absorb(std::mem::take(&mut s.fabric));
    }
    for s in &rest {
        base.counters.add(&s.counters);
        base.ledger.add(&s.ledger);
        base.pfc.add(&s.pfc);
        base.events_done += s.events_done;
        base.done_flows += s.done_flows;
        base.now = base.now.max(s.now);
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;
    use aifabric_model::Role;
    use aifabric_workload::traffic::Pattern;

    /// htsim's k = 8 tree cut in 2 and 4: each pod whole in one part, the hosts and the
    /// core switches spread evenly, and the lookahead one link's delay (1 us, the preset's).
    #[test]
    fn a_fat_tree_is_cut_by_pods_with_its_cores_spread() {
        let f = crate::testing::fat_tree(8);
        let net = crate::testing::healthy(&f);
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
        let tm = Pattern::Permutation.generate(128, 1 << 20, 1);
        let (topo, _) = setup::prepare(&net, &tm, &gpus, &Config::uec_htsim()).unwrap();
        // No more parts than rack switches (32 here), each with one.
        let m = cut(&topo, 64).unwrap();
        assert_eq!(m.count, 32);
        let mut racks_per_part = vec![0; 32];
        for d in f.devices_with_role(Role::Rtsw) {
            racks_per_part[m.of(d)] += 1;
        }
        assert!(racks_per_part.iter().all(|&r| r == 1), "{racks_per_part:?}");
        for n in [2usize, 4] {
            let m = cut(&topo, n as u32).unwrap();
            assert_eq!(m.lookahead_ps, Some(1_000_000));
            for role in [Role::Gpu, Role::Rtsw, Role::Ctsw, Role::Atsw] {
                let mut per = vec![0usize; n];
                for d in f.devices_with_role(role) {
                    per[m.of(d)] += 1;
                }
                let all: usize = per.iter().sum();
                assert!(
                    per.iter().all(|&c| c == all / n),
                    "{role:?} over {n}: {per:?}"
                );
            }
            // A pod's edge and aggregation switches share their hosts' part: only links
            // to the core cross (4 of each aggregation switch's 8).
            let crossing = topo
                .ports
                .iter()
                .filter(|p| m.of(p.from) != m.of(p.to))
                .count();
            let core_ports = topo
                .ports
                .iter()
                .filter(|p| {
                    f.device(p.from).role == Role::Atsw || f.device(p.to).role == Role::Atsw
                })
                .count();
            assert!(crossing < core_ports, "{crossing} of {core_ports}");
            assert!(topo.ports.iter().all(|p| {
                let core = |d: DeviceId| f.device(d).role == Role::Atsw;
                core(p.from) || core(p.to) || m.of(p.from) == m.of(p.to)
            }));
        }
    }
}
