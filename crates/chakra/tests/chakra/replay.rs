//! Hand-built DAGs with known critical paths replay to the expected times exactly, and each
//! kind of broken trace gets its own error.

use crate::common::*;
use aifabric_chakra::replay::secs;

const AR: i64 = 0;
const AG: i64 = 2;

fn groups(g: &[(&str, &[u32])]) -> Vec<(String, Vec<u32>)> {
    g.iter().map(|(k, v)| (k.to_string(), v.to_vec())).collect()
}

fn path_ids(r: &aifabric_chakra::replay::Replay) -> Vec<(u32, u64)> {
    r.critical_path
        .iter()
        .map(|s| (s.rank.get(), s.id.get()))
        .collect()
}

#[test]
fn a_chain_adds_up_and_is_its_own_critical_path() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[vec![comp(0, 5, &[]), comp(1, 7, &[0]), comp(2, 11, &[1])]],
        None,
    );
    let r = run(d.path(), 64).unwrap();
    assert_eq!(r.iteration_s, secs(23 * US));
    assert_eq!(path_ids(&r), vec![(0, 0), (0, 1), (0, 2)]);
    assert_eq!(r.per_rank[0].compute_s, secs(23 * US));
    assert_eq!(r.per_rank[0].exposed_comm_s, 0.0);
    assert_eq!(r.critical_path[2].name, "comp2");
    assert_eq!(r.critical_path[2].start_s, secs(12 * US));
}

#[test]
fn compute_nodes_share_one_stream_in_file_order() {
    // 1 and 2 both depend only on 0, but run one after the other.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[vec![comp(0, 3, &[]), comp(1, 10, &[0]), comp(2, 4, &[0])]],
        None,
    );
    let r = run(d.path(), 64).unwrap();
    assert_eq!(r.iteration_s, secs(17 * US));
    assert_eq!(path_ids(&r), vec![(0, 0), (0, 1), (0, 2)]);
}

#[test]
fn communication_overlaps_compute_and_the_longer_branch_decides() {
    // 0 (3 us) -> collective 1 (1 us + 20,000 B x 1 ns = 21 us) and -> compute 2 (10 us);
    // 3 (2 us) needs both: 3 + 21 + 2.
    let d = tempfile::tempdir().unwrap();
    let n = vec![
        comp(0, 3, &[]),
        coll(1, AR, 20_000, "w", &[0]),
        comp(2, 10, &[0]),
        comp(3, 2, &[1, 2]),
    ];
    write(d.path(), &[n], Some(&groups(&[("w", &[0])])));
    let r = run(d.path(), 64).unwrap();
    assert_eq!(r.iteration_s, secs(26 * US));
    assert_eq!(path_ids(&r), vec![(0, 0), (0, 1), (0, 3)]);
    assert_eq!(r.per_rank[0].compute_s, secs(15 * US));
    assert_eq!(r.per_rank[0].exposed_comm_s, secs(11 * US));
    // With a short collective the compute branch decides instead.
    let d = tempfile::tempdir().unwrap();
    let n = vec![
        comp(0, 3, &[]),
        coll(1, AR, 1_000, "w", &[0]),
        comp(2, 10, &[0]),
        comp(3, 2, &[1, 2]),
    ];
    write(d.path(), &[n], Some(&groups(&[("w", &[0])])));
    let r = run(d.path(), 64).unwrap();
    assert_eq!(r.iteration_s, secs(15 * US));
    assert_eq!(path_ids(&r), vec![(0, 0), (0, 2), (0, 3)]);
}

#[test]
fn a_collective_starts_when_its_last_member_arrives() {
    // Rank 0 arrives at 5 us, rank 1 at 9 us; the all-reduce (1 us + 4 us) ends at 14 us
    // on both; rank 1 then computes 1 us more.
    let d = tempfile::tempdir().unwrap();
    let r0 = vec![comp(0, 5, &[]), coll(1, AR, 4_000, "g", &[0])];
    let r1 = vec![
        comp(0, 9, &[]),
        coll(1, AR, 4_000, "g", &[0]),
        comp(2, 1, &[1]),
    ];
    write(d.path(), &[r0, r1], Some(&groups(&[("g", &[0, 1])])));
    let r = run(d.path(), 64).unwrap();
    assert_eq!(r.iteration_s, secs(15 * US));
    assert_eq!(r.per_rank[0].iteration_s, secs(14 * US));
    assert_eq!(r.per_rank[0].exposed_comm_s, secs(9 * US));
    assert_eq!(path_ids(&r), vec![(1, 0), (1, 1), (1, 2)]);
    assert_eq!(r.critical_path[1].kind, "coll");
    assert_eq!(r.collectives, 1);
}

#[test]
fn collectives_of_one_group_serialize_in_file_order() {
    // Both collectives are ready at 1 us; the second waits for the first (3 us each).
    let d = tempfile::tempdir().unwrap();
    let n = vec![
        comp(0, 1, &[]),
        coll(1, AR, 2_000, "g", &[0]),
        coll(2, AG, 2_000, "g", &[0]),
    ];
    write(d.path(), &[n], Some(&groups(&[("g", &[0])])));
    let r = run(d.path(), 64).unwrap();
    assert_eq!(r.iteration_s, secs(7 * US));
    assert_eq!(path_ids(&r), vec![(0, 0), (0, 1), (0, 2)]);
    // On two different groups they run side by side.
    let d = tempfile::tempdir().unwrap();
    let n = vec![
        comp(0, 1, &[]),
        coll(1, AR, 2_000, "g", &[0]),
        coll(2, AG, 2_000, "h", &[0]),
    ];
    write(d.path(), &[n], Some(&groups(&[("g", &[0]), ("h", &[0])])));
    assert_eq!(run(d.path(), 64).unwrap().iteration_s, secs(4 * US));
}

#[test]
fn a_transfer_starts_when_both_sides_are_ready() {
    // Send ready at 2 us, receive at 6 us; 1,000 B take 2 us; rank 1 computes 1 us after.
    let d = tempfile::tempdir().unwrap();
    let r0 = vec![comp(0, 2, &[]), p2p(1, true, 1, 1_000, 7, &[0])];
    let r1 = vec![
        comp(0, 6, &[]),
        p2p(1, false, 0, 1_000, 7, &[0]),
        comp(2, 1, &[1]),
    ];
    write(d.path(), &[r0, r1], None);
    let r = run(d.path(), 64).unwrap();
    assert_eq!(r.iteration_s, secs(9 * US));
    assert_eq!(r.per_rank[0].iteration_s, secs(8 * US));
    assert_eq!(path_ids(&r), vec![(1, 0), (1, 1), (1, 2)]);
    assert_eq!(r.critical_path[1].kind, "recv");
    assert_eq!(r.transfers, 1);
}

#[test]
fn transfers_match_by_their_order_in_each_file_not_by_readiness() {
    // Rank 0 sends A (1,000 B, after 10 us of compute) then B (2,000 B, at once); rank 1
    // receives A then B. B's transfer runs first (0-4 us), A's at 10-12 us.
    let d = tempfile::tempdir().unwrap();
    let r0 = vec![
        comp(0, 10, &[]),
        p2p(1, true, 1, 1_000, 0, &[0]),
        p2p(2, true, 1, 2_000, 0, &[]),
    ];
    let r1 = vec![
        p2p(0, false, 0, 1_000, 0, &[]),
        p2p(1, false, 0, 2_000, 0, &[]),
    ];
    write(d.path(), &[r0, r1], None);
    let r = run(d.path(), 64).unwrap();
    assert_eq!(r.per_rank[1].iteration_s, secs(12 * US));
    assert_eq!(path_ids(&r), vec![(0, 0), (0, 1)]);
    assert_eq!(r.transfers, 2);
}

#[test]
fn num_ops_go_through_the_roofline() {
    let d = tempfile::tempdir().unwrap();
    let mut n = comp(0, 0, &[]);
    n.attr = vec![aifabric_chakra::proto::AttributeProto::int(
        "num_ops", 5_000_000,
    )];
    write(d.path(), &[vec![n]], None);
    // 5e6 FLOPs at 1e12 FLOP/s: 5 us.
    assert_eq!(run(d.path(), 64).unwrap().iteration_s, secs(5 * US));
}

#[test]
fn forward_references_and_any_file_order_give_the_same_times() {
    // The same DAG with its nodes listed backwards.
    let d = tempfile::tempdir().unwrap();
    let fwd = vec![
        comp(0, 3, &[]),
        coll(1, AR, 20_000, "w", &[0]),
        comp(2, 10, &[0]),
        comp(3, 2, &[1, 2]),
    ];
    // The collective listed before the node it depends on, the last node before the
    // collective it waits for (compute nodes keep their stream order: 0, 2, 3).
    let shuffled = vec![
        fwd[1].clone(),
        fwd[0].clone(),
        fwd[2].clone(),
        fwd[3].clone(),
    ];
    write(d.path(), &[shuffled], Some(&groups(&[("w", &[0])])));
    let r = run(d.path(), 64).unwrap();
    assert_eq!(r.iteration_s, secs(26 * US));
    // Compute nodes listed against their dependencies: the stream makes it a cycle.
    let d = tempfile::tempdir().unwrap();
    let mut back = fwd.clone();
    back.reverse();
    write(d.path(), &[back], Some(&groups(&[("w", &[0])])));
    let e = run(d.path(), 64).unwrap_err().to_string();
    assert!(
        e.contains("dependency cycle") && e.contains("one stream"),
        "{e}"
    );
}

#[test]
fn a_small_window_stays_exact_when_old_dependencies_do_not_decide() {
    // A long chain; the last node also depends on node 0, far outside a window of 4.
    let d = tempfile::tempdir().unwrap();
    let mut n: Vec<_> = (0..100).map(|i| comp(i, 1, &[])).collect();
    for i in 1..100 {
        n[i as usize].data_deps = vec![i - 1];
    }
    n[99].data_deps.push(0);
    write(d.path(), &[n], None);
    let r = run(d.path(), 4).unwrap();
    assert_eq!(r.iteration_s, secs(100 * US));
    assert_eq!(r.window_bound, 0);
    assert_eq!(r.critical_path.len(), 100);
}

#[test]
fn a_window_bound_that_decides_is_counted() {
    // Node 1 is a 50 us collective hanging off node 0; node 60 depends on it. With a
    // window of 4 the collective is forgotten, and the bound (its own end) decides.
    let d = tempfile::tempdir().unwrap();
    let mut n = vec![comp(0, 1, &[]), coll(1, AR, 49_000, "w", &[0])];
    n.push(comp(2, 0, &[0]));
    for i in 3..60 {
        n.push(comp(i, 0, &[i - 1]));
    }
    n.push(comp(60, 1, &[59, 1]));
    write(d.path(), &[n.clone()], Some(&groups(&[("w", &[0])])));
    let exact = run(d.path(), 1000).unwrap();
    let windowed = run(d.path(), 4).unwrap();
    assert_eq!(exact.iteration_s, secs(52 * US));
    assert_eq!(exact.window_bound, 0);
    assert_eq!(windowed.iteration_s, exact.iteration_s);
    assert!(windowed.window_bound >= 1);
}

fn err(dir: &std::path::Path) -> String {
    match run(dir, 64) {
        Ok(r) => panic!("expected an error, got {r:?}"),
        Err(e) => {
            assert!(e.is_input(), "{e}");
            e.to_string()
        }
    }
}

#[test]
fn a_dependency_on_a_missing_node_is_named() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[vec![comp(0, 1, &[]), comp(1, 1, &[0, 42])]],
        None,
    );
    let e = err(d.path());
    assert!(
        e.contains("t.0.et: node 1: depends on node 42, which is not in the file"),
        "{e}"
    );
}

#[test]
fn a_cycle_is_named_with_its_nodes() {
    let d = tempfile::tempdir().unwrap();
    let n = vec![
        comp(0, 1, &[]),
        comp(1, 1, &[3]),
        comp(2, 1, &[1]),
        comp(3, 1, &[2]),
    ];
    write(d.path(), &[n], None);
    let e = err(d.path());
    assert!(e.contains("dependency cycle"), "{e}");
    for id in ["1", "2", "3"] {
        assert!(e.contains(id), "{e}");
    }
    let d = tempfile::tempdir().unwrap();
    write(d.path(), &[vec![comp(0, 1, &[0])]], None);
    assert!(err(d.path()).contains("depends on itself"));
}

#[test]
fn mismatched_collectives_name_both_ranks() {
    let d = tempfile::tempdir().unwrap();
    let r0 = vec![coll(0, AR, 100, "g", &[])];
    let r1 = vec![coll(0, AR, 200, "g", &[])];
    write(d.path(), &[r0, r1], Some(&groups(&[("g", &[0, 1])])));
    let e = err(d.path());
    assert!(e.contains("collective #0 of process group `g`"), "{e}");
    assert!(e.contains("200 B") && e.contains("100 B"), "{e}");
}

#[test]
fn a_collective_a_member_never_reaches_is_named() {
    let d = tempfile::tempdir().unwrap();
    let r0 = vec![coll(0, AR, 100, "g", &[]), coll(1, AR, 100, "g", &[0])];
    let r1 = vec![coll(0, AR, 100, "g", &[])];
    write(d.path(), &[r0, r1], Some(&groups(&[("g", &[0, 1])])));
    let e = err(d.path());
    assert!(
        e.contains("collective #1 of process group `g` never completes"),
        "{e}"
    );
    assert!(e.contains("rank(s) 1 of the group"), "{e}");
}

#[test]
fn an_unmatched_send_and_a_foreign_group_are_errors() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), &[vec![p2p(0, true, 1, 10, 0, &[])], vec![]], None);
    assert!(err(d.path()).contains("unmatched"));
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[vec![coll(0, AR, 100, "g", &[])], vec![]],
        Some(&groups(&[("g", &[1])])),
    );
    assert!(err(d.path()).contains("is not one of its ranks"));
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[vec![coll(0, AR, 100, "nope", &[])]],
        Some(&groups(&[("g", &[0])])),
    );
    assert!(err(d.path()).contains("process group `nope` is not in the trace's comm_group.json"));
}

#[test]
fn groups_are_inferred_from_pg_names_without_a_group_file() {
    let d = tempfile::tempdir().unwrap();
    let r0 = vec![comp(0, 5, &[]), coll(1, AR, 4_000, "g", &[0])];
    let r1 = vec![comp(0, 9, &[]), coll(1, AR, 4_000, "g", &[0])];
    let r2 = vec![comp(0, 1, &[])];
    write(d.path(), &[r0, r1, r2], None);
    let r = run(d.path(), 64).unwrap();
    assert_eq!(r.iteration_s, secs(14 * US));
    assert_eq!(r.per_rank[2].iteration_s, secs(US));
}

#[test]
fn duplicate_ids_are_an_error() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), &[vec![comp(0, 1, &[]), comp(0, 1, &[])]], None);
    assert!(err(d.path()).contains("a second node with this id"));
}

#[test]
fn a_communication_that_cannot_be_timed_keeps_the_engine_error_as_source() {
    use aifabric_chakra::replay::ReplayError;
    use aifabric_engine::sim::SimError;
    use std::error::Error as _;
    let e = ReplayError::Sim {
        context: Some("all_reduce of 8 B on process group `dp`".into()),
        source: SimError::Invalid("no such group".into()),
    };
    assert_eq!(
        e.to_string(),
        "all_reduce of 8 B on process group `dp`: no such group"
    );
    assert!(!e.is_input());
    let source = e.source().expect("the engine's error is the source");
    assert!(matches!(
        source.downcast_ref::<SimError>(),
        Some(SimError::Invalid(m)) if m == "no such group"
    ));
    let bare = ReplayError::Sim {
        context: None,
        source: SimError::Invalid("no such group".into()),
    };
    assert_eq!(bare.to_string(), "no such group");
}

#[test]
fn groups_named_only_by_sends_and_receives_are_inferred() {
    let d = tempfile::tempdir().unwrap();
    let named = |mut n: aifabric_chakra::proto::Node| {
        n.attr.push(aifabric_chakra::proto::AttributeProto::string(
            "pg_name", "pair",
        ));
        n
    };
    let r0 = vec![
        named(p2p(0, true, 1, 4_000, 0, &[])),
        p2p(1, false, 2, 10, 7, &[]),
    ];
    let r1 = vec![named(p2p(0, false, 0, 4_000, 0, &[]))];
    let r2 = vec![p2p(0, true, 0, 10, 7, &[])];
    write(d.path(), &[r0, r1, r2], None);
    let set = aifabric_chakra::TraceSet::discover(d.path()).unwrap();
    let g = aifabric_chakra::replay::groups_of(&set).unwrap();
    // `pair` has the two ranks that name it; a transfer without a name adds no group.
    assert_eq!(g.names, vec!["pair".to_owned()]);
    assert_eq!(g.members, vec![vec![0, 1]]);
    let r = run(d.path(), 64).unwrap();
    assert_eq!(r.transfers, 2);
}

#[test]
fn attributes_out_of_range_are_errors_naming_the_file_node_and_range() {
    use aifabric_chakra::proto::AttributeProto;
    // (node, what the message must say): never read as 0 or as a saturated time.
    let with = |mut n: aifabric_chakra::proto::Node, key: &str, v: AttributeProto| {
        n.attr.retain(|a| a.name != key);
        n.attr.push(AttributeProto {
            name: key.into(),
            ..v
        });
        n
    };
    let cases = [
        (
            coll(3, AR, -1, "w", &[]),
            "t.0.et: node 3: attribute `comm_size` is -1; it must be a whole number of bytes, \
             from 0 to 1125899906842624",
        ),
        (
            coll(3, AR, i64::MAX, "w", &[]),
            "node 3: attribute `comm_size` is 9223372036854775807",
        ),
        (
            with(
                coll(3, AR, 8, "w", &[]),
                "comm_size",
                AttributeProto::double("", 1.5),
            ),
            "attribute `comm_size` is 1.5",
        ),
        (
            with(comp(3, 0, &[]), "num_ops", AttributeProto::int("", -5)),
            "node 3: attribute `num_ops` is -5; it must be a whole number of operations, 0 or more",
        ),
        (
            with(
                comp(3, 0, &[]),
                "num_ops",
                AttributeProto::string("", "many"),
            ),
            "attribute `num_ops` is \"many\"",
        ),
        (
            with(
                p2p(3, true, 1, 8, 0, &[]),
                "comm_tag",
                AttributeProto::int("", -1),
            ),
            "attribute `comm_tag` is -1",
        ),
    ];
    for (node, want) in cases {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            &[vec![node], vec![]],
            Some(&groups(&[("w", &[0])])),
        );
        let e = err(d.path());
        assert!(e.contains(want), "{e}\nwant: {want}");
    }
    // The largest size is still accepted.
    let d = tempfile::tempdir().unwrap();
    let big = 1i64 << 50;
    write(
        d.path(),
        &[vec![coll(0, AR, big, "w", &[])]],
        Some(&groups(&[("w", &[0])])),
    );
    let r = run(d.path(), 64).unwrap();
    assert_eq!(
        r.iteration_s,
        secs(aifabric_chakra::replay::Ps::new(big as u64 * 1000) + COLL_FIXED_PS)
    );
}

#[test]
fn an_iteration_beyond_the_clock_is_an_error_not_a_saturated_time() {
    // 200 days of compute, twice, on one stream: past 2^64 ps.
    let d = tempfile::tempdir().unwrap();
    let day_us = 86_400 * 1_000_000;
    write(
        d.path(),
        &[vec![
            comp(0, 200 * day_us, &[]),
            comp(1, 200 * day_us, &[0]),
        ]],
        None,
    );
    let e = err(d.path());
    assert!(e.contains("does not fit the replay's clock"), "{e}");
}

#[test]
fn a_rank_twice_in_a_group_file_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let r = vec![coll(0, AR, 8, "g", &[])];
    write(
        d.path(),
        &[r.clone(), r.clone()],
        Some(&groups(&[("g", &[0, 1, 1])])),
    );
    let e = err(d.path());
    assert!(
        e.contains("comm_group.json: group `g` lists rank 1 twice"),
        "{e}"
    );
    let d = tempfile::tempdir().unwrap();
    write(d.path(), &[r.clone(), r], Some(&groups(&[("g", &[])])));
    assert!(err(d.path()).contains("group `g` has no ranks"));
}
