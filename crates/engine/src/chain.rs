//! Latency along the chains of dependencies of a pipelined collective.
//!
//! A collective's steps are not in lockstep: at step s, a rank goes on as soon as it has sent
//! its own step s - 1 and received the data of step s - 1 it depends on (NCCL's pipelined
//! rings and trees; ASTRA-sim's system layer models the same chains). With per-step cost c
//! (software latency + transmission time) the same at every rank of a step, the finish time
//! of the last rank is `sum of c over steps + the longest chain of path latencies`, where a
//! chain follows, step by step, either the same rank (it waited for itself) or a transfer
//! into it (it waited for that data, which paid the transfer's path latency). So a ring pays
//! a long hop only on the steps whose chunk crosses it: over n ranks with one hop of latency
//! L and the others l, 2(n - 1) steps give `(2(n - 1) - 2) l + 2 L`, not `2(n - 1) L`.
//!
//! [`Chain`] holds, per slot (a rank of one group on one channel), the longest chain ending
//! there, and applies a phase's transfers `steps` times:
//! - a phase whose transfers are a permutation (every slot sends once and receives once:
//!   ring, halving-doubling, pairwise exchange, hierarchical stages) is a union of cycles;
//!   after k steps a slot holds `max over j <= k` of the slot j hops back plus the latency of
//!   those j hops. On a cycle of m slots only the last m values of j can win, so a sliding
//!   window maximum over the unrolled cycle gives every slot in O(m), whatever k;
//! - any other phase (a tree's levels) is iterated step by step, O(transfers) per step.
//!
//! Exact when every transfer of a step takes the same transmission time; otherwise the engine
//! charges the slowest (a phase's fluid makespan) at every step, an upper bound.

use std::collections::VecDeque;

/// Longest chain of path latencies ending at each slot, seconds.
#[derive(Clone, Debug, Default)]
pub struct Chain {
    d: Vec<f64>,
    // Workspaces.
    succ: Vec<u32>,
    lat: Vec<f64>,
    indeg: Vec<u32>,
    seen: Vec<bool>,
    cycle: Vec<u32>,
    edge: Vec<f64>,
    newv: Vec<f64>,
    cand: Vec<(u32, f64)>,
    deque: VecDeque<(i64, f64)>,
}

/// One transfer as the chain sees it: from slot, to slot, path latency in seconds.
pub type Edge = (u32, u32, f64);

impl Chain {
    /// `slots` slots, every chain empty.
    pub fn new(slots: usize) -> Self {
        Chain {
            d: vec![0.0; slots],
            ..Chain::default()
        }
    }

    /// The longest chain ending at each slot.
    pub fn values(&self) -> &[f64] {
        &self.d
    }

    /// The longest chain of all, seconds (0 with no slots).
    pub fn longest(&self) -> f64 {
        self.d.iter().copied().fold(0.0, f64::max)
    }

    /// Apply `steps` steps of `edges`. Latencies must be finite and >= 0, slots in range.
    pub fn apply(&mut self, edges: &[Edge], steps: u32) {
        if steps == 0 || edges.is_empty() {
            return;
        }
        if steps > 2 && self.is_permutation(edges) {
            self.apply_cycles(edges, steps);
        } else {
            for _ in 0..steps {
                self.step(edges);
            }
        }
    }

    /// One step: each destination takes the best of itself and its senders (all reading the
    /// values before the step).
    fn step(&mut self, edges: &[Edge]) {
        self.cand.clear();
        self.cand
            .extend(edges.iter().map(|&(a, b, l)| (b, self.d[a as usize] + l)));
        for &(b, v) in &self.cand {
            let x = &mut self.d[b as usize];
            if v > *x {
                *x = v;
            }
        }
    }

    /// Whether every slot that appears sends exactly once and receives exactly once (fills
    /// `succ` and `lat`).
    fn is_permutation(&mut self, edges: &[Edge]) -> bool {
        let n = self.d.len();
        self.succ.clear();
        self.succ.resize(n, u32::MAX);
        self.lat.clear();
        self.lat.resize(n, 0.0);
        self.indeg.clear();
        self.indeg.resize(n, 0);
        for &(a, b, l) in edges {
            if self.succ[a as usize] != u32::MAX || a == b {
                return false;
            }
            self.succ[a as usize] = b;
            self.lat[a as usize] = l;
            self.indeg[b as usize] += 1;
        }
        edges
            .iter()
            .all(|&(a, b, _)| self.indeg[b as usize] == 1 && self.indeg[a as usize] == 1)
    }

    /// `steps` steps of a permutation, cycle by cycle, by a sliding window maximum.
    fn apply_cycles(&mut self, edges: &[Edge], steps: u32) {
        self.seen.clear();
        self.seen.resize(self.d.len(), false);
        let r = i64::from(steps);
        for &(start, _, _) in edges {
            if self.seen[start as usize] {
                continue;
            }
            // The cycle u_0 -> u_1 -> ... -> u_{m-1} -> u_0; edge j leaves u_j.
            self.cycle.clear();
            self.edge.clear();
            let mut u = start;
            while !self.seen[u as usize] {
                self.seen[u as usize] = true;
                self.cycle.push(u);
                self.edge.push(self.lat[u as usize]);
                u = self.succ[u as usize];
            }
            let m = self.cycle.len() as i64;
            // prefix[j] = latency of edges 0..j; the cycle's total is prefix[m].
            let mut prefix = Vec::with_capacity(self.edge.len() + 1);
            prefix.push(0.0);
            for &e in &self.edge {
                prefix.push(prefix.last().copied().unwrap_or(0.0) + e);
            }
            let total = prefix[m as usize];
            // Unrolled position s: slot u_{s mod m}, P(s) = latency of the edges from
            // position 0 to s (negative for s < 0).
            let p = |s: i64| s.div_euclid(m) as f64 * total + prefix[s.rem_euclid(m) as usize];
            // D'(u_i) = P(i) + max over s in [i - r, i - kmin] of D(u_{s mod m}) - P(s), where
            // kmin = max(0, r - m + 1): going back more than m - 1 hops past that only
            // revisits a slot with less latency behind it.
            let kmin = (r - m + 1).max(0);
            let d = &self.d;
            let cycle = &self.cycle;
            let f = |s: i64| d[cycle[s.rem_euclid(m) as usize] as usize] - p(s);
            self.deque.clear();
            self.newv.clear();
            let mut next_s = -r;
            for i in 0..m {
                let hi = i - kmin;
                while next_s <= hi {
                    let v = f(next_s);
                    while self.deque.back().is_some_and(|&(_, w)| w <= v) {
                        self.deque.pop_back();
                    }
                    self.deque.push_back((next_s, v));
                    next_s += 1;
                }
                while self.deque.front().is_some_and(|&(s, _)| s < i - r) {
                    self.deque.pop_front();
                }
                let best = self.deque.front().map_or(f64::NEG_INFINITY, |x| x.1);
                self.newv.push(p(i) + best);
            }
            for (k, &u) in self.cycle.iter().enumerate() {
                self.d[u as usize] = self.newv[k];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_long_hop_ring_pays_it_twice() {
        // The closed form: n ranks, one hop of latency L, the others l, 2(n - 1) steps.
        for n in [3u32, 4, 8, 100] {
            let (big, small) = (300e-6, 2e-6);
            let edges: Vec<Edge> = (0..n)
                .map(|i| (i, (i + 1) % n, if i == 0 { big } else { small }))
                .collect();
            let mut c = Chain::new(n as usize);
            c.apply(&edges, 2 * (n - 1));
            let want = f64::from(2 * (n - 1) - 2) * small + 2.0 * big;
            assert!(
                (c.longest() - want).abs() < 1e-12,
                "n {n}: {} vs {want}",
                c.longest()
            );
        }
    }

    /// The same steps one by one over every slot: the definition the fast path must equal.
    fn brute(d0: &[f64], edges: &[Edge], steps: u32) -> Vec<f64> {
        let mut d = d0.to_vec();
        for _ in 0..steps {
            let mut next = d.clone();
            for &(a, b, l) in edges {
                next[b as usize] = next[b as usize].max(d[a as usize] + l);
            }
            d = next;
        }
        d
    }

    proptest::proptest! {
        #[test]
        fn cycles_equal_step_by_step(
            n in 2usize..40,
            seed in 0u64..1000,
            steps in 0u32..120,
            lat in proptest::collection::vec(0.0f64..1e-3, 40),
            d0 in proptest::collection::vec(0.0f64..1e-2, 40),
        ) {
            // A random permutation without fixed points (Sattolo's algorithm: one cycle)
            // or, for odd seeds, several cycles from a shuffled pairing of rings.
            let mut perm: Vec<u32> = (0..n as u32).collect();
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut rnd = |k: usize| {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                (x % k as u64) as usize
            };
            if seed % 2 == 0 {
                for i in (1..n).rev() {
                    let j = rnd(i);
                    perm.swap(i, j);
                }
            } else {
                // Two rings: even and odd slots (n >= 4), or one ring.
                perm = (0..n as u32).map(|i| if n >= 4 { (i + 2) % n as u32 } else { (i + 1) % n as u32 }).collect();
            }
            let edges: Vec<Edge> = (0..n).map(|i| (i as u32, perm[i], lat[i])).collect();
            let mut c = Chain::new(n);
            c.d.copy_from_slice(&d0[..n]);
            c.apply(&edges, steps);
            let want = brute(&d0[..n], &edges, steps);
            for (a, b) in c.values().iter().zip(&want) {
                proptest::prop_assert!((a - b).abs() < 1e-12, "{} vs {}", a, b);
            }
        }
    }
}
