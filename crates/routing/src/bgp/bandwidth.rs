//! Link-bandwidth values after the fixpoint: each speaker re-advertises the sum of what its
//! multipaths sent, computed in path-length order (a bucket queue by path length), moved by
//! the exact integer difference where only a multipath's value changed.

use super::compute::{BandwidthMode, Best, RoutesTo, SessionState};
use super::graph::{BgpGraph, SpeakerId};

impl RoutesTo {
    /// Refresh the link-bandwidth values after the fixpoint: from scratch when `full`, else
    /// from the speakers it `evaluated` and `bandwidth_seeds` (see [`RoutesTo::update`]).
    pub(super) fn propagate_bandwidth(
        &mut self,
        g: &BgpGraph,
        states: &[SessionState],
        evaluated: &[SpeakerId],
        bandwidth_seeds: &[SpeakerId],
        full: bool,
    ) {
        if self.cfg.bandwidth == BandwidthMode::None {
            return;
        }
        let n = g.speakers.len();
        // Link bandwidth: a speaker's value is the sum of what its multipaths sent; they are
        // one hop closer to the origin, so shorter paths go first. A change moves up to every
        // neighbor that uses the changed speaker as a multipath.
        if full {
            // From scratch: one pass in path-length order sees every value before it is summed.
            let mut order: Vec<SpeakerId> = (0..n as u32)
                .map(SpeakerId::new)
                .filter(|&v| self.best[v.idx()].is_some() && !self.is_origin[v.idx()])
                .collect();
            order.sort_by_key(|&v| (self.best[v.idx()].map(|b| b.len), v));
            for v in order {
                self.advertised[v.idx()] = self.sum_received(g, states, v);
            }
            return;
        }
        // A bucket queue by path length: a value depends only on multipaths one hop (or a
        // prepend more) closer to the origin, so lengths in increasing order, in any order
        // within a length, see every value before it is summed (as a heap on (length, id)
        // would, without its log factor). Each entry carries the speaker's value before
        // this pass.
        //
        // Speakers evaluated by the fixpoint (their multipaths may have changed) are summed
        // afresh; the others only hear new values from multipaths they keep, so their sum
        // moves by exactly the difference (integers, no rounding): O(1) per change instead
        // of a walk over every multipath, which is what a link-bandwidth cascade through a
        // fabric of a thousand speakers costs. Where a difference could saturate (values
        // near u64::MAX, or a missing community), the speaker is summed afresh too.
        type Queued = (SpeakerId, Option<u64>);
        let mut buckets: Vec<Vec<Queued>> = Vec::new();
        let mut queued = vec![false; n];
        let mut afresh = vec![false; n];
        let len_of =
            |best: &[Option<Best>], v: SpeakerId| best[v.idx()].map_or(u32::MAX, |b| b.len);
        let mut unreachable: Vec<Queued> = Vec::new();
        let push =
            |buckets: &mut Vec<Vec<Queued>>, unreachable: &mut Vec<Queued>, len: u32, q: Queued| {
                if len == u32::MAX {
                    unreachable.push(q);
                    return;
                }
                let len = len as usize;
                if buckets.len() <= len {
                    buckets.resize_with(len + 1, Vec::new);
                }
                buckets[len].push(q);
            };
        for &v in evaluated.iter().chain(bandwidth_seeds) {
            if !self.is_origin[v.idx()] && !queued[v.idx()] {
                queued[v.idx()] = true;
                afresh[v.idx()] = true;
                let q = (v, self.advertised[v.idx()]);
                push(&mut buckets, &mut unreachable, len_of(&self.best, v), q);
            }
        }
        // Speakers without a route advertise nothing and have no multipaths: nobody sums
        // what they send, so they are settled first, in any order.
        let mut len = 0;
        loop {
            let (v, old) = if let Some(q) = unreachable.pop() {
                q
            } else {
                while len < buckets.len() && buckets[len].is_empty() {
                    len += 1;
                }
                match buckets.get_mut(len).and_then(Vec::pop) {
                    Some(q) => q,
                    None => break,
                }
            };
            queued[v.idx()] = false;
            let new = if !std::mem::replace(&mut afresh[v.idx()], false) {
                // Every difference is already in.
                self.advertised[v.idx()]
            } else if self.best[v.idx()].is_none() {
                None
            } else {
                self.sum_received(g, states, v)
            };
            self.advertised[v.idx()] = new;
            if new == old {
                continue;
            }
            // Every neighbor that uses v as a multipath hears a new value: its sum moves (or
            // is redone) before it comes out of its bucket, which is later than v's (its
            // path is longer).
            for (&(session, u), vpos) in g.neighbors(v).iter().zip(g.adj_range(v)) {
                if self.is_origin[u.idx()] || !self.mp.contains(g.reverse(vpos)) {
                    continue;
                }
                if !queued[u.idx()] {
                    queued[u.idx()] = true;
                    let q = (u, self.advertised[u.idx()]);
                    push(&mut buckets, &mut unreachable, len_of(&self.best, u), q);
                }
                if afresh[u.idx()] {
                    continue;
                }
                let links = u64::from(states[session.idx()].links);
                let moved = match (old, new, self.advertised[u.idx()]) {
                    (Some(a), Some(b), Some(sum)) if sum < u64::MAX => a
                        .checked_mul(links)
                        .zip(b.checked_mul(links))
                        .and_then(|(a, b)| sum.checked_sub(a)?.checked_add(b))
                        .filter(|&x| x < u64::MAX),
                    _ => None,
                };
                match moved {
                    Some(x) => self.advertised[u.idx()] = Some(x),
                    None => afresh[u.idx()] = true,
                }
            }
        }
    }

    /// The link-bandwidth value `v` re-advertises: the sum of what its multipaths sent.
    fn sum_received(&self, g: &BgpGraph, states: &[SessionState], v: SpeakerId) -> Option<u64> {
        let mut sum: Option<u64> = None;
        self.for_each_multipath(g, v, |_, s, u| {
            if let Some(x) = self.received(states, s, u) {
                sum = Some(sum.unwrap_or(0).saturating_add(x));
            }
        });
        sum
    }
}
