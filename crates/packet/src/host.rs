//! Hosts: senders and receivers. A host's NIC sends its control packets first, then the
//! next data packet of its active flows, round robin, that the flow's window (or pacing)
//! allows; retransmissions before new packets. The receiver acknowledges every
//! `ack_every_bytes` (selectively), at once for a mark, a request, a duplicate or the last
//! packet, and at the latest after `ack_delay_ps`; it answers a trimmed header with a NACK.
//! The sender resends NACKed packets at once and a packet in flight for a timeout.

use crate::event::Event;
use crate::flow::Sent;
use crate::ids::{FlowId, HostId, PacketId};
use crate::packet::{Kind, Packet};
use crate::sim::{next_rand, Sim};
use crate::PacketLb;
use smallvec::SmallVec;
use std::collections::VecDeque;

/// One host's sending side (a cache line of its own).
#[derive(Clone, Default)]
#[repr(align(64))]
pub(crate) struct Host {
    /// Its active flows (round robin) and where the robin is: up to four inline, so that
    /// the host's line holds the flow it sends next.
    pub active: SmallVec<[FlowId; 4]>,
    pub robin: usize,
    /// When a PACE event is due (paced laws).
    pub pace_at: u64,
}

impl Sim<'_> {
    /// Let host `h` send: control packets first, then the next data packet of its active
    /// flows, round robin, that its window allows.
    pub(crate) fn try_send(&mut self, h: HostId) {
        let p = self.topo.host_up[h.idx()];
        if self.ports[p.idx()].busy {
            return;
        }
        self.ports[p.idx()].account(self.now);
        if let Some(i) = self.pop_hi(p) {
            self.transmit(p, i);
            return;
        }
        if self.ports[p.idx()].paused {
            return;
        }
        let n = self.hosts[h.idx()].active.len();
        for k in 0..n {
            let slot = (self.hosts[h.idx()].robin + k) % n;
            let fi = self.hosts[h.idx()].active[slot];
            if let Some(i) = self.next_data(fi) {
                self.hosts[h.idx()].robin = slot + 1;
                self.ledger.injected += u64::from(self.packets[i].bytes);
                self.transmit(p, i);
                return;
            }
        }
        if self.cc.paced {
            // Nothing may go now: wake up when the first paced flow may.
            let now = self.now;
            let next = self.hosts[h.idx()]
                .active
                .iter()
                .filter_map(|&fi| self.flows[fi.idx()].cc.next_send_ps())
                .filter(|&t| t > now)
                .min();
            if let Some(t) = next {
                let at = &mut self.hosts[h.idx()].pace_at;
                if *at <= now || t < *at {
                    *at = t;
                    self.events.push(t, Event::Pace(h));
                }
            }
        }
    }

    /// A PACE event for host `h`: it sends if this is the wake-up it asked for last.
    pub(crate) fn pace(&mut self, h: HostId) {
        if self.hosts[h.idx()].pace_at == self.now {
            self.try_send(h);
        }
    }

    /// The next data packet flow `fi` may send now, if any.
    fn next_data(&mut self, fi: FlowId) -> Option<PacketId> {
        let (mtu, hdr) = (self.cfg.mtu_bytes, self.cfg.header_bytes);
        let lb = self.cfg.lb;
        let now = self.now;
        let f = &mut self.flows[fi.idx()];
        // Retransmissions first (skipping packets acknowledged meanwhile).
        while let Some(&s) = f.retx.front() {
            if f.state[s as usize] == Sent::Lost {
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
        let window = f.cc.window_bytes();
        if f.in_flight_bytes > 0 && f.in_flight_bytes + u64::from(bytes) > window {
            return None;
        }
        if !f.cc.pace(&self.cc, bytes, now) {
            return None;
        }
        if again {
            f.retx.pop_front();
            self.counters.data_retransmitted += 1;
        } else {
            f.next_new += 1;
            self.counters.data_new += 1;
        }
        f.state[seq as usize] = Sent::InFlight;
        f.in_flight_bytes += u64::from(bytes);
        f.sent_ps[seq as usize] = now;
        f.sends.push_back((now, seq));
        // REPS (Bonato et al., "REPS: Recycled Entropy Packet Spraying", arXiv 2407.21625):
        // reuse an entropy value whose packet was acknowledged unmarked; else draw one.
        let entropy = match lb {
            PacketLb::Spray(n) | PacketLb::Mixed(n) => match f.good.pop_front() {
                Some(e) => e,
                None => f.fresh_entropy(n),
            },
            // Adaptive routing breaks ties between equally short queues per packet.
            PacketLb::Adaptive => (next_rand(&mut f.rng) >> 48) as u32,
            PacketLb::Ecmp => 0,
        };
        if let Some(x) = f.ev.get_mut(seq as usize) {
            *x = entropy;
        }
        let window_full = f.in_flight_bytes + u64::from(mtu) > window;
        let last = f.next_new == f.packets && f.retx.is_empty();
        let arm = !f.rto_armed;
        f.rto_armed = true;
        let port = self.topo.host_up[f.src.idx()];
        let pk = Packet {
            ack_request: again || window_full || last,
            entropy,
            stamp_ps: now,
            again,
            ..Packet::new(fi, seq, Kind::Data, bytes, port)
        };
        if arm {
            let rto = f.rto_ps;
            self.events.push(now + rto, Event::Rto(fi));
        }
        Some(self.alloc_packet(pk))
    }

    /// Flow `fi` starts now (at its time, or when its trigger fired).
    pub(crate) fn start_flow(&mut self, fi: FlowId) {
        let f = &mut self.flows[fi.idx()];
        if f.started {
            return;
        }
        f.started = true;
        f.start_ps = self.forward.real(self.now);
        f.cc.on_start(&self.cc, self.now);
        // Per-packet state lives from the start to the end of the flow.
        let n = f.packets as usize;
        f.state = vec![Sent::Unsent; n];
        f.sent_ps = vec![0; n];
        if matches!(self.cfg.lb, PacketLb::Spray(_)) {
            f.ev = vec![0; n];
        }
        f.got = vec![0; n.div_ceil(64)];
        let h = f.src;
        if f.packets == 0 {
            self.finish(fi);
            return;
        }
        self.hosts[h.idx()].active.push(fi);
        if self.cfg.admission.is_some() {
            let dst = self.flows[fi.idx()].dst;
            self.receivers[dst.idx()].queue.push_back(fi);
            self.grant(dst);
        }
        self.try_send(h);
    }

    /// Flow `fi`'s sender holds its last ACK (or it had nothing to send).
    fn finish(&mut self, fi: FlowId) {
        let now = self.now;
        let f = &mut self.flows[fi.idx()];
        if f.done {
            return;
        }
        f.done = true;
        f.finish_ps = self.forward.real(now);
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
        let host = &mut self.hosts[h.idx()];
        if let Some(pos) = host.active.iter().position(|&x| x == fi) {
            host.active.remove(pos);
            let n = host.active.len().max(1);
            host.robin %= n;
        }
        for t in [trig, recv].into_iter().flatten() {
            self.activate(t);
        }
    }

    /// Packet `i` reaches its host `h`.
    pub(crate) fn at_host(&mut self, i: PacketId) {
        let pk = self.packets[i];
        self.ledger.delivered += u64::from(pk.bytes);
        if pk.kind != Kind::Ack {
            self.packets.release(i);
        }
        match pk.kind {
            Kind::Ack => {
                // Its SACK list goes back to the pool with it: read it first.
                self.receive_ack(pk);
                self.packets.release(i);
            }
            Kind::Data => self.receive_data(pk),
            Kind::Header => {
                self.counters.nacks += 1;
                self.send_back(pk.flow, pk.seq, Kind::Nack, pk.entropy, pk.stamp_ps);
            }
            Kind::Cts => self.receive_cts(pk),
            Kind::Cnp => {
                let f = &mut self.flows[pk.flow.idx()];
                f.cc.on_cnp(&self.cc, self.now);
            }
            Kind::Nack => self.receive_nack(pk),
        }
    }

    /// A control packet of `kind` for flow `flow`, from its receiver back to its sender.
    pub(crate) fn send_back(
        &mut self,
        flow: FlowId,
        seq: u32,
        kind: Kind,
        entropy: u32,
        stamp_ps: u64,
    ) {
        let dst = self.flows[flow.idx()].dst;
        let port = self.topo.host_up[dst.idx()];
        self.send_control(
            dst,
            Packet {
                entropy,
                stamp_ps,
                ..Packet::new(flow, seq, kind, self.cfg.header_bytes, port)
            },
        );
    }

    /// Host `h` queues control packet `pk` on its NIC, ahead of data.
    fn send_control(&mut self, h: HostId, pk: Packet) {
        let i = self.alloc_packet(pk);
        let p = self.topo.host_up[h.idx()];
        self.ledger.injected += u64::from(pk.bytes);
        self.ports[p.idx()].account(self.now);
        let hi = self.packets.push(self.ports[p.idx()].hi, i);
        let st = &mut self.ports[p.idx()];
        st.hi = hi;
        st.hi_bytes += u64::from(pk.bytes);
        self.note_peak(p);
        self.try_send(h);
    }

    fn receive_data(&mut self, pk: Packet) {
        let every = u64::from(self.cfg.ack_every_bytes);
        let now = self.now;
        let delay = self.ack_delay_ps;
        let f = &mut self.flows[pk.flow.idx()];
        if f.got.is_empty() {
            // A partitioned run's receiving part: the sender's part started the flow.
            f.got = vec![0; (f.packets as usize).div_ceil(64)];
        }
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
        let cnp = pk.ecn && f.cc.on_marked(&self.cc, now);
        // A duplicate is acknowledged again (at once): the sender may have presumed it lost.
        f.pending.push(pk.seq);
        let complete = f.received == f.packets;
        let delivered = (new && complete).then_some(f.recv_trigger).flatten();
        if new && self.cfg.admission.is_some() {
            self.chunk_received(pk.flow);
        }
        if cnp {
            self.counters.cnps += 1;
            self.send_back(pk.flow, pk.seq, Kind::Cnp, pk.entropy, 0);
        }
        let f = &mut self.flows[pk.flow.idx()];
        // At once: a mark (its echo must not wait), the first packet, a packet asking for
        // it, the last one; else every `every` bytes.
        let now_ack = pk.ecn || f.received == 1 || pk.ack_request || complete || !new;
        if !(now_ack || f.pending_bytes >= every) {
            // What is held is acknowledged at the latest `ack_delay_ps` after it came: a
            // window cut below the ACK threshold cannot stall the sender until a timeout.
            if !f.ack_timer {
                f.ack_timer = true;
                self.events.push(now + delay, Event::AckTimer(pk.flow));
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
        let f = &mut self.flows[pk.flow.idx()];
        let sack = self.packets.new_sack(&mut f.pending);
        let dst = f.dst;
        let ack = Packet {
            entropy: pk.entropy,
            stamp_ps: pk.stamp_ps,
            sack: Some(sack),
            ecn_bytes: f.pending_ecn,
            again: pk.again,
            ..Packet::new(
                pk.flow,
                pk.seq,
                Kind::Ack,
                self.cfg.header_bytes,
                self.topo.host_up[dst.idx()],
            )
        };
        f.pending_bytes = 0;
        f.pending_ecn = 0;
        self.counters.acks += 1;
        self.send_control(dst, ack);
    }

    fn receive_ack(&mut self, pk: Packet) {
        let (mtu, hdr) = (self.cfg.mtu_bytes, self.cfg.header_bytes);
        let now = self.now;
        let f = &mut self.flows[pk.flow.idx()];
        if f.done {
            // A late ACK (of a duplicate) after the flow completed.
            return;
        }
        let mut newly = 0u64;
        // A marked packet is acknowledged at once (`receive_data`), so an ACK carries at
        // most one mark, its trigger's: with `spray`, every other packet it newly covers
        // came back unmarked and its entropy value is recycled.
        let per_packet = matches!(self.cfg.lb, PacketLb::Spray(_));
        let sack = pk.sack.expect("an ACK has its SACK list");
        for &s in self.packets.sack(sack) {
            match f.state[s as usize] {
                Sent::InFlight => {
                    if per_packet && !(s == pk.seq && pk.ecn_bytes > 0) {
                        let e = f.ev[s as usize];
                        f.recycle(e);
                    }
                    let b = u64::from(f.wire_bytes(s, mtu, hdr));
                    f.in_flight_bytes -= b;
                    newly += b;
                    f.state[s as usize] = Sent::Acked;
                    f.acked += 1;
                    self.packets_acked += 1;
                }
                Sent::Lost => {
                    newly += u64::from(f.wire_bytes(s, mtu, hdr));
                    f.state[s as usize] = Sent::Acked;
                    f.acked += 1;
                    self.packets_acked += 1;
                }
                Sent::Unsent | Sent::Acked => {}
            }
        }
        if self.cfg.lb.entropies().is_some() {
            if pk.ecn_bytes == 0 {
                // `mixed` (htsim's feedback): only the value the ACK echoes.
                if !per_packet {
                    f.recycle(pk.entropy);
                }
            } else {
                f.penalize(pk.entropy, 1);
            }
        }
        let rtt = (!pk.again).then(|| now.saturating_sub(pk.stamp_ps));
        let ack = crate::cc::Ack {
            acked: newly,
            marked: u64::from(pk.ecn_bytes),
            rtt_ps: rtt,
            in_flight: f.in_flight_bytes,
        };
        f.cc.on_ack(&self.cc, now, ack);
        let (done, src) = (f.acked == f.packets, f.src);
        if done {
            self.finish(pk.flow);
        }
        self.try_send(src);
    }

    fn receive_nack(&mut self, pk: Packet) {
        let (mtu, hdr) = (self.cfg.mtu_bytes, self.cfg.header_bytes);
        let now = self.now;
        let f = &mut self.flows[pk.flow.idx()];
        f.penalize(pk.entropy, 4);
        // A NACK of an earlier copy says nothing about the one in flight now.
        let current = f.state.get(pk.seq as usize) == Some(&Sent::InFlight)
            && f.sent_ps[pk.seq as usize] == pk.stamp_ps;
        if current {
            let bytes = u64::from(f.wire_bytes(pk.seq, mtu, hdr));
            // htsim's `processNack` tells the law before it takes the packet out of flight.
            f.cc.on_nack(&self.cc, now, bytes, f.in_flight_bytes);
            f.state[pk.seq as usize] = Sent::Lost;
            f.in_flight_bytes -= bytes;
            f.retx.push_back(pk.seq);
        }
        let src = f.src;
        self.try_send(src);
    }

    /// The retransmission timer of flow `fi`: it runs from the send time of the earliest
    /// packet still in flight (htsim's rule); when that packet has waited `rto_ps`, it is
    /// presumed lost and sent again, and the timer moves to the next one.
    pub(crate) fn timeout(&mut self, fi: FlowId) {
        let now = self.now;
        let (mtu, hdr) = (self.cfg.mtu_bytes, self.cfg.header_bytes);
        let f = &mut self.flows[fi.idx()];
        let rto = f.rto_ps;
        f.rto_armed = false;
        if f.done {
            return;
        }
        // The earliest packet in flight, skipping stale entries.
        while let Some(&(t, seq)) = f.sends.front() {
            if f.state[seq as usize] == Sent::InFlight && f.sent_ps[seq as usize] == t {
                break;
            }
            f.sends.pop_front();
        }
        let Some(&(t, seq)) = f.sends.front() else {
            return;
        };
        if now < t + rto {
            f.rto_armed = true;
            self.events.push(t + rto, Event::Rto(fi));
            return;
        }
        f.sends.pop_front();
        let bytes = f.wire_bytes(seq, mtu, hdr);
        f.state[seq as usize] = Sent::Lost;
        f.in_flight_bytes -= u64::from(bytes);
        f.retx.push_back(seq);
        f.cc.on_timeout(&self.cc, u64::from(bytes));
        self.counters.timeouts += 1;
        // The next packet's turn.
        f.rto_armed = true;
        self.events.push(now, Event::Rto(fi));
        let src = f.src;
        self.try_send(src);
    }

    /// A receiver's delayed ACK: acknowledge what it still holds.
    pub(crate) fn ack_timer(&mut self, fi: FlowId) {
        let f = &mut self.flows[fi.idx()];
        f.ack_timer = false;
        let Some(&last) = f.pending.last() else {
            return;
        };
        let port = self.topo.host_up[f.dst.idx()];
        // No RTT sample: the ACK waited on purpose.
        let pk = Packet {
            again: true,
            ..Packet::new(fi, last, Kind::Data, 0, port)
        };
        self.send_ack(pk);
    }
}
