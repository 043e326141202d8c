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
//! is built once per call. Links wait in an indexed binary heap keyed by the level at which
//! they would fill (`level0 + remaining / demand`, which does not move while the level
//! rises). When flows leave a link its fill level can only rise, so its key is a lower bound
//! and is refreshed lazily, only when the link reaches the top. All links that fill at the
//! same level are one round and their flows freeze together. A call costs
//! O(E + (L + R) log L) for E (flow, link) uses, L links and R lazy re-keys (at most one per
//! link per round it surfaces in); symmetric patterns (every NIC full at once) take a handful
//! of rounds.

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
        self.push_iter(uses.iter().copied())
    }

    /// Remove every flow, keeping the buffers.
    pub fn clear(&mut self) {
        self.off.clear();
        self.off.push(0);
        self.links.clear();
        self.shares.clear();
    }

    /// [`FlowSet::push`] from an iterator.
    ///
    /// # Panics
    ///
    /// Panics if a share is negative or not finite.
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
    on_link: Vec<u32>,
    cursor: Vec<u32>,
    demand0: Vec<f64>,
    resum: Vec<u32>,
    /// Per-link state, one cache line's worth together (updated at random per frozen flow).
    st: Vec<LinkState>,
    frozen: Vec<bool>,
    round: Vec<u32>,
    heap: IndexedHeap,
}

/// What progressive filling tracks per link.
#[derive(Clone, Copy, Debug, Default)]
struct LinkState {
    /// Capacity left at level `level0`.
    remaining: f64,
    /// Level at which `remaining` was last brought up to date.
    level0: f64,
    /// Sum of the shares of the unfrozen flows.
    demand: f64,
    /// Unfrozen flows.
    unfrozen: u32,
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
        // Fill the transpose with a cursor per link (a small array that stays in cache),
        // then the per-link state from the counts and a sequential pass for the demands.
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.loff[..nl]);
        self.on_link.clear();
        self.on_link.resize(flows.links.len(), 0);
        for f in 0..flows.len() {
            for &l in &flows.links[flows.off[f] as usize..flows.off[f + 1] as usize] {
                let c = &mut self.cursor[l as usize];
                self.on_link[*c as usize] = f as u32;
                *c += 1;
            }
        }
        self.demand0.clear();
        self.demand0.resize(nl, 0.0);
        for (&l, &s) in flows.links.iter().zip(&flows.shares) {
            self.demand0[l as usize] += s;
        }
        self.st.clear();
        self.st.extend((0..nl).map(|l| LinkState {
            remaining: capacity[l],
            level0: 0.0,
            // Sum of the shares of unfrozen flows on the link.
            demand: self.demand0[l],
            unfrozen: self.loff[l + 1] - self.loff[l],
        }));
        // Links by fill level in an indexed heap (a sorted array is a valid heap); a link
        // whose flows leave gets its new, higher level in place, so the heap never holds
        // more than one entry per link.
        self.heap.clear();
        for l in 0..nl {
            let st = &self.st[l];
            if st.unfrozen > 0 {
                let fill = st.remaining / st.demand;
                self.heap.items.push((key(fill), l as u32));
            }
        }
        self.heap.items.sort_unstable();
        self.heap.pos.clear();
        self.heap.pos.resize(nl, u32::MAX);
        for (i, &(_, l)) in self.heap.items.iter().enumerate() {
            self.heap.pos[l as usize] = i as u32;
        }
        rate.clear();
        rate.resize(flows.len(), f64::INFINITY);
        self.frozen.clear();
        self.frozen.resize(flows.len(), false);
        let mut level = 0.0f64;
        // The top's key may be stale: flows that left a link since it was keyed only raise
        // its fill level (fewer flows share what is left). Re-key it lazily, when it
        // surfaces, until the top is current.
        while let Some(top) = self.heap.items.first().map(|e| e.1) {
            let st = &self.st[top as usize];
            if st.unfrozen == 0 {
                self.heap.remove(top);
                continue;
            }
            let fill = key(st.level0 + st.remaining.max(0.0) / st.demand.max(f64::MIN_POSITIVE));
            if fill > self.heap.items[0].0 {
                self.heap.set(top, fill);
                continue;
            }
            let next = self.heap.items[0].0;
            // Levels only rise; rounding may put a refreshed key a hair below the current one.
            level = level.max(f64::from_bits(next));
            // One round: every link whose current key is this level is full now (a link that
            // shares flows with another filling at the same level still fills at it), so
            // their unfrozen flows freeze together.
            self.round.clear();
            while let Some(&(k, l)) = self.heap.items.first() {
                if k != next {
                    break;
                }
                let st = &self.st[l as usize];
                let fill =
                    key(st.level0 + st.remaining.max(0.0) / st.demand.max(f64::MIN_POSITIVE));
                if st.unfrozen > 0 && fill > k {
                    self.heap.set(l, fill);
                    continue;
                }
                self.heap.pop();
                self.round.push(l);
            }
            for ri in 0..self.round.len() {
                let li = self.round[ri] as usize;
                let (a, b) = (self.loff[li] as usize, self.loff[li + 1] as usize);
                for i in a..b {
                    let f = self.on_link[i] as usize;
                    if self.frozen[f] {
                        continue;
                    }
                    self.frozen[f] = true;
                    rate[f] = level;
                    for (k2, s) in flows.uses(f as u32) {
                        let st = &mut self.st[k2 as usize];
                        // Bring the link to the current level, then drop the flow's demand.
                        st.remaining -= st.demand * (level - st.level0);
                        st.level0 = level;
                        st.demand -= s;
                        st.unfrozen -= 1;
                        if st.unfrozen > 0 && st.demand < 1e-7 * s {
                            // Cancellation: what is left is tiny next to what left; sum the
                            // remaining shares afresh instead of trusting the difference.
                            self.resum.push(k2);
                        }
                    }
                }
            }
            while let Some(l) = self.resum.pop() {
                let l = l as usize;
                let mut d = 0.0;
                for &f in &self.on_link[self.loff[l] as usize..self.loff[l + 1] as usize] {
                    if !self.frozen[f as usize] {
                        d += flows
                            .uses(f)
                            .filter(|&(k, _)| k as usize == l)
                            .map(|(_, x)| x)
                            .sum::<f64>();
                    }
                }
                self.st[l].demand = d;
            }
        }
    }
}

/// A binary min-heap of links by (key, link id), with each link's position so that a key can
/// change in place.
#[derive(Default, Debug)]
struct IndexedHeap {
    items: Vec<(u64, u32)>,
    pos: Vec<u32>,
}

impl IndexedHeap {
    fn clear(&mut self) {
        self.items.clear();
    }

    fn place(&mut self, i: usize, e: (u64, u32)) {
        self.items[i] = e;
        self.pos[e.1 as usize] = i as u32;
    }

    fn up(&mut self, mut i: usize) {
        let e = self.items[i];
        while i > 0 {
            let p = (i - 1) / 2;
            if self.items[p] <= e {
                break;
            }
            let pe = self.items[p];
            self.place(i, pe);
            i = p;
        }
        self.place(i, e);
    }

    fn down(&mut self, mut i: usize) {
        let n = self.items.len();
        let e = self.items[i];
        loop {
            let c = 2 * i + 1;
            if c >= n {
                break;
            }
            let c = if c + 1 < n && self.items[c + 1] < self.items[c] {
                c + 1
            } else {
                c
            };
            if e <= self.items[c] {
                break;
            }
            let ce = self.items[c];
            self.place(i, ce);
            i = c;
        }
        self.place(i, e);
    }

    /// Remove and return the link with the smallest key.
    fn pop(&mut self) -> u32 {
        let top = self.items[0].1;
        self.remove(top);
        top
    }

    /// Remove `l` if present.
    fn remove(&mut self, l: u32) {
        let i = self.pos[l as usize];
        if i == u32::MAX {
            return;
        }
        self.pos[l as usize] = u32::MAX;
        let last = self.items.pop().expect("heap holds the link");
        let i = i as usize;
        if i < self.items.len() {
            self.place(i, last);
            self.up(i);
            let j = self.pos[last.1 as usize] as usize;
            self.down(j);
        }
    }

    /// Give `l` key `k`, inserting it if absent.
    fn set(&mut self, l: u32, k: u64) {
        let i = self.pos[l as usize];
        if i == u32::MAX {
            self.items.push((k, l));
            let n = self.items.len() - 1;
            self.pos[l as usize] = n as u32;
            self.up(n);
        } else {
            let i = i as usize;
            let old = self.items[i].0;
            self.items[i].0 = k;
            if k < old {
                self.up(i);
            } else {
                self.down(i);
            }
        }
    }
}
