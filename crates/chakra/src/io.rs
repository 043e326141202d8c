//! Reading and writing Chakra files: a stream of messages, each prefixed by its length as a
//! varint (at most 32 bits), a [`GlobalMetadata`] first and then [`Node`]s, plain or gzip.
//!
//! The reader streams: it holds one message at a time, and it knows the byte offset of each
//! (in the decompressed stream for gzip files), so a corrupt file is reported with its name,
//! the offset and the node. Unknown fields and node types are counted, not fatal.

use crate::proto::{GlobalMetadata, Node, NodeMessage, NodeType, METADATA_FIELDS, NODE_FIELDS};
use crate::replay::ReplayError;
use flate2::bufread::MultiGzDecoder;
use prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext};
use prost::Message;
use serde::Serialize;
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

pub use crate::output::{
    abandon_outputs, check_output_dir, check_output_dir_into, check_output_file, replace_dir,
    write_atomic, DirError, OldFile, Staging,
};

/// Read buffers, bytes: a replay keeps every rank's file open, so they stay small.
const READ_BUFFER: usize = 16 << 10;

/// Largest message accepted, bytes: a length prefix above it is corruption, not a node.
pub const MAX_MESSAGE_BYTES: u64 = 64 << 20;

/// Where in a file a problem is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum At {
    /// The global metadata (the first message).
    Metadata,
    /// A node whose id could be read.
    Node(u64),
    /// The message after a node (its own id unreadable).
    After(u64),
    /// The first node (its id unreadable).
    First,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Metadata => write!(f, "the global metadata"),
            At::Node(id) => write!(f, "node {id}"),
            At::After(id) => write!(f, "the node after node {id}"),
            At::First => write!(f, "the first node"),
        }
    }
}

/// What is wrong with a file.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// The file cannot be read (the I/O error is the source).
    #[error("cannot read: {0}")]
    Io(#[source] std::io::Error),
    /// The file ends inside a length prefix.
    #[error(
        "truncated varint: the file ends inside a length prefix (it was cut short; copy or \
         export it again)"
    )]
    TruncatedVarint,
    /// A length prefix longer than 5 bytes or above 32 bits.
    #[error(
        "bad length prefix: a varint longer than 5 bytes or above 2^32 (this is not a Chakra \
         ET file, or it is corrupt)"
    )]
    BadVarint,
    /// A length prefix larger than [`MAX_MESSAGE_BYTES`].
    #[error(
        "a message of {0} bytes announced, above the {max}-byte limit (the length prefix is \
         corrupt)",
        max = MAX_MESSAGE_BYTES
    )]
    TooLarge(u64),
    /// The file ends inside a message.
    #[error(
        "truncated message: {want} bytes announced, {got} left (the file was cut short; copy or \
         export it again)"
    )]
    Truncated {
        /// Bytes the prefix announced.
        want: u64,
        /// Bytes left in the file.
        got: u64,
    },
    /// The message does not decode (wrong wire type, bad varint, bad UTF-8...; prost's error
    /// is the source).
    #[error(
        "the protobuf message does not decode: {0} (the file is corrupt or not a Chakra ET file)"
    )]
    Decode(#[source] prost::DecodeError),
    /// The file has no global metadata.
    #[error("empty file: a Chakra ET file starts with its GlobalMetadata message")]
    Empty,
}

/// A file that cannot be read as a Chakra trace; its source is the [`Problem`].
#[derive(Debug, thiserror::Error)]
#[error("{file}: byte {offset}, {at}: {problem}")]
pub struct TraceError {
    /// The file.
    pub file: String,
    /// Byte offset of the message (of the decompressed stream for gzip files).
    pub offset: u64,
    /// The message.
    pub at: At,
    /// What is wrong.
    #[source]
    pub problem: Problem,
}

/// Things skipped while reading, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Warnings {
    /// Fields of nodes or metadata with a number this reader does not know.
    pub unknown_fields: u64,
    /// Nodes of a type this reader does not know (replayed as no-ops).
    pub unknown_node_types: u64,
    /// Collectives of an unknown type (replayed as barriers).
    pub unknown_collectives: u64,
    /// Gathers, scatters, broadcasts and reduces, replayed as the reduce-scatter or
    /// all-gather that moves the same data.
    pub approximated_collectives: u64,
}

impl Warnings {
    /// Add `o`'s counts.
    pub fn add(&mut self, o: &Warnings) {
        self.unknown_fields += o.unknown_fields;
        self.unknown_node_types += o.unknown_node_types;
        self.unknown_collectives += o.unknown_collectives;
        self.approximated_collectives += o.approximated_collectives;
    }

    /// Whether anything was skipped.
    pub fn any(&self) -> bool {
        *self != Warnings::default()
    }
}

/// A streaming reader of one Chakra file.
pub struct Reader {
    input: Box<dyn BufRead + Send>,
    file: String,
    offset: u64,
    buf: Vec<u8>,
    last_id: Option<u64>,
    /// Counted skips so far.
    pub warnings: Warnings,
}

/// Whether a file starts with the gzip magic bytes.
fn is_gzip(input: &mut dyn BufRead) -> std::io::Result<bool> {
    let head = input.fill_buf()?;
    Ok(head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b)
}

impl Reader {
    /// Open `path` (plain or gzip, told by its first bytes) and read its global metadata.
    pub fn open(path: &Path) -> Result<(Reader, GlobalMetadata), TraceError> {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|e| TraceError {
            file: name.clone(),
            offset: 0,
            at: At::Metadata,
            problem: Problem::Io(e),
        })?;
        Reader::new(name, BufReader::with_capacity(READ_BUFFER, file))
    }

    /// Read from `input`, named `file` in errors.
    pub fn new(
        file: String,
        mut input: impl BufRead + Send + 'static,
    ) -> Result<(Reader, GlobalMetadata), TraceError> {
        let gz = is_gzip(&mut input).map_err(|e| TraceError {
            file: file.clone(),
            offset: 0,
            at: At::Metadata,
            problem: Problem::Io(e),
        })?;
        let input: Box<dyn BufRead + Send> = if gz {
            Box::new(BufReader::with_capacity(
                READ_BUFFER,
                MultiGzDecoder::new(input),
            ))
        } else {
            Box::new(input)
        };
        let mut r = Reader {
            input,
            file,
            offset: 0,
            buf: Vec::new(),
            last_id: None,
            warnings: Warnings::default(),
        };
        let start = r.offset;
        if !r.next_message(&At::Metadata)? {
            return Err(r.error(start, At::Metadata, Problem::Empty));
        }
        let meta = GlobalMetadata::decode(&r.buf[..])
            .map_err(|e| r.error(start, At::Metadata, Problem::Decode(e)))?;
        r.warnings.unknown_fields += unknown_fields(&r.buf, METADATA_FIELDS);
        Ok((r, meta))
    }

    /// The file's name.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Offset of the next message, bytes.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn error(&self, offset: u64, at: At, problem: Problem) -> TraceError {
        TraceError {
            file: self.file.clone(),
            offset,
            at,
            problem,
        }
    }

    fn here(&self) -> At {
        match self.last_id {
            Some(id) => At::After(id),
            None => At::First,
        }
    }

    /// Read the next message into `self.buf`; `false` at a clean end of file.
    fn next_message(&mut self, at: &At) -> Result<bool, TraceError> {
        let start = self.offset;
        let file = &self.file;
        let io = |e: std::io::Error| TraceError {
            file: file.clone(),
            offset: start,
            at: at.clone(),
            problem: Problem::Io(e),
        };
        // The varint32 length prefix (protobuf's length-delimited framing, as Java's
        // `writeDelimitedTo` writes it). Its bytes are gathered here and their value decoded by
        // prost. The gathering stays hand-written: it is what tells a clean end of file (before
        // the first byte) from one inside the prefix (`TruncatedVarint`) and from a prefix
        // longer than 5 bytes (`BadVarint`), which `decode_varint` reports alike as "invalid
        // varint"; and `decode_varint` reads a `Buf`, so it needs the whole prefix at hand,
        // which a prefix straddling two fills of the reader's buffer is not.
        let mut prefix = [0u8; 5];
        let mut n = 0;
        loop {
            let b = {
                let avail = self.input.fill_buf().map_err(io)?;
                match avail.first() {
                    Some(&b) => b,
                    None if n == 0 => return Ok(false),
                    None => return Err(self.error(start, at.clone(), Problem::TruncatedVarint)),
                }
            };
            self.input.consume(1);
            self.offset += 1;
            if n == prefix.len() {
                return Err(self.error(start, at.clone(), Problem::BadVarint));
            }
            prefix[n] = b;
            n += 1;
            if b & 0x80 == 0 {
                break;
            }
        }
        // Complete (its last byte ends the varint) and at most 5 bytes: it decodes.
        let len = decode_varint(&mut &prefix[..n])
            .map_err(|_| self.error(start, at.clone(), Problem::BadVarint))?;
        if len > u64::from(u32::MAX) {
            return Err(self.error(start, at.clone(), Problem::BadVarint));
        }
        if len > MAX_MESSAGE_BYTES {
            return Err(self.error(start, at.clone(), Problem::TooLarge(len)));
        }
        self.buf.clear();
        let got = (&mut self.input)
            .take(len)
            .read_to_end(&mut self.buf)
            .map_err(io)? as u64;
        self.offset += got;
        if got < len {
            let at = match peek_id(&self.buf) {
                Some(id) if *at != At::Metadata => At::Node(id),
                _ => at.clone(),
            };
            return Err(self.error(start, at, Problem::Truncated { want: len, got }));
        }
        Ok(true)
    }

    /// Read the next node into `node` (a [`Node`], or the [`crate::proto::NodeCore`] a
    /// replay needs); `false` at the end.
    pub fn next_into<M: NodeMessage>(&mut self, node: &mut M) -> Result<bool, TraceError> {
        let start = self.offset;
        let here = self.here();
        if !self.next_message(&here)? {
            return Ok(false);
        }
        node.clear();
        if let Err(e) = node.merge(&self.buf[..]) {
            let at = peek_id(&self.buf).map_or(here, At::Node);
            return Err(self.error(start, at, Problem::Decode(e)));
        }
        self.warnings.unknown_fields += unknown_fields(&self.buf, NODE_FIELDS);
        if NodeType::try_from(node.raw_type()).is_err() {
            self.warnings.unknown_node_types += 1;
        }
        self.last_id = Some(node.node_id());
        Ok(true)
    }

    /// Read the next node.
    pub fn next_node(&mut self) -> Result<Option<Node>, TraceError> {
        let mut n = Node::default();
        Ok(self.next_into(&mut n)?.then_some(n))
    }

    /// Read all remaining nodes (tests and small traces; replay streams instead).
    pub fn read_all(&mut self) -> Result<Vec<Node>, TraceError> {
        let mut v = Vec::new();
        while let Some(n) = self.next_node()? {
            v.push(n);
        }
        Ok(v)
    }
}

/// The id of a node message whose first field is its id (field 1, varint), as writers emit.
fn peek_id(b: &[u8]) -> Option<u64> {
    match b.split_first() {
        Some((&0x08, mut rest)) => decode_varint(&mut rest).ok(),
        _ => None,
    }
}

/// Top-level fields of an encoded message numbered above `known`, each skipped as its wire
/// type says (protobuf encoding: <https://protobuf.dev/programming-guides/encoding/>). The
/// message has decoded, so its keys are valid; counting stops at anything that is not.
fn unknown_fields(mut b: &[u8], known: u32) -> u64 {
    let mut n = 0;
    while !b.is_empty() {
        let Ok((field, wire_type)) = decode_key(&mut b) else {
            return n;
        };
        if field > known {
            n += 1;
        }
        if skip_field(wire_type, field, &mut b, DecodeContext::default()).is_err() {
            return n;
        }
    }
    n
}

/// A Chakra file being written.
pub struct Writer<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// Start a file with its global metadata.
    pub fn new(out: W, meta: &GlobalMetadata) -> std::io::Result<Self> {
        let mut w = Writer {
            out,
            buf: Vec::with_capacity(256),
        };
        w.message(meta)?;
        Ok(w)
    }

    fn message(&mut self, m: &impl Message) -> std::io::Result<()> {
        self.buf.clear();
        m.encode_length_delimited(&mut self.buf)
            .map_err(std::io::Error::other)?;
        self.out.write_all(&self.buf)
    }

    /// Append a node.
    pub fn node(&mut self, n: &Node) -> std::io::Result<()> {
        self.message(n)
    }

    /// Finish, returning the output.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Write one rank's file atomically, gzip-compressed or plain.
pub fn write_file(
    path: &Path,
    gzip: bool,
    meta: &GlobalMetadata,
    fill: impl FnOnce(&mut dyn FnMut(&Node) -> std::io::Result<()>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    write_atomic(path, |w| {
        if gzip {
            let gz = flate2::write::GzEncoder::new(w, flate2::Compression::fast());
            let mut tw = Writer::new(gz, meta)?;
            fill(&mut |n| tw.node(n))?;
            tw.finish()?.finish()?;
        } else {
            let mut tw = Writer::new(w, meta)?;
            fill(&mut |n| tw.node(n))?;
            tw.finish()?;
        }
        Ok(())
    })
}

/// The files of a trace: `<prefix>.<rank>.et` (or `.et.gz`), ranks 0..n.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceSet {
    /// The directory.
    pub dir: PathBuf,
    /// The common prefix.
    pub prefix: String,
    /// File of each rank.
    pub files: Vec<PathBuf>,
}

/// Process groups as `(pg_name, ranks)`.
pub type GroupList = Vec<(String, Vec<u32>)>;

/// The name ASTRA-sim gives its communicator-group file (`--comm-group-configuration`):
/// `{"<pg_name>": [ranks...]}`.
pub const COMM_GROUP_FILE: &str = "comm_group.json";

impl TraceSet {
    /// Find the files of a trace in `dir`.
    pub fn discover(dir: &Path) -> Result<TraceSet, String> {
        let entries = std::fs::read_dir(dir).map_err(|e| {
            format!(
                "cannot read the trace directory {}: {e}; give a directory of <prefix>.<rank>.et files",
                dir.display()
            )
        })?;
        let mut found: Vec<(String, u32, PathBuf)> = Vec::new();
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name
                .strip_suffix(".et.gz")
                .or_else(|| name.strip_suffix(".et"));
            let Some(stem) = stem else { continue };
            let Some((prefix, rank)) = stem.rsplit_once('.') else {
                continue;
            };
            if let Ok(r) = rank.parse::<u32>() {
                found.push((prefix.to_owned(), r, e.path()));
            }
        }
        if found.is_empty() {
            return Err(format!(
                "no Chakra files in {}: expected <prefix>.<rank>.et or <prefix>.<rank>.et.gz \
                 (e.g. `aifabric chakra synth --job JOB.yaml --out {}`)",
                dir.display(),
                dir.display()
            ));
        }
        found.sort();
        let prefix = found[0].0.clone();
        if let Some(other) = found.iter().find(|f| f.0 != prefix) {
            return Err(format!(
                "{} holds two traces (prefixes `{prefix}` and `{}`); keep one trace per directory",
                dir.display(),
                other.0
            ));
        }
        let mut files = Vec::with_capacity(found.len());
        for (i, (_, r, path)) in found.into_iter().enumerate() {
            if r as usize != i {
                let what = if (r as usize) < i {
                    format!("rank {r} has two files (.et and .et.gz)")
                } else {
                    format!("rank {i} is missing")
                };
                return Err(format!(
                    "{}: {what}; a trace has one file per rank, ranks 0 to n-1",
                    dir.display()
                ));
            }
            files.push(path);
        }
        Ok(TraceSet {
            dir: dir.to_owned(),
            prefix,
            files,
        })
    }

    /// Ranks.
    pub fn ranks(&self) -> u32 {
        self.files.len() as u32
    }

    /// The communicator groups file, if the trace has one.
    pub fn comm_groups(&self) -> Result<Option<GroupList>, String> {
        let path = self.dir.join(COMM_GROUP_FILE);
        let text = match aifabric_model::input::read_text(
            &path,
            aifabric_model::input::YAML_LIMIT_BYTES,
        ) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
            .map_err(|e| {
                format!(
                    "{}:{}:{}: {e}; the file maps each pg_name to its ranks, e.g. {{\"0\": [0, 1]}}",
                    path.display(),
                    e.line(),
                    e.column()
                )
            })?;
        let mut out = Vec::with_capacity(map.len());
        for (k, v) in map {
            let ranks: Vec<u32> = serde_json::from_value(v).map_err(|_| {
                format!(
                    "{}: group `{k}` is not a list of ranks; write e.g. \"{k}\": [0, 1, 2, 3]",
                    path.display()
                )
            })?;
            out.push((k, ranks));
        }
        Ok(Some(out))
    }
}

/// Create `dir` for a new trace, refusing one that already holds trace files (stale ranks
/// of an earlier, larger trace would join the new one): that is the request's fault
/// ([`ReplayError::Input`]); a directory that cannot be created or read is an output that
/// cannot be written ([`ReplayError::Write`]).
pub fn prepare_out_dir(dir: &Path) -> Result<(), ReplayError> {
    let write = |source| ReplayError::Write {
        path: dir.to_owned(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(write)?;
    let held = std::fs::read_dir(dir).map_err(write)?.flatten().any(|e| {
        let n = e.file_name().to_string_lossy().into_owned();
        n.ends_with(".et") || n.ends_with(".et.gz")
    });
    if held {
        return Err(ReplayError::Input(format!(
            "{} already holds a trace; write into an empty directory (or remove its .et files)",
            dir.display()
        )));
    }
    Ok(())
}

/// Write the communicator groups file of a trace, atomically.
pub fn write_comm_groups(dir: &Path, groups: &[(String, Vec<u32>)]) -> std::io::Result<()> {
    let mut map = serde_json::Map::new();
    for (k, v) in groups {
        map.insert(k.clone(), serde_json::json!(v));
    }
    write_atomic(&dir.join(COMM_GROUP_FILE), |w| {
        serde_json::to_writer(&mut *w, &map).map_err(std::io::Error::other)?;
        w.write_all(b"\n")
    })
}

/// Check a trace's file-name prefix: each rank's file must be a plain name inside the
/// trace's directory, so a prefix with a path separator (`../x`, `/tmp/x`, `a/b`), or an
/// empty one (hidden `.0.et` files), is refused with the fix.
pub fn check_prefix(prefix: &str) -> Result<(), String> {
    let name = rank_file(prefix, 0, false);
    let plain = matches!(
        Path::new(&name).components().collect::<Vec<_>>()[..],
        [std::path::Component::Normal(_)]
    );
    if prefix.is_empty() || !plain || prefix.contains(std::path::is_separator) {
        return Err(format!(
            "the trace prefix `{prefix}` is not a plain file-name start: rank files are written \
             as <prefix>.<rank>.et inside the output directory, never elsewhere; give a name \
             without `/`, e.g. `trace`, and choose the directory with `--out`"
        ));
    }
    Ok(())
}

/// The file name of a rank.
pub fn rank_file(prefix: &str, rank: u32, gzip: bool) -> String {
    if gzip {
        format!("{prefix}.{rank}.et.gz")
    } else {
        format!("{prefix}.{rank}.et")
    }
}
