//! The DSF zones' scheduled fabric ([`crate::dsf`] builds its topology): at the ingress
//! interface node a packet waits in the VOQ of its egress port and class, which asks the
//! egress port's credit scheduler for its bytes; the scheduler grants credits round robin
//! (control class first) at the port's rate; with credit the VOQ cuts its head packet into
//! cells sprayed over the live fabric links toward the egress node, which reassembles it.

use crate::event::{Event, MsgBytes};
use crate::ids::{CellId, PacketId, PortId, SchedId, VoqId};
use crate::packet::{Fifo, Kind};
use crate::sim::Sim;
use aifabric_model::DeviceId;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// One cell crossing a DSF fabric link: of which packet, how many bytes, the node it is at
/// or on its way to and the egress node it goes toward (both by their index in the zone,
/// [`DsfTopo::local`](crate::dsf::DsfTopo::local): cells never leave their zone), and the
/// egress node's row of the cell-forwarding table. An arrival reads only the cell.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cell {
    pub packet: PacketId,
    pub bytes: u32,
    pub at: u32,
    pub to: u32,
    pub row: u32,
}

/// A virtual output queue at an ingress interface node, for one egress port and class,
/// and the egress scheduler's view of it.
pub(crate) struct Voq {
    pub fifo: Fifo,
    pub bytes: u64,
    pub peak: u64,
    /// Ingress interface node and egress port.
    pub ingress: DeviceId,
    egress: PortId,
    pub control: bool,
    /// Scheduler: bytes requested and not yet granted; in its round robin.
    demand: u64,
    in_ring: bool,
    /// Credit received and not yet spent (negative: a packet went with part of its credit
    /// still to come).
    pub balance: i64,
}

/// An egress port's credit scheduler: round robin over the VOQs with demand (control class
/// first), one grant per credit time at the port's rate.
#[derive(Default)]
struct Sched {
    hi: VecDeque<VoqId>,
    lo: VecDeque<VoqId>,
    next_ps: u64,
    timer: bool,
}

/// DSF counters.
#[derive(Default)]
pub(crate) struct DsfStats {
    pub packets: u64,
    pub requests: u64,
    pub grants: u64,
    pub granted: u64,
    pub grants_in_flight: u64,
    pub sent: u64,
    pub cells_sent: u64,
    pub cells_reassembled: u64,
}

/// The cell fabric's state: cells (an arena with a free list), VOQs by (ingress node,
/// egress port, class), egress schedulers by port, the round-robin position of each
/// cell-forwarding entry, and counters.
#[derive(Default)]
pub(crate) struct Fabric {
    pub cells: Vec<Cell>,
    free_cells: Vec<CellId>,
    pub voqs: Vec<Voq>,
    voq_of: FxHashMap<(DeviceId, PortId, bool), VoqId>,
    sched_of: Vec<Option<SchedId>>,
    scheds: Vec<Sched>,
    /// The cell-forwarding table (`DsfTopo::table`) copied with each entry's round-robin
    /// position beside it: a cell's hop reads and writes one place.
    pub hops: Vec<CellHop>,
    pub stats: DsfStats,
}

/// One entry of the cell-forwarding table: its next hops (`members[start..start + n]`) and
/// the next one a cell takes (`rr`, always below `n`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CellHop {
    pub start: u32,
    n: u32,
    pub rr: u32,
}

impl Fabric {
    /// For `ports` ports and the cell-forwarding table `table` (`DsfTopo::table`).
    pub fn new(ports: usize, table: &[(u32, u32)]) -> Fabric {
        Fabric {
            sched_of: vec![None; ports],
            hops: table
                .iter()
                .map(|&(start, n)| CellHop { start, n, rr: 0 })
                .collect(),
            ..Fabric::default()
        }
    }

    /// Take in another part's VOQs and counters (a partitioned run's result; each DSF zone
    /// is whole in one part).
    pub fn absorb(&mut self, o: Fabric) {
        self.voqs.extend(o.voqs);
        let (s, t) = (&mut self.stats, o.stats);
        s.packets += t.packets;
        s.requests += t.requests;
        s.grants += t.grants;
        s.granted += t.granted;
        s.grants_in_flight += t.grants_in_flight;
        s.sent += t.sent;
        s.cells_sent += t.cells_sent;
        s.cells_reassembled += t.cells_reassembled;
    }

    /// Cells in the fabric.
    pub fn live_cells(&self) -> usize {
        self.cells.len() - self.free_cells.len()
    }

    /// Queue `q` in scheduler `s`'s round robin.
    fn ring(&mut self, s: SchedId, q: VoqId) {
        let sc = &mut self.scheds[s.idx()];
        if self.voqs[q.idx()].control {
            sc.hi.push_back(q);
        } else {
            sc.lo.push_back(q);
        }
    }
}

impl Sim<'_> {
    /// Packet `i`, at ingress interface node `v`, waits in the VOQ of egress port `e`.
    pub(crate) fn voq_enqueue(&mut self, v: DeviceId, e: PortId, i: PacketId) {
        let control = self.packets[i].kind != Kind::Data;
        let fab = &mut self.fabric;
        let next = VoqId::from_idx(fab.voqs.len());
        let q = *fab.voq_of.entry((v, e, control)).or_insert(next);
        if q == next {
            fab.voqs.push(Voq {
                fifo: Fifo::default(),
                bytes: 0,
                peak: 0,
                ingress: v,
                egress: e,
                control,
                demand: 0,
                in_ring: false,
                balance: 0,
            });
        }
        let b = u64::from(self.packets[i].bytes);
        let fifo = self.packets.push(self.fabric.voqs[q.idx()].fifo, i);
        let voq = &mut self.fabric.voqs[q.idx()];
        voq.fifo = fifo;
        voq.bytes += b;
        voq.peak = voq.peak.max(voq.bytes);
        self.fabric.stats.packets += 1;
        // The VOQ asks its egress scheduler for the packet's bytes.
        let t = self.topo;
        let w = t.ports[e.idx()].from;
        let delay = t.dsf.as_ref().expect("a DSF run").ctrl_delay(v, w);
        self.fabric.stats.requests += 1;
        self.events
            .push(self.now + delay, Event::Request(q, MsgBytes::new(b)));
        self.voq_send(q);
    }

    /// A request of `amount` bytes from VOQ `q` reaches its egress scheduler.
    pub(crate) fn on_request(&mut self, q: VoqId, amount: u64) {
        let fab = &mut self.fabric;
        let e = fab.voqs[q.idx()].egress;
        let s = match fab.sched_of[e.idx()] {
            None => {
                fab.scheds.push(Sched::default());
                let s = SchedId::from_idx(fab.scheds.len() - 1);
                fab.sched_of[e.idx()] = Some(s);
                s
            }
            Some(s) => s,
        };
        let voq = &mut fab.voqs[q.idx()];
        voq.demand += amount;
        if !voq.in_ring && voq.demand > 0 {
            voq.in_ring = true;
            fab.ring(s, q);
        }
        self.sched_run(s);
    }

    /// A scheduler's timer: it may grant again.
    pub(crate) fn on_sched(&mut self, s: SchedId) {
        self.fabric.scheds[s.idx()].timer = false;
        self.sched_run(s);
    }

    /// Egress scheduler `s` grants the next VOQ of its round robin a credit, if its port's
    /// rate allows one now (else it waits for the time it does).
    fn sched_run(&mut self, s: SchedId) {
        let credit = u64::from(self.cfg.dsf.credit_bytes.max(1));
        let fab = &mut self.fabric;
        let sc = &mut fab.scheds[s.idx()];
        if sc.timer {
            return;
        }
        if self.now < sc.next_ps {
            if !sc.hi.is_empty() || !sc.lo.is_empty() {
                sc.timer = true;
                self.events.push(sc.next_ps, Event::Sched(s));
            }
            return;
        }
        let Some(q) = sc.hi.pop_front().or_else(|| sc.lo.pop_front()) else {
            return;
        };
        let voq = &mut fab.voqs[q.idx()];
        let g = voq.demand.min(credit).min(MsgBytes::MAX);
        voq.demand -= g;
        let (v, e) = (voq.ingress, voq.egress);
        if voq.demand > 0 {
            fab.ring(s, q);
        } else {
            voq.in_ring = false;
        }
        let t = self.topo;
        let port = t.ports[e.idx()];
        let sc = &mut fab.scheds[s.idx()];
        sc.next_ps = self.now + port.serialize_ps(g as u32);
        if !sc.hi.is_empty() || !sc.lo.is_empty() {
            sc.timer = true;
            self.events.push(sc.next_ps, Event::Sched(s));
        }
        let delay = t.dsf.as_ref().expect("a DSF run").ctrl_delay(port.from, v);
        fab.stats.grants += 1;
        fab.stats.granted += g;
        fab.stats.grants_in_flight += g;
        self.events
            .push(self.now + delay, Event::Grant(q, MsgBytes::new(g)));
    }

    /// A grant of `g` bytes reaches VOQ `q`.
    pub(crate) fn on_grant(&mut self, q: VoqId, g: u64) {
        self.fabric.stats.grants_in_flight -= g;
        self.fabric.voqs[q.idx()].balance += g as i64;
        self.voq_send(q);
    }

    /// VOQ `q` sends its head packets into the fabric while its credit balance is positive.
    fn voq_send(&mut self, q: VoqId) {
        while self.fabric.voqs[q.idx()].balance > 0 {
            let (fifo, Some(i)) = self.packets.pop(self.fabric.voqs[q.idx()].fifo) else {
                return;
            };
            let b = self.packets[i].bytes;
            let voq = &mut self.fabric.voqs[q.idx()];
            voq.fifo = fifo;
            voq.bytes -= u64::from(b);
            voq.balance -= i64::from(b);
            let (v, e) = (voq.ingress, voq.egress);
            self.fabric.stats.sent += u64::from(b);
            if self.cfg.pfc.is_some() && self.packets[i].kind == Kind::Data {
                self.release_ingress(i);
            }
            let pk = &mut self.packets[i];
            pk.port = e;
            pk.dsf = true;
            if self.topo.ports[e.idx()].from == v {
                // Switched locally: no cells.
                self.enqueue(e, i);
            } else {
                self.send_cells(i, v, b);
            }
        }
    }

    /// Cut packet `i` (of `b` bytes, leaving interface node `v` toward its `port`'s node)
    /// into cells and spray them over the fabric.
    fn send_cells(&mut self, i: PacketId, v: DeviceId, b: u32) {
        let t = self.topo;
        let d = t.dsf.as_ref().expect("a DSF run");
        let to = t.ports[self.packets[i].port.idx()].from;
        let row = d.row_of(to);
        let (at, to) = (d.local_of(v), d.local_of(to));
        // The hybrid crosses the fabric in whole packets ([`crate::Dsf::cell_bytes`]), each
        // across a hop as soon as its cells would be (`cell_hop`).
        let cell = if self.cfg.dsf_whole_packets() {
            b.max(1)
        } else {
            self.cfg.dsf.cell_bytes.max(1)
        };
        let n = b.div_ceil(cell);
        self.packets[i].cells = n;
        self.fabric.stats.cells_sent += u64::from(n);
        for k in 0..n {
            let fab = &mut self.fabric;
            let c = Cell {
                packet: i,
                bytes: cell.min(b - k * cell),
                at,
                to,
                row,
            };
            let c = match fab.free_cells.pop() {
                Some(id) => {
                    fab.cells[id.idx()] = c;
                    id
                }
                None => {
                    fab.cells.push(c);
                    CellId::from_idx(fab.cells.len() - 1)
                }
            };
            self.cell_hop(c);
        }
    }

    /// Cell `c` leaves the node it is at on the next fabric link toward its egress node,
    /// round robin over the live links one hop closer.
    fn cell_hop(&mut self, c: CellId) {
        let d = self.topo.dsf.as_ref().expect("a DSF run");
        let fab = &mut self.fabric;
        let cell = &mut fab.cells[c.idx()];
        // The node's entry in the egress node's rows (`DsfTopo::entry`).
        let hop = &mut fab.hops[(cell.row + cell.at) as usize];
        debug_assert!(hop.rr < hop.n, "a cell toward a node it cannot reach");
        let p = d.members[(hop.start + hop.rr) as usize];
        let lanes = hop.n;
        hop.rr += 1;
        if hop.rr == hop.n {
            hop.rr = 0;
        }
        let bytes = cell.bytes;
        let st = &mut self.ports[p.idx()];
        // The port's copy of its static side, on the line with its clock.
        let port = st.wire;
        fab.cells[c.idx()].at = port.zone_far;
        let start = st.free_ps.max(self.now);
        let wait = start - self.now;
        if wait > 0 {
            // Bytes still ahead of it on the link, and its wait (byte-picoseconds).
            let ahead = (wait as f64 * port.rate_bps as f64 / 8e12) as u64;
            st.peak = st.peak.max(ahead + u64::from(bytes));
            st.area += u128::from(bytes) * u128::from(wait);
        }
        let ser = port.serialize_ps(bytes);
        let end = start + ser;
        st.free_ps = end;
        debug_assert!(bytes > 0, "a cell of no bytes");
        st.sent += u64::from(bytes);
        // The hybrid's whole packet stands for its cells, which would cross side by side on
        // as many links: it holds its link for all its bytes, and is across once the cells
        // would be (`send_cells`).
        let across = if self.cfg.dsf_whole_packets() {
            let cells = bytes.div_ceil(self.cfg.dsf.cell_bytes.max(1));
            ser / u64::from(cells.clamp(1, lanes.max(1)))
        } else {
            ser
        };
        self.events
            .push(start + across + port.delay_ps, Event::Cell(c));
    }

    /// Cell `c` reaches the far end of its link: the next hop, or reassembly.
    pub(crate) fn on_cell(&mut self, c: CellId) {
        let cell = self.fabric.cells[c.idx()];
        if cell.at != cell.to {
            self.cell_hop(c);
            return;
        }
        self.fabric.free_cells.push(c);
        self.fabric.stats.cells_reassembled += 1;
        let pk = &mut self.packets[cell.packet];
        pk.cells -= 1;
        if pk.cells == 0 {
            let e = pk.port;
            self.enqueue(e, cell.packet);
        }
    }
}
