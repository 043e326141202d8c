//! Helpers: hand-built traces.
#![allow(dead_code)]

use aifabric_chakra::io::{rank_file, write_comm_groups, write_file};
use aifabric_chakra::proto::{AttributeProto, Node, NodeType};
use aifabric_chakra::replay::{self, Groups, Ps, RankId, Replay, ReplayConfig, ReplayError, Timer};
use aifabric_chakra::{GlobalMetadata, TraceSet};
use aifabric_workload::{Algo, Op};
use std::path::Path;

/// A compute node of `us` microseconds.
pub fn comp(id: u64, us: u64, deps: &[u64]) -> Node {
    Node {
        id,
        name: format!("comp{id}"),
        r#type: NodeType::CompNode as i32,
        data_deps: deps.to_vec(),
        duration_micros: us,
        ..Node::default()
    }
}

/// A collective on `pg`.
pub fn coll(id: u64, ty: i64, bytes: i64, pg: &str, deps: &[u64]) -> Node {
    Node {
        id,
        name: format!("coll{id}"),
        r#type: NodeType::CommCollNode as i32,
        data_deps: deps.to_vec(),
        attr: vec![
            AttributeProto::int("comm_type", ty),
            AttributeProto::int("comm_size", bytes),
            AttributeProto::string("pg_name", pg),
        ],
        ..Node::default()
    }
}

/// A send or receive.
pub fn p2p(id: u64, send: bool, peer: i64, bytes: i64, tag: i64, deps: &[u64]) -> Node {
    Node {
        id,
        name: format!("{}{id}", if send { "send" } else { "recv" }),
        r#type: if send {
            NodeType::CommSendNode
        } else {
            NodeType::CommRecvNode
        } as i32,
        data_deps: deps.to_vec(),
        attr: vec![
            AttributeProto::int(if send { "comm_dst" } else { "comm_src" }, peer),
            AttributeProto::int("comm_size", bytes),
            AttributeProto::int("comm_tag", tag),
        ],
        ..Node::default()
    }
}

/// Write a trace: one node list per rank, optional groups.
pub fn write(dir: &Path, ranks: &[Vec<Node>], groups: Option<&[(String, Vec<u32>)]>) {
    let meta = GlobalMetadata {
        version: "0.0.4".into(),
        attr: vec![],
    };
    for (r, nodes) in ranks.iter().enumerate() {
        write_file(
            &dir.join(rank_file("t", r as u32, false)),
            false,
            &meta,
            |w| nodes.iter().try_for_each(w),
        )
        .unwrap();
    }
    if let Some(g) = groups {
        write_comm_groups(dir, g).unwrap();
    }
}

/// Collectives take 1 ns per byte plus 1 us; transfers 2 ns per byte.
pub struct Linear {
    pub calls: u64,
}

pub const COLL_FIXED_PS: Ps = Ps::new(1_000_000);

impl Timer for Linear {
    fn collective(
        &mut self,
        _pg: u32,
        _op: Option<Op>,
        _algo: Option<Algo>,
        bytes: u64,
    ) -> Result<Ps, ReplayError> {
        self.calls += 1;
        Ok(Ps::new(bytes * 1000) + COLL_FIXED_PS)
    }

    fn p2p(
        &mut self,
        _s: RankId,
        _d: RankId,
        _pg: Option<u32>,
        bytes: u64,
    ) -> Result<Ps, ReplayError> {
        self.calls += 1;
        Ok(Ps::new(bytes * 2000))
    }
}

/// Replay a directory with the linear timer.
pub fn run(dir: &Path, window: u32) -> Result<Replay, ReplayError> {
    let set = TraceSet::discover(dir).map_err(ReplayError::Input)?;
    let groups: Groups = replay::groups_of(&set)?;
    replay::replay(
        &set,
        &groups,
        &mut Linear { calls: 0 },
        ReplayConfig {
            flops_per_s: 1e12,
            window,
        },
        &|_| {},
    )
}

/// Microseconds in picoseconds.
pub const US: Ps = Ps::new(1_000_000);
