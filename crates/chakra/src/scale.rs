//! Rescale a trace of R ranks to N = f x R ranks by replicating its data-parallel structure.
//!
//! The input is taken as one model replica (or a few, joined by data parallelism). Output
//! rank `r + i R` (replica `i` of `f`) runs input rank `r`'s file, with:
//!
//! - **preserved**: every node, id, name, dependency, duration and `num_ops` (per-rank
//!   compute is unchanged: weak scaling, each rank keeps its micro-batches), and every
//!   `comm_size`;
//! - **data-parallel groups** (by default: names starting with `dp`, and the group of all
//!   ranks) grow across replicas: group `g` of members M becomes M, M + R, ..., M + (f-1) R,
//!   keeping its name. Sizes follow the nccl-tests convention (an all-reduce's buffer, a
//!   reduce-scatter's input and an all-gather's output: the whole gradient), so they are
//!   unchanged while each rank's shard of a reduce-scatter / all-gather shrinks f times;
//! - **other groups** (tensor, pipeline, expert, context...) are copied per replica:
//!   `g` becomes `g@i` with members M + i R (replica 0 keeps the names);
//! - **point-to-point** peers move to the same replica (`comm_src` / `comm_dst` + i R);
//! - the metadata's tokens per iteration grow f times, and its job name gets ` xf`.
//!
//! Not preserved: anything that depends on the total batch beyond the gradient exchange
//! (e.g. a learning-rate schedule), or traffic between replicas other than through the
//! data-parallel groups.

use crate::budget::TraceSize;
use crate::info::TraceInfo;
use crate::io::{rank_file, write_comm_groups, write_file, GroupList, Reader, Staging, TraceSet};
use crate::proto::{AttributeProto, GlobalMetadata, Node, NodeType, Value};
use crate::replay::{groups_of, ReplayError, WORLD};
use rustc_hash::FxHashSet;
use std::path::Path;

/// Which process groups are data-parallel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DpGroups {
    /// Names starting with `dp`, and the group of all ranks.
    Auto,
    /// These names.
    Names(Vec<String>),
}

/// What [`scale`] wrote.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Scaled {
    /// Ranks of the input.
    pub from_ranks: u32,
    /// Ranks written.
    pub ranks: u32,
    /// Data-parallel groups grown.
    pub dp_groups: Vec<String>,
    /// Groups copied per replica.
    pub replicated_groups: usize,
    /// Nodes written, all ranks.
    pub nodes: u64,
}

fn rename(a: &mut AttributeProto, replica: u32) {
    if replica == 0 {
        return;
    }
    if let Some(Value::StringVal(s)) = &mut a.value {
        s.push_str(&format!("@{replica}"));
    } else if let Some(t) = a.as_text() {
        a.value = Some(Value::StringVal(format!("{t}@{replica}")));
    }
}

fn shift(a: &mut AttributeProto, by: u32) {
    if let Some(v) = a.as_u64() {
        a.value = Some(Value::Int64Val(v.saturating_add(u64::from(by)) as i64));
    }
}

/// Rescale the trace in `input` to `ranks` ranks into `out` (gzip like the input's files).
/// A result beyond the budgets of [`crate::budget`] ([`size`]) is refused before anything is
/// read or allocated.
pub fn scale(
    input: &Path,
    ranks: u32,
    out: &Path,
    dp: &DpGroups,
    progress: &(dyn Fn(u32) + Sync),
) -> Result<Scaled, ReplayError> {
    use rayon::prelude::*;
    let set = TraceSet::discover(input).map_err(ReplayError::Input)?;
    let r0 = set.ranks();
    if ranks == 0 || !ranks.is_multiple_of(r0) {
        return Err(ReplayError::Input(format!(
            "--ranks {ranks} is not a multiple of the trace's {r0} ranks; use a multiple, e.g. {}",
            r0 * (ranks / r0).max(2)
        )));
    }
    if input.canonicalize().ok() == out.canonicalize().ok() {
        return Err(ReplayError::Input(
            "--out is the input directory; write the rescaled trace elsewhere".into(),
        ));
    }
    let f = ranks / r0;
    let gzip = set
        .files
        .first()
        .is_some_and(|p| p.to_string_lossy().ends_with(".gz"));
    size(&set, ranks, gzip)?
        .check(
            &format!("--ranks {ranks} ({f} copies of the {r0}-rank trace)"),
            &format!(
                "ask for fewer ranks (a multiple of {r0}), or rescale a smaller trace \
                 (`aifabric chakra synth` of a job with fewer layers or a smaller global_batch)"
            ),
        )
        .map_err(ReplayError::Input)?;
    let groups = groups_of(&set)?;
    let is_dp: Vec<bool> = groups
        .names
        .iter()
        .zip(&groups.members)
        .map(|(name, m)| match dp {
            DpGroups::Auto => name.starts_with("dp") || (name == WORLD || m.len() == r0 as usize),
            DpGroups::Names(v) => v.contains(name) || name == WORLD,
        })
        .collect();
    if let DpGroups::Names(v) = dp {
        if let Some(bad) = v.iter().find(|n| groups.find(n).is_none()) {
            return Err(ReplayError::Input(format!(
                "--dp-groups names `{bad}`, which is not a process group of the trace (groups: {})",
                groups
                    .names
                    .iter()
                    .take(8)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let dp_names: FxHashSet<&str> = groups
        .names
        .iter()
        .zip(&is_dp)
        .filter(|(_, &d)| d)
        .map(|(n, _)| n.as_str())
        .collect();
    // The new groups.
    let mut new_groups: GroupList = Vec::new();
    for (g, (name, m)) in groups.names.iter().zip(&groups.members).enumerate() {
        if name == WORLD {
            // Implied: the replay adds the group of all ranks.
            continue;
        }
        if is_dp[g] {
            let all = (0..f)
                .flat_map(|i| m.iter().map(move |&x| x + i * r0))
                .collect();
            new_groups.push((name.clone(), all));
        } else {
            for i in 0..f {
                let n = if i == 0 {
                    name.clone()
                } else {
                    format!("{name}@{i}")
                };
                new_groups.push((n, m.iter().map(|&x| x + i * r0).collect()));
            }
        }
    }
    crate::io::prepare_out_dir(out)?;
    // Files go into a staging directory and move into `out` once all are written: an error
    // or an interrupt leaves no partial trace.
    let write_err = |source| ReplayError::Write {
        path: out.to_owned(),
        source,
    };
    let staging = Staging::new(out).map_err(write_err)?;
    let nodes: u64 = (0..ranks)
        .into_par_iter()
        .map(|nr| -> Result<u64, ReplayError> {
            let (src, replica) = (nr % r0, nr / r0);
            let (mut rd, meta) = Reader::open(&set.files[src as usize])?;
            let mut info = TraceInfo::from_metadata(&meta);
            info.tokens = info.tokens.map(|t| t * f64::from(f));
            // The job's name says it was grown: `small-64` at 16x is `small-64 x16`, not a
            // 64-GPU job's name on 1,024 ranks.
            info.job = info.job.take().map(|j| format!("{j} x{f}"));
            let meta = merge_meta(&meta, &info);
            let mut node = Node::default();
            let mut count = 0u64;
            let mut failure: Option<ReplayError> = None;
            let name = rank_file(&set.prefix, nr, gzip);
            let path = staging.path().join(&name);
            write_file(&path, gzip, &meta, |w| {
                loop {
                    match rd.next_into(&mut node) {
                        Ok(false) => break,
                        Ok(true) => {}
                        Err(e) => {
                            failure = Some(e.into());
                            return Err(std::io::Error::other("input"));
                        }
                    }
                    let t = node.node_type();
                    for a in &mut node.attr {
                        match a.name.as_str() {
                            "pg_name" => {
                                let dp_group =
                                    a.as_text().is_some_and(|n| dp_names.contains(n.as_str()));
                                if !dp_group {
                                    rename(a, replica);
                                }
                            }
                            "comm_src" | "comm_dst"
                                if matches!(
                                    t,
                                    Some(NodeType::CommSendNode | NodeType::CommRecvNode)
                                ) =>
                            {
                                shift(a, replica * r0)
                            }
                            _ => {}
                        }
                    }
                    count += 1;
                    w(&node)?;
                }
                Ok(())
            })
            .map_err(|e| {
                failure.take().unwrap_or_else(|| ReplayError::Write {
                    path: out.join(&name),
                    source: e,
                })
            })?;
            progress(nr);
            Ok(count)
        })
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .sum();
    write_comm_groups(staging.path(), &new_groups).map_err(write_err)?;
    staging
        .commit(crate::io::COMM_GROUP_FILE)
        .map_err(write_err)?;
    let mut dp_groups: Vec<String> = dp_names
        .iter()
        .filter(|s| **s != WORLD)
        .map(|s| s.to_string())
        .collect();
    dp_groups.sort();
    Ok(Scaled {
        from_ranks: r0,
        ranks,
        replicated_groups: is_dp.iter().filter(|d| !**d).count(),
        dp_groups,
        nodes,
    })
}

/// The size of `set` rescaled to `ranks`, estimated from its files' sizes on disk (each output
/// file is a copy of an input file with a few attributes changed).
pub fn size(set: &TraceSet, ranks: u32, gzip: bool) -> Result<TraceSize, ReplayError> {
    let mut bytes = 0u64;
    let mut largest = 0u64;
    for p in &set.files {
        let len = std::fs::metadata(p)
            .map_err(|e| ReplayError::Input(format!("cannot read {}: {e}", p.display())))?
            .len();
        bytes += len;
        largest = largest.max(len);
    }
    let f = u64::from(ranks / set.ranks().max(1));
    let per_node = TraceSize::bytes_per_node(gzip);
    let bytes = bytes.saturating_mul(f);
    Ok(TraceSize {
        files: u64::from(ranks),
        nodes: bytes / per_node,
        nodes_per_rank: largest / per_node,
        bytes,
    })
}

/// `meta` with the attributes of `info` replaced.
fn merge_meta(meta: &GlobalMetadata, info: &TraceInfo) -> GlobalMetadata {
    let ours = info.to_metadata();
    let mut attr: Vec<AttributeProto> = meta
        .attr
        .iter()
        .filter(|a| !ours.attr.iter().any(|o| o.name == a.name))
        .cloned()
        .collect();
    attr.extend(ours.attr);
    GlobalMetadata {
        version: meta.version.clone(),
        attr,
    }
}
