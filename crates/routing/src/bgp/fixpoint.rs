//! The fixpoint: a worklist that re-evaluates a speaker whenever a neighbor's best route
//! changes, from scratch or from the current state after session changes ([`RoutesTo::update`]:
//! withdraw what depended on a session that got worse, then settle), and the check that a
//! state is one ([`RoutesTo::check_stable`]).

use super::compute::{Best, NotConverged, RoutesTo, SessionState};
use super::graph::{BgpGraph, SessionId, SpeakerId};
use super::preference::{better, extend_hash};
use std::collections::VecDeque;

impl RoutesTo {
    /// Re-run the fixpoint from the current state, starting at `seeds`, then refresh the
    /// multipaths and link-bandwidth values of everything that may have changed.
    pub(super) fn settle(
        &mut self,
        g: &BgpGraph,
        states: &[SessionState],
        seeds: impl IntoIterator<Item = SpeakerId>,
        bandwidth_seeds: &[SpeakerId],
        full: bool,
    ) -> Result<(), NotConverged> {
        let n = g.speakers.len();
        let mut queue: VecDeque<SpeakerId> = VecDeque::new();
        let mut queued = vec![false; n];
        let mut evaluated: Vec<SpeakerId> = Vec::new();
        let mut was_evaluated = vec![false; n];
        for v in seeds {
            if !self.is_origin[v.idx()] && !queued[v.idx()] {
                queued[v.idx()] = true;
                queue.push_back(v);
            }
        }
        let mut cands = Vec::new();
        let mut evaluations = 0u64;
        let limit = 64 * (n as u64 + 1) * (n as u64 + 1).min(64);
        while let Some(v) = queue.pop_front() {
            queued[v.idx()] = false;
            evaluations += 1;
            if evaluations > limit {
                return Err(NotConverged {
                    origin: self.origins.first().copied().unwrap_or(SpeakerId::new(0)),
                    evaluations,
                });
            }
            if !was_evaluated[v.idx()] {
                was_evaluated[v.idx()] = true;
                evaluated.push(v);
            }
            self.candidates(g, states, v, &mut cands);
            let mut new: Option<Best> = None;
            for &(_, u, key) in &cands {
                let tie_better = |b: &Best| {
                    (g.speakers[u.idx()].asn, u) < (g.speakers[b.parent.idx()].asn, b.parent)
                };
                let take = match new {
                    Some(b) if better((b.local_pref, b.len), key) => false,
                    Some(b) if (b.local_pref, b.len) == key && !tie_better(&b) => false,
                    _ => true,
                };
                if take {
                    let parent_best = self.best[u.idx()].expect("candidates have routes");
                    // The path gains u's ASN once per hop it adds (prepends included).
                    let asn = g.speakers[u.idx()].asn;
                    let hash = (0..key.1 - parent_best.len)
                        .fold(parent_best.path_hash, |h, _| extend_hash(h, asn));
                    new = Some(Best {
                        local_pref: key.0,
                        len: key.1,
                        parent: u,
                        path_hash: hash,
                        gshut: key.0 == 0,
                    });
                }
            }
            // The multipaths come from this evaluation: a speaker is evaluated again whenever
            // a neighbor's route (or anything up its AS path, via the path hash) changes, so its
            // last evaluation sees the final candidates.
            let range = g.adj_range(v);
            self.mp.remove_range(range);
            if let Some(b) = new {
                cands.retain(|c| c.2 == (b.local_pref, b.len));
                if cands.len() > self.cfg.max_paths as usize {
                    // Lowest (neighbor ASN, id) first, at most max_paths.
                    cands.sort_by_key(|c| (g.speakers[c.1.idx()].asn, c.1, c.0));
                    cands.truncate(self.cfg.max_paths as usize);
                }
                for c in &cands {
                    self.mp.insert(c.0);
                }
            }
            if new != self.best[v.idx()] {
                self.best[v.idx()] = new;
                for &(_, u) in g.neighbors(v) {
                    if !self.is_origin[u.idx()] && !queued[u.idx()] {
                        queued[u.idx()] = true;
                        queue.push_back(u);
                    }
                }
            }
        }
        self.propagate_bandwidth(g, states, &evaluated, bandwidth_seeds, full);
        Ok(())
    }

    /// Check that this is a stable state of BGP: every speaker holds exactly the route it would
    /// pick from what its neighbors advertise now, its multipaths are the ties and its
    /// link-bandwidth value is current. A diagnostic for tests and tools.
    pub fn check_stable(&self, g: &BgpGraph, states: &[SessionState]) -> Result<(), String> {
        let mut probe = self.clone();
        let all: Vec<SpeakerId> = g.speaker_ids().collect();
        probe
            .settle(g, states, all.iter().copied(), &all, false)
            .map_err(|e| e.to_string())?;
        for v in 0..g.speakers.len() {
            if probe.best[v] != self.best[v] {
                return Err(format!(
                    "speaker {v} holds {:?} but would pick {:?}",
                    self.best[v], probe.best[v]
                ));
            }
        }
        if probe.mp != self.mp || probe.advertised != self.advertised {
            return Err("multipaths or link-bandwidth values are stale".to_owned());
        }
        Ok(())
    }

    /// Bring the routes up to date after the sessions in `changed` went from `old` to `new`
    /// states (failures, repairs, drains). As incremental SPF does: first withdraw every route
    /// that depended on a session that got worse (down, or newly drained) - the speaker whose
    /// best path crossed it and everything below it in the best-path tree - then settle from
    /// the valid routes that remain. Without stale routes the search only improves, so it
    /// ends in the same stable state as a computation from scratch.
    pub fn update(
        &mut self,
        g: &BgpGraph,
        old: &[SessionState],
        new: &[SessionState],
        changed: &[SessionId],
    ) -> Result<(), NotConverged> {
        let n = g.speakers.len();
        let mut invalid = vec![false; n];
        let mut stack: Vec<SpeakerId> = Vec::new();
        for &s in changed {
            let (o, w) = (old[s.idx()], new[s.idx()]);
            let worse = (o.links > 0 && w.links == 0)
                || (!o.soft && w.soft)
                || w.drained_by != o.drained_by;
            if !worse {
                continue;
            }
            let (a, b) = g.sessions[s.idx()];
            for (x, y) in [(a, b), (b, a)] {
                if !self.is_origin[x.idx()]
                    && !invalid[x.idx()]
                    && self.best[x.idx()].is_some_and(|bx| bx.parent == y)
                {
                    invalid[x.idx()] = true;
                    stack.push(x);
                }
            }
        }
        let mut seeds: Vec<SpeakerId> = stack.clone();
        if !stack.is_empty() {
            // Descendants in the best-path tree: speakers whose parent is withdrawn. Paths are
            // short, so a few passes over the speakers find them without building the tree.
            let mut grew = true;
            while grew {
                grew = false;
                for v in (0..n as u32).map(SpeakerId::new) {
                    if invalid[v.idx()] || self.is_origin[v.idx()] {
                        continue;
                    }
                    if let Some(b) = self.best[v.idx()] {
                        if b.parent != v && invalid[b.parent.idx()] {
                            invalid[v.idx()] = true;
                            seeds.push(v);
                            grew = true;
                        }
                    }
                }
            }
            for &x in &seeds {
                self.best[x.idx()] = None;
                self.mp.remove_range(g.adj_range(x));
            }
            let withdrawn = seeds.len();
            for i in 0..withdrawn {
                let x = seeds[i];
                seeds.extend(g.neighbors(x).iter().map(|&(_, u)| u));
            }
        }
        for &s in changed {
            let (a, b) = g.sessions[s.idx()];
            seeds.push(a);
            seeds.push(b);
        }
        self.settle(g, new, seeds.iter().copied(), &seeds, false)
    }
}
