//! Receiver-driven admission ([`crate::Admission`]): a flow is cut into chunks, and its
//! sender may send a chunk's packets only once the receiver's clear-to-send (CTS) for it
//! arrived. Each receiving host grants at most `window` chunks not yet received, round
//! robin among the flows toward it.

use crate::ids::{FlowId, HostId};
use crate::packet::{Kind, Packet};
use crate::sim::Sim;
use std::collections::VecDeque;

/// One receiving host's grants.
#[derive(Clone, Default)]
pub(crate) struct Receiver {
    /// Flows waiting for a grant (round robin).
    pub queue: VecDeque<FlowId>,
    /// Chunks granted and not yet received.
    pub outstanding: u32,
}

impl Sim<'_> {
    /// Chunks of flow `fi`, and packets per chunk.
    fn chunks(&self, fi: FlowId) -> (u32, u32) {
        let a = self.cfg.admission.expect("admission is on");
        let payload = u64::from(self.cfg.mtu_bytes - self.cfg.header_bytes);
        let per = a
            .chunk_bytes
            .div_ceil(payload)
            .clamp(1, u64::from(u32::MAX)) as u32;
        let f = &self.flows[fi.idx()];
        (f.packets.div_ceil(per), per)
    }

    /// Receiving host `h` grants chunks round robin among the flows waiting, while fewer
    /// than its window are outstanding; each grant is a CTS to the sender.
    pub(crate) fn grant(&mut self, h: HostId) {
        let Some(a) = self.cfg.admission else { return };
        while self.receivers[h.idx()].outstanding < a.window {
            let Some(fi) = self.receivers[h.idx()].queue.pop_front() else {
                break;
            };
            let (total, _) = self.chunks(fi);
            let f = &mut self.flows[fi.idx()];
            if f.done || f.chunks_granted >= total {
                continue;
            }
            f.chunks_granted += 1;
            let chunk = f.chunks_granted - 1;
            let r = &mut self.receivers[h.idx()];
            if f.chunks_granted < total {
                r.queue.push_back(fi);
            }
            r.outstanding += 1;
            self.counters.cts += 1;
            self.send_back(fi, chunk, Kind::Cts, 0, 0);
        }
    }

    /// The sender of `pk.flow` may send the packets of chunk `pk.seq` (and those before).
    pub(crate) fn receive_cts(&mut self, pk: Packet) {
        let (_, per) = self.chunks(pk.flow);
        let f = &mut self.flows[pk.flow.idx()];
        f.cleared = f
            .cleared
            .max((pk.seq + 1).saturating_mul(per).min(f.packets));
        let src = f.src;
        self.try_send(src);
    }

    /// A new packet of flow `fi` is in: a chunk is in when as many packets came as the
    /// chunks up to it hold (packets of a later chunk can overtake only within the
    /// receiver's window); the receiver may grant again.
    pub(crate) fn chunk_received(&mut self, fi: FlowId) {
        let (total, per) = self.chunks(fi);
        let f = &mut self.flows[fi.idx()];
        let done = if f.received == f.packets {
            total
        } else {
            (f.received / per).min(total)
        };
        if done > f.chunks_done {
            let dst = f.dst;
            let more = done - f.chunks_done;
            f.chunks_done = done;
            let o = &mut self.receivers[dst.idx()].outstanding;
            *o = o.saturating_sub(more);
            self.grant(dst);
        }
    }
}
