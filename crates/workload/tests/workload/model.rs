//! Model architectures, cards, rank orders and memory: against published figures and
//! closed forms.

use aifabric_spec::job;
use aifabric_workload::job::{cards, Dim, Iteration};
use proptest::prelude::*;

fn rel(a: f64, b: f64) -> f64 {
    (a / b - 1.0).abs()
}

#[test]
fn cards_give_the_published_parameter_counts() {
    // The published counts (each card's source): Llama 3 8.03B, 70.6B, 405B; GPT-3 175.0B;
    // Mixtral 8x7B 46.7B, 12.9B active.
    for (name, want) in [
        ("llama3-8b", 8.03e9),
        ("llama3-70b", 70.6e9),
        ("llama3-405b", 405e9),
        ("gpt3-175b", 175e9),
        ("mixtral-8x7b", 46.7e9),
    ] {
        let c = cards::find(name).unwrap();
        assert_eq!(c.parameters_published, want);
        let got = c.arch.parameters();
        assert!(rel(got, want) < 0.01, "{name}: {got:.4e} vs {want:.4e}");
        assert!(!c.source.is_empty());
    }
    let mixtral = cards::find("mixtral-8x7b").unwrap().arch;
    assert!(rel(mixtral.active_parameters(), 12.9e9) < 0.01);
}

#[test]
fn flops_per_token_are_kaplans_six_n_plus_attention() {
    // Kaplan et al. 2020, table 1: forward FLOPs per token ~ 2 N + 2 n_layer n_ctx d_attn
    // (non-embedding N; the logits' 2 d_model V are the output layer's share of N when the
    // output is untied). Training 3 x forward. Norms are the only difference (< 1e-5).
    for (name, seq) in [
        ("llama3-405b", 8192),
        ("llama3-8b", 131_072),
        ("mixtral-8x7b", 4096),
    ] {
        let a = cards::find(name).unwrap().arch;
        let v_h = f64::from(a.vocabulary) * f64::from(a.hidden);
        let n = a.active_parameters() - v_h; // the input embedding costs no FLOPs
        let attn = 2.0 * f64::from(a.layers) * f64::from(seq) * f64::from(a.hidden);
        let want = 3.0 * (2.0 * n + attn);
        let got = a.training_flops_per_token(seq);
        assert!(rel(got, want) < 1e-4, "{name}: {got:.5e} vs {want:.5e}");
    }
    // At 128k context, attention is more than a third of Llama 3 8B's FLOPs.
    let a = cards::find("llama3-8b").unwrap().arch;
    let share = a.attention_flops_per_token(131_072) * 3.0 / a.training_flops_per_token(131_072);
    assert!(share > 1.0 / 3.0, "{share}");
}

#[test]
fn activation_coefficients_are_korthikantis_without_dropout() {
    // Korthikanti et al. 2022, eq. (1): 34 s b h + 5 a s^2 b per layer for GPT-3's shape,
    // of which 2 s b h (two dropout masks) and 3 a s^2 b (the scores' dropout mask and
    // output) are dropout.
    let g = cards::find("gpt3-175b").unwrap().arch;
    assert!((g.activation_coefficient() - 32.0).abs() < 1e-12);
    let s = 2048;
    let want = 2.0 * 96.0 * 2048.0 / 12_288.0;
    assert!((g.scores_coefficient(s) - want).abs() < 1e-12);
}

fn job_text(model: &str, par: &str, extra: &str) -> String {
    format!(
        "name: t\ngpus: GPUS\nparallelism: {par}\nmodel:\n{model}\n  micro_batch: 1\n  \
         global_batch: GB\ncompute: {{ peak_tflops: 989, efficiency: 0.5 }}\n{extra}"
    )
}

fn parse(text: &str) -> Result<Iteration, aifabric_spec::SpecError> {
    job::parse("t.yaml", text)
}

fn llama405(par: &str, gpus: u32, gb: u32, extra: &str) -> Iteration {
    let t = job_text("  card: llama3-405b", par, extra)
        .replace("GPUS", &gpus.to_string())
        .replace("GB", &gb.to_string());
    parse(&t).unwrap()
}

#[test]
fn gqa_shrinks_context_parallel_key_values_sixteen_times() {
    // 128 heads, 8 KV heads: K and V are 1/16 of Q's size. TP 8 leaves one KV head of 128
    // values per TP rank; CP all-gathers K and V: 2 x s x 128 x 2 bytes.
    let par = "{ tp: 8, cp: 16, pp: 16, dp: 8 }";
    let it = llama405(par, 16_384, 8, "");
    let ag = it.comms.iter().find(|c| c.name == "cp all_gather").unwrap();
    assert_eq!(ag.bytes, 2.0 * 8192.0 * 128.0 * 2.0);
    let multi_head = 2.0 * 8192.0 * 16_384.0 / 8.0 * 2.0;
    assert_eq!(multi_head / ag.bytes, 16.0);
    // TP all-reduces stay the full hidden size (over the CP share of the sequence).
    let tp = it.comms.iter().find(|c| c.name == "tp all_reduce").unwrap();
    assert_eq!(tp.bytes, 8192.0 * 16_384.0 * 2.0 / 16.0);
}

#[test]
fn compute_counts_attention_and_the_output_layer() {
    let it = llama405("{ tp: 8, pp: 16, dp: 8 }", 1024, 128, "");
    let a = cards::find("llama3-405b").unwrap().arch;
    let want = a.training_flops_per_token(8192) * 128.0 * 8192.0 / 1024.0 / (989e12 * 0.5);
    assert!(rel(it.compute_s, want) < 1e-12);
    // More than 6 x parameters per token: attention and logits add ~4% at 8k.
    let six_n = 6.0 * a.parameters() * 128.0 * 8192.0 / 1024.0 / (989e12 * 0.5);
    assert!(it.compute_s > 1.03 * six_n && it.compute_s < 1.06 * six_n);
    // Selective recomputation runs the score matmuls again; full the whole forward pass.
    let sel = llama405(
        "{ tp: 8, pp: 16, dp: 8 }",
        1024,
        128,
        "recompute: selective\n",
    );
    let full = llama405("{ tp: 8, pp: 16, dp: 8 }", 1024, 128, "recompute: full\n");
    assert!(rel(full.compute_s / it.compute_s, 4.0 / 3.0) < 1e-12);
    let extra = a.attention_flops_per_token(8192) / a.training_flops_per_token(8192);
    assert!(rel(sel.compute_s / it.compute_s, 1.0 + extra) < 1e-12);
    assert!(rel(sel.recompute_overhead, 1.0 + extra) < 1e-12);
}

#[test]
fn zero_memory_closed_forms() {
    // One GPU, no parallelism: 2 + 2 + 12 = 16 bytes per parameter (ZeRO, section 3.1).
    let m = llama405("{ tp: 1 }", 1, 1, "").memory.unwrap();
    let a = cards::find("llama3-405b").unwrap().arch;
    let n = a.parameters();
    assert!(
        rel(
            m.weights_bytes + m.gradients_bytes + m.optimizer_bytes,
            16.0 * n
        ) < 1e-12
    );
    // 64 replicas, reduce-scatter + all-gather: 2 N + 14 N / 64 (ZeRO stage 2, section 5.2).
    let m = llama405(
        "{ dp: 64 }",
        64,
        64,
        "communication: { dp: reduce_scatter_all_gather }\n",
    )
    .memory
    .unwrap();
    assert!(
        rel(
            m.weights_bytes + m.gradients_bytes + m.optimizer_bytes,
            2.0 * n + 14.0 * n / 64.0
        ) < 1e-12
    );
    assert!(m.sharded);
}

#[test]
fn llama3_405b_fits_in_80_gb_with_the_papers_plan_and_not_in_pure_dp() {
    // The paper's plan (TP 8, PP 16, 8 one-layer chunks per stage, 16 micro-batches, FSDP)
    // ran on 80 GB H100s; selective recomputation is what FlashAttention does.
    let it = llama405(
        "{ tp: 8, pp: 16, pp_virtual: 8, dp: 128, order: [tp, cp, pp, dp] }",
        16_384,
        2048,
        "recompute: selective\ncommunication: { dp: reduce_scatter_all_gather }\n",
    );
    let m = it.memory.unwrap();
    let gib80 = 80.0 * f64::from(1u32 << 30);
    assert!(m.total_bytes < gib80, "{m:?}");
    // 126 layers over 128 chunks: a stage holds 8 layers; all 16 x 8 chunk-micro-batches
    // are in flight on the first stage (the interleaved warm-up covers them all).
    assert_eq!(m.layer_micro_batches, 128);
    // Pure data parallelism on 8 GPUs: the weights alone are 810 GB.
    let dp = llama405("{ dp: 8 }", 8, 8, "").memory.unwrap();
    assert!(dp.weights_bytes > 9.0 * gib80);
}

#[test]
fn old_job_files_have_no_architecture_and_new_fields_are_checked() {
    let old = include_str!("../../../../examples/jobs/small-64.yaml");
    let it = parse(old).unwrap();
    assert!(it.memory.is_none());
    assert_eq!(it.order.dims(), [Dim::Tp, Dim::Cp, Dim::Dp, Dim::Pp]);
    let both = old.replace("parameters: 8.0e9", "parameters: 8.0e9\n  heads: 32");
    let e = parse(&both).unwrap_err();
    assert!(e.line > 0 && e.message.contains("parameters"), "{e}");
    let missing = old.replace("parameters: 8.0e9", "heads: 32");
    let e = parse(&missing).unwrap_err();
    assert!(e.message.contains("model.ffn_hidden"), "{e}");
    let none = old.replace("  parameters: 8.0e9\n", "");
    let e = parse(&none).unwrap_err();
    assert!(e.hint.as_deref().unwrap().contains("card"), "{e}");
    let card = |extra: &str| {
        job_text("  card: llama3-8b", "{ tp: 8, pp: 2, dp: 4 }", extra)
            .replace("GPUS", "64")
            .replace("GB", "32")
    };
    let e = parse(&card("").replace("llama3-8b", "llama9")).unwrap_err();
    assert!(
        e.line > 0 && e.hint.as_deref().unwrap().contains("llama3-405b"),
        "{e}"
    );
    let e = parse(&card("recompute: sometimes\n")).unwrap_err();
    assert!(e.line > 0 && e.message.contains("sometimes"), "{e}");
    for (order, says) in [
        ("[tp, ep, dp, pp]", "ep is not"),
        ("[tp, tp, dp, pp]", "twice"),
        ("[tp, dp]", "leaves out pp"),
        ("[tp, xp, dp, pp]", "xp"),
    ] {
        let t = card("").replace("dp: 4 }", &format!("dp: 4, order: {order} }}"));
        let e = parse(&t).unwrap_err();
        assert!(e.line > 0 && e.message.contains(says), "{order}: {e}");
    }
    // A card's field overridden: 16 layers of Llama 3 8B.
    let a = cards::find("llama3-8b").unwrap().arch;
    let half =
        parse(&card("").replace("card: llama3-8b", "card: llama3-8b\n  layers: 16")).unwrap();
    let full = parse(&card("")).unwrap();
    let dp = |it: &Iteration| {
        it.comms
            .iter()
            .find(|c| c.name == "dp all_reduce")
            .unwrap()
            .bytes
    };
    let per_layer = a.layer_parameters() / 16.0 * 2.0; // tp x pp = 16, 2 bytes
    assert!(rel(dp(&full) - dp(&half), 16.0 * per_layer) < 1e-9);
}

/// The ranks of each group of `dim` in `it`.
fn groups<'a>(it: &'a Iteration, prefix: &str) -> Option<&'a Vec<Vec<u32>>> {
    it.comms
        .iter()
        .find(|c| c.name.starts_with(prefix))
        .map(|c| &c.groups)
}

fn partitions(g: &[Vec<u32>], n: u32, size: usize) -> bool {
    let mut seen = vec![0u32; n as usize];
    for grp in g {
        if grp.len() != size {
            return false;
        }
        for &r in grp {
            seen[r as usize] += 1;
        }
    }
    seen.iter().all(|&x| x == 1)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every order gives groups that partition the ranks, each group of a dimension its
    /// degree's size (DP: dp x cp ranks), TP groups consecutive when tp comes first, and
    /// pipeline pairs differing in the pipeline coordinate alone.
    #[test]
    fn every_order_partitions_the_ranks(
        tp in 1u32..4, cp in 1u32..4, pp in 1u32..4, dp_half in 1u32..3,
        perm in Just(["tp", "cp", "pp", "dp"]).prop_shuffle(),
    ) {
        let dp = 2 * dp_half;
        let gpus = tp * cp * pp * dp;
        let t = format!(
            "name: t\ngpus: {gpus}\nparallelism: {{ tp: {tp}, cp: {cp}, pp: {pp}, dp: {dp}, \
             ep: 2, order: [{}] }}\nmodel:\n  parameters: 1.0e9\n  layers: {pp}\n  \
             hidden: 1024\n  sequence_length: 1024\n  global_batch: {dp}\n  \
             moe: {{ experts: 4, top_k: 1 }}\ncompute: {{ peak_tflops: 989, efficiency: 0.5 }}\n",
            perm.join(", ")
        );
        let it = parse(&t).unwrap();
        prop_assert_eq!(it.order.label(), format!("[{}]", perm.join(", ")));
        if let Some(g) = groups(&it, "tp") {
            prop_assert!(partitions(g, gpus, tp as usize));
            if perm[0] == "tp" {
                prop_assert!(g.iter().all(|g| g.windows(2).all(|w| w[1] == w[0] + 1)));
            }
        }
        if let Some(g) = groups(&it, "cp") {
            prop_assert!(partitions(g, gpus, cp as usize));
        }
        prop_assert!(partitions(groups(&it, "dp").unwrap(), gpus, (dp * cp) as usize));
        prop_assert!(partitions(groups(&it, "ep").unwrap(), gpus, 2));
        if let Some(g) = groups(&it, "pp") {
            prop_assert_eq!(g.len() as u32, (pp - 1) * gpus / pp);
            // The pipeline stride: the product of the degrees listed before pp.
            let stride: u32 = perm
                .iter()
                .take_while(|d| **d != "pp")
                .map(|d| match *d { "tp" => tp, "cp" => cp, _ => dp })
                .product();
            prop_assert!(g.iter().all(|p| p[1] == p[0] + stride));
        }
    }
}

#[test]
fn the_default_order_is_megatrons() {
    // rank = t + tp (c + cp (d + dp s)): a TP group is tp consecutive ranks, a DP group
    // steps by tp x cp... (the formula of Narayanan et al. 2021 / Megatron-LM).
    let (tp, cp, dp) = (2u32, 2u32, 2u32);
    let t = "name: t\ngpus: 16\nparallelism: { tp: 2, cp: 2, pp: 2, dp: 2 }\nmodel:\n  \
         parameters: 1.0e9\n  layers: 2\n  hidden: 1024\n  sequence_length: 1024\n  \
         global_batch: 2\ncompute: { peak_tflops: 989, efficiency: 0.5 }\n";
    let it = parse(t).unwrap();
    let rank = |t: u32, c: u32, d: u32, s: u32| t + tp * (c + cp * (d + dp * s));
    let dpg = groups(&it, "dp").unwrap();
    assert_eq!(
        dpg[0],
        vec![
            rank(0, 0, 0, 0),
            rank(0, 1, 0, 0),
            rank(0, 0, 1, 0),
            rank(0, 1, 1, 0)
        ]
    );
    let ppg = groups(&it, "pp").unwrap();
    assert_eq!(ppg[0], vec![rank(0, 0, 0, 0), rank(0, 0, 0, 1)]);
    assert_eq!(
        groups(&it, "cp").unwrap()[1],
        vec![rank(1, 0, 0, 0), rank(1, 1, 0, 0)]
    );
}

/// One communication as the old sizing gives it: name, groups, bytes, count.
type OldComm = (String, Vec<Vec<u32>>, f64, u64);

/// The sizing of job files before architectures and rank orders, written out as it was:
/// the compute time and each communication.
fn sized_as_before(p: &aifabric_workload::job::JobPlan) -> (f64, Vec<OldComm>) {
    let (tp, cp, dp, pp, ep, v) = (p.tp, p.cp, p.dp, p.pp, p.ep, p.pp_virtual);
    let micro = u64::from(p.global_batch) / (u64::from(dp) * u64::from(p.micro_batch));
    let tokens = f64::from(p.global_batch) * f64::from(p.sequence_length);
    let compute =
        6.0 * p.parameters * tokens / f64::from(p.gpus) / (p.peak_flops_per_s * p.efficiency);
    let act = f64::from(p.micro_batch)
        * f64::from(p.sequence_length)
        * f64::from(p.hidden)
        * f64::from(p.dtype_bytes);
    let per_layer = u64::from(p.layers / pp) * micro;
    let rank = |t: u32, c: u32, d: u32, s: u32| t + tp * (c + cp * (d + dp * s));
    let mut out = Vec::new();
    if tp > 1 {
        let mut g = Vec::new();
        for s in 0..pp {
            for d in 0..dp {
                for c in 0..cp {
                    g.push((0..tp).map(|t| rank(t, c, d, s)).collect());
                }
            }
        }
        out.push((
            "tp all_reduce".to_owned(),
            g,
            act / f64::from(cp),
            4 * per_layer,
        ));
    }
    if cp > 1 {
        let mut g = Vec::new();
        for s in 0..pp {
            for d in 0..dp {
                for t in 0..tp {
                    g.push((0..cp).map(|c| rank(t, c, d, s)).collect::<Vec<u32>>());
                }
            }
        }
        for name in ["cp all_gather", "cp reduce_scatter"] {
            out.push((
                name.to_owned(),
                g.clone(),
                2.0 * act / f64::from(tp),
                per_layer,
            ));
        }
    }
    if ep > 1 && p.experts > 0 {
        let mut g = Vec::new();
        for s in 0..pp {
            for c in 0..cp {
                for t in 0..tp {
                    for e in 0..dp / ep {
                        g.push((0..ep).map(|k| rank(t, c, e * ep + k, s)).collect());
                    }
                }
            }
        }
        out.push((
            "ep all_to_all".to_owned(),
            g,
            act * f64::from(p.top_k.max(1)) / f64::from(cp),
            4 * per_layer,
        ));
    }
    if pp > 1 {
        let pairs = if v > 1 { pp } else { pp - 1 };
        let mut g = Vec::new();
        for s in 0..pairs {
            for d in 0..dp {
                for c in 0..cp {
                    for t in 0..tp {
                        g.push(vec![rank(t, c, d, s), rank(t, c, d, (s + 1) % pp)]);
                    }
                }
            }
        }
        let sends = 2 * (u64::from(v) * micro + u64::from(pp) - 1);
        out.push((
            "pp send_recv".to_owned(),
            g,
            act / f64::from(tp * cp),
            sends,
        ));
    }
    if dp > 1 {
        let mut g = Vec::new();
        for s in 0..pp {
            for t in 0..tp {
                g.push(
                    (0..dp)
                        .flat_map(|d| (0..cp).map(move |c| rank(t, c, d, s)))
                        .collect::<Vec<u32>>(),
                );
            }
        }
        let grad = p.parameters / f64::from(tp * pp) * f64::from(p.dtype_bytes);
        let names: &[&str] = if p.dp_reduce_scatter_all_gather {
            &["dp reduce_scatter", "dp all_gather"]
        } else {
            &["dp all_reduce"]
        };
        for name in names {
            out.push(((*name).to_owned(), g.clone(), grad, 1));
        }
    }
    (compute, out)
}

#[test]
fn job_files_without_an_architecture_are_sized_exactly_as_before() {
    use aifabric_fixtures::jobs;
    let files = [
        jobs::SMALL_64_PACKED,
        jobs::DENSE_256,
        jobs::MOE_128,
        jobs::DP_16,
        jobs::SMALL_8,
        jobs::LLAMA3_405B_16K_PARAMETERS,
        include_str!("../../../../examples/jobs/small-64.yaml"),
        include_str!("../../../../examples/jobs/moe-4k.yaml"),
    ];
    // Every dimension above 1, context and expert parallelism included.
    let all = "name: all\ngpus: 32\nparallelism: { tp: 2, cp: 2, pp: 2, dp: 4, ep: 2 }\n\
               model:\n  parameters: 1.0e9\n  layers: 4\n  hidden: 1024\n  \
               sequence_length: 2048\n  global_batch: 8\n  moe: { experts: 8, top_k: 2 }\n\
               compute: { peak_tflops: 989, efficiency: 0.4 }\n\
               communication: { dp: reduce_scatter_all_gather }\n";
    for text in files.into_iter().chain([all]) {
        let plan = job::parse_plan("old.yaml", text).unwrap();
        assert!(plan.arch.is_none());
        let it = plan.iteration();
        let (compute, comms) = sized_as_before(&plan);
        // Bit for bit: the same expressions in the same order.
        assert_eq!(it.compute_s, compute, "{}", it.name);
        assert_eq!(it.recompute_overhead, 1.0);
        assert_eq!(it.comms.len(), comms.len(), "{}", it.name);
        for (c, (name, groups, bytes, count)) in it.comms.iter().zip(&comms) {
            assert_eq!(&c.name, name);
            assert_eq!(&c.groups, groups, "{} {name}", it.name);
            assert_eq!(c.bytes, *bytes, "{} {name}", it.name);
            assert_eq!(c.count, *count, "{} {name}", it.name);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Recomputing more never needs more activation memory, sharding never more state,
    /// and each knob offered lowers the total.
    #[test]
    fn memory_knobs_only_lower_the_need(
        tp_log in 0u32..4, pp_log in 0u32..3, dp_log in 0u32..4, v in 1u32..3,
        card in prop::sample::select(vec!["llama3-8b", "llama3-70b", "mixtral-8x7b", "gpt3-175b"]),
    ) {
        let (tp, pp, dp) = (1u32 << tp_log, 1u32 << pp_log, 1u32 << dp_log);
        let v = if pp > 1 { v } else { 1 };
        let gb = dp * pp * 2;
        let need = |extra: &str| {
            let t = format!(
                "name: m\ngpus: {}\nparallelism: {{ tp: {tp}, pp: {pp}, pp_virtual: {v}, dp: {dp} }}\n\
                 model: {{ card: {card}, sequence_length: 4096, global_batch: {gb} }}\n\
                 compute: {{ peak_tflops: 989, efficiency: 0.5 }}\n{extra}",
                tp * pp * dp
            );
            parse(&t).unwrap().memory.unwrap()
        };
        let none = need("");
        let sel = need("recompute: selective\n");
        let full = need("recompute: full\n");
        prop_assert!(full.activations_bytes <= sel.activations_bytes);
        prop_assert!(sel.activations_bytes <= none.activations_bytes);
        prop_assert_eq!(none.weights_bytes, full.weights_bytes);
        let sharded = need("communication: { dp: reduce_scatter_all_gather }\n");
        prop_assert!(sharded.optimizer_bytes <= none.optimizer_bytes);
        prop_assert_eq!(sharded.weights_bytes, none.weights_bytes);
        for k in &none.knobs {
            prop_assert!(k.total_bytes < none.total_bytes, "{}", k.change);
        }
        prop_assert!((none.total_bytes
            - (none.weights_bytes + none.gradients_bytes + none.optimizer_bytes + none.activations_bytes))
            .abs() <= 1e-6 * none.total_bytes);
    }
}
