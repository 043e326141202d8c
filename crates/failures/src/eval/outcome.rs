//! One scenario's [`Outcome`], evaluated incrementally from the healthy state.

use aifabric_capacity::TierChange;
use aifabric_model::*;
use aifabric_routing::bgp::{self, ChangeProbe, NotConverged, RoutesTo, SessionId, SpeakerId};
use fixedbitset::FixedBitSet;

use super::loads::{InSite, Loads};

/// Sites with at least this many speakers share the part of their flows inside them
/// between destinations ([`Evaluator::flow_shared`]); below it, a flow is cheap to redo.
const SHARE_FROM: usize = 16;
use super::standing::{is_rack, rack_weight, session_state, RackStanding};
use super::{Down, Evaluator, SiteId, Workspace};

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
    /// GPUs that reach no other site: those of [`Outcome::gpus_disconnected`], plus the
    /// live, connected GPUs whose rack switch's speaker has a route toward another site in
    /// the starting state and toward none now (an edge pod or every uplink of a zone lost).
    pub gpus_isolated: u64,
    /// Tiers whose oversubscription changed.
    pub tiers: Vec<TierChange>,
}

impl<'f> Evaluator<'f> {
    /// The healthy outcome (nothing down).
    pub fn healthy_outcome(&self) -> Outcome {
        Outcome {
            site_pair_gbps: self.healthy_site_gbps.clone(),
            region_pair_gbps: self.healthy_region_gbps.clone(),
            region_maxflow_gbps: self.healthy_maxflow_gbps.clone(),
            gpus_disconnected: 0,
            gpus_isolated: 0,
            tiers: Vec::new(),
        }
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
        let mut sids: Vec<SessionId> = down_links
            .iter()
            .filter_map(|l| self.session_of_link[l.idx()])
            .collect();
        sids.sort_unstable();
        sids.dedup();
        let mut changed: Vec<SessionId> = Vec::new();
        for s in sids {
            let st = session_state(f, &self.g, s.get(), mask);
            if st != self.healthy[s.idx()] {
                ws.states[s.idx()] = st;
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
        let standing = RackStanding::new(f, mask, &racks);
        let gpus_disconnected = gpus
            .iter()
            .filter(|&&g| self.gpu_ok.contains(g.idx()) && !standing.gpu_connected(g))
            .count() as u64;
        let mut weight_changes: Vec<(SpeakerId, i64)> = Vec::new();
        for &r in &racks {
            let w = rack_weight(f, r, mask) as i64 - self.rack_mbps[r.idx()] as i64;
            if let (true, Some(v)) = (w != 0, self.g.speaker(r)) {
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
                w[v.idx()] = (w[v.idx()] as i64 + d) as u64;
            }
            weights_owned = w;
            &weights_owned
        };
        for &(v, _) in &weight_changes {
            if let Some(site) = self.site_of_speaker(v) {
                site_weight_changed[site.idx()] = true;
            }
        }
        // Whether a site's demand is spread over its rack speakers differently (a site with
        // one speaker only changes when that speaker loses all demand).
        let dist_changed: Vec<bool> = (0..self.sites.len())
            .map(|s| {
                let spk = &self.site_speakers[s];
                site_weight_changed[s]
                    && (spk.len() > 1 || spk.iter().any(|&v| weights[v.idx()] == 0))
            })
            .collect();

        let out = if changed.is_empty() && weight_changes.is_empty() {
            // Routes unchanged: no speaker lost its way out, but a DSF cluster may have.
            Ok(Outcome {
                gpus_disconnected,
                gpus_isolated: gpus_disconnected + self.gpus_without_a_way_out(&[], &standing),
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
                &standing,
            )
        };
        // The workspace goes back to healthy whatever happened.
        for &s in &changed {
            ws.states[s.idx()] = self.healthy[s.idx()];
        }
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn rerouted(
        &self,
        changed: &[SessionId],
        weights: &[u64],
        site_weight_changed: &[bool],
        dist_changed: &[bool],
        ws: &mut Workspace,
        gpus_disconnected: u64,
        tiers: Vec<TierChange>,
        standing: &RackStanding,
    ) -> Result<Outcome, NotConverged> {
        let states = std::mem::take(&mut ws.states);
        let mut spare = std::mem::take(&mut ws.spare_routes);
        // Routes toward each site, updated where the change can matter.
        // `None` where the routes did not need updating.
        let mut new_routes: Vec<Option<RoutesTo>> = Vec::with_capacity(self.sites.len());
        let result = (|| {
            for r in &self.routes {
                if !changed.is_empty() && bgp::affected(&self.g, r, &self.healthy, &states, changed)
                {
                    let mut x = match spare.pop() {
                        Some(mut x) => {
                            x.clone_from(r);
                            x
                        }
                        None => r.clone(),
                    };
                    let updated = x.update(&self.g, &self.healthy, &states, changed);
                    new_routes.push(Some(x));
                    updated?;
                } else {
                    new_routes.push(None);
                }
            }
            // Who forwards differently, asked only about the speakers flows cross.
            let mut changed_set = FixedBitSet::with_capacity(self.g.sessions.len());
            for &s in changed {
                changed_set.insert(s.idx());
            }
            let mut probes: Vec<Option<ChangeProbe>> = new_routes
                .iter()
                .zip(&self.routes)
                .map(|(x, r)| {
                    x.as_ref()
                        .map(|x| ChangeProbe::new(x, r, &self.g, &changed_set))
                })
                .collect();
            let route = |s: SiteId| {
                new_routes[s.idx()]
                    .as_ref()
                    .unwrap_or(&self.routes[s.idx()])
            };
            // Does the flow from site `a` toward site `b` need propagating again?
            let mut reflow = |p: usize, dir: usize, a: SiteId, b: SiteId| {
                dist_changed[a.idx()]
                    || probes[b.idx()].as_mut().is_some_and(|probe| {
                        self.pair_speakers[p][dir]
                            .ones()
                            .any(|v| probe.changed(SpeakerId::from_idx(v)))
                    })
            };
            let mut changed_pos: Vec<u32> = Vec::new();
            for &s in changed {
                let (a, b) = self.g.sessions[s.idx()];
                for x in [a, b] {
                    let pos = self.g.neighbors(x).partition_point(|&(y, _)| y < s);
                    changed_pos.push((self.g.adj_range(x).start + pos) as u32);
                }
            }
            let mut fresh: Vec<[Option<Loads>; 2]> = vec![[None, None]; self.site_pairs.len()];
            // Per source site, the parts of its flows inside it, shared by destinations.
            let mut inside: Vec<Vec<InSite>> = (0..self.sites.len()).map(|_| Vec::new()).collect();
            let mut site_pair_gbps = self.healthy_site_gbps.clone();
            for (p, &(a, b)) in self.site_pairs.iter().enumerate() {
                for (dir, (x, y)) in [(a, b), (b, a)].into_iter().enumerate() {
                    if !reflow(p, dir, x, y) {
                        continue;
                    }
                    fresh[p][dir] = Some(if self.site_members[x.idx()].len() >= SHARE_FROM {
                        self.flow_shared(x, y, &route, &states, weights, &mut inside[x.idx()], ws)
                    } else {
                        self.flow(x, y, route(y), &states, weights, ws)
                    });
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
                    site_weight_changed[a.idx()] || site_weight_changed[b.idx()]
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
            let gpus_isolated =
                gpus_disconnected + self.gpus_without_a_way_out(&new_routes, standing);
            Ok(Outcome {
                site_pair_gbps,
                region_pair_gbps,
                region_maxflow_gbps,
                gpus_disconnected,
                gpus_isolated,
                tiers,
            })
        })();
        ws.states = states;
        spare.extend(new_routes.into_iter().flatten());
        ws.spare_routes = spare;
        result
    }
}

impl Evaluator<'_> {
    /// Live GPUs, connected to a good rack switch, whose speaker had a route toward some
    /// other site in the starting state and has none toward any now (`new_routes[t]`: the
    /// routes toward site `t` if they were updated, else unchanged); and those of a
    /// dual-stage DSF cluster whose every FDSW -> SDSW link is down (the whole zone's when
    /// that cluster is the edge pod), which BGP cannot see (the zone is one speaker).
    pub(super) fn gpus_without_a_way_out(
        &self,
        new_routes: &[Option<RoutesTo>],
        standing: &RackStanding,
    ) -> u64 {
        let f = self.f;
        let mask = standing.mask();
        let live_gpus = |racks: &[DeviceId]| -> u64 {
            let mut n = 0;
            for &r in racks {
                for &l in f.incident(r) {
                    let g = f.link(l).other(r);
                    if f.device(g).role == Role::Gpu
                        && self.gpu_ok.contains(g.idx())
                        && standing.gpu_connected(g)
                    {
                        n += 1;
                    }
                }
            }
            n
        };
        let others = |s: usize| {
            (0..self.sites.len()).filter(move |&t| t != s && !self.site_speakers[t].is_empty())
        };
        let mut isolated = 0u64;
        let mut counted: Vec<SpeakerId> = Vec::new();
        if new_routes.iter().any(Option::is_some) {
            for (s, speakers) in self.site_speakers.iter().enumerate() {
                for &v in speakers {
                    let had = others(s).any(|t| self.routes[t].best[v.idx()].is_some());
                    let has = others(s).any(|t| {
                        new_routes[t].as_ref().unwrap_or(&self.routes[t]).best[v.idx()].is_some()
                    });
                    if had && !has {
                        isolated += live_gpus(&self.speaker_racks[v.idx()]);
                        counted.push(v);
                    }
                }
            }
        }
        // A cut cluster stage: the first link found up (nearly always the first) ends the check.
        let mut zone_done: Option<SpeakerId> = None;
        for c in &self.clusters {
            if c.cut_in_base
                || zone_done == Some(c.speaker)
                || counted.contains(&c.speaker)
                || c.links.iter().any(|&l| f.link_up(l, mask))
            {
                continue;
            }
            let site = self.speaker_site[c.speaker.idx()].map(|s| s.idx());
            let had = site
                .is_some_and(|s| others(s).any(|t| self.routes[t].best[c.speaker.idx()].is_some()));
            if !had {
                continue;
            }
            isolated += live_gpus(&c.racks);
            // The edge pod comes first and covers every rack of the zone.
            if c.edge {
                zone_done = Some(c.speaker);
            }
        }
        isolated
    }
}
