//! The critical path: an arena of reference-counted links, each a node on some path with
//! the link it came from, and the kinds of their steps.

use super::NodeId;
use super::Ps;
use super::RankId;

aifabric_model::id_type!(
    /// A link in the critical-path arena ([`Links`]).
    PathLink
);

/// A node on some path: the arena of critical-path links (reference counted, so only the
/// links some live node can still reach are kept).
#[derive(Clone, Copy)]
pub(super) struct Link {
    pub(super) rank: RankId,
    pub(super) id: NodeId,
    pub(super) kind: u8,
    pub(super) start: Ps,
    pub(super) finish: Ps,
    pub(super) prev: Option<PathLink>,
    refs: u32,
}

#[derive(Default)]
pub(super) struct Links {
    pub(super) v: Vec<Link>,
    free: Vec<PathLink>,
}

impl Links {
    pub(super) fn new_link(
        &mut self,
        rank: RankId,
        id: NodeId,
        kind: u8,
        start: Ps,
        finish: Ps,
        prev: Option<PathLink>,
    ) -> PathLink {
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
                self.v[i.idx()] = l;
                i
            }
            None => {
                self.v.push(l);
                PathLink::from_idx(self.v.len() - 1)
            }
        }
    }

    pub(super) fn retain(&mut self, l: Option<PathLink>) -> Option<PathLink> {
        if let Some(i) = l {
            self.v[i.idx()].refs += 1;
        }
        l
    }

    pub(super) fn release(&mut self, mut l: Option<PathLink>) {
        while let Some(i) = l {
            let x = &mut self.v[i.idx()];
            x.refs -= 1;
            if x.refs > 0 {
                return;
            }
            l = x.prev;
            self.free.push(i);
        }
    }
}

pub(super) const K_COMP: u8 = 0;
pub(super) const K_COLL: u8 = 1;
pub(super) const K_SEND: u8 = 2;
pub(super) const K_RECV: u8 = 3;
pub(super) const K_OTHER: u8 = 4;

pub(super) fn kind_name(k: u8) -> &'static str {
    match k {
        K_COMP => "comp",
        K_COLL => "coll",
        K_SEND => "send",
        K_RECV => "recv",
        _ => "other",
    }
}
