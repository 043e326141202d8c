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
//! is built once per call. Each round costs one pass over the links with unfrozen flows;
//! there are at most as many rounds as distinct bottleneck levels.

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

/// A link counts as full when what is left is below this share of its capacity.
const FULL: f64 = 1e-12;

/// Max-min fair rate of every flow over links of `capacity` (any rate unit). A flow that
/// uses no link of finite capacity gets `f64::INFINITY`.
///
/// # Panics
///
/// Panics if a flow uses a link id outside `capacity`, or a capacity is negative or NaN.
pub fn max_min_rates(capacity: &[f64], flows: &FlowSet) -> Vec<f64> {
    let nl = capacity.len();
    assert!(
        capacity.iter().all(|&c| c >= 0.0),
        "capacities must be >= 0"
    );
    // Transpose: link -> (flow, share).
    let mut loff = vec![0u32; nl + 1];
    for &l in &flows.links {
        assert!((l as usize) < nl, "flow uses link {l}, but there are {nl}");
        loff[l as usize + 1] += 1;
    }
    for l in 0..nl {
        loff[l + 1] += loff[l];
    }
    let mut fill = loff.clone();
    let mut on_link = vec![(0u32, 0.0f64); flows.links.len()];
    for f in 0..flows.len() as u32 {
        for (l, s) in flows.uses(f) {
            on_link[fill[l as usize] as usize] = (f, s);
            fill[l as usize] += 1;
        }
    }
    let mut remaining = capacity.to_vec();
    // Sum of the shares of unfrozen flows on each link.
    let mut demand = vec![0.0f64; nl];
    for (&l, &s) in flows.links.iter().zip(&flows.shares) {
        demand[l as usize] += s;
    }
    let mut rate = vec![f64::INFINITY; flows.len()];
    let mut frozen = vec![false; flows.len()];
    let mut active: Vec<u32> = (0..nl as u32)
        .filter(|&l| demand[l as usize] > 0.0)
        .collect();
    let mut level = 0.0f64;
    while !active.is_empty() {
        // The next link to fill, at the lowest level (first in id order on ties).
        let (first, step) = active
            .iter()
            .map(|&l| (l, (remaining[l as usize] / demand[l as usize]).max(0.0)))
            .fold(
                (u32::MAX, f64::INFINITY),
                |a, b| if b.1 < a.1 { b } else { a },
            );
        level += step;
        // It is full by construction; others that reach the same level within rounding too.
        let mut full: Vec<u32> = vec![first];
        for &l in &active {
            let l = l as usize;
            remaining[l] -= step * demand[l];
            if l as u32 != first && remaining[l] <= FULL * capacity[l].max(f64::MIN_POSITIVE) {
                full.push(l as u32);
            }
        }
        for &l in &full {
            let (a, b) = (loff[l as usize] as usize, loff[l as usize + 1] as usize);
            for &(f, _) in &on_link[a..b] {
                if frozen[f as usize] {
                    continue;
                }
                frozen[f as usize] = true;
                rate[f as usize] = level;
                for (k, s) in flows.uses(f) {
                    demand[k as usize] -= s;
                }
            }
        }
        // Links with no unfrozen flow left drop out (a tiny residue counts as none).
        active.retain(|&l| {
            let (a, b) = (loff[l as usize] as usize, loff[l as usize + 1] as usize);
            on_link[a..b].iter().any(|&(f, _)| !frozen[f as usize])
        });
    }
    rate
}
