//! A trace synthesized from a job replays to the job's step time, and it is a valid trace.

use aifabric_chakra::fabric::{replay_healthy, FabricOptions};
use aifabric_chakra::io::{Reader, TraceSet};
use aifabric_chakra::synth;
use aifabric_chakra::NodeType;
use aifabric_dataplane::{Lb, Net, NetParams};
use aifabric_engine::job::{run, JobOptions};
use aifabric_model::Scenario;
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_spec::job;
use aifabric_workload::placement;

const DENSE: &str = aifabric_fixtures::jobs::DENSE_256;

const MOE: &str = aifabric_fixtures::jobs::MOE_128;

fn opts(lb: Lb) -> FabricOptions {
    FabricOptions {
        lb,
        ..FabricOptions::default()
    }
}

fn check(text: &str, spec: &str, lb: Lb) {
    let it = job::parse("job.yaml", text).unwrap();
    let f = aifabric_spec::load(spec).unwrap();
    // The job, as `aifabric job` runs it.
    let params = NetParams {
        scale_up_gpus: it.scale_up_gpus,
        scale_up_bytes_per_s: it.scale_up_bytes_per_s,
        ..NetParams::default()
    };
    let healthy = Scenario::healthy(&f);
    let gpus = placement::place(
        &f,
        it.gpus,
        it.scale_up_gpus,
        it.placement,
        &healthy.unusable(),
    )
    .unwrap();
    let net = Net::new(&f, &healthy, AsnPlan::Rfc7938, BgpConfig::default(), params);
    let step = run(
        &net,
        &it,
        &gpus,
        JobOptions {
            lb,
            seed: 1,
            channels: 0,
        },
    )
    .unwrap();
    // Its trace, replayed.
    let dir = tempfile::tempdir().unwrap();
    let w = synth::write(&it, dir.path(), "trace", true, &|_| {}).unwrap();
    assert_eq!(w.ranks, it.gpus);
    let set = TraceSet::discover(dir.path()).unwrap();
    let (r, simulations) = replay_healthy(&f, &set, &opts(lb), &|_| {}).unwrap();
    let rel = (r.iteration_s - step.step_s).abs() / step.step_s;
    assert!(
        rel < 0.01,
        "{}: replay {} s vs job {} s ({:.3}%)",
        it.name,
        r.iteration_s,
        step.step_s,
        rel * 100.0
    );
    assert_eq!(r.ranks, it.gpus);
    assert_eq!(r.window_bound, 0);
    assert!(!r.warnings.any());
    // Every rank computes the job's compute plus bubble.
    for rt in &r.per_rank {
        let want = step.compute_s + step.bubble_s;
        assert!((rt.compute_s - want).abs() < 1e-6 * want, "{rt:?}");
    }
    // The critical path runs from the first compute slice to the iteration end.
    let path = &r.critical_path;
    assert_eq!(path.first().unwrap().name, "compute.0");
    assert_eq!(path.last().unwrap().name, "iteration_end");
    assert!((path.last().unwrap().end_s - r.iteration_s).abs() < 1e-12);
    // Collectives were simulated once per distinct (family, operation, size).
    assert!(
        simulations <= 2 * it.comms.len() as u64 + 2,
        "{}",
        simulations
    );
}

const DP_ONLY: &str = aifabric_fixtures::jobs::DP_16;

#[test]
fn a_data_parallel_job_over_all_ranks_replays_to_its_step_time() {
    // Its one DP group has every rank, as the implied world group does: simulated once.
    check(DP_ONLY, "llama3-24k", Lb::Ecmp);
}

#[test]
fn a_job_from_a_model_card_in_the_papers_order_replays_to_its_step_time() {
    // The architecture's FLOPs and GQA-sized context-parallel traffic, ranks in Llama 3's
    // order [tp, cp, pp, dp]: the trace carries the same groups and sizes as the job.
    let job = "name: llama3-8b-64\ngpus: 64\n\
               parallelism: { tp: 4, cp: 2, pp: 2, dp: 4, order: [tp, cp, pp, dp] }\n\
               model: { card: llama3-8b, global_batch: 16 }\nrecompute: selective\n\
               compute: { peak_tflops: 989, efficiency: 0.4 }\n\
               communication: { dp: reduce_scatter_all_gather }\n";
    check(job, "llama3-24k", Lb::Ecmp);
}

#[test]
fn synthesizing_into_a_directory_holding_a_trace_is_refused() {
    let it = job::parse("job.yaml", DP_ONLY).unwrap();
    let dir = tempfile::tempdir().unwrap();
    synth::write(&it, dir.path(), "trace", true, &|_| {}).unwrap();
    let e = synth::write(&it, dir.path(), "other", true, &|_| {}).unwrap_err();
    assert!(e.to_string().contains("already holds a trace"), "{e}");
}

#[test]
fn metadata_a_replay_cannot_use_is_refused() {
    use aifabric_chakra::info::TraceInfo;
    let bad = TraceInfo {
        efficiency: Some(0.0),
        ..TraceInfo::default()
    };
    assert!(bad.check().unwrap_err().contains("`efficiency` is 0"));
    let bad = TraceInfo {
        scale_up_gpus: Some(0),
        ..TraceInfo::default()
    };
    assert!(bad.check().is_err());
    assert!(TraceInfo::default().check().is_ok());
}

#[test]
fn a_dense_job_replays_to_its_step_time() {
    check(DENSE, "llama3-24k", Lb::Ecmp);
}

#[test]
fn an_interleaved_pipeline_replays_to_its_step_time() {
    // Two chunks per stage: the stages send in a ring (the last to the first too).
    let text = DENSE.replace("pp: 4,", "pp: 4, pp_virtual: 2,");
    assert_ne!(text, DENSE);
    check(&text, "llama3-24k", Lb::Ecmp);
}

#[test]
fn a_moe_job_replays_to_its_step_time() {
    check(MOE, "dsf-l1-zone", Lb::Spray(None));
}

#[test]
fn synthesized_files_are_valid_chakra() {
    let it = job::parse("job.yaml", DENSE).unwrap();
    let s = synth::Synth::new(&it);
    let mut nodes = Vec::new();
    s.rank_nodes::<()>(9, &mut |n| {
        nodes.push(n.clone());
        Ok(())
    })
    .unwrap();
    // Ids are 0..n in order, dependencies point backwards, and every type is known.
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n.id, i as u64);
        assert!(n.data_deps.iter().all(|&d| d < n.id));
        assert!(n.node_type().is_some());
    }
    let count = |t: NodeType| nodes.iter().filter(|n| n.node_type() == Some(t)).count() as u64;
    let tp = it.comms.iter().find(|c| c.name == "tp all_reduce").unwrap();
    let pp = it.comms.iter().find(|c| c.name == "pp send_recv").unwrap();
    // Rank 9 is in stage 0 of 4: it only sends.
    assert_eq!(count(NodeType::CommSendNode), pp.count);
    assert_eq!(count(NodeType::CommRecvNode), 0);
    // TP all-reduces, plus 2 DP halves of each of reduce-scatter and all-gather.
    assert_eq!(count(NodeType::CommCollNode), tp.count + 4);
    assert_eq!(count(NodeType::CompNode), s.slices() + 1);
    // Written and read back: the same nodes.
    let dir = tempfile::tempdir().unwrap();
    synth::write(&it, dir.path(), "trace", false, &|_| {}).unwrap();
    let (mut rd, meta) = Reader::open(&dir.path().join("trace.9.et")).unwrap();
    assert_eq!(rd.read_all().unwrap(), nodes);
    let info = aifabric_chakra::info::TraceInfo::from_metadata(&meta);
    assert_eq!(info.placement.as_deref(), Some("spread"));
    assert_eq!(info.scale_up_gpus, Some(8));
    assert_eq!(info.peak_flops_per_s, Some(989e12));
    let groups = TraceSet::discover(dir.path())
        .unwrap()
        .comm_groups()
        .unwrap()
        .unwrap();
    // 32 TP groups, 32 DP groups, 3 x 64 pipeline pairs.
    assert_eq!(groups.len(), 32 + 32 + 3 * 64);
}

#[test]
fn a_synthesized_trace_replays_the_same_without_its_group_file() {
    // The documented fallback: without comm_group.json, a group is the ranks that name it, in
    // collectives or in the pipeline's sends and receives.
    let it = job::parse("job.yaml", aifabric_fixtures::jobs::SMALL_8).unwrap();
    let f = aifabric_spec::load("dsf-l1-zone").unwrap();
    let dir = tempfile::tempdir().unwrap();
    synth::write(&it, dir.path(), "trace", true, &|_| {}).unwrap();
    let set = TraceSet::discover(dir.path()).unwrap();
    let file = set.comm_groups().unwrap().unwrap();
    assert!(file.iter().any(|(name, _)| name.starts_with("pp.")));
    let (with, _) = replay_healthy(&f, &set, &opts(Lb::Ecmp), &|_| {}).unwrap();
    std::fs::remove_file(dir.path().join(aifabric_chakra::io::COMM_GROUP_FILE)).unwrap();
    let inferred = aifabric_chakra::replay::infer_groups(&set).unwrap();
    for (name, ranks) in &file {
        let g = inferred
            .find(name)
            .unwrap_or_else(|| panic!("{name} not inferred"));
        let mut want = ranks.clone();
        want.sort_unstable();
        assert_eq!(inferred.members[g as usize], want, "{name}");
    }
    assert_eq!(inferred.len(), file.len());
    let (without, _) = replay_healthy(&f, &set, &opts(Lb::Ecmp), &|_| {}).unwrap();
    assert_eq!(without.iteration_s, with.iteration_s);
    assert_eq!(without.per_rank, with.per_rank);
}

#[test]
fn an_efficiency_above_1_is_refused_from_the_trace_and_from_the_request() {
    use aifabric_chakra::info::TraceInfo;
    use aifabric_chakra::replay::ReplayError;
    let bad = TraceInfo {
        efficiency: Some(5.0),
        ..TraceInfo::default()
    };
    let e = bad.check().unwrap_err();
    assert!(
        e.contains("`efficiency` is 5") && e.contains("at most 1"),
        "{e}"
    );
    // A trace whose metadata says so: the replay names the file.
    let it = job::parse("job.yaml", aifabric_fixtures::jobs::SMALL_8).unwrap();
    let f = aifabric_spec::load("dsf-l1-zone").unwrap();
    let dir = tempfile::tempdir().unwrap();
    synth::write(&it, dir.path(), "trace", false, &|_| {}).unwrap();
    let set = TraceSet::discover(dir.path()).unwrap();
    let rank0 = set.files[0].clone();
    let (mut rd, meta) = Reader::open(&rank0).unwrap();
    let nodes = rd.read_all().unwrap();
    let mut meta5 = TraceInfo::from_metadata(&meta);
    meta5.efficiency = Some(5.0);
    aifabric_chakra::io::write_file(&rank0, false, &meta5.to_metadata(), |w| {
        nodes.iter().try_for_each(w)
    })
    .unwrap();
    match replay_healthy(&f, &set, &opts(Lb::Ecmp), &|_| {}) {
        Err(e @ ReplayError::Metadata { .. }) => {
            assert!(e.is_input());
            let e = e.to_string();
            assert!(e.contains("trace.0.et: metadata: `efficiency` is 5"), "{e}");
        }
        other => panic!("{:?}", other.map(|r| r.0.iteration_s)),
    }
    // The request's own efficiency, over a valid trace.
    synth::write(&it, &dir.path().join("ok"), "trace", false, &|_| {}).unwrap();
    let set = TraceSet::discover(&dir.path().join("ok")).unwrap();
    let o = FabricOptions {
        efficiency: Some(5.0),
        ..opts(Lb::Ecmp)
    };
    let e = replay_healthy(&f, &set, &o, &|_| {}).unwrap_err();
    assert!(
        e.is_input() && e.to_string().contains("at most 1, not 5"),
        "{e}"
    );
}

#[test]
fn a_prefix_with_a_path_is_refused_before_anything_is_written() {
    let it = job::parse("job.yaml", DP_ONLY).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for prefix in ["../x", "/x", "a/b", ""] {
        let e = synth::write(&it, &out, prefix, true, &|_| {}).unwrap_err();
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::InvalidInput,
            "{prefix:?}: {e}"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{prefix:?}"
        );
    }
}
