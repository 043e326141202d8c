//! Process groups: names and member ranks, from the trace's `comm_group.json` or inferred
//! from its collectives.

use super::RankId;
use super::ReplayError;
use crate::io::{Reader, TraceSet};
use crate::proto::{attr, AttributeProto, NodeCore, NodeType};
use rustc_hash::{FxHashMap, FxHashSet};

/// Process groups: names and member ranks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Groups {
    /// Name of each group.
    pub names: Vec<String>,
    /// Ranks of each group, in ring order.
    pub members: Vec<Vec<u32>>,
    by_name: FxHashMap<String, u32>,
    pub(super) sorted: Vec<Vec<u32>>,
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
    pub fn contains(&self, g: u32, rank: RankId) -> bool {
        self.sorted[g as usize].binary_search(&rank.get()).is_ok()
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

/// Process groups of a trace without `comm_group.json`: each `pg_name` is the set of ranks
/// whose collectives, sends or receives name it (PyTorch names a group the same on all its
/// members; a pipeline stage pair's group is named by the sends and receives between them),
/// and collectives without one are on the world group. One pass over every file.
pub fn infer_groups(set: &TraceSet) -> Result<Groups, ReplayError> {
    let mut map: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    let mut node = NodeCore::default();
    for (r, f) in set.files.iter().enumerate() {
        let (mut rd, _) = Reader::open(f)?;
        let mut names: FxHashSet<String> = FxHashSet::default();
        while rd.next_into(&mut node)? {
            let name = attr(&node.attr, "pg_name").and_then(AttributeProto::as_text);
            match node.node_type() {
                Some(NodeType::CommCollNode) => {
                    names.insert(name.unwrap_or_default());
                }
                // A transfer without `pg_name` is on no group (not the world's).
                Some(NodeType::CommSendNode | NodeType::CommRecvNode) => names.extend(name),
                _ => {}
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
            let file = set.dir.join(crate::io::COMM_GROUP_FILE);
            for (name, ranks) in &g {
                if ranks.is_empty() {
                    return Err(ReplayError::Input(format!(
                        "{}: group `{name}` has no ranks; list its ranks, e.g. \"{name}\": [0, 1]",
                        file.display()
                    )));
                }
                let mut seen = FxHashSet::default();
                if let Some(&twice) = ranks.iter().find(|&&x| !seen.insert(x)) {
                    return Err(ReplayError::Input(format!(
                        "{}: group `{name}` lists rank {twice} twice; a rank is in a group once \
                         (remove the repeat from {ranks:?})",
                        file.display()
                    )));
                }
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

/// Ranks as a short list for messages: `0, 1, 2, 3` (the first 8, then how many more).
pub(crate) fn rank_list(ranks: &[u32]) -> String {
    let mut s: Vec<String> = ranks.iter().take(8).map(u32::to_string).collect();
    if ranks.len() > 8 {
        s.push(format!("and {} more", ranks.len() - 8));
    }
    s.join(", ")
}
