//! Per-GPU memory of a training job: weights, gradients, optimizer state and activations
//! on the busiest GPU (the first pipeline stage: it holds the embedding and the most
//! micro-batches in flight).
//!
//! - Weights and gradients: `dtype_bytes` each per parameter; Adam's state in mixed
//!   precision: 12 bytes per parameter (an fp32 copy of the weights and the two moments;
//!   Rajbhandari et al., "ZeRO", SC 2020, section 3.1: `2 + 2 + K` bytes, `K = 12`).
//! - Data-parallel sharding: with `communication.dp: reduce_scatter_all_gather` gradients and
//!   optimizer state are split over the ranks that hold the same weights (the data and
//!   context ranks; an expert's over `dp / ep` x `cp`), the weights kept whole (ZeRO stage
//!   2, the same paper, section 5.2: what a reduce-scatter of gradients and an all-gather of
//!   updated weights once per step implements); with `all_reduce` every rank holds all three.
//! - A GPU's weights: its stage's layers split over TP (experts also over EP) and the
//!   vocabulary-parallel embedding (`V h / tp`); without a pipeline, also the output layer.
//! - Activations (Korthikanti et al. 2022, section 4): per layer and micro-batch
//!   `(s / cp) b h / tp` bytes times the coefficient of [`Architecture::activation_coefficient`]
//!   (sequence parallelism: the norm and dropout regions split over TP too), plus the
//!   attention scores without recomputation; with selective recomputation the scores are
//!   recomputed (as FlashAttention always does); with full recomputation a layer keeps only
//!   its input (`2` per token and unit of `h`) and one layer's full set is live while it is
//!   recomputed. Without a pipeline, the logits in fp32 (`4 s b V / (tp cp)`).
//! - Micro-batches in flight on the first stage: 1F1B holds `min(pp, m)`; the interleaved
//!   schedule holds `min((v + 1) pp - 1, v m)` model chunks (Megatron-LM's warm-up of the
//!   first rank, `2 (pp - 1) + (v - 1) pp`, plus the one in progress: Korthikanti et al.'s
//!   `1 + (pp - 1) / (pp v)` times the layers of a stage when `m` is large).

use super::arch::Architecture;
use super::JobPlan;
use serde::Serialize;

/// Activation recomputation (Korthikanti et al. 2022).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recompute {
    /// Keep every activation (the default: no extra compute).
    #[default]
    None,
    /// Recompute attention's scores in the backward pass (FlashAttention does by design):
    /// the score matmuls run twice.
    Selective,
    /// Keep each layer's input only and run the forward pass again in the backward.
    Full,
}

impl Recompute {
    /// Parse `none`, `selective`, `full`.
    pub fn parse(s: &str) -> Option<Recompute> {
        match s {
            "none" => Some(Recompute::None),
            "selective" => Some(Recompute::Selective),
            "full" => Some(Recompute::Full),
            _ => None,
        }
    }

    /// As a job file writes it.
    pub fn name(self) -> &'static str {
        match self {
            Recompute::None => "none",
            Recompute::Selective => "selective",
            Recompute::Full => "full",
        }
    }
}

/// A change of the job and what one GPU would then need.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Knob {
    /// The change, as the job file would say it, e.g. `recompute: full`.
    pub change: String,
    /// The per-GPU total with it, bytes.
    pub total_bytes: f64,
}

/// What one GPU (the first pipeline stage's) needs, bytes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryNeed {
    /// Weights.
    pub weights_bytes: f64,
    /// Gradients.
    pub gradients_bytes: f64,
    /// Optimizer state (Adam, mixed precision).
    pub optimizer_bytes: f64,
    /// Activations of the micro-batches in flight.
    pub activations_bytes: f64,
    /// The sum.
    pub total_bytes: f64,
    /// Layers x micro-batches whose activations are held at the peak.
    pub layer_micro_batches: u64,
    /// Gradients and optimizer state sharded over data parallelism.
    pub sharded: bool,
    /// Recomputation.
    pub recompute: Recompute,
    /// Changes that lower the need, each with the total it gives (more TP or PP at the
    /// same GPU count, recomputation, sharding), largest saving first.
    pub knobs: Vec<Knob>,
}

/// Adam in mixed precision: fp32 weights, momentum and variance (ZeRO, section 3.1).
pub const OPTIMIZER_BYTES_PER_PARAMETER: f64 = 12.0;

/// Layers of the first stage (`v` chunks of `ceil(layers / (pp v))`, at most all layers),
/// and layers per chunk.
pub(crate) fn stage_layers(layers: u32, pp: u32, v: u32) -> (u32, u32) {
    // In u64: `pp x v` and `chunk x v` may pass u32 for absurd but valid files.
    let chunk = u64::from(layers).div_ceil(u64::from(pp) * u64::from(v));
    let stage = (chunk * u64::from(v)).min(u64::from(layers));
    // Both at most `layers`.
    (stage as u32, chunk as u32)
}

/// The need of one GPU of `plan` with architecture `a`, with the knobs that lower it.
pub fn need(plan: &JobPlan, a: &Architecture) -> MemoryNeed {
    let mut m = need_alone(plan, a);
    let mut knobs = Vec::new();
    let mut try_knob = |change: String, p: JobPlan| {
        let t = need_alone(&p, a).total_bytes;
        if t < m.total_bytes {
            knobs.push(Knob {
                change,
                total_bytes: t,
            });
        }
    };
    if plan.dp.is_multiple_of(2) {
        for (dim, tp, pp) in [("tp", 2, 1), ("pp", 1, 2)] {
            let p = JobPlan {
                tp: plan.tp * tp,
                pp: plan.pp * pp,
                dp: plan.dp / 2,
                ep: if (plan.dp / 2).is_multiple_of(plan.ep) {
                    plan.ep
                } else {
                    1
                },
                ..plan.clone()
            };
            let degree = if dim == "tp" { p.tp } else { p.pp };
            try_knob(format!("{dim}: {degree}, dp: {}", p.dp), p);
        }
    }
    for r in [Recompute::Selective, Recompute::Full] {
        try_knob(
            format!("recompute: {}", r.name()),
            JobPlan {
                recompute: r,
                ..plan.clone()
            },
        );
    }
    if !plan.dp_reduce_scatter_all_gather {
        try_knob(
            "communication.dp: reduce_scatter_all_gather".into(),
            JobPlan {
                dp_reduce_scatter_all_gather: true,
                ..plan.clone()
            },
        );
    }
    knobs.sort_by(|x, y| x.total_bytes.total_cmp(&y.total_bytes));
    m.knobs = knobs;
    m
}

fn need_alone(plan: &JobPlan, a: &Architecture) -> MemoryNeed {
    let (tp, cp, pp, dp, ep, v) = (
        f64::from(plan.tp),
        f64::from(plan.cp),
        plan.pp,
        f64::from(plan.dp),
        f64::from(plan.ep),
        plan.pp_virtual,
    );
    let (layers, chunk) = stage_layers(a.layers, pp, v);
    let layers_f = f64::from(layers);
    let h = f64::from(a.hidden);
    // Expert weights are split over EP as well as TP; the rest over TP.
    let experts = if a.experts > 0 {
        a.ffn_parameters() - h * f64::from(a.experts)
    } else {
        0.0
    };
    let dense = a.layer_parameters() - experts;
    let mut dense_params = layers_f * dense / tp + a.embedding_parameters() / tp;
    if pp == 1 {
        dense_params += h;
        if !a.tied_embeddings {
            dense_params += a.embedding_parameters() / tp;
        }
    }
    let expert_params = layers_f * experts / (tp * ep);
    let dtype = f64::from(plan.dtype_bytes);
    let sharded = plan.dp_reduce_scatter_all_gather;
    // Ranks sharing the same dense weights: dp x cp; the same experts: dp / ep x cp.
    let (dense_shards, expert_shards) = if sharded {
        (dp * cp, dp / ep * cp)
    } else {
        (1.0, 1.0)
    };
    let weights = dtype * (dense_params + expert_params);
    let state = |bytes: f64| bytes * (dense_params / dense_shards + expert_params / expert_shards);
    let gradients = state(dtype);
    let optimizer = state(OPTIMIZER_BYTES_PER_PARAMETER);

    let micro = u64::from(plan.global_batch) / (u64::from(plan.dp) * u64::from(plan.micro_batch));
    let held = if v > 1 {
        ((u64::from(v) + 1) * u64::from(pp) - 1).min(u64::from(v) * micro) * u64::from(chunk)
    } else {
        u64::from(pp).min(micro) * u64::from(layers)
    };
    let seq = plan.sequence_length;
    // Bytes per unit of coefficient: (s / cp) b h / tp.
    let unit = f64::from(seq) / cp * f64::from(plan.micro_batch) * h / tp;
    let base = a.activation_coefficient();
    let mut activations = match plan.recompute {
        Recompute::None => held as f64 * unit * (base + a.scores_coefficient(seq)),
        Recompute::Selective => held as f64 * unit * base,
        Recompute::Full => held as f64 * unit * 2.0 + unit * base,
    };
    if pp == 1 {
        activations +=
            4.0 * f64::from(seq) / cp * f64::from(plan.micro_batch) * f64::from(a.vocabulary) / tp;
    }
    MemoryNeed {
        weights_bytes: weights,
        gradients_bytes: gradients,
        optimizer_bytes: optimizer,
        activations_bytes: activations,
        total_bytes: weights + gradients + optimizer + activations,
        layer_micro_batches: held,
        sharded,
        recompute: plan.recompute,
        knobs: Vec::new(),
    }
}
