//! Model cards shipped with the tool: published architectures a job file names with
//! `model: { card: NAME }` (any field may be overridden beside it).
//!
//! Each card cites where its numbers come from; its `parameters_published` is the published
//! parameter count, the independent figure tests compare the count from the architecture
//! with.

use super::arch::{Architecture, Ffn};
use serde::Serialize;

/// A published model architecture.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Card {
    /// Name a job file uses, e.g. `llama3-405b`.
    pub name: &'static str,
    /// Where the numbers come from (paper and table, or model card).
    pub source: &'static str,
    /// The architecture.
    pub arch: Architecture,
    /// Pre-training sequence length, tokens.
    pub sequence_length: u32,
    /// The published parameter count (a check, never an input).
    pub parameters_published: f64,
}

/// Llama 3's vocabulary: 128,256 entries (the `vocab_size` of the released models'
/// config.json; the paper rounds it to "128K").
const LLAMA3_VOCAB: u32 = 128_256;

fn llama3(layers: u32, hidden: u32, ffn_hidden: u32, heads: u32) -> Architecture {
    Architecture {
        layers,
        hidden,
        ffn_hidden,
        heads,
        kv_heads: 8,
        vocabulary: LLAMA3_VOCAB,
        ffn: Ffn::Gated,
        tied_embeddings: false,
        experts: 0,
        top_k: 0,
        expert_ffn_hidden: 0,
    }
}

/// Every card, in the order `--help` lists them.
pub fn all() -> Vec<Card> {
    const LLAMA3: &str = "\"The Llama 3 Herd of Models\" (Meta, 2024, arXiv:2407.21783), \
        table 3 (layers, model dimension, FFN dimension, attention heads, 8 key/value heads, \
        vocabulary 128K: 128,256 in the released config.json; SwiGLU; 8,192-token \
        pre-training context); parameter count from the model card (huggingface.co/meta-llama)";
    vec![
        Card {
            name: "llama3-8b",
            source: LLAMA3,
            arch: llama3(32, 4_096, 14_336, 32),
            sequence_length: 8_192,
            parameters_published: 8.03e9,
        },
        Card {
            name: "llama3-70b",
            source: LLAMA3,
            arch: llama3(80, 8_192, 28_672, 64),
            sequence_length: 8_192,
            parameters_published: 70.6e9,
        },
        Card {
            name: "llama3-405b",
            source: LLAMA3,
            arch: llama3(126, 16_384, 53_248, 128),
            sequence_length: 8_192,
            parameters_published: 405e9,
        },
        Card {
            name: "gpt3-175b",
            source: "Brown et al., \"Language Models are Few-Shot Learners\" (2020), table \
                2.1 (96 layers, d_model 12,288, 96 heads of 128, d_ff = 4 d_model, 2,048-token \
                context, 175.0B parameters); GPT-2's 50,257-token vocabulary with tied input \
                and output embeddings (Radford et al. 2019)",
            arch: Architecture {
                layers: 96,
                hidden: 12_288,
                ffn_hidden: 49_152,
                heads: 96,
                kv_heads: 96,
                vocabulary: 50_257,
                ffn: Ffn::Plain,
                tied_embeddings: true,
                experts: 0,
                top_k: 0,
                expert_ffn_hidden: 0,
            },
            sequence_length: 2_048,
            parameters_published: 175e9,
        },
        Card {
            name: "mixtral-8x7b",
            source: "Jiang et al., \"Mixtral of Experts\" (2024, arXiv:2401.04088), table 1 \
                (32 layers, dim 4,096, hidden_dim 14,336 per expert, 32 heads, 8 key/value \
                heads, vocabulary 32,000, 8 experts, top 2, 32,768-token context) and section \
                2 (46.7B parameters, 12.9B active per token)",
            arch: Architecture {
                layers: 32,
                hidden: 4_096,
                ffn_hidden: 14_336,
                heads: 32,
                kv_heads: 8,
                vocabulary: 32_000,
                ffn: Ffn::Gated,
                tied_embeddings: false,
                experts: 8,
                top_k: 2,
                expert_ffn_hidden: 14_336,
            },
            sequence_length: 32_768,
            parameters_published: 46.7e9,
        },
    ]
}

/// The card named `name`.
pub fn find(name: &str) -> Option<Card> {
    all().into_iter().find(|c| c.name == name)
}

/// The cards' names, for hints.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|c| c.name).collect()
}

/// A GPU's compute as a job sees it: its peak and the share of it the kernels reach.
///
/// The kernel efficiency is a model parameter, derived once per GPU type from one published
/// training run (`calibration`; `aifabric validation` derives it again and its tests fail when
/// the stored value no longer matches the model). That run is then never a check; every
/// other published figure is a prediction (`VALIDATION.md`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuCard {
    /// Name a job file uses (`compute: { gpu: NAME }`).
    pub name: &'static str,
    /// Dense BF16 peak per GPU, TFLOP/s.
    pub peak_tflops: f64,
    /// Where the peak comes from.
    pub peak_source: &'static str,
    /// Share of the peak the kernels reach (compute alone: no bubble, no exposed
    /// communication).
    pub efficiency: f64,
    /// The one published figure `efficiency` was derived from.
    pub calibration: &'static str,
}

/// H100 SXM's kernel efficiency, derived from the calibration run named in [`gpus`] by
/// `aifabric::validation::calibrate_efficiency` (rounded to 3 digits; a test re-derives it).
pub const H100_EFFICIENCY: f64 = 0.552;

/// Every GPU card.
pub fn gpus() -> Vec<GpuCard> {
    vec![GpuCard {
        name: "h100-sxm",
        peak_tflops: 989.0,
        peak_source: "NVIDIA H100 Tensor Core GPU datasheet (SXM5): 989 TFLOP/s dense BF16 \
            (1,979 with sparsity)",
        efficiency: H100_EFFICIENCY,
        calibration: "Llama 3 405B on 8,192 H100 (TP 8, CP 1, PP 16, DP 64, 8,192-token \
            sequences, 16M tokens per step): 430 TFLOP/s per GPU, \"The Llama 3 Herd of Models\" \
            (Meta, 2024), table 4, first row; run on llama3-24k in the paper's rank order \
            (crates/aifabric/validation/llama3-405b-8k.yaml)",
    }]
}

/// The GPU card named `name`.
pub fn find_gpu(name: &str) -> Option<GpuCard> {
    gpus().into_iter().find(|c| c.name == name)
}
