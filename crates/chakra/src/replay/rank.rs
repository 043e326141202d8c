//! Per-rank state: the slab of unfinished nodes and their waiters, the finished nodes
//! remembered in the window, the ids met, and the compute stream.

use super::critical::PathLink;
use super::feed::Kind;
use super::NodeId;
use super::Ps;
use rustc_hash::{FxHashMap, FxHashSet};

/// A node read and not finished.
pub(super) struct Pending {
    pub(super) id: NodeId,
    pub(super) kind: Kind,
    pub(super) waiting: u32,
    pub(super) ready: Ps,
    pub(super) link: Option<PathLink>,
    /// Slots waiting for this node.
    pub(super) waiters: Waiters,
    /// The start so far comes from the window's bound on a forgotten dependency.
    pub(super) bound: bool,
}

/// Slots waiting for a node.
#[derive(Default)]
pub(super) enum Waiters {
    #[default]
    None,
    One(u32),
    Two(u32, u32),
    Many(Vec<u32>),
}

impl Waiters {
    pub(super) fn push(&mut self, slot: u32) {
        match self {
            Waiters::None => *self = Waiters::One(slot),
            Waiters::One(s) => *self = Waiters::Two(*s, slot),
            Waiters::Two(a, b) => *self = Waiters::Many(vec![*a, *b, slot]),
            Waiters::Many(v) => v.push(slot),
        }
    }

    pub(super) fn first(&self) -> Option<u32> {
        match self {
            Waiters::None => None,
            Waiters::One(s) | Waiters::Two(s, _) => Some(*s),
            Waiters::Many(v) => v.first().copied(),
        }
    }

    pub(super) fn slots(&self) -> Vec<u32> {
        match self {
            Waiters::None => vec![],
            Waiters::One(s) => vec![*s],
            Waiters::Two(a, b) => vec![*a, *b],
            Waiters::Many(v) => v.clone(),
        }
    }
}

/// A finished node remembered: (id, finish, path link); link `None` when empty.
type Remembered = (NodeId, Ps, Option<PathLink>);

pub(super) struct Rank {
    pub(super) file: String,
    pub(super) pending: Vec<Pending>,
    pub(super) free: Vec<u32>,
    pub(super) live: u32,
    pub(super) by_id: FxHashMap<NodeId, u32>,
    /// Waiters on ids not read yet (forward references).
    pub(super) forward: FxHashMap<NodeId, Waiters>,
    /// Finished nodes, direct-mapped by id (a power-of-two table of at least `window`
    /// entries): with ids numbered densely, the last `window` ids.
    pub(super) finished: Vec<Remembered>,
    pub(super) seen: Seen,
    pub(super) horizon: (Ps, Option<PathLink>),
    pub(super) last_comp: Option<NodeId>,
    /// Its file was read to the end and checked.
    pub(super) ended: bool,
    pub(super) end: (Ps, Option<PathLink>),
    pub(super) compute: Ps,
    pub(super) nodes: u64,
}

/// Node ids met so far: a bitset from the first id met (ids are usually dense), a set for
/// ids outside it.
#[derive(Default)]
pub(super) struct Seen {
    base: Option<u64>,
    bits: Vec<u64>,
    big: FxHashSet<u64>,
}

/// Span of the bitset, ids (2 MB per rank at most).
const SEEN_BITS: u64 = 1 << 24;

impl Seen {
    fn index(&self, id: NodeId) -> Option<u64> {
        let base = self.base?;
        id.get().checked_sub(base).filter(|&i| i < SEEN_BITS)
    }

    pub(super) fn insert(&mut self, id: NodeId) -> bool {
        if self.base.is_none() {
            self.base = Some(id.get());
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
            None => self.big.insert(id.get()),
        }
    }

    pub(super) fn contains(&self, id: NodeId) -> bool {
        match self.index(id) {
            Some(i) => self
                .bits
                .get((i / 64) as usize)
                .is_some_and(|w| w & (1 << (i % 64)) != 0),
            None => self.big.contains(&id.get()),
        }
    }
}
