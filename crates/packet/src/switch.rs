//! Switches: where a packet goes next. At its destination's rack switch (or any interface
//! node of that rack's DSF zone) the port down to the host; elsewhere one of the control
//! plane's next hops: per flow (`ecmp`), per packet over UCMP weights (`spray`, `mixed`), or
//! the least-loaded (`adaptive`). A packet bound across a DSF fabric waits in a VOQ first.

use crate::ids::{HostId, PacketId, PortId};
use crate::packet::{Kind, Packet};
use crate::sim::Sim;
use crate::topo::Topo;
use crate::PacketLb;
use aifabric_dataplane::mix;
use aifabric_model::DeviceId;

impl Sim<'_> {
    /// Packet `i` reaches switch `v` over port `p`: PFC's ingress count, then its egress
    /// port's queue or a VOQ.
    pub(crate) fn at_switch(&mut self, v: DeviceId, p: PortId, i: PacketId) {
        if self.cfg.pfc.is_some() && self.packets[i].kind == Kind::Data && !self.admit(p, i) {
            return;
        }
        let e = self.route(v, i);
        if let Some(d) = &self.topo.dsf {
            if d.scheduled(v, self.topo.ports[e.idx()].from) {
                self.voq_enqueue(v, e, i);
                return;
            }
        }
        self.enqueue(e, i);
    }

    /// Allocate the new packet `pk` with what switches route it by (`Packet::to`,
    /// `Packet::route_hash`).
    pub(crate) fn alloc_packet(&mut self, mut pk: Packet) -> PacketId {
        let f = self.keys[pk.flow.idx()];
        // Control packets travel from the flow's receiver back to its sender.
        pk.to = if pk.kind.backward() { f.src } else { f.dst };
        pk.route_hash = flow_hash(f.id, pk.entropy);
        self.packets.alloc(pk)
    }

    /// The egress port of switch `v` for packet `i`.
    pub(crate) fn route(&self, v: DeviceId, i: PacketId) -> PortId {
        let pk = &self.packets[i];
        let (start, n) = match next_hops(self.topo, v, pk.to) {
            Hops::One(p) => return p,
            Hops::Group(start, n) => (start, n),
        };
        let t = self.topo;
        let h = mix(self.salts[sw_of(t, v)] ^ pk.route_hash);
        match self.cfg.lb {
            PacketLb::Adaptive => {
                let first = (((h >> 32) * n as u64) >> 32) as usize;
                let mut best = t.members[start + first];
                let mut best_q = u64::MAX;
                for k in 0..n {
                    let m = t.members[start + (first + k) % n];
                    let st = &self.ports[m.idx()];
                    let q = st.lo_bytes + st.hi_bytes + u64::from(st.busy);
                    if q < best_q {
                        best = m;
                        best_q = q;
                    }
                }
                best
            }
            PacketLb::Ecmp | PacketLb::Spray(_) | PacketLb::Mixed(_) => hashed(t, start, n, h),
        }
    }
}

/// Where a packet may go next at a switch: one port, or a group of the forwarding table
/// (`members[start..start + n]`) to choose from.
pub(crate) enum Hops {
    One(PortId),
    Group(usize, usize),
}

/// The next hops of switch `v` toward host `to_host`: at the destination's rack switch (or
/// any interface node of its DSF zone) the port down to the host; elsewhere the switch's
/// group toward the destination rack.
#[inline]
pub(crate) fn next_hops(t: &Topo, v: DeviceId, to_host: HostId) -> Hops {
    let dest = t.host_dest[to_host.idx()].expect("a destination host");
    let rack = t.dest_rack[dest.idx()];
    if rack == v {
        return Hops::One(t.host_down[to_host.idx()]);
    }
    if let Some(d) = &t.dsf {
        // In the destination's DSF zone: across the cell fabric to its rack switch.
        if d.same_zone(v, rack) {
            return Hops::One(t.host_down[to_host.idx()]);
        }
    }
    let sw = sw_of(t, v);
    let (start, n) = t.group(dest.idx(), sw);
    if n == 1 {
        return Hops::One(t.members[start]);
    }
    Hops::Group(start, n)
}

/// Switch `v`'s compact index (its hash salt's and its table column's).
#[inline]
fn sw_of(t: &Topo, v: DeviceId) -> usize {
    t.switch_index[v.idx()].expect("a switch on the way").idx()
}

/// The member of group `members[start..start + n]` hash `h` picks, by UCMP weight when the
/// table has weights.
#[inline]
fn hashed(t: &Topo, start: usize, n: usize, h: u64) -> PortId {
    if t.cum_weight.is_empty() {
        return t.members[start + (((h >> 32) * n as u64) >> 32) as usize];
    }
    let u = h >> 32;
    let cum = &t.cum_weight[start..start + n];
    let k = cum.partition_point(|&c| c <= u).min(n - 1);
    t.members[start + k]
}

/// The port `ecmp` forwards flow `flow_id`'s data to at switch `v` toward `to_host`, with
/// the switches' hash salts `salts` (the engine's own choice, without a running engine).
pub(crate) fn ecmp_hop(
    t: &Topo,
    salts: &[u64],
    v: DeviceId,
    to_host: HostId,
    flow_id: u64,
) -> PortId {
    match next_hops(t, v, to_host) {
        Hops::One(p) => p,
        Hops::Group(start, n) => {
            hashed(t, start, n, mix(salts[sw_of(t, v)] ^ flow_hash(flow_id, 0)))
        }
    }
}

/// The hash of flow `id`'s packets of entropy value `entropy`, before a switch's salt.
#[inline]
fn flow_hash(id: u64, entropy: u32) -> u64 {
    mix(id << 24 ^ u64::from(entropy))
}
