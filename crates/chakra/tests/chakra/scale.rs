//! Rescaling 8 -> 1,024 ranks keeps per-rank compute and resizes the groups as documented.

use aifabric_chakra::io::{Reader, TraceSet};
use aifabric_chakra::proto::{attr, AttributeProto, Node};
use aifabric_chakra::scale::{scale, DpGroups};
use aifabric_chakra::{info::TraceInfo, synth};
use aifabric_spec::job;
use rustc_hash::FxHashMap;

const SMALL: &str = aifabric_fixtures::jobs::SMALL_8;

fn nodes(path: &std::path::Path) -> (TraceInfo, Vec<Node>) {
    let (mut r, m) = Reader::open(path).unwrap();
    (TraceInfo::from_metadata(&m), r.read_all().unwrap())
}

fn text(n: &Node, k: &str) -> Option<String> {
    attr(&n.attr, k).and_then(AttributeProto::as_text)
}

#[test]
fn rescaling_8_to_1024_replicates_the_replica_and_grows_data_parallel_groups() {
    let it = job::parse("small.yaml", SMALL).unwrap();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    synth::write(&it, a.path(), "trace", true, &|_| {}).unwrap();
    let s = scale(a.path(), 1024, b.path(), &DpGroups::Auto, &|_| {}).unwrap();
    assert_eq!((s.from_ranks, s.ranks), (8, 1024));
    assert_eq!(s.dp_groups, vec!["dp.0", "dp.1", "dp.2", "dp.3"]);
    let set = TraceSet::discover(b.path()).unwrap();
    assert_eq!(set.ranks(), 1024);
    // Output rank r + 8 i runs input rank r's nodes: compute, sizes and ids unchanged; only
    // group names and peers differ.
    for nr in [0u32, 5, 8 + 3, 1023] {
        let (r, i) = (nr % 8, nr / 8);
        let (ia, na) = nodes(&a.path().join(format!("trace.{r}.et.gz")));
        let (ib, nb) = nodes(&b.path().join(format!("trace.{nr}.et.gz")));
        assert_eq!(ib.tokens, ia.tokens.map(|t| t * 128.0));
        // Titled as grown, not as the 8-rank job.
        assert_eq!(ib.job, ia.job.as_ref().map(|j| format!("{j} x128")));
        assert!(ia.job.is_some());
        assert_eq!(na.len(), nb.len());
        for (x, y) in na.iter().zip(&nb) {
            assert_eq!((x.id, &x.name, x.r#type), (y.id, &y.name, y.r#type));
            assert_eq!(x.data_deps, y.data_deps);
            let num = |n: &Node, k| attr(&n.attr, k).and_then(AttributeProto::as_u64);
            assert_eq!(num(x, "num_ops"), num(y, "num_ops"));
            assert_eq!(num(x, "comm_size"), num(y, "comm_size"));
            let (px, py) = (text(x, "pg_name"), text(y, "pg_name"));
            match px.as_deref() {
                Some(p) if p.starts_with("dp") => assert_eq!(py, px),
                Some(p) if i > 0 => assert_eq!(py.unwrap(), format!("{p}@{i}")),
                _ => assert_eq!(py, px),
            }
            for k in ["comm_src", "comm_dst"] {
                if let Some(p) = num(x, k) {
                    assert_eq!(num(y, k), Some(p + 8 * u64::from(i)), "{k}");
                }
            }
        }
    }
    // Groups: each DP group of 2 has 256 members, 2 apart in every replica of 8; the TP
    // groups and pipeline pairs are copied 128 times.
    let groups = set.comm_groups().unwrap().unwrap();
    let g: FxHashMap<_, _> = groups.into_iter().collect();
    assert_eq!(g["dp.0"].len(), 256);
    assert_eq!(&g["dp.0"][..4], &[0, 2, 8, 10]);
    assert_eq!(g["tp.0@127"], vec![1016, 1017]);
    assert_eq!(g.keys().filter(|k| k.starts_with("tp.")).count(), 4 * 128);
    // The rescaled trace replays: compute per rank as before, every collective matched.
    let before = crate::common::run(a.path(), 4096).unwrap();
    let after = crate::common::run(b.path(), 4096).unwrap();
    assert_eq!(after.ranks, 1024);
    assert_eq!(after.per_rank[1000].compute_s, before.per_rank[0].compute_s);
    // Tensor-parallel collectives are copied per replica; the 4 DP groups still run their
    // reduce-scatter and all-gather once each.
    let dp = 4 * 2;
    assert_eq!(after.collectives, (before.collectives - dp) * 128 + dp);
}

#[test]
fn rank_counts_that_are_not_multiples_are_refused() {
    let it = job::parse("small.yaml", SMALL).unwrap();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    synth::write(&it, a.path(), "trace", false, &|_| {}).unwrap();
    let e = scale(a.path(), 12, b.path(), &DpGroups::Auto, &|_| {}).unwrap_err();
    assert!(
        e.to_string()
            .contains("not a multiple of the trace's 8 ranks"),
        "{e}"
    );
    let e = scale(
        a.path(),
        16,
        b.path(),
        &DpGroups::Names(vec!["nope".into()]),
        &|_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("`nope`"), "{e}");
}
