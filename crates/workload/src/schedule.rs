//! Collective algorithms as phases of concurrent transfers between ranks.
//!
//! A [`Schedule`] is a list of [`Phase`]s run one after the other. A phase is a set of
//! transfers that run at the same time (one communication step of every rank), repeated
//! `repeat` times: the ring's 2(n - 1) steps all have the same pattern (rank i sends a chunk
//! to rank i + 1), so the engine simulates the pattern once and multiplies its bandwidth time.
//!
//! **Dependencies.** Each step of a phase is also a link in the chains of dependencies that
//! set the latency of a pipelined collective: at step s, rank `dst` can go on once it has
//! received what `src` sent at step s - 1. A phase is `steps` such steps in a row over its
//! transfers (usually `steps == repeat`; a pipelined tree moves its data once but its chunks
//! cross every level: `repeat` 1, `steps` the depth). Each step pays the per-step software
//! latency once; the engine charges path latency only along the chains.
//!
//! Sizes follow nccl-tests (doc/PERFORMANCE.md): `bytes` is the whole buffer of an
//! all-reduce, the whole output of an all-gather, the whole input of a reduce-scatter and the
//! per-rank send buffer of an all-to-all. Ranks are positions in a group, `0..n`.
//!
//! **Channels.** NCCL splits a collective over channels, each an equal share with its own
//! connections. Rings of different channels are rotated inside every scale-up domain, so
//! channel c leaves a domain from its (c - 1)-th GPU and enters the next at its c-th: with as
//! many channels as GPUs per domain, every GPU's NIC carries one ring (rail-aligned rings, as
//! NCCL builds on 8-GPU servers with 8 NICs). Other algorithms run each channel on the same
//! pattern with its share.

use crate::collective::Op;
use serde::Serialize;

/// One transfer: `bytes` from rank `src` to rank `dst` of a group.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Transfer {
    /// Sending rank.
    pub src: u32,
    /// Receiving rank.
    pub dst: u32,
    /// Bytes carried.
    pub bytes: f64,
    /// Channel (NCCL ring / channel index): transfers of different channels are different
    /// flows (connections) even between the same ranks.
    pub channel: u32,
}

/// Transfers that run concurrently, `repeat` times in a row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Phase {
    /// The transfers of one step.
    pub transfers: Vec<Transfer>,
    /// How many times the transfers' bytes move (bandwidth term).
    pub repeat: u32,
    /// How many dependency steps the pattern makes (latency term): each pays the per-step
    /// software latency, and data crosses a transfer's path once per step.
    pub steps: u32,
}

impl Phase {
    /// A phase of `repeat` identical steps.
    pub fn repeated(transfers: Vec<Transfer>, repeat: u32) -> Phase {
        Phase {
            transfers,
            repeat,
            steps: repeat,
        }
    }
}

/// A collective as phases, made on demand: a pairwise all-to-all has n - 1 phases of n
/// transfers each, too many to hold at 16k ranks (n^2 transfers), so its phases are
/// generated when asked for.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Schedule {
    listed: Vec<Phase>,
    /// Pairwise rounds (all-to-all): round k (1..n) sends `bytes` from rank i to i + k over
    /// `channels` channels.
    rounds: Option<Rounds>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
struct Rounds {
    n: u32,
    bytes: f64,
    channels: u32,
}

impl Schedule {
    /// A schedule of these phases.
    pub fn new(phases: Vec<Phase>) -> Schedule {
        Schedule {
            listed: phases,
            rounds: None,
        }
    }

    /// Number of phases.
    pub fn len(&self) -> usize {
        self.rounds
            .map_or(self.listed.len(), |r| r.n.saturating_sub(1) as usize)
    }

    /// Whether there is no phase.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Phase `i` (`0..len()`).
    ///
    /// # Panics
    ///
    /// Panics if `i` is out of range.
    pub fn phase(&self, i: usize) -> std::borrow::Cow<'_, Phase> {
        match self.rounds {
            None => std::borrow::Cow::Borrowed(&self.listed[i]),
            Some(r) => {
                assert!(i < self.len(), "phase {i} of {}", self.len());
                let k = i as u32 + 1;
                let ch = f64::from(r.channels);
                std::borrow::Cow::Owned(Phase::repeated(
                    (0..r.channels)
                        .flat_map(|c| {
                            (0..r.n).map(move |src| Transfer {
                                src,
                                dst: (src + k) % r.n,
                                bytes: r.bytes / ch,
                                channel: c,
                            })
                        })
                        .collect(),
                    1,
                ))
            }
        }
    }

    /// The phases in order.
    pub fn phases(&self) -> impl Iterator<Item = std::borrow::Cow<'_, Phase>> + '_ {
        (0..self.len()).map(|i| self.phase(i))
    }

    /// Number of latency-paying steps.
    pub fn steps(&self) -> u64 {
        match self.rounds {
            Some(r) => u64::from(r.n.saturating_sub(1)),
            None => self.listed.iter().map(|p| u64::from(p.steps)).sum(),
        }
    }

    /// Channels used (one more than the highest channel index; 1 if no transfer).
    pub fn channel_count(&self) -> u32 {
        match self.rounds {
            Some(r) => r.channels.max(1),
            None => self
                .listed
                .iter()
                .flat_map(|p| p.transfers.iter().map(|t| t.channel + 1))
                .max()
                .unwrap_or(1),
        }
    }

    /// Transfers in the biggest phase.
    pub fn widest(&self) -> usize {
        match self.rounds {
            Some(r) => (r.n * r.channels) as usize,
            None => self
                .listed
                .iter()
                .map(|p| p.transfers.len())
                .max()
                .unwrap_or(0),
        }
    }

    /// Bytes of every phase once, its repeats not counted (what a simulator that runs
    /// each phase once moves), per group: (transfers, bytes). O(1) for pairwise rounds.
    pub fn distinct_work(&self) -> (u64, f64) {
        match self.rounds {
            Some(r) => {
                let phases = u64::from(r.n.saturating_sub(1));
                let per = u64::from(r.n) * u64::from(r.channels.max(1));
                (phases * per, phases as f64 * f64::from(r.n) * r.bytes)
            }
            None => self.listed.iter().fold((0, 0.0), |(n, b), p| {
                (
                    n + p.transfers.len() as u64,
                    b + p.transfers.iter().map(|t| t.bytes).sum::<f64>(),
                )
            }),
        }
    }

    /// Bytes each rank sends in total, summed over ranks (for checks).
    pub fn wire_bytes(&self) -> f64 {
        self.phases()
            .map(|p| f64::from(p.repeat) * p.transfers.iter().map(|t| t.bytes).sum::<f64>())
            .sum()
    }
}

/// How a collective is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Algo {
    /// Ring: n - 1 steps per phase (reduce-scatter, then all-gather for an all-reduce).
    Ring,
    /// NCCL's double binary tree (all-reduce): two complementary trees, each carrying half
    /// the data, pipelined: a reduce up both trees, then a broadcast down.
    Tree,
    /// Recursive halving-doubling (all-reduce, reduce-scatter, all-gather; n a power of 2).
    HalvingDoubling,
    /// Direct all-to-all, scheduled as n - 1 pairwise-exchange rounds (round k: rank i sends
    /// to i + k), the MPI pairwise algorithm.
    Direct,
    /// Hierarchical: the same operation inside each scale-up domain (ring), then across
    /// domains on the NICs (ring), then inside again (all-reduce only).
    Hierarchical,
    /// NVLS (NVLink SHARP): the NVSwitch reduces and multicasts in the network, inside one
    /// scale-up domain (all-reduce, all-gather, reduce-scatter). No rank-to-rank schedule:
    /// the engine times it in closed form ([`crate::nccl::nvls_bandwidth_s`]).
    Nvls,
    /// PAT (parallel aggregated trees, NCCL 2.23+): all-gather and reduce-scatter with one
    /// GPU per node, at logarithmic latency; its transfers are halving-doubling's
    /// (distance-halving exchanges) when the rank count is a power of two, else the ring's.
    Pat,
    /// The fastest applicable algorithm for the collective and size, chosen by the engine's
    /// tuner; has no schedule of its own.
    Auto,
}

impl Algo {
    /// Parse a CLI / YAML name.
    pub fn parse(s: &str) -> Option<Algo> {
        Some(match s {
            "ring" => Algo::Ring,
            "tree" => Algo::Tree,
            "hd" | "halving_doubling" | "halving-doubling" => Algo::HalvingDoubling,
            "direct" => Algo::Direct,
            "hierarchical" => Algo::Hierarchical,
            "nvls" => Algo::Nvls,
            "pat" => Algo::Pat,
            "auto" => Algo::Auto,
            _ => return None,
        })
    }

    /// The name [`Algo::parse`] reads back.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Ring => "ring",
            Algo::Tree => "tree",
            Algo::HalvingDoubling => "halving-doubling",
            Algo::Direct => "direct",
            Algo::Hierarchical => "hierarchical",
            Algo::Nvls => "nvls",
            Algo::Pat => "pat",
            Algo::Auto => "auto",
        }
    }

    /// The default for an operation (NCCL's bandwidth-optimal choices).
    pub fn default_for(op: Op) -> Algo {
        match op {
            Op::AllToAll => Algo::Direct,
            _ => Algo::Ring,
        }
    }
}

impl std::str::FromStr for Algo {
    type Err = String;

    fn from_str(s: &str) -> Result<Algo, String> {
        Algo::parse(s).ok_or_else(|| {
            format!(
                "unknown algorithm `{s}`{}; use auto, ring, tree, nvls, pat, hd, direct or \
                 hierarchical",
                aifabric_model::did_you_mean_hint(
                    s,
                    &[
                        "auto",
                        "ring",
                        "tree",
                        "nvls",
                        "pat",
                        "hd",
                        "direct",
                        "hierarchical"
                    ]
                )
            )
        })
    }
}

impl std::fmt::Display for Algo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A collective that cannot be scheduled as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScheduleError(pub String);

/// Ring of channel `c`: position p holds rank `domain(p) * g + (p % g + c) % g` (rotated
/// inside each domain of g ranks; no rotation when g does not divide n).
fn ring(n: u32, chunk: f64, repeat: u32, g: u32, channels: u32) -> Phase {
    let g = if g > 0 && n.is_multiple_of(g) { g } else { 1 };
    let at = |p: u32, c: u32| p - p % g + (p % g + c) % g;
    let mut transfers = Vec::with_capacity((n * channels) as usize);
    for c in 0..channels {
        for p in 0..n {
            transfers.push(Transfer {
                src: at(p, c),
                dst: at((p + 1) % n, c),
                bytes: chunk / f64::from(channels),
                channel: c,
            });
        }
    }
    Phase::repeated(transfers, repeat)
}

/// Every transfer of `phases` split over `channels`: a transfer of channel k goes to
/// channels `k x channels .. (k + 1) x channels`.
fn split(phases: Vec<Phase>, channels: u32) -> Vec<Phase> {
    if channels <= 1 {
        return phases;
    }
    phases
        .into_iter()
        .map(|p| Phase {
            transfers: (0..channels)
                .flat_map(|c| {
                    p.transfers.iter().map(move |t| Transfer {
                        bytes: t.bytes / f64::from(channels),
                        channel: t.channel * channels + c,
                        ..*t
                    })
                })
                .collect(),
            repeat: p.repeat,
            steps: p.steps,
        })
        .collect()
}

/// The phases of `op` by `algo` over `n` ranks of `bytes` (nccl-tests sizes) on `channels`
/// channels. `domain` is the scale-up domain size (ranks `k*domain..(k+1)*domain` share
/// one), used by rings to rotate channels and by [`Algo::Hierarchical`].
pub fn schedule(
    op: Op,
    algo: Algo,
    n: u32,
    bytes: f64,
    domain: u32,
    channels: u32,
) -> Result<Schedule, ScheduleError> {
    let channels = channels.max(1);
    if n == 0 {
        return Err(ScheduleError("a collective needs at least one rank".into()));
    }
    if !(bytes.is_finite() && bytes >= 0.0) {
        return Err(ScheduleError(format!("message size {bytes} is not >= 0")));
    }
    if n == 1 {
        return Ok(Schedule::default());
    }
    let nf = f64::from(n);
    let phases = match (op, algo) {
        (Op::AllReduce, Algo::Ring) => vec![ring(n, bytes / nf, 2 * (n - 1), domain, channels)],
        (Op::ReduceScatter | Op::AllGather, Algo::Ring) => {
            vec![ring(n, bytes / nf, n - 1, domain, channels)]
        }
        (Op::AllReduce, Algo::Tree)
            if domain > 1 && n > domain && n.is_multiple_of(domain) && channels == domain =>
        {
            node_tree(n, bytes, domain)
        }
        (Op::AllReduce, Algo::Tree) => split(tree(n, bytes), channels),
        (Op::AllReduce | Op::ReduceScatter | Op::AllGather, Algo::HalvingDoubling) => {
            if !n.is_power_of_two() {
                return Err(ScheduleError(format!(
                    "recursive halving-doubling needs a power-of-two rank count, not {n}"
                )));
            }
            split(halving_doubling(op, n, bytes), channels)
        }
        (Op::AllToAll, Algo::Direct) => {
            return Ok(Schedule {
                listed: Vec::new(),
                rounds: Some(Rounds {
                    n,
                    bytes: bytes / nf,
                    channels,
                }),
            })
        }
        (Op::ReduceScatter | Op::AllGather, Algo::Pat) if n.is_power_of_two() => {
            split(halving_doubling(op, n, bytes), channels)
        }
        (Op::ReduceScatter | Op::AllGather, Algo::Pat) => {
            vec![ring(n, bytes / nf, n - 1, domain, channels)]
        }
        (_, Algo::Nvls) => {
            return Err(ScheduleError(
                "nvls is a reduction inside the NVSwitch, not a schedule of transfers".into(),
            ))
        }
        (Op::AllReduce | Op::ReduceScatter | Op::AllGather, Algo::Hierarchical) => {
            let h = hierarchical(op, n, bytes, domain)?;
            return Ok(Schedule::new(split(h.listed, channels)));
        }
        (_, Algo::Auto) => {
            return Err(ScheduleError(
                "auto is a choice among algorithms, not a schedule: let the tuner pick one".into(),
            ))
        }
        _ => {
            return Err(ScheduleError(format!(
                "{} has no {} algorithm here",
                op.as_str(),
                algo.name()
            )))
        }
    };
    Ok(Schedule::new(phases))
}

/// Double binary tree: tree A is the heap-shaped tree over ranks (parent of i is (i - 1) / 2),
/// tree B the same over the reversed rank order, so most leaves of A are inner nodes of B.
/// Each tree carries half the buffer; pipelining makes every edge of both trees busy at once,
/// first upward (reduce), then downward (broadcast). As in NCCL, the two trees run on
/// different channels (A on channel 0, B on 1), so their chains never mix. The bytes move
/// once per edge (`repeat` is 1) while the chunks cross every level of the tree (`steps` is
/// its depth in levels), so a long edge's latency is paid once per direction on each chain
/// that crosses it.
fn tree(n: u32, bytes: f64) -> Vec<Phase> {
    let half = bytes / 2.0;
    let mut up = Vec::with_capacity(2 * n as usize);
    for i in 1..n {
        let p = (i - 1) / 2;
        up.push(Transfer {
            src: i,
            dst: p,
            bytes: half,
            channel: 0,
        });
        up.push(Transfer {
            src: n - 1 - i,
            dst: n - 1 - p,
            bytes: half,
            channel: 1,
        });
    }
    // Pipeline fill: the depth of the heap in levels, up and down.
    let depth = 32 - n.leading_zeros();
    up_and_down(up, depth)
}

/// NCCL's tree over scale-up domains (`src/graph/trees.cc`: a chain inside each node, a
/// double binary tree between nodes), one channel per GPU of a domain of `g`: channel c
/// carries `bytes / g`; inside each domain its chain runs from local rank c + 1 through the
/// others to local rank c, the domain's head on that channel, whose NIC joins the two trees
/// between domains (heap-shaped over the domains and over their reverse order, half of the
/// channel's bytes each). Up (reduce), then down (broadcast), each pipelined over the chain
/// and the tree's depth. Every NIC heads one channel, as the rail-aligned rings.
fn node_tree(n: u32, bytes: f64, g: u32) -> Vec<Phase> {
    let domains = n / g;
    let per = bytes / f64::from(g);
    let mut up = Vec::new();
    for c in 0..g {
        // Tree A on channel 2c, tree B on 2c + 1: their chains never mix.
        for (t, ch) in [(0u32, 2 * c), (1, 2 * c + 1)] {
            let half = per / 2.0;
            for d in 0..domains {
                let base = d * g;
                // Chain: local c + k + 1 -> c + k (mod g), k = 0..g-2, ends at the head c.
                for k in 0..g - 1 {
                    up.push(Transfer {
                        src: base + (c + k + 1) % g,
                        dst: base + (c + k) % g,
                        bytes: half,
                        channel: ch,
                    });
                }
            }
            for i in 1..domains {
                let p = (i - 1) / 2;
                let (a, b) = if t == 0 {
                    (i, p)
                } else {
                    (domains - 1 - i, domains - 1 - p)
                };
                up.push(Transfer {
                    src: a * g + c,
                    dst: b * g + c,
                    bytes: half,
                    channel: ch,
                });
            }
        }
    }
    let depth = (g - 1) + (32 - domains.leading_zeros());
    up_and_down(up, depth)
}

/// Recursive halving (reduce-scatter): step k exchanges half of what is left with the rank
/// at distance n / 2^(k+1); doubling (all-gather) runs the same steps in reverse order.
fn halving_doubling(op: Op, n: u32, bytes: f64) -> Vec<Phase> {
    let steps = n.trailing_zeros();
    let per = |k: u32| {
        Phase::repeated(
            (0..n)
                .map(|i| Transfer {
                    src: i,
                    dst: i ^ (n >> (k + 1)),
                    bytes: bytes / f64::from(1u32 << (k + 1)),
                    channel: 0,
                })
                .collect(),
            1,
        )
    };
    match op {
        Op::ReduceScatter => (0..steps).map(per).collect(),
        Op::AllGather => (0..steps).rev().map(per).collect(),
        _ => (0..steps)
            .map(|k| Phase {
                repeat: 2,
                steps: 2,
                ..per(k)
            })
            .collect(),
    }
}

/// Hierarchical: ring inside every scale-up domain of `g` ranks, ring across domains among
/// the ranks with the same local index (g rings side by side), ring inside again.
fn hierarchical(op: Op, n: u32, bytes: f64, g: u32) -> Result<Schedule, ScheduleError> {
    if g == 0 || !n.is_multiple_of(g) {
        return Err(ScheduleError(format!(
            "hierarchical needs whole scale-up domains: {n} ranks are not a multiple of {g}"
        )));
    }
    let domains = n / g;
    let gf = f64::from(g);
    let df = f64::from(domains);
    let inside = |chunk: f64, repeat: u32| {
        Phase::repeated(
            (0..n)
                .map(|i| Transfer {
                    src: i,
                    dst: i - i % g + (i % g + 1) % g,
                    bytes: chunk,
                    channel: 0,
                })
                .collect(),
            repeat,
        )
    };
    let across = |chunk: f64, repeat: u32| {
        Phase::repeated(
            (0..n)
                .map(|i| Transfer {
                    src: i,
                    dst: (i + g) % n,
                    bytes: chunk,
                    channel: 0,
                })
                .collect(),
            repeat,
        )
    };
    let mut phases = Vec::new();
    // Inside: reduce-scatter (or all-gather) of the whole buffer over g ranks.
    if g > 1 && matches!(op, Op::AllReduce | Op::ReduceScatter) {
        phases.push(inside(bytes / gf, g - 1));
    }
    if domains > 1 {
        // Across: each rank owns bytes / g; ring over the domains.
        let (chunk, repeat) = match op {
            Op::AllReduce => (bytes / gf / df, 2 * (domains - 1)),
            _ => (bytes / gf / df, domains - 1),
        };
        phases.push(across(chunk, repeat));
    }
    if g > 1 && matches!(op, Op::AllReduce | Op::AllGather) {
        phases.push(inside(bytes / gf, g - 1));
    }
    Ok(Schedule::new(phases))
}

/// A tree's two passes, reduce `up` then broadcast down the same edges reversed, each
/// pipelined over `depth` steps.
fn up_and_down(up: Vec<Transfer>, depth: u32) -> Vec<Phase> {
    let down = up
        .iter()
        .map(|t| Transfer {
            src: t.dst,
            dst: t.src,
            ..*t
        })
        .collect();
    [up, down]
        .into_iter()
        .map(|transfers| Phase {
            transfers,
            repeat: 1,
            steps: depth,
        })
        .collect()
}
