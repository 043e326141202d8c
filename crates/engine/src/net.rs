//! The network as the engine sees it: resources with capacities, and the resources a flow
//! from one GPU to another uses under a load-balancing mode.
//!
//! **Resources** are directed: each link in each direction; for a DSF zone, the sprayed cell
//! fabric as aggregates (below); each GPU's scale-up (NVLink) port in and out. Ids:
//! `2 l + dir` for link `l` (`dir` 0 from its `a` end to `b`), then interface nodes, cluster
//! stages and NVLink ports. Capacities are bytes per second and come from the live links of
//! the scenario (failed or hard-drained links carry nothing).
//!
//! **Forwarding** follows the control plane: at a BGP speaker, the multipath next hops of
//! its converged route toward the destination rack (`aifabric-routing`), with their UCMP
//! weights; eBGP runs per link (RFC 7938), so every live link of a multipath session is an
//! ECMP member. The mode decides how a flow uses the members:
//! - `ecmp`: one member per switch, by a seeded hash of the flow (the switch's own seed, as
//!   ASICs do), every member equally likely;
//! - `eecmp:N`: the same, but each GPU pair's traffic is N queue pairs and the hash covers the
//!   destination QP (Meta's E-ECMP; Gangidi et al., SIGCOMM 2024), so N flows per pair;
//! - `ucmp`: one member by hash, weighted by the link-bandwidth UCMP weights;
//! - `spray`: every member, traffic split by the UCMP weights (per-packet spraying / NSF
//!   adaptive routing, as a fluid);
//! - `te`: a central controller picks one of several candidate paths per flow to minimize
//!   the busiest link (see [`crate::te`]).
//!
//! **DSF zones** are one BGP speaker; inside, cells are sprayed over every live fabric link
//! (Meta, "Disaggregated Scheduled Fabric ..." 2025) whatever the mode, so the zone behaves
//! as a crossbar: a flow from interface node `v` to `w` uses `v`'s fabric uplinks (their live
//! capacity summed), in a dual-stage zone its cluster's FDSW -> SDSW stage and the
//! destination cluster's SDSW -> FDSW stage (when the clusters differ), and `w`'s fabric
//! downlinks. Perfect spraying loads a stage's links evenly, so the sums are exact for it;
//! what Input Balanced Mode adds under asymmetric failures is not modelled here.

use aifabric_model::{
    DeviceId, Fabric, FailureMask, LinkId, Ordinal, PortKind, Role, Scenario, ZoneKind,
};
use aifabric_routing::bgp::{
    session_states, AsnPlan, BgpConfig, BgpGraph, RoutesTo, SessionState, SpeakerId, SpeakerKind,
};
use fixedbitset::FixedBitSet;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Load balancing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lb {
    /// Per-flow hash, equal members.
    Ecmp,
    /// Per-flow hash over N queue pairs per GPU pair.
    Eecmp(u32),
    /// Per-flow hash weighted by UCMP.
    Ucmp,
    /// Fluid split by UCMP weights.
    Spray,
    /// Central traffic engineering over candidate paths.
    Te,
}

impl Lb {
    /// Parse `ecmp`, `eecmp:N`, `ucmp`, `spray`, `te`.
    pub fn parse(s: &str) -> Option<Lb> {
        Some(match s {
            "ecmp" => Lb::Ecmp,
            "ucmp" => Lb::Ucmp,
            "spray" => Lb::Spray,
            "te" => Lb::Te,
            "eecmp" => Lb::Eecmp(16),
            _ => {
                let n: u32 = s.strip_prefix("eecmp:")?.parse().ok()?;
                if n == 0 || n > MAX_QPS {
                    return None;
                }
                Lb::Eecmp(n)
            }
        })
    }

    /// Accepted spellings, for hints.
    pub const HELP: &'static str =
        "ecmp, eecmp:N (N queue pairs, e.g. eecmp:16), ucmp, spray or te";

    /// Queue pairs (flows) per GPU pair and channel.
    pub fn qps(self) -> u32 {
        match self {
            Lb::Eecmp(n) => n,
            _ => 1,
        }
    }

    /// The weights a switch splits flows by in this mode, for reports: ECMP modes ignore
    /// BGP's link-bandwidth weights, UCMP and spray follow them, so their results differ
    /// exactly where those weights are unequal (`aifabric routes` shows them per switch).
    pub fn weights(self) -> &'static str {
        match self {
            Lb::Ecmp | Lb::Eecmp(_) => "equal per live link",
            Lb::Ucmp => "hashed by BGP link-bandwidth weights",
            Lb::Spray => "split by BGP link-bandwidth weights",
            Lb::Te => "assigned centrally",
        }
    }

    /// Name as parsed.
    pub fn name(self) -> String {
        match self {
            Lb::Ecmp => "ecmp".into(),
            Lb::Eecmp(n) => format!("eecmp:{n}"),
            Lb::Ucmp => "ucmp".into(),
            Lb::Spray => "spray".into(),
            Lb::Te => "te".into(),
        }
    }
}

impl std::str::FromStr for Lb {
    type Err = String;

    fn from_str(s: &str) -> Result<Lb, String> {
        Lb::parse(s).ok_or_else(|| format!("unknown load balancing `{s}`; use {}", Lb::HELP))
    }
}

impl std::fmt::Display for Lb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// Most queue pairs per GPU pair `eecmp:N` accepts (NCCL uses a handful; Meta's E-ECMP 16).
pub const MAX_QPS: u32 = 1024;

/// Where BGP's link-bandwidth weights and equal per-link weights split traffic differently
/// ([`Net::weight_differences`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct WeightDifferences {
    /// Switches (BGP speakers) with more than one next-hop link toward some prefix.
    pub switches_with_choice: u64,
    /// Of those, the ones where the link-bandwidth weights are not equal per live link.
    pub switches_unequal: u64,
    /// The first such switch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

/// Latency and scale-up parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NetParams {
    /// GPUs per scale-up (NVLink) domain.
    pub scale_up_gpus: u32,
    /// Scale-up bandwidth per GPU and direction, bytes/s.
    pub scale_up_bytes_per_s: f64,
    /// Forwarding latency per switch, seconds.
    pub switch_latency_s: f64,
    /// Latency of a scale-up transfer, seconds.
    pub scale_up_latency_s: f64,
}

impl Default for NetParams {
    fn default() -> Self {
        NetParams {
            scale_up_gpus: 8,
            // H100 NVLink 4: 450 GB/s per direction.
            scale_up_bytes_per_s: 450e9,
            // Cut-through Ethernet ASICs forward in well under a microsecond; deep-buffer
            // chassis take a few. One microsecond per switch is the middle ground.
            switch_latency_s: 1e-6,
            scale_up_latency_s: 1e-6,
        }
    }
}

/// Propagation in fiber: 5 ns per metre (light in glass travels at about two thirds of c).
const NS_PER_M: f64 = 5.0;

/// Why a flow has no path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoPath {
    /// The GPU (or all its links) is down.
    GpuDown,
    /// A switch on the way has no route to the destination rack.
    NoRoute,
    /// The path crosses a resource with no capacity left (e.g. a DSF zone whose cell fabric
    /// is cut): the flow would never finish.
    NoCapacity,
}

/// Bits of a resource id, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// Link, from `from`.
    Link(LinkId, DeviceId),
    /// DSF interface node's fabric side: `up` into the fabric or out of it.
    Iface(DeviceId, bool),
    /// DSF cluster stage: `up` FDSW -> SDSW, or SDSW -> FDSW.
    Stage(u32, bool),
    /// GPU scale-up port: `out` or in.
    ScaleUp(DeviceId, bool),
}

/// The network of one scenario.
pub struct Net<'f> {
    /// The fabric.
    pub f: &'f Fabric,
    /// BGP view.
    pub g: BgpGraph,
    /// Session states under the scenario.
    pub states: Vec<SessionState>,
    /// Control-plane settings.
    pub cfg: BgpConfig,
    /// What carries nothing (failed or hard-drained).
    pub down: FailureMask,
    /// Latency and scale-up parameters.
    pub params: NetParams,
    base_iface: u32,
    base_stage: u32,
    base_nvl: u32,
    total: u32,
    /// Live fabric capacity per DSF interface node, bytes/s (0 elsewhere).
    iface_bps: Vec<f64>,
    /// Cluster stage of each DSF interface node (`None` in a single-stage zone).
    cluster: Vec<Option<u32>>,
    /// Live capacity of each cluster stage, bytes/s, and its name.
    stage_bps: Vec<f64>,
    stage_name: Vec<String>,
    /// Capacity of every resource, bytes/s.
    cap_bps: Vec<f64>,
    /// Resources of capacity 0 (dead links), one bit each: small enough to stay in cache
    /// when every flow's path is checked.
    dead: FixedBitSet,
    /// Hops a crossbar crossing takes inside each zone (2 single stage, 4 dual stage) and the
    /// length of its fabric links, metres.
    zone_hops: Vec<(u32, f64)>,
    /// Each GPU's live host link and rack switch, if it has one.
    attach: Vec<Option<(LinkId, DeviceId)>>,
    /// Each GPU's host cable, metres (0: not attached): read for every flow, kept apart from
    /// the link records.
    host_cable_m: Vec<f64>,
    /// Each device's zone, for the crossbar.
    zone_of: Vec<u32>,
    /// Each device's scale-up domain: (zone, rack, index / scale-up GPUs).
    domain_of: Vec<(u32, Option<u32>, u32)>,
}

fn mbps_to_bps(mbps: u64) -> f64 {
    mbps as f64 * 1e6 / 8.0
}

impl<'f> Net<'f> {
    /// The network of `f` under `scenario`.
    pub fn new(
        f: &'f Fabric,
        scenario: &Scenario,
        plan: AsnPlan,
        cfg: BgpConfig,
        params: NetParams,
    ) -> Self {
        let g = BgpGraph::new(f, plan);
        let states = session_states(f, &g, scenario);
        let down = scenario.unusable();
        let nd = f.devices().len();
        let mut iface_bps = vec![0.0; nd];
        let mut cluster = vec![None; nd];
        let mut stage_ids: FxHashMap<(u32, Option<u32>), u32> = FxHashMap::default();
        let mut stage_bps = Vec::new();
        let mut stage_name = Vec::new();
        let mut zone_hops = vec![(0u32, 0.0f64); f.zones().len()];
        let dual: Vec<bool> = f
            .zones()
            .iter()
            .map(|z| z.kind == ZoneKind::DsfL2)
            .collect();
        for (i, d) in f.devices().iter().enumerate() {
            let z = &f.zones()[d.zone.idx()];
            if !matches!(z.kind, ZoneKind::DsfL1 | ZoneKind::DsfL2) {
                continue;
            }
            let id = DeviceId::from_idx(i);
            match d.role {
                Role::Rdsw | Role::Edsw => {
                    let mut bps = 0.0;
                    for &l in f.incident(id) {
                        let link = f.link(l);
                        if link.kind == PortKind::Fabric {
                            if zone_hops[d.zone.idx()].0 == 0 {
                                let hops = if dual[d.zone.idx()] { 4 } else { 2 };
                                zone_hops[d.zone.idx()] = (hops, link.length_m());
                            }
                            if f.link_up(l, &down) {
                                bps += mbps_to_bps(u64::from(link.capacity_mbps));
                            }
                        }
                    }
                    iface_bps[i] = bps;
                    if dual[d.zone.idx()] {
                        let next = stage_ids.len() as u32;
                        let c = *stage_ids.entry((d.zone.get(), d.pod())).or_insert_with(|| {
                            stage_bps.push(0.0);
                            stage_name.push(format!("{}.cluster{}", z.name, Ordinal(d.pod())));
                            next
                        });
                        cluster[i] = Some(c);
                    }
                }
                Role::Fdsw if dual[d.zone.idx()] => {
                    let next = stage_ids.len() as u32;
                    let c = *stage_ids.entry((d.zone.get(), d.pod())).or_insert_with(|| {
                        stage_bps.push(0.0);
                        stage_name.push(format!("{}.cluster{}", z.name, Ordinal(d.pod())));
                        next
                    });
                    for &l in f.incident(id) {
                        let link = f.link(l);
                        if f.device(link.other(id)).role == Role::Sdsw && f.link_up(l, &down) {
                            stage_bps[c as usize] += mbps_to_bps(u64::from(link.capacity_mbps));
                        }
                    }
                }
                _ => {}
            }
        }
        let mut attach = vec![None; nd];
        for g in f.devices_with_role(Role::Gpu) {
            if !down.device_failed(g) {
                if let Some(x) = f.neighbors(g, &down).next() {
                    attach[g.idx()] = Some(x);
                }
            }
        }
        let nl = f.links().len() as u32;
        let base_iface = 2 * nl;
        let base_stage = base_iface + 2 * nd as u32;
        let base_nvl = base_stage + 2 * stage_bps.len() as u32;
        let total = base_nvl + 2 * nd as u32;
        let mut net = Net {
            f,
            g,
            states,
            cfg,
            down,
            params,
            base_iface,
            base_stage,
            base_nvl,
            total,
            iface_bps,
            cluster,
            stage_bps,
            stage_name,
            zone_hops,
            host_cable_m: attach
                .iter()
                .map(|a| a.map_or(0.0, |(l, _)| f.link(l).length_m()))
                .collect(),
            zone_of: (0..nd)
                .map(|d| f.device(DeviceId::from_idx(d)).zone.get())
                .collect(),
            domain_of: (0..nd)
                .map(|d| {
                    let x = f.device(DeviceId::from_idx(d));
                    (
                        x.zone.get(),
                        x.rack(),
                        x.index / params.scale_up_gpus.max(1),
                    )
                })
                .collect(),
            attach,
            cap_bps: Vec::new(),
            dead: FixedBitSet::new(),
        };
        net.cap_bps = (0..total).map(|r| net.live_capacity_bps(r)).collect();
        net.dead = FixedBitSet::with_capacity(total as usize);
        for (r, &c) in net.cap_bps.iter().enumerate() {
            net.dead.set(r, c <= 0.0);
        }
        net
    }

    /// Number of resource ids.
    pub fn resources(&self) -> u32 {
        self.total
    }

    /// Decode a resource id.
    pub fn resource(&self, r: u32) -> Resource {
        if r < self.base_iface {
            let l = LinkId::new(r / 2);
            let link = self.f.link(l);
            Resource::Link(l, if r.is_multiple_of(2) { link.a } else { link.b })
        } else if r < self.base_stage {
            let x = r - self.base_iface;
            Resource::Iface(DeviceId::new(x / 2), x.is_multiple_of(2))
        } else if r < self.base_nvl {
            let x = r - self.base_stage;
            Resource::Stage(x / 2, x.is_multiple_of(2))
        } else {
            let x = r - self.base_nvl;
            Resource::ScaleUp(DeviceId::new(x / 2), x.is_multiple_of(2))
        }
    }

    /// Capacity of a resource, bytes/s (0 if failed or drained).
    #[inline]
    pub fn capacity_bps(&self, r: u32) -> f64 {
        self.cap_bps[r as usize]
    }

    /// Whether resource `r` has no capacity (a flow on it never finishes).
    pub fn is_dead(&self, r: u32) -> bool {
        self.dead.contains(r as usize)
    }

    fn live_capacity_bps(&self, r: u32) -> f64 {
        match self.resource(r) {
            Resource::Link(l, _) => {
                if self.f.link_up(l, &self.down) {
                    mbps_to_bps(u64::from(self.f.link(l).capacity_mbps))
                } else {
                    0.0
                }
            }
            Resource::Iface(d, _) => self.iface_bps[d.idx()],
            Resource::Stage(c, _) => self.stage_bps[c as usize],
            Resource::ScaleUp(d, _) => {
                if self.down.device_failed(d) {
                    0.0
                } else {
                    self.params.scale_up_bytes_per_s
                }
            }
        }
    }

    /// Human name of a resource, e.g. `east.dc6.nsf.rtsw3 -> east.dc6.nsf.ftsw12 #1`.
    pub fn resource_name(&self, r: u32) -> String {
        let f = self.f;
        match self.resource(r) {
            Resource::Link(l, from) => {
                let link = f.link(l);
                let b = f.bundles()[link.bundle.idx()];
                format!(
                    "{} -> {} #{}",
                    f.device_name(from),
                    f.device_name(link.other(from)),
                    l.get() - b.first.get()
                )
            }
            Resource::Iface(d, up) => format!(
                "{} fabric {}",
                f.device_name(d),
                if up { "uplinks" } else { "downlinks" }
            ),
            Resource::Stage(c, up) => format!(
                "{} {}",
                self.stage_name[c as usize],
                if up { "fdsw -> sdsw" } else { "sdsw -> fdsw" }
            ),
            Resource::ScaleUp(d, out) => format!(
                "{} scale-up {}",
                f.device_name(d),
                if out { "out" } else { "in" }
            ),
        }
    }

    /// Tier of a resource for utilization reports, e.g. `gpu-rtsw`, `edsw-bag`, `nvlink`.
    pub fn resource_tier(&self, r: u32) -> String {
        let f = self.f;
        match self.resource(r) {
            Resource::Link(l, _) => {
                let link = f.link(l);
                format!(
                    "{}-{}",
                    f.device(link.a).role.as_str(),
                    f.device(link.b).role.as_str()
                )
            }
            Resource::Iface(d, _) => format!("{}-fabric", f.device(d).role.as_str()),
            Resource::Stage(..) => "fdsw-sdsw".into(),
            Resource::ScaleUp(..) => "nvlink".into(),
        }
    }

    fn link_res(&self, l: LinkId, from: DeviceId) -> u32 {
        2 * l.get() + u32::from(self.f.link(l).a != from)
    }

    /// The live host link of a GPU and the rack switch at its other end.
    pub fn attach(&self, gpu: DeviceId) -> Option<(LinkId, DeviceId)> {
        *self.attach.get(gpu.idx())?
    }

    /// The speaker whose routes a flow toward `gpu` follows.
    pub fn dest_speaker(&self, gpu: DeviceId) -> Option<SpeakerId> {
        let (_, tor) = self.attach(gpu)?;
        self.g.speaker(tor)
    }

    /// Whether two GPUs share a scale-up domain.
    pub fn same_domain(&self, a: DeviceId, b: DeviceId) -> bool {
        self.domain_of[a.idx()] == self.domain_of[b.idx()]
    }

    /// The rack switches a sprayed flow from `src` to `dst` runs between, when it leaves its
    /// scale-up domain and both GPUs are attached: every such flow between the same two rack
    /// switches spreads over the fabric the same way (the split depends on neither the flow's
    /// hash nor its GPUs), so it can be computed and stored once.
    pub fn spray_key(&self, src: DeviceId, dst: DeviceId) -> Option<(DeviceId, DeviceId)> {
        if src == dst || self.same_domain(src, dst) {
            return None;
        }
        Some((self.attach(src)?.1, self.attach(dst)?.1))
    }

    /// Whether every flow from `src` to `dst` outside their scale-up domain takes the same
    /// resources whatever its hash: both GPUs hang off rack switches of one speaker (one
    /// rack switch, or the interface nodes of one DSF zone, whose cell fabric is always
    /// sprayed), so the path is host link, crossbar (if any), host link.
    pub fn hash_free(&self, src: DeviceId, dst: DeviceId) -> bool {
        match (self.attach(src), self.attach(dst)) {
            (Some((_, a)), Some((_, b))) => self.g.speaker(a) == self.g.speaker(b),
            _ => false,
        }
    }

    /// Whether `--lb` cannot change a flow from `src` to `dst`: the same GPU, one scale-up
    /// domain, or [`Net::hash_free`].
    pub fn lb_free(&self, src: DeviceId, dst: DeviceId) -> bool {
        src == dst || self.same_domain(src, dst) || self.hash_free(src, dst)
    }

    /// The resources of the host links a flow from `src` to `dst` leaves and enters by (the
    /// first and last of [`Net::path`]'s), when both GPUs are attached.
    pub fn host_resources(&self, src: DeviceId, dst: DeviceId) -> Option<(u32, u32)> {
        let (l_src, _) = self.attach(src)?;
        let (l_dst, tor_dst) = self.attach(dst)?;
        Some((self.link_res(l_src, src), self.link_res(l_dst, tor_dst)))
    }

    /// The resources of a GPU's host link: (from the GPU, toward it), when it is attached.
    pub fn host_link_resources(&self, gpu: DeviceId) -> Option<(u32, u32)> {
        let (l, tor) = self.attach(gpu)?;
        Some((self.link_res(l, gpu), self.link_res(l, tor)))
    }

    /// Propagation over the host cables of `src` and `dst`, seconds (part of
    /// [`Net::path`]'s latency that differs between GPUs of the same rack switches).
    pub fn host_cables_s(&self, src: DeviceId, dst: DeviceId) -> f64 {
        let len = |g: DeviceId| self.host_cable_m.get(g.idx()).copied().unwrap_or(0.0);
        (len(src) + len(dst)) * NS_PER_M * 1e-9
    }

    /// Add the crossbar crossing of a DSF zone from interface node `v` to `w`.
    fn crossbar(&self, v: DeviceId, w: DeviceId, mass: f64, out: &mut Vec<(u32, f64)>) -> f64 {
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
        f64::from(hops) * (self.params.switch_latency_s + len * NS_PER_M * 1e-9)
    }

    /// One hop between switches: the cable, and the switch at its far end forwarding.
    fn hop_latency(&self, l: LinkId) -> f64 {
        self.params.switch_latency_s + self.f.link(l).length_m() * NS_PER_M * 1e-9
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

    /// What every path from `src` to `dst` pays besides its hops: the cables to and from
    /// the GPUs and the source rack switch (every later hop adds the switch at its far end,
    /// see `hop_latency`), seconds.
    pub fn spray_base_latency_s(&self, src: DeviceId, dst: DeviceId) -> f64 {
        self.params.switch_latency_s
            + (self.host_cable_m[src.idx()] + self.host_cable_m[dst.idx()]) * NS_PER_M * 1e-9
    }

    /// The zone of a device.
    pub fn zone_of(&self, d: DeviceId) -> u32 {
        self.zone_of[d.idx()]
    }

    /// The zone of a speaker (a DSF system's, or its switch's).
    pub fn speaker_zone(&self, s: SpeakerId) -> u32 {
        match self.g.speakers[s.idx()].kind {
            SpeakerKind::Device(d) => self.zone_of[d.idx()],
            SpeakerKind::DsfSystem(z) => z.get(),
        }
    }

    /// Whether device `d` is a rack switch that is its own BGP speaker (RTSW; not a DSF
    /// zone's RDSW, which speaks as the zone).
    pub fn is_rack_speaker(&self, d: DeviceId) -> bool {
        matches!(self.f.device(d).role, Role::Rtsw | Role::Rdsw)
            && self.g.speaker(d).is_some_and(|v| self.speaker_is_rack(v))
    }

    /// Whether speaker `v` is one rack switch (not a DSF system, not a switch above racks).
    pub fn speaker_is_rack(&self, v: SpeakerId) -> bool {
        match self.g.speakers[v.idx()].kind {
            SpeakerKind::Device(d) => matches!(self.f.device(d).role, Role::Rtsw | Role::Rdsw),
            SpeakerKind::DsfSystem(_) => false,
        }
    }

    /// The live links speaker `sv` splits traffic toward `routes`' prefix over, into
    /// `ws.members` with each link's share: by BGP's link-bandwidth weights (`weighted`: UCMP,
    /// spray), each multipath's weight shared over its live links by capacity, or 1 per live
    /// link (ECMP, E-ECMP: hardware's equal-cost group, one member per link).
    fn next_hop_links(&self, routes: &RoutesTo, sv: SpeakerId, weighted: bool, ws: &mut PathWs) {
        routes.weighted_next_hops(
            &self.g,
            &self.states,
            sv,
            &mut ws.scratch,
            &mut ws.weights,
            &mut ws.hops,
        );
        // Members: every live link of every multipath session.
        ws.members.clear();
        let range = self.g.adj_range(sv);
        let nb = self.g.neighbors(sv);
        for &(pos, _, w) in &ws.hops {
            let session = nb[pos - range.start].0;
            let links = self.g.links(session);
            let live: f64 = links
                .iter()
                .filter(|&&l| self.f.link_up(l, &self.down))
                .map(|&l| f64::from(self.f.link(l).capacity_mbps))
                .sum();
            if live <= 0.0 || w <= 0.0 {
                continue;
            }
            for &l in links {
                if self.f.link_up(l, &self.down) {
                    let share = if weighted {
                        w * f64::from(self.f.link(l).capacity_mbps) / live
                    } else {
                        1.0
                    };
                    ws.members.push((l, share));
                }
            }
        }
    }

    /// The next-hop links of speaker `sv` toward `routes`' destination, each with its share:
    /// by BGP's link-bandwidth weights when `weighted` (UCMP), else 1 per live link (an ECMP
    /// group). For engines that forward packet by packet and build their own tables.
    pub fn next_hops(
        &self,
        routes: &RoutesTo,
        sv: SpeakerId,
        weighted: bool,
    ) -> Vec<(LinkId, f64)> {
        let mut ws = PathWs::default();
        self.next_hop_links(routes, sv, weighted, &mut ws);
        ws.members
    }

    /// Resource id of link `l` crossed from its end `from` (`2 l + dir`, `dir` 0 from `a`).
    pub fn link_resource(&self, l: LinkId, from: DeviceId) -> u32 {
        self.link_res(l, from)
    }

    /// Where the two kinds of weights split differently on these routes: at how many
    /// switches (BGP speakers) a prefix of `routes` has more than one next-hop link, and at
    /// how many of them BGP's link-bandwidth weights (`ucmp`, `spray`) give some link a
    /// different share than equal per live link (`ecmp`, `eecmp`). `ucmp` and `ecmp` can
    /// only differ at those; with none, they give the same results.
    pub fn weight_differences(&self, routes: &[RoutesTo]) -> WeightDifferences {
        use rayon::prelude::*;
        let n = self.g.speakers.len();
        // Per destination in parallel: (choice, unequal) bits per speaker, OR-ed together.
        let (choice, unequal) = routes
            .par_iter()
            .fold(
                || (FixedBitSet::with_capacity(n), FixedBitSet::with_capacity(n)),
                |(mut choice, mut unequal), r| {
                    for v in self.g.speaker_ids() {
                        if r.is_origin(v) {
                            continue;
                        }
                        if let Some(equal) = r.equal_per_link_at(&self.g, &self.states, v) {
                            choice.insert(v.idx());
                            if !equal {
                                unequal.insert(v.idx());
                            }
                        }
                    }
                    (choice, unequal)
                },
            )
            .reduce(
                || (FixedBitSet::with_capacity(n), FixedBitSet::with_capacity(n)),
                |(mut c1, mut u1), (c2, u2)| {
                    c1.union_with(&c2);
                    u1.union_with(&u2);
                    (c1, u1)
                },
            );
        let first = unequal.ones().next();
        WeightDifferences {
            switches_with_choice: choice.count_ones(..) as u64,
            switches_unequal: unequal.count_ones(..) as u64,
            example: first.map(|v| {
                aifabric_routing::fib::speaker_name(self.f, &self.g, SpeakerId::from_idx(v))
            }),
        }
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
    /// agree at those speakers, spread alike in this hop (what [`crate::sim`] memoizes).
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
            let chosen: &[(LinkId, f64)] = if lb == Lb::Spray {
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

    /// Whether resource `r` is a link (not a DSF crossbar or scale-up resource).
    pub fn is_link(&self, r: u32) -> bool {
        r < self.base_iface
    }
}

/// Most hops a flow's spreading may take before it counts as looping (no route).
pub const MAX_HOPS: usize = 64;

/// Reusable buffers of [`Net::path`].
#[derive(Default, Debug)]
pub struct PathWs {
    frontier: Vec<(DeviceId, f64, f64)>,
    frontier_next: Vec<(DeviceId, f64, f64)>,
    next: Vec<(DeviceId, f64, f64)>,
    scratch: Vec<aifabric_routing::ucmp::Path>,
    weights: Vec<f64>,
    hops: Vec<(usize, SpeakerId, f64)>,
    members: Vec<(LinkId, f64)>,
}

/// SplitMix64's finalizer (Steele, Lea and Flood, OOPSLA 2014): a cheap, well-mixed hash.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The hash of a flow: its endpoints and queue pair (what an RoCE 5-tuple varies by: the
/// UDP source port follows the QP).
pub fn flow_hash(src: DeviceId, dst: DeviceId, qp: u32) -> u64 {
    mix((u64::from(src.get()) << 32 | u64::from(dst.get())) ^ mix(u64::from(qp)))
}
