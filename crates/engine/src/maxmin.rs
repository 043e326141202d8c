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
///
/// A flow may also use shared **splits**: lists of (link, share) stored once for every flow
/// that spreads over part of the fabric the same way (a sprayed flow's hops, shared by every
/// flow whose spreading reaches that hop alike). Each split's shares count for each flow
/// that uses it, so memory stays linear in flows plus splits, whatever the number of links
/// a split spreads over. A flow uses a split at most once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSet {
    off: Vec<u32>,
    links: Vec<u32>,
    shares: Vec<f64>,
    /// Per flow: the splits it uses, `srefs[sref_off[f]..sref_off[f + 1]]`.
    sref_off: Vec<u32>,
    srefs: Vec<u32>,
    soff: Vec<u32>,
    slinks: Vec<u32>,
    sshares: Vec<f64>,
}

fn checked(uses: impl Iterator<Item = (u32, f64)>) -> impl Iterator<Item = (u32, f64)> {
    uses.filter(|&(l, s)| {
        assert!(
            s.is_finite() && s >= 0.0,
            "share {s} of link {l} is not >= 0"
        );
        s > 0.0
    })
}

impl FlowSet {
    /// No flows.
    pub fn new() -> Self {
        FlowSet {
            off: vec![0],
            sref_off: vec![0],
            soff: vec![0],
            ..FlowSet::default()
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

    /// Remove every flow and split, keeping the buffers.
    pub fn clear(&mut self) {
        self.clear_flows();
        self.soff.clear();
        self.soff.push(0);
        self.slinks.clear();
        self.sshares.clear();
    }

    /// Remove every flow but keep the splits (their ids stay valid).
    pub fn clear_flows(&mut self) {
        self.off.clear();
        self.off.push(0);
        self.links.clear();
        self.shares.clear();
        self.sref_off.clear();
        self.sref_off.push(0);
        self.srefs.clear();
    }

    /// [`FlowSet::push`] from an iterator.
    ///
    /// # Panics
    ///
    /// Panics if a share is negative or not finite.
    pub fn push_iter(&mut self, uses: impl Iterator<Item = (u32, f64)>) -> u32 {
        self.push_split_flow(uses, &[])
    }

    /// Add a shared split: (link, share) pairs that every flow using it puts on the links;
    /// returns its id.
    ///
    /// # Panics
    ///
    /// Panics if a share is negative or not finite.
    pub fn add_split(&mut self, uses: impl Iterator<Item = (u32, f64)>) -> u32 {
        if self.soff.is_empty() {
            self.soff.push(0);
        }
        for (l, s) in checked(uses) {
            self.slinks.push(l);
            self.sshares.push(s);
        }
        self.soff.push(self.slinks.len() as u32);
        (self.soff.len() - 2) as u32
    }

    /// Add a flow using `uses` directly and the shared splits `splits` too.
    ///
    /// # Panics
    ///
    /// Panics if a share is negative or not finite, a split does not exist or is listed
    /// twice.
    pub fn push_split_flow(
        &mut self,
        uses: impl Iterator<Item = (u32, f64)>,
        splits: &[u32],
    ) -> u32 {
        if self.off.is_empty() {
            self.off.push(0);
        }
        if self.sref_off.is_empty() {
            self.sref_off.push(0);
        }
        for (l, s) in checked(uses) {
            self.links.push(l);
            self.shares.push(s);
        }
        self.off.push(self.links.len() as u32);
        for (i, &sp) in splits.iter().enumerate() {
            assert!((sp as usize) < self.splits(), "split {sp} does not exist");
            assert!(!splits[..i].contains(&sp), "split {sp} listed twice");
        }
        self.srefs.extend_from_slice(splits);
        self.sref_off.push(self.srefs.len() as u32);
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

    /// Number of splits.
    pub fn splits(&self) -> usize {
        self.soff.len().saturating_sub(1)
    }

    /// (link, share) entries held by all splits.
    pub fn split_entries(&self) -> usize {
        self.slinks.len()
    }

    /// The splits flow `f` uses.
    pub fn splits_of(&self, f: u32) -> &[u32] {
        let f = f as usize;
        &self.srefs[self.sref_off[f] as usize..self.sref_off[f + 1] as usize]
    }

    /// The (link, share) pairs of split `s`.
    pub fn split_uses(&self, s: u32) -> impl Iterator<Item = (u32, f64)> + '_ {
        let (a, b) = (
            self.soff[s as usize] as usize,
            self.soff[s as usize + 1] as usize,
        );
        self.slinks[a..b]
            .iter()
            .copied()
            .zip(self.sshares[a..b].iter().copied())
    }

    /// The (link, share) pairs flow `f` uses directly (not through its split).
    pub fn direct_uses(&self, f: u32) -> impl Iterator<Item = (u32, f64)> + '_ {
        let (a, b) = (
            self.off[f as usize] as usize,
            self.off[f as usize + 1] as usize,
        );
        self.links[a..b]
            .iter()
            .copied()
            .zip(self.shares[a..b].iter().copied())
    }

    /// All the (link, share) pairs of flow `f`: direct, then its splits'.
    pub fn uses(&self, f: u32) -> impl Iterator<Item = (u32, f64)> + '_ {
        self.direct_uses(f).chain(
            self.splits_of(f)
                .iter()
                .flat_map(move |&s| self.split_uses(s)),
        )
    }

    /// Copy flow `f` of `other`, whose splits this set shares (same ids), into this set.
    pub fn push_from(&mut self, other: &FlowSet, f: u32) -> u32 {
        self.push_split_flow(other.direct_uses(f), other.splits_of(f))
    }

    /// Per resource (ids `0..nres`), the sum over flows of share x `x[f]`: each split's
    /// resources taken once for all its flows (with `x` the bytes, what every resource
    /// carries; with rates, its load). `split_sums` is scratch.
    pub fn resource_sums(
        &self,
        x: &[f64],
        nres: usize,
        split_sums: &mut Vec<f64>,
        out: &mut Vec<f64>,
    ) {
        out.clear();
        out.resize(nres, 0.0);
        split_sums.clear();
        split_sums.resize(self.splits(), 0.0);
        for (f, &v) in x.iter().enumerate() {
            for (l, s) in self.direct_uses(f as u32) {
                out[l as usize] += s * v;
            }
            for &sp in self.splits_of(f as u32) {
                split_sums[sp as usize] += v;
            }
        }
        for (sp, &v) in split_sums.iter().enumerate() {
            for (l, s) in self.split_uses(sp as u32) {
                out[l as usize] += s * v;
            }
        }
    }

    /// Make this set's splits those of `other` (flows are kept; use on an empty set).
    pub fn copy_splits_from(&mut self, other: &FlowSet) {
        self.soff.clone_from(&other.soff);
        self.slinks.clone_from(&other.slinks);
        self.sshares.clone_from(&other.sshares);
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
    /// Splits: their flows (CSR), the entries of splits on each link (CSR over entry
    /// indices), unfrozen flows per split, flows frozen this round, splits touched.
    sfoff: Vec<u32>,
    sflows: Vec<u32>,
    lsoff: Vec<u32>,
    lsent: Vec<u32>,
    ssplit: Vec<u32>,
    sunf: Vec<u32>,
    sfroze: Vec<u32>,
    sdone: Vec<bool>,
    touched: Vec<u32>,
    /// Flows per link from splits (scratch of `transpose`, kept: a fluid solves per event).
    count: Vec<u32>,
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

impl LinkState {
    /// Bring the link to `level`, then take `share` of demand and `count` flows off it.
    fn leave(&mut self, level: f64, share: f64, count: u32) {
        self.remaining -= self.demand * (level - self.level0);
        self.level0 = level;
        self.demand -= share;
        self.unfrozen -= count;
    }
}

/// Order key of a non-negative float (a fill level, a rate, a time): non-negative finite
/// floats order like their bit patterns.
pub(crate) fn key(x: f64) -> u64 {
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
        for &l in flows.links.iter().chain(&flows.slinks) {
            assert!((l as usize) < nl, "flow uses link {l}, but there are {nl}");
        }
        self.transpose(nl, flows);
        self.st.clear();
        self.st.extend((0..nl).map(|l| LinkState {
            remaining: capacity[l],
            level0: 0.0,
            // Sum of the shares of unfrozen flows on the link.
            demand: self.demand0[l],
            unfrozen: self.cursor[l],
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
                for i in self.loff[li] as usize..self.loff[li + 1] as usize {
                    let f = self.on_link[i];
                    self.freeze(flows, f, level, rate);
                }
                for i in self.lsoff[li] as usize..self.lsoff[li + 1] as usize {
                    let sp = self.ssplit[self.lsent[i] as usize] as usize;
                    if self.sdone[sp] {
                        continue;
                    }
                    self.sdone[sp] = true;
                    for j in self.sfoff[sp] as usize..self.sfoff[sp + 1] as usize {
                        let f = self.sflows[j];
                        self.freeze(flows, f, level, rate);
                    }
                }
            }
            // Splits leave their links once per round, with every flow that froze.
            while let Some(sp) = self.touched.pop() {
                let k = std::mem::take(&mut self.sfroze[sp as usize]);
                self.sunf[sp as usize] -= k;
                for (l, s) in flows.split_uses(sp) {
                    let share = s * f64::from(k);
                    let st = &mut self.st[l as usize];
                    st.leave(level, share, k);
                    if st.unfrozen > 0 && st.demand < 1e-7 * share {
                        self.resum.push(l);
                    }
                }
            }
            while let Some(l) = self.resum.pop() {
                let l = l as usize;
                let mut d = 0.0;
                for &f in &self.on_link[self.loff[l] as usize..self.loff[l + 1] as usize] {
                    if !self.frozen[f as usize] {
                        d += flows
                            .direct_uses(f)
                            .filter(|&(k, _)| k as usize == l)
                            .map(|(_, x)| x)
                            .sum::<f64>();
                    }
                }
                for &e in &self.lsent[self.lsoff[l] as usize..self.lsoff[l + 1] as usize] {
                    d += flows.sshares[e as usize]
                        * f64::from(self.sunf[self.ssplit[e as usize] as usize]);
                }
                self.st[l].demand = d;
            }
        }
    }

    /// Freeze flow `f` at `level`: its direct links now; its splits' links at the end of
    /// the round.
    fn freeze(&mut self, flows: &FlowSet, f: u32, level: f64, rate: &mut [f64]) {
        let fi = f as usize;
        if self.frozen[fi] {
            return;
        }
        self.frozen[fi] = true;
        rate[fi] = level;
        for (k2, s) in flows.direct_uses(f) {
            let st = &mut self.st[k2 as usize];
            st.leave(level, s, 1);
            if st.unfrozen > 0 && st.demand < 1e-7 * s {
                // Cancellation: what is left is tiny next to what left; sum the remaining
                // shares afresh instead of trusting the difference.
                self.resum.push(k2);
            }
        }
        for &sp in flows.splits_of(f) {
            let c = &mut self.sfroze[sp as usize];
            if *c == 0 {
                self.touched.push(sp);
            }
            *c += 1;
        }
    }

    /// Build the transposes (link -> direct flows, split -> flows, link -> split entries),
    /// the initial demand of each link, and its flow count (left in `cursor`).
    fn transpose(&mut self, nl: usize, flows: &FlowSet) {
        let ns = flows.splits();
        // Split -> flows.
        self.sfoff.clear();
        self.sfoff.resize(ns + 1, 0);
        for &sp in &flows.srefs {
            self.sfoff[sp as usize + 1] += 1;
        }
        for i in 0..ns {
            self.sfoff[i + 1] += self.sfoff[i];
        }
        self.sunf.clear();
        self.sunf
            .extend((0..ns).map(|i| self.sfoff[i + 1] - self.sfoff[i]));
        self.sflows.clear();
        self.sflows.resize(self.sfoff[ns] as usize, 0);
        self.sfroze.clear();
        self.sfroze.extend_from_slice(&self.sfoff[..ns]);
        for f in 0..flows.len() as u32 {
            for &sp in flows.splits_of(f) {
                let c = &mut self.sfroze[sp as usize];
                self.sflows[*c as usize] = f;
                *c += 1;
            }
        }
        self.sfroze.clear();
        self.sfroze.resize(ns, 0);
        self.sdone.clear();
        self.sdone.resize(ns, false);
        // The split of each split entry, and link -> split entries (only splits in use).
        self.ssplit.clear();
        self.ssplit.resize(flows.slinks.len(), 0);
        for sp in 0..ns {
            for e in flows.soff[sp]..flows.soff[sp + 1] {
                self.ssplit[e as usize] = sp as u32;
            }
        }
        self.lsoff.clear();
        self.lsoff.resize(nl + 1, 0);
        for (e, &l) in flows.slinks.iter().enumerate() {
            if self.sunf[self.ssplit[e] as usize] > 0 {
                self.lsoff[l as usize + 1] += 1;
            }
        }
        for l in 0..nl {
            self.lsoff[l + 1] += self.lsoff[l];
        }
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.lsoff[..nl]);
        self.lsent.clear();
        self.lsent.resize(self.lsoff[nl] as usize, 0);
        self.demand0.clear();
        self.demand0.resize(nl, 0.0);
        // Flow counts per link, from splits (weighted by their flows) and direct uses.
        let mut count = std::mem::take(&mut self.count);
        count.clear();
        count.resize(nl, 0);
        for (e, (&l, &s)) in flows.slinks.iter().zip(&flows.sshares).enumerate() {
            let k = self.sunf[self.ssplit[e] as usize];
            if k > 0 {
                let c = &mut self.cursor[l as usize];
                self.lsent[*c as usize] = e as u32;
                *c += 1;
                self.demand0[l as usize] += s * f64::from(k);
                count[l as usize] += k;
            }
        }
        // Link -> direct flows.
        self.loff.clear();
        self.loff.resize(nl + 1, 0);
        for &l in &flows.links {
            self.loff[l as usize + 1] += 1;
        }
        for l in 0..nl {
            self.loff[l + 1] += self.loff[l];
        }
        // Fill the transpose with a cursor per link (a small array that stays in cache).
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
        for (&l, &s) in flows.links.iter().zip(&flows.shares) {
            self.demand0[l as usize] += s;
        }
        // Leave each link's flow count in `cursor`.
        for (l, &k) in count.iter().enumerate() {
            self.cursor[l] = self.loff[l + 1] - self.loff[l] + k;
        }
        self.count = count;
    }
}

/// A binary min-heap of ids (links here, flows in [`crate::fluid`]) by (key, id), with each
/// id's position so that a key can change in place: one entry per id, never a stale one.
#[derive(Default, Debug)]
pub(crate) struct IndexedHeap {
    items: Vec<(u64, u32)>,
    pos: Vec<u32>,
}

impl IndexedHeap {
    fn clear(&mut self) {
        self.items.clear();
    }

    /// Empty, for ids `0..n`.
    pub(crate) fn reset(&mut self, n: usize) {
        self.items.clear();
        self.pos.clear();
        self.pos.resize(n, u32::MAX);
    }

    /// The smallest (key, id), if any.
    pub(crate) fn peek(&self) -> Option<(u64, u32)> {
        self.items.first().copied()
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
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

    /// Remove and return the id with the smallest key.
    pub(crate) fn pop(&mut self) -> u32 {
        let top = self.items[0].1;
        self.remove(top);
        top
    }

    /// Remove `l` if present.
    pub(crate) fn remove(&mut self, l: u32) {
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
    pub(crate) fn set(&mut self, l: u32, k: u64) {
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
