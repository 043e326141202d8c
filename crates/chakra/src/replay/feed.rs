//! Reading: each rank's file decoded ahead, in batches, into compact node kinds.

use super::groups::Groups;
use super::NodeId;
use super::RankId;
use super::{Ps, ReplayError};
use crate::io::{Reader, Warnings};
use crate::proto::{attr, AttributeProto, CollectiveCommType, NodeCore, NodeType};
use aifabric_model::time::ps;
use aifabric_workload::{Algo, Op};
use rustc_hash::FxHashMap;

/// What a node does, compactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Kind {
    Comp(Ps),
    Coll {
        pg: u32,
        seq: u32,
        op: Option<Op>,
        algo: Option<Algo>,
        bytes: u64,
    },
    Send {
        peer: RankId,
        tag: u64,
        seq: u32,
        bytes: u64,
        pg: Option<u32>,
    },
    Recv {
        peer: RankId,
        tag: u64,
        seq: u32,
        bytes: u64,
        pg: Option<u32>,
    },
    Nop,
}

/// One rank's file, decoded ahead in batches (in parallel over ranks).
pub(super) struct Feed {
    pub(super) reader: Option<Reader>,
    pub(super) file: String,
    pub(super) seq: FxHashMap<u32, u32>,
    pub(super) p2p_seq: FxHashMap<(u32, u64, bool), u32>,
    pub(super) warnings: Warnings,
    pub(super) node: NodeCore,
    /// The next batch, decoded while the replay takes the current one.
    pub(super) ahead: Option<Batch>,
    /// A used batch, its buffers kept for the next decoding.
    pub(super) spare: Batch,
}

/// Decoded nodes of one rank, in file order.
#[derive(Default)]
pub(super) struct Batch {
    pub(super) ids: Vec<NodeId>,
    pub(super) kinds: Vec<Kind>,
    pub(super) dep_end: Vec<u32>,
    pub(super) deps: Vec<NodeId>,
    pub(super) next: usize,
    /// Raised when the replay reaches it.
    pub(super) failure: Option<ReplayError>,
    /// The file ends with this batch.
    pub(super) last: bool,
}

impl Batch {
    /// Whether every node was taken.
    pub(super) fn dry(&self) -> bool {
        self.next == self.ids.len()
    }
}

/// The largest `comm_size` a node may have: 1 PiB (2^50 bytes), beyond any buffer a
/// collective or a transfer moves (a GPU holds at most a few hundred GB).
pub const MAX_COMM_BYTES: u64 = 1 << 50;

/// Nodes decoded ahead per rank.
pub(super) const BATCH: usize = 128;

/// What the decoding of every rank shares.
pub(super) struct DecodeCx<'a> {
    pub(super) groups: &'a Groups,
    pub(super) world: Option<u32>,
    pub(super) flops_per_s: f64,
    pub(super) ranks: u32,
}

impl Feed {
    fn error(&self, node: NodeId, what: String) -> ReplayError {
        ReplayError::Node {
            file: self.file.clone(),
            node,
            what,
        }
    }

    /// Attribute `key` of `n` as a whole number from 0 to `max` (`unit` names what it
    /// counts), `None` if absent; anything else (negative, fractional, too large, text) is an
    /// error naming the attribute, its value and the range, never a silent 0.
    fn whole(
        &self,
        n: &NodeCore,
        key: &str,
        unit: &str,
        max: u64,
    ) -> Result<Option<u64>, ReplayError> {
        let Some(a) = attr(&n.attr, key) else {
            return Ok(None);
        };
        match a.as_u64() {
            Some(v) if v <= max => Ok(Some(v)),
            _ => {
                let range = if max == u64::MAX {
                    "0 or more".to_owned()
                } else {
                    format!("from 0 to {max}")
                };
                Err(self.error(
                    NodeId::new(n.id),
                    format!(
                        "attribute `{key}` is {}; it must be a whole number of {unit}, {range}",
                        a.shown()
                    ),
                ))
            }
        }
    }

    /// Decode node `n` of rank `r` into a kind.
    fn kind_of(&mut self, cx: &DecodeCx, r: RankId, n: &NodeCore) -> Result<Kind, ReplayError> {
        let num = |k: &str| attr(&n.attr, k).and_then(AttributeProto::as_u64);
        let bytes = |s: &Self| {
            s.whole(n, "comm_size", "bytes", MAX_COMM_BYTES)
                .map(Option::unwrap_or_default)
        };
        let pg_of = |s: &Self, name: Option<String>| -> Result<Option<u32>, ReplayError> {
            match name {
                None => Ok(None),
                Some(p) => cx.groups.find(&p).map(Some).ok_or_else(|| {
                    s.error(
                        NodeId::new(n.id),
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
                    n.duration_micros
                        .checked_mul(1_000_000)
                        .map(Ps::new)
                        .ok_or_else(|| {
                            self.error(
                                NodeId::new(n.id),
                                format!(
                                    "duration_micros {} is beyond any iteration (over 200 days)",
                                    n.duration_micros
                                ),
                            )
                        })?
                } else if let Some(ops) = self.whole(n, "num_ops", "operations", u64::MAX)? {
                    let s = ops as f64 / cx.flops_per_s;
                    if s * 1e12 >= u64::MAX as f64 {
                        return Err(self.error(
                            NodeId::new(n.id),
                            format!(
                                "num_ops {ops} takes {s:.3e} s at the roofline of {:.3e} \
                                 FLOP/s: beyond any iteration (over 200 days); check the \
                                 attribute or the roofline (--peak-tflops, --efficiency)",
                                cx.flops_per_s
                            ),
                        ));
                    }
                    ps(s)
                } else {
                    Ps::ZERO
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
                let bytes = bytes(self)?;
                let pg = match pg_of(self, pg_name)? {
                    Some(g) => g,
                    None => cx.world.ok_or_else(|| {
                        self.error(
                            NodeId::new(n.id),
                            "a collective without pg_name, and comm_group.json has no world \
                             group (\"\": [all ranks])"
                                .into(),
                        )
                    })?,
                };
                if !cx.groups.contains(pg, r) {
                    return Err(self.error(
                        NodeId::new(n.id),
                        format!(
                            "rank {r} runs a collective on process group `{}` but is not one of \
                             its ranks ({}); fix comm_group.json",
                            cx.groups.names[pg as usize],
                            crate::replay::groups::rank_list(&cx.groups.members[pg as usize])
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
                    .filter(|&p| p < cx.ranks && p != r.get())
                    .map(RankId::new)
                    .ok_or_else(|| {
                        self.error(
                            NodeId::new(n.id),
                            format!(
                                "a {} without a valid `{key}` attribute (a rank other than {r}, \
                                 below {})",
                                if send { "COMM_SEND" } else { "COMM_RECV" },
                                cx.ranks
                            ),
                        )
                    })?;
                let tag = self.whole(n, "comm_tag", "tags", u64::MAX)?.unwrap_or(0);
                let bytes = bytes(self)?;
                let pg = pg_of(self, pg_name)?;
                let seq = self.p2p_seq.entry((peer.get(), tag, send)).or_insert(0);
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
    pub(super) fn decode(&mut self, cx: &DecodeCx, r: RankId, n: usize) -> Batch {
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
                    b.ids.push(NodeId::new(node.id));
                    b.kinds.push(k);
                    b.deps
                        .extend(node.data_deps.iter().map(|&d| NodeId::new(d)));
                    b.deps
                        .extend(node.ctrl_deps.iter().map(|&d| NodeId::new(d)));
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
