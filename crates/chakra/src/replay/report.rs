//! The result of a replay: per-rank times and the critical path, with the names of its
//! nodes read back from the files.

use super::NodeId;
use super::RankId;
use super::{Ps, ReplayError};
use crate::io::{Reader, TraceSet, Warnings};
use crate::proto::Node;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// A step of the critical path.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathStep {
    /// Rank whose node it is (for a collective: the member that arrived last).
    pub rank: RankId,
    /// Node id.
    pub id: NodeId,
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
    pub rank: RankId,
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

/// Names of the path's nodes: a second pass over the files they are in (names are not kept
/// during the replay).
pub(super) fn node_names(
    set: &TraceSet,
    steps: &[(RankId, NodeId, u8, Ps, Ps)],
) -> Result<Vec<String>, ReplayError> {
    let mut want: FxHashMap<RankId, FxHashMap<NodeId, String>> = FxHashMap::default();
    for &(r, id, ..) in steps {
        want.entry(r).or_default().insert(id, String::new());
    }
    let mut node = Node::default();
    let mut ranks: Vec<RankId> = want.keys().copied().collect();
    ranks.sort_unstable();
    for r in ranks {
        let ids = want.get_mut(&r).expect("present");
        let mut left = ids.len();
        let (mut rd, _) = Reader::open(&set.files[r.idx()])?;
        while left > 0 && rd.next_into(&mut node)? {
            if let Some(s) = ids.get_mut(&NodeId::new(node.id)) {
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
