//! Unit-demand loads of a site pair: propagating demand along the routes toward a site.

use aifabric_routing::bgp::{RoutesTo, SessionState, SpeakerId};
use fixedbitset::FixedBitSet;
use std::sync::Arc;

use super::{Evaluator, SiteId, Workspace};

/// Unit-demand loads of one direction of a site pair: (adjacency position, load) in
/// propagation order, and the share of demand delivered.
#[derive(Clone, Debug, Default)]
pub(super) struct Loads {
    pub(super) entries: Vec<(u32, f64)>,
    pub(super) delivered: f64,
    /// The part inside the source site, shared with the flows toward other destinations
    /// ([`Evaluator::flow_shared`]); `entries` then hold only the rest.
    pub(super) inside: Option<Arc<Inside>>,
}

/// Loads inside a source site shared by several flows, with their `min capacity / load`
/// (computed once for all of them).
#[derive(Debug)]
pub(super) struct Inside {
    pub(super) entries: Vec<(u32, f64)>,
    pub(super) lambda: f64,
}

impl Loads {
    /// `min capacity / load` of the inside part (infinity without one).
    pub(super) fn inside_lambda(&self) -> f64 {
        self.inside.as_ref().map_or(f64::INFINITY, |i| i.lambda)
    }
}

/// Adjacency positions that carry load in a set of [`Loads`], for "does this change touch
/// it" tests in O(changed).
#[derive(Clone, Debug, Default)]
pub(super) struct Footprint(FixedBitSet);

impl Footprint {
    pub(super) fn of<'a>(len: usize, entries: impl IntoIterator<Item = &'a [(u32, f64)]>) -> Self {
        let mut b = FixedBitSet::with_capacity(len);
        for e in entries {
            for &(p, _) in e {
                b.insert(p as usize);
            }
        }
        Footprint(b)
    }

    pub(super) fn hits(&self, changed_pos: &[u32]) -> bool {
        changed_pos.iter().any(|&p| self.0.contains(p as usize))
    }
}

/// The part of a flow inside its source site, shared by the flows toward every destination
/// whose routes split alike inside it (see [`Evaluator::flow_shared`]).
#[derive(Debug)]
pub(super) struct InSite {
    /// The destination it was propagated for (the class's representative).
    pub(super) to: SiteId,
    /// Loads on the adjacency entries of the site's speakers.
    part: Arc<Inside>,
    /// What leaves the site: (speaker outside it, inflow).
    boundary: Vec<(SpeakerId, f64)>,
    delivered: f64,
}

impl<'f> Evaluator<'f> {
    /// Queue `x` of demand at `v`, in the bucket of its path length `len`.
    fn seed(v: SpeakerId, len: usize, x: f64, ws: &mut Workspace, top: &mut usize) {
        if ws.buckets.len() <= len {
            ws.buckets.resize_with(len + 1, Vec::new);
        }
        if ws.flow[v.idx()] == 0.0 {
            ws.buckets[len].push(v);
        }
        ws.flow[v.idx()] += x;
        *top = (*top).max(len);
    }

    /// Queue site `from`'s demand at its rack speakers (in proportion to `weights`, those
    /// with a route only); returns the share queued.
    fn seed_sources(
        &self,
        from: SiteId,
        routes: &RoutesTo,
        weights: &[u64],
        ws: &mut Workspace,
        top: &mut usize,
    ) -> f64 {
        let srcs = &self.site_speakers[from.idx()];
        let total: u64 = srcs.iter().map(|&v| weights[v.idx()]).sum();
        if total == 0 {
            return 0.0;
        }
        let mut delivered = 0.0;
        for &v in srcs {
            let w = weights[v.idx()];
            if w == 0 {
                continue;
            }
            let Some(b) = routes.best[v.idx()] else {
                continue;
            };
            let share = w as f64 / total as f64;
            delivered += share;
            Self::seed(v, b.len as usize, share, ws, top);
        }
        delivered
    }

    /// Forward what is queued in `ws` along `routes` (toward site `to`), longest paths
    /// first, adding loads into `ws.load`, until it enters site `to` (or an origin). With
    /// `keep_in`, only that site's speakers forward: what reaches a speaker outside it is
    /// left in `ws.flow` and listed in `ws.boundary`.
    fn walk(
        &self,
        to: SiteId,
        routes: &RoutesTo,
        states: &[SessionState],
        keep_in: Option<SiteId>,
        top: usize,
        ws: &mut Workspace,
    ) {
        for len in (1..=top).rev() {
            let mut bucket = std::mem::take(&mut ws.buckets[len]);
            for &v in &bucket {
                let fv = std::mem::replace(&mut ws.flow[v.idx()], 0.0);
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
                    if keep_in.is_some_and(|a| self.speaker_site[u.idx()] != Some(a)) {
                        if ws.flow[u.idx()] == 0.0 {
                            ws.boundary.push(u);
                        }
                        ws.flow[u.idx()] += x;
                    } else if !routes.is_origin(u) && self.speaker_site[u.idx()] != Some(to) {
                        if ws.flow[u.idx()] == 0.0 {
                            ws.buckets[len - 1].push(u);
                        }
                        ws.flow[u.idx()] += x;
                    }
                }
            }
            bucket.clear();
            ws.buckets[len] = bucket;
        }
        // Origins reached directly (length 0 buckets) hold nothing to forward.
        if let Some(b0) = ws.buckets.first_mut() {
            for v in b0.drain(..) {
                ws.flow[v.idx()] = 0.0;
            }
        }
    }

    /// Propagate unit demand from site `from`'s rack speakers (weighted by `weights`) along
    /// `routes` (toward site `to`), adding loads into `ws.load`, until it enters site `to`.
    /// Returns the share delivered.
    fn propagate(
        &self,
        from: SiteId,
        to: SiteId,
        routes: &RoutesTo,
        states: &[SessionState],
        weights: &[u64],
        ws: &mut Workspace,
    ) -> f64 {
        let mut top = 0;
        let delivered = self.seed_sources(from, routes, weights, ws, &mut top);
        self.walk(to, routes, states, None, top, ws);
        delivered
    }

    /// Whether the routes toward two destinations, `r` and `other`, split alike at every
    /// speaker of site `a` (so the part of a flow from `a` inside `a` is the same toward
    /// both): the same multipaths there, link-bandwidth values of the site's speakers and
    /// of their neighbours all in one ratio (UCMP weights are ratios of them: a common
    /// factor cancels), exactly, and no origin among those neighbours (an origin's value is
    /// its session's capacity, not a re-advertisement).
    fn split_alike(&self, a: SiteId, r: &RoutesTo, other: &RoutesTo) -> bool {
        // The rim first: a few dozen values, where destinations usually differ; the site's
        // own speakers (a thousand in an NSF building) only when it matches.
        let mut ratio: Option<(u128, u128)> = None;
        for &u in &self.site_rim[a.idx()] {
            if r.is_origin(u) || other.is_origin(u) {
                return false;
            }
            match (r.advertised[u.idx()], other.advertised[u.idx()]) {
                (None, None) => {}
                (Some(x), Some(y)) => {
                    let (x, y) = (u128::from(x), u128::from(y));
                    match ratio {
                        None if x != 0 || y != 0 => ratio = Some((x, y)),
                        None => {}
                        Some((x0, y0)) if x * y0 != y * x0 => return false,
                        Some(_) => {}
                    }
                    if (x == 0) != (y == 0) {
                        return false;
                    }
                }
                _ => return false,
            }
        }
        let g = &self.g;
        self.site_members[a.idx()].iter().all(|&v| {
            r.best[v.idx()].is_some() == other.best[v.idx()].is_some()
                && r.same_multipaths(other, g, v)
        })
    }

    /// [`Evaluator::flow`] for a site with many speakers, sharing the part inside site
    /// `from` between destinations: `cache` holds that part for each class of destinations
    /// whose routes split alike inside `from` ([`Evaluator::split_alike`]) under the same
    /// states and weights (one scenario), and `route_of(t)` gives the routes toward `t`.
    /// Only what leaves the site is propagated per destination. The same loads as
    /// [`Evaluator::flow`], up to the order of summation.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn flow_shared<'r>(
        &self,
        from: SiteId,
        to: SiteId,
        route_of: &dyn Fn(SiteId) -> &'r RoutesTo,
        states: &[SessionState],
        weights: &[u64],
        cache: &mut Vec<InSite>,
        ws: &mut Workspace,
    ) -> Loads {
        let routes = route_of(to);
        let k = match cache
            .iter()
            .position(|c| self.split_alike(from, routes, route_of(c.to)))
        {
            Some(k) => k,
            None => {
                let mut top = 0;
                let delivered = self.seed_sources(from, routes, weights, ws, &mut top);
                self.walk(to, routes, states, Some(from), top, ws);
                let entries = Self::drain_loads(ws);
                let boundary = ws
                    .boundary
                    .drain(..)
                    .map(|u| (u, std::mem::replace(&mut ws.flow[u.idx()], 0.0)))
                    .collect();
                let lambda = self.min_ratio(&entries, states);
                cache.push(InSite {
                    to,
                    part: Arc::new(Inside { entries, lambda }),
                    boundary,
                    delivered,
                });
                cache.len() - 1
            }
        };
        let inside = &cache[k];
        let mut top = 0;
        for &(u, x) in &inside.boundary {
            if let (false, false, Some(b)) = (
                routes.is_origin(u),
                self.speaker_site[u.idx()] == Some(to),
                routes.best[u.idx()],
            ) {
                Self::seed(u, b.len as usize, x, ws, &mut top);
            }
        }
        self.walk(to, routes, states, None, top, ws);
        Loads {
            entries: Self::drain_loads(ws),
            delivered: inside.delivered,
            inside: Some(Arc::clone(&inside.part)),
        }
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
    pub(super) fn flow(
        &self,
        a: SiteId,
        b: SiteId,
        routes_b: &RoutesTo,
        states: &[SessionState],
        weights: &[u64],
        ws: &mut Workspace,
    ) -> Loads {
        let delivered = self.propagate(a, b, routes_b, states, weights, ws);
        Loads {
            entries: Self::drain_loads(ws),
            delivered,
            inside: None,
        }
    }

    /// Speakers a flow passes through (owners of its loaded entries) and its sources.
    pub(super) fn speakers_of(&self, from: SiteId, l: &Loads) -> FixedBitSet {
        let mut b = FixedBitSet::with_capacity(self.g.speakers.len());
        for &(p, _) in &l.entries {
            b.insert(self.owner_of_pos[p as usize] as usize);
        }
        for &v in &self.site_speakers[from.idx()] {
            b.insert(v.idx());
        }
        b
    }
}
