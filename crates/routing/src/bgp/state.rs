//! The whole forwarding state: converged routes toward every origin, computed in parallel,
//! and brought up to date incrementally when sessions change.
//!
//! Work is shared between destinations with the same structure: every rack prefix of a DSF
//! zone has the same origin speaker (the zone's system), so a zone costs one computation.

use super::compute::{routes_to, BgpConfig, NotConverged, RoutesTo, SessionState};
use super::graph::{BgpGraph, SessionId, SpeakerId};
use aifabric_model::Fabric;
use rayon::prelude::*;

/// Routes toward every origin speaker of the fabric's rack prefixes.
#[derive(Clone, Debug)]
pub struct ForwardingState {
    /// Distinct origin speakers, ascending.
    pub origins: Vec<SpeakerId>,
    /// Routes toward each origin (same order).
    pub routes: Vec<RoutesTo>,
    /// Session states the routes were computed under.
    pub states: Vec<SessionState>,
}

/// Converge the routes toward every rack prefix's origin, in parallel across origins
/// (collected in origin order, so the result does not depend on the thread count).
pub fn converge_all(
    f: &Fabric,
    g: &BgpGraph,
    states: Vec<SessionState>,
    cfg: &BgpConfig,
) -> Result<ForwardingState, NotConverged> {
    let mut origins: Vec<SpeakerId> = crate::fib::prefixes(f)
        .iter()
        .map(|p| g.rack_speaker(p.rack_switch))
        .collect();
    origins.sort_unstable();
    origins.dedup();
    let routes = origins
        .par_iter()
        .map(|&o| routes_to(g, &states, o, cfg))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ForwardingState {
        origins,
        routes,
        states,
    })
}

impl ForwardingState {
    /// Apply new session states (e.g. after a link failure or a drain) incrementally: only
    /// the origins that a change can matter to are updated, each from the speakers around the
    /// change ([`RoutesTo::update`]). Returns how many origins were updated.
    pub fn update(
        &mut self,
        g: &BgpGraph,
        new_states: Vec<SessionState>,
    ) -> Result<usize, NotConverged> {
        let changed: Vec<SessionId> = (0..new_states.len() as u32)
            .map(SessionId::new)
            .filter(|&s| new_states[s.idx()] != self.states[s.idx()])
            .collect();
        if changed.is_empty() {
            return Ok(0);
        }
        let old = std::mem::replace(&mut self.states, new_states);
        let new = &self.states;
        let updated: Vec<usize> = self
            .routes
            .par_iter_mut()
            .map(|r| {
                if affected(g, r, &old, new, &changed) {
                    r.update(g, &old, new, &changed).map(|()| 1)
                } else {
                    Ok(0)
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(updated.iter().sum())
    }
}

/// Whether a session change (sessions `changed`, from `old` to `new` states) can matter to
/// routes `r`. A session that got better (came up,
/// gained links, lost its drain) matters if either end has a route to offer over it; one that
/// got worse matters only if it is a multipath of one of its ends (otherwise no best route,
/// multipath set or link-bandwidth value involves it).
pub fn affected(
    g: &BgpGraph,
    r: &RoutesTo,
    old: &[SessionState],
    new: &[SessionState],
    changed: &[SessionId],
) -> bool {
    changed.iter().any(|&s| {
        let (o, w) = (old[s.idx()], new[s.idx()]);
        let better = w.links > o.links || w.mbps > o.mbps || (o.soft && !w.soft);
        if better {
            let (a, b) = g.sessions[s.idx()];
            r.best[a.idx()].is_some() || r.best[b.idx()].is_some()
        } else {
            r.uses_session(g, s)
        }
    })
}
