//! A Chakra trace per rank from a job's [`Iteration`], so that tests and users have traces
//! without other tools.
//!
//! Each rank's file encodes the job model's critical path as a DAG, so that replaying it
//! gives the step time `aifabric job` computes:
//!
//! - compute is cut into `J` equal `COMP` nodes (`J` = the largest count of a fully exposed
//!   communication kind), each with `num_ops` = its FLOPs at the job's roofline, chained;
//! - the instances of each fully exposed kind (TP all-reduce, CP, EP all-to-all, PP sends)
//!   are spread evenly over the chain, after the compute slice they follow (`COMM_COLL` on
//!   the group's process group; a pipeline step is a `COMM_SEND` to the next stage and a
//!   `COMM_RECV` from the previous one, side by side);
//! - the pipeline bubble is one more `COMP` node at the end of the chain;
//! - a partly hidden kind (data parallelism with `dp_overlap` h) is split in two: a
//!   collective of h x the size on a side branch that starts with the first compute slice
//!   (hidden if the fabric is fast enough, as the job model assumes), and one of (1 - h) x
//!   the size after the bubble, exposed;
//! - an `iteration_end` `METADATA_NODE` joins the chain and the side branch.
//!
//! Process groups are named `<dim>.<index>` (`tp.0`, `dp.3`; `pp.<i>` is a pair of adjacent
//! stages, the last and the first being adjacent under the interleaved schedule) and written
//! to `comm_group.json`.

use crate::budget::{self, TraceSize};
use crate::info::TraceInfo;
use crate::io::{rank_file, write_comm_groups, write_file, Staging, COMM_GROUP_FILE};
use crate::proto::{AttributeProto, CollectiveCommType, Node, NodeType};
use aifabric_workload::job::{Comm, Dim, Iteration};
use aifabric_workload::Op;
use std::path::Path;

/// The Chakra type of an operation.
pub fn comm_type(op: Op) -> CollectiveCommType {
    match op {
        Op::AllReduce => CollectiveCommType::AllReduce,
        Op::ReduceScatter => CollectiveCommType::ReduceScatter,
        Op::AllGather => CollectiveCommType::AllGather,
        Op::AllToAll => CollectiveCommType::AllToAll,
        Op::Broadcast => CollectiveCommType::Broadcast,
        Op::Reduce => CollectiveCommType::Reduce,
    }
}

fn dim_name(d: Dim) -> &'static str {
    match d {
        Dim::Tp => "tp",
        Dim::Cp => "cp",
        Dim::Ep => "ep",
        Dim::Pp => "pp",
        Dim::Dp => "dp",
    }
}

/// One communication kind, ready to emit per rank.
struct Kind<'a> {
    comm: &'a Comm,
    /// Group index of each rank (collectives), or pair index where the rank sends (p2p).
    member: Vec<Option<u32>>,
    /// Pair index where the rank receives (p2p).
    receives: Vec<Option<u32>>,
}

/// A job's trace, ready to be written rank by rank.
pub struct Synth<'a> {
    it: &'a Iteration,
    exposed: Vec<Kind<'a>>,
    partial: Vec<Kind<'a>>,
    slices: u64,
}

impl<'a> Synth<'a> {
    /// Prepare `it`.
    pub fn new(it: &'a Iteration) -> Synth<'a> {
        let n = it.gpus as usize;
        let kind = |c: &'a Comm| {
            let mut member = vec![None; n];
            let mut receives = vec![None; n];
            for (i, g) in c.groups.iter().enumerate() {
                if c.op.is_none() {
                    member[g[0] as usize] = Some(i as u32);
                    receives[g[1] as usize] = Some(i as u32);
                } else {
                    for &r in g {
                        member[r as usize] = Some(i as u32);
                    }
                }
            }
            Kind {
                comm: c,
                member,
                receives,
            }
        };
        let (exposed, partial): (Vec<_>, Vec<_>) = it
            .comms
            .iter()
            .filter(|c| c.count > 0)
            .map(kind)
            .partition(|k| k.comm.exposed >= 1.0);
        let slices = exposed
            .iter()
            .map(|k| k.comm.count)
            .max()
            .unwrap_or(1)
            .max(1);
        Synth {
            it,
            exposed,
            partial,
            slices,
        }
    }

    /// Compute nodes per rank.
    pub fn slices(&self) -> u64 {
        self.slices
    }

    /// Nodes of rank `r`'s file, counted without making them (what [`Synth::rank_nodes`]
    /// emits).
    pub fn nodes_of(&self, r: u32) -> u64 {
        let ru = r as usize;
        // Compute slices, the bubble, `iteration_end`.
        let mut n = self.slices + u64::from(self.it.bubble_s > 0.0) + 1;
        for k in &self.partial {
            if k.member[ru].is_none() || k.comm.op.is_none() {
                continue;
            }
            let c = k.comm.count;
            // The hidden share on the side branch, the exposed share after the bubble.
            n = n
                .saturating_add(if k.comm.exposed < 1.0 { c } else { 0 })
                .saturating_add(if k.comm.exposed > 0.0 { c } else { 0 });
        }
        for k in &self.exposed {
            let times = if k.comm.op.is_some() {
                u64::from(k.member[ru].is_some())
            } else {
                u64::from(k.member[ru].is_some()) + u64::from(k.receives[ru].is_some())
            };
            n = n.saturating_add(k.comm.count.saturating_mul(times));
        }
        n
    }

    /// The size of the whole trace (files, nodes, estimated bytes), before writing it.
    pub fn size(&self, gzip: bool) -> TraceSize {
        let (mut nodes, mut most) = (0u64, 0u64);
        for r in 0..self.it.gpus {
            let n = self.nodes_of(r);
            nodes = nodes.saturating_add(n);
            most = most.max(n);
        }
        TraceSize {
            files: u64::from(self.it.gpus),
            nodes,
            nodes_per_rank: most,
            bytes: nodes.saturating_mul(TraceSize::bytes_per_node(gzip)),
        }
    }

    /// [`Synth::size`] checked against the budgets of [`crate::budget`]: the error names the
    /// size, the limit and the job's numbers to lower.
    pub fn check_size(&self, gzip: bool) -> Result<TraceSize, String> {
        let size = self.size(gzip);
        let kinds: Vec<String> = self
            .exposed
            .iter()
            .chain(&self.partial)
            .map(|k| format!("{} x{}", k.comm.name, budget::thousands(k.comm.count)))
            .collect();
        size.check(
            &format!("the trace of job `{}`", self.it.name),
            &format!(
                "per iteration it runs {}; lower model.layers or model.global_batch (the \
                 counts grow with layers per stage x micro-batches per replica), or gpus",
                if kinds.is_empty() {
                    "no communication".to_owned()
                } else {
                    kinds.join(", ")
                }
            ),
        )?;
        Ok(size)
    }

    /// The global metadata of every file.
    pub fn metadata(&self) -> crate::GlobalMetadata {
        TraceInfo {
            peak_flops_per_s: Some(self.it.peak_flops_per_s),
            efficiency: Some(self.it.efficiency),
            alpha_s: Some(self.it.alpha_s),
            scale_up_gpus: Some(self.it.scale_up_gpus),
            scale_up_bytes_per_s: Some(self.it.scale_up_bytes_per_s),
            placement: Some(self.it.placement.name()),
            job: Some(self.it.name.clone()),
            tokens: Some(self.it.tokens),
        }
        .to_metadata()
    }

    /// The process groups: `(pg_name, ranks)`.
    pub fn groups(&self) -> Vec<(String, Vec<u32>)> {
        let mut out = Vec::new();
        let mut seen = Vec::new();
        for k in self.exposed.iter().chain(&self.partial) {
            let d = dim_name(k.comm.dim);
            if seen.contains(&d) {
                continue;
            }
            seen.push(d);
            for (i, g) in k.comm.groups.iter().enumerate() {
                out.push((format!("{d}.{i}"), g.clone()));
            }
        }
        out
    }

    fn flops(&self, seconds: f64) -> i64 {
        (seconds * self.it.peak_flops_per_s * self.it.efficiency).round() as i64
    }

    /// Emit rank `r`'s nodes in order.
    pub fn rank_nodes<E>(
        &self,
        r: u32,
        emit: &mut dyn FnMut(&Node) -> Result<(), E>,
    ) -> Result<(), E> {
        let ru = r as usize;
        let mut id = 0u64;
        let mut node = Node::default();
        let mut next = |node: &mut Node,
                        name: String,
                        t: NodeType,
                        deps: &[u64],
                        attr: Vec<AttributeProto>|
         -> Result<u64, E> {
            node.id = id;
            node.name = name;
            node.r#type = t as i32;
            node.data_deps.clear();
            node.data_deps.extend_from_slice(deps);
            node.attr = attr;
            emit(node)?;
            id += 1;
            Ok(id - 1)
        };
        let coll = |k: &Kind, bytes: f64| {
            let c = k.comm;
            let op = c.op.expect("a collective kind");
            let group = k.member[ru].expect("a rank of the group");
            vec![
                AttributeProto::int("comm_type", comm_type(op) as i64),
                AttributeProto::int("comm_size", bytes.round() as i64),
                AttributeProto::string("pg_name", &format!("{}.{group}", dim_name(c.dim))),
                AttributeProto::string("algorithm", c.algo.name()),
            ]
        };
        let slice_ops = self.flops(self.it.compute_s / self.slices as f64);
        let mut prev: Vec<u64> = Vec::new();
        let mut side: Vec<u64> = Vec::new();
        for j in 0..self.slices {
            let c = next(
                &mut node,
                format!("compute.{j}"),
                NodeType::CompNode,
                &prev,
                vec![AttributeProto::int("num_ops", slice_ops)],
            )?;
            prev = vec![c];
            if j == 0 {
                // The hidden share of partly exposed kinds, on a side branch.
                let mut dep = vec![c];
                for k in &self.partial {
                    let hidden = 1.0 - k.comm.exposed;
                    if hidden <= 0.0 || k.member[ru].is_none() || k.comm.op.is_none() {
                        continue;
                    }
                    for i in 0..k.comm.count {
                        let n = next(
                            &mut node,
                            format!("{} (overlapped).{i}", k.comm.name),
                            NodeType::CommCollNode,
                            &dep,
                            coll(k, k.comm.bytes * hidden),
                        )?;
                        dep = vec![n];
                    }
                }
                if dep[0] != c {
                    side = dep;
                }
            }
            for k in &self.exposed {
                // Instance i goes after slice ceil((i + 1) J / count) - 1: the last one
                // after the last slice.
                let cnt = k.comm.count;
                let lo = (j * cnt).div_ceil(self.slices);
                let hi = ((j + 1) * cnt).div_ceil(self.slices);
                for i in lo..hi {
                    if k.comm.op.is_some() {
                        if k.member[ru].is_none() {
                            continue;
                        }
                        let n = next(
                            &mut node,
                            format!("{}.{i}", k.comm.name),
                            NodeType::CommCollNode,
                            &prev,
                            coll(k, k.comm.bytes),
                        )?;
                        prev = vec![n];
                    } else {
                        let mut step = Vec::new();
                        let d = dim_name(k.comm.dim);
                        let size = k.comm.bytes.round() as i64;
                        for (pair, t, peer_key) in [
                            (k.member[ru], NodeType::CommSendNode, "comm_dst"),
                            (k.receives[ru], NodeType::CommRecvNode, "comm_src"),
                        ] {
                            let Some(pair) = pair else {
                                continue;
                            };
                            let g = &k.comm.groups[pair as usize];
                            let peer = if t == NodeType::CommSendNode {
                                g[1]
                            } else {
                                g[0]
                            };
                            let what = if t == NodeType::CommSendNode {
                                "send"
                            } else {
                                "recv"
                            };
                            step.push(next(
                                &mut node,
                                format!("{} {what}.{i}", k.comm.name),
                                t,
                                &prev,
                                vec![
                                    AttributeProto::int(peer_key, i64::from(peer)),
                                    AttributeProto::int("comm_size", size),
                                    AttributeProto::int("comm_tag", i as i64),
                                    AttributeProto::string("pg_name", &format!("{d}.{pair}")),
                                ],
                            )?);
                        }
                        if !step.is_empty() {
                            prev = step;
                        }
                    }
                }
            }
        }
        if self.it.bubble_s > 0.0 {
            let b = next(
                &mut node,
                "pipeline_bubble".into(),
                NodeType::CompNode,
                &prev,
                vec![AttributeProto::int("num_ops", self.flops(self.it.bubble_s))],
            )?;
            prev = vec![b];
        }
        for k in &self.partial {
            if k.comm.exposed <= 0.0 || k.member[ru].is_none() || k.comm.op.is_none() {
                continue;
            }
            for i in 0..k.comm.count {
                let n = next(
                    &mut node,
                    format!("{}.{i}", k.comm.name),
                    NodeType::CommCollNode,
                    &prev,
                    coll(k, k.comm.bytes * k.comm.exposed),
                )?;
                prev = vec![n];
            }
        }
        prev.extend_from_slice(&side);
        next(
            &mut node,
            "iteration_end".into(),
            NodeType::MetadataNode,
            &prev,
            Vec::new(),
        )?;
        Ok(())
    }
}

/// What [`write()`] wrote.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Written {
    /// Ranks (files).
    pub ranks: u32,
    /// Nodes, all ranks.
    pub nodes: u64,
    /// Process groups.
    pub groups: usize,
}

/// Write the trace of `it` into `dir` (created if needed): `<prefix>.<rank>.et[.gz]` and
/// `comm_group.json`, written into a staging directory and moved into `dir` once complete (an
/// error or [`crate::io::abandon_outputs`] leaves no partial trace); `progress` is told each
/// rank done. A prefix that would put files outside `dir` ([`crate::io::check_prefix`]) or a
/// trace beyond the budgets of [`crate::budget`] is refused before anything is written
/// ([`std::io::ErrorKind::InvalidInput`]).
pub fn write(
    it: &Iteration,
    dir: &Path,
    prefix: &str,
    gzip: bool,
    progress: &(dyn Fn(u32) + Sync),
) -> std::io::Result<Written> {
    use rayon::prelude::*;
    crate::io::check_prefix(prefix)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let s = Synth::new(it);
    s.check_size(gzip)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    crate::io::prepare_out_dir(dir).map_err(std::io::Error::other)?;
    // Every file goes into a staging directory first and moves into `dir` at the end: an
    // error or an interrupt leaves no partial trace.
    let staging = Staging::new(dir)?;
    let meta = s.metadata();
    let nodes = (0..it.gpus)
        .into_par_iter()
        .map(|r| {
            let mut count = 0u64;
            let path = staging.path().join(rank_file(prefix, r, gzip));
            write_file(&path, gzip, &meta, |w| {
                s.rank_nodes(r, &mut |n| {
                    count += 1;
                    w(n)
                })
            })?;
            progress(r);
            Ok(count)
        })
        .collect::<std::io::Result<Vec<u64>>>()?
        .into_iter()
        .sum();
    let groups = s.groups();
    write_comm_groups(staging.path(), &groups)?;
    staging.commit(COMM_GROUP_FILE)?;
    Ok(Written {
        ranks: it.gpus,
        nodes,
        groups: groups.len(),
    })
}
