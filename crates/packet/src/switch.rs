//! Switches: where a packet goes next. At its destination's rack switch (or any interface
//! node of that rack's DSF zone) the port down to the host; elsewhere one of the control
//! plane's next hops: per flow (`ecmp`), per packet over UCMP weights (`spray`, `mixed`), or
//! the least-loaded (`adaptive`). A packet bound across a DSF fabric waits in a VOQ first.

use crate::ids::{PacketId, PortId};
use crate::packet::Kind;
use crate::sim::Sim;
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

    /// The egress port of switch `v` for packet `i`.
    pub(crate) fn route(&mut self, v: DeviceId, i: PacketId) -> PortId {
        let pk = self.packets[i];
        let f = &self.flows[pk.flow.idx()];
        // Control packets travel from the flow's receiver back to its sender.
        let to_host = if pk.kind.backward() { f.src } else { f.dst };
        let t = self.topo;
        let dest = t.host_dest[to_host.idx()].expect("a destination host");
        let rack = t.dest_rack[dest.idx()];
        if rack == v {
            return t.host_down[to_host.idx()];
        }
        if let Some(d) = &t.dsf {
            // In the destination's DSF zone: across the cell fabric to its rack switch.
            if d.same_zone(v, rack) {
                return t.host_down[to_host.idx()];
            }
        }
        let sw = t.switch_index[v.idx()].expect("a switch on the way");
        let (start, n) = t.table[dest.idx() * t.switches + sw.idx()];
        let (start, n) = (start as usize, n as usize);
        if n == 1 {
            return t.members[start];
        }
        let h = mix(self.salts[sw.idx()] ^ mix(f.id << 24 ^ u64::from(pk.entropy)));
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
            PacketLb::Ecmp | PacketLb::Spray(_) | PacketLb::Mixed(_) if t.cum_weight.is_empty() => {
                t.members[start + (((h >> 32) * n as u64) >> 32) as usize]
            }
            PacketLb::Ecmp | PacketLb::Spray(_) | PacketLb::Mixed(_) => {
                let u = h >> 32;
                let cum = &t.cum_weight[start..start + n];
                let k = cum.partition_point(|&c| c <= u).min(n - 1);
                t.members[start + k]
            }
        }
    }
}
