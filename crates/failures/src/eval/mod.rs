//! What one failure scenario costs: routed capacity between sites and regions under the
//! converged BGP/UCMP state, the max-flow bound, GPUs cut off and tier oversubscription.
//!
//! The [`Evaluator`] is built once per fabric: the BGP graph, the healthy session states, the
//! routes toward every site (a building; each zone of a building that holds several, or
//! outside any building; each AI zone of a RoCE zone that has several: see `sites_of`) and,
//! for every site pair, the load each session carries per unit of demand. A scenario then pays
//! only for what it breaks:
//!
//! 1. the links it takes down are its members plus every link of its member devices; their
//!    sessions get new states (nothing else changes);
//! 2. routes toward a site are updated incrementally ([`RoutesTo::update`]) only when a
//!    changed session can matter to them ([`bgp::affected`]);
//! 3. the unit flow of a site pair is propagated again only if the routes toward either end
//!    or the demand of either end changed; otherwise the healthy loads are reused, with the
//!    new session capacities.
//!
//! **Routed capacity.** Demand leaves a site from its rack speakers in proportion to their
//! live GPU-facing bandwidth (GPUs alive, rack switch alive with a live uplink), split at
//! every speaker by its UCMP weights (the split ratios of the control plane, fixed) and
//! absorbed where it enters the destination site (the routes are those toward all of the
//! site's rack speakers at once; inside the destination the flow is not followed further:
//! with demand both ways, a site's own links are loaded by what leaves it). With unit demand
//! in both directions of a pair, the routed capacity is the largest scaling `lambda` that
//! fits every session in both directions (`min capacity / load`), times the share of demand
//! whose source has a route at all.
//! A region pair uses a gravity matrix over its cross-region site pairs (demand between
//! sites `a` and `b` proportional to their live GPU bandwidth product), so its capacity is
//! what all of them can send at once in those proportions.
//!
//! **Max-flow bound.** For each region pair, the maximum flow from one region's rack
//! speakers (each capped at its live GPU bandwidth) to the other's over the live sessions:
//! what any routing could achieve, for comparison with the routed figure.
//!
//! Approximations, stated: the cell fabric of a DSF zone is one BGP speaker, so failures
//! inside it (FDSW, SDSW) show in the tier figures and in GPUs cut off, not in routed
//! capacity; NSF capacity-aware pruning is not applied (plain link-bandwidth UCMP).

mod capacity;
mod loads;
mod maxflow;
mod outcome;
mod scratch;
mod standing;
mod workspace;

pub use aifabric_model::Down;
pub use outcome::Outcome;
pub use workspace::Workspace;

use aifabric_capacity::TierLedger;
use aifabric_model::*;
use aifabric_routing::bgp::{
    self, routes_to_many, AsnPlan, BgpConfig, BgpGraph, NotConverged, RoutesTo, SessionId,
    SessionState, SpeakerId, SpeakerKind,
};
use fixedbitset::FixedBitSet;
use rayon::prelude::*;
use std::collections::BTreeMap;

use loads::{Footprint, Loads};
use maxflow::MaxflowNet;
use standing::{gpu_connected, is_rack, rack_weight};

aifabric_model::id_type!(
    /// A site: a building, a zone with racks, or an AI zone (see `sites_of`); its index in
    /// [`Evaluator::sites`].
    SiteId
);

/// Everything a sweep needs to evaluate scenarios on one fabric (see the module docs).
pub struct Evaluator<'f> {
    f: &'f Fabric,
    /// The starting state every scenario adds to (nothing, or a maintenance state).
    base: Down,
    /// GPUs the starting state itself cuts off (0 from the healthy fabric).
    pub state_gpus_cut_off: u64,
    /// The BGP view.
    pub g: BgpGraph,
    healthy: Vec<SessionState>,
    session_of_link: Vec<Option<SessionId>>,
    session_of_pos: Vec<u32>,
    owner_of_pos: Vec<u32>,
    /// Site names (`region.building`, a zone's name, or `ZONE.ai_zoneN`).
    pub sites: Vec<String>,
    site_region: Vec<u32>,
    /// Site of each device (`None`, e.g. BAG).
    site_of_device: Vec<Option<SiteId>>,
    /// Healthy live GPU-facing Mb/s of each rack switch (0 for other devices).
    rack_mbps: Vec<u64>,
    /// Healthy source weight (Mb/s) per speaker.
    speaker_mbps: Vec<u64>,
    /// GPUs connected in the healthy fabric.
    gpu_ok: FixedBitSet,
    /// Site of each speaker, if it has one.
    speaker_site: Vec<Option<SiteId>>,
    /// Speakers of each site (every role), ascending.
    site_members: Vec<Vec<SpeakerId>>,
    /// Speakers of each site and their neighbours outside it, ascending.
    site_rim: Vec<Vec<SpeakerId>>,
    /// Rack speakers of each site, ascending.
    site_speakers: Vec<Vec<SpeakerId>>,
    /// Rack switches of each speaker (one, or a DSF zone's RDSWs).
    speaker_racks: Vec<Vec<DeviceId>>,
    routes: Vec<RoutesTo>,
    /// Unordered site pairs (a < b).
    pub site_pairs: Vec<(SiteId, SiteId)>,
    /// Loads of each site pair: [a -> b, b -> a].
    pair_loads: Vec<[Loads; 2]>,
    pair_footprint: Vec<Footprint>,
    /// Speakers each direction's flow passes through.
    pair_speakers: Vec<[FixedBitSet; 2]>,
    /// Healthy routed capacity per site pair, Gb/s.
    pub healthy_site_gbps: Vec<f64>,
    /// Region names.
    pub regions: Vec<String>,
    /// Unordered region pairs (a < b).
    pub region_pairs: Vec<(u32, u32)>,
    /// Site pairs across each region pair.
    region_members: Vec<Vec<usize>>,
    region_loads: Vec<Vec<(u32, f64)>>,
    region_footprint: Vec<Footprint>,
    /// Healthy share of each region pair's demand that has a route.
    region_delivered: Vec<f64>,
    /// Healthy routed capacity per region pair, Gb/s.
    pub healthy_region_gbps: Vec<f64>,
    /// Healthy max-flow bound per region pair, Gb/s.
    pub healthy_maxflow_gbps: Vec<f64>,
    nets: Vec<MaxflowNet>,
    ledger: TierLedger,
    /// The cluster stages of dual-stage DSF zones (see [`ClusterStage`]).
    clusters: Vec<ClusterStage>,
}

/// One cluster of a dual-stage DSF zone and its way out: the FDSW -> SDSW links of the
/// cluster. The zone is one BGP speaker, so BGP cannot see a cluster cut off inside it; with
/// every one of those links down, the cluster's GPUs reach nothing outside it, and when the
/// cluster is the edge pod (whose EDSWs go up to BAG), no GPU of the zone leaves the zone.
struct ClusterStage {
    /// The zone's speaker.
    speaker: SpeakerId,
    /// Its FDSW -> SDSW links.
    links: Vec<LinkId>,
    /// Its RDSWs (every RDSW of the zone for the edge pod).
    racks: Vec<DeviceId>,
    /// The zone's edge pod (whose EDSWs go up to BAG).
    edge: bool,
    /// Whether the starting state already cuts it off (counted in the state, not again).
    cut_in_base: bool,
}

/// The cluster stages of every dual-stage DSF zone, edge pods first in each zone.
fn cluster_stages(f: &Fabric, g: &BgpGraph, base: &FailureMask) -> Vec<ClusterStage> {
    let mut out = Vec::new();
    for (z, zone) in f.zones().iter().enumerate() {
        if zone.kind != ZoneKind::DsfL2 {
            continue;
        }
        let devs: Vec<DeviceId> = f
            .zone_devices(ZoneId::from_idx(z))
            .map(DeviceId::new)
            .collect();
        let Some(speaker) = devs.iter().find_map(|&d| g.speaker(d)) else {
            continue;
        };
        let edge = devs
            .iter()
            .find(|&&d| f.device(d).role == Role::Edsw)
            .and_then(|&d| f.device(d).pod());
        let mut by_pod: BTreeMap<u32, (Vec<LinkId>, Vec<DeviceId>)> = BTreeMap::new();
        for &d in &devs {
            let dev = f.device(d);
            let Some(pod) = dev.pod() else { continue };
            match dev.role {
                Role::Rdsw => by_pod.entry(pod).or_default().1.push(d),
                Role::Fdsw => {
                    for &l in f.incident(d) {
                        if f.device(f.link(l).other(d)).role == Role::Sdsw {
                            by_pod.entry(pod).or_default().0.push(l);
                        }
                    }
                }
                _ => {}
            }
        }
        let all_racks: Vec<DeviceId> = by_pod.values().flat_map(|v| v.1.clone()).collect();
        let mut stages: Vec<ClusterStage> = by_pod
            .into_iter()
            .filter(|(_, (links, _))| !links.is_empty())
            .map(|(pod, (links, racks))| ClusterStage {
                speaker,
                cut_in_base: links.iter().all(|&l| !f.link_up(l, base)),
                edge: Some(pod) == edge,
                racks: if Some(pod) == edge {
                    all_racks.clone()
                } else {
                    racks
                },
                links,
            })
            .collect();
        // The edge pod first: when it is cut, the zone's other clusters are not counted again.
        stages.sort_by_key(|c| !c.edge);
        out.extend(stages);
    }
    out
}

/// Sites, the units whose pairs a sweep measures: each building, unless it holds several
/// zones with racks (then each such zone), and each zone with racks outside any building; a
/// RoCE zone of several AI zones is split into its AI zones (`ZONE.ai_zoneN`), joined by
/// the ATSWs, which belong to no site. Returns the names, each site's region, each zone's
/// site (when whole) and, for split RoCE zones, the site of each AI zone (by pod).
#[allow(clippy::type_complexity)]
fn sites_of(
    f: &Fabric,
    nsf_pods: bool,
) -> (
    Vec<String>,
    Vec<u32>,
    Vec<Option<SiteId>>,
    Vec<Option<Vec<SiteId>>>,
) {
    let nz = f.zones().len();
    let has_racks = |z: usize| {
        f.zone_devices(ZoneId::from_idx(z))
            .any(|d| is_rack(f.devices()[d as usize].role))
    };
    let ai_zones = |z: usize| -> u32 {
        let split = match f.zones()[z].kind {
            ZoneKind::Roce => true,
            ZoneKind::Nsf => nsf_pods,
            _ => false,
        };
        if !split {
            return 0;
        }
        f.zone_devices(ZoneId::from_idx(z))
            .filter_map(|d| {
                let d = &f.devices()[d as usize];
                is_rack(d.role).then(|| d.pod()).flatten()
            })
            .max()
            .map_or(0, |p| p + 1)
    };
    let rack_zones: Vec<bool> = (0..nz)
        .map(|z| f.zones()[z].kind != ZoneKind::Bag && has_racks(z))
        .collect();
    let mut zones_in_building = vec![0u32; f.buildings().len()];
    for (z, zone) in f.zones().iter().enumerate() {
        if let (Some(b), true) = (zone.building, rack_zones[z]) {
            zones_in_building[b.idx()] += 1;
        }
    }
    let mut sites = Vec::new();
    let mut site_region = Vec::new();
    let mut site_of_zone = vec![None; nz];
    let mut ai_zone_sites = vec![None; nz];
    let mut building_site = vec![None; f.buildings().len()];
    for (z, zone) in f.zones().iter().enumerate() {
        if !rack_zones[z] {
            continue;
        }
        let n_ai = ai_zones(z);
        if n_ai > 1 {
            let ids = (0..n_ai)
                .map(|p| {
                    let group = if zone.kind == ZoneKind::Nsf {
                        "pod"
                    } else {
                        "ai_zone"
                    };
                    sites.push(format!("{}.{group}{p}", zone.name));
                    site_region.push(zone.region.get());
                    SiteId::from_idx(sites.len() - 1)
                })
                .collect();
            ai_zone_sites[z] = Some(ids);
            continue;
        }
        let whole_building = zone.building.filter(|b| zones_in_building[b.idx()] == 1);
        if let Some(b) = whole_building {
            let id = *building_site[b.idx()].get_or_insert_with(|| {
                let bd = &f.buildings()[b.idx()];
                sites.push(format!("{}.{}", f.regions()[bd.region.idx()].name, bd.name));
                site_region.push(bd.region.get());
                SiteId::from_idx(sites.len() - 1)
            });
            site_of_zone[z] = Some(id);
        } else {
            sites.push(zone.name.clone());
            site_region.push(zone.region.get());
            site_of_zone[z] = Some(SiteId::from_idx(sites.len() - 1));
        }
    }
    (sites, site_region, site_of_zone, ai_zone_sites)
}

/// The sites a sweep measures pairs of (with NSF pods as sites when `nsf_pods`), without
/// building an evaluator: to size a sweep before running it.
pub fn site_names(f: &Fabric, nsf_pods: bool) -> Vec<String> {
    sites_of(f, nsf_pods).0
}

fn mbps_to_gbps(x: f64) -> f64 {
    x / 1000.0
}

impl<'f> Evaluator<'f> {
    /// Index `f`: BGP graph (ASNs by `plan`), healthy routes toward every site, unit loads
    /// of every site pair, max-flow networks of every region pair.
    pub fn new(f: &'f Fabric, plan: AsnPlan, cfg: BgpConfig) -> Result<Self, NotConverged> {
        Self::from_state(f, plan, cfg, Down::none(f))
    }

    /// [`Evaluator::new`] from a starting state: `base` (e.g. a drained BAG plane) is out of
    /// service in every scenario, and every figure (capacity retained, GPUs cut off, tier
    /// changes) is measured from that state, not from the healthy fabric.
    pub fn from_state(
        f: &'f Fabric,
        plan: AsnPlan,
        cfg: BgpConfig,
        base: Down,
    ) -> Result<Self, NotConverged> {
        Self::with_sites(f, plan, cfg, base, false)
    }

    /// [`Evaluator::from_state`], with each pod of an NSF zone a site of its own when
    /// `nsf_pods` (`ZONE.podN`; an NSF building of 83 pods then has 3,403 pairs of them,
    /// which costs seconds per building: see [`site_names`]).
    pub fn with_sites(
        f: &'f Fabric,
        plan: AsnPlan,
        cfg: BgpConfig,
        base: Down,
        nsf_pods: bool,
    ) -> Result<Self, NotConverged> {
        let g = BgpGraph::new(f, plan);
        let mut start = Scenario::healthy(f);
        start.failed = base.mask.clone();
        let healthy = bgp::session_states(f, &g, &start);
        let mut session_of_link = vec![None; f.links().len()];
        for s in (0..g.sessions.len()).map(SessionId::from_idx) {
            for &l in g.links(s) {
                session_of_link[l.idx()] = Some(s);
            }
        }
        let mut session_of_pos = vec![0u32; g.adj_len()];
        let mut owner_of_pos = vec![0u32; g.adj_len()];
        for v in g.speaker_ids() {
            for (&(s, _), pos) in g.neighbors(v).iter().zip(g.adj_range(v)) {
                session_of_pos[pos] = s.get();
                owner_of_pos[pos] = v.get();
            }
        }
        let (sites, site_region, site_of_zone, ai_zone_sites) = sites_of(f, nsf_pods);
        let site_of_device: Vec<Option<SiteId>> = f
            .devices()
            .iter()
            .map(|d| match &ai_zone_sites[d.zone.idx()] {
                // An AI zone's devices; the ATSWs they share belong to none.
                Some(by_pod) => d.pod().and_then(|p| by_pod.get(p as usize).copied()),
                None => site_of_zone[d.zone.idx()],
            })
            .collect();
        let none = &base.mask;
        let healthy_mask = FailureMask::none(f);
        let mut state_gpus_cut_off = 0;
        let mut rack_mbps = vec![0u64; f.devices().len()];
        let mut speaker_mbps = vec![0u64; g.speakers.len()];
        let mut gpu_ok = FixedBitSet::with_capacity(f.devices().len());
        for (i, d) in f.devices().iter().enumerate() {
            if d.role == Role::Gpu && gpu_connected(f, DeviceId::from_idx(i), none) {
                gpu_ok.insert(i);
            } else if d.role == Role::Gpu
                && !base.mask.is_empty()
                && gpu_connected(f, DeviceId::from_idx(i), &healthy_mask)
            {
                state_gpus_cut_off += 1;
            }
            if is_rack(d.role) {
                let w = rack_weight(f, DeviceId::from_idx(i), none);
                rack_mbps[i] = w;
                if let Some(v) = g.speaker(DeviceId::from_idx(i)) {
                    speaker_mbps[v.idx()] += w;
                }
            }
        }
        let mut site_speakers = vec![Vec::new(); sites.len()];
        for (i, d) in f.devices().iter().enumerate() {
            let (site, v) = (site_of_device[i], g.speaker(DeviceId::from_idx(i)));
            if let (true, Some(site), Some(v)) = (is_rack(d.role), site, v) {
                site_speakers[site.idx()].push(v);
            }
        }
        for s in &mut site_speakers {
            s.sort_unstable();
            s.dedup();
        }
        let mut speaker_racks = vec![Vec::new(); g.speakers.len()];
        for (i, d) in f.devices().iter().enumerate() {
            if let (true, Some(v)) = (is_rack(d.role), g.speaker(DeviceId::from_idx(i))) {
                speaker_racks[v.idx()].push(DeviceId::from_idx(i));
            }
        }
        let routes = site_speakers
            .par_iter()
            .map(|origins| routes_to_many(&g, &healthy, origins, &cfg))
            .collect::<Result<Vec<_>, _>>()?;
        let n = sites.len() as u32;
        let site_pairs: Vec<(SiteId, SiteId)> = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (SiteId::new(a), SiteId::new(b))))
            .filter(|&(a, b)| {
                !site_speakers[a.idx()].is_empty() && !site_speakers[b.idx()].is_empty()
            })
            .collect();
        let regions: Vec<String> = f.regions().iter().map(|r| r.name.clone()).collect();
        let nr = regions.len() as u32;
        // A region without GPUs by design (a hub) has no sites: its pairs carry nothing and
        // are not pairs (a hub joins spokes; the spokes' pairs measure it).
        let mut has_sites = vec![false; regions.len()];
        for (s, speakers) in site_speakers.iter().enumerate() {
            if !speakers.is_empty() {
                has_sites[site_region[s] as usize] = true;
            }
        }
        let region_pairs: Vec<(u32, u32)> = (0..nr)
            .flat_map(|a| (a + 1..nr).map(move |b| (a, b)))
            .filter(|&(a, b)| has_sites[a as usize] && has_sites[b as usize])
            .collect();
        let region_members: Vec<Vec<usize>> = region_pairs
            .iter()
            .map(|&(ra, rb)| {
                (0..site_pairs.len())
                    .filter(|&p| {
                        let (a, b) = site_pairs[p];
                        let (x, y) = (site_region[a.idx()], site_region[b.idx()]);
                        (x, y) == (ra, rb) || (x, y) == (rb, ra)
                    })
                    .collect()
            })
            .collect();
        let clusters = cluster_stages(f, &g, &base.mask);
        let mut ev = Evaluator {
            f,
            g,
            healthy,
            session_of_link,
            session_of_pos,
            owner_of_pos,
            sites,
            site_region,
            site_of_device,
            rack_mbps,
            speaker_mbps,
            gpu_ok,
            site_speakers,
            speaker_racks,
            speaker_site: Vec::new(),
            site_members: Vec::new(),
            site_rim: Vec::new(),
            routes,
            site_pairs,
            pair_loads: Vec::new(),
            pair_footprint: Vec::new(),
            pair_speakers: Vec::new(),
            healthy_site_gbps: Vec::new(),
            regions,
            region_pairs,
            region_members,
            region_loads: Vec::new(),
            region_footprint: Vec::new(),
            region_delivered: Vec::new(),
            healthy_region_gbps: Vec::new(),
            healthy_maxflow_gbps: Vec::new(),
            nets: Vec::new(),
            ledger: TierLedger::new(f).from_state(f, base.down_links(f)),
            clusters,
            base,
            state_gpus_cut_off,
        };
        ev.speaker_site = ev.g.speaker_ids().map(|v| ev.site_of_speaker(v)).collect();
        ev.site_members = vec![Vec::new(); ev.sites.len()];
        for v in ev.g.speaker_ids() {
            if let Some(s) = ev.speaker_site[v.idx()] {
                ev.site_members[s.idx()].push(v);
            }
        }
        ev.site_rim = ev
            .site_members
            .iter()
            .map(|m| {
                let mut rim: Vec<SpeakerId> = m
                    .iter()
                    .flat_map(|&v| ev.g.neighbors(v).iter().map(|&(_, u)| u))
                    .chain(m.iter().copied())
                    .collect();
                rim.sort_unstable();
                rim.dedup();
                rim
            })
            .collect();
        ev.nets = (0..ev.region_pairs.len())
            .map(|r| ev.maxflow_net(r))
            .collect();
        let mut ws = ev.workspace();
        let weights = ev.speaker_mbps.clone();
        let (loads, gbps): (Vec<[Loads; 2]>, Vec<f64>) = (0..ev.site_pairs.len())
            .map(|p| {
                let (a, b) = ev.site_pairs[p];
                let (ra, rb) = (&ev.routes[a.idx()], &ev.routes[b.idx()]);
                let l = [
                    ev.flow(a, b, rb, &ev.healthy, &weights, &mut ws),
                    ev.flow(b, a, ra, &ev.healthy, &weights, &mut ws),
                ];
                let gbps = ev.pair_capacity([&l[0], &l[1]], &ev.healthy, &mut ws);
                (l, gbps)
            })
            .unzip();
        let len = ev.g.adj_len();
        ev.pair_footprint = loads
            .iter()
            .map(|l| Footprint::of(len, [&l[0].entries[..], &l[1].entries[..]]))
            .collect();
        ev.pair_speakers = loads
            .iter()
            .zip(&ev.site_pairs)
            .map(|(l, &(a, b))| [ev.speakers_of(a, &l[0]), ev.speakers_of(b, &l[1])])
            .collect();
        ev.pair_loads = loads;
        ev.healthy_site_gbps = gbps;
        let mut region_loads = Vec::new();
        let mut region_gbps = Vec::new();
        for r in 0..ev.region_pairs.len() {
            let refs: Vec<[&Loads; 2]> = ev.region_members[r]
                .iter()
                .map(|&p| [&ev.pair_loads[p][0], &ev.pair_loads[p][1]])
                .collect();
            let sw = ev.site_weights(&weights);
            let (entries, gbps) = ev.region_capacity(r, &refs, &ev.healthy, &sw, true, &mut ws);
            region_loads.push(entries);
            region_gbps.push(gbps);
        }
        ev.region_footprint = region_loads
            .iter()
            .map(|e| Footprint::of(len, [&e[..]]))
            .collect();
        ev.region_loads = region_loads;
        ev.region_delivered = (0..ev.region_pairs.len())
            .map(|r| ev.healthy_region_delivered(r))
            .collect();
        ev.healthy_region_gbps = region_gbps;
        ev.healthy_maxflow_gbps = ev
            .nets
            .iter_mut()
            .map(|m| {
                let n = m.net.num_nodes() as u32;
                let flow = m.net.max_flow(n - 2, n - 1);
                let added =
                    m.src_arc.iter().chain(&m.sink_arc).flatten().count() + ev.g.sessions.len();
                m.healthy_flow = (0..added).map(|i| m.net.link_flow(i)).collect();
                mbps_to_gbps(flow as f64)
            })
            .collect();
        Ok(ev)
    }

    /// The fabric.
    pub fn fabric(&self) -> &'f Fabric {
        self.f
    }

    /// The starting state every scenario adds to.
    pub fn base(&self) -> &Down {
        &self.base
    }

    /// What the union of shared-risk groups `srgs` takes down on top of the starting state.
    pub fn down_of(&self, catalog: &SrgCatalog, srgs: &[usize]) -> Down {
        let mut d = Down::of_srgs(self.f, catalog, srgs);
        d.add(&self.base.devices, &self.base.links);
        d
    }

    /// Site pair names, `a<->b`.
    pub fn site_pair_names(&self) -> Vec<String> {
        self.site_pairs
            .iter()
            .map(|&(a, b)| format!("{}<->{}", self.sites[a.idx()], self.sites[b.idx()]))
            .collect()
    }

    /// Region pair names, `a<->b`.
    pub fn region_pair_names(&self) -> Vec<String> {
        self.region_pairs
            .iter()
            .map(|&(a, b)| {
                format!(
                    "{}<->{}",
                    self.regions[a as usize], self.regions[b as usize]
                )
            })
            .collect()
    }

    fn site_of_speaker(&self, v: SpeakerId) -> Option<SiteId> {
        let d = match self.g.speakers[v.idx()].kind {
            SpeakerKind::Device(d) => d,
            SpeakerKind::DsfSystem(z) => DeviceId::new(self.f.zone_devices(z).start),
        };
        self.site_of_device[d.idx()]
    }
}
