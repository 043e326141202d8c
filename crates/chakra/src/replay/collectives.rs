//! Collectives: joining the members of each collective of a process group as they arrive,
//! and running it once all have and the group's previous collective has finished.

use super::critical::PathLink;
use super::critical::K_COLL;
use super::sim::Sim;
use super::NodeId;
use super::RankId;
use super::{Ps, ReplayError, Timer};
use aifabric_workload::{Algo, Op};
use std::collections::VecDeque;

/// One collective of a group, as its members arrive.
pub(super) struct Instance {
    arrived: u32,
    at: Ps,
    link: Option<PathLink>,
    last_rank: RankId,
    last_id: NodeId,
    op: Option<Op>,
    algo: Option<Algo>,
    bytes: u64,
    pub(super) first: (u32, NodeId),
    pub(super) members: Vec<(u32, u32)>,
}

#[derive(Default)]
pub(super) struct GroupState {
    pub(super) base: u32,
    pub(super) instances: VecDeque<Option<Instance>>,
    free_at: Ps,
    pub(super) link: Option<PathLink>,
}

impl<'t, T: Timer> Sim<'t, T> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn arrive(
        &mut self,
        r: RankId,
        slot: u32,
        pg: u32,
        seq: u32,
        op: Option<Op>,
        algo: Option<Algo>,
        bytes: u64,
    ) -> Result<(), ReplayError> {
        let p = &self.ranks[r.idx()].pending[slot as usize];
        let (id, at, link) = (p.id, p.ready, p.link);
        let link = self.links.retain(link);
        let gs = &mut self.pgs[pg as usize];
        let k = (seq - gs.base) as usize;
        while gs.instances.len() <= k {
            gs.instances.push_back(None);
        }
        let inst = gs.instances[k].get_or_insert_with(|| Instance {
            arrived: 0,
            at: Ps::ZERO,
            link: None,
            last_rank: r,
            last_id: id,
            op,
            algo,
            bytes,
            first: (r.get(), id),
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
        inst.members.push((r.get(), slot));
        if at > inst.at || inst.link.is_none() {
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
            let (start, via) = if inst.at >= gs.free_at || gs.link.is_none() {
                (inst.at, inst.link)
            } else {
                self.links.release(inst.link);
                let l = self.pgs[pg as usize].link;
                (self.pgs[pg as usize].free_at, self.links.retain(l))
            };
            let d = self.timer.collective(pg, inst.op, inst.algo, inst.bytes)?;
            self.collectives += 1;
            let finish = start + d;
            let cl: Option<PathLink> = self
                .links
                .new_link(inst.last_rank, inst.last_id, K_COLL, start, finish, via)
                .into();
            let gs = &mut self.pgs[pg as usize];
            gs.free_at = finish;
            let old = std::mem::replace(&mut gs.link, cl);
            self.links.release(old);
            self.links.retain(cl);
            for (mr, ms) in inst.members {
                let l = self.links.retain(cl);
                self.complete(RankId::new(mr), ms, finish, l);
            }
            self.links.release(cl);
        }
    }
}
