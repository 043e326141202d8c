//! The rules that map a Slurm node to a fabric host, in their order: the node's own name, a
//! row of the node map, the node prefix and its number (see [`super`]).

use super::Options;
use crate::error::{Source, SpecError};
use aifabric_model::{DeviceId, Fabric, FailureMask};
use aifabric_workload::cluster::hosts;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Rule 2: Slurm node -> host name, from a CSV file.
#[derive(Clone, Debug)]
pub struct NodeMap {
    src: Source,
    /// node -> (host, 1-based line).
    rows: FxHashMap<String, (String, u64)>,
}

/// Read a node map: CSV rows `slurm_node,host` (a header row `slurm_node,host` and lines
/// starting with `#` are skipped). `name` is the file in error messages.
pub fn parse_node_map(name: &str, text: &str) -> Result<NodeMap, SpecError> {
    let src = Source {
        name: name.to_owned(),
        text: String::new(),
    };
    let mut rows: FxHashMap<String, (String, u64)> = FxHashMap::default();
    // A row per line (node and host names hold no line breaks), so each error names its line.
    for (i, row) in text.lines().enumerate() {
        let line = i as u64 + 1;
        if row.trim().is_empty() || row.trim_start().starts_with('#') {
            continue;
        }
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .trim(csv::Trim::All)
            .flexible(true)
            .from_reader(row.as_bytes());
        let mut rec = csv::StringRecord::new();
        if let Err(e) = reader.read_record(&mut rec) {
            return Err(src.error_at_line(
                line,
                1,
                format!("not a CSV row: {e}"),
                Some("write one `slurm_node,host` row per line".into()),
            ));
        }
        let fields: Vec<&str> = rec.iter().collect();
        if fields.iter().all(|f| f.is_empty()) {
            continue;
        }
        if fields == ["slurm_node", "host"] {
            continue;
        }
        let [node, host] = fields[..] else {
            return Err(src.error_at_line(
                line,
                1,
                format!("{} fields; a row is `slurm_node,host`", fields.len()),
                Some("write one `slurm_node,host` row per line, e.g. `gpu017,east.dc0.z0.rack2.host1`".into()),
            ));
        };
        if node.is_empty() || host.is_empty() {
            return Err(src.error_at_line(
                line,
                1,
                "an empty node or host name",
                Some("write one `slurm_node,host` row per line".into()),
            ));
        }
        if let Some((_, first)) = rows.get(node) {
            return Err(src.error_at_line(
                line,
                1,
                format!("node `{node}` is also mapped on line {first}"),
                Some("map each Slurm node once".into()),
            ));
        }
        rows.insert(node.to_owned(), (host.to_owned(), line));
    }
    Ok(NodeMap { src, rows })
}

/// Rule 3: node `P<digits>` is host number `digits - first` in fabric order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodePrefix {
    /// The text before the number (`gpu` for `gpu0017`).
    pub prefix: String,
    /// The number of the fabric's first host (default 1).
    pub first: u64,
}

/// Which rule mapped a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeRule {
    /// The node's name is a host name.
    HostName,
    /// A row of the node map.
    NodeMap,
    /// The node prefix and its number.
    NodePrefix,
}

impl NodeRule {
    pub(super) fn name(self) -> &'static str {
        match self {
            NodeRule::HostName => "host name",
            NodeRule::NodeMap => "node map",
            NodeRule::NodePrefix => "node prefix",
        }
    }
}

/// One node and its host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MappedNode {
    /// Slurm's node name.
    pub node: String,
    /// The fabric host.
    pub host: String,
    /// The rule that mapped it.
    pub rule: NodeRule,
}

/// The hosts of one scale-up size, by name and in fabric order.
pub(super) struct Hosts {
    pub(super) order: Vec<String>,
    pub(super) index: FxHashMap<String, usize>,
}

impl Hosts {
    pub(super) fn new(f: &Fabric, g: u32) -> Self {
        let order: Vec<String> = hosts(f, g, &FailureMask::none(f))
            .into_iter()
            .map(|(name, _): (String, Vec<DeviceId>)| name)
            .collect();
        let index = order
            .iter()
            .enumerate()
            .map(|(i, h)| (h.clone(), i))
            .collect();
        Hosts { order, index }
    }
}

/// The host of `node` by the first rule that applies.
pub(super) fn map_node(
    f: &Fabric,
    hs: &Hosts,
    g: u32,
    node: &str,
    opts: &Options<'_>,
    src: &Source,
    label: &str,
) -> Result<(String, NodeRule), SpecError> {
    if hs.index.contains_key(node) {
        return Ok((node.to_owned(), NodeRule::HostName));
    }
    let mut tried = Vec::new();
    let near_name = aifabric_model::did_you_mean(node, hs.order.iter().map(String::as_str));
    tried.push(match near_name {
        Some(n) => format!("1. it is not a host name (did you mean `{n}`?)"),
        None => "1. it is not a host name".to_owned(),
    });
    match opts.node_map {
        Some(map) => match map.rows.get(node) {
            Some((host, line)) => {
                if hs.index.contains_key(host.as_str()) {
                    return Ok((host.clone(), NodeRule::NodeMap));
                }
                let near = aifabric_model::did_you_mean(host, hs.order.iter().map(String::as_str));
                return Err(map.src.error_at_line(
                    *line,
                    1,
                    format!(
                        "{label}: node `{node}` maps to `{host}`, which is not a host of {} \
                         (hosts are scale-up domains of {g} GPUs, named \
                         `<zone>.rack<R>.host<k>`)",
                        f.name()
                    ),
                    Some(
                        near.map_or_else(
                            || HOSTS_HINT.to_owned(),
                            |n| format!("did you mean `{n}`?"),
                        ),
                    ),
                ));
            }
            None => tried.push(format!("2. it is not in the node map {}", map.src.name)),
        },
        None => tried.push("2. no --node-map is given".to_owned()),
    }
    match opts.node_prefix {
        Some(p) => {
            let digits = node
                .strip_prefix(p.prefix.as_str())
                .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            match digits.map(str::parse::<u64>) {
                Some(Ok(n)) if n >= p.first && n - p.first < hs.order.len() as u64 => {
                    return Ok((
                        hs.order[(n - p.first) as usize].clone(),
                        NodeRule::NodePrefix,
                    ));
                }
                Some(Ok(n)) if n < p.first => {
                    tried.push(format!("3. its number {n} is below --first {}", p.first))
                }
                Some(Ok(n)) => tried.push(format!(
                    "3. it is host number {} (its number {n} - --first {}), but {} has {} hosts \
                     of {g} GPUs",
                    n - p.first,
                    p.first,
                    f.name(),
                    hs.order.len()
                )),
                Some(Err(_)) => tried.push("3. its number is too large".to_owned()),
                None => tried.push(format!(
                    "3. it is not `{}` followed by digits (--node-prefix)",
                    p.prefix
                )),
            }
        }
        None => tried.push("3. no --node-prefix is given".to_owned()),
    }
    Err(src.error_whole(
        format!(
            "{label}: node `{node}` maps to no host of {} ({} hosts of {g} GPUs): {}",
            f.name(),
            hs.order.len(),
            tried.join("; ")
        ),
        Some(format!(
            "add a row `{node},<host>` to a --node-map CSV, or pass --node-prefix P [--first N] \
             (node P<k> is host number k - N in fabric order); {HOSTS_HINT}"
        )),
    ))
}

const HOSTS_HINT: &str = "hosts are named `<zone>.rack<R>.host<k>`: GPU `<zone>.rack<R>.gpu<i>` \
     is on host `i / scale_up.gpus` (list the GPUs with `aifabric build SPEC --out model.json`)";
