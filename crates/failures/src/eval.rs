//! What one failure scenario costs: routed capacity between sites and regions under the
//! converged BGP/UCMP state, the max-flow bound, GPUs cut off and tier oversubscription.
//!
//! The [`Evaluator`] is built once per fabric: the BGP graph, the healthy session states, the
//! routes toward every site (a site is a building, or a zone outside any building) and, for
//! every site pair, the load each session carries per unit of demand. A scenario then pays
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
//! with demand both ways, a site's own links are loaded by what leaves it). With unit demand in both directions of a pair, the routed
//! capacity is the largest scaling `lambda` that fits every session in both directions
//! (`min capacity / load`), times the share of demand whose source has a route at all.
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

use aifabric_capacity::maxflow::{FlowNetwork, FlowNetworkBuilder};
use aifabric_capacity::{TierChange, TierLedger};
use aifabric_model::*;
use aifabric_routing::bgp::{
    self, routes_to_many, AsnPlan, BgpConfig, BgpGraph, ChangeProbe, NotConverged, RoutesTo,
    SessionState, SpeakerId, SpeakerKind,
};
use fixedbitset::FixedBitSet;
use rayon::prelude::*;

/// What a scenario takes out of service: member devices and links, and the mask of both.
#[derive(Clone, Debug)]
pub struct Down {
    /// Devices down (sorted, unique).
    pub devices: Vec<DeviceId>,
    /// Links marked down themselves (sorted, unique); links of down devices are implied.
    pub links: Vec<LinkId>,
    /// The same as a mask.
    pub mask: FailureMask,
}

impl Down {
    /// Nothing down.
    pub fn none(f: &Fabric) -> Self {
        Down {
            devices: Vec::new(),
            links: Vec::new(),
            mask: FailureMask::none(f),
        }
    }

    /// The union of shared-risk groups `srgs` of `catalog`.
    pub fn of_srgs(f: &Fabric, catalog: &SrgCatalog, srgs: &[usize]) -> Self {
        let mut d = Down::none(f);
        for &i in srgs {
            let (devs, links) = catalog.members(i);
            d.devices.extend_from_slice(devs);
            d.links.extend_from_slice(links);
            catalog.apply(i, &mut d.mask);
        }
        d.devices.sort_unstable();
        d.devices.dedup();
        d.links.sort_unstable();
        d.links.dedup();
        d
    }

    /// Add devices and links (e.g. a drain) to what is down.
    pub fn add(&mut self, devices: &[DeviceId], links: &[LinkId]) {
        for &d in devices {
            self.mask.fail_device(d);
        }
        for &l in links {
            self.mask.fail_link(l);
        }
        self.devices.extend_from_slice(devices);
        self.links.extend_from_slice(links);
        self.devices.sort_unstable();
        self.devices.dedup();
        self.links.sort_unstable();
        self.links.dedup();
    }

    /// Every link that is down: the member links and all links of member devices (sorted,
    /// unique).
    pub fn down_links(&self, f: &Fabric) -> Vec<LinkId> {
        let mut out = self.links.clone();
        for &d in &self.devices {
            out.extend_from_slice(f.incident(d));
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The metrics of one scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Routed capacity per site pair ([`Evaluator::site_pairs`] order), Gb/s per direction.
    pub site_pair_gbps: Vec<f64>,
    /// Routed capacity per region pair ([`Evaluator::region_pairs`] order), Gb/s per
    /// direction.
    pub region_pair_gbps: Vec<f64>,
    /// Max-flow bound per region pair, Gb/s per direction.
    pub region_maxflow_gbps: Vec<f64>,
    /// GPUs down or without a live path to a live rack switch with a live uplink.
    pub gpus_disconnected: u64,
    /// Tiers whose oversubscription changed.
    pub tiers: Vec<TierChange>,
}

/// Per-thread working memory, reused across scenarios.
pub struct Workspace {
    states: Vec<SessionState>,
    flow: Vec<f64>,
    load: Vec<f64>,
    touched: Vec<u32>,
    buckets: Vec<Vec<SpeakerId>>,
    received: Vec<Option<u64>>,
    weights: Vec<f64>,
    hops: Vec<(usize, SpeakerId, f64)>,
    mark: FixedBitSet,
    nets: Vec<FlowNetwork>,
}

/// Unit-demand loads of one direction of a site pair: (adjacency position, load) in
/// propagation order, and the share of demand delivered.
#[derive(Clone, Debug, Default)]
struct Loads {
    entries: Vec<(u32, f64)>,
    delivered: f64,
}

/// Adjacency positions that carry load in a set of [`Loads`], for "does this change touch
/// it" tests in O(changed).
#[derive(Clone, Debug, Default)]
struct Footprint(FixedBitSet);

impl Footprint {
    fn of<'a>(len: usize, entries: impl IntoIterator<Item = &'a [(u32, f64)]>) -> Self {
        let mut b = FixedBitSet::with_capacity(len);
        for e in entries {
            for &(p, _) in e {
                b.insert(p as usize);
            }
        }
        Footprint(b)
    }

    fn hits(&self, changed_pos: &[u32]) -> bool {
        changed_pos.iter().any(|&p| self.0.contains(p as usize))
    }
}

/// A region pair's max-flow network and where its scenario-dependent arcs are.
#[derive(Clone, Debug)]
struct MaxflowNet {
    net: FlowNetwork,
    /// Flow over each builder link in the healthy maximum flow.
    healthy_flow: Vec<u64>,
    /// Builder link index of the source arc (region a) and sink arc (region b) per speaker.
    src_arc: Vec<u32>,
    sink_arc: Vec<u32>,
}

/// Everything a sweep needs to evaluate scenarios on one fabric (see the module docs).
pub struct Evaluator<'f> {
    f: &'f Fabric,
    /// The BGP view.
    pub g: BgpGraph,
    healthy: Vec<SessionState>,
    session_of_link: Vec<u32>,
    session_of_pos: Vec<u32>,
    owner_of_pos: Vec<u32>,
    /// Site names (`region.building`, or a zone's name).
    pub sites: Vec<String>,
    site_region: Vec<u32>,
    /// Site of each device (`u32::MAX`: none, e.g. BAG).
    site_of_device: Vec<u32>,
    /// Healthy live GPU-facing Mb/s of each rack switch (0 for other devices).
    rack_mbps: Vec<u64>,
    /// Healthy source weight (Mb/s) per speaker.
    speaker_mbps: Vec<u64>,
    /// GPUs connected in the healthy fabric.
    gpu_ok: FixedBitSet,
    /// Site of each speaker (`u32::MAX`: none).
    speaker_site: Vec<u32>,
    /// Rack speakers of each site, ascending.
    site_speakers: Vec<Vec<SpeakerId>>,
    routes: Vec<RoutesTo>,
    /// Unordered site pairs (a < b).
    pub site_pairs: Vec<(u32, u32)>,
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
}

fn mbps_to_gbps(x: f64) -> f64 {
    x / 1000.0
}

/// Routed capacity, Gb/s per direction, from the largest scaling `lambda` (Mb/s per unit of
/// demand) and the share of demand that has a route; 0 when nothing flows or nothing loads.
fn routed_gbps(lambda: f64, delivered: f64) -> f64 {
    if delivered == 0.0 || !lambda.is_finite() {
        0.0
    } else {
        mbps_to_gbps(lambda * delivered)
    }
}

/// Whether a device is a rack switch (originates a rack prefix, faces GPUs).
fn is_rack(r: Role) -> bool {
    matches!(r, Role::Rtsw | Role::Rdsw)
}

impl<'f> Evaluator<'f> {
    /// Index `f`: BGP graph (ASNs by `plan`), healthy routes toward every site, unit loads
    /// of every site pair, max-flow networks of every region pair.
    pub fn new(f: &'f Fabric, plan: AsnPlan, cfg: BgpConfig) -> Result<Self, NotConverged> {
        let g = BgpGraph::new(f, plan);
        let healthy = bgp::session_states(f, &g, &Scenario::healthy(f));
        let mut session_of_link = vec![u32::MAX; f.links().len()];
        for s in 0..g.sessions.len() as u32 {
            for &l in g.links(s) {
                session_of_link[l.idx()] = s;
            }
        }
        let mut session_of_pos = vec![0u32; g.adj_len()];
        let mut owner_of_pos = vec![0u32; g.adj_len()];
        for v in 0..g.speakers.len() as u32 {
            for (&(s, _), pos) in g.neighbors(v).iter().zip(g.adj_range(v)) {
                session_of_pos[pos] = s;
                owner_of_pos[pos] = v;
            }
        }
        // Sites: buildings, then zones outside any building that have racks.
        let mut sites: Vec<String> = f
            .buildings
            .iter()
            .map(|b| format!("{}.{}", f.regions[b.region.idx()].name, b.name))
            .collect();
        let mut site_region: Vec<u32> = f.buildings.iter().map(|b| b.region.0).collect();
        let mut site_of_zone = vec![u32::MAX; f.zones.len()];
        for (z, zone) in f.zones.iter().enumerate() {
            if let Some(b) = zone.building {
                site_of_zone[z] = b.0;
            } else if zone.kind != ZoneKind::Bag
                && f.zone_devices(ZoneId(z as u32))
                    .any(|d| is_rack(f.devices()[d as usize].role))
            {
                site_of_zone[z] = sites.len() as u32;
                sites.push(zone.name.clone());
                site_region.push(zone.region.0);
            }
        }
        let site_of_device: Vec<u32> = f
            .devices()
            .iter()
            .map(|d| site_of_zone[d.zone.idx()])
            .collect();
        let none = FailureMask::none(f);
        let mut rack_mbps = vec![0u64; f.devices().len()];
        let mut speaker_mbps = vec![0u64; g.speakers.len()];
        let mut gpu_ok = FixedBitSet::with_capacity(f.devices().len());
        for (i, d) in f.devices().iter().enumerate() {
            if d.role == Role::Gpu && gpu_connected(f, DeviceId(i as u32), &none) {
                gpu_ok.insert(i);
            }
            if is_rack(d.role) {
                let w = rack_weight(f, DeviceId(i as u32), &none);
                rack_mbps[i] = w;
                let v = g.speaker_of[i];
                if v != u32::MAX {
                    speaker_mbps[v as usize] += w;
                }
            }
        }
        let mut site_speakers = vec![Vec::new(); sites.len()];
        for (i, d) in f.devices().iter().enumerate() {
            let (site, v) = (site_of_device[i], g.speaker_of[i]);
            if is_rack(d.role) && site != u32::MAX && v != u32::MAX {
                site_speakers[site as usize].push(v);
            }
        }
        for s in &mut site_speakers {
            s.sort_unstable();
            s.dedup();
        }
        let routes = site_speakers
            .par_iter()
            .map(|origins| routes_to_many(&g, &healthy, origins, &cfg))
            .collect::<Result<Vec<_>, _>>()?;
        let n = sites.len() as u32;
        let site_pairs: Vec<(u32, u32)> = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .filter(|&(a, b)| {
                !site_speakers[a as usize].is_empty() && !site_speakers[b as usize].is_empty()
            })
            .collect();
        let regions: Vec<String> = f.regions.iter().map(|r| r.name.clone()).collect();
        let nr = regions.len() as u32;
        let region_pairs: Vec<(u32, u32)> = (0..nr)
            .flat_map(|a| (a + 1..nr).map(move |b| (a, b)))
            .collect();
        let region_members: Vec<Vec<usize>> = region_pairs
            .iter()
            .map(|&(ra, rb)| {
                (0..site_pairs.len())
                    .filter(|&p| {
                        let (a, b) = site_pairs[p];
                        let (x, y) = (site_region[a as usize], site_region[b as usize]);
                        (x, y) == (ra, rb) || (x, y) == (rb, ra)
                    })
                    .collect()
            })
            .collect();
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
            speaker_site: Vec::new(),
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
            ledger: TierLedger::new(f),
        };
        ev.speaker_site = (0..ev.g.speakers.len() as u32)
            .map(|v| ev.site_of_speaker(v).unwrap_or(u32::MAX))
            .collect();
        ev.nets = (0..ev.region_pairs.len())
            .map(|r| ev.maxflow_net(r))
            .collect();
        let mut ws = ev.workspace();
        let weights = ev.speaker_mbps.clone();
        let (loads, gbps): (Vec<[Loads; 2]>, Vec<f64>) = (0..ev.site_pairs.len())
            .map(|p| {
                let (a, b) = ev.site_pairs[p];
                let (ra, rb) = (&ev.routes[a as usize], &ev.routes[b as usize]);
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
                let added = m
                    .src_arc
                    .iter()
                    .chain(&m.sink_arc)
                    .filter(|&&a| a != u32::MAX)
                    .count()
                    + ev.g.sessions.len();
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

    /// Working memory for one thread.
    pub fn workspace(&self) -> Workspace {
        Workspace {
            states: self.healthy.clone(),
            flow: vec![0.0; self.g.speakers.len()],
            load: vec![0.0; self.g.adj_len()],
            touched: Vec::new(),
            buckets: Vec::new(),
            received: Vec::new(),
            weights: Vec::new(),
            hops: Vec::new(),
            mark: FixedBitSet::with_capacity(self.g.adj_len()),
            nets: self.nets.iter().map(|m| m.net.clone()).collect(),
        }
    }

    /// Site pair names, `a<->b`.
    pub fn site_pair_names(&self) -> Vec<String> {
        self.site_pairs
            .iter()
            .map(|&(a, b)| format!("{}<->{}", self.sites[a as usize], self.sites[b as usize]))
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

    /// The max-flow network of region pair `r`: speakers, sessions as full-duplex arcs, a
    /// super source feeding region a's rack speakers and a super sink fed by region b's.
    fn maxflow_net(&self, r: usize) -> MaxflowNet {
        self.maxflow_net_with(r, &self.healthy, &self.speaker_mbps)
    }

    fn maxflow_net_with(&self, r: usize, states: &[SessionState], weights: &[u64]) -> MaxflowNet {
        let (ra, rb) = self.region_pairs[r];
        let n = self.g.speakers.len();
        let (s, t) = (n as u32, n as u32 + 1);
        let mut b = FlowNetworkBuilder::new(n + 2);
        for (sid, &(x, y)) in self.g.sessions.iter().enumerate() {
            b.add_undirected(x, y, states[sid].mbps);
        }
        let mut next = self.g.sessions.len() as u32;
        let (mut src_arc, mut sink_arc) = (vec![u32::MAX; n], vec![u32::MAX; n]);
        for (site, spk) in self.site_speakers.iter().enumerate() {
            let region = self.site_region[site];
            for &v in spk {
                let w = weights[v as usize];
                if region == ra {
                    b.add_arc(s, v, w);
                    src_arc[v as usize] = next;
                    next += 1;
                } else if region == rb {
                    b.add_arc(v, t, w);
                    sink_arc[v as usize] = next;
                    next += 1;
                }
            }
        }
        MaxflowNet {
            net: b.build(),
            healthy_flow: Vec::new(),
            src_arc,
            sink_arc,
        }
    }

    /// Propagate unit demand from site `from`'s rack speakers (weighted by `weights`) along
    /// `routes` (toward site `to`), adding loads into `ws.load`, until it enters site `to`.
    /// Returns the share delivered.
    fn propagate(
        &self,
        from: u32,
        to: u32,
        routes: &RoutesTo,
        states: &[SessionState],
        weights: &[u64],
        ws: &mut Workspace,
    ) -> f64 {
        let srcs = &self.site_speakers[from as usize];
        let total: u64 = srcs.iter().map(|&v| weights[v as usize]).sum();
        if total == 0 {
            return 0.0;
        }
        let mut delivered = 0.0;
        let mut top = 0usize;
        for &v in srcs {
            let w = weights[v as usize];
            if w == 0 {
                continue;
            }
            let Some(b) = routes.best[v as usize] else {
                continue;
            };
            let share = w as f64 / total as f64;
            delivered += share;
            let len = b.len as usize;
            if ws.buckets.len() <= len {
                ws.buckets.resize_with(len + 1, Vec::new);
            }
            if ws.flow[v as usize] == 0.0 {
                ws.buckets[len].push(v);
            }
            ws.flow[v as usize] += share;
            top = top.max(len);
        }
        for len in (1..=top).rev() {
            let mut bucket = std::mem::take(&mut ws.buckets[len]);
            for &v in &bucket {
                let fv = std::mem::replace(&mut ws.flow[v as usize], 0.0);
                if routes.is_origin(v) {
                    continue;
                }
                routes.weighted_next_hops(
                    &self.g,
                    states,
                    v,
                    &mut ws.received,
                    &mut ws.weights,
                    &mut ws.hops,
                );
                for &(pos, u, w) in &ws.hops {
                    if w <= 0.0 {
                        continue;
                    }
                    let x = fv * w;
                    if ws.load[pos] == 0.0 {
                        ws.touched.push(pos as u32);
                    }
                    ws.load[pos] += x;
                    if !routes.is_origin(u) && self.speaker_site[u as usize] != to {
                        if ws.flow[u as usize] == 0.0 {
                            ws.buckets[len - 1].push(u);
                        }
                        ws.flow[u as usize] += x;
                    }
                }
            }
            bucket.clear();
            ws.buckets[len] = bucket;
        }
        // Origins reached directly (length 0 buckets) hold nothing to forward.
        if let Some(b0) = ws.buckets.first_mut() {
            for v in b0.drain(..) {
                ws.flow[v as usize] = 0.0;
            }
        }
        delivered
    }

    /// Take the loads accumulated in `ws` out as sparse entries (in propagation order).
    fn drain_loads(ws: &mut Workspace) -> Vec<(u32, f64)> {
        let out = ws
            .touched
            .iter()
            .map(|&p| (p, std::mem::replace(&mut ws.load[p as usize], 0.0)))
            .collect();
        ws.touched.clear();
        out
    }

    /// Unit flow from site `a` toward site `b` along `routes_b`.
    fn flow(
        &self,
        a: u32,
        b: u32,
        routes_b: &RoutesTo,
        states: &[SessionState],
        weights: &[u64],
        ws: &mut Workspace,
    ) -> Loads {
        let delivered = self.propagate(a, b, routes_b, states, weights, ws);
        Loads {
            entries: Self::drain_loads(ws),
            delivered,
        }
    }

    /// Speakers a flow passes through (owners of its loaded entries) and its sources.
    fn speakers_of(&self, from: u32, l: &Loads) -> FixedBitSet {
        let mut b = FixedBitSet::with_capacity(self.g.speakers.len());
        for &(p, _) in &l.entries {
            b.insert(self.owner_of_pos[p as usize] as usize);
        }
        for &v in &self.site_speakers[from as usize] {
            b.insert(v as usize);
        }
        b
    }

    /// `min capacity / load` over sparse loads already summed into `ws.load` at `ws.touched`;
    /// clears them.
    fn lambda_of_touched(&self, states: &[SessionState], ws: &mut Workspace) -> f64 {
        let mut lambda = f64::INFINITY;
        for &p in &ws.touched {
            let load = std::mem::replace(&mut ws.load[p as usize], 0.0);
            if load > 0.0 {
                let cap = states[self.session_of_pos[p as usize] as usize].mbps as f64;
                lambda = lambda.min(cap / load);
            }
        }
        ws.touched.clear();
        lambda
    }

    fn add_loads(ws: &mut Workspace, entries: &[(u32, f64)], scale: f64) {
        for &(p, x) in entries {
            if ws.load[p as usize] == 0.0 {
                ws.touched.push(p);
            }
            ws.load[p as usize] += x * scale;
        }
    }

    /// Routed capacity of a site pair from its two unit flows, Gb/s per direction.
    fn pair_capacity(&self, l: [&Loads; 2], states: &[SessionState], ws: &mut Workspace) -> f64 {
        let delivered = (l[0].delivered + l[1].delivered) / 2.0;
        // The two directions almost never share an entry (each is owned by its sender): take
        // each one's minimum, marking the first's entries to catch a shared one.
        let cap = |p: u32| states[self.session_of_pos[p as usize] as usize].mbps as f64;
        let mut lambda = f64::INFINITY;
        for &(p, x) in &l[0].entries {
            ws.mark.insert(p as usize);
            lambda = lambda.min(cap(p) / x);
        }
        let shared = l[1]
            .entries
            .iter()
            .any(|&(p, _)| ws.mark.contains(p as usize));
        for &(p, _) in &l[0].entries {
            ws.mark.set(p as usize, false);
        }
        if shared {
            Self::add_loads(ws, &l[0].entries, 1.0);
            Self::add_loads(ws, &l[1].entries, 1.0);
            lambda = self.lambda_of_touched(states, ws);
        } else {
            for &(p, x) in &l[1].entries {
                lambda = lambda.min(cap(p) / x);
            }
        }
        routed_gbps(lambda, delivered)
    }

    /// Routed capacity of region pair `r` under a gravity matrix over its site pairs `loads`
    /// (same order as `region_members[r]`). Returns the summed unit loads and Gb/s.
    #[allow(clippy::too_many_arguments)]
    fn region_capacity(
        &self,
        r: usize,
        loads: &[[&Loads; 2]],
        states: &[SessionState],
        site_weights: &[f64],
        want_entries: bool,
        ws: &mut Workspace,
    ) -> (Vec<(u32, f64)>, f64) {
        let grav: Vec<f64> = self.region_members[r]
            .iter()
            .map(|&p| {
                let (a, b) = self.site_pairs[p];
                site_weights[a as usize] * site_weights[b as usize]
            })
            .collect();
        let total: f64 = grav.iter().sum();
        if total == 0.0 {
            return (Vec::new(), 0.0);
        }
        let mut delivered = 0.0;
        for (l, g) in loads.iter().zip(&grav) {
            let share = g / total;
            Self::add_loads(ws, &l[0].entries, share);
            Self::add_loads(ws, &l[1].entries, share);
            delivered += share * (l[0].delivered + l[1].delivered) / 2.0;
        }
        let entries: Vec<(u32, f64)> = if want_entries {
            ws.touched
                .iter()
                .map(|&p| (p, ws.load[p as usize]))
                .collect()
        } else {
            Vec::new()
        };
        let lambda = self.lambda_of_touched(states, ws);
        (entries, routed_gbps(lambda, delivered))
    }

    /// The loads of site pair `p`: fresh where propagated again, else the healthy ones.
    fn loads_of<'a>(&'a self, fresh: &'a [[Option<Loads>; 2]], p: usize) -> [&'a Loads; 2] {
        [0, 1].map(|d| fresh[p][d].as_ref().unwrap_or(&self.pair_loads[p][d]))
    }

    /// Live GPU-facing Mb/s of each site under speaker `weights`.
    fn site_weights(&self, weights: &[u64]) -> Vec<f64> {
        self.site_speakers
            .iter()
            .map(|spk| spk.iter().map(|&v| weights[v as usize] as f64).sum())
            .collect()
    }

    /// `min capacity / load` of stored sparse loads under `states`, with their delivery.
    fn capacity_of_entries(
        &self,
        entries: &[(u32, f64)],
        delivered: f64,
        states: &[SessionState],
    ) -> f64 {
        let lambda = entries
            .iter()
            .filter(|e| e.1 > 0.0)
            .map(|&(p, x)| states[self.session_of_pos[p as usize] as usize].mbps as f64 / x)
            .fold(f64::INFINITY, f64::min);
        routed_gbps(lambda, delivered)
    }

    /// The healthy outcome (nothing down).
    pub fn healthy_outcome(&self) -> Outcome {
        Outcome {
            site_pair_gbps: self.healthy_site_gbps.clone(),
            region_pair_gbps: self.healthy_region_gbps.clone(),
            region_maxflow_gbps: self.healthy_maxflow_gbps.clone(),
            gpus_disconnected: 0,
            tiers: Vec::new(),
        }
    }

    /// Evaluate one scenario from scratch, with none of the shortcuts of
    /// [`Evaluator::evaluate`]: every session state, rack and GPU recomputed from the mask,
    /// routes toward every site converged anew, every flow propagated, max-flow networks
    /// rebuilt. Slow; the reference the incremental path is tested against.
    pub fn evaluate_from_scratch(&self, down: &Down) -> Result<Outcome, NotConverged> {
        let f = self.f;
        let mut scenario = Scenario::healthy(f);
        scenario.failed = down.mask.clone();
        let states = bgp::session_states(f, &self.g, &scenario);
        let mut weights = vec![0u64; self.g.speakers.len()];
        let none = FailureMask::none(f);
        let mut gpus_disconnected = 0;
        for (i, d) in f.devices().iter().enumerate() {
            let id = DeviceId(i as u32);
            if is_rack(d.role) && self.g.speaker_of[i] != u32::MAX {
                weights[self.g.speaker_of[i] as usize] += rack_weight(f, id, &down.mask);
            }
            if d.role == Role::Gpu
                && gpu_connected(f, id, &none)
                && !gpu_connected(f, id, &down.mask)
            {
                gpus_disconnected += 1;
            }
        }
        let cfg = self.routes.first().map(|r| r.config()).unwrap_or_default();
        let routes = self
            .site_speakers
            .iter()
            .map(|o| routes_to_many(&self.g, &states, o, &cfg))
            .collect::<Result<Vec<_>, _>>()?;
        let mut ws = self.workspace();
        let loads: Vec<[Loads; 2]> = self
            .site_pairs
            .iter()
            .map(|&(a, b)| {
                [
                    self.flow(a, b, &routes[b as usize], &states, &weights, &mut ws),
                    self.flow(b, a, &routes[a as usize], &states, &weights, &mut ws),
                ]
            })
            .collect();
        let site_pair_gbps = loads
            .iter()
            .map(|l| self.pair_capacity([&l[0], &l[1]], &states, &mut ws))
            .collect();
        let region_pair_gbps = (0..self.region_pairs.len())
            .map(|r| {
                let refs: Vec<[&Loads; 2]> = self.region_members[r]
                    .iter()
                    .map(|&p| [&loads[p][0], &loads[p][1]])
                    .collect();
                let sw = self.site_weights(&weights);
                self.region_capacity(r, &refs, &states, &sw, false, &mut ws)
                    .1
            })
            .collect();
        let region_maxflow_gbps = (0..self.region_pairs.len())
            .map(|r| {
                let mut m = self.maxflow_net_with(r, &states, &weights);
                let n = m.net.num_nodes() as u32;
                mbps_to_gbps(m.net.max_flow(n - 2, n - 1) as f64)
            })
            .collect();
        let down_links = down.down_links(f);
        Ok(Outcome {
            site_pair_gbps,
            region_pair_gbps,
            region_maxflow_gbps,
            gpus_disconnected,
            tiers: self
                .ledger
                .changes(&self.ledger.without(f, down_links.iter().copied())),
        })
    }

    /// Evaluate one scenario (see the module docs).
    pub fn evaluate(&self, down: &Down, ws: &mut Workspace) -> Result<Outcome, NotConverged> {
        let f = self.f;
        let mask = &down.mask;
        let down_links = down.down_links(f);
        let tiers = self
            .ledger
            .changes(&self.ledger.without(f, down_links.iter().copied()));

        // Sessions whose state changed.
        let mut sids: Vec<u32> = down_links
            .iter()
            .map(|l| self.session_of_link[l.idx()])
            .filter(|&s| s != u32::MAX)
            .collect();
        sids.sort_unstable();
        sids.dedup();
        let mut changed: Vec<u32> = Vec::new();
        for s in sids {
            let st = session_state(f, &self.g, s, mask);
            if st != self.healthy[s as usize] {
                ws.states[s as usize] = st;
                changed.push(s);
            }
        }

        // Rack switches and GPUs whose standing may have changed.
        let mut racks: Vec<DeviceId> = Vec::new();
        let mut gpus: Vec<DeviceId> = Vec::new();
        let note = |d: DeviceId, racks: &mut Vec<DeviceId>, gpus: &mut Vec<DeviceId>| match f
            .device(d)
            .role
        {
            r if is_rack(r) => racks.push(d),
            Role::Gpu => gpus.push(d),
            _ => {}
        };
        for &d in &down.devices {
            note(d, &mut racks, &mut gpus);
            for &l in f.incident(d) {
                note(f.link(l).other(d), &mut racks, &mut gpus);
            }
        }
        for &l in &down.links {
            let link = f.link(l);
            note(link.a, &mut racks, &mut gpus);
            note(link.b, &mut racks, &mut gpus);
        }
        // A GPU's rack may have changed; a rack's GPUs may have.
        for &g in &gpus.clone() {
            for &l in f.incident(g) {
                let o = f.link(l).other(g);
                if is_rack(f.device(o).role) {
                    racks.push(o);
                }
            }
        }
        racks.sort_unstable();
        racks.dedup();
        for &r in &racks {
            for &l in f.incident(r) {
                let o = f.link(l).other(r);
                if f.device(o).role == Role::Gpu {
                    gpus.push(o);
                }
            }
        }
        gpus.sort_unstable();
        gpus.dedup();
        let gpus_disconnected = gpus
            .iter()
            .filter(|&&g| self.gpu_ok.contains(g.idx()) && !gpu_connected(f, g, mask))
            .count() as u64;
        let mut weight_changes: Vec<(SpeakerId, i64)> = Vec::new();
        for &r in &racks {
            let w = rack_weight(f, r, mask) as i64 - self.rack_mbps[r.idx()] as i64;
            let v = self.g.speaker_of[r.idx()];
            if w != 0 && v != u32::MAX {
                weight_changes.push((v, w));
            }
        }
        let mut site_weight_changed = vec![false; self.sites.len()];
        let weights_owned;
        let weights: &[u64] = if weight_changes.is_empty() {
            &self.speaker_mbps
        } else {
            let mut w = self.speaker_mbps.clone();
            for &(v, d) in &weight_changes {
                w[v as usize] = (w[v as usize] as i64 + d) as u64;
            }
            weights_owned = w;
            &weights_owned
        };
        for &(v, _) in &weight_changes {
            if let Some(site) = self.site_of_speaker(v) {
                site_weight_changed[site as usize] = true;
            }
        }
        // Whether a site's demand is spread over its rack speakers differently (a site with
        // one speaker only changes when that speaker loses all demand).
        let dist_changed: Vec<bool> = (0..self.sites.len())
            .map(|s| {
                let spk = &self.site_speakers[s];
                site_weight_changed[s]
                    && (spk.len() > 1 || spk.iter().any(|&v| weights[v as usize] == 0))
            })
            .collect();

        let out = if changed.is_empty() && weight_changes.is_empty() {
            Ok(Outcome {
                gpus_disconnected,
                tiers,
                ..self.healthy_outcome()
            })
        } else {
            self.rerouted(
                &changed,
                weights,
                &site_weight_changed,
                &dist_changed,
                ws,
                gpus_disconnected,
                tiers,
            )
        };
        // The workspace goes back to healthy whatever happened.
        for &s in &changed {
            ws.states[s as usize] = self.healthy[s as usize];
        }
        out
    }

    fn site_of_speaker(&self, v: SpeakerId) -> Option<u32> {
        let d = match self.g.speakers[v as usize].kind {
            SpeakerKind::Device(d) => d,
            SpeakerKind::DsfSystem(z) => DeviceId(self.f.zone_devices(z).start),
        };
        let s = self.site_of_device[d.idx()];
        (s != u32::MAX).then_some(s)
    }

    #[allow(clippy::too_many_arguments)]
    fn rerouted(
        &self,
        changed: &[u32],
        weights: &[u64],
        site_weight_changed: &[bool],
        dist_changed: &[bool],
        ws: &mut Workspace,
        gpus_disconnected: u64,
        tiers: Vec<TierChange>,
    ) -> Result<Outcome, NotConverged> {
        let states = std::mem::take(&mut ws.states);
        let result = (|| {
            // Routes toward each site, updated where the change can matter.
            // `None` where the routes did not need updating.
            let mut new_routes: Vec<Option<RoutesTo>> = Vec::with_capacity(self.sites.len());
            for r in &self.routes {
                if !changed.is_empty() && bgp::affected(&self.g, r, &self.healthy, &states, changed)
                {
                    let mut x = r.clone();
                    x.update(&self.g, &self.healthy, &states, changed)?;
                    new_routes.push(Some(x));
                } else {
                    new_routes.push(None);
                }
            }
            // Who forwards differently, asked only about the speakers flows cross.
            let mut changed_set = FixedBitSet::with_capacity(self.g.sessions.len());
            for &s in changed {
                changed_set.insert(s as usize);
            }
            let mut probes: Vec<Option<ChangeProbe>> = new_routes
                .iter()
                .zip(&self.routes)
                .map(|(x, r)| {
                    x.as_ref()
                        .map(|x| ChangeProbe::new(x, r, &self.g, &changed_set))
                })
                .collect();
            let route = |s: u32| {
                new_routes[s as usize]
                    .as_ref()
                    .unwrap_or(&self.routes[s as usize])
            };
            // Does the flow from site `a` toward site `b` need propagating again?
            let mut reflow = |p: usize, dir: usize, a: u32, b: u32| {
                dist_changed[a as usize]
                    || probes[b as usize].as_mut().is_some_and(|probe| {
                        self.pair_speakers[p][dir]
                            .ones()
                            .any(|v| probe.changed(v as SpeakerId))
                    })
            };
            let mut changed_pos: Vec<u32> = Vec::new();
            for &s in changed {
                let (a, b) = self.g.sessions[s as usize];
                for x in [a, b] {
                    let pos = self.g.neighbors(x).partition_point(|&(y, _)| y < s);
                    changed_pos.push((self.g.adj_range(x).start + pos) as u32);
                }
            }
            let mut fresh: Vec<[Option<Loads>; 2]> = vec![[None, None]; self.site_pairs.len()];
            let mut site_pair_gbps = self.healthy_site_gbps.clone();
            for (p, &(a, b)) in self.site_pairs.iter().enumerate() {
                if reflow(p, 0, a, b) {
                    fresh[p][0] = Some(self.flow(a, b, route(b), &states, weights, ws));
                }
                if reflow(p, 1, b, a) {
                    fresh[p][1] = Some(self.flow(b, a, route(a), &states, weights, ws));
                }
                let moved = fresh[p][0].is_some() || fresh[p][1].is_some();
                if moved || self.pair_footprint[p].hits(&changed_pos) {
                    let l = self.loads_of(&fresh, p);
                    site_pair_gbps[p] = self.pair_capacity(l, &states, ws);
                }
            }
            let mut region_pair_gbps = self.healthy_region_gbps.clone();
            for (r, members) in self.region_members.iter().enumerate() {
                let gravity_moved = members.iter().any(|&p| {
                    let (a, b) = self.site_pairs[p];
                    site_weight_changed[a as usize] || site_weight_changed[b as usize]
                });
                let moved = |p: usize| fresh[p][0].is_some() || fresh[p][1].is_some();
                if gravity_moved || members.iter().any(|&p| moved(p)) {
                    let refs: Vec<[&Loads; 2]> =
                        members.iter().map(|&p| self.loads_of(&fresh, p)).collect();
                    let sw = self.site_weights(weights);
                    region_pair_gbps[r] = self.region_capacity(r, &refs, &states, &sw, false, ws).1;
                } else if self.region_footprint[r].hits(&changed_pos) {
                    let delivered = self.region_delivered[r];
                    region_pair_gbps[r] =
                        self.capacity_of_entries(&self.region_loads[r], delivered, &states);
                }
            }
            let region_maxflow_gbps = self.maxflows(changed, weights, &states, ws);
            Ok(Outcome {
                site_pair_gbps,
                region_pair_gbps,
                region_maxflow_gbps,
                gpus_disconnected,
                tiers,
            })
        })();
        ws.states = states;
        result
    }

    /// Healthy delivery of a region pair's gravity mix (1 unless some rack has no route).
    fn healthy_region_delivered(&self, r: usize) -> f64 {
        let sw = self.site_weights(&self.speaker_mbps);
        let (mut num, mut den) = (0.0, 0.0);
        for &p in &self.region_members[r] {
            let (a, b) = self.site_pairs[p];
            let g = sw[a as usize] * sw[b as usize];
            let l = &self.pair_loads[p];
            num += g * (l[0].delivered + l[1].delivered) / 2.0;
            den += g;
        }
        if den == 0.0 {
            0.0
        } else {
            num / den
        }
    }

    fn maxflows(
        &self,
        changed: &[u32],
        weights: &[u64],
        states: &[SessionState],
        ws: &mut Workspace,
    ) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.nets.len());
        for ((m, net), &healthy) in self
            .nets
            .iter()
            .zip(ws.nets.iter_mut())
            .zip(&self.healthy_maxflow_gbps)
        {
            // Capacities only go down. If every lowered arc still fits its healthy flow, that
            // flow is still feasible and still maximal.
            let fits = changed
                .iter()
                .all(|&s| m.healthy_flow[s as usize] <= states[s as usize].mbps)
                && weights
                    .iter()
                    .zip(&self.speaker_mbps)
                    .enumerate()
                    .filter(|(_, (w, h))| w != h)
                    .all(|(v, (&w, _))| {
                        [m.src_arc[v], m.sink_arc[v]]
                            .iter()
                            .all(|&a| a == u32::MAX || m.healthy_flow[a as usize] <= w)
                    });
            if fits {
                out.push(healthy);
                continue;
            }
            let mut restore: Vec<(usize, u64, u64)> = Vec::new();
            for &s in changed {
                let c = states[s as usize].mbps;
                net.set_link_capacity(s as usize, c, c);
                let h = self.healthy[s as usize].mbps;
                restore.push((s as usize, h, h));
            }
            for (v, (&w, &h)) in weights.iter().zip(&self.speaker_mbps).enumerate() {
                if w == h {
                    continue;
                }
                if m.src_arc[v] != u32::MAX {
                    net.set_link_capacity(m.src_arc[v] as usize, w, 0);
                    restore.push((m.src_arc[v] as usize, h, 0));
                }
                if m.sink_arc[v] != u32::MAX {
                    net.set_link_capacity(m.sink_arc[v] as usize, w, 0);
                    restore.push((m.sink_arc[v] as usize, h, 0));
                }
            }
            let n = net.num_nodes() as u32;
            out.push(mbps_to_gbps(net.max_flow(n - 2, n - 1) as f64));
            for (i, a, b) in restore {
                net.set_link_capacity(i, a, b);
            }
        }
        out
    }
}

/// A session's state with `mask` down (no drains): its live links and their capacity.
fn session_state(f: &Fabric, g: &BgpGraph, s: u32, mask: &FailureMask) -> SessionState {
    let mut st = SessionState::default();
    for &l in g.links(s) {
        if f.link_up(l, mask) {
            st.mbps += u64::from(f.link(l).capacity_mbps);
            st.links += 1;
        }
    }
    st
}

/// Whether a rack switch is alive with at least one live uplink (a link to a non-GPU).
fn rack_good(f: &Fabric, r: DeviceId, mask: &FailureMask) -> bool {
    !mask.device_failed(r)
        && f.incident(r)
            .iter()
            .any(|&l| f.device(f.link(l).other(r)).role != Role::Gpu && f.link_up(l, mask))
}

/// Live GPU-facing Mb/s of rack switch `r` (0 if it is not good).
fn rack_weight(f: &Fabric, r: DeviceId, mask: &FailureMask) -> u64 {
    if !rack_good(f, r, mask) {
        return 0;
    }
    f.incident(r)
        .iter()
        .filter(|&&l| f.device(f.link(l).other(r)).role == Role::Gpu && f.link_up(l, mask))
        .map(|&l| u64::from(f.link(l).capacity_mbps))
        .sum()
}

/// Whether a GPU is alive with a live link to a good rack switch.
fn gpu_connected(f: &Fabric, gpu: DeviceId, mask: &FailureMask) -> bool {
    !mask.device_failed(gpu)
        && f.incident(gpu).iter().any(|&l| {
            let r = f.link(l).other(gpu);
            f.link_up(l, mask) && is_rack(f.device(r).role) && rack_good(f, r, mask)
        })
}
