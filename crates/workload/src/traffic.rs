//! Traffic matrices: flows between GPUs with sizes and start times, the input packet
//! simulators take, so flow-level and packet-level answers can be set side by side.
//!
//! Sources:
//! - htsim's connection-matrix text format (the `.cm` files of its generator scripts,
//!   `gen_permutation.py` and friends in htsim's `sim/datacenter/connection_matrices/`):
//!   a header (`Nodes N`, `Connections C`, optional `Triggers T`, `Failures F`), flow lines
//!   `SRC->DST` followed by key/value pairs in any order (`id I`, `start T` in picoseconds,
//!   `size B`, `trigger K`, `send_done_trigger K` (fired when the sender holds the last
//!   ACK), `recv_done_trigger K` (when the receiver holds every byte), and `prio`, `msg`,
//!   which are accepted and ignored), and trigger lines `trigger id K oneshot|multishot|
//!   barrier [count n]`. Blank lines and `#` comments are skipped;
//! - CSV with a header `src,dst,bytes,start_us`;
//! - generators: permutation, N -> 1 incast, all-to-all, random pairs.
//!
//! Node numbers are GPU indices in placement order (node i runs on the i-th placed GPU).

use rustc_hash::FxHashMap;
use serde::Serialize;

/// When a flow starts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Start {
    /// At this time, picoseconds.
    AtPs(u64),
    /// When trigger K fires.
    Trigger(u32),
}

/// One flow of a traffic matrix.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TmFlow {
    /// Flow id (the file's, else 1-based position).
    pub id: u64,
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// When it starts.
    pub start: Start,
    /// Trigger fired when it completes at the sender.
    pub done_trigger: Option<u32>,
    /// Trigger fired when its receiver holds every byte (htsim's `recv_done_trigger`: a
    /// collective's next step). The flow engine fires both at the flow's end, the packet
    /// engine this one when the last byte is in, before the last ACK is back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recv_trigger: Option<u32>,
}

/// What a trigger does when activated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerKind {
    /// Fires once, at its first activation, and starts every flow waiting on it.
    Oneshot,
    /// Each activation starts the next waiting flow, in file order.
    Multishot,
    /// Fires (as a oneshot) after this many activations.
    Barrier(u32),
}

/// A traffic matrix.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TrafficMatrix {
    /// Nodes (GPUs) it addresses: 0..nodes.
    pub nodes: u32,
    /// The flows, in file order.
    pub flows: Vec<TmFlow>,
    /// Triggers by id (a trigger used but not declared is a oneshot, as in htsim).
    pub triggers: FxHashMap<u32, TriggerKind>,
}

/// A bad traffic file: where, what, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}\n  hint: {hint}")]
pub struct TmError {
    /// File name.
    pub file: String,
    /// 1-based line (0: the whole file).
    pub line: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

/// Most flows a matrix may hold (each costs a few hundred bytes to simulate).
pub const MAX_FLOWS: usize = 20_000_000;

struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn err(&self, line: usize, message: impl Into<String>, hint: impl Into<String>) -> TmError {
        TmError {
            file: self.file.to_string(),
            line,
            message: message.into(),
            hint: hint.into(),
        }
    }
}

fn num<T: std::str::FromStr>(
    cx: &Ctx,
    line: usize,
    key: &str,
    v: Option<&str>,
) -> Result<T, TmError> {
    let v = v.ok_or_else(|| {
        cx.err(
            line,
            format!("`{key}` has no value"),
            format!("write `{key} <number>`"),
        )
    })?;
    v.parse().map_err(|_| {
        cx.err(
            line,
            format!("`{key}` value `{v}` is not a non-negative integer"),
            format!("write `{key} <number>`, e.g. `{key} 1`"),
        )
    })
}

/// Parse htsim's connection-matrix text (`name` is used in errors).
pub fn parse_htsim(name: &str, text: &str) -> Result<TrafficMatrix, TmError> {
    let cx = Ctx { file: name };
    let mut nodes: Option<u32> = None;
    let mut connections: Option<(usize, usize)> = None;
    let mut tm = TrafficMatrix::default();
    let mut ids: FxHashMap<u64, usize> = FxHashMap::default();
    let mut fired_by: FxHashMap<u32, usize> = FxHashMap::default();
    let mut used: Vec<(u32, usize)> = Vec::new();
    // First line waiting on each trigger.
    let mut waits: FxHashMap<u32, usize> = FxHashMap::default();
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut tok = line.split_whitespace();
        let first = tok.next().unwrap_or_default();
        match first {
            "Nodes" => nodes = Some(num(&cx, ln, "Nodes", tok.next())?),
            "Connections" => connections = Some((num(&cx, ln, "Connections", tok.next())?, ln)),
            "Triggers" | "Failures" => {
                let _: u64 = num(&cx, ln, first, tok.next())?;
            }
            "trigger" => {
                // trigger id K oneshot|multishot|barrier [count n]
                if tok.next() != Some("id") {
                    return Err(cx.err(ln, "a trigger line needs `id K` after `trigger`", "write `trigger id 1 oneshot`"));
                }
                let k: u32 = num(&cx, ln, "id", tok.next())?;
                let kind = match tok.next() {
                    Some("oneshot") => TriggerKind::Oneshot,
                    Some("multishot") => TriggerKind::Multishot,
                    Some("barrier") => {
                        if tok.next() != Some("count") {
                            return Err(cx.err(ln, "a barrier trigger needs `count n`", "write `trigger id 1 barrier count 4`"));
                        }
                        let n: u32 = num(&cx, ln, "count", tok.next())?;
                        if n == 0 {
                            return Err(cx.err(ln, "a barrier needs a count of at least 1", "write `count 1` or more"));
                        }
                        TriggerKind::Barrier(n)
                    }
                    other => {
                        return Err(cx.err(
                            ln,
                            format!("unknown trigger type `{}`", other.unwrap_or("")),
                            "use oneshot, multishot or barrier count N",
                        ))
                    }
                };
                if tm.triggers.insert(k, kind).is_some() {
                    return Err(cx.err(ln, format!("trigger {k} is declared twice"), "give each trigger its own id"));
                }
            }
            flow if flow.contains("->") => {
                let n = nodes.ok_or_else(|| cx.err(ln, "a flow line before `Nodes N`", "start the file with `Nodes N` and `Connections C`"))?;
                let (a, b) = flow.split_once("->").unwrap_or_default();
                let node = |s: &str| -> Result<u32, TmError> {
                    let v: u32 = s.parse().map_err(|_| cx.err(ln, format!("`{s}` is not a node number"), "write `SRC->DST` with node numbers, e.g. `3->17`"))?;
                    if v >= n {
                        return Err(cx.err(ln, format!("node {v} is out of range: the file has {n} nodes (0..{})", n - 1), "use node numbers below `Nodes`, or raise it"));
                    }
                    Ok(v)
                };
                let (src, dst) = (node(a)?, node(b)?);
                if src == dst {
                    return Err(cx.err(ln, format!("flow from node {src} to itself"), "a flow needs two different nodes"));
                }
                let mut id = None;
                let mut start = None;
                let mut size = None;
                let mut done = None;
                let mut recv = None;
                while let Some(key) = tok.next() {
                    let v = tok.next();
                    match key {
                        "id" => id = Some(num::<u64>(&cx, ln, key, v)?),
                        "start" => start = Some(Start::AtPs(num(&cx, ln, key, v)?)),
                        "trigger" => start = Some(Start::Trigger(num(&cx, ln, key, v)?)),
                        "size" => size = Some(num::<u64>(&cx, ln, key, v)?),
                        "send_done_trigger" => done = Some(num::<u32>(&cx, ln, key, v)?),
                        "recv_done_trigger" => recv = Some(num::<u32>(&cx, ln, key, v)?),
                        "prio" | "msg" => {
                            let _: u64 = num(&cx, ln, key, v)?;
                        }
                        other => {
                            return Err(cx.err(
                                ln,
                                format!("unknown key `{other}`"),
                                "flow keys are id, start, size, trigger, send_done_trigger, recv_done_trigger, prio, msg",
                            ))
                        }
                    }
                }
                let bytes = size.ok_or_else(|| cx.err(ln, "flow without `size`", "add `size B` (bytes)"))?;
                if bytes == 0 {
                    return Err(cx.err(ln, "flow of size 0", "give the flow at least one byte"));
                }
                let start = start.ok_or_else(|| cx.err(ln, "flow without `start` or `trigger`", "add `start 0` (picoseconds) or `trigger K`"))?;
                let id = id.unwrap_or(tm.flows.len() as u64 + 1);
                if let Some(prev) = ids.insert(id, ln) {
                    return Err(cx.err(ln, format!("flow id {id} was already used on line {prev}"), "give each flow its own id"));
                }
                if let Start::Trigger(k) = start {
                    used.push((k, ln));
                    waits.entry(k).or_insert(ln);
                }
                for k in [done, recv].into_iter().flatten() {
                    used.push((k, ln));
                    fired_by.entry(k).or_insert(ln);
                }
                if tm.flows.len() >= MAX_FLOWS {
                    return Err(cx.err(ln, format!("more than {MAX_FLOWS} flows"), "split the matrix"));
                }
                tm.flows.push(TmFlow { id, src, dst, bytes, start, done_trigger: done, recv_trigger: recv });
            }
            other => {
                return Err(cx.err(
                    ln,
                    format!("unrecognized line starting `{other}`"),
                    "lines are `Nodes N`, `Connections C`, `Triggers T`, `SRC->DST id I start T size B`, or `trigger id K oneshot`",
                ))
            }
        }
    }
    let n = nodes.ok_or_else(|| cx.err(0, "no `Nodes N` line", "start the file with `Nodes N`"))?;
    if let Some((c, ln)) = connections {
        if c != tm.flows.len() {
            return Err(cx.err(
                ln,
                format!(
                    "`Connections {c}` but the file has {} flow lines",
                    tm.flows.len()
                ),
                format!("write `Connections {}`", tm.flows.len()),
            ));
        }
    }
    // Every trigger that starts a flow must be fired by some flow, or it never starts
    // (checked at the first flow waiting on it).
    for &(k, ln) in &used {
        tm.triggers.entry(k).or_insert(TriggerKind::Oneshot);
        if waits.get(&k) == Some(&ln) && !fired_by.contains_key(&k) {
            return Err(cx.err(
                ln,
                format!("flows wait on trigger {k}, but no flow fires it"),
                format!("add `send_done_trigger {k}` (or `recv_done_trigger {k}`) to the flow that should start them"),
            ));
        }
    }
    tm.nodes = n;
    Ok(tm)
}

/// Parse a CSV with the header `src,dst,bytes,start_us` (`name` is used in errors).
pub fn parse_csv(name: &str, text: &str) -> Result<TrafficMatrix, TmError> {
    let cx = Ctx { file: name };
    let mut rd = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = rd.headers().map_err(|e| {
        cx.err(
            1,
            format!("unreadable header: {e}"),
            "the first line must be `src,dst,bytes,start_us`",
        )
    })?;
    let want = ["src", "dst", "bytes", "start_us"];
    if header.iter().collect::<Vec<_>>() != want {
        return Err(cx.err(
            1,
            format!(
                "header is `{}`",
                header.iter().collect::<Vec<_>>().join(",")
            ),
            "the first line must be `src,dst,bytes,start_us`",
        ));
    }
    let mut tm = TrafficMatrix::default();
    let mut max_node = 0u32;
    for rec in rd.records() {
        let rec = rec.map_err(|e| {
            let ln = e.position().map_or(0, |p| p.line() as usize);
            cx.err(
                ln,
                format!("{e}"),
                "each line needs 4 fields: src,dst,bytes,start_us",
            )
        })?;
        let ln = rec.position().map_or(0, |p| p.line() as usize);
        let field = |i: usize| rec.get(i).unwrap_or("");
        let node = |i: usize| -> Result<u32, TmError> {
            field(i).parse().map_err(|_| {
                cx.err(
                    ln,
                    format!("`{}` is not a node number ({})", field(i), want[i]),
                    "nodes are GPU indices in placement order: 0, 1, ...",
                )
            })
        };
        let (src, dst) = (node(0)?, node(1)?);
        if src == dst {
            return Err(cx.err(
                ln,
                format!("flow from node {src} to itself"),
                "a flow needs two different nodes",
            ));
        }
        let bytes: u64 = field(2).parse().map_err(|_| {
            cx.err(
                ln,
                format!("`{}` is not a byte count", field(2)),
                "bytes is a positive integer",
            )
        })?;
        if bytes == 0 {
            return Err(cx.err(ln, "flow of 0 bytes", "give the flow at least one byte"));
        }
        let start: f64 = field(3).parse().map_err(|_| {
            cx.err(
                ln,
                format!("`{}` is not a time", field(3)),
                "start_us is microseconds >= 0, e.g. 0 or 12.5",
            )
        })?;
        if !(start.is_finite() && start >= 0.0) {
            return Err(cx.err(
                ln,
                format!("start {start} us is not >= 0"),
                "start_us is microseconds >= 0",
            ));
        }
        if tm.flows.len() >= MAX_FLOWS {
            return Err(cx.err(
                ln,
                format!("more than {MAX_FLOWS} flows"),
                "split the matrix",
            ));
        }
        max_node = max_node.max(src).max(dst);
        tm.flows.push(TmFlow {
            id: tm.flows.len() as u64 + 1,
            src,
            dst,
            bytes,
            start: Start::AtPs((start * 1e6).round() as u64),
            done_trigger: None,
            recv_trigger: None,
        });
    }
    if tm.flows.is_empty() {
        return Err(cx.err(
            0,
            "no flows",
            "add lines `src,dst,bytes,start_us` after the header",
        ));
    }
    tm.nodes = max_node + 1;
    Ok(tm)
}

/// Read a traffic file: htsim's format, or CSV when the name ends in `.csv`.
pub fn load(path: &str) -> Result<TrafficMatrix, TmError> {
    let text =
        aifabric_model::input::read_text(path.as_ref(), aifabric_model::input::DATA_LIMIT_BYTES)
            .map_err(|e| TmError {
                file: path.to_string(),
                line: 0,
                message: format!("cannot read: {e}"),
                hint: "give the path of an htsim .cm file or a CSV (src,dst,bytes,start_us)".into(),
            })?;
    if path.ends_with(".csv") {
        parse_csv(path, &text)
    } else {
        parse_htsim(path, &text)
    }
}

/// A generated traffic pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// A random permutation: every node sends one flow and receives one (none to itself).
    Permutation,
    /// N senders (nodes 1..=N) to node 0.
    Incast(u32),
    /// Every node to every other node, all at once.
    AllToAll,
    /// N flows between random distinct nodes.
    Random(u64),
    /// Ring all-reduce of `bytes` per node (the phases of NCCL's ring: reduce-scatter then
    /// all-gather, 2 (N - 1) steps): in each step node i sends a chunk of bytes / N (rounded
    /// up) to node
    /// i + 1, and its step k + 1 starts when its chunk of step k from node i - 1 has arrived
    /// (a oneshot trigger per step and node).
    RingAllReduce,
}

impl Pattern {
    /// Parse `permutation`, `incast:N`, `all-to-all`, `random:N`.
    pub fn parse(s: &str) -> Option<Pattern> {
        Some(match s {
            "permutation" => Pattern::Permutation,
            "all-to-all" | "all_to_all" | "alltoall" => Pattern::AllToAll,
            "ring-allreduce" | "ring_allreduce" | "ring-all-reduce" => Pattern::RingAllReduce,
            _ => {
                let (k, v) = s.split_once(':')?;
                match k {
                    "incast" => Pattern::Incast(v.parse().ok().filter(|&n| n > 0)?),
                    "random" => Pattern::Random(v.parse().ok().filter(|&n| n > 0)?),
                    _ => return None,
                }
            }
        })
    }

    /// Accepted spellings, for hints.
    pub const HELP: &'static str = "permutation, incast:N, all-to-all, random:N or ring-allreduce";

    /// Nodes it needs at least.
    pub fn min_nodes(self) -> u32 {
        match self {
            Pattern::Incast(n) => n.saturating_add(1),
            _ => 2,
        }
    }

    /// The flows over `nodes` nodes, each `bytes`, all starting at 0 (`seed` draws the
    /// permutation or the random pairs).
    pub fn generate(self, nodes: u32, bytes: u64, seed: u64) -> TrafficMatrix {
        use rand::{RngExt, SeedableRng};
        if self == Pattern::RingAllReduce {
            return ring_all_reduce(nodes, bytes);
        }
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        match self {
            Pattern::Permutation => {
                // Sattolo's algorithm: a uniformly random cyclic permutation, so no node
                // sends to itself.
                let mut p: Vec<u32> = (0..nodes).collect();
                for i in (1..nodes as usize).rev() {
                    let j = rng.random_range(0..i);
                    p.swap(i, j);
                }
                pairs.extend((0..nodes).map(|i| (i, p[i as usize])));
            }
            Pattern::Incast(n) => {
                pairs.extend((1..=n.min(nodes.saturating_sub(1))).map(|i| (i, 0)))
            }
            Pattern::AllToAll => {
                for s in 0..nodes {
                    pairs.extend((0..nodes).filter(|&d| d != s).map(|d| (s, d)));
                }
            }
            // Generated above, with its triggers.
            Pattern::RingAllReduce => {}
            Pattern::Random(n) => {
                for _ in 0..n {
                    let s = rng.random_range(0..nodes);
                    let d = (s + rng.random_range(1..nodes)) % nodes;
                    pairs.push((s, d));
                }
            }
        }
        TrafficMatrix {
            nodes,
            flows: pairs
                .into_iter()
                .enumerate()
                .map(|(i, (src, dst))| TmFlow {
                    id: i as u64 + 1,
                    src,
                    dst,
                    bytes,
                    start: Start::AtPs(0),
                    done_trigger: None,
                    recv_trigger: None,
                })
                .collect(),
            triggers: FxHashMap::default(),
        }
    }

    /// Flows [`Pattern::generate`] makes over `nodes` nodes (to refuse huge requests first).
    pub fn flow_count(self, nodes: u32) -> u64 {
        match self {
            Pattern::Permutation => u64::from(nodes),
            Pattern::Incast(n) => u64::from(n.min(nodes.saturating_sub(1))),
            Pattern::AllToAll => u64::from(nodes) * u64::from(nodes.saturating_sub(1)),
            Pattern::Random(n) => n,
            Pattern::RingAllReduce => 2 * u64::from(nodes.saturating_sub(1)) * u64::from(nodes),
        }
    }
}

/// [`Pattern::RingAllReduce`]: flow `k N + i + 1` is step k's chunk from node i to i + 1; it
/// starts at 0 for k = 0, else on trigger `k N + i`, which the chunk of step k - 1 into node
/// i fires when it completes.
fn ring_all_reduce(nodes: u32, bytes: u64) -> TrafficMatrix {
    let n = u64::from(nodes);
    // size / N rounded up (at least 1 byte): every byte of the buffer moves.
    let chunk = bytes.div_ceil(n.max(1)).max(1);
    let steps = 2 * n.saturating_sub(1);
    let mut flows = Vec::with_capacity((steps * n) as usize);
    let mut triggers = FxHashMap::default();
    for k in 0..steps {
        for i in 0..n {
            let next = (i + 1) % n;
            flows.push(TmFlow {
                id: k * n + i + 1,
                src: i as u32,
                dst: next as u32,
                bytes: chunk,
                start: if k == 0 {
                    Start::AtPs(0)
                } else {
                    Start::Trigger((k * n + i) as u32)
                },
                // Node `next` forwards in step k + 1 once this chunk is in.
                done_trigger: None,
                recv_trigger: (k + 1 < steps).then_some(((k + 1) * n + next) as u32),
            });
            if k > 0 {
                triggers.insert((k * n + i) as u32, TriggerKind::Oneshot);
            }
        }
    }
    TrafficMatrix {
        nodes,
        flows,
        triggers,
    }
}

impl std::str::FromStr for Pattern {
    type Err = String;

    fn from_str(s: &str) -> Result<Pattern, String> {
        Pattern::parse(s).ok_or_else(|| format!("unknown pattern `{s}`; use {}", Pattern::HELP))
    }
}
