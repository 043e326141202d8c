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

use aifabric_model::time::MAX_INPUT_PS;
use rustc_hash::FxHashMap;
use serde::Serialize;

mod chain;
mod pattern;
mod stall;
pub use chain::chained;
pub use pattern::Pattern;
pub use stall::{stalled, Stall};

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

/// Largest flow, bytes (1 TiB): a thousand times a training step's largest collective
/// buffer, and small enough that a flow's bytes plus its packets' headers, or its bytes in
/// bits, stay far inside a `u64`.
pub const MAX_FLOW_BYTES: u64 = 1 << 40;

/// Most bytes a whole matrix may carry (1 EiB): sums over its flows stay inside a `u64`
/// ([`MAX_FLOWS`] flows of [`MAX_FLOW_BYTES`] would not).
pub const MAX_MATRIX_BYTES: u64 = 1 << 60;

/// Latest start, picoseconds ([`MAX_INPUT_PS`], about 11.6 days): a start plus the run's
/// time never reaches [`aifabric_model::Ps::MAX`], so no engine's clock saturates or wraps.
pub const MAX_START_PS: u64 = MAX_INPUT_PS;

/// Latest CSV start, microseconds ([`MAX_START_PS`] in microseconds).
pub const MAX_START_US: f64 = MAX_START_PS as f64 * 1e-6;

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
    // Editors on Windows save a byte-order mark; it is not part of the first line.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut nodes: Option<u32> = None;
    let mut connections: Option<(usize, usize)> = None;
    let mut declared_triggers: Option<(u64, usize)> = None;
    let mut total_bytes: u64 = 0;
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
            "Triggers" => declared_triggers = Some((num(&cx, ln, first, tok.next())?, ln)),
            "Failures" => {
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
                let mut at_ps = None;
                let mut on_trigger = None;
                let mut size = None;
                let mut done = None;
                let mut recv = None;
                // Keys given on this line: a second `size` would silently replace the first.
                let mut seen: Vec<&str> = Vec::new();
                while let Some(key) = tok.next() {
                    let v = tok.next();
                    if seen.contains(&key) {
                        return Err(cx.err(
                            ln,
                            format!("`{key}` is given twice on this line"),
                            format!("keep one `{key}` per flow"),
                        ));
                    }
                    seen.push(key);
                    match key {
                        "id" => id = Some(num::<u64>(&cx, ln, key, v)?),
                        "start" => {
                            let t: u64 = num(&cx, ln, key, v)?;
                            if t > MAX_START_PS {
                                return Err(cx.err(
                                    ln,
                                    format!("`start {t}` is past the latest start, {MAX_START_PS} ps (about 11.6 days)"),
                                    format!("give the start in picoseconds, 0 to {MAX_START_PS}"),
                                ));
                            }
                            at_ps = Some(t);
                        }
                        "trigger" => on_trigger = Some(num::<u32>(&cx, ln, key, v)?),
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
                check_bytes(&cx, ln, bytes, &mut total_bytes)?;
                let start = match (at_ps, on_trigger) {
                    (Some(_), Some(k)) => {
                        return Err(cx.err(
                            ln,
                            format!("the flow has both `start` and `trigger {k}`"),
                            "a flow starts at a time (`start T`) or when a trigger fires (`trigger K`): keep one",
                        ))
                    }
                    (Some(t), None) => Start::AtPs(t),
                    (None, Some(k)) => Start::Trigger(k),
                    (None, None) => {
                        return Err(cx.err(ln, "flow without `start` or `trigger`", "add `start 0` (picoseconds) or `trigger K`"))
                    }
                };
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
    if let Some((t, ln)) = declared_triggers {
        if t != tm.triggers.len() as u64 {
            return Err(cx.err(
                ln,
                format!(
                    "`Triggers {t}` but the file has {} trigger lines",
                    tm.triggers.len()
                ),
                format!(
                    "write `Triggers {}`, or add the `trigger id K oneshot` lines",
                    tm.triggers.len()
                ),
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
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut total_bytes: u64 = 0;
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
            // u32::MAX is refused too: the matrix counts max + 1 nodes.
            field(i)
                .parse()
                .ok()
                .filter(|&n: &u32| n < u32::MAX)
                .ok_or_else(|| {
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
        check_bytes(&cx, ln, bytes, &mut total_bytes)?;
        let start: f64 = field(3).parse().map_err(|_| {
            cx.err(
                ln,
                format!("`{}` is not a time", field(3)),
                "start_us is microseconds >= 0, e.g. 0 or 12.5",
            )
        })?;
        if !(start.is_finite() && (0.0..=MAX_START_US).contains(&start)) {
            return Err(cx.err(
                ln,
                format!(
                    "start `{}` us is outside 0 to {MAX_START_US:e} us (about 11.6 days)",
                    field(3)
                ),
                format!("start_us is microseconds from 0 to {MAX_START_US:e}, e.g. 0 or 12.5"),
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

/// Refuse a flow over [`MAX_FLOW_BYTES`], or one that takes the matrix over
/// [`MAX_MATRIX_BYTES`] (`total` is the bytes of the flows before it).
fn check_bytes(cx: &Ctx, ln: usize, bytes: u64, total: &mut u64) -> Result<(), TmError> {
    if bytes > MAX_FLOW_BYTES {
        return Err(cx.err(
            ln,
            format!("a flow of {bytes} bytes is over the largest flow, {MAX_FLOW_BYTES} bytes (1 TiB)"),
            format!("give sizes in bytes from 1 to {MAX_FLOW_BYTES}; split larger transfers into several flows"),
        ));
    }
    *total = total.saturating_add(bytes);
    if *total > MAX_MATRIX_BYTES {
        return Err(cx.err(
            ln,
            format!("the flows up to here carry over {MAX_MATRIX_BYTES} bytes (1 EiB)"),
            "use smaller flows or fewer of them",
        ));
    }
    Ok(())
}

/// Where the file at `path` asks for node `node`: the first flow line naming it, else (an
/// htsim file) its `Nodes` line; with what that line says, for a refusal (`node 200`,
/// `Nodes 4096`). Read again only to locate an error, so no parse keeps line numbers.
pub fn node_line(path: &str, node: u32) -> Option<(usize, String)> {
    let text =
        aifabric_model::input::read_text(path.as_ref(), aifabric_model::input::DATA_LIMIT_BYTES)
            .ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let csv = path.ends_with(".csv");
    let names = |a: &str, b: &str| [a, b].iter().any(|s| s.trim().parse() == Ok(node));
    let mut nodes_line = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        let first = line.split_whitespace().next().unwrap_or_default();
        let pair = if csv {
            let mut f = line.split(',');
            f.next().zip(f.next())
        } else {
            first.split_once("->")
        };
        if pair.is_some_and(|(a, b)| names(a, b)) {
            return Some((i + 1, format!("node {node}")));
        }
        if !csv && first == "Nodes" && nodes_line.is_none() {
            nodes_line = Some((i + 1, format!("`{line}`")));
        }
    }
    nodes_line
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
