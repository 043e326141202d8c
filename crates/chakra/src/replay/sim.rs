//! The replay engine: taking each rank's decoded nodes, resolving their dependencies and
//! running the nodes that are ready.

use super::collectives::GroupState;
use super::critical::PathLink;
use super::critical::{Links, K_COMP, K_OTHER};
use super::feed::{Batch, Kind};
use super::groups::Groups;
use super::rank::{Pending, Rank, Waiters};
use super::transfers::{Channel, ChannelKey};
use super::NodeId;
use super::RankId;
use super::{Ps, ReplayError, Timer};
use rustc_hash::FxHashMap;

pub(super) struct Sim<'t, T: Timer> {
    pub(super) ranks: Vec<Rank>,
    /// Each rank's current batch of decoded nodes.
    pub(super) batches: Vec<Batch>,
    pub(super) scratch: Vec<NodeId>,
    pub(super) groups: &'t Groups,
    pub(super) timer: &'t mut T,
    pub(super) links: Links,
    pub(super) pgs: Vec<GroupState>,
    pub(super) channels: FxHashMap<ChannelKey, Channel>,
    pub(super) ready: Vec<(u32, u32)>,
    pub(super) window_bound: u64,
    pub(super) collectives: u64,
    pub(super) transfers: u64,
    pub(super) lookahead: u32,
}

impl<'t, T: Timer> Sim<'t, T> {
    pub(super) fn node_error(&self, r: RankId, node: NodeId, what: String) -> ReplayError {
        ReplayError::Node {
            file: self.ranks[r.idx()].file.clone(),
            node,
            what,
        }
    }

    /// Take rank `r`'s decoded nodes until its window is full or they run out; whether
    /// anything was taken.
    pub(super) fn pump(&mut self, r: RankId) -> Result<bool, ReplayError> {
        let mut any = false;
        loop {
            let f = &mut self.batches[r.idx()];
            if f.dry() {
                if let Some(e) = f.failure.take() {
                    return Err(e);
                }
                if f.last && !self.ranks[r.idx()].ended {
                    self.ranks[r.idx()].ended = true;
                    self.finish_file(r)?;
                }
                return Ok(any);
            }
            if self.ranks[r.idx()].live >= self.lookahead {
                return Ok(any);
            }
            let f = &mut self.batches[r.idx()];
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
    fn finish_file(&mut self, r: RankId) -> Result<(), ReplayError> {
        let rk = &self.ranks[r.idx()];
        let mut missing: Vec<(NodeId, NodeId)> = rk
            .forward
            .iter()
            .filter_map(|(&dep, w)| Some((rk.pending[w.first()? as usize].id, dep)))
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

    fn add(
        &mut self,
        r: RankId,
        id: NodeId,
        kind: Kind,
        deps: &[NodeId],
    ) -> Result<(), ReplayError> {
        let rk = &mut self.ranks[r.idx()];
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
                    id: NodeId::new(0),
                    kind: Kind::Nop,
                    waiting: 0,
                    ready: Ps::ZERO,
                    link: None,
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
        let mut ready = Ps::ZERO;
        let mut link = None;
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
            let rk = &mut self.ranks[r.idx()];
            let mask = rk.finished.len() as u64 - 1;
            let e = rk.finished[(dep.get() & mask) as usize];
            let (t, l, from_bound) = if e.2.is_some() && e.0 == dep {
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
            if t > ready || link.is_none() {
                bound = from_bound && (t > ready || link.is_none());
                ready = ready.max(t);
                self.links.release(link);
                link = self.links.retain(l);
            } else if t == ready {
                bound = false;
            }
        }
        let p = &mut self.ranks[r.idx()].pending[slot as usize];
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
            self.ready.push((r.get(), slot));
        }
        Ok(())
    }

    /// A dependency of `(r, slot)` finished at `t` via `l`.
    fn satisfy(&mut self, r: RankId, slot: u32, t: Ps, l: Option<PathLink>) {
        let p = &mut self.ranks[r.idx()].pending[slot as usize];
        let replace = t > p.ready || p.link.is_none();
        if replace || t == p.ready {
            p.bound = false;
        }
        p.ready = p.ready.max(t);
        p.waiting -= 1;
        let done = p.waiting == 0;
        if replace {
            let old = p.link.take();
            self.links.release(old);
            let nl = self.links.retain(l);
            self.ranks[r.idx()].pending[slot as usize].link = nl;
        }
        if done {
            self.ready.push((r.get(), slot));
        }
    }

    /// Node `(r, slot)` finished at `finish`, on path `link` (a reference handed over).
    pub(super) fn complete(&mut self, r: RankId, slot: u32, finish: Ps, link: Option<PathLink>) {
        let rk = &mut self.ranks[r.idx()];
        let p = &mut rk.pending[slot as usize];
        let id = p.id;
        let old = p.link.take();
        let waiters = std::mem::take(&mut p.waiters);
        rk.by_id.remove(&id);
        rk.free.push(slot);
        rk.live -= 1;
        let later = match rk.end.1 {
            None => true,
            Some(e) => finish > rk.end.0 || (finish == rk.end.0 && id > self.links.v[e.idx()].id),
        };
        if later {
            let prev = std::mem::replace(&mut rk.end, (finish, None));
            self.links.release(prev.1);
            let l = self.links.retain(link);
            self.ranks[r.idx()].end.1 = l;
        }
        self.links.release(old);
        // Remember it, forgetting the node whose place it takes (into the bound).
        let rk = &mut self.ranks[r.idx()];
        let mask = rk.finished.len() as u64 - 1;
        let (_, t, l) = std::mem::replace(
            &mut rk.finished[(id.get() & mask) as usize],
            (id, finish, link),
        );
        if l.is_some() {
            if t > rk.horizon.0 || rk.horizon.1.is_none() {
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
                    let nl =
                        Some(
                            self.links
                                .new_link(RankId::new(r), id, K_COMP, ready, ready + d, l),
                        );
                    self.complete(RankId::new(r), slot, ready + d, nl);
                }
                Kind::Nop => {
                    let l = self.links.retain(link);
                    let nl =
                        Some(
                            self.links
                                .new_link(RankId::new(r), id, K_OTHER, ready, ready, l),
                        );
                    self.complete(RankId::new(r), slot, ready, nl);
                }
                Kind::Coll {
                    pg,
                    seq,
                    op,
                    algo,
                    bytes,
                } => self.arrive(RankId::new(r), slot, pg, seq, op, algo, bytes)?,
                Kind::Send {
                    peer,
                    tag,
                    seq,
                    bytes,
                    pg,
                } => self.p2p_side(
                    RankId::new(r),
                    slot,
                    (RankId::new(r), RankId::new(peer.get()), tag, seq),
                    bytes,
                    pg,
                    true,
                )?,
                Kind::Recv {
                    peer,
                    tag,
                    seq,
                    bytes,
                    pg,
                } => self.p2p_side(
                    RankId::new(r),
                    slot,
                    (RankId::new(peer.get()), RankId::new(r), tag, seq),
                    bytes,
                    pg,
                    false,
                )?,
            }
        }
        Ok(())
    }
}
