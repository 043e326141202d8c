//! Conservation: the bytes hosts put on the wire, and where they went. With
//! `Config::check_conservation` the engine checks after every event, by scanning live
//! packets, queues, flows, PFC counts and DSF credits, that nothing was made or lost.

use crate::flow::Sent;
use crate::sim::Sim;

/// Bytes put on the wire by hosts, delivered to hosts, dropped, and trimmed off packets.
#[derive(Default)]
pub(crate) struct Ledger {
    pub injected: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub trimmed_off: u64,
}

impl Ledger {
    /// Add `o`'s bytes (the parts of a partitioned run).
    pub fn add(&mut self, o: &Ledger) {
        self.injected += o.injected;
        self.delivered += o.delivered;
        self.dropped += o.dropped;
        self.trimmed_off += o.trimmed_off;
    }
}

impl Sim<'_> {
    /// Every conservation law, by a scan (slow: for tests).
    pub(crate) fn check(&self) {
        let live = self.packets.live_bytes();
        let l = &self.ledger;
        assert_eq!(
            l.injected,
            l.delivered + l.dropped + l.trimmed_off + live,
            "bytes put on the wire = delivered + dropped + trimmed off + in the network, at {} ps",
            self.now
        );
        let (mtu, hdr) = (self.cfg.mtu_bytes, self.cfg.header_bytes);
        for f in self.flows.iter().filter(|f| f.started && !f.done) {
            let mut in_flight = 0u64;
            let mut acked = 0u32;
            for (seq, &st) in f.state.iter().enumerate() {
                match st {
                    Sent::InFlight => in_flight += u64::from(f.wire_bytes(seq as u32, mtu, hdr)),
                    Sent::Acked => acked += 1,
                    Sent::Lost => assert!(
                        f.retx.contains(&(seq as u32)),
                        "flow {}: packet {seq} is lost but not queued to be sent again",
                        f.id
                    ),
                    Sent::Unsent => {}
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
                if self.topo.port_host[p].is_some() {
                    continue;
                }
                for i in self.packets.iter(st.lo) {
                    let pk = &self.packets[i];
                    if !pk.dsf {
                        ingress[pk.port.idx()] += u64::from(pk.bytes);
                    }
                }
            }
            // Data waiting in VOQs still counts against the link it came in over.
            for q in self.fabric.voqs.iter().filter(|q| !q.control) {
                for i in self.packets.iter(q.fifo) {
                    let pk = &self.packets[i];
                    ingress[pk.port.idx()] += u64::from(pk.bytes);
                }
            }
            for (p, st) in self.pfc_ports.iter().enumerate() {
                assert_eq!(st.ingress, ingress[p], "port {p}: PFC ingress count");
            }
        }
        if self.topo.dsf.is_some() {
            // Credits: granted = sent + held by VOQs + on their way; a VOQ never holds
            // credit while it has packets, nor more than it asked for.
            let s = &self.fabric.stats;
            let balance: i64 = self.fabric.voqs.iter().map(|q| q.balance).sum();
            assert_eq!(
                s.granted as i64,
                s.sent as i64 + balance + s.grants_in_flight as i64,
                "DSF credits granted = sent + balances + in flight, at {} ps",
                self.now
            );
            for q in &self.fabric.voqs {
                assert!(
                    q.balance <= 0 || q.fifo.head.is_none(),
                    "a VOQ sits on credit"
                );
                let sum: u64 = self
                    .packets
                    .iter(q.fifo)
                    .map(|i| u64::from(self.packets[i].bytes))
                    .sum();
                assert_eq!(sum, q.bytes, "VOQ bytes");
            }
            assert_eq!(
                s.cells_sent,
                s.cells_reassembled + self.fabric.live_cells() as u64,
                "cells sent = reassembled + in the fabric"
            );
        }
        for (p, st) in self.ports.iter().enumerate() {
            for (q, bytes) in [(st.hi, st.hi_bytes), (st.lo, st.lo_bytes)] {
                let sum: u64 = self
                    .packets
                    .iter(q)
                    .map(|i| u64::from(self.packets[i].bytes))
                    .sum();
                let last = self.packets.iter(q).last();
                assert_eq!(
                    (sum, last),
                    (bytes, q.tail),
                    "port {p}: queue bytes and tail"
                );
            }
        }
    }
}
