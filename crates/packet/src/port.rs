//! Ports: a NIC's or a switch's egress, with a high-priority class (trimmed headers and
//! control packets, served first) and a data class limited in bytes; ECN marking on dequeue,
//! trimming or dropping what does not fit.

use crate::event::Event;
use crate::ids::{PacketId, PortId};
use crate::packet::{Fifo, Kind, SackCopy};
use crate::partition::Remote;
use crate::sim::{next_rand, Sim};
use crate::topo::Port;

/// One directed port's state: what every packet through it reads and writes, two cache
/// lines (64-byte aligned, 128 bytes): the queues on the first, what it sent, its DSF clock
/// and a copy of its static side ([`Port`]) on the second, so that queueing a packet and
/// putting it on the wire touch one port's lines, not three or four of two arrays. PFC's
/// ingress accounting, rarer, is kept apart ([`crate::pfc::PortPfc`]).
#[repr(C, align(64))]
pub(crate) struct PortState {
    /// Occupancy integrated over time, byte-picoseconds.
    pub area: u128,
    pub since_ps: u64,
    pub hi_bytes: u64,
    pub lo_bytes: u64,
    pub hi: Fifo,
    pub lo: Fifo,
    pub busy: bool,
    /// PFC, as the upstream side of the link: no data leaves.
    pub paused: bool,
    /// Bytes sent (every packet and cell has some: a port was used if this is not 0).
    pub sent: u64,
    pub peak: u64,
    /// DSF fabric port: when its last cell is serialized (cells are FIFO at the link's rate).
    pub free_ps: u64,
    /// The port itself, as [`crate::topo::Topo::ports`] has it.
    pub wire: Port,
}

const _: () = assert!(std::mem::size_of::<PortState>() == 128);

impl PortState {
    /// An idle port `wire`.
    pub fn new(wire: Port) -> PortState {
        PortState {
            area: 0,
            since_ps: 0,
            hi_bytes: 0,
            lo_bytes: 0,
            hi: Fifo::default(),
            lo: Fifo::default(),
            busy: false,
            paused: false,
            sent: 0,
            peak: 0,
            free_ps: 0,
            wire,
        }
    }

    /// Integrate the occupancy up to `now`.
    #[inline]
    pub fn account(&mut self, now: u64) {
        self.area += u128::from(self.hi_bytes + self.lo_bytes) * u128::from(now - self.since_ps);
        self.since_ps = now;
    }
}

impl Sim<'_> {
    /// Put packet `i` on port `p`'s wire now.
    pub(crate) fn transmit(&mut self, p: PortId, i: PacketId) {
        let bytes = self.packets[i].bytes;
        self.packets[i].port = p;
        let st = &mut self.ports[p.idx()];
        let port = st.wire;
        let ser = port.serialize_ps(bytes);
        st.busy = true;
        debug_assert!(bytes > 0, "a packet of no bytes");
        st.sent += u64::from(bytes);
        self.events.push(self.now + ser, Event::TxDone(p));
        let at = self.now + ser + port.delay_ps;
        if let Some(link) = &mut self.part {
            let to = link.map.of(port.to) as u16;
            if to != link.me {
                // Another part's device: the packet goes to it between windows.
                let sack = self.packets[i]
                    .sack
                    .map(|s| SackCopy::from_slice(self.packets.sack(s)));
                let pk = self.packets[i];
                self.packets.release(i);
                link.send(to, at, Remote::Packet(pk, sack));
                return;
            }
        }
        self.events.push(at, Event::Arrive(i));
    }

    /// Schedule `e` at `time_ps` on port `p`: here, or through the part that owns `p`.
    pub(crate) fn at_port(&mut self, p: PortId, time_ps: u64, e: Event) {
        if let Some(link) = &mut self.part {
            let to = link.map.of(self.topo.ports[p.idx()].from) as u16;
            if to != link.me {
                link.send(to, time_ps, Remote::Event(e));
                return;
            }
        }
        self.events.push(time_ps, e);
    }

    /// Take the head of port `p`'s high-priority class, if any.
    pub(crate) fn pop_hi(&mut self, p: PortId) -> Option<PacketId> {
        let (hi, i) = self.packets.pop(self.ports[p.idx()].hi);
        let i = i?;
        let st = &mut self.ports[p.idx()];
        st.hi = hi;
        st.hi_bytes -= u64::from(self.packets[i].bytes);
        Some(i)
    }

    /// Start the next queued packet on a switch port (high priority first), marking data
    /// packets ECN on dequeue.
    pub(crate) fn dequeue(&mut self, p: PortId) {
        self.ports[p.idx()].account(self.now);
        let lo = self.ports[p.idx()].lo;
        let i = if let Some(i) = self.pop_hi(p) {
            i
        } else if let (false, (lo, Some(i))) = (self.ports[p.idx()].paused, self.packets.pop(lo)) {
            let st = &mut self.ports[p.idx()];
            st.lo = lo;
            st.lo_bytes -= u64::from(self.packets[i].bytes);
            let q = st.lo_bytes;
            // A packet out of a DSF zone's fabric had its ingress count released when it
            // left its VOQ; once it leaves this switch it is an ordinary packet again (the
            // next switch counts it, and releases it here).
            let counted = !std::mem::replace(&mut self.packets[i].dsf, false);
            if self.cfg.pfc.is_some() && counted {
                self.release_ingress(i);
            }
            self.ecn_mark(i, q);
            i
        } else {
            self.ports[p.idx()].busy = false;
            return;
        };
        self.transmit(p, i);
    }

    /// Mark data packet `i` ECN, leaving a data class of `q` bytes: never below the first
    /// threshold, always above the second, in between with a linear probability.
    fn ecn_mark(&mut self, i: PacketId, q: u64) {
        let Some((lo, hi)) = self.cfg.ecn_bytes else {
            return;
        };
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
        if mark && !self.packets[i].ecn {
            self.packets[i].ecn = true;
            self.counters.ecn_marked += 1;
        }
    }

    /// Queue packet `i` on switch port `p` (trimming or dropping what does not fit).
    pub(crate) fn enqueue(&mut self, p: PortId, i: PacketId) {
        let bytes = u64::from(self.packets[i].bytes);
        let data = self.packets[i].kind == Kind::Data;
        self.ports[p.idx()].account(self.now);
        if data {
            let st = &self.ports[p.idx()];
            // Lossless: the ingress accounting bounds the buffer, not the egress queue.
            if self.cfg.pfc.is_some() || st.lo_bytes + bytes <= self.cfg.queue_bytes {
                let lo = self.packets.push(st.lo, i);
                let st = &mut self.ports[p.idx()];
                st.lo = lo;
                st.lo_bytes += bytes;
            } else if self.cfg.trim {
                // The victim: the arrival, or (half the time) the last data packet queued,
                // whose place the arrival takes when it fits there. Queued packets are named
                // only by their queue, so the two swap slots: the tail's slot takes the
                // arrival, the arrival's slot the victim.
                if let Some(j) = self.ports[p.idx()].lo.tail {
                    let jb = u64::from(self.packets[j].bytes);
                    let st = &self.ports[p.idx()];
                    if next_rand(&mut self.rng) & 1 == 1
                        && st.lo_bytes - jb + bytes <= self.cfg.queue_bytes
                    {
                        self.packets.slots.swap(i.idx(), j.idx());
                        self.packets[j].next = None;
                        let st = &mut self.ports[p.idx()];
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
        if !self.ports[p.idx()].busy {
            self.dequeue(p);
        }
    }

    /// Queue packet `i` in port `p`'s high-priority class (dropping it if full).
    pub(crate) fn enqueue_hi(&mut self, p: PortId, i: PacketId) {
        let bytes = u64::from(self.packets[i].bytes);
        let st = &self.ports[p.idx()];
        // A clear-to-send is never dropped: nothing would send it again (the collective
        // library retries its own; here it is simply kept).
        if st.hi_bytes + bytes <= self.cfg.priority_queue_bytes || self.packets[i].kind == Kind::Cts
        {
            let hi = self.packets.push(st.hi, i);
            let st = &mut self.ports[p.idx()];
            st.hi = hi;
            st.hi_bytes += bytes;
        } else {
            self.drop_packet(i);
        }
    }

    pub(crate) fn note_peak(&mut self, p: PortId) {
        let st = &mut self.ports[p.idx()];
        st.peak = st.peak.max(st.hi_bytes + st.lo_bytes);
    }

    /// Cut data packet `i` to its header.
    fn trim(&mut self, i: PacketId) {
        let h = self.cfg.header_bytes;
        let pk = &mut self.packets[i];
        self.ledger.trimmed_off += u64::from(pk.bytes - h);
        pk.bytes = h;
        pk.kind = Kind::Header;
        self.counters.trimmed += 1;
    }

    pub(crate) fn drop_packet(&mut self, i: PacketId) {
        self.ledger.dropped += u64::from(self.packets[i].bytes);
        self.counters.dropped += 1;
        self.packets.release(i);
    }
}

impl Sim<'_> {
    /// Port `p` finished serializing its packet: a switch port starts its next, a NIC lets
    /// its host send.
    pub(crate) fn tx_done(&mut self, p: PortId) {
        match self.topo.port_host[p.idx()] {
            None => self.dequeue(p),
            Some(host) => {
                self.ports[p.idx()].busy = false;
                self.try_send(host);
            }
        }
    }

    /// Packet `i` reaches the far end of its port: a switch, or its host.
    pub(crate) fn arrive(&mut self, i: PacketId) {
        let p = self.packets[i].port;
        let v = self.topo.port_to[p.idx()];
        match self.topo.host_of_device[v.idx()] {
            None => self.at_switch(v, p, i),
            Some(_) => self.at_host(i),
        }
    }
}
