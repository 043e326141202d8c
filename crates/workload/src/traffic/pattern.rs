//! Generated traffic matrices: permutation, incast, all-to-all, random pairs, ring
//! all-reduce.

use super::{Start, TmFlow, TrafficMatrix, TriggerKind};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// A generated traffic pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// A random permutation: every node sends one flow and receives one (none to itself).
    Permutation,
    /// N senders (nodes 1..=N) to node 0.
    Incast(u32),
    /// Every node to every other node, all at once.
    AllToAll,
    /// N flows between random distinct nodes.
    Random(u64),
    /// Ring all-reduce of `bytes` per node (the phases of NCCL's ring: reduce-scatter then
    /// all-gather, 2 (N - 1) steps): in each step node i sends a chunk of bytes / N (rounded
    /// up) to node
    /// i + 1, and its step k + 1 starts when its chunk of step k from node i - 1 has arrived
    /// (a oneshot trigger per step and node).
    RingAllReduce,
}

impl Pattern {
    /// Parse `permutation`, `incast:N`, `all-to-all`, `random:N`.
    pub fn parse(s: &str) -> Option<Pattern> {
        Some(match s {
            "permutation" => Pattern::Permutation,
            "all-to-all" | "all_to_all" | "alltoall" => Pattern::AllToAll,
            "ring-allreduce" | "ring_allreduce" | "ring-all-reduce" => Pattern::RingAllReduce,
            _ => {
                let (k, v) = s.split_once(':')?;
                match k {
                    "incast" => Pattern::Incast(v.parse().ok().filter(|&n| n > 0)?),
                    "random" => Pattern::Random(v.parse().ok().filter(|&n| n > 0)?),
                    _ => return None,
                }
            }
        })
    }

    /// Accepted spellings, for hints.
    pub const HELP: &'static str = "permutation, incast:N, all-to-all, random:N or ring-allreduce";

    /// Nodes it needs at least.
    pub fn min_nodes(self) -> u32 {
        match self {
            Pattern::Incast(n) => n.saturating_add(1),
            _ => 2,
        }
    }

    /// The flows over `nodes` nodes, each `bytes`, all starting at 0 (`seed` draws the
    /// permutation or the random pairs).
    pub fn generate(self, nodes: u32, bytes: u64, seed: u64) -> TrafficMatrix {
        use rand::{RngExt, SeedableRng};
        if self == Pattern::RingAllReduce {
            return ring_all_reduce(nodes, bytes);
        }
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        match self {
            Pattern::Permutation => {
                // Sattolo's algorithm: a uniformly random cyclic permutation, so no node
                // sends to itself.
                let mut p: Vec<u32> = (0..nodes).collect();
                for i in (1..nodes as usize).rev() {
                    let j = rng.random_range(0..i);
                    p.swap(i, j);
                }
                pairs.extend((0..nodes).map(|i| (i, p[i as usize])));
            }
            Pattern::Incast(n) => {
                pairs.extend((1..=n.min(nodes.saturating_sub(1))).map(|i| (i, 0)))
            }
            Pattern::AllToAll => {
                for s in 0..nodes {
                    pairs.extend((0..nodes).filter(|&d| d != s).map(|d| (s, d)));
                }
            }
            // Generated above, with its triggers.
            Pattern::RingAllReduce => {}
            Pattern::Random(n) => {
                for _ in 0..n {
                    let s = rng.random_range(0..nodes);
                    let d = (s + rng.random_range(1..nodes)) % nodes;
                    pairs.push((s, d));
                }
            }
        }
        TrafficMatrix {
            nodes,
            flows: pairs
                .into_iter()
                .enumerate()
                .map(|(i, (src, dst))| TmFlow {
                    id: i as u64 + 1,
                    src,
                    dst,
                    bytes,
                    start: Start::AtPs(0),
                    done_trigger: None,
                    recv_trigger: None,
                })
                .collect(),
            triggers: FxHashMap::default(),
        }
    }

    /// Flows [`Pattern::generate`] makes over `nodes` nodes (to refuse huge requests first).
    pub fn flow_count(self, nodes: u32) -> u64 {
        match self {
            Pattern::Permutation => u64::from(nodes),
            Pattern::Incast(n) => u64::from(n.min(nodes.saturating_sub(1))),
            Pattern::AllToAll => u64::from(nodes) * u64::from(nodes.saturating_sub(1)),
            Pattern::Random(n) => n,
            Pattern::RingAllReduce => 2 * u64::from(nodes.saturating_sub(1)) * u64::from(nodes),
        }
    }
}

/// [`Pattern::RingAllReduce`]: flow `k N + i + 1` is step k's chunk from node i to i + 1; it
/// starts at 0 for k = 0, else on trigger `k N + i`, which the chunk of step k - 1 into node
/// i fires when it completes.
fn ring_all_reduce(nodes: u32, bytes: u64) -> TrafficMatrix {
    let n = u64::from(nodes);
    // size / N rounded up (at least 1 byte): every byte of the buffer moves.
    let chunk = bytes.div_ceil(n.max(1)).max(1);
    let steps = 2 * n.saturating_sub(1);
    let mut flows = Vec::with_capacity((steps * n) as usize);
    let mut triggers = FxHashMap::default();
    for k in 0..steps {
        for i in 0..n {
            let next = (i + 1) % n;
            flows.push(TmFlow {
                id: k * n + i + 1,
                src: i as u32,
                dst: next as u32,
                bytes: chunk,
                start: if k == 0 {
                    Start::AtPs(0)
                } else {
                    Start::Trigger((k * n + i) as u32)
                },
                // Node `next` forwards in step k + 1 once this chunk is in.
                done_trigger: None,
                recv_trigger: (k + 1 < steps).then_some(((k + 1) * n + next) as u32),
            });
            if k > 0 {
                triggers.insert((k * n + i) as u32, TriggerKind::Oneshot);
            }
        }
    }
    TrafficMatrix {
        nodes,
        flows,
        triggers,
    }
}

impl std::str::FromStr for Pattern {
    type Err = String;

    fn from_str(s: &str) -> Result<Pattern, String> {
        Pattern::parse(s).ok_or_else(|| {
            format!(
                "unknown pattern `{s}`{}; use {}",
                aifabric_model::did_you_mean_hint(
                    s,
                    &[
                        "permutation",
                        "incast",
                        "all-to-all",
                        "random",
                        "ring-allreduce"
                    ]
                ),
                Pattern::HELP
            )
        })
    }
}
