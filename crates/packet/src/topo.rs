//! The fabric as the packet engine sees it: directed ports with a rate and a delay, and per
//! destination rack switch a forwarding table of next-hop ports at every switch a flow can
//! cross, from the control plane's converged routes (`aifabric-routing`, through
//! [`Net::next_hops`]).
//!
//! Index-based and sized by what the traffic touches: only the switches on some path toward
//! a destination rack of the matrix get a compact index, only the links they forward over get
//! ports, and the table is dense over (destination rack, switch).

use crate::ids::{DestId, HostId, PortId, SwitchId};
use crate::{PacketError, PacketLb};
use aifabric_dataplane::{Net, ResourceId};
use aifabric_model::{DeviceId, LinkId, Role};
use aifabric_routing::bgp::SpeakerKind;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Propagation in fiber: 5 ns per metre.
pub const PS_PER_M: u64 = 5_000;

/// Most (destination rack, switch) entries the forwarding table may hold (4 bytes each: the
/// index of a shared group of next hops).
pub const MAX_TABLE: usize = 64 << 20;

/// A directed link.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Port {
    /// Device at the far end.
    pub to: DeviceId,
    /// Device at the near end.
    pub from: DeviceId,
    /// Line rate, bits per second.
    pub rate_bps: u64,
    /// Picoseconds per byte when a whole number (100, 200, 400, 800 Gb/s), else 0.
    pub ps_per_byte: u64,
    /// Propagation delay plus the far switch's forwarding latency, picoseconds.
    pub delay_ps: u64,
    /// The data plane's resource (the link in this direction), for names and tiers.
    pub resource: ResourceId,
    /// A DSF fabric port: its far end's index among its zone's nodes
    /// ([`DsfTopo::local`](crate::dsf::DsfTopo::local), set by the DSF build), where a cell
    /// sent on it will be. 0 on every other port.
    pub zone_far: u32,
}

const _: () = assert!(std::mem::size_of::<Port>() == 40);

impl Port {
    /// Time to serialize `bytes` on this port, picoseconds (rounded up).
    #[inline]
    pub fn serialize_ps(&self, bytes: u32) -> u64 {
        if self.ps_per_byte > 0 {
            u64::from(bytes) * self.ps_per_byte
        } else if bytes < 1 << 21 {
            // Fits in 64 bits (2^21 x 8e12 < 2^64): a cheaper division, the same result.
            (u64::from(bytes) * 8_000_000_000_000).div_ceil(self.rate_bps)
        } else {
            (u128::from(bytes) * 8_000_000_000_000u128).div_ceil(u128::from(self.rate_bps)) as u64
        }
    }
}

/// Ports and forwarding.
pub(crate) struct Topo {
    pub ports: Vec<Port>,
    /// Each port's far end again, 4 bytes a port: what every arrival reads first, dense so
    /// that it stays in cache where `ports` (40 bytes a port) does not.
    pub port_to: Vec<DeviceId>,
    /// Per host (matrix node): its NIC port, the port from its rack switch down to it, and
    /// the index of its rack switch among the destinations.
    pub host_up: Vec<PortId>,
    pub host_down: Vec<PortId>,
    /// (`None`: a host of the matrix that neither sends nor receives.)
    pub host_dest: Vec<Option<DestId>>,
    /// Device index -> host (matrix node), `None` for switches.
    pub host_of_device: Vec<Option<HostId>>,
    /// Device of each host.
    pub host_device: Vec<DeviceId>,
    /// Port -> the host whose NIC it is, `None` for switch ports.
    pub port_host: Vec<Option<HostId>>,
    /// Device index -> compact switch index, `None` where no path goes.
    pub switch_index: Vec<Option<SwitchId>>,
    /// Rack switch device of each destination.
    pub dest_rack: Vec<DeviceId>,
    pub switches: usize,
    /// `[dest * switches + switch]` -> its group, an index into `groups` (0: none).
    pub table: Vec<u32>,
    /// Each distinct group of next hops: (first member, members). Group 0 is empty.
    pub groups: Vec<(u32, u32)>,
    /// Next-hop ports.
    pub members: Vec<PortId>,
    /// Cumulative UCMP weight of each member within its group, scaled to 2^32 (empty when
    /// every group splits equally).
    pub cum_weight: Vec<u64>,
    /// The cell fabrics of the DSF zones the matrix crosses.
    pub dsf: Option<crate::dsf::DsfTopo>,
}

/// What a destination's forwarding table is built from: (switch, [(link, near end, far end,
/// share)]); the near end is the switch, or for a DSF zone another interface node of its
/// speaker (the packet crosses the cell fabric to it first).
type Groups = Vec<(DeviceId, Vec<(LinkId, DeviceId, DeviceId, f64)>)>;

impl Topo {
    /// The group of compact switch `sw` toward destination `dest`: (first member, members);
    /// no members where the switch has no route.
    #[inline]
    pub fn group(&self, dest: usize, sw: usize) -> (usize, usize) {
        let (start, n) = self.groups[self.table[self.entry(dest, sw)] as usize];
        (start as usize, n as usize)
    }

    /// Where in `table` compact switch `sw`'s group toward destination `dest` is.
    #[inline]
    pub fn entry(&self, dest: usize, sw: usize) -> usize {
        dest * self.switches + sw
    }

    /// Ports and tables for flows `pairs` (source and destination GPUs) on `net`.
    pub fn build(
        net: &Net<'_>,
        hosts: &[DeviceId],
        pairs: &[(u32, u32)],
        lb: PacketLb,
        link_latency_ps: Option<u64>,
        switch_latency_ps: u64,
    ) -> Result<Topo, PacketError> {
        let f = net.f;
        let nd = f.devices().len();
        let mut host_of_device = vec![None; nd];
        for (i, &h) in hosts.iter().enumerate() {
            host_of_device[h.idx()] = Some(HostId::from_idx(i));
        }
        // Each host's link and rack switch.
        let mut attach = Vec::with_capacity(hosts.len());
        for &h in hosts {
            let (l, tor) = net.attach(h).ok_or_else(|| {
                PacketError::Invalid(format!(
                    "{} has no live link to a rack switch: it can neither send nor receive",
                    f.device_name(h)
                ))
            })?;
            attach.push((l, tor));
        }
        // Destination racks, and the source racks that send to each.
        let mut dest_of_rack: FxHashMap<DeviceId, u32> = FxHashMap::default();
        let mut dest_rack: Vec<DeviceId> = Vec::new();
        let mut host_dest: Vec<Option<DestId>> = vec![None; hosts.len()];
        let mut sources: Vec<Vec<DeviceId>> = Vec::new();
        // Data goes from source to destination, ACKs and NACKs back: both are destinations.
        let both = pairs.iter().flat_map(|&(s, d)| [(s, d), (d, s)]);
        for (s, d) in both {
            let tor = attach[d as usize].1;
            let k = *dest_of_rack.entry(tor).or_insert_with(|| {
                dest_rack.push(tor);
                sources.push(Vec::new());
                dest_rack.len() as u32 - 1
            });
            host_dest[d as usize] = Some(DestId::new(k));
            sources[k as usize].push(attach[s as usize].1);
        }
        for (h, d) in host_dest.iter_mut().enumerate() {
            if d.is_none() {
                *d = dest_of_rack.get(&attach[h].1).map(|&k| DestId::new(k));
            }
        }
        let weighted = lb.entropies().is_some();
        let groups: Vec<Groups> = dest_rack
            .par_iter()
            .zip(sources.par_iter())
            .map(|(&tor, srcs)| groups_toward(net, tor, srcs, weighted))
            .collect::<Result<_, _>>()?;
        // Compact switch indices, in device order.
        let mut switch_index = vec![None; nd];
        let mut seen: Vec<u32> = groups
            .iter()
            .flat_map(|g| g.iter().map(|(d, _)| d.get()))
            .collect();
        seen.sort_unstable();
        seen.dedup();
        for (i, &d) in seen.iter().enumerate() {
            switch_index[d as usize] = Some(SwitchId::from_idx(i));
        }
        let switches = seen.len();
        let entries = switches.saturating_mul(dest_rack.len());
        if entries > MAX_TABLE {
            return Err(PacketError::Invalid(format!(
                "{} destination racks x {switches} switches on their paths make {entries} \
                 forwarding entries, over the limit of {MAX_TABLE}; send to fewer racks",
                dest_rack.len()
            )));
        }
        let mut ports: Vec<Port> = Vec::new();
        let mut port_of: FxHashMap<ResourceId, PortId> = FxHashMap::default();
        let mut port = |l: LinkId, from: DeviceId, ports: &mut Vec<Port>| -> PortId {
            let r = net.link_resource(l, from);
            *port_of.entry(r).or_insert_with(|| {
                let link = f.link(l);
                let to = link.other(from);
                let rate_bps = port_rate_bps(net, l, from, link.capacity_mbps);
                let prop = link_latency_ps
                    .unwrap_or_else(|| (link.length_m() * PS_PER_M as f64).round() as u64);
                let fwd = if f.device(to).role == Role::Gpu {
                    0
                } else {
                    switch_latency_ps
                };
                ports.push(Port {
                    to,
                    from,
                    rate_bps,
                    ps_per_byte: if 8_000_000_000_000u64.is_multiple_of(rate_bps.max(1)) {
                        8_000_000_000_000u64 / rate_bps.max(1)
                    } else {
                        0
                    },
                    delay_ps: prop + fwd,
                    resource: r,
                    zone_far: 0,
                });
                PortId::from_idx(ports.len() - 1)
            })
        };
        let mut host_up = Vec::with_capacity(hosts.len());
        let mut host_down = Vec::with_capacity(hosts.len());
        for (i, &h) in hosts.iter().enumerate() {
            let (l, tor) = attach[i];
            host_up.push(port(l, h, &mut ports));
            host_down.push(port(l, tor, &mut ports));
        }
        let mut table = vec![0u32; entries];
        let mut members: Vec<PortId> = Vec::new();
        let mut cum: Vec<u64> = Vec::new();
        let mut unequal = false;
        // A switch's group is the same toward most destinations (a fat tree's uplinks):
        // each distinct group (its ports and weights, in order) is stored once, so that the
        // table (4 bytes an entry) and the members a packet's hop reads stay in cache.
        let mut stored: FxHashMap<Vec<(PortId, u64)>, u32> = FxHashMap::default();
        let mut distinct: Vec<(u32, u32)> = vec![(0, 0)];
        let mut group: Vec<(PortId, u64)> = Vec::new();
        for (k, g) in groups.iter().enumerate() {
            for (v, hops) in g {
                let total: f64 = hops.iter().map(|h| h.3).sum();
                let mut acc = 0.0;
                group.clear();
                for &(l, near, _, w) in hops {
                    acc += w;
                    let c = ((acc / total) * 4_294_967_296.0).round() as u64;
                    group.push((port(l, near, &mut ports), c));
                    unequal |= (w - hops[0].3).abs() > 1e-12 * hops[0].3.abs();
                }
                let g = match stored.get(&group) {
                    Some(&g) => g,
                    None => {
                        distinct.push((members.len() as u32, group.len() as u32));
                        members.extend(group.iter().map(|x| x.0));
                        cum.extend(group.iter().map(|x| x.1));
                        let g = distinct.len() as u32 - 1;
                        stored.insert(group.clone(), g);
                        g
                    }
                };
                let sw = switch_index[v.idx()].expect("a switch of the tables").idx();
                table[k * switches + sw] = g;
            }
        }
        // DSF zones: every interface node a packet meets (rack switches, switches of the
        // tables, both ends of their members) and the fabrics of their zones.
        let mut touched: Vec<DeviceId> = attach.iter().map(|a| a.1).collect();
        for g in &groups {
            for (v, hops) in g {
                touched.push(*v);
                touched.extend(hops.iter().flat_map(|h| [h.1, h.2]));
            }
        }
        let dsf = crate::dsf::DsfTopo::build(net, &touched, &mut ports, &mut port)?;
        let mut port_host = vec![None; ports.len()];
        for (h, &p) in host_up.iter().enumerate() {
            port_host[p.idx()] = Some(HostId::from_idx(h));
        }
        Ok(Topo {
            port_host,
            host_device: hosts.to_vec(),
            port_to: ports.iter().map(|p| p.to).collect(),
            ports,
            host_up,
            host_down,
            host_dest,
            host_of_device,
            switch_index,
            dest_rack,
            switches,
            table,
            groups: distinct,
            members,
            cum_weight: if unequal { cum } else { Vec::new() },
            dsf,
        })
    }
}

/// The next hops of every switch a packet from `sources` can reach on its way to rack `tor`.
fn groups_toward(
    net: &Net<'_>,
    tor: DeviceId,
    sources: &[DeviceId],
    weighted: bool,
) -> Result<Groups, PacketError> {
    let f = net.f;
    let target = net.g.rack_speaker(tor);
    // Each destination's routes once, dropped when its tables are built (not cached: all
    // of them at once would grow with racks x speakers).
    let routes = net
        .routes_toward(target)
        .map_err(|e| PacketError::Invalid(format!("routing did not converge: {e}")))?;
    let mut visited: FxHashMap<DeviceId, ()> = FxHashMap::default();
    let mut stack: Vec<DeviceId> = sources.iter().copied().filter(|&s| s != tor).collect();
    stack.sort_unstable();
    stack.dedup();
    let mut out: Groups = Vec::new();
    while let Some(v) = stack.pop() {
        if visited.insert(v, ()).is_some() {
            continue;
        }
        let sv = net.g.speaker(v).ok_or_else(|| {
            PacketError::Invalid(format!("{} speaks no BGP: no route", f.device_name(v)))
        })?;
        let dsf = matches!(net.g.speakers[sv.idx()].kind, SpeakerKind::DsfSystem(_));
        if dsf && sv == target {
            // In the destination's DSF zone: the cell fabric takes the packet to the rack
            // switch (see `dsf.rs`), no route is read.
            continue;
        }
        let hops = nsf_pruned(net, v, tor, net.next_hops(&routes, sv, weighted));
        if hops.is_empty() {
            // No built link joining the two is the cause to name before any failure.
            let why = net
                .unconnected_cause(v, tor)
                .unwrap_or_else(|| "a failure or drain cuts it off".to_owned());
            return Err(PacketError::Invalid(format!(
                "{} has no route toward {}: {why}",
                f.device_name(v),
                f.device_name(tor)
            )));
        }
        let mut group = Vec::with_capacity(hops.len());
        for (l, w) in hops {
            let link = f.link(l);
            // A DSF zone's links toward BAG may start at another of its interface nodes.
            let near = if !dsf || link.a == v || link.b == v {
                v
            } else if net.g.speaker(link.a) == Some(sv) {
                link.a
            } else {
                link.b
            };
            let far = link.other(near);
            group.push((l, near, far, w));
            if far != tor && !visited.contains_key(&far) {
                stack.push(far);
            }
        }
        out.push((v, group));
    }
    out.sort_unstable_by_key(|g| g.0);
    Ok(out)
}

/// NSF capacity-aware path pruning at a rack switch (with `BgpConfig::nsf_pruning`): in
/// each spine plane, of its live links to that plane's FTSW, `v` keeps only as many as the
/// routing crate's pruning leaves usable toward rack `tor` (`aifabric_routing::nsf::prune`:
/// failures at the destination's side move back to the source), equal per kept link. Other
/// switches, and a rack switch whose every link would be pruned, keep BGP's next hops.
fn nsf_pruned(
    net: &Net<'_>,
    v: DeviceId,
    tor: DeviceId,
    hops: Vec<(LinkId, f64)>,
) -> Vec<(LinkId, f64)> {
    let f = net.f;
    if !net.cfg.nsf_pruning || f.device(v).role != Role::Rtsw {
        return hops;
    }
    let planes = aifabric_routing::nsf::prune(f, v, tor, &net.down);
    let mut kept: Vec<LinkId> = Vec::new();
    for p in &planes {
        kept.extend(
            hops.iter()
                .map(|&(l, _)| l)
                .filter(|&l| f.link(l).other(v) == p.ftsw)
                .take(p.usable as usize),
        );
    }
    if planes.is_empty() || kept.is_empty() {
        return hops;
    }
    kept.sort_unstable();
    let w = 1.0 / kept.len() as f64;
    kept.into_iter().map(|l| (l, w)).collect()
}

/// The rate of the port over link `l` from `from`, bits/s: the link's, or less where `net`
/// leaves only a share of it to what runs (the share another job's traffic leaves,
/// `cluster`'s [`Net::set_share_bps`](aifabric_dataplane::Net::set_share_bps)): on the
/// link itself, or on a DSF fabric aggregate it belongs to
/// ([`Net::fabric_share`](aifabric_dataplane::Net::fabric_share)). A failed or drained
/// link (no capacity) keeps its rate: routing keeps packets off it.
fn port_rate_bps(net: &Net<'_>, l: LinkId, from: DeviceId, capacity_mbps: u32) -> u64 {
    let full = u64::from(capacity_mbps) * 1_000_000;
    let link_bits = net.capacity_bps(net.link_resource(l, from)) * 8.0;
    let bits = if link_bits > 0.0 && link_bits < full as f64 {
        link_bits
    } else {
        full as f64
    } * net.fabric_share(l, from);
    if bits < full as f64 {
        (bits.round() as u64).max(1)
    } else {
        full
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NSF pruning (FBOSS's rule, `aifabric_routing::nsf`): the destination rack lost 3 of
    /// its 4 links to its plane-0 FTSW, so a rack of another pod keeps 1 of its 4 links in
    /// plane 0 toward it (3 prunes), and all 4 in every other plane; without pruning, BGP
    /// keeps all 4 in every plane.
    #[test]
    fn nsf_pruning_keeps_the_usable_links_per_plane() {
        use aifabric_dataplane::NetParams;
        use aifabric_model::{PortKind, Scenario};
        use aifabric_routing::bgp::{AsnPlan, BgpConfig};
        let yaml = "name: n\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            nsf: {pods: 2, racks_per_pod: 2, gpus_per_rack: 4, spine_planes: 2, rack_links_per_plane: 4, stsw_per_plane: 2, ftsw_links_per_stsw: 4, stsw_uplinks: 1, link_speed_gbps: 400}\n";
        let f = aifabric_spec::build_str("n.yaml", yaml).unwrap();
        let racks: Vec<DeviceId> = f.devices_with_role(Role::Rtsw).collect();
        let (src, dst) = (racks[0], racks[3]);
        assert_ne!(f.device(src).pod(), f.device(dst).pod());
        let ftsw_links = |r: DeviceId, plane: u16| -> Vec<LinkId> {
            let mut v: Vec<LinkId> = f
                .incident(r)
                .iter()
                .copied()
                .filter(|&l| {
                    let o = f.device(f.link(l).other(r));
                    f.link(l).kind == PortKind::Ethernet
                        && o.role == Role::Ftsw
                        && o.plane() == Some(plane)
                })
                .collect();
            v.sort_unstable();
            v
        };
        let mut s = Scenario::healthy(&f);
        for &l in &ftsw_links(dst, 0)[..3] {
            s.failed.fail_link(l);
        }
        let kept_per_plane = |pruning: bool| -> Vec<usize> {
            let cfg = BgpConfig {
                nsf_pruning: pruning,
                ..BgpConfig::default()
            };
            let net = Net::new(&f, &s, AsnPlan::Rfc7938, cfg, NetParams::default());
            let groups = groups_toward(&net, dst, &[src], true).unwrap();
            let (_, g) = groups.iter().find(|g| g.0 == src).unwrap();
            (0..2u16)
                .map(|p| {
                    g.iter()
                        .filter(|m| ftsw_links(src, p).contains(&m.0))
                        .count()
                })
                .collect()
        };
        assert_eq!(kept_per_plane(true), vec![1, 4]);
        assert_eq!(kept_per_plane(false), vec![4, 4]);
    }

    /// A link's share of its capacity (what other jobs leave one job, `cluster`) is its
    /// port's rate: a flow whose last hop keeps half its link sends at half the rate and
    /// takes about twice as long (8 MiB: the round trips are under 1% of it); without a
    /// share the port has its link's own rate.
    #[test]
    fn a_links_share_is_its_ports_rate() {
        use aifabric_workload::traffic::{Start, TmFlow, TrafficMatrix};
        let f = crate::testing::fat_tree(4);
        let mut net = crate::testing::healthy(&f);
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
        let tm = TrafficMatrix {
            nodes: 2,
            flows: vec![TmFlow {
                id: 1,
                src: 0,
                dst: 1,
                bytes: 8 << 20,
                start: Start::AtPs(0),
                done_trigger: None,
                recv_trigger: None,
            }],
            triggers: Default::default(),
        };
        let cfg = crate::Config {
            lb: PacketLb::Ecmp,
            ..crate::Config::uec_htsim()
        };
        let dst = gpus[1];
        let l = f.incident(dst)[0];
        let down = net.link_resource(l, f.link(l).other(dst));
        let run = |net: &Net<'_>| {
            let (topo, _) = crate::setup::prepare(net, &tm, &gpus, &cfg).unwrap();
            let rate = topo
                .ports
                .iter()
                .find(|p| p.resource == down)
                .unwrap()
                .rate_bps;
            (rate, crate::run(net, &tm, &gpus, &cfg).unwrap().makespan_s)
        };
        let (full_rate, full) = run(&net);
        assert_eq!(full_rate, 100_000_000_000);
        net.set_share_bps(down, net.capacity_bps(down) / 2.0);
        let (half_rate, half) = run(&net);
        assert_eq!(half_rate, 50_000_000_000);
        let ratio = half / full;
        assert!((1.9..2.05).contains(&ratio), "{half} s against {full} s");
        net.restore_capacity(down);
        assert_eq!(run(&net), (full_rate, full));
    }

    /// A share on a DSF fabric aggregate (an interface node's fabric side, a cluster's
    /// stage: what the flow engine holds a zone's fabric as, and `cluster` may cut) cuts
    /// each of its links' rates in that proportion, in its direction only; no share, none.
    #[test]
    fn a_dsf_aggregates_share_cuts_its_links_rates() {
        use aifabric_dataplane::Resource;
        use aifabric_model::PortKind;
        use aifabric_workload::traffic::Pattern;
        let find = |net: &Net<'_>, what: Resource| {
            (0..net.resources())
                .map(ResourceId::new)
                .find(|&r| net.resource(r) == what)
                .expect("the aggregate")
        };
        // One stage: an RDSW's uplinks into the fabric at half.
        let f = crate::testing::two_regions();
        let mut net = crate::testing::healthy(&f);
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
        let rdsw = f.devices_with_role(Role::Rdsw).next().unwrap();
        let fabric: Vec<LinkId> = f
            .incident(rdsw)
            .iter()
            .copied()
            .filter(|&l| f.link(l).kind == PortKind::Fabric)
            .collect();
        assert!(!fabric.is_empty());
        assert!(fabric.iter().all(|&l| net.fabric_share(l, rdsw) == 1.0));
        let up = find(&net, Resource::Iface(rdsw, true));
        net.set_share_bps(up, net.capacity_bps(up) / 2.0);
        let tm = Pattern::Permutation.generate(gpus.len() as u32, 1 << 20, 3);
        let (topo, _) = crate::setup::prepare(&net, &tm, &gpus, &crate::Config::uec_htsim())
            .expect("it prepares");
        let rate = |l: LinkId, from: DeviceId| {
            let r = net.link_resource(l, from);
            topo.ports
                .iter()
                .find(|p| p.resource == r)
                .map(|p| p.rate_bps)
        };
        for &l in &fabric {
            let (other, full) = (f.link(l).other(rdsw), u64::from(f.link(l).capacity_mbps));
            assert_eq!(net.fabric_share(l, rdsw), 0.5);
            assert_eq!(
                net.fabric_share(l, other),
                1.0,
                "its downlinks keep their rate"
            );
            assert_eq!(rate(l, rdsw), Some(full * 500_000));
            assert_eq!(rate(l, other), Some(full * 1_000_000));
        }
        // Two stages: the FDSW -> SDSW links of one cluster at a quarter, no others.
        let l2 = aifabric_spec::build_str("l2.yaml", aifabric_fixtures::specs::DSF_L2_SMALL)
            .expect("the fixture builds");
        let mut net = crate::testing::healthy(&l2);
        let stage = find(&net, Resource::Stage(0, true));
        net.set_share_bps(stage, net.capacity_bps(stage) / 4.0);
        let (mut cut, mut kept) = (0, 0);
        for fdsw in l2.devices_with_role(Role::Fdsw) {
            for &l in l2.incident(fdsw) {
                let sdsw = l2.link(l).other(fdsw);
                if l2.device(sdsw).role != Role::Sdsw {
                    continue;
                }
                let k = net.fabric_share(l, fdsw);
                if k == 0.25 {
                    cut += 1;
                } else {
                    assert_eq!(k, 1.0);
                    kept += 1;
                }
                assert_eq!(net.fabric_share(l, sdsw), 1.0, "down the stage: no share");
            }
        }
        assert!(
            cut > 0 && kept > 0,
            "{cut} cut, {kept} kept: one cluster of several"
        );
    }

    #[test]
    fn serialization_is_exact_at_whole_picoseconds_per_byte() {
        let p = Port {
            to: DeviceId::new(0),
            from: DeviceId::new(0),
            rate_bps: 100_000_000_000,
            ps_per_byte: 80,
            delay_ps: 0,
            resource: ResourceId::new(0),
            zone_far: 0,
        };
        assert_eq!(p.serialize_ps(4150), 332_000);
        let q = Port {
            rate_bps: 106_250_000_000,
            ps_per_byte: 0,
            ..p
        };
        // 4150 B x 8 / 106.25 Gb/s = 312.47 ns, rounded up.
        assert_eq!(q.serialize_ps(4150), 312_471);
    }
}
