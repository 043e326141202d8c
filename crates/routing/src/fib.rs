//! What one device forwards toward one prefix: the view `aifabric routes` prints.
//!
//! Prefixes are the racks' GPU subnets, one per rack switch (RTSW or RDSW), named
//! `<zone>.rack<N>` and numbered by the [`crate::addressing`] plan.

use crate::bgp::{BgpConfig, BgpGraph, RoutesTo, SessionState, SpeakerId, SpeakerKind};
use crate::ucmp;
use aifabric_model::*;
use serde::Serialize;

/// A destination prefix: the GPUs of one rack.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Prefix {
    /// `<zone>.rack<N>`.
    pub name: String,
    /// Its IPv6 /64, when the fabric fits the addressing plan.
    pub ipv6: Option<String>,
    /// The rack switch that originates it.
    pub rack_switch: DeviceId,
}

/// Every prefix of the fabric, in device order.
pub fn prefixes(f: &Fabric) -> Vec<Prefix> {
    let plan = crate::addressing::AddressPlan::new(f).ok();
    f.devices()
        .iter()
        .enumerate()
        .filter(|(_, d)| matches!(d.role, Role::Rtsw | Role::Rdsw))
        .map(|(i, d)| Prefix {
            name: format!("{}.rack{}", f.zones()[d.zone.idx()].name, Ordinal(d.rack)),
            ipv6: plan
                .as_ref()
                .map(|p| p.rack_prefix(f, DeviceId::from_idx(i)).to_string()),
            rack_switch: DeviceId::from_idx(i),
        })
        .collect()
}

/// The prefix named `text`: `<zone>.rack<N>`, its IPv6 /64, or the name of its rack switch.
pub fn find_prefix(f: &Fabric, text: &str) -> Option<Prefix> {
    // As the plan prints it: host bits cleared, so `fd00:a1:0:3::1/64` names the rack's /64.
    let net = text
        .parse::<crate::addressing::Ipv6Net>()
        .ok()
        .map(|n| n.trunc().to_string());
    prefixes(f).into_iter().find(|p| {
        p.name == text || f.device_name(p.rack_switch) == text || (net.is_some() && p.ipv6 == net)
    })
}

/// How a device reaches a prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RouteKind {
    /// The device is the prefix's rack switch.
    Connected,
    /// Inside the same DSF zone: cells sprayed over every live fabric link to the rack's RDSW.
    DsfFabric,
    /// Learned by BGP.
    Bgp,
    /// No route: traffic is dropped.
    Unreachable,
}

/// One next hop as programmed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NextHopView {
    /// Neighbor speaker (a device name, or a DSF zone).
    pub neighbor: String,
    /// Live links of the session.
    pub links: u32,
    /// Their capacity, Gb/s.
    pub capacity_gbps: f64,
    /// Link-bandwidth value received from the neighbor (Mb/s or links, by mode).
    pub received_bandwidth: Option<u64>,
    /// Ideal UCMP share.
    pub weight: f64,
    /// Entries of the hardware next-hop group that point to it.
    pub slots: u32,
    /// The session is soft-drained (LOCAL_PREF 0).
    pub soft_drained: bool,
    /// With NSF pruning: this plane's links pruned (weight 0) toward the destination.
    pub pruned_links: Option<u32>,
}

/// A device's route toward a prefix.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RouteView {
    /// The device asked about.
    pub device: String,
    /// The prefix.
    pub prefix: String,
    /// Its IPv6 /64.
    pub ipv6: Option<String>,
    /// How it is reached.
    pub kind: RouteKind,
    /// LOCAL_PREF of the best route (BGP only).
    pub local_pref: Option<u32>,
    /// AS path of the best route, nearest ASN first (BGP only).
    pub as_path: Vec<u32>,
    /// Multipath next hops.
    pub next_hops: Vec<NextHopView>,
    /// Largest hardware group (`--group-size`).
    pub group_size: u32,
    /// Entries the group uses (the sum of `slots`): one per next hop when the weights are
    /// equal, the weights' smallest integer ratio when it fits in `group_size`, else
    /// `group_size` (quantized).
    pub group_entries: u32,
    /// Largest programmed / ideal share ratio over the next hops (1.0 = exact).
    pub max_overload: f64,
}

/// The route of `device` toward `prefix`, given the routes toward the prefix's origin;
/// `unusable` (failed or hard-drained) is what NSF pruning looks at.
#[allow(clippy::too_many_arguments)]
pub fn route_view(
    f: &Fabric,
    g: &BgpGraph,
    states: &[SessionState],
    routes: &RoutesTo,
    cfg: &BgpConfig,
    unusable: &FailureMask,
    device: DeviceId,
    prefix: &Prefix,
) -> RouteView {
    let mut view = RouteView {
        device: f.device_name(device),
        prefix: prefix.name.clone(),
        ipv6: prefix.ipv6.clone(),
        kind: RouteKind::Unreachable,
        local_pref: None,
        as_path: Vec::new(),
        next_hops: Vec::new(),
        group_size: cfg.group_size,
        group_entries: 0,
        max_overload: 1.0,
    };
    let v = g.speaker(device);
    if device == prefix.rack_switch {
        view.kind = RouteKind::Connected;
        return view;
    }
    let Some(v) = v else {
        // Not a BGP speaker: a DSF fabric node sprays cells toward racks of its own zone.
        let (d, r) = (f.device(device), f.device(prefix.rack_switch));
        if matches!(d.role, Role::Fdsw | Role::Sdsw) && d.zone == r.zone {
            view.kind = RouteKind::DsfFabric;
        }
        return view;
    };
    if routes.is_origin(v) {
        // Same DSF system: the cell fabric, not BGP.
        view.kind = RouteKind::DsfFabric;
        return view;
    }
    let Some(best) = routes.best[v.idx()] else {
        return view;
    };
    view.kind = RouteKind::Bgp;
    view.local_pref = Some(best.local_pref);
    view.as_path = as_path(g, routes, v);
    let mut weights = routes.weights(g, states, v);
    // The integers behind the weights, which the hardware group programs.
    let paths: Vec<ucmp::Path> = routes
        .multipaths(g, states, v)
        .iter()
        .map(|m| (m.received, states[m.session.idx()].links))
        .collect();
    let mut ints = ucmp::integer_weights(&paths, cfg.missing);
    let mut pruned = vec![None; weights.len()];
    if cfg.nsf_pruning {
        let planes = crate::nsf::prune(f, device, prefix.rack_switch, unusable);
        if !planes.is_empty() {
            // Weight each plane's next hop by the links it may still use toward the rack.
            let usable: Vec<f64> = routes
                .multipaths(g, states, v)
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let hop = match g.speakers[m.neighbor.idx()].kind {
                        SpeakerKind::Device(d) => planes.iter().find(|p| p.ftsw == d),
                        SpeakerKind::DsfSystem(_) => None,
                    };
                    pruned[i] = hop.map(|p| p.prunes);
                    hop.map_or(0.0, |p| f64::from(p.usable))
                })
                .collect();
            let total: f64 = usable.iter().sum();
            if total == 0.0 {
                // Every plane pruned: nothing left toward this rack.
                view.kind = RouteKind::Unreachable;
                view.local_pref = None;
                view.as_path.clear();
                return view;
            }
            weights = usable.iter().map(|u| u / total).collect();
            ints = usable.iter().map(|&u| u as u64).collect();
        }
    }
    // Program the weights into the hardware group: exactly when they fit, else quantized.
    let split = ucmp::split(&ints, cfg.group_size);
    view.max_overload = split.max_overload;
    view.group_entries = split.entries;
    for (((m, w), slots), pruned_links) in routes
        .multipaths(g, states, v)
        .iter()
        .zip(weights)
        .zip(split.slots)
        .zip(pruned)
    {
        let st = states[m.session.idx()];
        view.next_hops.push(NextHopView {
            neighbor: speaker_name(f, g, m.neighbor),
            links: st.links,
            capacity_gbps: st.mbps as f64 / 1_000.0,
            received_bandwidth: m.received,
            weight: w,
            slots,
            soft_drained: st.soft,
            pruned_links,
        });
    }
    view
}

/// ASNs of the best path from `v` (exclusive) to the origin (inclusive).
fn as_path(g: &BgpGraph, routes: &RoutesTo, v: SpeakerId) -> Vec<u32> {
    let mut path = Vec::new();
    let mut x = v;
    while let Some(b) = routes.best[x.idx()] {
        if b.parent == x || path.len() > g.speakers.len() {
            break;
        }
        let hops = b.len - routes.best[b.parent.idx()].map_or(0, |p| p.len);
        x = b.parent;
        // A prepended path repeats the ASN.
        path.extend(std::iter::repeat_n(g.speakers[x.idx()].asn, hops as usize));
    }
    path
}

/// A speaker as the tools print it: its device, or `ZONE (DSF)` for a DSF zone's one speaker.
pub fn speaker_name(f: &Fabric, g: &BgpGraph, v: SpeakerId) -> String {
    match g.speakers[v.idx()].kind {
        SpeakerKind::Device(d) => f.device_name(d),
        SpeakerKind::DsfSystem(z) => format!("{} (DSF)", f.zones()[z.idx()].name),
    }
}
