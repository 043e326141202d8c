//! Max-min fair rates by progressive filling (Bertsekas and Gallager, "Data Networks", 2nd
//! ed., section 6.5.2), generalized to flows that use links in fixed shares.
//!
//! Flow `f` sends at rate `r_f` and puts `share(f, l) x r_f` on each link `l` it uses (a
//! single-path flow has share 1 on each hop; a flow split over paths by weights has the sum of
//! the weights of its paths through `l`). All unfrozen flows rise together; when a link fills,
//! every unfrozen flow on it freezes at the current level. The result is the max-min fair
//! allocation: no link exceeds its capacity, and every flow crosses a full link on which no
//! other flow has a higher rate (its bottleneck).
//!
//! Flows and their links are stored flat (CSR) in a [`FlowSet`]; the link -> flows transpose
//! is built once per call. Links wait in a binary heap keyed by the level at which they would
//! fill (`level0 + remaining / demand`, which does not move while the level rises); freezing
//! a flow re-keys only the links it uses. A call costs O(E log E) for E (flow, link) uses,
//! so 1M flows of a few hops each take well under a second, whatever the number of distinct
//! bottleneck levels.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Flows as lists of (link, share), stored flat: flow `f` owns
/// `links[off[f]..off[f + 1]]` and the same range of `shares`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSet {
    off: Vec<u32>,
    links: Vec<u32>,
    shares: Vec<f64>,
}

impl FlowSet {
    /// No flows.
    pub fn new() -> Self {
        FlowSet {
            off: vec![0],
            links: Vec::new(),
            shares: Vec::new(),
        }
    }

    /// Add a flow using `uses` (link, share of the flow's rate on it); returns its id. Shares
    /// of 0 are dropped; a link listed twice counts with the sum of its shares.
    ///
    /// # Panics
    ///
    /// Panics if a share is negative or not finite.
    pub fn push(&mut self, uses: &[(u32, f64)]) -> u32 {
        if self.off.is_empty() {
            self.off.push(0);
        }
        for &(l, s) in uses {
            assert!(
                s.is_finite() && s >= 0.0,
                "share {s} of link {l} is not >= 0"
            );
            if s > 0.0 {
                self.links.push(l);
                self.shares.push(s);
            }
        }
        self.off.push(self.links.len() as u32);
        (self.off.len() - 2) as u32
    }

    /// Remove every flow, keeping the buffers.
    pub fn clear(&mut self) {
        self.off.clear();
        self.off.push(0);
        self.links.clear();
        self.shares.clear();
    }

    /// [`FlowSet::push`] from an iterator.
    pub fn push_iter(&mut self, uses: impl Iterator<Item = (u32, f64)>) -> u32 {
        if self.off.is_empty() {
            self.off.push(0);
        }
        for (l, s) in uses {
            assert!(
                s.is_finite() && s >= 0.0,
                "share {s} of link {l} is not >= 0"
            );
            if s > 0.0 {
                self.links.push(l);
                self.shares.push(s);
            }
        }
        self.off.push(self.links.len() as u32);
        (self.off.len() - 2) as u32
    }

    /// Number of flows.
    pub fn len(&self) -> usize {
        self.off.len().saturating_sub(1)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The (link, share) pairs of flow `f`.
    pub fn uses(&self, f: u32) -> impl Iterator<Item = (u32, f64)> + '_ {
        let (a, b) = (
            self.off[f as usize] as usize,
            self.off[f as usize + 1] as usize,
        );
        self.links[a..b]
            .iter()
            .copied()
            .zip(self.shares[a..b].iter().copied())
    }
}

/// Max-min fair rate of every flow over links of `capacity` (any rate unit). A flow that
/// uses no link of finite capacity gets `f64::INFINITY`.
///
/// # Panics
///
/// Panics if a flow uses a link id outside `capacity`, or a capacity is negative or NaN.
pub fn max_min_rates(capacity: &[f64], flows: &FlowSet) -> Vec<f64> {
    let mut rate = Vec::new();
    MaxMin::default().solve(capacity, flows, &mut rate);
    rate
}

/// Reusable buffers for [`max_min_rates`]: an event-driven simulation solves one instance per
/// event and keeps one `MaxMin` for all of them.
#[derive(Default, Debug)]
pub struct MaxMin {
    loff: Vec<u32>,
    on_link: Vec<(u32, f64)>,
    demand: Vec<f64>,
    unfrozen: Vec<u32>,
    remaining: Vec<f64>,
    level0: Vec<f64>,
    stamp: Vec<u32>,
    frozen: Vec<bool>,
    heap: BinaryHeap<Reverse<(u64, u32, u32)>>,
}

/// Heap key of a fill level: non-negative finite floats order like their bit patterns.
fn key(x: f64) -> u64 {
    x.max(0.0).to_bits()
}

impl MaxMin {
    /// Solve into `rate` (resized to `flows.len()`); same result as [`max_min_rates`].
    ///
    /// # Panics
    ///
    /// As [`max_min_rates`].
    pub fn solve(&mut self, capacity: &[f64], flows: &FlowSet, rate: &mut Vec<f64>) {
        let nl = capacity.len();
        assert!(
            capacity.iter().all(|&c| c >= 0.0),
            "capacities must be >= 0"
        );
        // Transpose: link -> (flow, share).
        self.loff.clear();
        self.loff.resize(nl + 1, 0);
        for &l in &flows.links {
            assert!((l as usize) < nl, "flow uses link {l}, but there are {nl}");
            self.loff[l as usize + 1] += 1;
        }
        for l in 0..nl {
            self.loff[l + 1] += self.loff[l];
        }
        self.unfrozen.clear();
        self.unfrozen.resize(nl, 0);
        self.on_link.clear();
        self.on_link.resize(flows.links.len(), (0, 0.0));
        for f in 0..flows.len() as u32 {
            for (l, s) in flows.uses(f) {
                let slot = self.loff[l as usize] + self.unfrozen[l as usize];
                self.on_link[slot as usize] = (f, s);
                self.unfrozen[l as usize] += 1;
            }
        }
        // Sum of the shares of unfrozen flows on each link.
        self.demand.clear();
        self.demand.resize(nl, 0.0);
        for (&l, &s) in flows.links.iter().zip(&flows.shares) {
            self.demand[l as usize] += s;
        }
        self.remaining.clear();
        self.remaining.extend_from_slice(capacity);
        self.level0.clear();
        self.level0.resize(nl, 0.0);
        self.stamp.clear();
        self.stamp.resize(nl, 0);
        self.heap.clear();
        for l in 0..nl {
            if self.unfrozen[l] > 0 {
                let fill = self.remaining[l] / self.demand[l];
                self.heap.push(Reverse((key(fill), l as u32, 0)));
            }
        }
        rate.clear();
        rate.resize(flows.len(), f64::INFINITY);
        self.frozen.clear();
        self.frozen.resize(flows.len(), false);
        let mut level = 0.0f64;
        while let Some(Reverse((k, l, st))) = self.heap.pop() {
            let li = l as usize;
            if st != self.stamp[li] || self.unfrozen[li] == 0 {
                continue;
            }
            // Levels only rise; rounding may put a refreshed key a hair below the current one.
            level = level.max(f64::from_bits(k));
            let (a, b) = (self.loff[li] as usize, self.loff[li + 1] as usize);
            for i in a..b {
                let f = self.on_link[i].0 as usize;
                if self.frozen[f] {
                    continue;
                }
                self.frozen[f] = true;
                rate[f] = level;
                for (k2, s) in flows.uses(f as u32) {
                    let k2 = k2 as usize;
                    // Bring the link to the current level, then drop the flow's demand.
                    self.remaining[k2] -= self.demand[k2] * (level - self.level0[k2]);
                    self.level0[k2] = level;
                    self.demand[k2] -= s;
                    self.unfrozen[k2] -= 1;
                    self.stamp[k2] = self.stamp[k2].wrapping_add(1);
                    if self.unfrozen[k2] > 0 && k2 != li {
                        let d = self.demand[k2].max(f64::MIN_POSITIVE);
                        let fill = level + self.remaining[k2].max(0.0) / d;
                        self.heap
                            .push(Reverse((key(fill), k2 as u32, self.stamp[k2])));
                    }
                }
            }
        }
    }
}
