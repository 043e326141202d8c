//! Integer maximum flow and minimum cut with Dinic's algorithm (Dinic 1970,
//! "Algorithm for solution of a problem of maximum flow in a network with
//! power estimation", Soviet Math. Doklady 11).
//!
//! The capacity report uses this to compute bisection and inter-group
//! bandwidth of fabrics with a few hundred thousand links, and it asks for
//! many source/sink pairs on the same topology. The design follows from that:
//!
//! * The network is built once with [`FlowNetworkBuilder`] and frozen into a
//!   compressed-sparse-row (CSR) [`FlowNetwork`]: all arcs of a node are
//!   contiguous, every arc knows the index of its reverse arc, and nodes and
//!   arcs are plain `u32` indices. There are no per-node heap objects, so a
//!   query walks a handful of flat arrays.
//! * [`FlowNetwork::max_flow`] restores the residual capacities from the
//!   original ones on every call, and reuses the BFS level, current-arc,
//!   queue and path buffers, so repeated queries do not allocate.
//! * The blocking-flow search is iterative (an explicit path stack), because
//!   augmenting paths can be as long as the number of nodes and worker
//!   threads may have small stacks.
//! * Everything is deterministic: arcs of a node are kept in insertion order,
//!   and the search always scans them in that order, so the same inputs give
//!   the same flow value and the same minimum cut.
//!
//! Capacities are unsigned integers (the caller uses Mb/s) so results are
//! exact and independent of summation order.

use std::collections::VecDeque;

/// Level value of a node that is not (or no longer) in the level graph.
const UNREACHED: u32 = u32::MAX;

/// One link as recorded by the builder: arc `u -> v` with capacity `fwd`
/// and its paired reverse arc `v -> u` with capacity `bwd` (0 for a directed
/// arc, equal to `fwd` for a full-duplex link).
#[derive(Debug, Clone, Copy)]
struct Link {
    u: u32,
    v: u32,
    fwd: u64,
    bwd: u64,
}

/// Collects the arcs of a flow network before it is frozen into CSR form by
/// [`FlowNetworkBuilder::build`].
///
/// Arcs are kept in insertion order; that order fixes the order in which the
/// algorithm scans a node's arcs and therefore which of several equally
/// good flows (and hence which arcs of a cut) are reported, making results
/// reproducible.
#[derive(Debug, Clone)]
pub struct FlowNetworkBuilder {
    num_nodes: usize,
    links: Vec<Link>,
}

impl FlowNetworkBuilder {
    /// Starts an empty network with nodes `0..num_nodes`.
    ///
    /// # Panics
    ///
    /// Panics if `num_nodes` does not fit in a `u32` (node ids are `u32`).
    pub fn new(num_nodes: usize) -> Self {
        assert!(
            u32::try_from(num_nodes).is_ok(),
            "FlowNetworkBuilder: num_nodes {num_nodes} does not fit in u32"
        );
        Self {
            num_nodes,
            links: Vec::new(),
        }
    }

    /// Adds a directed arc `u -> v` with capacity `cap`.
    ///
    /// A reverse residual arc `v -> u` with capacity 0 is created internally.
    /// Parallel arcs and self-loops are allowed; parallel arcs add up and
    /// self-loops never carry flow.
    ///
    /// # Panics
    ///
    /// Panics if `u` or `v` is not a node of the network.
    pub fn add_arc(&mut self, u: u32, v: u32, cap: u64) {
        self.push(u, v, cap, 0);
    }

    /// Adds a full-duplex link between `u` and `v`: capacity `cap` from `u`
    /// to `v` and, independently, `cap` from `v` to `u`.
    ///
    /// It is stored as ONE pair of mutually reverse arcs that both start with
    /// capacity `cap`, rather than two directed arcs with two zero-capacity
    /// reverses. For a single-commodity maximum flow this is equivalent
    /// (flow in both directions of a link can always be cancelled) and it
    /// halves the number of arcs.
    ///
    /// # Panics
    ///
    /// Panics if `u` or `v` is not a node of the network.
    pub fn add_undirected(&mut self, u: u32, v: u32, cap: u64) {
        self.push(u, v, cap, cap);
    }

    fn push(&mut self, u: u32, v: u32, fwd: u64, bwd: u64) {
        assert!(
            (u as usize) < self.num_nodes && (v as usize) < self.num_nodes,
            "FlowNetworkBuilder: arc {u}->{v} out of range for {} nodes",
            self.num_nodes
        );
        self.links.push(Link { u, v, fwd, bwd });
    }

    /// Freezes the arcs into a [`FlowNetwork`] in CSR form.
    ///
    /// # Panics
    ///
    /// Panics if the number of arcs (two per added link) does not fit in a
    /// `u32`, or if the sum of all capacities does not fit in a `u64`. The
    /// latter guarantees that no flow value or residual capacity can ever
    /// overflow during [`FlowNetwork::max_flow`].
    pub fn build(self) -> FlowNetwork {
        let n = self.num_nodes;
        let num_arcs = self
            .links
            .len()
            .checked_mul(2)
            .filter(|&m| u32::try_from(m).is_ok())
            .expect("FlowNetworkBuilder: too many arcs for u32 arc indices");

        let mut total: u64 = 0;
        for l in &self.links {
            total = total
                .checked_add(l.fwd)
                .and_then(|x| x.checked_add(l.bwd))
                .expect("FlowNetworkBuilder: sum of capacities overflows u64");
        }

        // Counting sort of arcs by tail node; `offsets[x]..offsets[x + 1]`
        // are the arcs leaving node `x`.
        let mut offsets = vec![0u32; n + 1];
        for l in &self.links {
            offsets[l.u as usize + 1] += 1;
            offsets[l.v as usize + 1] += 1;
        }
        for x in 0..n {
            offsets[x + 1] += offsets[x];
        }

        let mut next = offsets[..n].to_vec();
        let mut head = vec![0u32; num_arcs];
        let mut cap = vec![0u64; num_arcs];
        let mut rev = vec![0u32; num_arcs];
        let mut link_arc = Vec::with_capacity(self.links.len());
        for l in &self.links {
            let a = next[l.u as usize];
            link_arc.push(a);
            next[l.u as usize] += 1;
            let b = next[l.v as usize];
            next[l.v as usize] += 1;
            head[a as usize] = l.v;
            cap[a as usize] = l.fwd;
            rev[a as usize] = b;
            head[b as usize] = l.u;
            cap[b as usize] = l.bwd;
            rev[b as usize] = a;
        }

        FlowNetwork {
            res: cap.clone(),
            link_arc,
            built_total: total,
            total,
            cap,
            offsets,
            head,
            rev,
            level: vec![UNREACHED; n],
            cur: vec![0; n],
            queue: Vec::with_capacity(n),
            path: Vec::new(),
        }
    }
}

/// A frozen flow network in CSR form, ready for repeated
/// [`max_flow`](FlowNetwork::max_flow) queries.
///
/// Besides the topology and the original capacities it owns the working
/// state of the algorithm (residual capacities, BFS levels, current-arc
/// pointers, BFS queue and DFS path), which is why queries take `&mut self`.
/// Clone it to run queries on several threads.
#[derive(Debug, Clone)]
pub struct FlowNetwork {
    /// `offsets[x]..offsets[x + 1]` are the arc indices leaving node `x`.
    offsets: Vec<u32>,
    /// Head (target node) of each arc.
    head: Vec<u32>,
    /// Original capacity of each arc.
    cap: Vec<u64>,
    /// Residual capacity of each arc for the current/last query.
    res: Vec<u64>,
    /// Index of the paired reverse arc.
    rev: Vec<u32>,
    /// BFS distance from the source in the residual graph, or `UNREACHED`.
    level: Vec<u32>,
    /// Current-arc pointer per node: arcs before it are known to be useless
    /// in the current phase.
    cur: Vec<u32>,
    /// BFS queue, reused between phases and queries.
    queue: Vec<u32>,
    /// Arcs of the partial s->x path of the iterative DFS.
    path: Vec<u32>,
    /// Forward arc of each added link, in insertion order (its reverse is `rev`).
    link_arc: Vec<u32>,
    /// Sum of all capacities when built, and now: changes may not exceed the first, which
    /// keeps every flow value within `u64`.
    built_total: u64,
    total: u64,
}

impl FlowNetwork {
    /// Number of nodes (node ids are `0..num_nodes()`).
    pub fn num_nodes(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Change the capacities of the `link`-th arc or link added to the builder (0-based, in
    /// insertion order): `fwd` from its first node to its second, `bwd` back. For scenarios
    /// on one topology (failures set capacities to 0 and restore them) without rebuilding.
    ///
    /// # Panics
    ///
    /// Panics if `link` is out of range, or if the new capacities would make the sum of all
    /// capacities exceed what it was when the network was built.
    pub fn set_link_capacity(&mut self, link: usize, fwd: u64, bwd: u64) {
        let a = self.link_arc[link] as usize;
        let b = self.rev[a] as usize;
        let total = (self.total - self.cap[a] - self.cap[b])
            .checked_add(fwd)
            .and_then(|t| t.checked_add(bwd))
            .filter(|&t| t <= self.built_total)
            .expect("set_link_capacity: capacities may not grow past the built total");
        self.cap[a] = fwd;
        self.cap[b] = bwd;
        self.total = total;
    }

    /// The flow the last [`max_flow`](FlowNetwork::max_flow) sent over the `link`-th arc or
    /// link added to the builder, in absolute value (either direction). With it a caller can
    /// tell that lowering some capacities leaves the maximum flow unchanged: if every lowered
    /// arc still fits its flow, that flow is still feasible, and it cannot grow.
    pub fn link_flow(&self, link: usize) -> u64 {
        let a = self.link_arc[link] as usize;
        (i128::from(self.cap[a]) - i128::from(self.res[a])).unsigned_abs() as u64
    }

    /// Maximum flow value from `s` to `t`.
    ///
    /// Dinic's algorithm: repeatedly build BFS levels in the residual graph,
    /// then saturate it with a blocking flow found by an iterative
    /// depth-first search that advances per-node current-arc pointers, until
    /// `t` is unreachable. Residual capacities are reset to the original
    /// capacities first, so this can be called repeatedly with different
    /// `s`/`t`; the residual state of the last call is kept for
    /// [`min_cut_source_side`](FlowNetwork::min_cut_source_side).
    ///
    /// Returns 0 if `s == t`.
    ///
    /// # Panics
    ///
    /// Panics if `s` or `t` is not a node of the network.
    pub fn max_flow(&mut self, s: u32, t: u32) -> u64 {
        let n = self.num_nodes();
        assert!(
            (s as usize) < n && (t as usize) < n,
            "max_flow: s={s} or t={t} out of range for {n} nodes"
        );
        self.res.copy_from_slice(&self.cap);
        if s == t {
            return 0;
        }
        let mut flow: u64 = 0;
        while self.bfs_levels(s, t) {
            self.cur.copy_from_slice(&self.offsets[..n]);
            flow += self.blocking_flow(s, t);
        }
        flow
    }

    /// Computes BFS levels from `s` over arcs with positive residual
    /// capacity. Stops as soon as `t` is labelled: nodes discovered later
    /// could only lie at `t`'s level or beyond, where they cannot be on a
    /// shortest path. Returns whether `t` is reachable.
    fn bfs_levels(&mut self, s: u32, t: u32) -> bool {
        self.level.fill(UNREACHED);
        self.queue.clear();
        self.level[s as usize] = 0;
        self.queue.push(s);
        let mut qi = 0;
        while qi < self.queue.len() {
            let u = self.queue[qi] as usize;
            qi += 1;
            let next = self.level[u] + 1;
            let (lo, hi) = (self.offsets[u] as usize, self.offsets[u + 1] as usize);
            for a in lo..hi {
                let v = self.head[a];
                if self.res[a] > 0 && self.level[v as usize] == UNREACHED {
                    self.level[v as usize] = next;
                    if v == t {
                        return true;
                    }
                    self.queue.push(v);
                }
            }
        }
        false
    }

    /// Finds a blocking flow in the level graph with an iterative DFS and
    /// returns its value.
    ///
    /// `path` holds the arcs from `s` to the current node. At `t` the path is
    /// augmented by its bottleneck and cut back to just before its first
    /// saturated arc (so the prefix is reused). A node with no admissible arc
    /// left is removed from the level graph and the search retreats,
    /// advancing the parent's current arc past the dead arc.
    fn blocking_flow(&mut self, s: u32, t: u32) -> u64 {
        let t_level = self.level[t as usize];
        let mut total: u64 = 0;
        self.path.clear();
        let mut u = s;
        loop {
            if u == t {
                let mut push = u64::MAX;
                for &a in &self.path {
                    push = push.min(self.res[a as usize]);
                }
                let mut first_saturated = None;
                for (i, &a) in self.path.iter().enumerate() {
                    let a = a as usize;
                    self.res[a] -= push;
                    self.res[self.rev[a] as usize] += push;
                    if first_saturated.is_none() && self.res[a] == 0 {
                        first_saturated = Some(i);
                    }
                }
                total += push;
                let i = first_saturated.expect("bottleneck arc must be saturated");
                let a = self.path[i] as usize;
                u = self.head[self.rev[a] as usize];
                self.path.truncate(i);
                continue;
            }

            let ui = u as usize;
            let next = self.level[ui] + 1;
            let end = self.offsets[ui + 1];
            let mut a = self.cur[ui];
            while a < end {
                let ai = a as usize;
                let v = self.head[ai];
                if self.res[ai] > 0 && self.level[v as usize] == next && (next < t_level || v == t)
                {
                    break;
                }
                a += 1;
            }
            self.cur[ui] = a;

            if a < end {
                self.path.push(a);
                u = self.head[a as usize];
            } else {
                // Dead end: nothing more reaches `t` through `u` this phase.
                self.level[ui] = UNREACHED;
                match self.path.pop() {
                    None => return total,
                    Some(back) => {
                        u = self.head[self.rev[back as usize] as usize];
                        self.cur[u as usize] += 1;
                    }
                }
            }
        }
    }

    /// Source side of a minimum `s`-`t` cut: `result[x]` is true iff node `x`
    /// is reachable from `s` through arcs with positive residual capacity.
    ///
    /// Call it right after [`max_flow`](FlowNetwork::max_flow) with the same
    /// `s`. By the max-flow/min-cut theorem the original capacities of arcs
    /// from the true side to the false side then sum to the flow value. This
    /// set is the same for every maximum flow (it is the smallest minimum
    /// cut's source side), so it does not depend on which flow was found.
    ///
    /// # Panics
    ///
    /// Panics if `s` is not a node of the network.
    pub fn min_cut_source_side(&self, s: u32) -> Vec<bool> {
        let n = self.num_nodes();
        assert!(
            (s as usize) < n,
            "min_cut_source_side: s={s} out of range for {n} nodes"
        );
        let mut seen = vec![false; n];
        let mut queue = VecDeque::new();
        seen[s as usize] = true;
        queue.push_back(s);
        while let Some(u) = queue.pop_front() {
            let u = u as usize;
            let (lo, hi) = (self.offsets[u] as usize, self.offsets[u + 1] as usize);
            for a in lo..hi {
                let v = self.head[a] as usize;
                if self.res[a] > 0 && !seen[v] {
                    seen[v] = true;
                    queue.push_back(v as u32);
                }
            }
        }
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Independent reference: Edmonds–Karp (shortest augmenting paths by
    /// BFS) on a dense residual matrix.
    fn edmonds_karp(n: usize, links: &[(u32, u32, u64, bool)], s: usize, t: usize) -> u64 {
        if s == t {
            return 0;
        }
        let mut r = vec![vec![0u64; n]; n];
        for &(u, v, c, undirected) in links {
            let (u, v) = (u as usize, v as usize);
            if u == v {
                continue;
            }
            r[u][v] += c;
            if undirected {
                r[v][u] += c;
            }
        }
        let mut flow = 0;
        loop {
            let mut parent = vec![usize::MAX; n];
            parent[s] = s;
            let mut q = VecDeque::from([s]);
            while let Some(x) = q.pop_front() {
                for y in 0..n {
                    if parent[y] == usize::MAX && r[x][y] > 0 {
                        parent[y] = x;
                        q.push_back(y);
                    }
                }
            }
            if parent[t] == usize::MAX {
                return flow;
            }
            let mut push = u64::MAX;
            let mut y = t;
            while y != s {
                push = push.min(r[parent[y]][y]);
                y = parent[y];
            }
            let mut y = t;
            while y != s {
                let x = parent[y];
                r[x][y] -= push;
                r[y][x] += push;
                y = x;
            }
            flow += push;
        }
    }

    fn build(n: usize, links: &[(u32, u32, u64, bool)]) -> FlowNetwork {
        let mut b = FlowNetworkBuilder::new(n);
        for &(u, v, c, undirected) in links {
            if undirected {
                b.add_undirected(u, v, c);
            } else {
                b.add_arc(u, v, c);
            }
        }
        b.build()
    }

    /// Sum of original capacities from the source side to the other side.
    fn cut_capacity(links: &[(u32, u32, u64, bool)], side: &[bool]) -> u64 {
        let mut sum = 0;
        for &(u, v, c, undirected) in links {
            let (u, v) = (u as usize, v as usize);
            if side[u] && !side[v] {
                sum += c;
            }
            if undirected && side[v] && !side[u] {
                sum += c;
            }
        }
        sum
    }

    #[test]
    fn textbook_six_nodes() {
        // The classic 6-node example (as in CLRS, ch. 26): s=0, v1=1, v2=2,
        // v3=3, v4=4, t=5.
        // By hand: a flow of 23 is s->v1->v3->t (12), s->v2->v4->v3->t (7),
        // s->v2->v4->t (4). The cut {s, v1, v2, v4} | {v3, t} is crossed by
        // v1->v3 (12) + v4->v3 (7) + v4->t (4) = 23, so 23 is maximum, and no
        // other cut of capacity 23 has a smaller source side ({s}: 29,
        // {s,v1}: 25, {s,v1,v2}: 26), so that is the reachable set.
        let links = [
            (0, 1, 16, false),
            (0, 2, 13, false),
            (2, 1, 4, false),
            (1, 3, 12, false),
            (3, 2, 9, false),
            (2, 4, 14, false),
            (4, 3, 7, false),
            (3, 5, 20, false),
            (4, 5, 4, false),
        ];
        let mut net = build(6, &links);
        assert_eq!(net.num_nodes(), 6);
        assert_eq!(net.max_flow(0, 5), 23);
        let side = net.min_cut_source_side(0);
        assert_eq!(side, vec![true, true, true, false, true, false]);
        assert_eq!(cut_capacity(&links, &side), 23);
    }

    #[test]
    fn parallel_arcs_add_up() {
        let mut b = FlowNetworkBuilder::new(3);
        b.add_arc(0, 1, 3);
        b.add_arc(0, 1, 4);
        b.add_arc(1, 2, 10);
        let mut net = b.build();
        assert_eq!(net.max_flow(0, 2), 7);
        assert_eq!(net.min_cut_source_side(0), vec![true, false, false]);
    }

    #[test]
    fn disconnected_gives_zero() {
        let mut b = FlowNetworkBuilder::new(4);
        b.add_arc(0, 1, 5);
        b.add_arc(2, 3, 5);
        b.add_arc(3, 0, 5); // wrong direction for 0 -> 3
        let mut net = b.build();
        assert_eq!(net.max_flow(0, 3), 0);
        assert_eq!(net.min_cut_source_side(0), vec![true, true, false, false]);
        assert_eq!(net.max_flow(2, 1), 5);
    }

    #[test]
    fn same_source_and_sink_is_zero() {
        let mut b = FlowNetworkBuilder::new(2);
        b.add_undirected(0, 1, 5);
        let mut net = b.build();
        assert_eq!(net.max_flow(1, 1), 0);
    }

    #[test]
    fn undirected_link_in_either_direction() {
        let mut b = FlowNetworkBuilder::new(2);
        b.add_undirected(0, 1, 5);
        let mut net = b.build();
        // One pair of mutually reverse arcs, not two pairs.
        assert_eq!(net.head.len(), 2);
        assert_eq!(net.max_flow(0, 1), 5);
        assert_eq!(net.max_flow(1, 0), 5);

        // 0 -> 2, then the link {1, 2} is used from 2 to 1, then 1 -> 3.
        let mut b = FlowNetworkBuilder::new(4);
        b.add_arc(0, 2, 7);
        b.add_undirected(1, 2, 5);
        b.add_arc(1, 3, 9);
        let mut net = b.build();
        assert_eq!(net.max_flow(0, 3), 5);
        assert_eq!(net.min_cut_source_side(0), vec![true, false, true, false]);
        // The same link forward: 3 has no out-arcs, so reverse query is 0.
        assert_eq!(net.max_flow(3, 0), 0);
    }

    #[test]
    fn repeated_calls_and_rebuilds_are_deterministic() {
        let links = [
            (0, 1, 3, true),
            (0, 2, 3, true),
            (1, 3, 3, true),
            (2, 3, 3, true),
            (1, 2, 1, true),
        ];
        let mut a = build(4, &links);
        let mut b = build(4, &links);
        let fa = a.max_flow(0, 3);
        let ca = a.min_cut_source_side(0);
        let _ = a.max_flow(1, 2);
        assert_eq!(a.max_flow(0, 3), fa);
        assert_eq!(a.min_cut_source_side(0), ca);
        assert_eq!(b.max_flow(0, 3), fa);
        assert_eq!(b.min_cut_source_side(0), ca);
        assert_eq!(fa, 6);
    }

    fn graphs() -> impl Strategy<Value = (usize, Vec<(u32, u32, u64, bool)>)> {
        (2usize..=8).prop_flat_map(|n| {
            let link = (0..n as u32, 0..n as u32, 0u64..20, any::<bool>());
            (Just(n), prop::collection::vec(link, 0..=24))
        })
    }

    proptest! {
        #[test]
        fn matches_edmonds_karp_and_min_cut((n, links) in graphs()) {
            // One network for all pairs also checks the reset between calls.
            let mut net = build(n, &links);
            for s in 0..n {
                for t in 0..n {
                    if s == t {
                        continue;
                    }
                    let f = net.max_flow(s as u32, t as u32);
                    prop_assert_eq!(f, edmonds_karp(n, &links, s, t));
                    let side = net.min_cut_source_side(s as u32);
                    prop_assert!(side[s]);
                    prop_assert!(!side[t]);
                    prop_assert_eq!(cut_capacity(&links, &side), f);
                }
            }
        }

        #[test]
        fn changed_capacities_match_a_rebuilt_network(
            (n, links) in graphs(),
            cut in proptest::collection::vec(any::<bool>(), 0..40),
        ) {
            // Zero some links in place, compare with a network built without them, restore.
            let mut net = build(n, &links);
            let mut reduced = links.clone();
            for (i, l) in reduced.iter_mut().enumerate() {
                if cut.get(i).copied().unwrap_or(false) {
                    net.set_link_capacity(i, 0, 0);
                    l.2 = 0;
                }
            }
            let mut rebuilt = build(n, &reduced);
            prop_assert_eq!(net.max_flow(0, n as u32 - 1), rebuilt.max_flow(0, n as u32 - 1));
            for (i, l) in links.iter().enumerate() {
                net.set_link_capacity(i, l.2, if l.3 { l.2 } else { 0 });
            }
            let mut original = build(n, &links);
            prop_assert_eq!(net.max_flow(0, n as u32 - 1), original.max_flow(0, n as u32 - 1));
        }
    }

    /// Release-mode sanity run on a 3-layer Clos-like fabric with ~200k
    /// arcs and ~16k nodes: `cargo test --release -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn perf_clos_bisection() {
        use std::time::Instant;

        const PODS: u32 = 32;
        const LEAVES: u32 = 32; // per pod
        const SPINES: u32 = 32; // per pod, = number of planes
        const SUPERS: u32 = 48; // per plane
        const HOSTS: u32 = 12; // per leaf
        const HOST_CAP: u64 = 800_000;
        const LEAF_SPINE_CAP: u64 = 400_000;
        const SPINE_SUPER_CAP: u64 = 100_000;

        let hosts = PODS * LEAVES * HOSTS;
        let leaf0 = hosts;
        let spine0 = leaf0 + PODS * LEAVES;
        let super0 = spine0 + PODS * SPINES;
        let s = super0 + SPINES * SUPERS;
        let t = s + 1;
        let n = t as usize + 1;

        let started = Instant::now();
        let mut b = FlowNetworkBuilder::new(n);
        for p in 0..PODS {
            for l in 0..LEAVES {
                let leaf = leaf0 + p * LEAVES + l;
                for h in 0..HOSTS {
                    let host = (p * LEAVES + l) * HOSTS + h;
                    b.add_undirected(host, leaf, HOST_CAP);
                    // Bisection: first half of the pods send, second half receive.
                    if p < PODS / 2 {
                        b.add_arc(s, host, HOST_CAP);
                    } else {
                        b.add_arc(host, t, HOST_CAP);
                    }
                }
                for sp in 0..SPINES {
                    b.add_undirected(leaf, spine0 + p * SPINES + sp, LEAF_SPINE_CAP);
                }
            }
            for sp in 0..SPINES {
                for k in 0..SUPERS {
                    b.add_undirected(
                        spine0 + p * SPINES + sp,
                        super0 + sp * SUPERS + k,
                        SPINE_SUPER_CAP,
                    );
                }
            }
        }
        let mut net = b.build();
        let build_time = started.elapsed();
        let arcs = net.head.len();

        // The pods' uplinks to the super-spines are the bottleneck.
        let expected = u64::from(PODS / 2 * SPINES * SUPERS) * SPINE_SUPER_CAP;
        let mut times = Vec::new();
        for _ in 0..5 {
            let started = Instant::now();
            let f = net.max_flow(s, t);
            times.push(started.elapsed());
            assert_eq!(f, expected);
        }
        let cut = net.min_cut_source_side(s);
        let crossing: usize = (0..n)
            .filter(|&x| cut[x])
            .map(|x| {
                let (lo, hi) = (net.offsets[x] as usize, net.offsets[x + 1] as usize);
                (lo..hi)
                    .filter(|&a| !cut[net.head[a] as usize] && net.cap[a] > 0)
                    .count()
            })
            .sum();
        times.sort();
        println!(
            "clos: {n} nodes, {arcs} arcs, build {build_time:?}, max_flow min {:?} median {:?} max {:?}, flow {expected}, {crossing} cut arcs",
            times[0], times[2], times[4]
        );
        if !cfg!(debug_assertions) {
            assert!(times[2].as_millis() < 100, "max_flow too slow: {times:?}");
        }
    }
}
