//! The event loop: ports, switches and endpoints (see the crate docs).

use crate::events::Events;
use crate::topo::Topo;
use crate::{dcqcn, nscc};
use crate::{
    Cc, Config, Counters, Lb, PacketError, PacketResult, PfcResult, TierPauses, TierQueues,
};
use aifabric_dataplane::{mix, Net};
use aifabric_dataplane::{FctStats, SlowFlow};
use aifabric_model::DeviceId;
use aifabric_workload::traffic::{Start, TrafficMatrix, TriggerKind};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Event kinds (the top byte of an event's `what`).
const TX_DONE: u64 = 0;
const ARRIVE: u64 = 1;
const START: u64 = 2;
const RTO: u64 = 3;
const ACK_TIMER: u64 = 4;
/// A PAUSE frame reaches the port it stops (PFC).
const PAUSE: u64 = 5;
/// A RESUME frame reaches the port it restarts.
const RESUME: u64 = 6;
/// A host's paced flows may send again (DCQCN).
const PACE: u64 = 7;
/// A cell reaches the far end of its fabric link (DSF).
const CELL: u64 = 8;
/// A VOQ's credit request reaches its egress port's scheduler (id: VOQ | bytes << 32).
const REQUEST: u64 = 9;
/// A grant reaches its VOQ (id: VOQ | bytes << 32).
const GRANT: u64 = 10;
/// An egress scheduler may grant again.
const SCHED: u64 = 11;
/// Most bytes one request or grant message carries (what fits in an event's id; a packet
/// is at most a few kilobytes).
const MSG_MAX: u64 = (1 << 24) - 1;
const ID: u64 = (1 << 56) - 1;

/// Packet kinds.
const DATA: u8 = 0;
const HEADER: u8 = 1;
const ACK: u8 = 2;
const NACK: u8 = 3;
/// DCQCN's congestion notification, receiver to sender.
const CNP: u8 = 4;
/// Receiver-driven admission: clear to send one more chunk, receiver to sender.
const CTS: u8 = 5;

/// Per-packet state of a sender.
const UNSENT: u8 = 0;
const IN_FLIGHT: u8 = 1;
const LOST: u8 = 2;
const ACKED: u8 = 3;

/// Most entropy values whose penalties a sprayed flow tracks (beyond, values are not
/// penalized).
const MAX_PENALIZED: u32 = 1024;

/// Most entropy values a sprayed flow keeps for reuse.
const GOOD_ENTROPIES: usize = 64;

/// Most packets a run may send for the first time (a 1,024-node permutation of 2 MiB flows
/// is 0.5M and takes under a second; 67M events take about 20 s on 2 cores).
pub const MAX_PACKETS: u64 = 1 << 30;

/// Most busiest links reported.
const BUSIEST: usize = 10;

/// Most slowest flows reported.
const SLOWEST: usize = 10;

#[derive(Clone, Copy, Debug, Default)]
struct Packet {
    flow: u32,
    seq: u32,
    bytes: u32,
    kind: u8,
    ecn: bool,
    /// The receiver should acknowledge at once.
    ack_request: bool,
    entropy: u32,
    /// The port it is on (queued, or crossing).
    port: u32,
    /// Data: when the sender sent it. ACK: the send time of the newest packet it covers.
    stamp_ps: u64,
    /// ACK: index of its list of packets in the SACK pool. NACK: unused.
    sack: u32,
    /// ACK: data bytes among those it covers that were marked ECN.
    ecn_bytes: u32,
    /// The next packet in its port's queue (`NONE` at the tail).
    next: u32,
    /// Data: a retransmission. ACK: its RTT sample is not valid (the packet that triggered
    /// it was a retransmission).
    again: bool,
    live: bool,
    /// It crossed a DSF zone's fabric (its ingress accounting, if any, was released when
    /// it left the VOQ; `port` is then its egress port until it is transmitted).
    dsf: bool,
    /// Cells of it still to reach the egress interface node.
    cells: u32,
}

/// One cell crossing a DSF fabric link: of which packet, on which port, how many bytes,
/// toward which interface node (device) and its row of the cell-forwarding table.
#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    packet: u32,
    port: u32,
    bytes: u32,
    to: u32,
    row: u32,
}

/// A virtual output queue at an ingress interface node, for one egress port and class,
/// and the egress scheduler's view of it.
struct Voq {
    fifo: Fifo,
    bytes: u64,
    peak: u64,
    /// Ingress interface node (device) and egress port.
    ingress: u32,
    egress: u32,
    control: bool,
    /// Scheduler: bytes requested and not yet granted; in its round robin.
    demand: u64,
    in_ring: bool,
    /// Credit received and not yet spent (negative: a packet went with part of its credit
    /// still to come).
    balance: i64,
}

/// An egress port's credit scheduler: round robin over the VOQs with demand (control class
/// first), one grant per credit time at the port's rate.
#[derive(Default)]
struct Sched {
    hi: VecDeque<u32>,
    lo: VecDeque<u32>,
    next_ps: u64,
    timer: bool,
}

/// DSF counters.
#[derive(Default)]
struct DsfStats {
    packets: u64,
    requests: u64,
    grants: u64,
    granted: u64,
    grants_in_flight: u64,
    sent: u64,
    cells_sent: u64,
    cells_reassembled: u64,
}

/// No packet.
const NONE: u32 = u32::MAX;

/// A FIFO of packets linked through their `next` field: no buffer of its own, so a port's
/// queues cost 8 bytes each and reading one touches only the packets.
#[derive(Clone, Copy)]
struct Fifo {
    head: u32,
    tail: u32,
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo {
            head: NONE,
            tail: NONE,
        }
    }
}

#[derive(Default)]
struct PortState {
    busy: bool,
    hi: Fifo,
    lo: Fifo,
    hi_bytes: u64,
    lo_bytes: u64,
    peak: u64,
    /// Occupancy integrated over time, byte-picoseconds.
    area: u128,
    since_ps: u64,
    used: bool,
    /// Bytes sent.
    sent: u64,
    // PFC, as the upstream side of the link: paused (no data leaves), since when, for how
    // long in all, and how many PAUSE frames came.
    paused: bool,
    paused_since_ps: u64,
    paused_ps: u64,
    pauses_received: u64,
    /// DSF fabric port: when its last cell is serialized (cells are FIFO at the link's rate).
    free_ps: u64,
    // PFC, as the downstream switch's ingress accounting of what came in over this link:
    // data bytes still queued there, whether it sent a PAUSE not yet followed by a RESUME,
    // the headroom above XOFF, and the largest count.
    ingress: u64,
    pause_sent: bool,
    headroom: u64,
    ingress_peak: u64,
}

impl PortState {
    #[inline]
    fn account(&mut self, now: u64) {
        self.area += u128::from(self.hi_bytes + self.lo_bytes) * u128::from(now - self.since_ps);
        self.since_ps = now;
    }
}

struct Flow {
    id: u64,
    src: u32,
    dst: u32,
    bytes: u64,
    packets: u32,
    start_ps: u64,
    started: bool,
    done: bool,
    finish_ps: u64,
    done_trigger: Option<u32>,
    /// Fired when the receiver holds every byte.
    recv_trigger: Option<u32>,
    /// Its NSCC parameters, an index into `Sim::nscc`.
    nscc: u32,
    // Sender.
    next_new: u32,
    state: Vec<u8>,
    acked: u32,
    retx: VecDeque<u32>,
    in_flight_bytes: u64,
    cc: nscc::State,
    /// When each packet was last sent, picoseconds.
    sent_ps: Vec<u64>,
    /// The entropy value each packet was last sent with (`spray`: its ACK recycles it).
    ev: Vec<u32>,
    /// (send time, packet) in send order; entries whose packet was acknowledged, declared
    /// lost or sent again since are skipped when read.
    sends: VecDeque<(u64, u32)>,
    rto_armed: bool,
    /// Retransmission timeout: the configured one, or twice the path's base round trip
    /// where that is longer (a timer shorter than the round trip fires on every packet).
    rto_ps: u64,
    rng: u64,
    /// Entropy values that came back unmarked, to reuse first (REPS).
    good: VecDeque<u32>,
    /// Penalties of entropy values that came back marked or trimmed (sprayed flows of at
    /// most `MAX_PENALIZED` values), the round-robin position and its offset.
    penalty: Vec<u8>,
    ev_next: u32,
    ev_offset: u32,
    // Receiver.
    got: Vec<u64>,
    received: u32,
    pending: Vec<u32>,
    pending_bytes: u64,
    pending_ecn: u32,
    /// A delayed-ACK event is scheduled.
    ack_timer: bool,
    /// DCQCN: the sender's rate, when it may send next, and the receiver's CNP pacing.
    rate: Option<dcqcn::State>,
    next_send_ps: u64,
    cnp: dcqcn::CnpPacer,
    /// Admission: packets the sender may send for the first time (cleared by CTS), chunks
    /// the receiver granted and saw complete.
    cleared: u32,
    chunks_granted: u32,
    chunks_done: u32,
}

impl Flow {
    /// An entropy value when none can be reused: a round-robin walk over the N values from
    /// a random offset (redrawn at each wrap), skipping values with a penalty; the first
    /// penalized value met loses one point of it, so a penalty fades with use (htsim's
    /// default "mixed" load balancing works this way; ECN counts 1, a trim 4).
    fn fresh_entropy(&mut self, n: u32) -> u32 {
        let mut decremented = false;
        for _ in 0..=n {
            if self.ev_next >= n {
                self.ev_next = 0;
                self.ev_offset = (next_rand(&mut self.rng) % u64::from(n)) as u32;
            }
            let e = (self.ev_next + self.ev_offset) % n;
            self.ev_next += 1;
            match self.penalty.get_mut(e as usize) {
                Some(p) if *p > 0 => {
                    if !decremented {
                        *p -= 1;
                        decremented = true;
                    }
                }
                _ => return e,
            }
        }
        (next_rand(&mut self.rng) % u64::from(n)) as u32
    }

    fn penalize(&mut self, e: u32, points: u8) {
        if let Some(p) = self.penalty.get_mut(e as usize) {
            *p = (*p + points).min(15);
        }
    }

    fn wire_bytes(&self, seq: u32, mtu: u32, header: u32) -> u32 {
        let payload = mtu - header;
        let last = (self.bytes - u64::from(self.packets - 1) * u64::from(payload)) as u32;
        if seq + 1 == self.packets {
            last + header
        } else {
            mtu
        }
    }
}

struct Sim<'a> {
    cfg: &'a Config,
    topo: &'a Topo,
    now: u64,
    events: Events,
    packets: Vec<Packet>,
    free: Vec<u32>,
    sacks: Vec<Vec<u32>>,
    free_sacks: Vec<u32>,
    ports: Vec<PortState>,
    flows: Vec<Flow>,
    /// Per host: its active flows (round robin) and where the robin is.
    active: Vec<Vec<u32>>,
    robin: Vec<usize>,
    salts: Vec<u64>,
    /// NSCC parameters: one set, or one per path base RTT (`Config::nscc_path_rtt`).
    nscc: Vec<nscc::Params>,
    rng: u64,
    counters: Counters,
    // Conservation ledger, bytes.
    injected: u64,
    delivered: u64,
    dropped: u64,
    trimmed_off: u64,
    // Triggers.
    waiting: FxHashMap<u32, VecDeque<u32>>,
    kinds: FxHashMap<u32, TriggerKind>,
    activations: FxHashMap<u32, u32>,
    fired: FxHashMap<u32, bool>,
    done_flows: usize,
    events_done: u64,
    /// How long a receiver holds unacknowledged data at most: three quarters of the RTO, so
    /// the ACK is back before the timer fires.
    ack_delay_ps: u64,
    /// Per host: when a PACE event is due (DCQCN).
    pace_at: Vec<u64>,
    /// Admission, per receiving host: flows waiting for a grant (round robin) and chunks
    /// granted not yet received.
    admit_queue: Vec<VecDeque<u32>>,
    outstanding: Vec<u32>,
    /// PFC frames sent and data dropped for want of headroom.
    pfc_pauses: u64,
    pfc_resumes: u64,
    pfc_drops: u64,
    /// Ingress links given less headroom than they need, and the smallest share given.
    headroom_short: u64,
    headroom_share_min: f64,
    headroom_min_device: u32,
    // DSF: cells (arena with a free list), VOQs by (ingress node, egress port, class),
    // egress schedulers by port, the round-robin position of each cell-forwarding entry.
    cells: Vec<Cell>,
    free_cells: Vec<u32>,
    voqs: Vec<Voq>,
    voq_of: FxHashMap<(u32, u32, bool), u32>,
    sched_of: Vec<u32>,
    scheds: Vec<Sched>,
    rr: Vec<u32>,
    dsf: DsfStats,
}

#[inline]
fn next_rand(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    mix(*state)
}

impl Sim<'_> {
    fn push(&mut self, q: Fifo, i: u32) -> Fifo {
        self.packets[i as usize].next = NONE;
        if q.tail == NONE {
            Fifo { head: i, tail: i }
        } else {
            self.packets[q.tail as usize].next = i;
            Fifo {
                head: q.head,
                tail: i,
            }
        }
    }

    fn pop(&mut self, q: Fifo) -> (Fifo, Option<u32>) {
        if q.head == NONE {
            return (q, None);
        }
        let i = q.head;
        let next = self.packets[i as usize].next;
        let q = if next == NONE {
            Fifo::default()
        } else {
            Fifo {
                head: next,
                tail: q.tail,
            }
        };
        (q, Some(i))
    }

    fn alloc(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.packets[i as usize] = p;
                i
            }
            None => {
                self.packets.push(p);
                self.packets.len() as u32 - 1
            }
        }
    }

    fn release(&mut self, i: u32) {
        let p = &mut self.packets[i as usize];
        p.live = false;
        if p.kind == ACK {
            let s = p.sack;
            self.sacks[s as usize].clear();
            self.free_sacks.push(s);
        }
        self.free.push(i);
    }

    /// Put packet `i` on port `p`'s wire now.
    fn transmit(&mut self, p: u32, i: u32) {
        let port = self.topo.ports[p as usize];
        let bytes = self.packets[i as usize].bytes;
        self.packets[i as usize].port = p;
        let ser = port.serialize_ps(bytes);
        let st = &mut self.ports[p as usize];
        st.busy = true;
        st.used = true;
        st.sent += u64::from(bytes);
        self.events
            .push(self.now + ser, TX_DONE << 56 | u64::from(p));
        self.events
            .push(self.now + ser + port.delay_ps, ARRIVE << 56 | u64::from(i));
    }

    /// Start the next queued packet on a switch port (high priority first), marking data
    /// packets ECN on dequeue.
    fn dequeue(&mut self, p: u32) {
        self.ports[p as usize].account(self.now);
        let (hi, lo) = (self.ports[p as usize].hi, self.ports[p as usize].lo);
        let i = if let (hi, Some(i)) = self.pop(hi) {
            let st = &mut self.ports[p as usize];
            st.hi = hi;
            st.hi_bytes -= u64::from(self.packets[i as usize].bytes);
            i
        } else if let (false, (lo, Some(i))) = (self.ports[p as usize].paused, self.pop(lo)) {
            let st = &mut self.ports[p as usize];
            st.lo = lo;
            st.lo_bytes -= u64::from(self.packets[i as usize].bytes);
            let q = st.lo_bytes;
            // A packet out of a DSF zone's fabric had its ingress count released when it
            // left its VOQ; once it leaves this switch it is an ordinary packet again (the
            // next switch counts it, and releases it here).
            let counted = !std::mem::replace(&mut self.packets[i as usize].dsf, false);
            if self.cfg.pfc.is_some() && counted {
                self.release_ingress(i);
            }
            if let Some((lo, hi)) = self.cfg.ecn_bytes {
                let mark = if q <= lo {
                    false
                } else if q >= hi {
                    true
                } else {
                    let u = next_rand(&mut self.rng) >> 11;
                    (u as f64)
                        < (q - lo) as f64 / (hi - lo) as f64
                            * self.cfg.ecn_max_probability
                            * (1u64 << 53) as f64
                };
                if mark && !self.packets[i as usize].ecn {
                    self.packets[i as usize].ecn = true;
                    self.counters.ecn_marked += 1;
                }
            }
            i
        } else {
            self.ports[p as usize].busy = false;
            return;
        };
        self.transmit(p, i);
    }

    /// Queue packet `i` on switch port `p` (trimming or dropping what does not fit).
    fn enqueue(&mut self, p: u32, i: u32) {
        let bytes = u64::from(self.packets[i as usize].bytes);
        let data = self.packets[i as usize].kind == DATA;
        self.ports[p as usize].account(self.now);
        if data {
            let st = &self.ports[p as usize];
            // Lossless: the ingress accounting bounds the buffer, not the egress queue.
            if self.cfg.pfc.is_some() || st.lo_bytes + bytes <= self.cfg.queue_bytes {
                let lo = self.push(st.lo, i);
                let st = &mut self.ports[p as usize];
                st.lo = lo;
                st.lo_bytes += bytes;
            } else if self.cfg.trim {
                // The victim: the arrival, or (half the time) the last data packet queued,
                // whose place the arrival takes when it fits there. Queued packets are named
                // only by their queue, so the two swap slots: the tail's slot takes the
                // arrival, the arrival's slot the victim.
                let j = self.ports[p as usize].lo.tail;
                if j != NONE {
                    let jb = u64::from(self.packets[j as usize].bytes);
                    let st = &self.ports[p as usize];
                    if next_rand(&mut self.rng) & 1 == 1
                        && st.lo_bytes - jb + bytes <= self.cfg.queue_bytes
                    {
                        self.packets.swap(i as usize, j as usize);
                        self.packets[j as usize].next = NONE;
                        let st = &mut self.ports[p as usize];
                        st.lo_bytes = st.lo_bytes - jb + bytes;
                    }
                }
                self.trim(i);
                self.enqueue_hi(p, i);
            } else {
                self.drop_packet(i);
            }
        } else {
            self.enqueue_hi(p, i);
        }
        self.note_peak(p);
        if !self.ports[p as usize].busy {
            self.dequeue(p);
        }
    }

    fn enqueue_hi(&mut self, p: u32, i: u32) {
        let bytes = u64::from(self.packets[i as usize].bytes);
        let st = &self.ports[p as usize];
        // A clear-to-send is never dropped: nothing would send it again (the collective
        // library retries its own; here it is simply kept).
        if st.hi_bytes + bytes <= self.cfg.priority_queue_bytes
            || self.packets[i as usize].kind == CTS
        {
            let hi = self.push(st.hi, i);
            let st = &mut self.ports[p as usize];
            st.hi = hi;
            st.hi_bytes += bytes;
        } else {
            self.drop_packet(i);
        }
    }

    /// PFC at a switch: count data packet `i`, arrived over port `p`, against that link's
    /// ingress; drop it if the headroom is full; send a PAUSE upstream when XOFF is crossed
    /// (by this packet, or by one dropped for want of headroom: with less headroom than a
    /// packet the link still gets paused). Whether the packet was admitted.
    fn admit(&mut self, p: u32, i: u32) -> bool {
        let Some(pfc) = self.cfg.pfc else { return true };
        let bytes = u64::from(self.packets[i as usize].bytes);
        let st = &mut self.ports[p as usize];
        let admitted = st.ingress + bytes <= pfc.xoff_bytes + st.headroom;
        if admitted {
            st.ingress += bytes;
            st.ingress_peak = st.ingress_peak.max(st.ingress);
        }
        // A drop pauses the link only while it holds data here: the release of that data
        // sends the RESUME (with nothing held, no RESUME would ever come).
        let crossed = if admitted {
            st.ingress > pfc.xoff_bytes
        } else {
            st.ingress > 0 && st.ingress + bytes > pfc.xoff_bytes
        };
        if crossed && !st.pause_sent {
            st.pause_sent = true;
            self.pfc_pauses += 1;
            let delay = self.topo.ports[p as usize].delay_ps;
            self.events.push(
                self.now + pfc.response_ps + delay,
                PAUSE << 56 | u64::from(p),
            );
        }
        if !admitted {
            self.pfc_drops += 1;
            self.drop_packet(i);
        }
        admitted
    }

    /// PFC: data packet `i` leaves the switch that counted it against the link it came in
    /// over (its `port` until it is transmitted); a RESUME goes upstream at XON.
    fn release_ingress(&mut self, i: u32) {
        let Some(pfc) = self.cfg.pfc else { return };
        let p = self.packets[i as usize].port;
        let st = &mut self.ports[p as usize];
        st.ingress -= u64::from(self.packets[i as usize].bytes);
        if st.pause_sent && st.ingress <= pfc.xon_bytes {
            st.pause_sent = false;
            self.pfc_resumes += 1;
            let delay = self.topo.ports[p as usize].delay_ps;
            self.events.push(
                self.now + pfc.response_ps + delay,
                RESUME << 56 | u64::from(p),
            );
        }
    }

    /// A PAUSE or RESUME frame reaches port `p`'s sender.
    fn pause(&mut self, p: u32, on: bool) {
        let st = &mut self.ports[p as usize];
        if st.paused == on {
            return;
        }
        st.paused = on;
        if on {
            st.pauses_received += 1;
            st.paused_since_ps = self.now;
            return;
        }
        st.paused_ps += self.now - st.paused_since_ps;
        if !st.busy {
            match self.topo.port_host[p as usize] {
                u32::MAX => self.dequeue(p),
                host => self.try_send(host),
            }
        }
    }

    fn note_peak(&mut self, p: u32) {
        let st = &mut self.ports[p as usize];
        st.peak = st.peak.max(st.hi_bytes + st.lo_bytes);
    }

    fn trim(&mut self, i: u32) {
        let h = self.cfg.header_bytes;
        let pk = &mut self.packets[i as usize];
        self.trimmed_off += u64::from(pk.bytes - h);
        pk.bytes = h;
        pk.kind = HEADER;
        self.counters.trimmed += 1;
    }

    fn drop_packet(&mut self, i: u32) {
        self.dropped += u64::from(self.packets[i as usize].bytes);
        self.counters.dropped += 1;
        self.release(i);
    }

    /// The egress port of switch `v` for packet `i`.
    fn route(&mut self, v: u32, i: u32) -> u32 {
        let pk = self.packets[i as usize];
        let f = &self.flows[pk.flow as usize];
        // Control packets travel from the flow's receiver back to its sender.
        let to_host = if matches!(pk.kind, ACK | NACK | CNP | CTS) {
            f.src
        } else {
            f.dst
        };
        let t = self.topo;
        let dest = t.host_dest[to_host as usize];
        if t.dest_rack[dest as usize] == v {
            return t.host_down[to_host as usize];
        }
        if let Some(d) = &t.dsf {
            // In the destination's DSF zone: across the cell fabric to its rack switch.
            if d.same_zone(v, t.dest_rack[dest as usize]) {
                return t.host_down[to_host as usize];
            }
        }
        let sw = t.switch_index[v as usize] as usize;
        let (start, n) = t.table[dest as usize * t.switches + sw];
        let (start, n) = (start as usize, n as usize);
        if n == 1 {
            return t.members[start];
        }
        let h = mix(self.salts[sw] ^ mix(f.id << 24 ^ u64::from(pk.entropy)));
        match self.cfg.lb {
            Lb::Adaptive => {
                let first = (((h >> 32) * n as u64) >> 32) as usize;
                let mut best = t.members[start + first];
                let mut best_q = u64::MAX;
                for k in 0..n {
                    let m = t.members[start + (first + k) % n];
                    let st = &self.ports[m as usize];
                    let q = st.lo_bytes + st.hi_bytes + u64::from(st.busy);
                    if q < best_q {
                        best = m;
                        best_q = q;
                    }
                }
                best
            }
            _ if t.cum_weight.is_empty() => {
                t.members[start + (((h >> 32) * n as u64) >> 32) as usize]
            }
            _ => {
                let u = h >> 32;
                let cum = &t.cum_weight[start..start + n];
                let k = cum.partition_point(|&c| c <= u).min(n - 1);
                t.members[start + k]
            }
        }
    }

    /// Let host `h` send: control packets first, then the next data packet of its active
    /// flows, round robin, that its window allows.
    fn try_send(&mut self, h: u32) {
        let p = self.topo.host_up[h as usize];
        if self.ports[p as usize].busy {
            return;
        }
        self.ports[p as usize].account(self.now);
        if let (hi, Some(i)) = self.pop(self.ports[p as usize].hi) {
            let st = &mut self.ports[p as usize];
            st.hi = hi;
            st.hi_bytes -= u64::from(self.packets[i as usize].bytes);
            self.transmit(p, i);
            return;
        }
        if self.ports[p as usize].paused {
            return;
        }
        let n = self.active[h as usize].len();
        for k in 0..n {
            let slot = (self.robin[h as usize] + k) % n;
            let fi = self.active[h as usize][slot];
            if let Some(i) = self.next_data(fi) {
                self.robin[h as usize] = slot + 1;
                self.injected += u64::from(self.packets[i as usize].bytes);
                self.transmit(p, i);
                return;
            }
        }
        if matches!(self.cfg.cc, Cc::Dcqcn(_)) {
            // Nothing may go now: wake up when the first paced flow may.
            let next = self.active[h as usize]
                .iter()
                .map(|&fi| &self.flows[fi as usize])
                .filter(|f| f.next_send_ps > self.now && f.rate.is_some())
                .map(|f| f.next_send_ps)
                .min();
            if let Some(t) = next {
                let at = &mut self.pace_at[h as usize];
                if *at <= self.now || t < *at {
                    *at = t;
                    self.events.push(t, PACE << 56 | u64::from(h));
                }
            }
        }
    }

    /// The next data packet flow `fi` may send now, if any.
    fn next_data(&mut self, fi: u32) -> Option<u32> {
        let (mtu, hdr) = (self.cfg.mtu_bytes, self.cfg.header_bytes);
        let lb = self.cfg.lb;
        let now = self.now;
        let f = &mut self.flows[fi as usize];
        // Retransmissions first (skipping packets acknowledged meanwhile).
        while let Some(&s) = f.retx.front() {
            if f.state[s as usize] == LOST {
                break;
            }
            f.retx.pop_front();
        }
        let (seq, again) = match f.retx.front() {
            Some(&s) => (s, true),
            None if f.next_new < f.packets.min(f.cleared) => (f.next_new, false),
            None => return None,
        };
        let bytes = f.wire_bytes(seq, mtu, hdr);
        let window = match self.cfg.cc {
            Cc::Nscc(_) => f.cc.cwnd_bytes as u64,
            _ => u64::MAX,
        };
        if f.in_flight_bytes > 0 && f.in_flight_bytes + u64::from(bytes) > window {
            return None;
        }
        // DCQCN paces each flow at its rate: the next packet leaves one packet time (at that
        // rate) after the previous one.
        if let (Cc::Dcqcn(p), Some(st)) = (&self.cfg.cc, f.rate.as_mut()) {
            if now < f.next_send_ps {
                return None;
            }
            st.on_sent(p, u64::from(bytes), now);
            let gap =
                (u128::from(bytes) * 8_000_000_000_000).div_ceil(u128::from(st.rate_bps().max(1)));
            f.next_send_ps = now + gap as u64;
        }
        if again {
            f.retx.pop_front();
            self.counters.data_retransmitted += 1;
        } else {
            f.next_new += 1;
            self.counters.data_new += 1;
        }
        f.state[seq as usize] = IN_FLIGHT;
        f.in_flight_bytes += u64::from(bytes);
        f.sent_ps[seq as usize] = now;
        f.sends.push_back((now, seq));
        // REPS (Bonato et al., "REPS: Recycled Entropy Packet Spraying", arXiv 2407.21625):
        // reuse an entropy value whose packet was acknowledged unmarked; else draw one.
        let entropy = match lb {
            Lb::Spray(n) | Lb::Mixed(n) => match f.good.pop_front() {
                Some(e) => e,
                None => f.fresh_entropy(n),
            },
            // Adaptive routing breaks ties between equally short queues per packet.
            Lb::Adaptive => (next_rand(&mut f.rng) >> 48) as u32,
            Lb::Ecmp => 0,
        };
        if let Some(x) = f.ev.get_mut(seq as usize) {
            *x = entropy;
        }
        let window_full = f.in_flight_bytes + u64::from(mtu) > window;
        let last = f.next_new == f.packets && f.retx.is_empty();
        let arm = !f.rto_armed;
        f.rto_armed = true;
        let pk = Packet {
            flow: fi,
            seq,
            bytes,
            kind: DATA,
            ecn: false,
            ack_request: again || window_full || last,
            entropy,
            port: 0,
            stamp_ps: now,
            sack: 0,
            ecn_bytes: 0,
            next: NONE,
            again,
            live: true,
            dsf: false,
            cells: 0,
        };
        if arm {
            let rto = self.flows[fi as usize].rto_ps;
            self.events.push(now + rto, RTO << 56 | u64::from(fi));
        }
        Some(self.alloc(pk))
    }

    fn start_flow(&mut self, fi: u32) {
        let f = &mut self.flows[fi as usize];
        if f.started {
            return;
        }
        f.started = true;
        f.start_ps = self.now;
        // DCQCN's timers (alpha's decay above all) run from the flow's start.
        if let Cc::Dcqcn(p) = &self.cfg.cc {
            f.rate = Some(dcqcn::State::new(p, self.now));
        }
        // Per-packet state lives from the start to the end of the flow.
        let n = f.packets as usize;
        f.state = vec![UNSENT; n];
        f.sent_ps = vec![0; n];
        if matches!(self.cfg.lb, Lb::Spray(_)) {
            f.ev = vec![0; n];
        }
        f.got = vec![0; n.div_ceil(64)];
        let h = f.src;
        if f.packets == 0 {
            self.finish(fi);
            return;
        }
        self.active[h as usize].push(fi);
        if self.cfg.admission.is_some() {
            let dst = self.flows[fi as usize].dst;
            self.admit_queue[dst as usize].push_back(fi);
            self.grant(dst);
        }
        self.try_send(h);
    }

    /// Admission: chunks of flow `fi`, and packets per chunk.
    fn chunks(&self, fi: u32) -> (u32, u32) {
        let a = self.cfg.admission.expect("admission is on");
        let payload = u64::from(self.cfg.mtu_bytes - self.cfg.header_bytes);
        let per = a
            .chunk_bytes
            .div_ceil(payload)
            .clamp(1, u64::from(u32::MAX)) as u32;
        let f = &self.flows[fi as usize];
        (f.packets.div_ceil(per), per)
    }

    /// Admission: receiving host `h` grants chunks round robin among the flows waiting,
    /// while fewer than its window are outstanding; each grant is a CTS to the sender.
    fn grant(&mut self, h: u32) {
        let Some(a) = self.cfg.admission else { return };
        while self.outstanding[h as usize] < a.window {
            let Some(fi) = self.admit_queue[h as usize].pop_front() else {
                break;
            };
            let (total, _) = self.chunks(fi);
            let f = &mut self.flows[fi as usize];
            if f.done || f.chunks_granted >= total {
                continue;
            }
            f.chunks_granted += 1;
            let chunk = f.chunks_granted - 1;
            if f.chunks_granted < total {
                self.admit_queue[h as usize].push_back(fi);
            }
            self.outstanding[h as usize] += 1;
            self.counters.cts += 1;
            self.send_back(fi, chunk, CTS, 0, 0);
        }
    }

    fn finish(&mut self, fi: u32) {
        let now = self.now;
        let f = &mut self.flows[fi as usize];
        if f.done {
            return;
        }
        f.done = true;
        f.finish_ps = now;
        f.state = Vec::new();
        f.sent_ps = Vec::new();
        f.ev = Vec::new();
        f.sends = VecDeque::new();
        f.retx = VecDeque::new();
        let h = f.src;
        // An empty flow delivers nothing: its receiver's trigger fires here too.
        let trig = f.done_trigger;
        let recv = f.recv_trigger.filter(|_| f.packets == 0);
        self.done_flows += 1;
        if let Some(pos) = self.active[h as usize].iter().position(|&x| x == fi) {
            self.active[h as usize].remove(pos);
            let n = self.active[h as usize].len().max(1);
            self.robin[h as usize] %= n;
        }
        for t in [trig, recv].into_iter().flatten() {
            self.activate(t);
        }
    }

    /// One activation of trigger `t` (htsim's semantics, as in the flow engine).
    fn activate(&mut self, t: u32) {
        let kind = self.kinds.get(&t).copied().unwrap_or(TriggerKind::Oneshot);
        let fire_all = match kind {
            TriggerKind::Oneshot => !self.fired.insert(t, true).unwrap_or(false),
            TriggerKind::Barrier(n) => {
                let a = self.activations.entry(t).or_insert(0);
                *a += 1;
                *a == n
            }
            TriggerKind::Multishot => {
                if let Some(fi) = self.waiting.get_mut(&t).and_then(VecDeque::pop_front) {
                    self.start_flow(fi);
                }
                false
            }
        };
        if fire_all {
            let list: Vec<u32> = self.waiting.remove(&t).map(Vec::from).unwrap_or_default();
            for fi in list {
                self.start_flow(fi);
            }
        }
    }

    /// Packet `i` arrives over its port.
    fn arrive(&mut self, i: u32) {
        let p = self.packets[i as usize].port;
        let v = self.topo.ports[p as usize].to;
        let h = self.topo.host_of_device[v as usize];
        if h == u32::MAX {
            if self.cfg.pfc.is_some() && self.packets[i as usize].kind == DATA && !self.admit(p, i)
            {
                return;
            }
            let e = self.route(v, i);
            if let Some(d) = &self.topo.dsf {
                if d.scheduled(v, self.topo.ports[e as usize].from) {
                    self.voq_enqueue(v, e, i);
                    return;
                }
            }
            self.enqueue(e, i);
            return;
        }
        let pk = self.packets[i as usize];
        self.delivered += u64::from(pk.bytes);
        if pk.kind == ACK {
            // Its SACK list goes back to the pool with it: read it first.
            self.receive_ack(pk);
            self.release(i);
            return;
        }
        self.release(i);
        match pk.kind {
            DATA => self.receive_data(pk),
            HEADER => {
                self.counters.nacks += 1;
                self.send_back(pk.flow, pk.seq, NACK, pk.entropy, pk.stamp_ps);
            }
            CTS => {
                let (_, per) = self.chunks(pk.flow);
                let f = &mut self.flows[pk.flow as usize];
                f.cleared = f
                    .cleared
                    .max((pk.seq + 1).saturating_mul(per).min(f.packets));
                let src = f.src;
                self.try_send(src);
            }
            CNP => {
                if let (Cc::Dcqcn(p), Some(st)) =
                    (&self.cfg.cc, self.flows[pk.flow as usize].rate.as_mut())
                {
                    st.on_cnp(p, self.now);
                }
            }
            _ => self.receive_nack(pk),
        }
    }

    /// A control packet of `kind` for flow `flow`, from its receiver back to its sender.
    fn send_back(&mut self, flow: u32, seq: u32, kind: u8, entropy: u32, stamp_ps: u64) {
        let dst = self.flows[flow as usize].dst;
        self.send_control(
            dst,
            Packet {
                flow,
                seq,
                bytes: self.cfg.header_bytes,
                kind,
                entropy,
                stamp_ps,
                live: true,
                ..Packet::default()
            },
        );
    }

    fn send_control(&mut self, h: u32, pk: Packet) {
        let i = self.alloc(pk);
        let p = self.topo.host_up[h as usize];
        self.injected += u64::from(pk.bytes);
        self.ports[p as usize].account(self.now);
        let hi = self.push(self.ports[p as usize].hi, i);
        let st = &mut self.ports[p as usize];
        st.hi = hi;
        st.hi_bytes += u64::from(pk.bytes);
        self.note_peak(p);
        self.try_send(h);
    }

    fn receive_data(&mut self, pk: Packet) {
        let every = u64::from(self.cfg.ack_every_bytes);
        let now = self.now;
        let delay = self.ack_delay_ps;
        let f = &mut self.flows[pk.flow as usize];
        let (w, b) = (pk.seq as usize / 64, pk.seq as usize % 64);
        let new = f.got[w] >> b & 1 == 0;
        if new {
            f.got[w] |= 1 << b;
            f.received += 1;
            // Counted on the wire, as htsim's receiver counts: four 4,150 B packets reach
            // 16,384 B.
            f.pending_bytes += u64::from(pk.bytes);
            if pk.ecn {
                f.pending_ecn += pk.bytes;
            }
        }
        let cnp = match (&self.cfg.cc, pk.ecn) {
            (Cc::Dcqcn(p), true) => f.cnp.should_send(p, now),
            _ => false,
        };
        // A duplicate is acknowledged again (at once): the sender may have presumed it lost.
        f.pending.push(pk.seq);
        let complete = f.received == f.packets;
        let delivered = (new && complete).then_some(f.recv_trigger).flatten();
        if new && self.cfg.admission.is_some() {
            // A chunk is in when as many packets came as the chunks up to it hold (packets
            // of a later chunk can overtake only within the receiver's window).
            let (total, per) = self.chunks(pk.flow);
            let f = &mut self.flows[pk.flow as usize];
            let done = if f.received == f.packets {
                total
            } else {
                (f.received / per).min(total)
            };
            if done > f.chunks_done {
                let dst = f.dst;
                let more = done - f.chunks_done;
                f.chunks_done = done;
                let o = &mut self.outstanding[dst as usize];
                *o = o.saturating_sub(more);
                self.grant(dst);
            }
        }
        if cnp {
            self.counters.cnps += 1;
            self.send_back(pk.flow, pk.seq, CNP, pk.entropy, 0);
        }
        let f = &mut self.flows[pk.flow as usize];
        // At once: a mark (its echo must not wait), the first packet, a packet asking for
        // it, the last one; else every `every` bytes.
        let now_ack = pk.ecn || f.received == 1 || pk.ack_request || complete || !new;
        if !(now_ack || f.pending_bytes >= every) {
            // What is held is acknowledged at the latest `ack_delay_ps` after it came: a
            // window cut below the ACK threshold cannot stall the sender until a timeout.
            if !f.ack_timer {
                f.ack_timer = true;
                self.events
                    .push(now + delay, ACK_TIMER << 56 | u64::from(pk.flow));
            }
            return;
        }
        self.send_ack(pk);
        // The last byte is in (and acknowledged, complete packets never wait): the next
        // step may start.
        if let Some(t) = delivered {
            self.activate(t);
        }
    }

    /// Acknowledge what flow `pk.flow`'s receiver holds; `pk` is the packet that triggered
    /// it (its send time and entropy are echoed).
    fn send_ack(&mut self, pk: Packet) {
        let f = &mut self.flows[pk.flow as usize];
        let sack = match self.free_sacks.pop() {
            Some(s) => s,
            None => {
                self.sacks.push(Vec::new());
                self.sacks.len() as u32 - 1
            }
        };
        std::mem::swap(&mut self.sacks[sack as usize], &mut f.pending);
        let ack = Packet {
            flow: pk.flow,
            seq: pk.seq,
            bytes: self.cfg.header_bytes,
            kind: ACK,
            entropy: pk.entropy,
            stamp_ps: pk.stamp_ps,
            sack,
            ecn_bytes: f.pending_ecn,
            again: pk.again,
            live: true,
            ..Packet::default()
        };
        f.pending_bytes = 0;
        f.pending_ecn = 0;
        let dst = f.dst;
        self.counters.acks += 1;
        self.send_control(dst, ack);
    }

    fn receive_ack(&mut self, pk: Packet) {
        let (mtu, hdr) = (self.cfg.mtu_bytes, self.cfg.header_bytes);
        let now = self.now;
        let f = &mut self.flows[pk.flow as usize];
        if f.done {
            // A late ACK (of a duplicate) after the flow completed.
            return;
        }
        let mut newly = 0u64;
        // A marked packet is acknowledged at once (`receive_data`), so an ACK carries at
        // most one mark, its trigger's: with `spray`, every other packet it newly covers
        // came back unmarked and its entropy value is recycled.
        let per_packet = matches!(self.cfg.lb, Lb::Spray(_));
        for &s in &self.sacks[pk.sack as usize] {
            match f.state[s as usize] {
                IN_FLIGHT => {
                    if per_packet && !(s == pk.seq && pk.ecn_bytes > 0) {
                        if f.good.len() >= GOOD_ENTROPIES {
                            f.good.pop_front();
                        }
                        f.good.push_back(f.ev[s as usize]);
                    }
                    let b = u64::from(f.wire_bytes(s, mtu, hdr));
                    f.in_flight_bytes -= b;
                    newly += b;
                    f.state[s as usize] = ACKED;
                    f.acked += 1;
                }
                LOST => {
                    newly += u64::from(f.wire_bytes(s, mtu, hdr));
                    f.state[s as usize] = ACKED;
                    f.acked += 1;
                }
                _ => {}
            }
        }
        if self.cfg.lb.entropies().is_some() {
            if pk.ecn_bytes == 0 {
                // `mixed` (htsim's feedback): only the value the ACK echoes.
                if !per_packet {
                    if f.good.len() >= GOOD_ENTROPIES {
                        f.good.pop_front();
                    }
                    f.good.push_back(pk.entropy);
                }
            } else {
                f.penalize(pk.entropy, 1);
            }
        }
        if let Cc::Nscc(_) = &self.cfg.cc {
            let rtt = (!pk.again).then(|| now.saturating_sub(pk.stamp_ps));
            let params = &self.nscc[f.nscc as usize];
            f.cc.on_ack(params, now, newly, u64::from(pk.ecn_bytes), rtt);
        }
        let (done, src) = (f.acked == f.packets, f.src);
        if done {
            self.finish(pk.flow);
        }
        self.try_send(src);
    }

    fn receive_nack(&mut self, pk: Packet) {
        let (mtu, hdr) = (self.cfg.mtu_bytes, self.cfg.header_bytes);
        let now = self.now;
        let f = &mut self.flows[pk.flow as usize];
        f.penalize(pk.entropy, 4);
        // A NACK of an earlier copy says nothing about the one in flight now.
        let current = f.state.get(pk.seq as usize) == Some(&IN_FLIGHT)
            && f.sent_ps[pk.seq as usize] == pk.stamp_ps;
        if current {
            f.state[pk.seq as usize] = LOST;
            f.in_flight_bytes -= u64::from(f.wire_bytes(pk.seq, mtu, hdr));
            f.retx.push_back(pk.seq);
            if let Cc::Nscc(_) = &self.cfg.cc {
                let params = &self.nscc[f.nscc as usize];
                f.cc.on_nack(params, now, u64::from(f.wire_bytes(pk.seq, mtu, hdr)));
            }
        }
        let src = f.src;
        self.try_send(src);
    }

    /// The retransmission timer of flow `fi`: it runs from the send time of the earliest
    /// packet still in flight (htsim's rule); when that packet has waited `rto_ps`, it is
    /// presumed lost and sent again, and the timer moves to the next one.
    fn timeout(&mut self, fi: u32) {
        let rto = self.flows[fi as usize].rto_ps;
        let now = self.now;
        let (mtu, hdr) = (self.cfg.mtu_bytes, self.cfg.header_bytes);
        let f = &mut self.flows[fi as usize];
        f.rto_armed = false;
        if f.done {
            return;
        }
        // The earliest packet in flight, skipping stale entries.
        while let Some(&(t, seq)) = f.sends.front() {
            if f.state[seq as usize] == IN_FLIGHT && f.sent_ps[seq as usize] == t {
                break;
            }
            f.sends.pop_front();
        }
        let Some(&(t, seq)) = f.sends.front() else {
            return;
        };
        if now < t + rto {
            f.rto_armed = true;
            self.events.push(t + rto, RTO << 56 | u64::from(fi));
            return;
        }
        f.sends.pop_front();
        let bytes = f.wire_bytes(seq, mtu, hdr);
        f.state[seq as usize] = LOST;
        f.in_flight_bytes -= u64::from(bytes);
        f.retx.push_back(seq);
        if let Cc::Nscc(_) = &self.cfg.cc {
            f.cc.on_timeout(&self.nscc[f.nscc as usize], u64::from(bytes));
        }
        self.counters.timeouts += 1;
        // The next packet's turn.
        f.rto_armed = true;
        self.events.push(now, RTO << 56 | u64::from(fi));
        let src = f.src;
        self.try_send(src);
    }

    /// A receiver's delayed ACK: acknowledge what it still holds.
    fn ack_timer(&mut self, fi: u32) {
        let f = &mut self.flows[fi as usize];
        f.ack_timer = false;
        let Some(&last) = f.pending.last() else {
            return;
        };
        let pk = Packet {
            flow: fi,
            seq: last,
            entropy: 0,
            // No RTT sample: the ACK waited on purpose.
            again: true,
            ..Packet::default()
        };
        self.send_ack(pk);
    }

    /// Bytes of live packets (a scan): with the ledger, the conservation check.
    fn check(&self) {
        let live: u64 = self
            .packets
            .iter()
            .filter(|p| p.live)
            .map(|p| u64::from(p.bytes))
            .sum();
        assert_eq!(
            self.injected,
            self.delivered + self.dropped + self.trimmed_off + live,
            "bytes put on the wire = delivered + dropped + trimmed off + in the network, at {} ps",
            self.now
        );
        let (mtu, hdr) = (self.cfg.mtu_bytes, self.cfg.header_bytes);
        for f in self.flows.iter().filter(|f| f.started && !f.done) {
            let mut in_flight = 0u64;
            let mut acked = 0u32;
            for (seq, &st) in f.state.iter().enumerate() {
                match st {
                    IN_FLIGHT => in_flight += u64::from(f.wire_bytes(seq as u32, mtu, hdr)),
                    ACKED => acked += 1,
                    LOST => assert!(
                        f.retx.contains(&(seq as u32)),
                        "flow {}: packet {seq} is lost but not queued to be sent again",
                        f.id
                    ),
                    _ => {}
                }
            }
            assert_eq!(
                f.in_flight_bytes, in_flight,
                "flow {}: bytes in flight",
                f.id
            );
            assert_eq!(f.acked, acked, "flow {}: packets acknowledged", f.id);
        }
        if self.cfg.pfc.is_some() {
            // Every switch's ingress count is the data it holds from that link.
            let mut ingress = vec![0u64; self.ports.len()];
            for (p, st) in self.ports.iter().enumerate() {
                if self.topo.port_host[p] != u32::MAX {
                    continue;
                }
                let mut i = st.lo.head;
                while i != NONE {
                    let pk = &self.packets[i as usize];
                    if !pk.dsf {
                        ingress[pk.port as usize] += u64::from(pk.bytes);
                    }
                    i = pk.next;
                }
            }
            // Data waiting in VOQs still counts against the link it came in over.
            for q in self.voqs.iter().filter(|q| !q.control) {
                let mut i = q.fifo.head;
                while i != NONE {
                    let pk = &self.packets[i as usize];
                    ingress[pk.port as usize] += u64::from(pk.bytes);
                    i = pk.next;
                }
            }
            for (p, st) in self.ports.iter().enumerate() {
                assert_eq!(st.ingress, ingress[p], "port {p}: PFC ingress count");
            }
        }
        if self.topo.dsf.is_some() {
            // Credits: granted = sent + held by VOQs + on their way; a VOQ never holds
            // credit while it has packets, nor more than it asked for.
            let balance: i64 = self.voqs.iter().map(|q| q.balance).sum();
            assert_eq!(
                self.dsf.granted as i64,
                self.dsf.sent as i64 + balance + self.dsf.grants_in_flight as i64,
                "DSF credits granted = sent + balances + in flight, at {} ps",
                self.now
            );
            for q in &self.voqs {
                assert!(
                    q.balance <= 0 || q.fifo.head == NONE,
                    "a VOQ sits on credit"
                );
                let mut i = q.fifo.head;
                let mut sum = 0;
                while i != NONE {
                    sum += u64::from(self.packets[i as usize].bytes);
                    i = self.packets[i as usize].next;
                }
                assert_eq!(sum, q.bytes, "VOQ bytes");
            }
            let live_cells = self.cells.len() - self.free_cells.len();
            assert_eq!(
                self.dsf.cells_sent,
                self.dsf.cells_reassembled + live_cells as u64,
                "cells sent = reassembled + in the fabric"
            );
        }
        for (p, st) in self.ports.iter().enumerate() {
            for (q, bytes) in [(st.hi, st.hi_bytes), (st.lo, st.lo_bytes)] {
                let (mut i, mut sum, mut last) = (q.head, 0u64, NONE);
                while i != NONE {
                    sum += u64::from(self.packets[i as usize].bytes);
                    last = i;
                    i = self.packets[i as usize].next;
                }
                assert_eq!(
                    (sum, last),
                    (bytes, q.tail),
                    "port {p}: queue bytes and tail"
                );
            }
        }
    }
}

/// DSF: VOQs, credits and cells (see [`crate::dsf`]).
impl Sim<'_> {
    /// Packet `i`, at ingress interface node `v`, waits in the VOQ of egress port `e`.
    fn voq_enqueue(&mut self, v: u32, e: u32, i: u32) {
        let control = self.packets[i as usize].kind != DATA;
        let next = self.voqs.len() as u32;
        let q = *self.voq_of.entry((v, e, control)).or_insert(next);
        if q == next {
            self.voqs.push(Voq {
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
        let b = u64::from(self.packets[i as usize].bytes);
        let fifo = self.push(self.voqs[q as usize].fifo, i);
        let voq = &mut self.voqs[q as usize];
        voq.fifo = fifo;
        voq.bytes += b;
        voq.peak = voq.peak.max(voq.bytes);
        self.dsf.packets += 1;
        // The VOQ asks its egress scheduler for the packet's bytes.
        let t = self.topo;
        let w = t.ports[e as usize].from;
        let delay = t.dsf.as_ref().expect("a DSF run").ctrl_delay(v, w);
        self.dsf.requests += 1;
        self.events
            .push(self.now + delay, REQUEST << 56 | b << 32 | u64::from(q));
        self.voq_send(q);
    }

    /// A request of `amount` bytes from VOQ `q` reaches its egress scheduler.
    fn on_request(&mut self, q: u32, amount: u64) {
        let e = self.voqs[q as usize].egress;
        let s = match self.sched_of[e as usize] {
            NONE => {
                self.scheds.push(Sched::default());
                let s = self.scheds.len() as u32 - 1;
                self.sched_of[e as usize] = s;
                s
            }
            s => s,
        };
        let voq = &mut self.voqs[q as usize];
        voq.demand += amount;
        if !voq.in_ring && voq.demand > 0 {
            voq.in_ring = true;
            let sc = &mut self.scheds[s as usize];
            if voq.control {
                sc.hi.push_back(q);
            } else {
                sc.lo.push_back(q);
            }
        }
        self.sched_run(s);
    }

    /// Egress scheduler `s` grants the next VOQ of its round robin a credit, if its port's
    /// rate allows one now (else it waits for the time it does).
    fn sched_run(&mut self, s: u32) {
        let credit = u64::from(self.cfg.dsf.credit_bytes.max(1));
        let sc = &mut self.scheds[s as usize];
        if sc.timer {
            return;
        }
        if self.now < sc.next_ps {
            if !sc.hi.is_empty() || !sc.lo.is_empty() {
                sc.timer = true;
                self.events.push(sc.next_ps, SCHED << 56 | u64::from(s));
            }
            return;
        }
        let Some(q) = sc.hi.pop_front().or_else(|| sc.lo.pop_front()) else {
            return;
        };
        let voq = &mut self.voqs[q as usize];
        let g = voq.demand.min(credit).min(MSG_MAX);
        voq.demand -= g;
        if voq.demand > 0 {
            if voq.control {
                sc.hi.push_back(q);
            } else {
                sc.lo.push_back(q);
            }
        } else {
            voq.in_ring = false;
        }
        let (v, e) = (voq.ingress, voq.egress);
        let t = self.topo;
        let port = t.ports[e as usize];
        sc.next_ps = self.now + port.serialize_ps(g as u32);
        if !sc.hi.is_empty() || !sc.lo.is_empty() {
            sc.timer = true;
            self.events.push(sc.next_ps, SCHED << 56 | u64::from(s));
        }
        let delay = t.dsf.as_ref().expect("a DSF run").ctrl_delay(port.from, v);
        self.dsf.grants += 1;
        self.dsf.granted += g;
        self.dsf.grants_in_flight += g;
        self.events
            .push(self.now + delay, GRANT << 56 | g << 32 | u64::from(q));
    }

    /// A grant of `g` bytes reaches VOQ `q`.
    fn on_grant(&mut self, q: u32, g: u64) {
        self.dsf.grants_in_flight -= g;
        self.voqs[q as usize].balance += g as i64;
        self.voq_send(q);
    }

    /// VOQ `q` sends its head packets into the fabric while its credit balance is positive.
    fn voq_send(&mut self, q: u32) {
        while self.voqs[q as usize].balance > 0 {
            let (fifo, Some(i)) = self.pop(self.voqs[q as usize].fifo) else {
                return;
            };
            let b = self.packets[i as usize].bytes;
            let voq = &mut self.voqs[q as usize];
            voq.fifo = fifo;
            voq.bytes -= u64::from(b);
            voq.balance -= i64::from(b);
            let (v, e) = (voq.ingress, voq.egress);
            self.dsf.sent += u64::from(b);
            if self.cfg.pfc.is_some() && self.packets[i as usize].kind == DATA {
                self.release_ingress(i);
            }
            let pk = &mut self.packets[i as usize];
            pk.port = e;
            pk.dsf = true;
            if self.topo.ports[e as usize].from == v {
                // Switched locally: no cells.
                self.enqueue(e, i);
            } else {
                self.send_cells(i, v, b);
            }
        }
    }

    /// Cut packet `i` (of `b` bytes, leaving interface node `v` toward its `port`'s node)
    /// into cells and spray them over the fabric.
    fn send_cells(&mut self, i: u32, v: u32, b: u32) {
        let t = self.topo;
        let d = t.dsf.as_ref().expect("a DSF run");
        let to = t.ports[self.packets[i as usize].port as usize].from;
        let row = d.dest[d.node[to as usize] as usize] * d.nodes as u32;
        let cell = self.cfg.dsf.cell_bytes.max(1);
        let n = b.div_ceil(cell);
        self.packets[i as usize].cells = n;
        self.dsf.cells_sent += u64::from(n);
        for k in 0..n {
            let c = match self.free_cells.pop() {
                Some(c) => c,
                None => {
                    self.cells.push(Cell::default());
                    self.cells.len() as u32 - 1
                }
            };
            self.cells[c as usize] = Cell {
                packet: i,
                port: 0,
                bytes: cell.min(b - k * cell),
                to,
                row,
            };
            self.cell_hop(c, v);
        }
    }

    /// Cell `c` leaves node `x` (a device) on the next fabric link toward its egress node,
    /// round robin over the live links one hop closer.
    fn cell_hop(&mut self, c: u32, x: u32) {
        let t = self.topo;
        let d = t.dsf.as_ref().expect("a DSF run");
        let entry = self.cells[c as usize].row as usize + d.node[x as usize] as usize;
        let (start, n) = d.table[entry];
        let r = &mut self.rr[entry];
        let p = d.members[(start + *r % n) as usize];
        *r = (*r + 1) % n;
        let port = t.ports[p as usize];
        let bytes = self.cells[c as usize].bytes;
        let st = &mut self.ports[p as usize];
        let start = st.free_ps.max(self.now);
        let wait = start - self.now;
        if wait > 0 {
            // Bytes still ahead of it on the link, and its wait (byte-picoseconds).
            let ahead = (wait as f64 * port.rate_bps as f64 / 8e12) as u64;
            st.peak = st.peak.max(ahead + u64::from(bytes));
            st.area += u128::from(bytes) * u128::from(wait);
        }
        let end = start + port.serialize_ps(bytes);
        st.free_ps = end;
        st.sent += u64::from(bytes);
        st.used = true;
        self.cells[c as usize].port = p;
        self.events
            .push(end + port.delay_ps, CELL << 56 | u64::from(c));
    }

    /// Cell `c` reaches the far end of its link: the next hop, or reassembly.
    fn on_cell(&mut self, c: u32) {
        let cell = self.cells[c as usize];
        let x = self.topo.ports[cell.port as usize].to;
        if x != cell.to {
            self.cell_hop(c, x);
            return;
        }
        self.free_cells.push(c);
        self.dsf.cells_reassembled += 1;
        let pk = &mut self.packets[cell.packet as usize];
        pk.cells -= 1;
        if pk.cells == 0 {
            let e = pk.port;
            self.enqueue(e, cell.packet);
        }
    }
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
    /// Simulated time, picoseconds.
    pub now_ps: u64,
    /// Events processed.
    pub events: u64,
}

/// Events between two progress reports (about a tenth of a second on one core).
const PROGRESS_EVENTS: u64 = 1 << 20;

/// [`run`], calling `progress` every 2^20 events and once at the end. The callback only
/// reads: the result is the same with any callback.
pub fn run_with_progress(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    gpus: &[DeviceId],
    cfg: &Config,
    progress: &mut dyn FnMut(&Progress),
) -> Result<PacketResult, PacketError> {
    if cfg.mtu_bytes <= cfg.header_bytes {
        return Err(PacketError::Invalid(format!(
            "--mtu {}: must exceed the {} B header",
            cfg.mtu_bytes, cfg.header_bytes
        )));
    }
    if (cfg.queue_bytes) < u64::from(cfg.mtu_bytes) {
        return Err(PacketError::Invalid(format!(
            "--queue-bytes {}: a queue must hold at least one MTU ({} B)",
            cfg.queue_bytes, cfg.mtu_bytes
        )));
    }
    if let Some(pfc) = cfg.pfc {
        // Below one packet, an empty ingress could never take one: every packet would be
        // dropped and resent for ever.
        if pfc.xoff_bytes < u64::from(cfg.mtu_bytes) {
            return Err(PacketError::Invalid(format!(
                "--pfc {}:{}: XOFF must hold at least one packet ({} B MTU)",
                pfc.xoff_bytes, pfc.xon_bytes, cfg.mtu_bytes
            )));
        }
    }
    if let Some((lo, hi)) = cfg.ecn_bytes {
        if lo >= hi {
            return Err(PacketError::Invalid(format!(
                "--ecn {lo}:{hi}: the first threshold must be below the second"
            )));
        }
    }
    if (gpus.len() as u64) < u64::from(tm.nodes) {
        return Err(PacketError::Invalid(format!(
            "the matrix has {} nodes but {} GPUs were placed",
            tm.nodes,
            gpus.len()
        )));
    }
    // Hosts: the GPUs the matrix names, in node order.
    let hosts: Vec<DeviceId> = gpus[..tm.nodes as usize].to_vec();
    let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(tm.flows.len());
    for fl in &tm.flows {
        if fl.src == fl.dst {
            return Err(PacketError::Invalid(format!(
                "flow {}: {} sends to itself; drop the line",
                fl.id, fl.src
            )));
        }
        pairs.push((fl.src, fl.dst));
    }
    let topo = Topo::build(
        net,
        &hosts,
        &pairs,
        cfg.lb,
        cfg.link_latency_ps,
        cfg.switch_latency_ps,
    )?;
    let resolved;
    let cfg = if cfg.cc == Cc::NsccAuto {
        resolved = Config {
            cc: Cc::Nscc(auto_params(&topo, &pairs, cfg)),
            ..cfg.clone()
        };
        &resolved
    } else if matches!(cfg.cc, Cc::DcqcnAuto | Cc::DcqcnHtsimAuto) {
        let nic = hosts_nic_rate(&topo);
        resolved = Config {
            cc: Cc::Dcqcn(if cfg.cc == Cc::DcqcnAuto {
                dcqcn::Params::for_line_rate(nic)
            } else {
                dcqcn::Params::htsim_steps(nic)
            }),
            ..cfg.clone()
        };
        &resolved
    } else {
        cfg
    };
    let payload = u64::from(cfg.mtu_bytes - cfg.header_bytes);
    // NSCC: the network's parameters, and with `nscc_path_rtt` one set per path base RTT.
    let mut nscc_params: Vec<nscc::Params> = match cfg.cc {
        Cc::Nscc(p) => vec![p],
        _ => Vec::new(),
    };
    // Keyed by (base RTT, NIC rate): the window is that path's BDP.
    let mut nscc_of: FxHashMap<(u64, u64), u32> = FxHashMap::default();
    // Every packet is at least one event on each hop: refuse what would take hours (and
    // tens of bytes of state per packet of the flows running) before allocating anything.
    let total: u64 = tm.flows.iter().map(|f| f.bytes.div_ceil(payload)).sum();
    if total > MAX_PACKETS {
        return Err(PacketError::Invalid(format!(
            "the matrix makes {total} packets of {payload} B, over the limit of {MAX_PACKETS} \
             (each packet is at least 2 events per hop: billions of events, hours at the engine's \
             3-15M events/s on 2 cores); use smaller flows or fewer of them, \
             or the flow engine (--engine flow)"
        )));
    }
    let mut flows = Vec::with_capacity(tm.flows.len());
    // Per (source rack, destination rack): the flow's timer and its NSCC parameters.
    let mut path_of: FxHashMap<(u32, u32), (u64, u32)> = FxHashMap::default();
    for (k, fl) in tm.flows.iter().enumerate() {
        let key = (
            topo.host_dest[fl.src as usize],
            topo.host_dest[fl.dst as usize],
        );
        let (rto_ps, nscc) = *path_of.entry(key).or_insert_with(|| {
            let rtt = base_rtt_ps(&topo, fl.src, fl.dst, cfg);
            let nscc = match cfg.cc {
                Cc::Nscc(p) if cfg.nscc_path_rtt => {
                    let rate = topo.ports[topo.host_up[fl.src as usize] as usize].rate_bps;
                    *nscc_of.entry((rtt, rate)).or_insert_with(|| {
                        nscc_params.push(p.for_peer(rate, rtt));
                        nscc_params.len() as u32 - 1
                    })
                }
                _ => 0,
            };
            (cfg.rto_ps.max(2 * rtt), nscc)
        });
        let packets = fl.bytes.div_ceil(payload);
        if packets > u64::from(u32::MAX / 2) {
            return Err(PacketError::Invalid(format!(
                "flow {}: {} bytes is too many packets for one flow",
                fl.id, fl.bytes
            )));
        }
        let packets = packets as u32;
        flows.push(Flow {
            id: fl.id,
            src: fl.src,
            dst: fl.dst,
            bytes: fl.bytes,
            packets,
            start_ps: 0,
            started: false,
            done: false,
            finish_ps: 0,
            done_trigger: fl.done_trigger,
            recv_trigger: fl.recv_trigger,
            next_new: 0,
            state: Vec::new(),
            acked: 0,
            retx: VecDeque::new(),
            in_flight_bytes: 0,
            cc: nscc_params
                .get(nscc as usize)
                .map_or_else(nscc::State::default, nscc::State::new),
            nscc,
            sent_ps: Vec::new(),
            ev: Vec::new(),
            sends: VecDeque::new(),
            rto_armed: false,
            rto_ps,
            rng: mix(cfg.seed ^ mix(fl.id ^ (k as u64) << 32)),
            good: VecDeque::new(),
            penalty: match cfg.lb {
                Lb::Spray(n) | Lb::Mixed(n) if n <= MAX_PENALIZED => vec![0; n as usize],
                _ => Vec::new(),
            },
            ev_next: u32::MAX,
            ev_offset: 0,
            got: Vec::new(),
            received: 0,
            pending: Vec::new(),
            pending_bytes: 0,
            pending_ecn: 0,
            ack_timer: false,
            rate: match cfg.cc {
                Cc::Dcqcn(p) => Some(dcqcn::State::new(&p, 0)),
                _ => None,
            },
            next_send_ps: 0,
            cnp: dcqcn::CnpPacer::new(),
            cleared: if cfg.admission.is_some() { 0 } else { u32::MAX },
            chunks_granted: 0,
            chunks_done: 0,
        });
    }
    let n_hosts = hosts.len();
    let mut sim = Sim {
        cfg,
        topo: &topo,
        now: 0,
        events: Events::new(),
        packets: Vec::new(),
        free: Vec::new(),
        sacks: Vec::new(),
        free_sacks: Vec::new(),
        ports: (0..topo.ports.len())
            .map(|_| PortState::default())
            .collect(),
        flows,
        active: vec![Vec::new(); n_hosts],
        robin: vec![0; n_hosts],
        nscc: nscc_params,
        salts: (0..topo.switches as u64)
            .map(|k| mix(cfg.seed ^ mix(k + 1)))
            .collect(),
        rng: mix(cfg.seed ^ 0x7061_636b_6574),
        counters: Counters::default(),
        injected: 0,
        delivered: 0,
        dropped: 0,
        trimmed_off: 0,
        waiting: FxHashMap::default(),
        kinds: tm.triggers.clone(),
        activations: FxHashMap::default(),
        fired: FxHashMap::default(),
        done_flows: 0,
        events_done: 0,
        ack_delay_ps: cfg.rto_ps / 4 * 3,
        pace_at: vec![0; n_hosts],
        admit_queue: vec![VecDeque::new(); n_hosts],
        outstanding: vec![0; n_hosts],
        pfc_pauses: 0,
        pfc_resumes: 0,
        pfc_drops: 0,
        headroom_short: 0,
        headroom_share_min: 1.0,
        headroom_min_device: NONE,
        cells: Vec::new(),
        free_cells: Vec::new(),
        voqs: Vec::new(),
        voq_of: FxHashMap::default(),
        sched_of: if topo.dsf.is_some() {
            vec![NONE; topo.ports.len()]
        } else {
            Vec::new()
        },
        scheds: Vec::new(),
        rr: topo
            .dsf
            .as_ref()
            .map_or(Vec::new(), |d| vec![0; d.table.len()]),
        dsf: DsfStats::default(),
    };
    if let Some(pfc) = cfg.pfc {
        let scale = if pfc.buffer_limited {
            headroom_scale(net, &pfc, cfg)
        } else {
            Vec::new()
        };
        for (st, port) in sim.ports.iter_mut().zip(&topo.ports) {
            // What a PAUSE on this link needs; the headroom given is this unless fixed.
            let physical =
                pfc_headroom_bytes(port.rate_bps, port.delay_ps, pfc.response_ps, cfg.mtu_bytes);
            let need = pfc.headroom_bytes.unwrap_or(physical);
            st.headroom = match scale.get(port.to as usize) {
                Some(&k) if k < 1.0 => (need as f64 * k) as u64,
                _ => need,
            };
            // Short links, counted where headroom means something: a switch's ingress over
            // an Ethernet link (hosts do not pause; DSF fabric links carry credited cells).
            let fabric = net
                .f
                .link(aifabric_model::LinkId::from_idx(port.resource as usize / 2))
                .kind
                == aifabric_model::PortKind::Fabric;
            let switch = topo.host_of_device[port.to as usize] == u32::MAX;
            if switch && !fabric && st.headroom < physical {
                sim.headroom_short += 1;
                let share = st.headroom as f64 / physical as f64;
                if share < sim.headroom_share_min {
                    sim.headroom_share_min = share;
                    sim.headroom_min_device = port.to;
                }
            }
        }
    }
    for (k, fl) in tm.flows.iter().enumerate() {
        match fl.start {
            Start::AtPs(t) => sim.events.push(t, START << 56 | k as u64),
            Start::Trigger(t) => sim.waiting.entry(t).or_default().push_back(k as u32),
        }
    }
    let total = sim.flows.len();
    while sim.done_flows < total {
        let Some(e) = sim.events.pop() else { break };
        if e.time_ps > cfg.end_ps {
            break;
        }
        sim.now = e.time_ps;
        sim.events_done += 1;
        if sim.events_done & (PROGRESS_EVENTS - 1) == 0 {
            progress(&Progress {
                flows_done: sim.done_flows as u64,
                flows: total as u64,
                now_ps: sim.now,
                events: sim.events_done,
            });
        }
        let id = (e.what & ID) as u32;
        match e.what >> 56 {
            TX_DONE => match topo.port_host[id as usize] {
                u32::MAX => sim.dequeue(id),
                host => {
                    sim.ports[id as usize].busy = false;
                    sim.try_send(host);
                }
            },
            ARRIVE => sim.arrive(id),
            START => sim.start_flow(id),
            RTO => sim.timeout(id),
            ACK_TIMER => sim.ack_timer(id),
            PAUSE => sim.pause(id, true),
            RESUME => sim.pause(id, false),
            CELL => sim.on_cell(id),
            REQUEST => sim.on_request(id, (e.what & ID) >> 32),
            GRANT => sim.on_grant(id, (e.what & ID) >> 32),
            SCHED => {
                sim.scheds[id as usize].timer = false;
                sim.sched_run(id);
            }
            _ => {
                if sim.pace_at[id as usize] == sim.now {
                    sim.try_send(id);
                }
            }
        }
        if cfg.check_conservation {
            sim.check();
        }
    }
    progress(&Progress {
        flows_done: sim.done_flows as u64,
        flows: total as u64,
        now_ps: sim.now,
        events: sim.events_done,
    });
    Ok(sim.result(net, tm))
}

/// The fastest NIC among the hosts, bits per second (DCQCN starts at line rate).
fn hosts_nic_rate(topo: &Topo) -> u64 {
    topo.host_up
        .iter()
        .map(|&p| topo.ports[p as usize].rate_bps)
        .max()
        .unwrap_or(1)
        .max(1)
}

/// NSCC parameters for the matrix's longest path ([`Cc::NsccAuto`]): the path of entropy 0
/// of each flow, through the forwarding tables.
fn auto_params(topo: &Topo, pairs: &[(u32, u32)], cfg: &Config) -> nscc::Params {
    let (mut worst, mut rate) = (0u64, 0u64);
    let mut seen: rustc_hash::FxHashSet<(u32, u32)> = Default::default();
    for &(s, d) in pairs {
        let (sr, dr) = (topo.host_dest[s as usize], topo.host_dest[d as usize]);
        if seen.insert((sr, dr)) {
            rate = rate.max(topo.ports[topo.host_up[s as usize] as usize].rate_bps);
            worst = worst.max(base_rtt_ps(topo, s, d, cfg));
        }
    }
    nscc::Params::for_path(rate.max(1), worst.max(1), cfg.mtu_bytes)
}

/// The base round trip from host `s` to host `d`, picoseconds: each hop of the path a flow
/// takes (its first next hop at every switch) twice over its delay, with an MTU and an ACK
/// serialized on it, plus, where the path crosses a DSF zone's scheduled fabric, the
/// request, grant and cells each way (the ACK is credited too).
fn base_rtt_ps(topo: &Topo, s: u32, d: u32, cfg: &Config) -> u64 {
    let mut rtt = 0u64;
    let mut p = topo.host_up[s as usize];
    for _ in 0..64 {
        let port = topo.ports[p as usize];
        rtt += 2 * port.delay_ps
            + port.serialize_ps(cfg.mtu_bytes)
            + port.serialize_ps(cfg.header_bytes);
        let v = port.to;
        if topo.host_of_device[v as usize] != u32::MAX {
            break;
        }
        let dest = topo.host_dest[d as usize];
        let rack = topo.dest_rack[dest as usize];
        p = if rack == v || topo.dsf.as_ref().is_some_and(|x| x.same_zone(v, rack)) {
            topo.host_down[d as usize]
        } else {
            let sw = topo.switch_index[v as usize] as usize;
            topo.members[topo.table[dest as usize * topo.switches + sw].0 as usize]
        };
        if let Some(x) = &topo.dsf {
            let w = topo.ports[p as usize].from;
            if v != w && x.scheduled(v, w) {
                rtt += 6 * x.ctrl_delay(v, w);
            }
        }
    }
    rtt
}

impl Sim<'_> {
    fn result(&mut self, net: &Net<'_>, tm: &TrafficMatrix) -> PacketResult {
        let end = self.now;
        for st in &mut self.ports {
            st.account(end);
        }
        let mut fcts: Vec<(u64, usize)> = Vec::new();
        let mut never = 0u64;
        let mut unfinished = 0u64;
        for (k, f) in self.flows.iter().enumerate() {
            if !f.started {
                never += 1;
            } else if !f.done {
                unfinished += 1;
            } else {
                fcts.push((f.finish_ps - f.start_ps, k));
            }
        }
        let s = |ps: u64| ps as f64 * 1e-12;
        let mut sorted = fcts.clone();
        sorted.sort_unstable();
        let rank = |q: f64| -> f64 {
            if sorted.is_empty() {
                return 0.0;
            }
            let r = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
            s(sorted[r - 1].0)
        };
        let fct = FctStats {
            min_s: sorted.first().map_or(0.0, |x| s(x.0)),
            p50_s: rank(0.5),
            p99_s: rank(0.99),
            max_s: sorted.last().map_or(0.0, |x| s(x.0)),
            mean_s: if sorted.is_empty() {
                0.0
            } else {
                sorted.iter().map(|x| s(x.0)).sum::<f64>() / sorted.len() as f64
            },
        };
        let mut slow = fcts.clone();
        slow.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let gpus_name = |h: u32| net.f.device_name(DeviceId::new(self.topo_host_device(h)));
        let slowest = slow
            .iter()
            .take(SLOWEST)
            .map(|&(ps, k)| {
                let f = &self.flows[k];
                SlowFlow {
                    id: f.id,
                    pair: format!("{} -> {}", gpus_name(f.src), gpus_name(f.dst)),
                    bytes: f.bytes,
                    start_s: s(f.start_ps),
                    fct_s: s(ps),
                }
            })
            .collect();
        let makespan = self
            .flows
            .iter()
            .filter(|f| f.done)
            .map(|f| f.finish_ps)
            .max()
            .unwrap_or(0);
        // Queues per tier, over the ports that carried something.
        let mut tiers: Vec<(String, u64, u64, u128)> = Vec::new();
        let mut index: FxHashMap<String, usize> = FxHashMap::default();
        for (p, st) in self.ports.iter().enumerate() {
            if !st.used {
                continue;
            }
            let name = net.resource_tier(self.topo.ports[p].resource);
            let k = *index.entry(name.clone()).or_insert_with(|| {
                tiers.push((name, 0, 0, 0));
                tiers.len() - 1
            });
            tiers[k].1 += 1;
            tiers[k].2 = tiers[k].2.max(st.peak);
            tiers[k].3 += st.area;
        }
        tiers.sort_by(|a, b| a.0.cmp(&b.0));
        let queues = tiers
            .into_iter()
            .map(|(tier, ports, peak, area)| TierQueues {
                tier,
                ports,
                peak_bytes: peak,
                mean_bytes: if end > 0 {
                    area as f64 / end as f64 / ports as f64
                } else {
                    0.0
                },
            })
            .collect();
        // The busiest links (ties by port order, which follows first use).
        let mut by_load: Vec<(u64, usize)> = self
            .ports
            .iter()
            .enumerate()
            .filter(|(_, st)| st.sent > 0)
            .map(|(p, st)| (st.sent, p))
            .collect();
        by_load.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let busiest = by_load
            .iter()
            .take(BUSIEST)
            .map(|&(bytes, p)| crate::LinkLoad {
                link: net.resource_name(self.topo.ports[p].resource),
                bytes,
                peak_queue_bytes: self.ports[p].peak,
            })
            .collect();
        let pfc = self.cfg.pfc.map(|p| self.pfc_result(net, end, &p));
        let dsf = self.topo.dsf.as_ref().map(|d| self.dsf_result(net, d, end));
        PacketResult {
            pfc,
            dsf,
            busiest,
            flows: self.flows.len() as u64,
            bytes: tm.flows.iter().map(|f| f.bytes).sum(),
            makespan_s: s(makespan),
            fct,
            slowest,
            never_started: never,
            unfinished,
            counters: self.counters.clone(),
            queues,
            events: self.events_done,
            max_rto_s: s(self
                .flows
                .iter()
                .map(|f| f.rto_ps)
                .max()
                .unwrap_or(self.cfg.rto_ps)),
            config: self.cfg.clone(),
        }
    }

    /// Pauses per tier, the frames and the drops.
    fn pfc_result(&self, net: &Net<'_>, end: u64, pfc: &crate::Pfc) -> PfcResult {
        let mut tiers: Vec<TierPauses> = Vec::new();
        let (mut xon_short, mut round_trip_max) = (0u64, 0u64);
        for (p, st) in self.ports.iter().enumerate() {
            if st.pauses_received == 0 {
                continue;
            }
            let port = &self.topo.ports[p];
            let round_trip = pfc_headroom_bytes(port.rate_bps, port.delay_ps, pfc.response_ps, 0);
            if pfc.xon_bytes < round_trip {
                xon_short += 1;
                round_trip_max = round_trip_max.max(round_trip);
            }
            let paused = st.paused_ps
                + if st.paused {
                    end - st.paused_since_ps
                } else {
                    0
                };
            let paused_s = paused as f64 * 1e-12;
            let tier = net.resource_tier(self.topo.ports[p].resource);
            let t = match tiers.iter().position(|t| t.tier == tier) {
                Some(k) => &mut tiers[k],
                None => {
                    tiers.push(TierPauses {
                        tier,
                        ports_paused: 0,
                        pauses: 0,
                        paused_s: 0.0,
                        max_paused_s: 0.0,
                    });
                    tiers.last_mut().expect("just pushed")
                }
            };
            t.ports_paused += 1;
            t.pauses += st.pauses_received;
            t.paused_s += paused_s;
            t.max_paused_s = t.max_paused_s.max(paused_s);
        }
        tiers.sort_by(|a, b| a.tier.cmp(&b.tier));
        PfcResult {
            pauses: self.pfc_pauses,
            resumes: self.pfc_resumes,
            headroom_drops: self.pfc_drops,
            peak_ingress_bytes: self
                .ports
                .iter()
                .map(|st| st.ingress_peak)
                .max()
                .unwrap_or(0),
            ports_short_of_headroom: self.headroom_short,
            min_headroom_share: self.headroom_share_min,
            min_headroom_switch: (self.headroom_min_device != NONE).then(|| {
                net.f
                    .device_name(DeviceId::from_idx(self.headroom_min_device as usize))
            }),
            paused_ports_xon_below_round_trip: xon_short,
            max_round_trip_bytes: round_trip_max,
            tiers,
        }
    }

    /// Credits, cells, VOQ peaks per role and fabric-link utilization per tier.
    fn dsf_result(&self, net: &Net<'_>, d: &crate::dsf::DsfTopo, end: u64) -> crate::DsfResult {
        let mut voqs: Vec<crate::TierVoqs> = Vec::new();
        for q in &self.voqs {
            let tier = net
                .f
                .device(DeviceId::new(q.ingress))
                .role
                .as_str()
                .to_string();
            let t = match voqs.iter().position(|t| t.tier == tier) {
                Some(k) => &mut voqs[k],
                None => {
                    voqs.push(crate::TierVoqs {
                        tier,
                        voqs: 0,
                        peak_bytes: 0,
                    });
                    voqs.last_mut().expect("just pushed")
                }
            };
            t.voqs += 1;
            t.peak_bytes = t.peak_bytes.max(q.peak);
        }
        voqs.sort_by(|a, b| a.tier.cmp(&b.tier));
        // Per tier: links, bytes, capacity (bits/s) and the busiest link's utilization.
        let mut tiers: Vec<(String, u64, u64, u128, f64)> = Vec::new();
        let secs = end as f64 * 1e-12;
        for &p in &d.fabric_ports {
            let port = self.topo.ports[p as usize];
            if self.ports[p as usize].sent == 0 {
                continue;
            }
            let tier = net.resource_tier(port.resource);
            let k = match tiers.iter().position(|t| t.0 == tier) {
                Some(k) => k,
                None => {
                    tiers.push((tier, 0, 0, 0, 0.0));
                    tiers.len() - 1
                }
            };
            let sent = self.ports[p as usize].sent;
            let t = &mut tiers[k];
            t.1 += 1;
            t.2 += sent;
            t.3 += u128::from(port.rate_bps);
            if secs > 0.0 {
                t.4 = t.4.max(sent as f64 * 8.0 / (port.rate_bps as f64 * secs));
            }
        }
        tiers.sort_by(|a, b| a.0.cmp(&b.0));
        crate::DsfResult {
            settings: self.cfg.dsf,
            packets: self.dsf.packets,
            requests: self.dsf.requests,
            grants: self.dsf.grants,
            credits_granted_bytes: self.dsf.granted,
            sent_bytes: self.dsf.sent,
            queued_bytes: self.voqs.iter().map(|q| q.bytes).sum(),
            cells_sent: self.dsf.cells_sent,
            cells_reassembled: self.dsf.cells_reassembled,
            voqs,
            fabric: tiers
                .into_iter()
                .map(|(tier, links, bytes, bps, max)| crate::FabricTier {
                    tier,
                    links,
                    bytes,
                    mean_utilization: if secs > 0.0 && bps > 0 {
                        bytes as f64 * 8.0 / (bps as f64 * secs)
                    } else {
                        0.0
                    },
                    max_utilization: max,
                })
                .collect(),
        }
    }

    fn topo_host_device(&self, h: u32) -> u32 {
        self.topo.host_device[h as usize]
    }
}

/// Per device, the share of its ports' headroom needs its buffer holds (1: all of it): the
/// model's HBM + SRAM less XOFF for each live Ethernet or host port, over the sum of those ports'
/// needs, each for its link's rate and delay (cable at 5 ns/m, or the run's one latency, and
/// the switch's forwarding latency) as [`pfc_headroom_bytes`] gives it.
fn headroom_scale(net: &Net<'_>, pfc: &crate::Pfc, cfg: &Config) -> Vec<f64> {
    let f = net.f;
    (0..f.devices().len())
        .map(|d| {
            let id = DeviceId::from_idx(d);
            if f.device(id).role == aifabric_model::Role::Gpu {
                return 1.0;
            }
            let (mut need, mut ports) = (0u128, 0u64);
            for &l in f.incident(id) {
                let link = f.link(l);
                // Ethernet and host ports hold headroom; DSF fabric ports carry credited cells.
                if link.kind == aifabric_model::PortKind::Fabric || !f.link_up(l, &net.down) {
                    continue;
                }
                let prop = cfg.link_latency_ps.unwrap_or_else(|| {
                    (link.length_m() * crate::topo::PS_PER_M as f64).round() as u64
                });
                let rate = u64::from(link.capacity_mbps) * 1_000_000;
                need += u128::from(pfc.headroom_bytes.unwrap_or_else(|| {
                    pfc_headroom_bytes(
                        rate,
                        prop + cfg.switch_latency_ps,
                        pfc.response_ps,
                        cfg.mtu_bytes,
                    )
                }));
                ports += 1;
            }
            let hw = f.hardware(id);
            let buffer = u128::from(hw.hbm_bytes + hw.sram_bytes);
            let room = buffer.saturating_sub(u128::from(ports) * u128::from(pfc.xoff_bytes));
            if need == 0 || room >= need {
                1.0
            } else {
                room as f64 / need as f64
            }
        })
        .collect()
}

/// PFC headroom of one ingress link: what arrives after XOFF is crossed and before the
/// PAUSE takes effect upstream, `R x (2 x delay + response) + 2 MTU` bytes (the design-time
/// formula, `H = R x (2 L x 5 ns/m + t_response) + 2 MTU`, with the link's modelled delay:
/// the PAUSE travels back over the link while the data already on it keeps coming; one MTU
/// in serialization upstream, one crossing the threshold).
pub fn pfc_headroom_bytes(rate_bps: u64, delay_ps: u64, response_ps: u64, mtu: u32) -> u64 {
    let ps = u128::from(2 * delay_ps + response_ps);
    (u128::from(rate_bps) * ps).div_ceil(8_000_000_000_000) as u64 + 2 * u64::from(mtu)
}
