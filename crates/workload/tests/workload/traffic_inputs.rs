//! Traffic files (issue 35): every out-of-range or ambiguous input is refused with its line
//! and the valid range, never turned into a silently wrong number; parsed flows keep their
//! start and size far from the edge of a `u64`.

use aifabric_workload::traffic::{
    parse_csv, parse_htsim, Start, MAX_FLOW_BYTES, MAX_START_PS, MAX_START_US,
};
use proptest::prelude::*;

const HEAD: &str = "Nodes 8\nConnections 1\n";

/// (file text, line, what the message says) for the htsim format.
fn cm_cases() -> Vec<(String, usize, &'static str)> {
    vec![
        (format!("{HEAD}1->2 id 1 start 0 size 18446744073709551615\n"), 3, "over the largest flow"),
        (format!("{HEAD}1->2 id 1 start 0 size 1099511627777\n"), 3, "1 to 1099511627776"),
        (format!("{HEAD}1->2 id 1 start 18446744073709551615 size 5\n"), 3, "past the latest start"),
        (format!("{HEAD}1->2 id 1 start 1000000000000000001 size 5\n"), 3, "0 to 1000000000000000000"),
        (format!("{HEAD}1->2 id 1 start 0 size 5 size 7\n"), 3, "`size` is given twice"),
        (format!("{HEAD}1->2 id 1 id 2 start 0 size 5\n"), 3, "`id` is given twice"),
        (
            "Nodes 8\nConnections 2\n1->2 id 1 start 0 size 5 send_done_trigger 1\n2->3 id 2 start 0 trigger 1 size 5\n".to_string(),
            4,
            "both `start` and `trigger 1`",
        ),
        ("Nodes 8\nConnections 1\nTriggers 5\n1->2 id 1 start 0 size 5\n".to_string(), 3, "`Triggers 5` but the file has 0 trigger lines"),
        (format!("{HEAD}1->2 id 1 start -5 size 5\n"), 3, "not a non-negative integer"),
        (format!("{HEAD}1->9 id 1 start 0 size 5\n"), 3, "out of range"),
    ]
}

/// The same for CSV.
fn csv_cases() -> Vec<(&'static str, usize, &'static str)> {
    vec![
        (
            "src,dst,bytes,start_us\n0,1,100,1e300\n",
            2,
            "outside 0 to 1e12 us",
        ),
        ("src,dst,bytes,start_us\n0,1,100,-1\n", 2, "outside 0 to"),
        ("src,dst,bytes,start_us\n0,1,100,NaN\n", 2, "outside 0 to"),
        ("src,dst,bytes,start_us\n0,1,100,inf\n", 2, "outside 0 to"),
        (
            "src,dst,bytes,start_us\n0,1,100,0\n0,1,18446744073709551615,0\n",
            3,
            "over the largest flow",
        ),
        ("src,dst,bytes,start_us\n0,1,-1,0\n", 2, "not a byte count"),
        ("src,dst,bytes,start_us\n0,0,5,0\n", 2, "to itself"),
    ]
}

#[test]
fn malformed_htsim_files_are_refused_at_their_line() {
    for (text, line, says) in cm_cases() {
        let e = parse_htsim("t.cm", &text).expect_err(&text);
        assert_eq!(e.line, line, "{text:?}: {e}");
        assert!(
            e.to_string().contains(says),
            "{text:?}: `{e}` lacks `{says}`"
        );
        assert!(e.to_string().starts_with(&format!("t.cm:{line}: ")), "{e}");
    }
}

#[test]
fn malformed_csv_files_are_refused_at_their_line() {
    for (text, line, says) in csv_cases() {
        let e = parse_csv("t.csv", text).expect_err(text);
        assert_eq!(e.line, line, "{text:?}: {e}");
        assert!(
            e.to_string().contains(says),
            "{text:?}: `{e}` lacks `{says}`"
        );
    }
}

#[test]
fn the_range_edges_are_accepted() {
    let tm = parse_htsim(
        "t.cm",
        &format!("{HEAD}1->2 id 1 start {MAX_START_PS} size {MAX_FLOW_BYTES}\n"),
    )
    .unwrap();
    assert_eq!(tm.flows[0].start, Start::AtPs(MAX_START_PS));
    let tm = parse_csv("t.csv", "src,dst,bytes,start_us\n0,1,100,1e12\n").unwrap();
    assert_eq!(tm.flows[0].start, Start::AtPs(MAX_START_PS));
    assert_eq!(MAX_START_US, 1e12);
}

#[test]
fn a_byte_order_mark_is_accepted_in_both_formats() {
    let cm = parse_htsim(
        "t.cm",
        "\u{feff}Nodes 4\nConnections 1\n0->1 id 1 start 0 size 5\n",
    );
    assert_eq!(cm.map(|t| t.flows.len()), Ok(1));
    let csv = parse_csv("t.csv", "\u{feff}src,dst,bytes,start_us\n0,1,5,0\n");
    assert_eq!(csv.map(|t| t.flows.len()), Ok(1));
}

#[test]
fn a_declared_trigger_count_that_matches_is_accepted() {
    let text = "Nodes 8\nConnections 2\nTriggers 1\n\
        0->1 id 1 start 0 size 5 send_done_trigger 1\n\
        1->2 id 2 trigger 1 size 5\ntrigger id 1 oneshot\n";
    assert!(parse_htsim("t.cm", text).is_ok());
}

proptest! {
    /// Whatever a file says, a parsed flow's start plus its bytes at the slowest rate an
    /// engine models (1 Gb/s: 8,000 ps per byte) and its packets' headers stay inside a
    /// `u64`, so no conversion downstream can wrap.
    #[test]
    fn parsed_flows_never_overflow(
        start in prop_oneof![0u64..=u64::MAX, Just(u64::MAX), Just(MAX_START_PS + 1)],
        size in prop_oneof![1u64..=u64::MAX, Just(u64::MAX), Just(MAX_FLOW_BYTES)],
        start_us in prop_oneof![any::<f64>(), 0.0f64..2e12, Just(1e300)],
    ) {
        let cm = format!("{HEAD}1->2 id 1 start {start} size {size}\n");
        let csv = format!("src,dst,bytes,start_us\n0,1,{size},{start_us}\n");
        for tm in [parse_htsim("t.cm", &cm), parse_csv("t.csv", &csv)].into_iter().flatten() {
            for f in &tm.flows {
                let Start::AtPs(t) = f.start else { continue };
                let wire = f.bytes.checked_add(f.bytes.div_ceil(64) * 64);
                let time = f.bytes.checked_mul(8_000).and_then(|d| d.checked_add(t));
                prop_assert!(wire.is_some() && time.is_some(), "{f:?}");
                prop_assert!(t <= MAX_START_PS && f.bytes <= MAX_FLOW_BYTES);
            }
        }
    }
}
