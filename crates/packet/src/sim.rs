//! The engine's state ([`Sim`], whose parts live in the files named in the crate docs), the
//! entry points and the event loop.

use crate::admission::Receiver;
use crate::cc::{CcTable, FlowCc};
use crate::cells::Fabric;
use crate::event::Event;
use crate::events::Events;
use crate::flow::{Flow, FlowKey};
use crate::forward::Forward;
use crate::host::Host;
use crate::ledger::Ledger;
use crate::packet::Packets;
use crate::partition::PartLink;
use crate::pfc::{PfcStats, PortPfc};
use crate::port::PortState;
use crate::topo::Topo;
use crate::trigger::Triggers;
use crate::{setup, Config, Counters, PacketError, PacketResult};
use aifabric_dataplane::{mix, Net};
use aifabric_model::DeviceId;
use aifabric_workload::traffic::TrafficMatrix;

/// Most packets a run may send for the first time (a 1,024-node permutation of 2 MiB flows
/// is 0.5M and takes under a second; 67M events take about 20 s on 2 cores).
pub const MAX_PACKETS: u64 = 1 << 30;

/// Events between two progress reports (about a tenth of a second on one core).
const PROGRESS_EVENTS: u64 = 1 << 20;

/// The engine: the fabric, the clock and the calendar, and every part's state.
pub(crate) struct Sim<'a> {
    pub cfg: &'a Config,
    pub topo: &'a Topo,
    pub now: u64,
    pub events: Events,
    pub packets: Packets,
    pub ports: Vec<PortState>,
    /// Each port's PFC state (empty without PFC).
    pub pfc_ports: Vec<PortPfc>,
    pub flows: Vec<Flow>,
    /// Each flow's id and ends again, dense: what a new packet is routed by (`switch.rs`).
    pub keys: Vec<FlowKey>,
    pub hosts: Vec<Host>,
    /// Admission, per receiving host.
    pub receivers: Vec<Receiver>,
    /// Per switch, the salt of its hash.
    pub salts: Vec<u64>,
    pub cc: CcTable,
    /// ECN marks and trim victims.
    pub rng: u64,
    pub counters: Counters,
    pub ledger: Ledger,
    pub triggers: Triggers,
    pub pfc: PfcStats,
    /// The DSF zones' cell fabric.
    pub fabric: Fabric,
    pub done_flows: usize,
    pub events_done: u64,
    /// Fast-forwarding of steady states (the hybrid engine), off unless configured.
    pub forward: Forward,
    /// The longest base round trip of any flow's path less one MTU serialized at its
    /// sender's NIC: what a transfer takes beyond its bytes at the NIC's rate when nothing
    /// queues, picoseconds.
    pub max_base_latency_ps: u64,
    /// The flows' paths' delays one way (each hop's link and switch latency), the mean
    /// over the flows, picoseconds.
    pub mean_path_delay_ps: u64,
    /// How long a receiver holds unacknowledged data at most: three quarters of the RTO, so
    /// the ACK is back before the timer fires.
    pub ack_delay_ps: u64,
    /// In a partitioned run, this part's link to the others (`partition.rs`); `None`: the
    /// whole fabric is this engine's.
    pub part: Option<PartLink<'a>>,
    /// Data packets acknowledged, for progress reports.
    pub packets_acked: u64,
    /// Prefetch what the next events read (`prefetch.rs`): only where the hot state is
    /// larger than a core's cache. It changes no result.
    pub prefetch: bool,
}

#[inline]
pub(crate) fn next_rand(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    mix(*state)
}

/// Simulate `tm` with node `i` on `gpus[i]`, packet by packet.
pub fn run(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    gpus: &[DeviceId],
    cfg: &Config,
) -> Result<PacketResult, PacketError> {
    run_with_progress(net, tm, gpus, cfg, &mut |_| {})
}

/// How far a run is, as [`run_with_progress`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Flows completed.
    pub flows_done: u64,
    /// Flows in the matrix.
    pub flows: u64,
    /// Simulated time, picoseconds (on the real clock: with fast-forwarding, the time
    /// skipped included).
    pub now_ps: u64,
    /// Events processed.
    pub events: u64,
    /// Data packets acknowledged (or skipped by fast-forwarding): a permutation's flows all
    /// finish near its end, its packets go steadily.
    pub packets_done: u64,
    /// Data packets in the matrix.
    pub packets: u64,
}

/// [`run`], calling `progress` every 2^20 events and once at the end. The callback only
/// reads: the result is the same with any callback.
pub fn run_with_progress(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    gpus: &[DeviceId],
    cfg: &Config,
    progress: &mut dyn FnMut(&Progress),
) -> Result<PacketResult, PacketError> {
    run_law(net, tm, gpus, cfg, None, progress)
}

/// [`run_with_progress`], every flow under `law` when given.
pub(crate) fn run_law(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    gpus: &[DeviceId],
    cfg: &Config,
    law: Option<FlowCc>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<PacketResult, PacketError> {
    let (topo, cfg) = setup::prepare(net, tm, gpus, cfg)?;
    if cfg.partitions > 1 {
        return crate::partition::run(net, tm, &topo, &cfg, law, progress);
    }
    let sim = setup::build(net, tm, &topo, &cfg, law)?;
    Ok(drive(sim, progress).result(net, tm))
}

/// The event loop: `sim` run until every flow is done, nothing is left to happen or its
/// configuration's end.
pub(crate) fn drive<'a>(mut sim: Sim<'a>, progress: &mut dyn FnMut(&Progress)) -> Sim<'a> {
    let cfg = sim.cfg;
    while sim.done_flows < sim.flows.len() {
        let Some(e) = sim.events.pop() else { break };
        if sim.forward.real(e.time_ps) > cfg.end_ps {
            break;
        }
        sim.now = e.time_ps;
        sim.events_done += 1;
        if sim.events_done & (PROGRESS_EVENTS - 1) == 0 {
            progress(&sim.progress());
        }
        if sim.prefetch {
            sim.prefetch_soon();
        }
        sim.dispatch(e.what);
        if cfg.check_conservation {
            sim.check();
        }
    }
    progress(&sim.progress());
    sim
}

impl Sim<'_> {
    /// Handle one event.
    #[inline]
    pub(crate) fn dispatch(&mut self, e: Event) {
        match e {
            Event::TxDone(p) => self.tx_done(p),
            Event::Arrive(i) => self.arrive(i),
            Event::Start(f) => self.start_flow(f),
            Event::Rto(f) => self.timeout(f),
            Event::AckTimer(f) => self.ack_timer(f),
            Event::Pause(p) => self.pause(p, true),
            Event::Resume(p) => self.pause(p, false),
            Event::Pace(h) => self.pace(h),
            Event::Cell(c) => self.on_cell(c),
            Event::Request(q, bytes) => self.on_request(q, bytes.get()),
            Event::Grant(q, bytes) => self.on_grant(q, bytes.get()),
            Event::Sched(s) => self.on_sched(s),
            Event::Monitor => self.monitor(),
        }
    }

    fn progress(&self) -> Progress {
        Progress {
            flows_done: self.done_flows as u64,
            flows: self.flows.len() as u64,
            now_ps: self.forward.real(self.now),
            events: self.events_done,
            packets_done: self.packets_acked + self.forward.skipped_packets,
            packets: self.flows.iter().map(|f| u64::from(f.packets)).sum(),
        }
    }
}
