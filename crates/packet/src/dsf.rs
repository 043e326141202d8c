//! DSF zones as a scheduled fabric.
//!
//! A Disaggregated Scheduled Fabric is a chassis taken apart: the line cards are **interface
//! nodes** (RDSW at the racks, EDSW at the edge toward BAG; Broadcom Jericho3), the fabric
//! cards **fabric nodes** (FDSW, and SDSW in a dual-stage zone; Ramon3), and the zone behaves
//! as one big switch (Meta, "Disaggregated Scheduled Fabric: Scaling Meta's AI Journey",
//! engineering.fb.com, 2025-10-20; the OCP Global Summit 2025 DSF talks; FBOSS,
//! github.com/facebook/fboss, for the counts; `shared/domain/FACTS.md` section 2). The packet
//! engine models it so:
//! - **VOQs.** A packet that enters the zone at an interface node (from a GPU or from BAG)
//!   and leaves it at another one's Ethernet port waits at the ingress node in the virtual
//!   output queue of that egress port and its class (a packet between two ports of the
//!   same node too) (data, or control: ACKs, NACKs, CNPs and
//!   trimmed headers). VOQs live in the interface node's deep buffer (12 GB of HBM on J3) and
//!   have no limit here.
//! - **Credits.** A VOQ tells the egress port's scheduler the bytes of every packet that
//!   enters it: a request message, crossing the fabric with its delay. The scheduler
//!   grants credits of `credit_bytes` (the last one of a backlog shorter), one after another
//!   at the egress port's rate (a grant of `c` bytes occupies the scheduler for `c` bytes
//!   of the port's serialization), round robin among the VOQs with demand, control class
//!   first; a grant crosses the fabric back with its delay. A VOQ sends its head packet
//!   whenever its credit balance is positive (the balance may go negative by less than a
//!   packet, as Jericho's does). Grants never exceed what was requested, so once the VOQs
//!   are empty, bytes granted = bytes sent; and the fabric never holds more than the credits
//!   in flight: it is lossless without PFC and the egress port's queue stays short.
//! - **Cells.** A packet sent from a VOQ is cut into cells of at most `cell_bytes` bytes,
//!   each sprayed on its own: at every hop (the ingress node, the FDSW, in dual stage the
//!   SDSW and the far cluster's FDSW) the next live fabric link toward the egress node in
//!   round robin. Fabric links are the model's (106.25 Gb/s SerDes lanes on the built-in
//!   Jericho3/Ramon3 models, 160 per interface node: a speedup of about 1.18 over 36 x 400G),
//!   each a FIFO at its rate and delay. The egress node reassembles the packet from its
//!   cells and queues it on its Ethernet port as any switch does.
//! - **Failures.** Cells never take a failed link, and at each hop spray only over the links
//!   whose far end is one hop closer to the egress node over live fabric links (a breadth-
//!   first search from each egress node that does not transit other interface nodes): the
//!   reduced reachability Input Balanced Mode advertises. IBM's further step applies too:
//!   a fabric node that delivers only a share of its nominal output toward a destination
//!   (`aifabric-routing`'s `ibm`) gets cells toward it over that share of its upstream
//!   neighbours' links (`ibm_subset`).
//!
//! Limits: request and grant messages are delays, not cells on the links (they are a few
//! bytes against 106.25G lanes); the scheduler knows a VOQ's demand when its request
//! arrives, never earlier; cell headers, the fabric nodes' own buffers and the per-link
//! FIFO's cut-through are not modelled (a cell is forwarded once it has fully arrived);
//! traffic between ports of the same interface node is credited like the rest but switched
//! locally (no cells, no fabric delay). With PFC on, a data packet waiting in a VOQ still
//! counts against the ingress link it came in over until it leaves into the fabric, so a
//! host link's XOFF bounds what one sender can park in the VOQs (and pauses it, head of line,
//! for all its destinations); the fabric itself sends no PAUSE.

use crate::ids::{NodeId, PortId};
use crate::topo::Port;
use crate::PacketError;
use aifabric_dataplane::Net;
use aifabric_model::{DeviceId, LinkId, PortKind, Role, ZoneKind};
use std::collections::VecDeque;

/// The cell fabrics of the DSF zones a matrix crosses: per destination interface node, the
/// fabric ports each node sprays toward it over.
pub(crate) struct DsfTopo {
    /// Device -> compact node index (`None`: not an interface or fabric node of a zone the
    /// matrix crosses).
    pub node: Vec<Option<NodeId>>,
    /// Node -> whether it is an interface node (RDSW, EDSW).
    pub iface: Vec<bool>,
    /// Node -> zone.
    pub node_zone: Vec<u32>,
    /// Node -> destination index (`None`: no packet leaves the fabric there).
    pub dest: Vec<Option<u32>>,
    /// Node -> its index among its zone's nodes.
    pub local: Vec<u32>,
    /// Destination -> its row: the first entry of its table, whose entries are its zone's
    /// nodes by [`DsfTopo::local`] index (cells never leave their zone, so a destination's
    /// table holds its own zone's nodes only).
    pub rows: Vec<u32>,
    /// `[row + local]` -> (first member, members): the live fabric ports one hop closer to
    /// the destination.
    pub table: Vec<(u32, u32)>,
    pub members: Vec<PortId>,
    /// `[row + local]`: one-way delay of a message to the destination node over the first
    /// member at each hop, picoseconds.
    pub ctrl_ps: Vec<u64>,
    /// Every live directed fabric port, in port order.
    pub fabric_ports: Vec<PortId>,
}

/// Input Balanced Mode at node `u` toward destination `w` (members from `start` are `u`'s
/// ports one hop closer): a fabric node `y` that delivers only a share `r_y` of its nominal
/// output toward `w` is advertised on that share of its input links, so `u` sprays over at
/// most `ceil(r_y x nominal links (u, y))` of its live links to `y` (at least one while
/// `r_y > 0`), a subset picked by a hash of (destination, port): a matching, fixed choice
/// (Meta's DSF post: upstream devices "stop using a matching, randomly chosen subset of
/// their links toward that destination"). `r` holds each `r_y` by `y`'s index in its zone
/// (`local`).
#[allow(clippy::too_many_arguments)]
fn ibm_subset(
    f: &aifabric_model::Fabric,
    members: &mut Vec<PortId>,
    start: usize,
    ports: &[Port],
    node: &[Option<NodeId>],
    node_device: &[u32],
    iface: &[bool],
    local: &[u32],
    r: &[f64],
    u: u32,
    w: u32,
) {
    let far = |p: PortId| node[ports[p.idx()].to.idx()].expect("a fabric node").get();
    let cut: Vec<u32> = {
        let mut ys: Vec<u32> = members[start..]
            .iter()
            .map(|&p| far(p))
            .filter(|&y| !iface[y as usize] && r[local[y as usize] as usize] < 1.0)
            .collect();
        ys.sort_unstable();
        ys.dedup();
        ys
    };
    if cut.is_empty() {
        return;
    }
    let ud = DeviceId::new(node_device[u as usize]);
    let mut kept: Vec<PortId> = members[start..]
        .iter()
        .copied()
        .filter(|&p| !cut.contains(&far(p)))
        .collect();
    for y in cut {
        let yd = DeviceId::new(node_device[y as usize]);
        let nominal = f
            .incident(ud)
            .iter()
            .filter(|&&l| f.link(l).kind == PortKind::Fabric && f.link(l).other(ud) == yd)
            .count() as f64;
        let mut live: Vec<PortId> = members[start..]
            .iter()
            .copied()
            .filter(|&p| far(p) == y)
            .collect();
        let keep = if r[local[y as usize] as usize] > 0.0 {
            // Less a hair, so that a share that is an exact ratio of links (7/25 of 25) does
            // not round up to one link more.
            ((r[local[y as usize] as usize] * nominal - 1e-9).ceil() as usize).clamp(1, live.len())
        } else {
            0
        };
        live.sort_by_key(|&p| aifabric_dataplane::mix(u64::from(w) << 32 ^ u64::from(p.get())));
        kept.extend_from_slice(&live[..keep]);
    }
    kept.sort_unstable();
    members.truncate(start);
    members.extend(kept);
}

fn is_dsf(net: &Net<'_>, d: DeviceId) -> bool {
    let f = net.f;
    matches!(
        f.zones()[f.device(d).zone.idx()].kind,
        ZoneKind::DsfL1 | ZoneKind::DsfL2
    ) && matches!(
        f.device(d).role,
        Role::Rdsw | Role::Edsw | Role::Fdsw | Role::Sdsw
    )
}

impl DsfTopo {
    /// The fabrics of the zones of `touched` (devices on the matrix's paths), with a port
    /// for every live fabric link in each direction (`port(link, from)`); `None` when no
    /// DSF zone is touched.
    pub fn build(
        net: &Net<'_>,
        touched: &[DeviceId],
        ports: &mut Vec<Port>,
        port: &mut dyn FnMut(LinkId, DeviceId, &mut Vec<Port>) -> PortId,
    ) -> Result<Option<DsfTopo>, PacketError> {
        let f = net.f;
        let mut ifaces: Vec<DeviceId> = touched
            .iter()
            .copied()
            .filter(|&d| is_dsf(net, d) && matches!(f.device(d).role, Role::Rdsw | Role::Edsw))
            .collect();
        if ifaces.is_empty() {
            return Ok(None);
        }
        ifaces.sort_unstable();
        ifaces.dedup();
        let mut zones: Vec<u32> = ifaces.iter().map(|&d| f.device(d).zone.get()).collect();
        zones.sort_unstable();
        zones.dedup();
        let nd = f.devices().len();
        let mut node: Vec<Option<NodeId>> = vec![None; nd];
        let mut node_device = Vec::new();
        let mut iface = Vec::new();
        let mut node_zone = Vec::new();
        let mut local = Vec::new();
        // Per zone (as in `zones`): its first node and how many.
        let mut zone_nodes: Vec<(u32, u32)> = Vec::with_capacity(zones.len());
        for &zi in &zones {
            let range = f.zone_devices(aifabric_model::ZoneId::new(zi));
            let first = node_device.len() as u32;
            for d in range {
                let dev = DeviceId::new(d);
                if !is_dsf(net, dev) {
                    continue;
                }
                node[d as usize] = Some(NodeId::from_idx(node_device.len()));
                local.push(node_device.len() as u32 - first);
                node_device.push(d);
                iface.push(matches!(f.device(dev).role, Role::Rdsw | Role::Edsw));
                node_zone.push(zi);
            }
            zone_nodes.push((first, node_device.len() as u32 - first));
        }
        let nodes = node_device.len();
        let zone_of_node = |n: u32| {
            let z = zones
                .binary_search(&node_zone[n as usize])
                .expect("a zone of the matrix");
            zone_nodes[z]
        };
        // Live fabric ports, and each node's out-ports (to another node) with that node.
        let mut out: Vec<Vec<(PortId, u32)>> = vec![Vec::new(); nodes];
        let mut fabric_ports = Vec::new();
        for (n, &d) in node_device.iter().enumerate() {
            let dev = DeviceId::new(d);
            for &l in f.incident(dev) {
                let link = f.link(l);
                if link.kind != PortKind::Fabric || !f.link_up(l, &net.down) {
                    continue;
                }
                let Some(y) = node[link.other(dev).idx()] else {
                    continue;
                };
                let p = port(l, dev, ports);
                ports[p.idx()].zone_far = local[y.idx()];
                out[n].push((p, y.get()));
                fabric_ports.push(p);
            }
        }
        fabric_ports.sort_unstable();
        fabric_ports.dedup();
        // Destinations: every touched interface node (packets and their ACKs go both ways).
        let mut dest = vec![None; nodes];
        let dests: Vec<u32> = ifaces
            .iter()
            .map(|d| node[d.idx()].expect("an interface node").get())
            .collect();
        for (k, &n) in dests.iter().enumerate() {
            dest[n as usize] = Some(k as u32);
        }
        // Each destination's row: its zone's nodes.
        let mut rows = Vec::with_capacity(dests.len());
        let mut entries = 0usize;
        for &w in &dests {
            if entries > crate::topo::MAX_TABLE {
                break;
            }
            rows.push(entries as u32);
            entries = entries.saturating_add(zone_of_node(w).1 as usize);
        }
        if entries > crate::topo::MAX_TABLE {
            return Err(PacketError::Invalid(format!(
                "{} DSF interface nodes, each with the fabric nodes of its zone, make over {} \
                 cell-forwarding entries, the limit; send to fewer racks",
                dests.len(),
                crate::topo::MAX_TABLE
            )));
        }
        // Input Balanced Mode (`aifabric_routing::ibm`): per destination interface node, the
        // share of its nominal output each fabric node can still deliver toward it.
        let mut delivered: Vec<Vec<f64>> = Vec::with_capacity(dests.len());
        {
            let mut per_zone = Vec::new();
            for &zi in &zones {
                per_zone.push((
                    zi,
                    aifabric_routing::ibm::balances(f, aifabric_model::ZoneId::new(zi), &net.down),
                ));
            }
            for &w in &dests {
                let mut r = vec![1.0f64; zone_of_node(w).1 as usize];
                let wd = DeviceId::new(node_device[w as usize]);
                let zone = node_zone[w as usize];
                if let Some((_, (ifs, per_dest))) = per_zone.iter().find(|z| z.0 == zone) {
                    if let Some(i) = ifs.iter().position(|&d| d == wd) {
                        for b in &per_dest[i] {
                            if let Some(n) = node[b.device.idx()] {
                                if b.nominal_out > 0.0 {
                                    r[local[n.idx()] as usize] =
                                        (b.delivered_out / b.nominal_out).clamp(0.0, 1.0);
                                }
                            }
                        }
                    }
                }
                delivered.push(r);
            }
        }
        let mut table = vec![(0u32, 0u32); entries];
        let mut ctrl_ps = vec![u64::MAX; entries];
        let mut members = Vec::new();
        let mut dist = vec![u32::MAX; nodes];
        let mut order = Vec::with_capacity(nodes);
        let mut queue = VecDeque::new();
        for (k, &w) in dests.iter().enumerate() {
            let (first, count) = zone_of_node(w);
            dist[first as usize..(first + count) as usize].fill(u32::MAX);
            order.clear();
            dist[w as usize] = 0;
            queue.push_back(w);
            while let Some(x) = queue.pop_front() {
                order.push(x);
                // Cells never transit another interface node.
                if x != w && iface[x as usize] {
                    continue;
                }
                for &(_, y) in &out[x as usize] {
                    if dist[y as usize] == u32::MAX
                        && node_zone[y as usize] == node_zone[w as usize]
                    {
                        dist[y as usize] = dist[x as usize] + 1;
                        queue.push_back(y);
                    }
                }
            }
            let base = rows[k] as usize;
            let at = |n: u32| base + local[n as usize] as usize;
            ctrl_ps[at(w)] = 0;
            for &u in &order[1..] {
                let start = members.len() as u32;
                for &(p, y) in &out[u as usize] {
                    if dist[y as usize] != u32::MAX
                        && dist[y as usize] + 1 == dist[u as usize]
                        && (y == w || !iface[y as usize])
                    {
                        members.push(p);
                    }
                }
                ibm_subset(
                    f,
                    &mut members,
                    start as usize,
                    ports,
                    &node,
                    &node_device,
                    &iface,
                    &local,
                    &delivered[k],
                    u,
                    w,
                );
                let n = members.len() as u32 - start;
                table[at(u)] = (start, n);
                if n > 0 {
                    let p = members[start as usize];
                    let y = node[ports[p.idx()].to.idx()].expect("a fabric node").get();
                    ctrl_ps[at(u)] = ports[p.idx()].delay_ps.saturating_add(ctrl_ps[at(y)]);
                }
            }
        }
        // Every touched interface node must reach every other of its zone.
        for &u in &dests {
            for (k, &w) in dests.iter().enumerate() {
                if u != w
                    && node_zone[u as usize] == node_zone[w as usize]
                    && table[rows[k] as usize + local[u as usize] as usize].1 == 0
                {
                    return Err(PacketError::Invalid(format!(
                        "{} cannot reach {} over its zone's live fabric links: failures cut \
                         the cell fabric",
                        f.device_name(DeviceId::new(node_device[u as usize])),
                        f.device_name(DeviceId::new(node_device[w as usize]))
                    )));
                }
            }
        }
        Ok(Some(DsfTopo {
            node,
            iface,
            node_zone,
            dest,
            local,
            rows,
            table,
            members,
            ctrl_ps,
            fabric_ports,
        }))
    }

    /// Whether a packet at device `v` toward an egress port on device `w` is scheduled:
    /// both interface nodes of the same zone (the same node too: locally switched traffic
    /// also waits in a VOQ for credits, but crosses no fabric link).
    #[inline]
    pub fn scheduled(&self, v: DeviceId, w: DeviceId) -> bool {
        match (self.node[v.idx()], self.node[w.idx()]) {
            (Some(a), Some(b)) => {
                self.iface[a.idx()]
                    && self.iface[b.idx()]
                    && self.node_zone[a.idx()] == self.node_zone[b.idx()]
            }
            _ => false,
        }
    }

    /// Whether device `v` is an interface node of the zone of device `w` (a rack switch):
    /// a packet there reaches `w` through the fabric (or is at `w`).
    #[inline]
    pub fn same_zone(&self, v: DeviceId, w: DeviceId) -> bool {
        match (self.node[v.idx()], self.node[w.idx()]) {
            (Some(a), Some(b)) => {
                self.iface[a.idx()] && self.node_zone[a.idx()] == self.node_zone[b.idx()]
            }
            _ => false,
        }
    }

    /// One-way delay of a message from interface device `v` to interface device `w` of the
    /// same zone, picoseconds.
    #[inline]
    pub fn ctrl_delay(&self, v: DeviceId, w: DeviceId) -> u64 {
        self.ctrl_ps[self.entry(self.row_of(w), v)]
    }

    /// The node of device `v`, a node of a zone the matrix crosses.
    #[inline]
    pub fn node_of(&self, v: DeviceId) -> NodeId {
        self.node[v.idx()].expect("a node of a DSF zone")
    }

    /// Device `v`'s index among its zone's nodes ([`DsfTopo::local`]).
    #[inline]
    pub fn local_of(&self, v: DeviceId) -> u32 {
        self.local[self.node_of(v).idx()]
    }

    /// The row of interface device `w`'s table (see [`DsfTopo::rows`]).
    #[inline]
    pub fn row_of(&self, w: DeviceId) -> u32 {
        self.rows[self.dest_of(w) as usize]
    }

    /// The entry of device `v` (a node of the same zone) in the table at `row`.
    #[inline]
    pub fn entry(&self, row: u32, v: DeviceId) -> usize {
        row as usize + self.local_of(v) as usize
    }

    /// The destination index of interface device `w`.
    #[inline]
    pub fn dest_of(&self, w: DeviceId) -> u32 {
        self.dest[self.node_of(w).idx()].expect("an interface node packets leave at")
    }
}
