//! Prefetching for the event loop. On a machine whose last-level cache does not hold the
//! packets, ports, flows and tables of a large run, the loop is bound by memory latency:
//! each event's first read of an arriving packet, a port or a flow misses, and one event's
//! misses cannot start before the previous event is done. So before each event the caches
//! are asked for what the next few will read, in stages, each stage's address read from what
//! the stage before fetched one or two events earlier:
//!
//! - five events ahead: an arriving packet, a port that finished sending;
//! - three events ahead: at a switch, the forwarding table's entry toward the arriving
//!   packet's destination (a packet carries what it is routed by, `Packet::to` and
//!   `Packet::route_hash`, so no flow is read on the way); at a host, the flow's lines its
//!   receiver reads for data or a trimmed header, its sender's for the rest; the port's next
//!   packet, or (a NIC with nothing queued) its host;
//! - one event ahead: at a switch, the group of next hops that entry names; at a host, where
//!   the packet will be looked up (the receiver's bitmap; for an ACK the sender's state of
//!   the packet and its NIC); and the lines of the flow a NIC sends from next;
//! - the next event: at a switch, the port the packet will be queued on (the table's choice
//!   and the hash's, as [`Sim::route`] makes it; not `adaptive`'s, which reads the queues).
//!
//! A DSF cell's arrival (`cells.rs`) is staged the same way: five events ahead the cell,
//! three ahead its next hop's entry of the cell-forwarding table (at its egress node, its
//! packet), one ahead the entry's member (the fabric port) its round robin points at, and
//! at the next event that port's line the hop writes.
//!
//! It only reads, and a prefetch changes no value: a run is the same bytes without it. Its
//! guesses may be wrong (an event scheduled meanwhile may come first), which costs only the
//! wasted fetch. Where the run's hot state fits in a core's own cache it gains nothing and
//! costs its work (measured: a GPT-13B step on 128 GPUs ran 22% slower), so
//! it is on only above [`PREFETCH_FROM_BYTES`] ([`worth_prefetching`]).

use crate::event::Event;
use crate::ids::{CellId, FlowId, PacketId};
use crate::packet::Kind;
use crate::sim::Sim;
use crate::topo::Topo;
use prefetch_index::prefetch_index;

/// How many events ahead each stage acts (0: the next event). A miss here takes about as
/// long as one or two events, so the stages are two events apart, the last two one apart
/// (measured: 5/3/1/0 ran the 8,192-host permutation at 8 parts 6-14% faster than 4/2/0
/// without the egress port; 6/4/2/0 was slower on 1,024 hosts, its guesses worse).
const FIRST: usize = 5;
const SECOND: usize = 3;
const THIRD: usize = 1;
const FOURTH: usize = 0;
/// Events ahead of the current one that are prefetched.
const AHEAD: usize = FIRST + 1;

/// Hot state, estimated, above which the loop prefetches: twice a 1 MB L2 (the VM these
/// figures come from has 1 MB per core, and a share of the host's L3 that moves with its
/// neighbours' load, at times under 2 MB).
pub(crate) const PREFETCH_FROM_BYTES: usize = 2 << 20;

/// Packets in flight per flow counted in the hot-state estimate (the 1,024-host permutation
/// of `uec-htsim` holds about 47 per flow at its peak).
const PACKETS_PER_FLOW: usize = 48;

/// Ports on a flow's path counted in the estimate (a three-tier fabric's longest path).
const PORTS_PER_FLOW: usize = 6;

/// Whether a part running `flows` flows over `topo` is worth prefetching for: its flows'
/// state, their packets in flight and the ports on their paths above
/// [`PREFETCH_FROM_BYTES`], and every fabric port of the DSF zones the matrix crosses (a
/// flow's cells are sprayed over all of its zone's links one hop closer, so a few flows
/// keep all of them hot; a part without a zone counts them too, erring toward prefetching).
/// Not every port of the fabric: a 2,048-GPU job on `llama3-24k` holds 8,192 ports, but
/// its 295 flows cross few of them, and prefetching made it 14% slower.
///
/// A chained phase (`phases.rs`: a phase's repeats one after the other, each node's next on
/// what it received) counts every repeat's flows though about one repeat's are in flight:
/// an over-estimate of up to the chain's length, which errs toward prefetching.
pub(crate) fn worth_prefetching(flows: usize, topo: &Topo) -> bool {
    hot_bytes(flows, topo) > PREFETCH_FROM_BYTES
}

/// The hot state [`worth_prefetching`] estimates, bytes.
fn hot_bytes(flows: usize, topo: &Topo) -> usize {
    let port = std::mem::size_of::<crate::port::PortState>();
    let per_flow = std::mem::size_of::<crate::flow::Flow>()
        + PACKETS_PER_FLOW * std::mem::size_of::<crate::packet::Packet>()
        + PORTS_PER_FLOW * port;
    let fabric = topo.dsf.as_ref().map_or(0, |d| d.fabric_ports.len()) * port;
    flows.saturating_mul(per_flow).saturating_add(fabric)
}

impl Sim<'_> {
    /// Prefetch what the next [`AHEAD`] events will read (the module's docs).
    #[inline]
    pub(crate) fn prefetch_soon(&self) {
        let next = self.events.upcoming();
        if next.len() >= AHEAD {
            // The common case: the current slot holds them all, in order.
            self.stage(FOURTH, next[FOURTH].what);
            self.stage(THIRD, next[THIRD].what);
            self.stage(SECOND, next[SECOND].what);
            self.stage(FIRST, next[FIRST].what);
        } else {
            for (k, e) in self.events.soon(AHEAD).enumerate() {
                self.stage(k, e);
            }
        }
    }

    /// Prefetch what event `e`, `k` events ahead, reads at that distance's stage.
    #[inline(always)]
    fn stage(&self, k: usize, e: Event) {
        match (k, e) {
            (FOURTH, Event::Arrive(i)) => self.prefetch_egress(i),
            (THIRD, Event::Arrive(i)) => self.prefetch_lookup(i),
            (SECOND, Event::Arrive(i)) => {
                let pk = &self.packets[i];
                let v = self.topo.port_to[pk.port.idx()];
                if self.topo.host_of_device[v.idx()].is_some() {
                    if matches!(pk.kind, Kind::Data | Kind::Header) {
                        // The flow's first line (both ends) and the receiver's.
                        let f = &self.flows[pk.flow.idx()];
                        prefetch_index(std::slice::from_ref(f), 0);
                        prefetch_index(std::slice::from_ref(&f.got), 0);
                    } else {
                        self.prefetch_sender(pk.flow);
                    }
                } else if let (Some(sw), Some(dest)) = (
                    self.topo.switch_index[v.idx()],
                    self.topo.host_dest[pk.to.idx()],
                ) {
                    // The switch's entry toward the packet's destination.
                    prefetch_index(&self.topo.table, self.topo.entry(dest.idx(), sw.idx()));
                }
            }
            (SECOND, Event::TxDone(p)) => {
                let st = &self.ports[p.idx()];
                if let Some(h) = st.hi.head.or(st.lo.head) {
                    prefetch_index(&self.packets.slots, h.idx());
                } else if let Some(h) = self.topo.port_host[p.idx()] {
                    // A NIC with nothing queued sends from its flows next.
                    prefetch_index(&self.hosts, h.idx());
                }
            }
            (THIRD, Event::TxDone(p)) => {
                let st = &self.ports[p.idx()];
                if let (None, Some(h)) = (st.hi.head, self.topo.port_host[p.idx()]) {
                    let host = &self.hosts[h.idx()];
                    if let Some(&fi) = host.active.get(host.robin % host.active.len().max(1)) {
                        self.prefetch_sender(fi);
                    }
                }
            }
            (FIRST, Event::Arrive(i)) => prefetch_index(&self.packets.slots, i.idx()),
            (FIRST, Event::TxDone(p)) => prefetch_index(&self.ports, p.idx()),
            (FIRST, Event::Cell(c)) => prefetch_index(&self.fabric.cells, c.idx()),
            (SECOND | THIRD | FOURTH, Event::Cell(c)) => self.prefetch_cell(k, c),
            _ => {}
        }
    }

    /// Packet `i` arrives next at a switch (its table entry was prefetched one event
    /// before): the port it will be queued on, where the choice is the table's and a hash
    /// (not the queues', `adaptive`).
    #[inline]
    fn prefetch_egress(&self, i: PacketId) {
        if self.cfg.lb == crate::PacketLb::Adaptive {
            return;
        }
        let pk = &self.packets[i];
        let t = self.topo;
        let v = t.port_to[pk.port.idx()];
        // As `route` would find them: a switch with a table column, a destination.
        if t.switch_index[v.idx()].is_some() && t.host_dest[pk.to.idx()].is_some() {
            prefetch_index(&self.ports, self.route(v, i).idx());
        }
    }

    /// Cell `c` arrives `k` events ahead (its cell was prefetched at [`FIRST`]): at
    /// [`SECOND`] its next hop's entry of the cell-forwarding table (or, at its egress node,
    /// its packet), at [`THIRD`] the member that entry's round robin points at, at
    /// [`FOURTH`] that member port's line its hop writes. A cell hopping through the same
    /// entry meanwhile moves the round robin: a wasted fetch, no more.
    #[inline]
    fn prefetch_cell(&self, k: usize, c: CellId) {
        let (fab, Some(d)) = (&self.fabric, &self.topo.dsf) else {
            return;
        };
        let cell = &fab.cells[c.idx()];
        if cell.at == cell.to {
            if k == SECOND {
                prefetch_index(&self.packets.slots, cell.packet.idx());
            }
            return;
        }
        let entry = (cell.row + cell.at) as usize;
        match k {
            SECOND => prefetch_index(&fab.hops, entry),
            THIRD => {
                let hop = &fab.hops[entry];
                prefetch_index(&d.members, (hop.start + hop.rr) as usize);
            }
            FOURTH => {
                let hop = &fab.hops[entry];
                let p = d.members[(hop.start + hop.rr) as usize];
                // The line with its clock and its static side (`PortState`'s second).
                let st = &self.ports[p.idx()];
                prefetch_index(std::slice::from_ref(&st.sent), 0);
            }
            _ => {}
        }
    }

    /// Lines of flow `fi` its sender reads (`Flow`'s layout): the first, its congestion
    /// control, and the line its lists start on (`state`'s header). Addresses only: nothing
    /// of the flow is read here.
    #[inline]
    fn prefetch_sender(&self, fi: FlowId) {
        let f = &self.flows[fi.idx()];
        prefetch_index(std::slice::from_ref(f), 0);
        prefetch_index(std::slice::from_ref(&f.cc), 0);
        prefetch_index(std::slice::from_ref(&f.state), 0);
    }

    /// Packet `i` arrives after the next event (it, and what its receiver reads of its flow
    /// or the switch's table entry, were prefetched in the events before): where it will be
    /// looked up, at a host its receiver's or sender's state, at a switch the group of next
    /// hops its entry names. A host or a switch as [`Sim::arrive`] tells them; a switch with
    /// no table column (the destination's rack, an interface node of its DSF zone) looks
    /// nothing up.
    #[inline]
    fn prefetch_lookup(&self, i: PacketId) {
        let pk = &self.packets[i];
        let t = self.topo;
        let v = t.port_to[pk.port.idx()];
        if t.host_of_device[v.idx()].is_some() {
            let f = &self.flows[pk.flow.idx()];
            if pk.kind == Kind::Data {
                prefetch_index(&f.got, pk.seq as usize / 64);
            } else if pk.kind == Kind::Ack {
                // What the ACK covers, where the sender stands with it, and its NIC.
                prefetch_index(&f.state, pk.seq as usize);
                prefetch_index(&self.ports, t.host_up[f.src.idx()].idx());
            }
        } else if let (Some(sw), Some(dest)) = (t.switch_index[v.idx()], t.host_dest[pk.to.idx()]) {
            // The group of next hops the entry (prefetched before) names.
            let g = t.table[t.entry(dest.idx(), sw.idx())];
            prefetch_index(&t.groups, g as usize);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{setup, sim, Config, PacketLb};
    use aifabric_model::{DeviceId, Role};
    use aifabric_workload::traffic::Pattern;

    /// The same results, field for field, with the prefetching forced on and off: sprayed,
    /// trimmed, lossless with PAUSE frames, per-flow ECMP and adaptive on a fat tree, and
    /// across a DSF zone's cell fabric and BAG.
    #[test]
    fn prefetching_changes_no_result() {
        let f = crate::testing::fat_tree(8);
        let net = crate::testing::healthy(&f);
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
        let ecmp = Config {
            lb: PacketLb::Ecmp,
            ..Config::uec_htsim()
        };
        let adaptive = Config {
            lb: PacketLb::Adaptive,
            ..Config::uec_htsim()
        };
        for (pattern, cfg) in [
            (Pattern::Permutation, Config::uec_htsim()),
            (Pattern::Incast(16), ecmp),
            (Pattern::Incast(16), Config::roce()),
            (Pattern::Permutation, adaptive),
        ] {
            same_either_way(&net, &gpus, pattern, &cfg, 20_000);
        }
        let two = crate::testing::two_regions();
        let net = crate::testing::healthy(&two);
        let gpus: Vec<DeviceId> = two.devices_with_role(Role::Gpu).collect();
        same_either_way(
            &net,
            &gpus,
            Pattern::Permutation,
            &Config::uec_htsim(),
            2_000,
        );
    }

    /// Run `pattern` of 1 MiB flows over `gpus` with prefetching off and on: equal results
    /// and event counts, and at least `events` of them.
    fn same_either_way(
        net: &aifabric_dataplane::Net<'_>,
        gpus: &[DeviceId],
        pattern: Pattern,
        cfg: &Config,
        events: u64,
    ) {
        let tm = pattern.generate(gpus.len() as u32, 1 << 20, 3);
        let (topo, cfg) = setup::prepare(net, &tm, gpus, cfg).unwrap();
        let run = |on: bool| {
            let mut s = setup::build(net, &tm, &topo, &cfg, None).unwrap();
            s.prefetch = on;
            let mut s = sim::drive(s, &mut |_| {});
            (s.result(net, &tm), s.events_done)
        };
        let (off, on) = (run(false), run(true));
        assert!(off.1 > events, "{pattern:?}: {} events", off.1);
        assert_eq!(off, on, "{pattern:?}");
    }

    /// On for the 1,024-host permutation (the run it was measured on), off for a 128-GPU
    /// job's phases and a 2,048-GPU job's 295 flows, where it cost 14-22%; a DSF zone's
    /// fabric ports count whatever the flows.
    #[test]
    fn prefetching_is_on_only_for_state_larger_than_a_cache() {
        let f = crate::testing::fat_tree(8);
        let net = crate::testing::healthy(&f);
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
        let tm = Pattern::Permutation.generate(gpus.len() as u32, 1 << 20, 3);
        let (ft, _) = setup::prepare(&net, &tm, &gpus, &Config::uec_htsim()).unwrap();
        assert!(worth_prefetching(1024, &ft));
        assert!(!worth_prefetching(295, &ft));
        assert!(!worth_prefetching(128, &ft));
        assert_eq!(hot_bytes(0, &ft), 0, "no DSF zone");

        let two = crate::testing::two_regions();
        let net = crate::testing::healthy(&two);
        let gpus: Vec<DeviceId> = two.devices_with_role(Role::Gpu).collect();
        let tm = Pattern::Permutation.generate(gpus.len() as u32, 1 << 20, 3);
        let (topo, _) = setup::prepare(&net, &tm, &gpus, &Config::uec_htsim()).unwrap();
        let ports = topo.dsf.as_ref().expect("a DSF zone").fabric_ports.len();
        assert!(ports > 0);
        assert_eq!(hot_bytes(0, &topo), ports * 128);
        assert_eq!(
            hot_bytes(10, &topo),
            hot_bytes(0, &topo) + hot_bytes(10, &ft)
        );
    }
}
