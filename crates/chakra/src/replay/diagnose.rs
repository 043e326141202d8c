//! Diagnosis of a replay that cannot finish: dependency cycles, collectives never
//! completed, unmatched transfers, nodes that never run.

use super::feed::Kind;
use super::sim::Sim;
use super::transfers::{Channel, ChannelKey};
use super::RankId;
use super::{ReplayError, Timer};
use rustc_hash::{FxHashMap, FxHashSet};

impl<'t, T: Timer> Sim<'t, T> {
    /// A dependency cycle among the unfinished nodes of one file, if any.
    pub(super) fn check_cycles(&self) -> Result<(), ReplayError> {
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
                                    RankId::from_idx(r),
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
    pub(super) fn check_done(&self) -> Result<(), ReplayError> {
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
                    RankId::new(fr),
                    fid,
                    format!(
                        "collective #{} of process group `{}` never completes: rank(s) {} of \
                         the group never reach it (they issue fewer collectives on this group, \
                         or wait on something that waits on this)",
                        gs.base,
                        self.groups.names[g],
                        missing[..missing.len().min(8)]
                            .iter()
                            .map(|r| r.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
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
