//! Schedules, placement and job files.

use aifabric_model::{DeviceId, Fabric, FailureMask, Role};
use aifabric_spec::job;
use aifabric_workload::collective::{alpha_beta_seconds, Algorithm};
use aifabric_workload::schedule::schedule;
use aifabric_workload::{placement, Algo, Op, Placement, Schedule};
use proptest::prelude::*;

/// Bytes each rank sends over the whole schedule.
fn sent_per_rank(s: &Schedule, n: u32) -> Vec<f64> {
    let mut v = vec![0.0; n as usize];
    for p in s.phases() {
        for t in &p.transfers {
            v[t.src as usize] += f64::from(p.repeat) * t.bytes;
        }
    }
    v
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every rank sends what the alpha-beta bandwidth term says (bytes x its coefficient),
    /// and pays its latency term's number of steps, whatever the channel count.
    #[test]
    fn schedules_move_what_alpha_beta_counts(
        log_n in 1u32..7,
        channels in 1u32..5,
        bytes in 1.0e3f64..1.0e9,
    ) {
        let n = 1u32 << log_n;
        let cases = [
            (Op::AllReduce, Algo::Ring, Algorithm::Ring),
            (Op::ReduceScatter, Algo::Ring, Algorithm::Ring),
            (Op::AllGather, Algo::Ring, Algorithm::Ring),
            (Op::AllReduce, Algo::HalvingDoubling, Algorithm::HalvingDoubling),
            (Op::AllToAll, Algo::Direct, Algorithm::Direct),
        ];
        for (op, algo, closed) in cases {
            let s = schedule(op, algo, n, bytes, 2, channels).unwrap();
            // Bandwidth 1 B/s and alpha 0 give the per-rank wire bytes; alpha 1 and
            // bandwidth infinity give the steps.
            let wire = alpha_beta_seconds(op, closed, n, bytes, 0.0, 1.0).unwrap();
            let steps = alpha_beta_seconds(op, closed, n, bytes, 1.0, f64::INFINITY).unwrap();
            for (r, &x) in sent_per_rank(&s, n).iter().enumerate() {
                prop_assert!(close(x, wire), "{:?} {:?}: rank {} sends {} not {}", op, algo, r, x, wire);
            }
            prop_assert!(close(s.steps() as f64, steps), "{:?} {:?}: {} steps", op, algo, s.steps());
            // Each step of a channel is a permutation: every rank sends once and receives once.
            for p in s.phases() {
                for c in 0..channels {
                    let mut src = vec![0u32; n as usize];
                    let mut dst = vec![0u32; n as usize];
                    for t in p.transfers.iter().filter(|t| t.channel == c) {
                        src[t.src as usize] += 1;
                        dst[t.dst as usize] += 1;
                        prop_assert!(t.src != t.dst);
                    }
                    prop_assert!(src.iter().all(|&x| x == 1) && dst.iter().all(|&x| x == 1));
                }
            }
        }
    }
}

#[test]
fn rail_aligned_rings_leave_each_domain_from_a_different_gpu() {
    // 4 domains of 8 ranks, 8 channels: channel c crosses between domains from local rank
    // (c - 1) mod 8 to local rank c, so every rank's NIC carries exactly one ring.
    let s = schedule(Op::AllReduce, Algo::Ring, 32, 1e6, 8, 8).unwrap();
    let mut crossings = vec![0u32; 32];
    for t in &s.phase(0).transfers {
        if t.src / 8 != t.dst / 8 {
            crossings[t.src as usize] += 1;
            assert_eq!(t.dst % 8, t.channel, "{t:?}");
        }
    }
    assert!(crossings.iter().all(|&c| c == 1), "{crossings:?}");
}

#[test]
fn hierarchical_all_reduce_moves_its_three_stages() {
    // g = 4 GPUs per domain, 8 domains: inside reduce-scatter (g-1)/g S, across all-reduce of
    // S/g over 8 domains 2(d-1)/d S/g, inside all-gather (g-1)/g S.
    let (n, g, s) = (32u32, 4u32, 1e9);
    let sched = schedule(Op::AllReduce, Algo::Hierarchical, n, s, g, 1).unwrap();
    let d = f64::from(n / g);
    let gf = f64::from(g);
    let want = 2.0 * (gf - 1.0) / gf * s + 2.0 * (d - 1.0) / d * s / gf;
    for x in sent_per_rank(&sched, n) {
        assert!(close(x, want), "{x} vs {want}");
    }
    assert!(schedule(Op::AllReduce, Algo::Hierarchical, 30, s, 4, 1).is_err());
}

#[test]
fn double_binary_tree_sends_the_buffer_up_and_down() {
    let n = 16;
    let s = schedule(Op::AllReduce, Algo::Tree, n, 1e6, 1, 1).unwrap();
    // Each tree carries half; every rank but a tree's root sends its half to its parent in
    // that tree: at most S up and S down per rank.
    for x in sent_per_rank(&s, n) {
        assert!(x <= 2e6 + 1e-6, "{x}");
    }
    assert!(schedule(Op::AllToAll, Algo::Tree, n, 1e6, 1, 1).is_err());
    assert!(schedule(Op::AllReduce, Algo::HalvingDoubling, 12, 1e6, 1, 1).is_err());
}

fn two_buildings() -> Fabric {
    aifabric_spec::build_str("two.yaml", aifabric_fixtures::specs::TWO_FAT_TREE_BUILDINGS).unwrap()
}

fn gpus_of(f: &Fabric) -> Vec<DeviceId> {
    f.devices_with_role(Role::Gpu).collect()
}

#[test]
fn placement_policies() {
    let f = two_buildings();
    let none = FailureMask::none(&f);
    let all = gpus_of(&f);
    assert_eq!(all.len(), 16 + 128);
    // Packed: fabric order.
    let p = placement::place(&f, 10, 2, Placement::Packed, &none).unwrap();
    assert_eq!(p, all[..10].to_vec());
    // Spread: whole domains alternating between the buildings.
    let p = placement::place(&f, 8, 2, Placement::Spread, &none).unwrap();
    let building = |d: DeviceId| f.zones()[f.device(d).zone.idx()].building.unwrap().get();
    let b: Vec<u32> = p.iter().map(|&d| building(d)).collect();
    assert_eq!(b, vec![0, 0, 1, 1, 0, 0, 1, 1]);
    // Fragmented: deterministic per seed, distinct GPUs, sorted domains, seeds differ.
    let a = placement::place(&f, 40, 2, Placement::Fragmented { seed: 7 }, &none).unwrap();
    let a2 = placement::place(&f, 40, 2, Placement::Fragmented { seed: 7 }, &none).unwrap();
    let c = placement::place(&f, 40, 2, Placement::Fragmented { seed: 8 }, &none).unwrap();
    assert_eq!(a, a2);
    assert_ne!(a, c);
    let mut u = a.clone();
    u.sort();
    u.dedup();
    assert_eq!(u.len(), 40);
    assert!(a.windows(2).all(|w| w[0] < w[1]));
    // Topology-aware: the smallest zone that holds the job (the k = 4 zone holds 16).
    let t = placement::place(&f, 16, 2, Placement::TopologyAware, &none).unwrap();
    assert!(t.iter().all(|&d| building(d) == 0));
    let t = placement::place(&f, 17, 2, Placement::TopologyAware, &none).unwrap();
    assert!(t.iter().all(|&d| building(d) == 1));
    // Too many GPUs, and failed GPUs skipped.
    assert!(placement::place(&f, 145, 1, Placement::Packed, &none).is_err());
    let mut down = FailureMask::none(&f);
    down.fail_device(all[0]);
    let p = placement::place(&f, 4, 2, Placement::Packed, &down).unwrap();
    // all[0] and its domain partner: the domain is no longer whole.
    assert_eq!(p, all[2..6].to_vec());
}

#[test]
fn domains_never_straddle_racks_and_leftovers_are_not_allocated() {
    // Domains of 3: a k = 4 edge switch has 2 hosts (no domain), a k = 8 one has 4 (one
    // domain, one GPU left over). 32 edge switches of k = 8: 96 GPUs, no more.
    let f = two_buildings();
    let none = FailureMask::none(&f);
    let p = placement::place(&f, 96, 3, Placement::Packed, &none).unwrap();
    for d in p.chunks(3) {
        let rack = |g: DeviceId| (f.device(g).zone, f.device(g).rack);
        assert!(d.iter().all(|&g| rack(g) == rack(d[0])));
        assert_eq!(f.device(d[0]).index, 0);
    }
    assert!(placement::place(&f, 97, 3, Placement::Packed, &none).is_err());
}

const LLAMA: &str = include_str!("../../../../examples/jobs/llama3-405b-16k.yaml");

/// The Llama 3 405B job as job files gave it before architectures.
const LLAMA_PARAMETERS: &str = aifabric_fixtures::jobs::LLAMA3_405B_16K_PARAMETERS;

#[test]
fn the_old_llama_file_keeps_the_six_n_roofline_and_megatron_order() {
    let it = job::parse("old.yaml", LLAMA_PARAMETERS).unwrap();
    // 6 x 405e9 parameters x (2,048 x 8,192) tokens over 16,384 GPUs at 989 TF x 0.53,
    // the expression the model always used (bit for bit).
    let want = 6.0 * 405e9 * (2048.0 * 8192.0) / 16384.0 / (989e12 * 0.53);
    assert_eq!(it.compute_s, want);
    assert!(it.memory.is_none());
    assert_eq!(it.order, aifabric_workload::job::MEGATRON);
    let tp = it.comms.iter().find(|c| c.name == "tp all_reduce").unwrap();
    assert!(tp
        .groups
        .iter()
        .all(|g| g.windows(2).all(|w| w[1] == w[0] + 1)));
    // Megatron's order: a DP group steps by tp x cp = 8 ranks.
    let dp = it
        .comms
        .iter()
        .find(|c| c.name == "dp reduce_scatter")
        .unwrap();
    assert!(dp.groups[0].windows(2).all(|w| w[1] == w[0] + 8));
    assert!(close(dp.bytes, 405e9 / 128.0 * 2.0));
}

#[test]
fn the_llama_job_gives_the_roofline_and_megatron_counts() {
    let it = job::parse("llama.yaml", LLAMA).unwrap();
    assert_eq!(it.gpus, 16_384);
    // The card's training FLOPs per token (3 x forward, causal attention and logits
    // included), plus the score matmuls selective recomputation runs again, over (2,048 x
    // 8,192) tokens and 16,384 GPUs at the H100 card's peak x kernel efficiency.
    let a = aifabric_workload::job::cards::find("llama3-405b")
        .unwrap()
        .arch;
    let flops = a.training_flops_per_token(8192) + a.attention_flops_per_token(8192);
    let h100 = aifabric_workload::job::cards::find_gpu("h100-sxm").unwrap();
    assert_eq!(h100.peak_tflops, 989.0);
    let want = flops * 2048.0 * 8192.0 / 16384.0 / (989e12 * h100.efficiency);
    assert!(close(it.compute_s, want), "{} vs {want}", it.compute_s);
    // 16 micro-batches per replica, 16 stages of 8 chunks: bubble (pp - 1) / (v m) of the
    // compute.
    assert!(close(it.bubble_s, it.compute_s * 15.0 / (8.0 * 16.0)));
    // The paper's order, [tp, cp, pp, dp]: a DP group steps by tp x pp = 128 ranks.
    let dp = it
        .comms
        .iter()
        .find(|c| c.name == "dp reduce_scatter")
        .unwrap();
    assert!(dp.groups[0].windows(2).all(|w| w[1] == w[0] + 128));
    assert!(close(dp.bytes, a.parameters() / 128.0 * 2.0));
    let tp = it.comms.iter().find(|c| c.name == "tp all_reduce").unwrap();
    // 4 all-reduces per layer per micro-batch, 8 layers per stage (126 layers in 128 one-layer
    // chunks), 16 micro-batches.
    assert_eq!(tp.count, 4 * 8 * 16);
    assert_eq!(tp.groups.len(), 16_384 / 8);
    assert!(close(tp.bytes, 8192.0 * 16384.0 * 2.0));
    // TP groups are 8 consecutive ranks: one scale-up domain.
    assert!(tp
        .groups
        .iter()
        .all(|g| g.windows(2).all(|w| w[1] == w[0] + 1) && g[0] % 8 == 0));
    let dp = it
        .comms
        .iter()
        .find(|c| c.name == "dp reduce_scatter")
        .unwrap();
    assert_eq!(dp.groups.len(), 8 * 16);
    assert_eq!(dp.groups[0].len(), 128);
    assert!(close(dp.exposed, 0.5));
    let pp = it.comms.iter().find(|c| c.name == "pp send_recv").unwrap();
    // Interleaved: a send per micro-batch and chunk each way, plus the fill and the drain.
    assert_eq!(pp.count, 2 * (8 * 16 + 16 - 1));
    // The stages form a ring: 16 pairs per (replica, tensor rank).
    assert_eq!(pp.groups.len(), 16 * 128 * 8);
    // Every rank appears once per dimension's groups.
    let mut seen = vec![0u32; 16_384];
    for g in &dp.groups {
        for &r in g {
            seen[r as usize] += 1;
        }
    }
    assert!(seen.iter().all(|&x| x == 1));
}

#[test]
fn bad_job_files_are_located_and_hinted() {
    let wrong_product = LLAMA.replace("gpus: 16384", "gpus: 16000");
    let e = job::parse("j.yaml", &wrong_product).unwrap_err();
    assert!(e.line > 0 && e.message.contains("tp x pp x dp x cp"), "{e}");
    let bad_placement = LLAMA.replace("placement: packed", "placement: everywhere");
    let e = job::parse("j.yaml", &bad_placement).unwrap_err();
    assert!(e.message.contains("everywhere") && e.hint.is_some(), "{e}");
    let unknown = LLAMA.replace("micro_batch: 1", "micro_batch: 1\n  warp_speed: 9");
    let e = job::parse("j.yaml", &unknown).unwrap_err();
    assert!(e.line > 0 && e.message.contains("warp_speed"), "{e}");
    let batch = LLAMA.replace("global_batch: 2048", "global_batch: 2000");
    let e = job::parse("j.yaml", &batch).unwrap_err();
    assert!(
        e.message.contains("micro-batch") || e.message.contains("multiple"),
        "{e}"
    );
    let eff = LLAMA.replace("gpu: h100-sxm", "gpu: h100-sxm\n  efficiency: 1.5");
    assert!(job::parse("j.yaml", &eff)
        .unwrap_err()
        .message
        .contains("above 1"));
    let gpu = LLAMA.replace("gpu: h100-sxm", "gpu: h200");
    let e = job::parse("j.yaml", &gpu).unwrap_err();
    assert!(e.line > 0 && e.message.contains("unknown GPU card"), "{e}");
    assert!(job::load("/nonexistent/job.yaml").is_err());
    let huge = LLAMA
        .replace("gpus: 16384", "gpus: 4000000000")
        .replace("dp: 128", "dp: 31250000");
    let e = job::parse("j.yaml", &huge).unwrap_err();
    assert!(e.message.contains("at most"), "{e}");
    let alpha = LLAMA.replace(
        "dp_overlap: 0.5",
        "dp_overlap: 0.5
  alpha_us: -3",
    );
    let e = job::parse("j.yaml", &alpha).unwrap_err();
    assert!(e.line > 0 && e.message.contains("alpha_us"), "{e}");
}

#[test]
fn counts_do_not_wrap_and_data_parallel_groups_include_context_ranks() {
    // 2^20 layers over 16 stages, 2^24 sequences over 128 replicas: 4 x 2^16 x 2^17 = 2^35
    // TP all-reduces per step.
    let big = LLAMA_PARAMETERS
        .replace("layers: 128 ", "layers: 1048576 ")
        .replace("global_batch: 2048 ", "global_batch: 16777216 ");
    let it = job::parse("j.yaml", &big).unwrap();
    let tp = it.comms.iter().find(|c| c.name == "tp all_reduce").unwrap();
    assert_eq!(tp.count, 1u64 << 35);
    assert!(tp.count > u64::from(u32::MAX));
    // Context parallelism 2: gradients are reduced over dp x cp ranks.
    let cp = LLAMA_PARAMETERS
        .replace(
            "{ tp: 8, pp: 16, pp_virtual: 8, dp: 128 }",
            "{ tp: 8, pp: 16, pp_virtual: 8, dp: 64, cp: 2 }",
        )
        .replace("global_batch: 2048 ", "global_batch: 1024 ");
    let it = job::parse("j.yaml", &cp).unwrap();
    let dp = it
        .comms
        .iter()
        .find(|c| c.name == "dp reduce_scatter")
        .unwrap();
    assert_eq!(dp.groups.len(), 8 * 16);
    assert_eq!(dp.groups[0].len(), 128);
    assert!(it.comms.iter().any(|c| c.name == "cp all_gather"));
}

const SMALL: &str = aifabric_fixtures::jobs::SMALL_64_PACKED;

/// The small fixture (TP 4, PP 2, DP 8; 8 layers; 64 sequences: 8 micro-batches per replica)
/// with `pp_virtual` written into its parallelism block.
fn small_with(pp_virtual: &str) -> String {
    let with = SMALL.replace("pp: 2,", &format!("pp: 2, pp_virtual: {pp_virtual},"));
    assert_ne!(with, SMALL);
    with
}

#[test]
fn interleaving_divides_the_bubble_by_the_chunks_and_multiplies_the_sends() {
    // 6 x 1e9 parameters x (64 x 2,048) tokens over 64 GPUs at 989 TF x 0.4.
    let compute = 6.0 * 1e9 * 64.0 * 2048.0 / 64.0 / (989e12 * 0.4);
    for v in [2u32, 4] {
        let it = job::parse("small.yaml", &small_with(&v.to_string())).unwrap();
        assert!(
            close(it.compute_s, compute),
            "{} vs {compute}",
            it.compute_s
        );
        // (p - 1) / (v m) of the compute: p = 2 stages, m = 8 micro-batches.
        let want = compute * 1.0 / (f64::from(v) * 8.0);
        assert!(
            close(it.bubble_s, want),
            "v = {v}: {} vs {want}",
            it.bubble_s
        );
        assert!(close(
            it.pipeline.bubble_fraction(),
            1.0 / (f64::from(v) * 8.0)
        ));
        assert_eq!((it.pipeline.stages, it.pipeline.virtual_stages), (2, v));
        assert_eq!(it.pipeline.micro_batches, 8);
        let pp = it.comms.iter().find(|c| c.name == "pp send_recv").unwrap();
        // v sends per micro-batch each way, plus the p - 1 of the fill and of the drain.
        assert_eq!(pp.count, 2 * (u64::from(v) * 8 + 1));
        // A ring over the stages: stage 1 also sends to stage 0 (its chunk k feeds stage 0's
        // chunk k + 1). Ranks are tensor-fastest, stage outermost: a stage is 32 ranks.
        assert_eq!(pp.groups.len(), 2 * 8 * 4);
        assert!(pp.groups.contains(&vec![0, 32]) && pp.groups.contains(&vec![32, 0]));
        // Nothing else changes: same compute, same TP and DP traffic.
        let plain = job::parse("small.yaml", SMALL).unwrap();
        for name in ["tp all_reduce", "dp all_reduce"] {
            let a = it.comms.iter().find(|c| c.name == name).unwrap();
            let b = plain.comms.iter().find(|c| c.name == name).unwrap();
            assert_eq!(a, b, "{name}");
        }
    }
}

#[test]
fn one_chunk_per_stage_is_plain_1f1b_bit_for_bit() {
    let plain = job::parse("small.yaml", SMALL).unwrap();
    let one = job::parse("small.yaml", &small_with("1")).unwrap();
    assert_eq!(plain, one);
    // Today's closed forms, exactly: bubble (p - 1) / m of the compute, 2 (m + p - 1) sends
    // along a chain of stages (no pair from the last stage back to the first).
    assert_eq!(plain.pipeline.virtual_stages, 1);
    assert_eq!(
        plain.bubble_s.to_bits(),
        (plain.compute_s * 1.0 / 8.0).to_bits()
    );
    let pp = plain
        .comms
        .iter()
        .find(|c| c.name == "pp send_recv")
        .unwrap();
    assert_eq!(pp.count, 2 * (8 + 2 - 1));
    assert_eq!(pp.groups.len(), 8 * 4);
    assert!(pp.groups.iter().all(|g| g[1] == g[0] + 32));
}

#[test]
fn bad_pp_virtual_values_are_located_and_hinted() {
    // Every error points at pp_virtual's value (13 columns after its key: `pp_virtual: `
    // and the 1-based count), in the parallelism block.
    let line = SMALL
        .lines()
        .position(|l| l.starts_with("parallelism:"))
        .unwrap();
    let col = |text: &str| text.lines().nth(line).unwrap().find("pp_virtual").unwrap() as u64;
    let cases: [(String, &str); 5] = [
        (small_with("0"), "parallelism.pp_virtual must be at least 1"),
        // 8 layers over 2 x 3 chunks.
        (
            small_with("3"),
            "8 layers do not split evenly into pp x pp_virtual = 2 x 3",
        ),
        // 64 + 8 sequences: 9 micro-batches per replica, not a whole number of rounds of 2.
        (
            small_with("2").replace("global_batch: 64", "global_batch: 72"),
            "runs micro-batches in rounds of pp = 2, but each replica has 9",
        ),
        // Nothing to interleave without a pipeline.
        (
            small_with("2")
                .replace("pp: 2,", "pp: 1,")
                .replace("dp: 8", "dp: 16"),
            "pp_virtual = 2 needs pipeline parallelism, but pp = 1",
        ),
        (small_with("-1"), "invalid u32: `-1`"),
    ];
    for (text, want) in &cases {
        let e = job::parse("j.yaml", text).unwrap_err();
        assert!(e.message.contains(want), "{e}");
        assert_eq!(e.line, line as u64 + 1, "{e}");
        assert!(
            e.column > col(text) && e.column <= col(text) + 13,
            "column {} vs pp_virtual at {}: {e}",
            e.column,
            col(text) + 1
        );
        assert!(e.hint.is_some(), "{e}");
    }
}

mod traffic {
    use aifabric_workload::traffic::{parse_csv, parse_htsim, Pattern, Start, TriggerKind};

    const HEAD: &str = "Nodes 8\nConnections 1\n";

    fn err_at(text: &str) -> (usize, String) {
        let e = parse_htsim("m.cm", text).unwrap_err();
        assert!(
            e.to_string().starts_with(&format!("m.cm:{}:", e.line)),
            "{e}"
        );
        assert!(!e.hint.is_empty());
        (e.line, e.message)
    }

    /// Ring all-reduce: 2 (N - 1) steps of N chunks of S / N; node i's step k + 1 starts on
    /// the trigger that step k's chunk into node i fires on completion.
    #[test]
    fn ring_all_reduce_chains_each_nodes_steps_on_its_incoming_chunk() {
        let (n, s) = (5u32, 1000u64);
        let tm = Pattern::RingAllReduce.generate(n, s, 7);
        assert_eq!(tm.flows.len() as u64, Pattern::RingAllReduce.flow_count(n));
        assert_eq!(tm.flows.len(), 2 * 4 * 5);
        for f in &tm.flows {
            assert_eq!(f.bytes, s.div_ceil(u64::from(n)));
            assert_eq!(f.dst, (f.src + 1) % n);
        }
        for (k, f) in tm.flows.iter().enumerate() {
            let step = k as u32 / n;
            match f.start {
                Start::AtPs(0) => assert_eq!(step, 0),
                Start::Trigger(t) => {
                    assert!(step > 0);
                    // Exactly one flow fires it, when its receiver holds the chunk: the
                    // previous step's chunk into f.src.
                    assert!(tm.flows.iter().all(|g| g.done_trigger.is_none()));
                    let firing: Vec<_> = tm
                        .flows
                        .iter()
                        .filter(|g| g.recv_trigger == Some(t))
                        .collect();
                    assert_eq!(firing.len(), 1);
                    assert_eq!(firing[0].dst, f.src);
                    assert_eq!((firing[0].id - 1) / u64::from(n), u64::from(step) - 1);
                    assert_eq!(tm.triggers.get(&t), Some(&TriggerKind::Oneshot));
                }
                Start::AtPs(_) => panic!("a ring step starts at 0 or on a trigger"),
            }
        }
    }

    #[test]
    fn htsim_format_reads_as_htsim_writes_it() {
        let t = "# a comment\nNodes 8\nConnections 2\nTriggers 1\n\n\
                 3->5 id 1 start 1000000 size 4096 send_done_trigger 7\n\
                 5->3 size 10 trigger 7 id 2 prio 1\ntrigger id 7 multishot\n";
        let tm = parse_htsim("m.cm", t).unwrap();
        assert_eq!(tm.nodes, 8);
        assert_eq!(tm.flows.len(), 2);
        assert_eq!(
            (tm.flows[0].src, tm.flows[0].dst, tm.flows[0].bytes),
            (3, 5, 4096)
        );
        assert_eq!(tm.flows[0].start, Start::AtPs(1_000_000));
        assert_eq!(tm.flows[0].done_trigger, Some(7));
        assert_eq!(tm.flows[1].start, Start::Trigger(7));
        assert_eq!(tm.triggers[&7], TriggerKind::Multishot);
        // `recv_done_trigger` fires a trigger too (when the receiver holds every byte).
        let t = "Nodes 4\nConnections 2\n0->1 id 1 start 0 size 10 recv_done_trigger 3\n\
                 1->2 id 2 trigger 3 size 10\n";
        let tm = parse_htsim("r.cm", t).unwrap();
        assert_eq!(
            (tm.flows[0].done_trigger, tm.flows[0].recv_trigger),
            (None, Some(3))
        );
    }

    #[test]
    fn bad_htsim_lines_are_named_with_their_line() {
        let cases = [
            (
                format!("{HEAD}1->9 id 1 start 0 size 5\n"),
                3,
                "out of range",
            ),
            (format!("{HEAD}1->1 id 1 start 0 size 5\n"), 3, "itself"),
            (format!("{HEAD}1->2 id 1 start 0\n"), 3, "without `size`"),
            (format!("{HEAD}1->2 id 1 size 5\n"), 3, "without `start`"),
            (
                format!("{HEAD}1->2 id 1 start x size 5\n"),
                3,
                "not a non-negative",
            ),
            (
                format!("{HEAD}1->2 id 1 start 0 size 5 colour red\n"),
                3,
                "unknown key",
            ),
            (format!("{HEAD}hello\n"), 3, "unrecognized"),
            ("1->2 id 1 start 0 size 5\n".to_string(), 1, "before `Nodes"),
            (
                "Nodes 8\nConnections 2\n1->2 id 1 start 0 size 5\n".to_string(),
                2,
                "Connections 2",
            ),
            (
                "Nodes 8\nConnections 2\n1->2 id 1 start 0 size 5\n2->3 id 1 start 0 size 5\n"
                    .to_string(),
                4,
                "already used on line 3",
            ),
            (
                format!("{HEAD}1->2 id 1 trigger 4 size 5\n"),
                3,
                "no flow fires it",
            ),
            (
                format!("{HEAD}1->2 id 1 start 0 size 5\ntrigger id 1 sometimes\n"),
                4,
                "unknown trigger type",
            ),
        ];
        for (text, line, what) in cases {
            let (l, m) = err_at(&text);
            assert_eq!(l, line, "{text:?}: {m}");
            assert!(m.contains(what), "{text:?}: `{m}` lacks `{what}`");
        }
    }

    #[test]
    fn csv_reads_and_rejects_by_line() {
        let tm = parse_csv("t.csv", "src,dst,bytes,start_us\n0,3,100,0\n3,1,200,2.5\n").unwrap();
        assert_eq!(tm.nodes, 4);
        assert_eq!(tm.flows[1].start, Start::AtPs(2_500_000));
        let e = parse_csv("t.csv", "src,dst,bytes,start_us\n0,3,100,0\n3,x,200,2.5\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = parse_csv("t.csv", "a,b\n0,1\n").unwrap_err();
        assert_eq!(e.line, 1, "{e}");
    }

    #[test]
    fn generated_patterns_have_their_shape() {
        let p = Pattern::Permutation.generate(64, 10, 3);
        let mut rx = [0u32; 64];
        for f in &p.flows {
            assert_ne!(f.src, f.dst);
            rx[f.dst as usize] += 1;
        }
        assert!(
            rx.iter().all(|&x| x == 1),
            "a permutation: every node receives once"
        );
        assert_eq!(p.flows.len(), 64);
        assert_eq!(Pattern::AllToAll.generate(8, 1, 0).flows.len(), 56);
        let inc = Pattern::Incast(5).generate(8, 1, 0);
        assert!(inc.flows.iter().all(|f| f.dst == 0) && inc.flows.len() == 5);
        // Same seed, same matrix.
        assert_eq!(
            Pattern::Random(100).generate(16, 1, 9),
            Pattern::Random(100).generate(16, 1, 9)
        );
        assert_eq!(Pattern::parse("incast:4"), Some(Pattern::Incast(4)));
        assert_eq!(Pattern::parse("incast:0"), None);
    }
}

#[test]
fn node_tree_chains_inside_domains_and_heads_one_channel_per_nic() {
    // 4 domains of 8, 8 channels: NCCL's tree (a chain per node, a double binary tree
    // between nodes). Channel pair (2c, 2c + 1) crosses between domains only from and to
    // local rank c, so every GPU's NIC carries the trees of one channel.
    let s = schedule(Op::AllReduce, Algo::Tree, 32, 8e6, 8, 8).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s.channel_count(), 16);
    // Chain of 7 hops, then log2-depth of 4 domains (3 levels), up and down.
    assert_eq!(s.steps(), 2 * (7 + 3));
    for p in s.phases() {
        for t in &p.transfers {
            if t.src / 8 != t.dst / 8 {
                assert_eq!(t.src % 8, t.channel / 2, "{t:?}");
                assert_eq!(t.dst % 8, t.channel / 2, "{t:?}");
            }
            // Each channel carries 1/8 of the buffer, half per tree.
            assert_eq!(t.bytes, 8e6 / 8.0 / 2.0);
        }
    }
    // Up then down: every rank sends at most what it receives back, S per tree pair and
    // channel it serves, never more than the buffer in total.
    for x in sent_per_rank(&s, 32) {
        assert!(x <= 2.0 * 8e6 + 1e-6, "{x}");
    }
    // Groups that are not whole domains, or other channel counts, keep the flat tree.
    let flat = schedule(Op::AllReduce, Algo::Tree, 32, 8e6, 8, 1).unwrap();
    assert_eq!(flat.channel_count(), 2);
}
