//! The network of one scenario: resources with capacities, what is attached where.

use aifabric_model::{
    DeviceId, Fabric, FailureMask, LinkId, Ordinal, PortKind, Role, Scenario, ZoneId, ZoneKind,
};
use aifabric_routing::bgp::{
    session_states, AsnPlan, BgpConfig, BgpGraph, SessionState, SpeakerId, SpeakerKind,
};
use fixedbitset::FixedBitSet;
use rustc_hash::FxHashMap;
use serde::Serialize;

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
    /// Propagation on every link, seconds (`None`: each cable's length at 5 ns/m), as the
    /// packet engine's `link_latency_ps` sets it: a collective timed by the packet engine
    /// pays the same path latencies in its chains as in its packet runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_latency_s: Option<f64>,
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
            link_latency_s: None,
        }
    }
}

/// Propagation in fiber: 5 ns per metre (light in glass travels at about two thirds of c).
pub(crate) const NS_PER_M: f64 = 5.0;

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

/// The tier of a GPU's scale-up ports (NVLink inside a server), in utilization reports:
/// not the fabric's links.
pub const SCALE_UP_TIER: &str = "nvlink";

/// A directed resource of the network: a link in one direction, a DSF zone's interface-node
/// or cluster-stage aggregate, or a GPU's scale-up port ([`Net::resource`] decodes it). Ids
/// are dense, `0..Net::resources()`, links first (`2 l + dir`), so engines index arrays by
/// them; a flow's spread ([`Net::path`]) lists them as their `get()` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceId(u32);

impl ResourceId {
    /// The resource with dense index `r`.
    pub const fn new(r: u32) -> ResourceId {
        ResourceId(r)
    }

    /// Its dense index.
    pub const fn get(self) -> u32 {
        self.0
    }

    /// Its dense index, for indexing.
    pub const fn idx(self) -> usize {
        self.0 as usize
    }
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
    pub(crate) base_iface: u32,
    pub(crate) base_stage: u32,
    pub(crate) base_nvl: u32,
    pub(crate) total: u32,
    /// Live fabric capacity per DSF interface node, bytes/s (0 elsewhere).
    pub(crate) iface_bps: Vec<f64>,
    /// Cluster stage of each DSF interface node and FDSW (`None` elsewhere, and in a
    /// single-stage zone).
    pub(crate) cluster: Vec<Option<u32>>,
    /// Live capacity of each cluster stage, bytes/s, and its name.
    pub(crate) stage_bps: Vec<f64>,
    pub(crate) stage_name: Vec<String>,
    /// Capacity of every resource, bytes/s.
    pub(crate) cap_bps: Vec<f64>,
    /// Resources of capacity 0 (dead links), one bit each: small enough to stay in cache
    /// when every flow's path is checked.
    pub(crate) dead: FixedBitSet,
    /// Hops a crossbar crossing takes inside each zone (2 single stage, 4 dual stage) and the
    /// length of its fabric links, metres.
    pub(crate) zone_hops: Vec<(u32, f64)>,
    /// Each GPU's live host link and rack switch, if it has one.
    pub(crate) attach: Vec<Option<(LinkId, DeviceId)>>,
    /// Each GPU's host cable, metres (0: not attached): read for every flow, kept apart from
    /// the link records.
    pub(crate) host_cable_m: Vec<f64>,
    /// Each device's zone, for the crossbar.
    pub(crate) zone_of: Vec<u32>,
    /// Each device's scale-up domain: (zone, rack, index / scale-up GPUs).
    pub(crate) domain_of: Vec<(u32, Option<u32>, u32)>,
    /// Which `Net` this is (unique in the process), so a [`crate::Forwarding`] refuses to be
    /// read with another.
    pub(crate) id: u64,
}

/// The next [`Net`]'s id.
static NEXT_NET: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

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
                    cluster[i] = Some(c);
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
            id: NEXT_NET.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
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
        net.cap_bps = (0..total)
            .map(|r| net.live_capacity_bps(ResourceId(r)))
            .collect();
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
    pub fn resource(&self, r: ResourceId) -> Resource {
        let r = r.get();
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
    pub fn capacity_bps(&self, r: ResourceId) -> f64 {
        self.cap_bps[r.idx()]
    }

    /// Leave only `bps` of resource `r` (a live one: at most its capacity, more than 0) to
    /// what is simulated next: the share other jobs' traffic leaves one job (see the
    /// engine's `cluster`). [`Net::restore_capacity`] undoes it. Panics on a dead resource
    /// or a share outside `(0, capacity]` (a caller's bug: a share never kills a link).
    pub fn set_share_bps(&mut self, r: ResourceId, bps: f64) {
        let full = self.live_capacity_bps(r);
        assert!(
            bps > 0.0 && bps <= full * (1.0 + 1e-12),
            "share {bps} of a resource of {full} B/s"
        );
        self.cap_bps[r.idx()] = bps.min(full);
    }

    /// The part of DSF fabric link `l`'s rate from `from` that shares on the aggregates
    /// it belongs to leave (1 when none is set): the fabric side of an interface node at
    /// either end (`Iface`: the node's uplinks into the fabric, or downlinks out of it) and,
    /// between an FDSW and an SDSW, its cluster's stage (`Stage`): each one's capacity over
    /// its live capacity, the smallest. The flow engine holds a DSF zone's fabric as these
    /// aggregates, so a share set on one (`cluster`) reaches the packet engine's fabric
    /// ports this way, each link of the aggregate cut in the same proportion.
    pub fn fabric_share(&self, l: LinkId, from: DeviceId) -> f64 {
        let to = self.f.link(l).other(from);
        let part = |r: u32| {
            let r = ResourceId::new(r);
            let full = self.live_capacity_bps(r);
            if full > 0.0 {
                (self.cap_bps[r.idx()] / full).min(1.0)
            } else {
                1.0
            }
        };
        let iface = |d: DeviceId| {
            matches!(self.f.device(d).role, Role::Rdsw | Role::Edsw)
                && self.iface_bps[d.idx()] > 0.0
        };
        let mut k = 1.0f64;
        if iface(from) {
            k = k.min(part(self.base_iface + 2 * from.get()));
        }
        if iface(to) {
            k = k.min(part(self.base_iface + 2 * to.get() + 1));
        }
        match (self.f.device(from).role, self.f.device(to).role) {
            (Role::Fdsw, Role::Sdsw) => {
                if let Some(c) = self.cluster[from.idx()] {
                    k = k.min(part(self.base_stage + 2 * c));
                }
            }
            (Role::Sdsw, Role::Fdsw) => {
                if let Some(c) = self.cluster[to.idx()] {
                    k = k.min(part(self.base_stage + 2 * c + 1));
                }
            }
            _ => {}
        }
        k
    }

    /// Give resource `r` back its whole capacity.
    pub fn restore_capacity(&mut self, r: ResourceId) {
        self.cap_bps[r.idx()] = self.live_capacity_bps(r);
    }

    /// Whether resource `r` has no capacity (a flow on it never finishes).
    pub fn is_dead(&self, r: ResourceId) -> bool {
        self.dead.contains(r.idx())
    }

    fn live_capacity_bps(&self, r: ResourceId) -> f64 {
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
    pub fn resource_name(&self, r: ResourceId) -> String {
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

    /// Tier of a resource for utilization reports, e.g. `gpu-rtsw`, `edsw-bag`,
    /// [`SCALE_UP_TIER`].
    pub fn resource_tier(&self, r: ResourceId) -> String {
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
            Resource::ScaleUp(..) => SCALE_UP_TIER.into(),
        }
    }

    pub(crate) fn link_res(&self, l: LinkId, from: DeviceId) -> u32 {
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

    /// How many scale-up domains `gpus` span (NCCL's node count), in O(n log n).
    pub fn domains_spanned(&self, gpus: &[DeviceId]) -> u32 {
        let mut keys: Vec<_> = gpus.iter().map(|g| self.domain_of[g.idx()]).collect();
        keys.sort_unstable();
        keys.dedup();
        keys.len() as u32
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
    pub fn host_resources(&self, src: DeviceId, dst: DeviceId) -> Option<(ResourceId, ResourceId)> {
        let (l_src, _) = self.attach(src)?;
        let (l_dst, tor_dst) = self.attach(dst)?;
        Some((
            ResourceId(self.link_res(l_src, src)),
            ResourceId(self.link_res(l_dst, tor_dst)),
        ))
    }

    /// The resources of a GPU's host link: (from the GPU, toward it), when it is attached.
    pub fn host_link_resources(&self, gpu: DeviceId) -> Option<(ResourceId, ResourceId)> {
        let (l, tor) = self.attach(gpu)?;
        Some((
            ResourceId(self.link_res(l, gpu)),
            ResourceId(self.link_res(l, tor)),
        ))
    }

    /// Propagation over the host cables of `src` and `dst`, seconds (part of
    /// [`Net::path`]'s latency that differs between GPUs of the same rack switches).
    pub fn host_cables_s(&self, src: DeviceId, dst: DeviceId) -> f64 {
        let len = |g: DeviceId| self.host_cable_m.get(g.idx()).copied().unwrap_or(0.0);
        self.cable_s(len(src)) + self.cable_s(len(dst))
    }

    /// What every path from `src` to `dst` pays besides its hops: the cables to and from
    /// the GPUs and the source rack switch (every later hop adds the switch at its far end,
    /// see `hop_latency`), seconds.
    pub fn spray_base_latency_s(&self, src: DeviceId, dst: DeviceId) -> f64 {
        self.params.switch_latency_s
            + self.cable_s(self.host_cable_m[src.idx()])
            + self.cable_s(self.host_cable_m[dst.idx()])
    }

    /// Propagation over a cable of `len_m` metres, seconds (every link's
    /// [`NetParams::link_latency_s`] when set).
    pub fn cable_s(&self, len_m: f64) -> f64 {
        self.params
            .link_latency_s
            .unwrap_or(len_m * NS_PER_M * 1e-9)
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

    /// Whether resource `r` is a link (not a DSF crossbar or scale-up resource).
    pub fn is_link(&self, r: ResourceId) -> bool {
        r.get() < self.base_iface
    }

    /// Why nothing could ever carry traffic from `src` to `dst`: no path of links joins them
    /// in the fabric as built, whatever fails or drains (a zone with no link out of itself in
    /// a region without BAG, two regions without inter-BAG links). `None` when built links
    /// join them: then a missing route comes from the scenario or the routing policy.
    pub fn unconnected_cause(&self, src: DeviceId, dst: DeviceId) -> Option<String> {
        let f = self.f;
        let mut seen = FixedBitSet::with_capacity(f.devices().len());
        seen.insert(src.idx());
        let mut stack = vec![src];
        while let Some(d) = stack.pop() {
            if d == dst {
                return None;
            }
            for &l in f.incident(d) {
                let n = f.link(l).other(d);
                if !seen.put(n.idx()) {
                    stack.push(n);
                }
            }
        }
        let zone_of = |d: DeviceId| f.device(d).zone;
        let region_name = |z: ZoneId| &f.regions()[f.zones()[z.idx()].region.idx()].name;
        let leaves = |z: ZoneId| {
            f.zone_devices(z).map(DeviceId::new).any(|d| {
                f.incident(d)
                    .iter()
                    .any(|&l| zone_of(f.link(l).other(d)) != z)
            })
        };
        let has_bag = |z: ZoneId| {
            let r = f.zones()[z.idx()].region;
            f.zones()
                .iter()
                .any(|o| o.region == r && o.kind == ZoneKind::Bag)
        };
        let (zs, zd) = (zone_of(src), zone_of(dst));
        for z in [zs, zd] {
            if !leaves(z) {
                let name = &f.zones()[z.idx()].name;
                let region = region_name(z);
                return Some(if has_bag(z) {
                    format!(
                        "they are not connected as built: zone `{name}` has no link to region \
                         `{region}`'s BAG or any other zone"
                    )
                } else {
                    format!(
                        "they are not connected as built: zone `{name}` has no link out of \
                         itself, as region `{region}` has no BAG layer to join its zones (add \
                         `bag:` to the region)"
                    )
                });
            }
        }
        let (rs, rd) = (f.zones()[zs.idx()].region, f.zones()[zd.idx()].region);
        Some(if rs != rd {
            format!(
                "they are not connected as built: regions `{}` and `{}` are not joined (give \
                 both a BAG layer and link them under `inter_bag:`)",
                region_name(zs),
                region_name(zd)
            )
        } else {
            format!(
                "they are not connected as built: no links join zones `{}` and `{}`",
                f.zones()[zs.idx()].name,
                f.zones()[zd.idx()].name
            )
        })
    }
}
