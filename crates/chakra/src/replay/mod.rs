//! Replay: the times of a trace's nodes, streamed rank by rank.
//!
//! Semantics (each node starts when all its inputs have finished):
//! - inputs are the node's data and control dependencies (ids of its own file);
//! - `COMP` nodes also wait for the previous `COMP` node of their file: one compute stream
//!   per rank, in file order (kernels of a stream run in launch order). A compute node lasts
//!   `duration_micros`, else `num_ops` at the roofline, else nothing;
//! - `COMM_COLL` nodes of a process group are matched across ranks by their order in each
//!   file (the k-th collective of `pg_name` on every member is one collective); it starts
//!   when every member has reached it and the group's previous collective has finished
//!   (collectives of one group serialize), lasts what the [`Timer`] says, and ends on every
//!   member at once;
//! - `COMM_SEND` / `COMM_RECV` pairs are matched by (source, destination, `comm_tag`) in file
//!   order; the transfer starts when both sides are ready;
//! - other known types take no time; unknown types too, counted as warnings.
//!
//! A node's time is then a pure function of its inputs' times (a longest path through the
//! DAG of all ranks), so the order in which ranks are read does not change any time.
//! Times are integer picoseconds: durations in microseconds add up exactly.
//!
//! Memory is bounded by a window of nodes per rank, not by the files: a rank is read ahead
//! at most `window` unfinished nodes, and the finish times of the last `window` finished
//! nodes are kept. A dependency on an older node (rare: e.g. an optimizer step on a gradient
//! collective) takes the latest finish time of all forgotten nodes, an upper bound; when
//! that bound decides a node's start, it is counted (`window_bound`) so exactness is never
//! silently lost.

mod collectives;
mod critical;
mod diagnose;
mod error;
mod feed;
mod groups;
mod rank;
mod report;
mod sim;
mod transfers;

pub use aifabric_model::time::{ps, secs, Ps};
pub use error::ReplayError;
pub use groups::{groups_of, infer_groups, Groups, WORLD};
pub use report::{PathStep, RankTime, Replay};

aifabric_model::id_type!(
    /// A rank of the trace: the index of its file in the [`TraceSet`] (`<prefix>.<rank>.et`).
    RankId
);

/// A node of a Chakra execution trace: the trace's own id (`Node.id`, unique within its rank's
/// file), kept apart from the byte counts and times it sits next to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct NodeId(u64);

impl NodeId {
    /// The node with trace id `id`.
    pub const fn new(id: u64) -> Self {
        NodeId(id)
    }

    /// The trace id.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl std::fmt::Display for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::fmt::Display for RankId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

use crate::io::{Reader, TraceSet, Warnings};
use crate::proto::NodeCore;
use aifabric_workload::{Algo, Op};
use collectives::GroupState;
use critical::{kind_name, Links};
use feed::{Batch, DecodeCx, Feed, BATCH};
use rank::{Rank, Seen};
use rayon::prelude::*;
use report::node_names;
use rustc_hash::FxHashMap;
use serde::Serialize;
use sim::Sim;

/// Durations of communication.
pub trait Timer {
    /// One collective of `bytes` (nccl-tests convention) on process group `pg`; `op` `None`
    /// is a barrier.
    fn collective(
        &mut self,
        pg: u32,
        op: Option<Op>,
        algo: Option<Algo>,
        bytes: u64,
    ) -> Result<Ps, ReplayError>;

    /// One point-to-point transfer from rank `src` to rank `dst` (on `pg` if the trace says).
    fn p2p(
        &mut self,
        src: RankId,
        dst: RankId,
        pg: Option<u32>,
        bytes: u64,
    ) -> Result<Ps, ReplayError>;
}

/// How to replay.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ReplayConfig {
    /// Effective FLOP/s of a GPU (peak x efficiency), for `num_ops`.
    pub flops_per_s: f64,
    /// Finished nodes remembered per rank, and the most unfinished nodes read ahead per rank.
    pub window: u32,
}

/// Largest window, nodes per rank.
pub const MAX_WINDOW: u32 = 1 << 24;

/// Unfinished nodes a rank is first read ahead: reading further than where it waits for
/// other ranks only fills memory. Doubled (up to the window) whenever no rank can progress.
const LOOKAHEAD: u32 = 64;

/// Replay the trace in `set` with `groups`, timing communication with `timer`.
pub fn replay<T: Timer + Send>(
    set: &TraceSet,
    groups: &Groups,
    timer: &mut T,
    cfg: ReplayConfig,
    progress: &dyn Fn(u64),
) -> Result<Replay, ReplayError> {
    if cfg.window == 0 || cfg.window > MAX_WINDOW {
        return Err(ReplayError::Input(format!(
            "the window must be 1 to {MAX_WINDOW} nodes, not {}",
            cfg.window
        )));
    }
    if !(cfg.flops_per_s.is_finite() && cfg.flops_per_s > 0.0) {
        return Err(ReplayError::Input(format!(
            "the roofline must be a positive number of FLOP/s, not {}",
            cfg.flops_per_s
        )));
    }
    let mut ranks = Vec::with_capacity(set.files.len());
    let mut feeds = Vec::with_capacity(set.files.len());
    for f in &set.files {
        let (reader, _) = Reader::open(f).map_err(|e| match &e.problem {
            crate::io::Problem::Io(io) if io.to_string().contains("Too many open files") => {
                ReplayError::TooManyOpenFiles { source: e }
            }
            _ => e.into(),
        })?;
        let file = reader.file().to_owned();
        feeds.push(Feed {
            reader: Some(reader),
            file: file.clone(),
            seq: FxHashMap::default(),
            p2p_seq: FxHashMap::default(),
            warnings: Warnings::default(),
            node: NodeCore::default(),
            ahead: None,
            spare: Batch::default(),
        });
        ranks.push(Rank {
            file,
            pending: Vec::new(),
            free: Vec::new(),
            live: 0,
            by_id: FxHashMap::default(),
            forward: FxHashMap::default(),
            finished: vec![
                (NodeId::new(0), Ps::ZERO, None);
                cfg.window.next_power_of_two() as usize
            ],
            seen: Seen::default(),
            horizon: (Ps::ZERO, None),
            last_comp: None,
            ended: false,
            end: (Ps::ZERO, None),
            compute: Ps::ZERO,
            nodes: 0,
        });
    }
    let mut sim = Sim {
        batches: (0..ranks.len()).map(|_| Batch::default()).collect(),
        ranks,
        scratch: Vec::new(),
        groups,
        timer,
        links: Links::default(),
        pgs: (0..groups.len()).map(|_| GroupState::default()).collect(),
        channels: FxHashMap::default(),
        ready: Vec::new(),
        window_bound: 0,
        collectives: 0,
        transfers: 0,
        lookahead: LOOKAHEAD.min(cfg.window),
    };
    for g in &mut sim.pgs {
        g.link = None;
    }
    let n = sim.ranks.len() as u32;
    let cx = DecodeCx {
        groups,
        world: groups.find(WORLD),
        flops_per_s: cfg.flops_per_s,
        ranks: n,
    };
    loop {
        // Take the batches decoded ahead where the current one is used up.
        let mut any = false;
        for (b, f) in sim.batches.iter_mut().zip(&mut feeds) {
            if b.dry() && b.failure.is_none() && !b.last {
                if let Some(next) = f.ahead.take() {
                    f.spare = std::mem::replace(b, next);
                    any = true;
                }
            }
        }
        // Replay what is decoded while the next batches are decoded (in parallel over
        // ranks): each rank is always one batch ahead.
        let (replayed, decoded) = rayon::join(
            || -> Result<bool, ReplayError> {
                let mut any = false;
                for r in 0..n {
                    any |= sim.pump(RankId::new(r))?;
                }
                Ok(any)
            },
            || {
                feeds
                    .par_iter_mut()
                    .enumerate()
                    .filter(|(_, f)| f.ahead.is_none() && f.reader.is_some())
                    .map(|(r, f)| {
                        f.ahead = Some(f.decode(&cx, RankId::from_idx(r), BATCH));
                        1
                    })
                    .sum::<usize>()
                    > 0
            },
        );
        any |= replayed? | decoded;
        progress(sim.ranks.iter().map(|r| r.nodes).sum());
        let unread = |sim: &Sim<T>, feeds: &[Feed]| {
            feeds
                .iter()
                .any(|f| f.reader.is_some() || f.ahead.as_ref().is_some_and(|b| !b.dry()))
                || sim.batches.iter().any(|b| !b.dry())
        };
        if !any {
            if sim.lookahead < cfg.window && unread(&sim, &feeds) {
                sim.lookahead = sim.lookahead.saturating_mul(2).min(cfg.window);
                continue;
            }
            break;
        }
    }
    let unread = feeds
        .iter()
        .any(|f| f.reader.is_some() || f.ahead.as_ref().is_some_and(|b| !b.dry()))
        || sim.batches.iter().any(|b| !b.dry());
    if unread {
        // A damaged file behind the full window says more.
        let failure = sim
            .batches
            .iter_mut()
            .find_map(|b| b.failure.take())
            .or_else(|| {
                feeds
                    .iter_mut()
                    .find_map(|f| f.ahead.as_mut().and_then(|b| b.failure.take()))
            });
        if let Some(e) = failure {
            return Err(e);
        }
        sim.check_cycles()?;
        return Err(ReplayError::Input(format!(
            "the replay window ({} nodes per rank) is full on every rank that still has nodes \
             to read, and nothing can finish; raise --window",
            cfg.window
        )));
    }
    sim.check_done()?;
    // The critical path: back from the last node to end (ties: the lowest rank).
    let mut last = (Ps::ZERO, None);
    for rk in &sim.ranks {
        if rk.end.0 > last.0 || last.1.is_none() {
            last = rk.end;
        }
    }
    if last.0 == Ps::MAX {
        return Err(ReplayError::Input(format!(
            "the trace's iteration does not fit the replay's clock (2^64 ps, about 213 days): \
             its durations, sizes or roofline are far beyond a training step; check {}",
            set.dir.display()
        )));
    }
    let mut steps: Vec<(RankId, NodeId, u8, Ps, Ps)> = Vec::new();
    let mut l = last.1;
    while let Some(i) = l {
        let x = sim.links.v[i.idx()];
        steps.push((x.rank, x.id, x.kind, x.start, x.finish));
        l = x.prev;
    }
    steps.reverse();
    let names = node_names(set, &steps)?;
    let critical_path = steps
        .iter()
        .zip(names)
        .map(|(&(rank, id, kind, s, f), name)| PathStep {
            rank,
            id,
            name,
            kind: kind_name(kind),
            start_s: secs(s),
            end_s: secs(f),
        })
        .collect();
    let per_rank: Vec<RankTime> = sim
        .ranks
        .iter()
        .enumerate()
        .map(|(r, rk)| RankTime {
            rank: RankId::from_idx(r),
            iteration_s: secs(rk.end.0),
            compute_s: secs(rk.compute),
            exposed_comm_s: secs(rk.end.0.since(rk.compute)),
            nodes: rk.nodes,
        })
        .collect();
    Ok(Replay {
        ranks: n,
        nodes: sim.ranks.iter().map(|r| r.nodes).sum(),
        iteration_s: secs(last.0),
        per_rank,
        critical_path,
        collectives: sim.collectives,
        transfers: sim.transfers,
        warnings: feeds.iter().fold(Warnings::default(), |mut w, f| {
            w.add(&f.warnings);
            w
        }),
        window_bound: sim.window_bound,
    })
}
