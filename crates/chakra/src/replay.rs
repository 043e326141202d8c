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

use crate::io::{Reader, TraceError, TraceSet, Warnings};
use crate::proto::{attr, AttributeProto, CollectiveCommType, Node, NodeCore, NodeType};
use aifabric_workload::{Algo, Op};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::collections::VecDeque;

/// Picoseconds.
pub type Ps = u64;

/// Seconds to picoseconds, rounded.
pub fn ps(seconds: f64) -> Ps {
    (seconds * 1e12).round().max(0.0) as Ps
}

/// Picoseconds to seconds.
pub fn secs(t: Ps) -> f64 {
    t as f64 * 1e-12
}

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
    fn p2p(&mut self, src: u32, dst: u32, pg: Option<u32>, bytes: u64) -> Result<Ps, ReplayError>;
}

/// Process groups: names and member ranks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Groups {
    /// Name of each group.
    pub names: Vec<String>,
    /// Ranks of each group, in ring order.
    pub members: Vec<Vec<u32>>,
    by_name: FxHashMap<String, u32>,
    sorted: Vec<Vec<u32>>,
}

impl Groups {
    /// From `(pg_name, ranks)` pairs.
    pub fn new(groups: Vec<(String, Vec<u32>)>) -> Groups {
        let mut g = Groups::default();
        for (name, ranks) in groups {
            g.push(name, ranks);
        }
        g
    }

    fn push(&mut self, name: String, ranks: Vec<u32>) -> u32 {
        let i = self.names.len() as u32;
        let mut s = ranks.clone();
        s.sort_unstable();
        s.dedup();
        self.by_name.insert(name.clone(), i);
        self.names.push(name);
        self.members.push(ranks);
        self.sorted.push(s);
        i
    }

    /// Index of a group.
    pub fn find(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    /// Whether `rank` is in group `g`.
    pub fn contains(&self, g: u32, rank: u32) -> bool {
        self.sorted[g as usize].binary_search(&rank).is_ok()
    }

    /// Groups.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The name of the group of collectives without `pg_name`: every rank.
pub const WORLD: &str = "";

/// A trace that cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A file does not read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The trace directory or its groups.
    #[error("{0}")]
    Input(String),
    /// A node's content or the DAG is wrong (file, node, what, hint).
    #[error("{file}: node {node}: {what}")]
    Node {
        /// File.
        file: String,
        /// Node id.
        node: u64,
        /// What is wrong, with the fix.
        what: String,
    },
    /// A communication cannot be timed.
    #[error("{0}")]
    Sim(String),
}

impl ReplayError {
    /// Whether the input is at fault (exit code 2) rather than the fabric.
    pub fn is_input(&self) -> bool {
        !matches!(self, ReplayError::Sim(_))
    }
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

/// What a node does, compactly.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Comp(Ps),
    Coll {
        pg: u32,
        seq: u32,
        op: Option<Op>,
        algo: Option<Algo>,
        bytes: u64,
    },
    Send {
        peer: u32,
        tag: u64,
        seq: u32,
        bytes: u64,
        pg: Option<u32>,
    },
    Recv {
        peer: u32,
        tag: u64,
        seq: u32,
        bytes: u64,
        pg: Option<u32>,
    },
    Nop,
}

/// A step of the critical path.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathStep {
    /// Rank whose node it is (for a collective: the member that arrived last).
    pub rank: u32,
    /// Node id.
    pub id: u64,
    /// Node name.
    pub name: String,
    /// `comp`, `coll`, `send`, `recv` or `other`.
    pub kind: &'static str,
    /// Start, seconds.
    pub start_s: f64,
    /// End, seconds.
    pub end_s: f64,
}

/// One rank's iteration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankTime {
    /// Rank.
    pub rank: u32,
    /// End of its last node, seconds.
    pub iteration_s: f64,
    /// Busy time of its compute stream, seconds.
    pub compute_s: f64,
    /// Iteration minus compute: the time its GPU waits on communication, seconds.
    pub exposed_comm_s: f64,
    /// Nodes.
    pub nodes: u64,
}

/// The replay of a trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Replay {
    /// Ranks.
    pub ranks: u32,
    /// Nodes, all ranks.
    pub nodes: u64,
    /// Iteration time: the last node's end, seconds.
    pub iteration_s: f64,
    /// Per rank.
    pub per_rank: Vec<RankTime>,
    /// The chain of nodes that decided the iteration time, first to last.
    pub critical_path: Vec<PathStep>,
    /// Collectives run (each counted once, not per member).
    pub collectives: u64,
    /// Point-to-point transfers.
    pub transfers: u64,
    /// Skipped content, counted.
    pub warnings: Warnings,
    /// Starts decided by the window's upper bound on a forgotten dependency (0: exact).
    pub window_bound: u64,
}

const NONE: u32 = u32::MAX;

/// A node on some path: the arena of critical-path links (reference counted, so only the
/// links some live node can still reach are kept).
#[derive(Clone, Copy)]
struct Link {
    rank: u32,
    id: u64,
    kind: u8,
    start: Ps,
    finish: Ps,
    prev: u32,
    refs: u32,
}

#[derive(Default)]
struct Links {
    v: Vec<Link>,
    free: Vec<u32>,
}

impl Links {
    fn new_link(&mut self, rank: u32, id: u64, kind: u8, start: Ps, finish: Ps, prev: u32) -> u32 {
        // `prev`'s reference moves into the new link.
        let l = Link {
            rank,
            id,
            kind,
            start,
            finish,
            prev,
            refs: 1,
        };
        match self.free.pop() {
            Some(i) => {
                self.v[i as usize] = l;
                i
            }
            None => {
                self.v.push(l);
                (self.v.len() - 1) as u32
            }
        }
    }

    fn retain(&mut self, l: u32) -> u32 {
        if l != NONE {
            self.v[l as usize].refs += 1;
        }
        l
    }

    fn release(&mut self, mut l: u32) {
        while l != NONE {
            let x = &mut self.v[l as usize];
            x.refs -= 1;
            if x.refs > 0 {
                return;
            }
            let prev = x.prev;
            self.free.push(l);
            l = prev;
        }
    }
}

/// A node read and not finished.
struct Pending {
    id: u64,
    kind: Kind,
    waiting: u32,
    ready: Ps,
    link: u32,
    /// Slots waiting for this node.
    waiters: Waiters,
    /// The start so far comes from the window's bound on a forgotten dependency.
    bound: bool,
}

/// Slots waiting for a node.
#[derive(Default)]
enum Waiters {
    #[default]
    None,
    One(u32),
    Two(u32, u32),
    Many(Vec<u32>),
}

impl Waiters {
    fn push(&mut self, slot: u32) {
        match self {
            Waiters::None => *self = Waiters::One(slot),
            Waiters::One(s) => *self = Waiters::Two(*s, slot),
            Waiters::Two(a, b) => *self = Waiters::Many(vec![*a, *b, slot]),
            Waiters::Many(v) => v.push(slot),
        }
    }

    fn first(&self) -> u32 {
        match self {
            Waiters::None => NONE,
            Waiters::One(s) | Waiters::Two(s, _) => *s,
            Waiters::Many(v) => v[0],
        }
    }

    fn slots(&self) -> Vec<u32> {
        match self {
            Waiters::None => vec![],
            Waiters::One(s) => vec![*s],
            Waiters::Two(a, b) => vec![*a, *b],
            Waiters::Many(v) => v.clone(),
        }
    }
}

/// A finished node remembered: (id, finish, path link); link `NONE` when empty.
type Remembered = (u64, Ps, u32);

struct Rank {
    file: String,
    pending: Vec<Pending>,
    free: Vec<u32>,
    live: u32,
    by_id: FxHashMap<u64, u32>,
    /// Waiters on ids not read yet (forward references).
    forward: FxHashMap<u64, Waiters>,
    /// Finished nodes, direct-mapped by id (a power-of-two table of at least `window`
    /// entries): with ids numbered densely, the last `window` ids.
    finished: Vec<Remembered>,
    seen: Seen,
    horizon: (Ps, u32),
    last_comp: Option<u64>,
    /// Its file was read to the end and checked.
    ended: bool,
    end: (Ps, u32),
    compute: Ps,
    nodes: u64,
}

/// Node ids met so far: a bitset from the first id met (ids are usually dense), a set for
/// ids outside it.
#[derive(Default)]
struct Seen {
    base: Option<u64>,
    bits: Vec<u64>,
    big: FxHashSet<u64>,
}

/// Span of the bitset, ids (2 MB per rank at most).
const SEEN_BITS: u64 = 1 << 24;

impl Seen {
    fn index(&self, id: u64) -> Option<u64> {
        let base = self.base?;
        id.checked_sub(base).filter(|&i| i < SEEN_BITS)
    }

    fn insert(&mut self, id: u64) -> bool {
        if self.base.is_none() {
            self.base = Some(id);
        }
        match self.index(id) {
            Some(i) => {
                let w = (i / 64) as usize;
                if w >= self.bits.len() {
                    self.bits.resize((w + 1).next_power_of_two(), 0);
                }
                let m = 1u64 << (i % 64);
                let fresh = self.bits[w] & m == 0;
                self.bits[w] |= m;
                fresh
            }
            None => self.big.insert(id),
        }
    }

    fn contains(&self, id: u64) -> bool {
        match self.index(id) {
            Some(i) => self
                .bits
                .get((i / 64) as usize)
                .is_some_and(|w| w & (1 << (i % 64)) != 0),
            None => self.big.contains(&id),
        }
    }
}

/// One collective of a group, as its members arrive.
struct Instance {
    arrived: u32,
    at: Ps,
    link: u32,
    last_rank: u32,
    last_id: u64,
    op: Option<Op>,
    algo: Option<Algo>,
    bytes: u64,
    first: (u32, u64),
    members: Vec<(u32, u32)>,
}

#[derive(Default)]
struct GroupState {
    base: u32,
    instances: VecDeque<Option<Instance>>,
    free_at: Ps,
    link: u32,
}

/// One side of a point-to-point transfer.
struct Side {
    rank: u32,
    slot: u32,
    id: u64,
    at: Ps,
    link: u32,
    bytes: u64,
    pg: Option<u32>,
}

/// A transfer whose first side arrived: (source, destination, tag, k) for the k-th of its
/// kind in the sender's and the receiver's files.
#[derive(Default)]
struct Channel {
    send: Option<Side>,
    recv: Option<Side>,
}

type ChannelKey = (u32, u32, u64, u32);

const K_COMP: u8 = 0;
const K_COLL: u8 = 1;
const K_SEND: u8 = 2;
const K_RECV: u8 = 3;
const K_OTHER: u8 = 4;

fn kind_name(k: u8) -> &'static str {
    match k {
        K_COMP => "comp",
        K_COLL => "coll",
        K_SEND => "send",
        K_RECV => "recv",
        _ => "other",
    }
}

/// One rank's file, decoded ahead in batches (in parallel over ranks).
struct Feed {
    reader: Option<Reader>,
    file: String,
    seq: FxHashMap<u32, u32>,
    p2p_seq: FxHashMap<(u32, u64, bool), u32>,
    warnings: Warnings,
    node: NodeCore,
    /// The next batch, decoded while the replay takes the current one.
    ahead: Option<Batch>,
    /// A used batch, its buffers kept for the next decoding.
    spare: Batch,
}

/// Decoded nodes of one rank, in file order.
#[derive(Default)]
struct Batch {
    ids: Vec<u64>,
    kinds: Vec<Kind>,
    dep_end: Vec<u32>,
    deps: Vec<u64>,
    next: usize,
    /// Raised when the replay reaches it.
    failure: Option<ReplayError>,
    /// The file ends with this batch.
    last: bool,
}

impl Batch {
    /// Whether every node was taken.
    fn dry(&self) -> bool {
        self.next == self.ids.len()
    }
}

/// Nodes decoded ahead per rank.
const BATCH: usize = 128;

/// What the decoding of every rank shares.
struct DecodeCx<'a> {
    groups: &'a Groups,
    world: Option<u32>,
    flops_per_s: f64,
    ranks: u32,
}

impl Feed {
    fn error(&self, node: u64, what: String) -> ReplayError {
        ReplayError::Node {
            file: self.file.clone(),
            node,
            what,
        }
    }

    /// Decode node `n` of rank `r` into a kind.
    fn kind_of(&mut self, cx: &DecodeCx, r: u32, n: &NodeCore) -> Result<Kind, ReplayError> {
        let num = |k: &str| attr(&n.attr, k).and_then(AttributeProto::as_u64);
        let pg_of = |s: &Self, name: Option<String>| -> Result<Option<u32>, ReplayError> {
            match name {
                None => Ok(None),
                Some(p) => cx.groups.find(&p).map(Some).ok_or_else(|| {
                    s.error(
                        n.id,
                        format!(
                            "process group `{p}` is not in the trace's comm_group.json; add it \
                             there (\"{p}\": [ranks...]) or remove the file to infer groups"
                        ),
                    )
                }),
            }
        };
        let pg_name = attr(&n.attr, "pg_name").and_then(AttributeProto::as_text);
        Ok(match n.node_type() {
            Some(NodeType::CompNode) => {
                let d = if n.duration_micros > 0 {
                    n.duration_micros.checked_mul(1_000_000).ok_or_else(|| {
                        self.error(
                            n.id,
                            format!(
                                "duration_micros {} is beyond any iteration (over 200 days)",
                                n.duration_micros
                            ),
                        )
                    })?
                } else if let Some(ops) = num("num_ops") {
                    ps(ops as f64 / cx.flops_per_s)
                } else {
                    0
                };
                Kind::Comp(d)
            }
            Some(NodeType::CommCollNode) => {
                let t = num("comm_type")
                    .and_then(|v| i32::try_from(v).ok())
                    .and_then(|v| CollectiveCommType::try_from(v).ok());
                let (op, approx) = match t {
                    Some(t) => coll_op(t),
                    None => {
                        self.warnings.unknown_collectives += 1;
                        (None, false)
                    }
                };
                if approx {
                    self.warnings.approximated_collectives += 1;
                }
                let bytes = num("comm_size").unwrap_or(0);
                let pg = match pg_of(self, pg_name)? {
                    Some(g) => g,
                    None => cx.world.ok_or_else(|| {
                        self.error(
                            n.id,
                            "a collective without pg_name, and comm_group.json has no world \
                             group (\"\": [all ranks])"
                                .into(),
                        )
                    })?,
                };
                if !cx.groups.contains(pg, r) {
                    return Err(self.error(
                        n.id,
                        format!(
                            "rank {r} runs a collective on process group `{}` but is not one of \
                             its ranks {:?}; fix comm_group.json",
                            cx.groups.names[pg as usize], cx.groups.members[pg as usize]
                        ),
                    ));
                }
                let algo = attr(&n.attr, "algorithm")
                    .and_then(AttributeProto::as_text)
                    .and_then(|a| Algo::parse(&a));
                let seq = self.seq.entry(pg).or_insert(0);
                let s = *seq;
                *seq += 1;
                Kind::Coll {
                    pg,
                    seq: s,
                    op,
                    algo,
                    bytes,
                }
            }
            Some(t @ (NodeType::CommSendNode | NodeType::CommRecvNode)) => {
                let send = t == NodeType::CommSendNode;
                let key = if send { "comm_dst" } else { "comm_src" };
                let peer = num(key)
                    .and_then(|v| u32::try_from(v).ok())
                    .filter(|&p| p < cx.ranks && p != r)
                    .ok_or_else(|| {
                        self.error(
                            n.id,
                            format!(
                                "a {} without a valid `{key}` attribute (a rank other than {r}, \
                                 below {})",
                                if send { "COMM_SEND" } else { "COMM_RECV" },
                                cx.ranks
                            ),
                        )
                    })?;
                let tag = num("comm_tag").unwrap_or(0);
                let bytes = num("comm_size").unwrap_or(0);
                let pg = pg_of(self, pg_name)?;
                let seq = self.p2p_seq.entry((peer, tag, send)).or_insert(0);
                let k = *seq;
                *seq += 1;
                if send {
                    Kind::Send {
                        peer,
                        tag,
                        seq: k,
                        bytes,
                        pg,
                    }
                } else {
                    Kind::Recv {
                        peer,
                        tag,
                        seq: k,
                        bytes,
                        pg,
                    }
                }
            }
            _ => Kind::Nop,
        })
    }

    /// Decode up to `n` more nodes; stops at the end of the file or at an error (kept to be
    /// raised when the replay reaches it).
    fn decode(&mut self, cx: &DecodeCx, r: u32, n: usize) -> Batch {
        let mut b = std::mem::take(&mut self.spare);
        b.ids.clear();
        b.kinds.clear();
        b.dep_end.clear();
        b.deps.clear();
        b.next = 0;
        b.failure = None;
        b.last = false;
        let mut node = std::mem::take(&mut self.node);
        while b.ids.len() < n {
            let Some(reader) = self.reader.as_mut() else {
                b.last = true;
                break;
            };
            match reader.next_into(&mut node) {
                Ok(true) => {}
                Ok(false) => {
                    self.warnings.add(&reader.warnings);
                    self.reader = None;
                    b.last = true;
                    break;
                }
                Err(e) => {
                    self.reader = None;
                    b.failure = Some(e.into());
                    b.last = true;
                    break;
                }
            }
            match self.kind_of(cx, r, &node) {
                Ok(k) => {
                    b.ids.push(node.id);
                    b.kinds.push(k);
                    b.deps.extend_from_slice(&node.data_deps);
                    b.deps.extend_from_slice(&node.ctrl_deps);
                    b.dep_end.push(b.deps.len() as u32);
                }
                Err(e) => {
                    self.reader = None;
                    b.failure = Some(e);
                    b.last = true;
                    break;
                }
            }
        }
        self.node = node;
        b
    }
}

struct Sim<'t, T: Timer> {
    ranks: Vec<Rank>,
    /// Each rank's current batch of decoded nodes.
    batches: Vec<Batch>,
    scratch: Vec<u64>,
    groups: &'t Groups,
    timer: &'t mut T,
    links: Links,
    pgs: Vec<GroupState>,
    channels: FxHashMap<ChannelKey, Channel>,
    ready: Vec<(u32, u32)>,
    window_bound: u64,
    collectives: u64,
    transfers: u64,
    lookahead: u32,
}

/// The operation of a Chakra collective type (`None`: a barrier); `approx` marks types
/// replayed as their closest supported operation.
fn coll_op(t: CollectiveCommType) -> (Option<Op>, bool) {
    match t {
        CollectiveCommType::AllReduce => (Some(Op::AllReduce), false),
        CollectiveCommType::AllGather => (Some(Op::AllGather), false),
        CollectiveCommType::ReduceScatter | CollectiveCommType::ReduceScatterBlock => {
            (Some(Op::ReduceScatter), false)
        }
        CollectiveCommType::AllToAll => (Some(Op::AllToAll), false),
        // A pipelined broadcast or scatter moves the buffer over every link once, as an
        // all-gather does; a reduce or gather, as a reduce-scatter.
        CollectiveCommType::Broadcast | CollectiveCommType::Scatter => (Some(Op::AllGather), true),
        CollectiveCommType::Reduce | CollectiveCommType::Gather => (Some(Op::ReduceScatter), true),
        CollectiveCommType::Barrier => (None, false),
    }
}

impl<'t, T: Timer> Sim<'t, T> {
    fn node_error(&self, r: u32, node: u64, what: String) -> ReplayError {
        ReplayError::Node {
            file: self.ranks[r as usize].file.clone(),
            node,
            what,
        }
    }

    /// Take rank `r`'s decoded nodes until its window is full or they run out; whether
    /// anything was taken.
    fn pump(&mut self, r: u32) -> Result<bool, ReplayError> {
        let mut any = false;
        loop {
            let f = &mut self.batches[r as usize];
            if f.dry() {
                if let Some(e) = f.failure.take() {
                    return Err(e);
                }
                if f.last && !self.ranks[r as usize].ended {
                    self.ranks[r as usize].ended = true;
                    self.finish_file(r)?;
                }
                return Ok(any);
            }
            if self.ranks[r as usize].live >= self.lookahead {
                return Ok(any);
            }
            let f = &mut self.batches[r as usize];
            let i = f.next;
            f.next += 1;
            let (id, kind) = (f.ids[i], f.kinds[i]);
            let lo = if i == 0 { 0 } else { f.dep_end[i - 1] as usize };
            self.scratch.clear();
            self.scratch
                .extend_from_slice(&f.deps[lo..f.dep_end[i] as usize]);
            any = true;
            let deps = std::mem::take(&mut self.scratch);
            let res = self.add(r, id, kind, &deps);
            self.scratch = deps;
            res?;
            self.drain()?;
        }
    }

    /// The file of rank `r` ended: any dependency still unknown is missing.
    fn finish_file(&mut self, r: u32) -> Result<(), ReplayError> {
        let rk = &self.ranks[r as usize];
        let mut missing: Vec<(u64, u64)> = rk
            .forward
            .iter()
            .map(|(&dep, w)| (rk.pending[w.first() as usize].id, dep))
            .collect();
        missing.sort_unstable();
        if let Some(&(node, dep)) = missing.first() {
            return Err(self.node_error(
                r,
                node,
                format!(
                    "depends on node {dep}, which is not in the file{}; fix the producer or \
                     drop the dependency",
                    if missing.len() > 1 {
                        format!(" ({} missing dependencies in all)", missing.len())
                    } else {
                        String::new()
                    }
                ),
            ));
        }
        Ok(())
    }

    fn add(&mut self, r: u32, id: u64, kind: Kind, deps: &[u64]) -> Result<(), ReplayError> {
        let rk = &mut self.ranks[r as usize];
        rk.nodes += 1;
        if !rk.seen.insert(id) {
            return Err(self.node_error(
                r,
                id,
                "a second node with this id; ids are unique in a file".into(),
            ));
        }
        let slot = match rk.free.pop() {
            Some(s) => s,
            None => {
                rk.pending.push(Pending {
                    id: 0,
                    kind: Kind::Nop,
                    waiting: 0,
                    ready: 0,
                    link: NONE,
                    waiters: Waiters::None,
                    bound: false,
                });
                (rk.pending.len() - 1) as u32
            }
        };
        rk.live += 1;
        rk.by_id.insert(id, slot);
        let waiters = if rk.forward.is_empty() {
            Waiters::None
        } else {
            rk.forward.remove(&id).unwrap_or_default()
        };
        let mut ready: Ps = 0;
        let mut link = NONE;
        let mut waiting = 0u32;
        let mut bound = false;
        let stream = match kind {
            Kind::Comp(_) => rk.last_comp.replace(id),
            _ => None,
        };
        let deps = deps.iter().copied().chain(stream);
        for dep in deps {
            if dep == id {
                return Err(self.node_error(
                    r,
                    id,
                    "depends on itself (a dependency cycle); drop the self-dependency".into(),
                ));
            }
            let rk = &mut self.ranks[r as usize];
            let mask = rk.finished.len() as u64 - 1;
            let e = rk.finished[(dep & mask) as usize];
            let (t, l, from_bound) = if e.2 != NONE && e.0 == dep {
                (e.1, e.2, false)
            } else if let Some(&at) = rk.by_id.get(&dep) {
                // Unfinished: wait for it.
                rk.pending[at as usize].waiters.push(slot);
                waiting += 1;
                continue;
            } else if !rk.seen.contains(dep) {
                // Not read yet (a forward reference).
                rk.forward.entry(dep).or_default().push(slot);
                waiting += 1;
                continue;
            } else {
                // Finished and forgotten: the window's upper bound.
                (rk.horizon.0, rk.horizon.1, true)
            };
            if t > ready || link == NONE {
                bound = from_bound && (t > ready || link == NONE);
                ready = ready.max(t);
                self.links.release(link);
                link = self.links.retain(l);
            } else if t == ready {
                bound = false;
            }
        }
        let p = &mut self.ranks[r as usize].pending[slot as usize];
        *p = Pending {
            id,
            kind,
            waiting,
            ready,
            link,
            waiters,
            bound,
        };
        if waiting == 0 {
            self.ready.push((r, slot));
        }
        Ok(())
    }

    /// A dependency of `(r, slot)` finished at `t` via `l`.
    fn satisfy(&mut self, r: u32, slot: u32, t: Ps, l: u32) {
        let p = &mut self.ranks[r as usize].pending[slot as usize];
        let replace = t > p.ready || p.link == NONE;
        if replace || t == p.ready {
            p.bound = false;
        }
        p.ready = p.ready.max(t);
        p.waiting -= 1;
        let done = p.waiting == 0;
        if replace {
            let old = std::mem::replace(&mut p.link, NONE);
            self.links.release(old);
            let nl = self.links.retain(l);
            self.ranks[r as usize].pending[slot as usize].link = nl;
        }
        if done {
            self.ready.push((r, slot));
        }
    }

    /// Node `(r, slot)` finished at `finish`, on path `link` (a reference handed over).
    fn complete(&mut self, r: u32, slot: u32, finish: Ps, link: u32) {
        let rk = &mut self.ranks[r as usize];
        let p = &mut rk.pending[slot as usize];
        let id = p.id;
        let old = std::mem::replace(&mut p.link, NONE);
        let waiters = std::mem::take(&mut p.waiters);
        rk.by_id.remove(&id);
        rk.free.push(slot);
        rk.live -= 1;
        let later = rk.end.1 == NONE
            || finish > rk.end.0
            || (finish == rk.end.0 && id > self.links.v[rk.end.1 as usize].id);
        if later {
            let prev = std::mem::replace(&mut rk.end, (finish, NONE));
            self.links.release(prev.1);
            let l = self.links.retain(link);
            self.ranks[r as usize].end.1 = l;
        }
        self.links.release(old);
        // Remember it, forgetting the node whose place it takes (into the bound).
        let rk = &mut self.ranks[r as usize];
        let mask = rk.finished.len() as u64 - 1;
        let (_, t, l) =
            std::mem::replace(&mut rk.finished[(id & mask) as usize], (id, finish, link));
        if l != NONE {
            if t > rk.horizon.0 || rk.horizon.1 == NONE {
                let prev = std::mem::replace(&mut rk.horizon, (t, l));
                self.links.release(prev.1);
            } else {
                self.links.release(l);
            }
        }
        match waiters {
            Waiters::None => {}
            Waiters::One(s) => self.satisfy(r, s, finish, link),
            Waiters::Two(a, b) => {
                self.satisfy(r, a, finish, link);
                self.satisfy(r, b, finish, link);
            }
            Waiters::Many(v) => {
                for s in v {
                    self.satisfy(r, s, finish, link);
                }
            }
        }
    }

    /// Run everything that became ready.
    fn drain(&mut self) -> Result<(), ReplayError> {
        while let Some((r, slot)) = self.ready.pop() {
            let p = &self.ranks[r as usize].pending[slot as usize];
            let (id, ready, link, kind) = (p.id, p.ready, p.link, p.kind);
            if p.bound {
                self.window_bound += 1;
            }
            match kind {
                Kind::Comp(d) => {
                    self.ranks[r as usize].compute += d;
                    let l = self.links.retain(link);
                    let nl = self.links.new_link(r, id, K_COMP, ready, ready + d, l);
                    self.complete(r, slot, ready + d, nl);
                }
                Kind::Nop => {
                    let l = self.links.retain(link);
                    let nl = self.links.new_link(r, id, K_OTHER, ready, ready, l);
                    self.complete(r, slot, ready, nl);
                }
                Kind::Coll {
                    pg,
                    seq,
                    op,
                    algo,
                    bytes,
                } => self.arrive(r, slot, pg, seq, op, algo, bytes)?,
                Kind::Send {
                    peer,
                    tag,
                    seq,
                    bytes,
                    pg,
                } => self.p2p_side(r, slot, (r, peer, tag, seq), bytes, pg, true)?,
                Kind::Recv {
                    peer,
                    tag,
                    seq,
                    bytes,
                    pg,
                } => self.p2p_side(r, slot, (peer, r, tag, seq), bytes, pg, false)?,
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn arrive(
        &mut self,
        r: u32,
        slot: u32,
        pg: u32,
        seq: u32,
        op: Option<Op>,
        algo: Option<Algo>,
        bytes: u64,
    ) -> Result<(), ReplayError> {
        let p = &self.ranks[r as usize].pending[slot as usize];
        let (id, at, link) = (p.id, p.ready, p.link);
        let link = self.links.retain(link);
        let gs = &mut self.pgs[pg as usize];
        let k = (seq - gs.base) as usize;
        while gs.instances.len() <= k {
            gs.instances.push_back(None);
        }
        let inst = gs.instances[k].get_or_insert_with(|| Instance {
            arrived: 0,
            at: 0,
            link: NONE,
            last_rank: r,
            last_id: id,
            op,
            algo,
            bytes,
            first: (r, id),
            members: Vec::new(),
        });
        if inst.op != op || inst.bytes != bytes || inst.algo != algo {
            let (fr, fid) = inst.first;
            let what = |o: Option<Op>, b: u64, a: Option<Algo>| {
                format!(
                    "{} of {b} B{}",
                    o.map_or("barrier", Op::as_str),
                    a.map_or(String::new(), |a| format!(" ({})", a.name()))
                )
            };
            let msg = format!(
                "collective #{seq} of process group `{}` is {} here but {} on rank {fr} (node \
                 {fid}); every member must issue the same collectives in the same order",
                self.groups.names[pg as usize],
                what(op, bytes, algo),
                what(inst.op, inst.bytes, inst.algo)
            );
            self.links.release(link);
            return Err(self.node_error(r, id, msg));
        }
        inst.arrived += 1;
        inst.members.push((r, slot));
        if at > inst.at || inst.link == NONE {
            inst.at = inst.at.max(at);
            let old = std::mem::replace(&mut inst.link, link);
            inst.last_rank = r;
            inst.last_id = id;
            self.links.release(old);
        } else {
            self.links.release(link);
        }
        self.start_ready_collectives(pg)
    }

    /// Start the group's next collectives while all their members have arrived.
    fn start_ready_collectives(&mut self, pg: u32) -> Result<(), ReplayError> {
        let n = self.groups.sorted[pg as usize].len() as u32;
        loop {
            let gs = &mut self.pgs[pg as usize];
            let complete = matches!(gs.instances.front(), Some(Some(i)) if i.arrived == n);
            if !complete {
                return Ok(());
            }
            let inst = gs.instances.pop_front().flatten().expect("checked");
            gs.base += 1;
            let (start, via) = if inst.at >= gs.free_at || gs.link == NONE {
                (inst.at, inst.link)
            } else {
                self.links.release(inst.link);
                let l = self.pgs[pg as usize].link;
                (self.pgs[pg as usize].free_at, self.links.retain(l))
            };
            let d = self.timer.collective(pg, inst.op, inst.algo, inst.bytes)?;
            self.collectives += 1;
            let finish = start + d;
            let cl = self
                .links
                .new_link(inst.last_rank, inst.last_id, K_COLL, start, finish, via);
            let gs = &mut self.pgs[pg as usize];
            gs.free_at = finish;
            let old = std::mem::replace(&mut gs.link, cl);
            self.links.release(old);
            self.links.retain(cl);
            for (mr, ms) in inst.members {
                let l = self.links.retain(cl);
                self.complete(mr, ms, finish, l);
            }
            self.links.release(cl);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn p2p_side(
        &mut self,
        r: u32,
        slot: u32,
        key: ChannelKey,
        bytes: u64,
        pg: Option<u32>,
        send: bool,
    ) -> Result<(), ReplayError> {
        let (src, dst, tag, _) = key;
        let p = &self.ranks[r as usize].pending[slot as usize];
        let side = Side {
            rank: r,
            slot,
            id: p.id,
            at: p.ready,
            link: self.links.retain(p.link),
            bytes,
            pg,
        };
        let ch = self.channels.entry(key).or_default();
        let other = if send { ch.recv.take() } else { ch.send.take() };
        let Some(other) = other else {
            if send {
                ch.send = Some(side);
            } else {
                ch.recv = Some(side);
            }
            return Ok(());
        };
        self.channels.remove(&key);
        let (s, v) = if send { (side, other) } else { (other, side) };
        if s.bytes != v.bytes {
            self.links.release(s.link);
            self.links.release(v.link);
            return Err(self.node_error(
                v.rank,
                v.id,
                format!(
                    "receives {} B from rank {src} (tag {tag}) but rank {src}'s matching send \
                     (node {}) sends {} B; sizes of a send and its receive must agree",
                    v.bytes, s.id, s.bytes
                ),
            ));
        }
        let (start, via, last) = if s.at >= v.at {
            self.links.release(v.link);
            (s.at, s.link, &s)
        } else {
            self.links.release(s.link);
            (v.at, v.link, &v)
        };
        let d = self.timer.p2p(src, dst, s.pg.or(v.pg), s.bytes)?;
        self.transfers += 1;
        let kind = if last.rank == src { K_SEND } else { K_RECV };
        let cl = self
            .links
            .new_link(last.rank, last.id, kind, start, start + d, via);
        let l = self.links.retain(cl);
        self.complete(s.rank, s.slot, start + d, l);
        self.complete(v.rank, v.slot, start + d, cl);
        Ok(())
    }

    /// A dependency cycle among the unfinished nodes of one file, if any.
    fn check_cycles(&self) -> Result<(), ReplayError> {
        for (r, rk) in self.ranks.iter().enumerate() {
            if rk.live == 0 {
                continue;
            }
            // Edges: a waiting slot -> the unfinished slot it waits on.
            let mut edges: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
            for &to in rk.by_id.values() {
                for s in rk.pending[to as usize].waiters.slots() {
                    edges.entry(s).or_default().push(to);
                }
            }
            let mut starts: Vec<u32> = edges.keys().copied().collect();
            starts.sort_unstable_by_key(|&s| rk.pending[s as usize].id);
            for v in edges.values_mut() {
                v.sort_unstable_by_key(|&s| rk.pending[s as usize].id);
            }
            // Iterative depth-first search with colours (1: on the stack, 2: done).
            let mut colour: FxHashMap<u32, u8> = FxHashMap::default();
            for &s0 in &starts {
                if colour.contains_key(&s0) {
                    continue;
                }
                let mut stack: Vec<(u32, usize)> = vec![(s0, 0)];
                colour.insert(s0, 1);
                while let Some(&mut (s, ref mut i)) = stack.last_mut() {
                    let next = edges.get(&s).and_then(|v| v.get(*i)).copied();
                    *i += 1;
                    match next {
                        None => {
                            colour.insert(s, 2);
                            stack.pop();
                        }
                        Some(t) => match colour.get(&t) {
                            None => {
                                colour.insert(t, 1);
                                stack.push((t, 0));
                            }
                            Some(1) => {
                                let at = stack.iter().position(|&(x, _)| x == t).unwrap_or(0);
                                let comp_only = stack[at..].iter().all(|&(x, _)| {
                                    matches!(rk.pending[x as usize].kind, Kind::Comp(_))
                                });
                                let ids: Vec<String> = stack[at..]
                                    .iter()
                                    .map(|&(x, _)| rk.pending[x as usize].id)
                                    .chain(std::iter::once(rk.pending[t as usize].id))
                                    .map(|id| id.to_string())
                                    .collect();
                                return Err(self.node_error(
                                    r as u32,
                                    rk.pending[t as usize].id,
                                    format!(
                                        "dependency cycle: {} (each waits on the next{}); a \
                                         trace is a DAG, remove one of these dependencies",
                                        ids.join(" -> "),
                                        if comp_only {
                                            "; compute nodes also wait for the previous \
                                             compute node of the file, one stream per rank"
                                        } else {
                                            ""
                                        }
                                    ),
                                ));
                            }
                            Some(_) => {}
                        },
                    }
                }
            }
        }
        Ok(())
    }

    /// After every file ended: anything left is a cycle or a collective never completed.
    fn check_done(&self) -> Result<(), ReplayError> {
        self.check_cycles()?;
        // Collectives some member never reached.
        for (g, gs) in self.pgs.iter().enumerate() {
            if let Some(Some(inst)) = gs.instances.front() {
                let got: FxHashSet<u32> = inst.members.iter().map(|m| m.0).collect();
                let missing: Vec<u32> = self.groups.sorted[g]
                    .iter()
                    .copied()
                    .filter(|m| !got.contains(m))
                    .collect();
                let (fr, fid) = inst.first;
                return Err(self.node_error(
                    fr,
                    fid,
                    format!(
                        "collective #{} of process group `{}` never completes: rank(s) {:?} of \
                         the group never reach it (they issue fewer collectives on this group, \
                         or wait on something that waits on this)",
                        gs.base,
                        self.groups.names[g],
                        &missing[..missing.len().min(8)]
                    ),
                ));
            }
        }
        let mut open: Vec<(&ChannelKey, &Channel)> = self.channels.iter().collect();
        open.sort_unstable_by_key(|(k, _)| **k);
        for ((src, dst, tag, _), ch) in open {
            let (side, what) = match (&ch.send, &ch.recv) {
                (Some(s), _) => (s, format!("rank {dst} never receives it (tag {tag})")),
                (None, Some(v)) => (v, format!("rank {src} never sends it (tag {tag})")),
                _ => continue,
            };
            return Err(self.node_error(
                side.rank,
                side.id,
                format!(
                    "point-to-point transfer {src} -> {dst} is unmatched: {what}; every \
                     COMM_SEND needs a COMM_RECV with the same peer and comm_tag"
                ),
            ));
        }
        for rk in &self.ranks {
            if let Some((&id, _)) = rk.by_id.iter().min_by_key(|(&id, _)| id) {
                return Err(ReplayError::Node {
                    file: rk.file.clone(),
                    node: id,
                    what: "never runs: it waits on communication that never completes".into(),
                });
            }
        }
        Ok(())
    }
}

/// Process groups of a trace without `comm_group.json`: each `pg_name` is the set of ranks
/// whose collectives name it (PyTorch names a group the same on all its members), and
/// collectives without one are on the world group. One pass over every file.
pub fn infer_groups(set: &TraceSet) -> Result<Groups, ReplayError> {
    let mut map: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    let mut node = NodeCore::default();
    for (r, f) in set.files.iter().enumerate() {
        let (mut rd, _) = Reader::open(f)?;
        let mut names: FxHashSet<String> = FxHashSet::default();
        while rd.next_into(&mut node)? {
            if node.node_type() == Some(NodeType::CommCollNode) {
                let name = attr(&node.attr, "pg_name")
                    .and_then(AttributeProto::as_text)
                    .unwrap_or_default();
                names.insert(name);
            }
        }
        for n in names {
            map.entry(n).or_default().push(r as u32);
        }
    }
    if map.contains_key(WORLD) {
        map.insert(WORLD.into(), (0..set.ranks()).collect());
    }
    Ok(Groups::new(map.into_iter().collect()))
}

/// The groups of a trace: its `comm_group.json`, else inferred.
pub fn groups_of(set: &TraceSet) -> Result<Groups, ReplayError> {
    match set.comm_groups().map_err(ReplayError::Input)? {
        Some(mut g) => {
            let n = set.ranks();
            for (name, ranks) in &g {
                if let Some(&bad) = ranks.iter().find(|&&x| x >= n) {
                    return Err(ReplayError::Input(format!(
                        "{}: group `{name}` has rank {bad}, but the trace has {n} ranks (0 to {})",
                        set.dir.join(crate::io::COMM_GROUP_FILE).display(),
                        n - 1
                    )));
                }
            }
            if !g.iter().any(|(k, _)| k == WORLD) {
                g.push((WORLD.into(), (0..n).collect()));
            }
            Ok(Groups::new(g))
        }
        None => infer_groups(set),
    }
}

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
        let (reader, _) = Reader::open(f).map_err(|e| match e.problem {
            crate::io::Problem::Io(ref m) if m.contains("Too many open files") => {
                ReplayError::Input(format!(
                    "{e}: a replay keeps every rank's file open; raise the limit (ulimit -n)"
                ))
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
            finished: vec![(0, 0, NONE); cfg.window.next_power_of_two() as usize],
            seen: Seen::default(),
            horizon: (0, NONE),
            last_comp: None,
            ended: false,
            end: (0, NONE),
            compute: 0,
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
        g.link = NONE;
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
                    any |= sim.pump(r)?;
                }
                Ok(any)
            },
            || {
                feeds
                    .par_iter_mut()
                    .enumerate()
                    .filter(|(_, f)| f.ahead.is_none() && f.reader.is_some())
                    .map(|(r, f)| {
                        f.ahead = Some(f.decode(&cx, r as u32, BATCH));
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
    let mut last = (0, NONE);
    for rk in &sim.ranks {
        if rk.end.0 > last.0 || last.1 == NONE {
            last = rk.end;
        }
    }
    let mut steps: Vec<(u32, u64, u8, Ps, Ps)> = Vec::new();
    let mut l = last.1;
    while l != NONE {
        let x = sim.links.v[l as usize];
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
            rank: r as u32,
            iteration_s: secs(rk.end.0),
            compute_s: secs(rk.compute),
            exposed_comm_s: secs(rk.end.0.saturating_sub(rk.compute)),
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

/// Names of the path's nodes: a second pass over the files they are in (names are not kept
/// during the replay).
fn node_names(
    set: &TraceSet,
    steps: &[(u32, u64, u8, Ps, Ps)],
) -> Result<Vec<String>, ReplayError> {
    let mut want: FxHashMap<u32, FxHashMap<u64, String>> = FxHashMap::default();
    for &(r, id, ..) in steps {
        want.entry(r).or_default().insert(id, String::new());
    }
    let mut node = Node::default();
    let mut ranks: Vec<u32> = want.keys().copied().collect();
    ranks.sort_unstable();
    for r in ranks {
        let ids = want.get_mut(&r).expect("present");
        let mut left = ids.len();
        let (mut rd, _) = Reader::open(&set.files[r as usize])?;
        while left > 0 && rd.next_into(&mut node)? {
            if let Some(s) = ids.get_mut(&node.id) {
                *s = std::mem::take(&mut node.name);
                left -= 1;
            }
        }
    }
    Ok(steps
        .iter()
        .map(|&(r, id, ..)| want[&r][&id].clone())
        .collect())
}
