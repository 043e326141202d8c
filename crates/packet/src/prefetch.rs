//! Prefetching for the event loop. On a machine whose last-level cache does not hold the
//! packets, ports, flows and tables of a large run, the loop is bound by memory latency:
//! each event's first read of an arriving packet, a port or a flow misses, and one event's
//! misses cannot start before the previous event is done. So before each event the caches
//! are asked for what the next few will read, in stages, each stage's address read from what
//! the stage before fetched one event earlier:
//!
//! - three events ahead: an arriving packet, a port that finished sending;
//! - two events ahead: the arriving packet's flow, the port's next packet;
//! - the next event: where the arriving packet will be looked up, the forwarding table's
//!   entry at a switch or the receiver's bitmap at a host.
//!
//! It only reads, and a prefetch changes no value: a run is the same bytes without it. Its
//! guesses may be wrong (an event scheduled meanwhile may come first), which costs only the
//! wasted fetch.

use crate::event::Event;
use crate::ids::PacketId;
use crate::packet::Kind;
use crate::sim::Sim;
use prefetch_index::prefetch_index;

/// How many events ahead each stage acts (0: the next event). A miss here takes about as
/// long as one or two events, so the stages are two events apart.
const FIRST: usize = 4;
const SECOND: usize = 2;
const THIRD: usize = 0;
/// Events ahead of the current one that are prefetched.
const AHEAD: usize = FIRST + 1;

impl Sim<'_> {
    /// Prefetch what the next [`AHEAD`] events will read (the module's docs).
    #[inline]
    pub(crate) fn prefetch_soon(&self) {
        for (k, e) in self.events.soon(AHEAD).enumerate() {
            match (k, e) {
                (THIRD, Event::Arrive(i)) => self.prefetch_lookup(i),
                (SECOND, Event::Arrive(i)) => {
                    let pk = &self.packets[i];
                    prefetch_index(&self.flows, pk.flow.idx());
                }
                (SECOND, Event::TxDone(p)) => {
                    let st = &self.ports[p.idx()];
                    if let Some(h) = st.hi.head.or(st.lo.head) {
                        prefetch_index(&self.packets.slots, h.idx());
                    }
                }
                (FIRST, Event::Arrive(i)) => prefetch_index(&self.packets.slots, i.idx()),
                (FIRST, Event::TxDone(p)) => prefetch_index(&self.ports, p.idx()),
                _ => {}
            }
        }
    }

    /// Packet `i` arrives next (it and its flow were prefetched in the events before): where
    /// it will be looked up.
    #[inline]
    fn prefetch_lookup(&self, i: PacketId) {
        let pk = &self.packets[i];
        let t = self.topo;
        let v = t.ports[pk.port.idx()].to;
        match t.switch_index[v.idx()] {
            Some(sw) => {
                let f = &self.flows[pk.flow.idx()];
                let to = if pk.kind.backward() { f.src } else { f.dst };
                if let Some(dest) = t.host_dest[to.idx()] {
                    prefetch_index(&t.table, t.entry(dest.idx(), sw.idx()));
                }
            }
            None if pk.kind == Kind::Data => {
                let f = &self.flows[pk.flow.idx()];
                prefetch_index(&f.got, pk.seq as usize / 64);
            }
            None => {}
        }
    }
}
