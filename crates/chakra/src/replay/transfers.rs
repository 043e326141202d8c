//! Point-to-point transfers: matching each send with its receive by (source, destination,
//! tag, order), and running it once both sides are ready.

use super::critical::PathLink;
use super::critical::{K_RECV, K_SEND};
use super::sim::Sim;
use super::NodeId;
use super::RankId;
use super::{Ps, ReplayError, Timer};

/// One side of a point-to-point transfer.
pub(super) struct Side {
    pub(super) rank: RankId,
    slot: u32,
    pub(super) id: NodeId,
    at: Ps,
    link: Option<PathLink>,
    bytes: u64,
    pg: Option<u32>,
}

/// A transfer whose first side arrived: (source, destination, tag, k) for the k-th of its
/// kind in the sender's and the receiver's files.
#[derive(Default)]
pub(super) struct Channel {
    pub(super) send: Option<Side>,
    pub(super) recv: Option<Side>,
}

pub(super) type ChannelKey = (RankId, RankId, u64, u32);

impl<'t, T: Timer> Sim<'t, T> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn p2p_side(
        &mut self,
        r: RankId,
        slot: u32,
        key: ChannelKey,
        bytes: u64,
        pg: Option<u32>,
        send: bool,
    ) -> Result<(), ReplayError> {
        let (src, dst, tag, _) = key;
        let p = &self.ranks[r.idx()].pending[slot as usize];
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
        let kind = if last.rank == RankId::new(src.get()) {
            K_SEND
        } else {
            K_RECV
        };
        let cl: Option<PathLink> = self
            .links
            .new_link(last.rank, last.id, kind, start, start + d, via)
            .into();
        let l = self.links.retain(cl);
        self.complete(s.rank, s.slot, start + d, l);
        self.complete(v.rank, v.slot, start + d, cl);
        Ok(())
    }
}
