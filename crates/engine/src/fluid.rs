//! The event-driven fluid: flows start, drain at max-min fair rates, finish; rates are
//! recomputed at every event, but only for the flows an event can change.
//!
//! Why a partial re-solve is exact. Progressive filling raises every unfrozen flow together
//! and freezes a flow when one of its links fills. When flows leave, let `x` be the lowest
//! rate among them. A link that filled below `x` carried none of them (each would have
//! frozen there, below its rate), so every fill below `x` happens as before, and every flow
//! with a rate below `x` keeps it. Only the flows at `x` or above are re-solved, on what the
//! others leave of each link. More generally (arrivals too), a re-solve of the flows at `x`
//! or above on the capacity the others leave is the max-min allocation if every rate it gives
//! is at least `x`: each re-solved flow then has a full link on which no flow is faster (its
//! bottleneck in the re-solve), and no re-solved flow touches a link that a slower flow
//! fills (it would be held below `x` there), so every flow keeps a bottleneck. When the check
//! fails the re-solve widens to every flow.
//!
//! Flows wait in a heap keyed by their finish time at the current rates, one entry per flow
//! moved in place when its rate changes (an entry per rate change instead would hold one per
//! (flow, re-solve) pair: quadratic memory when flows start one after another); an event pops
//! the flows that finish within a relative 1e-9 of the earliest (rounding noise), so flows
//! that finish together are one event.
//!
//! **Coalescing** (a tolerance `eps` > 0, [`Fluid::set_tolerance`]): an event may leave the
//! rates as they are for a short window, and the events inside it share one re-solve, at the
//! last of them ([`Fluid::settle`]). Flows that finish in the window finish at their rates
//! (exactly); flows that start in it wait, unrated, for the re-solve; the capacity finished
//! flows free stays idle until then. The allocation is therefore always feasible and at
//! most one window stale. A window opened at `t` ends by `t + eps x max(t - s, d)`, `s` the
//! latest start so far and `d` the shortest time any started flow could take alone (its
//! bytes over its narrowest resource), and by `eps` of each arriving flow's own time alone
//! after it arrives: an arriving flow waits at most `eps` of its completion time, and a flow
//! already active has run for at least `t - s`, so the window is at most `eps` of that.
//! Completion times move by about `eps` of themselves, by a few `eps` at worst (a flow that
//! misses a window's bytes at a high rate makes them up at the lower rate it may have later;
//! the tests check 10 `eps` per flow and `eps` on average against the exact fluid on random
//! staggered inputs). A re-solve waits only while the next event falls inside the window:
//! events farther apart re-solve one by one, exactly. What it buys: when flows start one
//! after another (picoseconds apart), finishes are as staggered as the starts and an exact
//! fluid re-solves every active flow at each of them (quadratic); windows of a fraction of
//! the elapsed time make that a number of re-solves logarithmic in the span of finish
//! times. With `eps = 0` (the default) every event re-solves at once: the exact fluid.

use crate::maxmin::{key, FlowSet, IndexedHeap, MaxMin};
use std::collections::BTreeSet;

/// Finish times within this fraction of the event's time finish in the event.
pub(crate) const SAME_TIME: f64 = 1e-9;

/// `due` of a flow that has a rate but will not finish at it (a resource of capacity 0).
const NEVER: u64 = u64::MAX - 1;

/// Flows of a [`FlowSet`] draining at max-min fair rates over resources of fixed capacity.
#[derive(Default, Debug)]
pub struct Fluid {
    /// Per flow: rate (0 when not active), bytes left at `t_upd`, and when that was.
    rate: Vec<f64>,
    left: Vec<f64>,
    t_upd: Vec<f64>,
    active: Vec<bool>,
    /// The finish time for the flow's current rate (bits), its key in `heap`; `u64::MAX`
    /// while the flow has no rate.
    due: Vec<u64>,
    bytes: Vec<f64>,
    /// Active flows by rate.
    by_rate: BTreeSet<(u64, u32)>,
    /// Rated flows that will finish, by (finish time, id): the order in which they finish.
    heap: IndexedHeap,
    /// Per resource: the sum of share x rate over active flows.
    usage: Vec<f64>,
    /// Flows started but not yet given a rate.
    new: Vec<u32>,
    n_active: usize,
    /// Re-solves, and how many of them had to take every flow.
    solves: u64,
    full_solves: u64,
    // Re-solve scratch: local ids of resources and splits, the subproblem, its rates.
    local: Vec<u32>,
    global: Vec<u32>,
    local_split: Vec<u32>,
    split_rate: Vec<f64>,
    /// The splits of the subproblem being built (kept to skip an allocation per event).
    splits_used: Vec<u32>,
    /// Splits with a usage change pending, and the change.
    split_seen: Vec<u32>,
    split_marked: Vec<bool>,
    split_delta: Vec<f64>,
    sub: FlowSet,
    sub_cap: Vec<f64>,
    contrib: Vec<f64>,
    upper: Vec<u32>,
    sub_rate: Vec<f64>,
    uses: Vec<(u32, f64)>,
    srefs: Vec<u32>,
    mm: MaxMin,
    /// Coalescing (see the module): the tolerance, the latest start so far, the shortest
    /// time a started flow could take alone, the end of the open window (infinite: none), and the lowest rate a flow finished at since the last re-solve (0 after a
    /// start: every flow is re-solved).
    tolerance: f64,
    last_start: f64,
    min_alone: f64,
    window_end: f64,
    pending_x: f64,
    /// Events that joined an open window instead of re-solving.
    coalesced: u64,
}

impl Fluid {
    /// Ready for `flows` (none active) carrying `bytes` each over `nres` resources.
    pub fn reset(&mut self, flows: &FlowSet, bytes: &[f64], nres: usize) {
        let n = flows.len();
        assert_eq!(bytes.len(), n, "one size per flow");
        self.rate.clear();
        self.rate.resize(n, 0.0);
        self.left.clear();
        self.left.extend_from_slice(bytes);
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
        self.t_upd.clear();
        self.t_upd.resize(n, 0.0);
        self.active.clear();
        self.active.resize(n, false);
        self.due.clear();
        self.due.resize(n, u64::MAX);
        self.by_rate.clear();
        self.heap.reset(n);
        self.usage.clear();
        self.usage.resize(nres, 0.0);
        self.new.clear();
        self.n_active = 0;
        self.solves = 0;
        self.full_solves = 0;
        self.local.clear();
        self.local.resize(nres, u32::MAX);
        self.local_split.clear();
        self.local_split.resize(flows.splits(), u32::MAX);
        self.split_rate.clear();
        self.split_rate.resize(flows.splits(), 0.0);
        self.split_seen.clear();
        self.split_marked.clear();
        self.split_marked.resize(flows.splits(), false);
        self.split_delta.clear();
        self.split_delta.resize(flows.splits(), 0.0);
        self.last_start = f64::NEG_INFINITY;
        self.min_alone = f64::INFINITY;
        self.window_end = f64::INFINITY;
        self.pending_x = f64::INFINITY;
        self.coalesced = 0;
    }

    /// Let events within a window of `eps` of the elapsed time share one re-solve (see the
    /// module); 0, the default, re-solves at every event. With a tolerance, the caller calls
    /// [`Fluid::settle`] after each event.
    ///
    /// # Panics
    ///
    /// Panics if `eps` is negative or not finite.
    pub fn set_tolerance(&mut self, eps: f64) {
        assert!(eps.is_finite() && eps >= 0.0, "tolerance {eps} is not >= 0");
        self.tolerance = eps;
    }

    /// After an event under a tolerance: re-solve now unless the next event (`next_event`,
    /// the caller's next start, or the next finish at the current rates) falls inside the
    /// coalescing window the first unsolved event opened; then the re-solve waits for it.
    /// Nothing to do when no event is unsolved (and never with tolerance 0, where events
    /// re-solve at once).
    pub fn settle(&mut self, flows: &FlowSet, cap: &[f64], t: f64, next_event: f64) {
        if !self.pending_x.is_finite() || next_event.min(self.next_finish()) <= self.window_end {
            return;
        }
        let x = self.pending_x;
        self.window_end = f64::INFINITY;
        self.pending_x = f64::INFINITY;
        if self.n_active > 0 {
            self.resolve(flows, cap, t, x);
        }
    }

    /// Re-solve now (no tolerance), or leave it to [`Fluid::settle`], opening a coalescing
    /// window at `t` if none is open; `x` is the lowest rate the re-solve must take (0:
    /// every flow).
    fn solve_or_defer(&mut self, flows: &FlowSet, cap: &[f64], t: f64, x: f64) {
        if self.tolerance == 0.0 {
            if self.n_active > 0 {
                self.resolve(flows, cap, t, x);
            }
            return;
        }
        if self.pending_x.is_finite() {
            self.coalesced += 1;
        } else {
            // The first unsolved event opens the window.
            let alone = if self.min_alone.is_finite() {
                self.min_alone
            } else {
                0.0
            };
            let end = t + self.tolerance * (t - self.last_start).max(alone);
            self.window_end = self.window_end.min(end);
        }
        self.pending_x = self.pending_x.min(x);
    }

    /// The shortest time flow `f` could take alone: its bytes over its narrowest resource
    /// (infinite for no bytes or no finite resource, which bound nothing).
    fn alone(&self, flows: &FlowSet, cap: &[f64], f: u32) -> f64 {
        let mut rate = f64::INFINITY;
        let mut narrow = |l: u32, share: f64| rate = rate.min(cap[l as usize] / share);
        for (l, s) in flows.direct_uses(f) {
            narrow(l, s);
        }
        for &sp in flows.splits_of(f) {
            for (l, s) in flows.split_uses(sp) {
                narrow(l, s);
            }
        }
        let t = self.bytes[f as usize] / rate;
        if t > 0.0 {
            t
        } else {
            f64::INFINITY
        }
    }

    /// Active flows.
    pub fn active(&self) -> usize {
        self.n_active
    }

    /// Rate re-solves so far, and how many of them took every active flow.
    pub fn solves(&self) -> (u64, u64) {
        (self.solves, self.full_solves)
    }

    /// Start `ids` at time `t` (each at most once) and re-solve (or open a coalescing window).
    pub fn start(&mut self, flows: &FlowSet, cap: &[f64], t: f64, ids: &[u32]) {
        for &f in ids {
            let fi = f as usize;
            assert!(!self.active[fi], "flow {f} started twice");
            self.active[fi] = true;
            self.t_upd[fi] = t;
            self.n_active += 1;
            self.new.push(f);
            if self.tolerance > 0.0 {
                let alone = self.alone(flows, cap, f);
                self.min_alone = self.min_alone.min(alone);
                // It waits for the re-solve at most `eps` of its time alone.
                self.window_end = self.window_end.min(t + self.tolerance * alone);
            }
        }
        if !ids.is_empty() {
            self.last_start = self.last_start.max(t);
            // Arrivals can lower any rate: take every flow.
            self.solve_or_defer(flows, cap, t, 0.0);
        }
    }

    /// When the next flow drains its last byte at the current rates (infinite if none will).
    pub fn next_finish(&mut self) -> f64 {
        self.heap
            .peek()
            .map_or(f64::INFINITY, |(k, _)| f64::from_bits(k))
    }

    /// Flow `f`'s current rate (0 when not active).
    pub fn rate(&self, f: u32) -> f64 {
        self.rate[f as usize]
    }

    /// Events that shared a re-solve with an earlier one in its coalescing window.
    pub fn coalesced(&self) -> u64 {
        self.coalesced
    }

    /// Entries in the finish-time heap: at most one per active flow.
    pub fn pending(&self) -> usize {
        self.heap.len()
    }

    /// Finish the flows draining at the next event (time `next_finish()`), push them to
    /// `done`, re-solve the others' rates (or open a coalescing window), and return the
    /// event's time.
    pub fn finish_next(&mut self, flows: &FlowSet, cap: &[f64], done: &mut Vec<u32>) -> f64 {
        let t = self.next_finish();
        if !t.is_finite() {
            return t;
        }
        let until = t + SAME_TIME * t;
        let mut lowest = f64::INFINITY;
        while let Some((k, f)) = self.heap.peek() {
            if f64::from_bits(k) > until {
                break;
            }
            self.heap.pop();
            let fi = f as usize;
            debug_assert!(
                self.active[fi] && self.due[fi] == k,
                "heap entry is current"
            );
            lowest = lowest.min(self.rate[fi]);
            self.retire(flows, f);
            done.push(f);
        }
        self.apply_split_usage(flows);
        self.solve_or_defer(flows, cap, t, if lowest.is_finite() { lowest } else { 0.0 });
        t
    }

    /// Take finished flow `f` out: its usage, its rate entry.
    fn retire(&mut self, flows: &FlowSet, f: u32) {
        let fi = f as usize;
        let r = self.rate[fi];
        self.add_usage(flows, f, -finite(r));
        self.by_rate.remove(&(key(r), f));
        self.heap.remove(f);
        self.rate[fi] = 0.0;
        self.left[fi] = 0.0;
        self.due[fi] = u64::MAX;
        self.active[fi] = false;
        self.n_active -= 1;
    }

    /// Add `d` x share to the usage of `f`'s direct resources now, and to its split's
    /// pending change (applied by [`Fluid::apply_split_usage`]).
    fn add_usage(&mut self, flows: &FlowSet, f: u32, d: f64) {
        if d == 0.0 {
            return;
        }
        for (l, s) in flows.direct_uses(f) {
            self.usage[l as usize] += s * d;
        }
        for &sp in flows.splits_of(f) {
            let s = sp as usize;
            if !self.split_marked[s] {
                self.split_marked[s] = true;
                self.split_seen.push(sp);
            }
            self.split_delta[s] += d;
        }
    }

    /// Give active flow `f` rate `r` from time `t`: bytes left, usage, rate entry, finish
    /// time. Nothing changes if it already has that rate.
    fn set_rate(&mut self, flows: &FlowSet, f: u32, r: f64, t: f64) {
        let fi = f as usize;
        let old = self.rate[fi];
        let rated = self.due[fi] != u64::MAX;
        if rated && old == r {
            return;
        }
        if rated {
            if old.is_finite() {
                self.left[fi] = (self.left[fi] - old * (t - self.t_upd[fi])).max(0.0);
            }
            self.by_rate.remove(&(key(old), f));
        }
        self.t_upd[fi] = t;
        self.add_usage(flows, f, finite(r) - finite(old));
        self.rate[fi] = r;
        self.by_rate.insert((key(r), f));
        let finish = if r.is_infinite() {
            t
        } else if r > 0.0 {
            t + self.left[fi] / r
        } else {
            f64::INFINITY
        };
        // `NEVER` marks a rated flow that will not finish at its rate (capacity 0).
        self.due[fi] = if finish.is_finite() {
            key(finish)
        } else {
            NEVER
        };
        if finish.is_finite() {
            self.heap.set(f, self.due[fi]);
        } else {
            self.heap.remove(f);
        }
    }

    /// Put the splits' pending usage changes on their resources.
    fn apply_split_usage(&mut self, flows: &FlowSet) {
        while let Some(sp) = self.split_seen.pop() {
            let s = sp as usize;
            self.split_marked[s] = false;
            let d = std::mem::take(&mut self.split_delta[s]);
            for (l, sh) in flows.split_uses(sp) {
                self.usage[l as usize] += sh * d;
            }
        }
    }

    /// Re-solve the active flows whose rate is at least `x` (and the new ones) on what the
    /// slower ones leave; widen to every flow if a rate comes out below `x`.
    fn resolve(&mut self, flows: &FlowSet, cap: &[f64], t: f64, x: f64) {
        let mut x = x;
        let all = loop {
            self.upper.clear();
            self.upper.extend(self.new.iter().copied());
            let from = (key(x), 0u32);
            self.upper
                .extend(self.by_rate.range(from..).map(|&(_, f)| f));
            if self.upper.is_empty() {
                return;
            }
            self.solves += 1;
            let all = self.upper.len() == self.n_active;
            self.build(flows, cap, all);
            self.mm.solve(&self.sub_cap, &self.sub, &mut self.sub_rate);
            for &g in &self.global {
                self.local[g as usize] = u32::MAX;
            }
            if all || self.sub_rate.iter().all(|&r| r >= x * (1.0 - 1e-12)) {
                break all;
            }
            x = 0.0;
        };
        if all {
            self.full_solves += 1;
        }
        self.new.clear();
        for k in 0..self.upper.len() {
            let (f, r) = (self.upper[k], self.sub_rate[k]);
            self.set_rate(flows, f, r, t);
        }
        self.apply_split_usage(flows);
        if all {
            self.recount(flows);
        }
    }

    /// The subproblem of the flows in `upper`: local resources with the capacity the other
    /// flows leave (the whole capacity when `all`), local splits.
    ///
    /// With `all` (every arrival takes every flow) the re-solved flows' own usage (`contrib`)
    /// is not needed: skipping it saves a pass over every flow's resources per event.
    fn build(&mut self, flows: &FlowSet, cap: &[f64], all: bool) {
        self.global.clear();
        self.sub.clear();
        self.sub_cap.clear();
        self.contrib.clear();
        self.splits_used.clear();
        for k in 0..self.upper.len() {
            let f = self.upper[k];
            let r = finite(self.rate[f as usize]);
            self.srefs.clear();
            for &sp in flows.splits_of(f) {
                let s = sp as usize;
                if self.local_split[s] == u32::MAX {
                    self.uses.clear();
                    for (l, sh) in flows.split_uses(sp) {
                        let ll = local_of(&mut self.local, &mut self.global, l);
                        self.uses.push((ll, sh));
                    }
                    self.local_split[s] = self.sub.add_split(self.uses.iter().copied());
                    self.splits_used.push(sp);
                    self.split_rate[s] = 0.0;
                }
                self.split_rate[s] += r;
                self.srefs.push(self.local_split[s]);
            }
            self.uses.clear();
            for (l, sh) in flows.direct_uses(f) {
                let ll = local_of(&mut self.local, &mut self.global, l);
                self.uses.push((ll, sh));
                if all {
                    continue;
                }
                if self.contrib.len() <= ll as usize {
                    self.contrib.resize(ll as usize + 1, 0.0);
                }
                self.contrib[ll as usize] += sh * r;
            }
            self.sub
                .push_split_flow(self.uses.iter().copied(), &self.srefs);
        }
        self.contrib.resize(self.global.len(), 0.0);
        for &sp in &self.splits_used {
            let s = sp as usize;
            let r = std::mem::take(&mut self.split_rate[s]);
            if !all {
                for (l, sh) in flows.split_uses(sp) {
                    self.contrib[self.local[l as usize] as usize] += sh * r;
                }
            }
            self.local_split[s] = u32::MAX;
        }
        for (ll, &g) in self.global.iter().enumerate() {
            let c = cap[g as usize];
            self.sub_cap.push(if all {
                c
            } else {
                (c - self.usage[g as usize] + self.contrib[ll]).clamp(0.0, c)
            });
        }
    }

    /// Usage recomputed from the rates (after a solve of every flow, so that rounding does
    /// not build up over events).
    fn recount(&mut self, flows: &FlowSet) {
        self.usage.iter_mut().for_each(|u| *u = 0.0);
        for k in 0..self.upper.len() {
            let f = self.upper[k];
            self.add_usage(flows, f, finite(self.rate[f as usize]));
        }
        self.apply_split_usage(flows);
    }
}

/// Rates counted in usage: an infinite rate (a flow on no finite resource) takes nothing.
fn finite(r: f64) -> f64 {
    if r.is_finite() {
        r
    } else {
        0.0
    }
}

fn local_of(local: &mut [u32], global: &mut Vec<u32>, g: u32) -> u32 {
    let slot = &mut local[g as usize];
    if *slot == u32::MAX {
        *slot = global.len() as u32;
        global.push(g);
    }
    *slot
}

/// When each flow of `flows`, carrying `bytes` over resources of `cap` (bytes per second),
/// drains its last byte when all start at 0 (infinite: never, on a resource of capacity 0;
/// 0: no bytes). The exact fluid (no coalescing).
pub fn finish_times(cap: &[f64], flows: &FlowSet, bytes: &[f64]) -> Vec<f64> {
    let mut out = vec![f64::INFINITY; flows.len()];
    let mut fl = Fluid::default();
    fl.reset(flows, bytes, cap.len());
    let mut ids: Vec<u32> = Vec::with_capacity(flows.len());
    for (f, &b) in bytes.iter().enumerate() {
        if b > 0.0 {
            ids.push(f as u32);
        } else {
            out[f] = 0.0;
        }
    }
    fl.start(flows, cap, 0.0, &ids);
    let mut done = Vec::new();
    while fl.next_finish().is_finite() {
        done.clear();
        let t = fl.finish_next(flows, cap, &mut done);
        for &f in &done {
            out[f as usize] = t;
        }
    }
    out
}

#[cfg(test)]
mod finish_tests {
    use super::*;

    /// Two flows share a link of 10 B/s, one of them alone on a second link: both run at 5
    /// until the 10-byte one finishes at 2 s, then the 30-byte one has 20 left at 10: 4 s.
    #[test]
    fn finish_times_follow_max_min_as_flows_leave() {
        let mut flows = FlowSet::new();
        flows.push(&[(0, 1.0)]);
        flows.push(&[(0, 1.0), (1, 1.0)]);
        flows.push(&[(2, 1.0)]);
        let t = finish_times(&[10.0, 100.0, 0.0], &flows, &[10.0, 30.0, 5.0]);
        assert!((t[0] - 2.0).abs() < 1e-12, "{t:?}");
        assert!((t[1] - 4.0).abs() < 1e-12, "{t:?}");
        assert!(
            t[2].is_infinite(),
            "a link of capacity 0 never drains: {t:?}"
        );
    }
}
