//! A flow's spread over the forwarding as a fluid: the resources it loads, with shares,
//! hop by hop under a load-balancing mode, and its latency.

use crate::{mix, Lb, Net, NoPath};
use aifabric_model::{DeviceId, LinkId};
use aifabric_routing::bgp::{RoutesTo, SpeakerId};

impl Net<'_> {
    /// Add the crossbar crossing of a DSF zone from interface node `v` to `w`.
    pub(crate) fn crossbar(
        &self,
        v: DeviceId,
        w: DeviceId,
        mass: f64,
        out: &mut Vec<(u32, f64)>,
    ) -> f64 {
        out.push((self.base_iface + 2 * v.get(), mass));
        let (cv, cw) = (self.cluster[v.idx()], self.cluster[w.idx()]);
        let (hops, len) = self.zone_hops[self.zone_of[v.idx()] as usize];
        let mut hops = hops;
        match (cv, cw) {
            (Some(cv), Some(cw)) if cv != cw => {
                out.push((self.base_stage + 2 * cv, mass));
                out.push((self.base_stage + 2 * cw + 1, mass));
            }
            // Same cluster (or single stage): interface -> FDSW -> interface.
            _ => hops = 2,
        }
        out.push((self.base_iface + 2 * w.get() + 1, mass));
        f64::from(hops) * (self.params.switch_latency_s + self.cable_s(len))
    }

    /// One hop between switches: the cable, and the switch at its far end forwarding.
    pub(crate) fn hop_latency(&self, l: LinkId) -> f64 {
        self.params.switch_latency_s + self.cable_s(self.f.link(l).length_m())
    }

    /// The resources a flow from GPU `src` to GPU `dst` uses, with the share of its rate on
    /// each (appended to `out`), and its latency in seconds. `routes` must be the routes toward
    /// [`Net::dest_speaker`] of `dst` (`None` when it has none: only a scale-up transfer, which
    /// needs no network, can then succeed). `flow_hash` identifies the flow (pair and QP) for
    /// hashing; `seed` seeds every switch's hash.
    #[allow(clippy::too_many_arguments)]
    pub fn path(
        &self,
        routes: Option<&RoutesTo>,
        src: DeviceId,
        dst: DeviceId,
        flow_hash: u64,
        lb: Lb,
        seed: u64,
        ws: &mut PathWs,
        out: &mut Vec<(u32, f64)>,
    ) -> Result<f64, NoPath> {
        if src == dst {
            return Ok(0.0);
        }
        if self.same_domain(src, dst) {
            if self.down.device_failed(src) || self.down.device_failed(dst) {
                return Err(NoPath::GpuDown);
            }
            out.push((self.base_nvl + 2 * src.get(), 1.0));
            out.push((self.base_nvl + 2 * dst.get() + 1, 1.0));
            return Ok(self.params.scale_up_latency_s);
        }
        let (l_src, tor_src) = self.attach(src).ok_or(NoPath::GpuDown)?;
        let (l_dst, tor_dst) = self.attach(dst).ok_or(NoPath::GpuDown)?;
        let routes = routes.ok_or(NoPath::NoRoute)?;
        let target = self.g.rack_speaker(tor_dst);
        out.push((self.link_res(l_src, src), 1.0));
        let base_latency = self.spray_base_latency_s(src, dst);
        let mut frontier = std::mem::take(&mut ws.frontier);
        frontier.clear();
        frontier.push((tor_src, 1.0, 0.0));
        let mut latency = 0.0f64;
        let mut result = Ok(());
        for _hop in 0..MAX_HOPS {
            if frontier.is_empty() {
                break;
            }
            let mut next = std::mem::take(&mut ws.frontier_next);
            match self.hop(
                routes, &frontier, tor_dst, target, flow_hash, lb, seed, ws, &mut next, out,
            ) {
                Ok(end) => latency = latency.max(end),
                Err(e) => result = Err(e),
            }
            ws.frontier_next = std::mem::replace(&mut frontier, next);
            if result.is_err() {
                break;
            }
        }
        let left = !frontier.is_empty();
        ws.frontier = frontier;
        result?;
        if left {
            return Err(NoPath::NoRoute);
        }
        out.push((self.link_res(l_dst, tor_dst), 1.0));
        Ok(base_latency + latency)
    }

    /// One hop of spreading a flow toward rack switch `tor_dst` (whose speaker is `target`):
    /// every device of `frontier` (device, mass of the flow there, latency so far) forwards
    /// its mass over the next hops of its speaker under `lb`, pushing the resources it loads
    /// (with their shares) to `out` and the devices reached, merged per device (masses
    /// summed, latency the slowest), to `next`. Mass at `tor_dst`, or handed to the
    /// crossbar of the target DSF zone, has arrived. Returns the latency of the slowest mass
    /// that arrived in this hop (`-inf` if none did).
    ///
    /// Reads the routes only at the speakers of `frontier`'s devices, and the destination
    /// only for devices of its zone: two flows whose frontiers are equal, and whose routes
    /// agree at those speakers, spread alike in this hop (what the flow engine memoizes).
    #[allow(clippy::too_many_arguments)]
    pub fn hop(
        &self,
        routes: &RoutesTo,
        frontier: &[(DeviceId, f64, f64)],
        tor_dst: DeviceId,
        target: SpeakerId,
        flow_hash: u64,
        lb: Lb,
        seed: u64,
        ws: &mut PathWs,
        next: &mut Vec<(DeviceId, f64, f64)>,
        out: &mut Vec<(u32, f64)>,
    ) -> Result<f64, NoPath> {
        let mut latency = f64::NEG_INFINITY;
        let weighted = !matches!(lb, Lb::Ecmp | Lb::Eecmp(_));
        ws.next.clear();
        for &(v, mass, lat) in frontier {
            if v == tor_dst {
                latency = latency.max(lat);
                continue;
            }
            let sv = self.g.speaker(v).ok_or(NoPath::NoRoute)?;
            if sv == target {
                let x = self.crossbar(v, tor_dst, mass, out);
                latency = latency.max(lat + x);
                continue;
            }
            if routes.best[sv.idx()].is_none() {
                return Err(NoPath::NoRoute);
            }
            self.next_hop_links(routes, sv, weighted, ws);
            if ws.members.is_empty() {
                return Err(NoPath::NoRoute);
            }
            let total: f64 = ws.members.iter().map(|m| m.1).sum();
            let chosen: &[(LinkId, f64)] = if lb.is_spray() {
                &ws.members
            } else {
                // The switch's hash of the flow picks one member.
                let h = mix(mix(seed ^ u64::from(v.get()).wrapping_mul(0x9E37_79B9)) ^ flow_hash);
                let u = (h >> 11) as f64 / (1u64 << 53) as f64 * total;
                let mut acc = 0.0;
                let mut pick = ws.members.len() - 1;
                for (k, m) in ws.members.iter().enumerate() {
                    acc += m.1;
                    if u < acc {
                        pick = k;
                        break;
                    }
                }
                ws.members.swap(0, pick);
                ws.members[0].1 = total;
                &ws.members[..1]
            };
            for &(l, share) in chosen {
                let m = mass * share / total;
                let link = self.f.link(l);
                // The near end belongs to v's speaker (for a DSF system, maybe an EDSW).
                let near = if self.g.speaker(link.a) == Some(sv) {
                    link.a
                } else {
                    link.b
                };
                let far = link.other(near);
                let mut lat2 = lat;
                if near != v {
                    lat2 += self.crossbar(v, near, m, out);
                }
                out.push((self.link_res(l, near), m));
                ws.next.push((far, m, lat2 + self.hop_latency(l)));
            }
        }
        // Merge mass arriving at the same device.
        ws.next.sort_unstable_by_key(|e| e.0);
        next.clear();
        for &(d, m, l) in &ws.next {
            match next.last_mut() {
                Some(last) if last.0 == d => {
                    last.1 += m;
                    last.2 = last.2.max(l);
                }
                _ => next.push((d, m, l)),
            }
        }
        Ok(latency)
    }
}

/// Most hops a flow's spreading may take before it counts as looping (no route).
pub const MAX_HOPS: usize = 64;

/// Reusable buffers of [`Net::path`], and the next-hop links it has looked up.
///
/// The lookups are remembered per (routes, speaker, weighted) until [`PathWs::forget`]: the
/// routes are known by their address, so forget before using the workspace with routes that
/// may have been dropped since (a new [`crate::Forwarding`]).
#[derive(Default, Debug)]
pub struct PathWs {
    pub(crate) frontier: Vec<(DeviceId, f64, f64)>,
    pub(crate) frontier_next: Vec<(DeviceId, f64, f64)>,
    pub(crate) next: Vec<(DeviceId, f64, f64)>,
    pub(crate) scratch: Vec<aifabric_routing::ucmp::Path>,
    pub(crate) weights: Vec<f64>,
    pub(crate) hops: Vec<(usize, SpeakerId, f64)>,
    pub(crate) members: Vec<(LinkId, f64)>,
    /// (routes' address, speaker, weighted) -> a range of `known_links`.
    pub(crate) known: rustc_hash::FxHashMap<(usize, SpeakerId, bool), (u32, u32)>,
    pub(crate) known_links: Vec<(LinkId, f64)>,
}

impl PathWs {
    /// Forget the next hops looked up so far.
    pub fn forget(&mut self) {
        self.known.clear();
        self.known_links.clear();
    }
}
