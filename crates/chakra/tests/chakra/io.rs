//! The reader and writer: lossless round trips, and one clear error per kind of damage.

use aifabric_chakra::io::{At, Problem, Reader, TraceSet};
use aifabric_chakra::proto::{self, AttributeProto, IoInfo, Node, Value};
use aifabric_chakra::{GlobalMetadata, Writer};
use proptest::prelude::*;
use prost::Message;
use std::io::Cursor;

fn meta() -> GlobalMetadata {
    GlobalMetadata {
        version: "0.0.4".into(),
        attr: vec![AttributeProto::string("job", "t")],
    }
}

fn encode(nodes: &[Node], gzip: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if gzip {
        let gz = flate2::write::GzEncoder::new(&mut out, flate2::Compression::fast());
        let mut w = Writer::new(gz, &meta()).unwrap();
        for n in nodes {
            w.node(n).unwrap();
        }
        w.finish().unwrap().finish().unwrap();
    } else {
        let mut w = Writer::new(&mut out, &meta()).unwrap();
        for n in nodes {
            w.node(n).unwrap();
        }
        w.finish().unwrap();
    }
    out
}

fn decode(bytes: Vec<u8>) -> Result<(GlobalMetadata, Vec<Node>), aifabric_chakra::TraceError> {
    let (mut r, m) = Reader::new("t.0.et".into(), Cursor::new(bytes))?;
    Ok((m, r.read_all()?))
}

fn value() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        any::<f64>()
            .prop_filter("NaN breaks equality", |v| !v.is_nan())
            .prop_map(|v| Some(Value::DoubleVal(v))),
        any::<i64>().prop_map(|v| Some(Value::Int64Val(v))),
        any::<u64>().prop_map(|v| Some(Value::Uint64Val(v))),
        any::<i32>().prop_map(|v| Some(Value::Sint32Val(v))),
        any::<u32>().prop_map(|v| Some(Value::Fixed32Val(v))),
        any::<bool>().prop_map(|v| Some(Value::BoolVal(v))),
        "[a-z_.0-9]{0,12}".prop_map(|v| Some(Value::StringVal(v))),
        proptest::collection::vec(any::<i64>(), 0..4)
            .prop_map(|v| Some(Value::Int64List(proto::Int64List { values: v }))),
        proptest::collection::vec("[a-z]{0,4}", 0..3)
            .prop_map(|v| Some(Value::StringList(proto::StringList { values: v }))),
        proptest::collection::vec(any::<u8>(), 0..6).prop_map(|v| Some(Value::BytesVal(v))),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    (
        any::<u64>(),
        "[ -~]{0,20}",
        0i32..12,
        proptest::collection::vec(any::<u64>(), 0..4),
        proptest::collection::vec(any::<u64>(), 0..4),
        any::<u64>(),
        any::<u64>(),
        proptest::option::of("[a-z,\\[\\]0-9]{0,10}"),
        proptest::collection::vec(("[a-z_]{1,10}", value()), 0..4),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..8)),
    )
        .prop_map(|(id, name, t, c, d, s, du, io, attrs, storage)| Node {
            id,
            name,
            r#type: t,
            ctrl_deps: c,
            data_deps: d,
            start_time_micros: s,
            duration_micros: du,
            inputs: io.clone().map(|v| IoInfo {
                values: v,
                shapes: "[[1]]".into(),
                types: String::new(),
            }),
            outputs: io.map(|v| IoInfo {
                values: String::new(),
                shapes: v,
                types: "float".into(),
            }),
            attr: attrs
                .into_iter()
                .map(|(name, value)| AttributeProto {
                    name,
                    doc_string: String::new(),
                    value,
                })
                .collect(),
            storage,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever the nodes, writing then reading gives them back, plain or gzip.
    #[test]
    fn write_then_read_is_lossless(nodes in proptest::collection::vec(node(), 0..20), gz in any::<bool>()) {
        let (m, back) = decode(encode(&nodes, gz)).unwrap();
        prop_assert_eq!(m, meta());
        prop_assert_eq!(back, nodes);
    }
}

fn sample() -> Vec<Node> {
    (0..3)
        .map(|i| Node {
            id: 10 + i,
            name: format!("n{i}"),
            r#type: 4,
            data_deps: if i > 0 { vec![9 + i] } else { vec![] },
            duration_micros: 5,
            ..Node::default()
        })
        .collect()
}

#[test]
fn a_file_cut_inside_a_length_prefix_is_a_truncated_varint() {
    let mut b = encode(&sample(), false);
    // A length prefix that announces more bytes (continuation bit set), then the end.
    b.push(0x80);
    let e = decode(b.clone()).unwrap_err();
    assert!(
        matches!(e.problem, Problem::TruncatedVarint),
        "{}",
        e.problem
    );
    assert_eq!(e.offset, b.len() as u64 - 1);
    assert_eq!(e.at, At::After(12));
    let s = e.to_string();
    assert!(s.starts_with("t.0.et: byte "), "{s}");
    assert!(
        s.contains("the node after node 12") && s.contains("truncated varint"),
        "{s}"
    );
}

#[test]
fn a_file_cut_inside_a_message_is_truncated_with_its_node_id() {
    let b = encode(&sample(), false);
    let cut = b[..b.len() - 3].to_vec();
    let e = decode(cut).unwrap_err();
    assert!(
        matches!(e.problem, Problem::Truncated { got, want } if got + 3 == want),
        "{e}"
    );
    assert_eq!(e.at, At::Node(12));
    assert!(e.to_string().contains("truncated message"), "{e}");
}

#[test]
fn a_wrong_wire_type_is_a_decode_error_at_the_node() {
    // Node 7 with its name (field 2) encoded as a varint instead of a string.
    let mut msg = Vec::new();
    Node {
        id: 7,
        ..Node::default()
    }
    .encode(&mut msg)
    .unwrap();
    msg.extend_from_slice(&[(2 << 3) as u8, 5]);
    let mut b = encode(&sample(), false);
    let at = b.len() as u64;
    prost::encoding::encode_varint(msg.len() as u64, &mut b);
    b.extend_from_slice(&msg);
    let e = decode(b).unwrap_err();
    assert_eq!(e.at, At::Node(7));
    assert_eq!(e.offset, at);
    let s = e.to_string();
    assert!(s.contains("wire type"), "{s}");
    // The chain: the trace error, its problem, prost's error.
    let problem = std::error::Error::source(&e).expect("the problem is the source");
    assert!(matches!(
        problem.downcast_ref::<Problem>(),
        Some(Problem::Decode(_))
    ));
    let prost = problem
        .source()
        .expect("prost's error is the problem's source");
    let prost = prost
        .downcast_ref::<prost::DecodeError>()
        .expect("a DecodeError");
    assert!(s.contains(&prost.to_string()), "{s}");
}

#[test]
fn a_missing_file_is_an_io_problem_whose_source_is_the_io_error() {
    let d = tempfile::tempdir().unwrap();
    let e = match Reader::open(&d.path().join("none.0.et")) {
        Err(e) => e,
        Ok(_) => panic!("a missing file opens"),
    };
    assert!(
        e.to_string()
            .contains(": byte 0, the global metadata: cannot read: "),
        "{e}"
    );
    let mut chain = std::iter::successors(std::error::Error::source(&e), |e| e.source());
    let io = chain
        .find_map(|e| e.downcast_ref::<std::io::Error>())
        .expect("an io::Error in the chain");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn a_length_prefix_over_32_bits_is_a_bad_varint() {
    let mut b = encode(&[], false);
    let at = b.len() as u64;
    b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    let e = decode(b).unwrap_err();
    assert!(matches!(e.problem, Problem::BadVarint), "{}", e.problem);
    assert_eq!((e.offset, e.at), (at, At::First));
    // Five bytes, but a value of 35 bits.
    let mut b = encode(&[], false);
    b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x7f]);
    let e = decode(b).unwrap_err();
    assert!(matches!(e.problem, Problem::BadVarint), "{e}");
    let mut b = encode(&[], false);
    b.extend_from_slice(&[0xff, 0xff, 0xff, 0x7f]);
    assert!(matches!(
        decode(b).unwrap_err().problem,
        Problem::TooLarge(_)
    ));
}

#[test]
fn length_prefixes_split_across_buffer_fills_read_whole() {
    // Messages over 127 bytes: two-byte length prefixes, read here one byte per fill.
    let mut nodes = sample();
    for n in &mut nodes {
        n.name = "x".repeat(300);
    }
    let b = encode(&nodes, false);
    let (mut r, m) = Reader::new(
        "t.0.et".into(),
        std::io::BufReader::with_capacity(1, Cursor::new(b.clone())),
    )
    .unwrap();
    assert_eq!((m, r.read_all().unwrap()), decode(b.clone()).unwrap());
    assert_eq!(r.offset(), b.len() as u64);
    // Cut after the first byte of the last prefix: the end falls inside it.
    let last = b.len() - encode(&nodes[nodes.len() - 1..], false).len() + encode(&[], false).len();
    let e = decode(b[..last + 1].to_vec()).unwrap_err();
    assert!(
        matches!(e.problem, Problem::TruncatedVarint),
        "{}",
        e.problem
    );
    assert_eq!(e.offset, last as u64);
}

#[test]
fn an_empty_file_has_no_metadata() {
    let e = decode(Vec::new()).unwrap_err();
    assert!(matches!(e.problem, Problem::Empty), "{}", e.problem);
    assert_eq!(e.at, At::Metadata);
}

#[test]
fn unknown_fields_and_node_types_are_counted_not_fatal() {
    let mut n = sample()[0].clone();
    n.r#type = 99;
    let mut msg = Vec::new();
    n.encode(&mut msg).unwrap();
    // Field 40 (varint) and field 41 (length-delimited): not in the schema.
    msg.extend_from_slice(&[(40 << 3) as u8 | 0x80, 0x02, 7]);
    msg.extend_from_slice(&[(41 << 3 | 2) as u8 | 0x80, 0x02, 2, b'h', b'i']);
    let mut b = encode(&[], false);
    prost::encoding::encode_varint(msg.len() as u64, &mut b);
    b.extend_from_slice(&msg);
    let (mut r, _) = Reader::new("x".into(), Cursor::new(b)).unwrap();
    let got = r.read_all().unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].id, 10);
    assert_eq!(r.warnings.unknown_fields, 2);
    assert_eq!(r.warnings.unknown_node_types, 1);
}

#[test]
fn gzip_files_read_as_plain_ones_and_a_cut_stream_is_an_error() {
    let plain = encode(&sample(), false);
    let mut gz = encode(&sample(), true);
    // Same content; truncate the compressed stream: an error, never a panic.
    let (_, a) = decode(plain).unwrap();
    let (_, b) = decode(gz.clone()).unwrap();
    assert_eq!(a, b);
    gz.truncate(gz.len() - 12);
    assert!(decode(gz).is_err());
}

#[test]
fn trace_directories_need_every_rank() {
    let d = tempfile::tempdir().unwrap();
    for r in [0, 1, 3] {
        std::fs::write(d.path().join(format!("x.{r}.et")), encode(&[], false)).unwrap();
    }
    let e = TraceSet::discover(d.path()).unwrap_err();
    assert!(e.contains("rank 2 is missing"), "{e}");
    std::fs::write(d.path().join("x.2.et"), encode(&[], false)).unwrap();
    assert_eq!(TraceSet::discover(d.path()).unwrap().ranks(), 4);
    std::fs::write(d.path().join("y.0.et"), encode(&[], false)).unwrap();
    assert!(TraceSet::discover(d.path())
        .unwrap_err()
        .contains("two traces"));
    let empty = tempfile::tempdir().unwrap();
    assert!(TraceSet::discover(empty.path())
        .unwrap_err()
        .contains("no Chakra files"));
}

/// Names and contents of the entries of `dir`, sorted.
use aifabric_fixtures::listing;

#[test]
fn a_directory_is_replaced_as_a_whole_or_not_at_all() {
    use aifabric_chakra::io::{replace_dir, DirError, OldFile};
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("set");
    // `.txt` files are this set's, `.csv` another set's sharing the directory.
    let ours = |n: &str| {
        if n.ends_with(".txt") {
            OldFile::Replaced
        } else if n.ends_with(".csv") {
            OldFile::Kept
        } else {
            OldFile::Foreign
        }
    };
    let write = |files: &'static [(&'static str, &'static str)]| {
        move |d: &std::path::Path| -> Result<usize, DirError> {
            for (n, body) in files {
                std::fs::write(d.join(n), body).unwrap();
            }
            Ok(files.len())
        }
    };
    let only_set = || {
        assert_eq!(
            listing(parent.path())
                .iter()
                .map(|e| e.0.as_str())
                .collect::<Vec<_>>(),
            ["set"],
            "nothing left beside the directory"
        );
    };
    // New: created with the set.
    let n = replace_dir(&dir, ours, write(&[("a.txt", "1"), ("b.txt", "1")])).unwrap();
    assert_eq!(n, 2);
    assert_eq!(
        listing(&dir),
        [
            ("a.txt".into(), b"1".to_vec()),
            ("b.txt".into(), b"1".to_vec())
        ]
    );
    only_set();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }
    // Replaced: exactly the new set, the old file gone.
    replace_dir(&dir, ours, write(&[("c.txt", "2")])).unwrap();
    assert_eq!(listing(&dir), [("c.txt".into(), b"2".to_vec())]);
    only_set();
    // Another set's file stays through a replacement, as it was.
    std::fs::write(dir.join("other.csv"), "kept").unwrap();
    replace_dir(&dir, ours, write(&[("c.txt", "2")])).unwrap();
    assert_eq!(
        listing(&dir),
        [
            ("c.txt".into(), b"2".to_vec()),
            ("other.csv".into(), b"kept".to_vec())
        ]
    );
    only_set();
    // A failure midway: the previous set stays, the half-written one is removed.
    let before = listing(&dir);
    let e = replace_dir(&dir, ours, |d| {
        std::fs::write(d.join("c.txt"), "3").unwrap();
        Err::<(), _>(DirError::Io {
            path: d.join("d.txt"),
            source: std::io::Error::other("disk full"),
        })
    });
    assert!(matches!(e, Err(DirError::Io { .. })));
    assert_eq!(listing(&dir), before);
    only_set();
    // A directory holding something else is not replaced.
    std::fs::write(dir.join("notes.md"), "mine").unwrap();
    let e = replace_dir(&dir, ours, write(&[("c.txt", "4")])).unwrap_err();
    assert!(
        matches!(&e, DirError::Foreign { name, .. } if name == "notes.md"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.md")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_to_string(dir.join("c.txt")).unwrap(), "2");
    only_set();
    // `.` has no name to replace.
    let e = replace_dir(std::path::Path::new("."), ours, write(&[])).unwrap_err();
    assert!(matches!(e, DirError::Unnamed { .. }), "{e}");
}

#[test]
fn an_output_directory_that_cannot_be_written_is_not_bad_input() {
    use aifabric_chakra::io::prepare_out_dir;
    use aifabric_chakra::replay::ReplayError;
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("f");
    std::fs::write(&file, "").unwrap();
    // Under a regular file: the output cannot be written (exit 1).
    let e = prepare_out_dir(&file.join("t")).unwrap_err();
    assert!(
        matches!(e, ReplayError::Write { .. }) && !e.is_input(),
        "{e}"
    );
    // Holding a trace: the request must change (exit 2).
    std::fs::write(d.path().join("x.0.et"), "").unwrap();
    let e = prepare_out_dir(d.path()).unwrap_err();
    assert!(
        e.is_input() && e.to_string().contains("already holds a trace"),
        "{e}"
    );
}
