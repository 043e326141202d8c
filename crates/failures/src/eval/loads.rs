//! Unit-demand loads of a site pair: propagating demand along the routes toward a site.

use aifabric_routing::bgp::{RoutesTo, SessionState};
use fixedbitset::FixedBitSet;

use super::{Evaluator, SiteId, Workspace};

/// Unit-demand loads of one direction of a site pair: (adjacency position, load) in
/// propagation order, and the share of demand delivered.
#[derive(Clone, Debug, Default)]
pub(super) struct Loads {
    pub(super) entries: Vec<(u32, f64)>,
    pub(super) delivered: f64,
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

impl<'f> Evaluator<'f> {
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
        let srcs = &self.site_speakers[from.idx()];
        let total: u64 = srcs.iter().map(|&v| weights[v.idx()]).sum();
        if total == 0 {
            return 0.0;
        }
        let mut delivered = 0.0;
        let mut top = 0usize;
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
            let len = b.len as usize;
            if ws.buckets.len() <= len {
                ws.buckets.resize_with(len + 1, Vec::new);
            }
            if ws.flow[v.idx()] == 0.0 {
                ws.buckets[len].push(v);
            }
            ws.flow[v.idx()] += share;
            top = top.max(len);
        }
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
                    if !routes.is_origin(u) && self.speaker_site[u.idx()] != Some(to) {
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
