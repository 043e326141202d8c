//! A transformer's architecture, and what follows from it: parameters, FLOPs per token,
//! the sizes of the tensors parallelism moves, and activation memory.
//!
//! Counting (a decoder-only transformer, pre-norm, no biases):
//! - attention per layer: Q and the output projection `h x h` each, K and V `h x d_kv` each,
//!   `d_kv = kv_heads x h / heads` (grouped-query attention, Ainslie et al. 2023: K and V
//!   are `kv_heads / heads` of Q's size);
//! - feed-forward per layer: `3 h f` for a gated unit (SwiGLU: gate, up and down matrices;
//!   Shazeer 2020, the Llama models) or `2 h f` for a plain one (GELU: GPT-3); a
//!   mixture-of-experts layer has `experts` of them of width `expert_ffn_hidden`, and a
//!   router `h x experts`; each token uses `top_k`;
//! - two norms of `h` per layer and a final one; the input embedding `vocabulary x h`, and
//!   the output layer as much again unless the two are tied (GPT-3).
//!
//! FLOPs per token, forward: 2 per weight of every matrix a token goes through (its `top_k`
//! experts only), the output layer (`2 h V`, the logits), and attention's two matmuls
//! (`Q K^T` and the scores times V), `2 s h` each over the whole `s x s` score matrix,
//! halved by the causal mask: `2 s h` per layer (Dao, "FlashAttention-2", 2023, section 4.1:
//! `4 s^2 d heads` forward, divided by 2 when causal; Narayanan et al., SC 2021, section
//! 5.1, count the unmasked `4 s h`). Training is 3 forward passes' worth (the backward pass
//! computes gradients of both activations and weights: twice the forward; Kaplan et al.
//! 2020, section 2.1). Embedding lookups and norms are not counted.

use serde::Serialize;

/// The feed-forward unit of a layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ffn {
    /// Gated (SwiGLU, three matrices of `h x f`): the Llama models, Mixtral.
    Gated,
    /// Plain (GELU, two matrices of `h x f`): GPT-3.
    Plain,
}

impl Ffn {
    /// Weight matrices of `h x f` per unit.
    pub fn matrices(self) -> u32 {
        match self {
            Ffn::Gated => 3,
            Ffn::Plain => 2,
        }
    }

    /// Parse `gated` / `plain`.
    pub fn parse(s: &str) -> Option<Ffn> {
        match s {
            "gated" => Some(Ffn::Gated),
            "plain" => Some(Ffn::Plain),
            _ => None,
        }
    }
}

/// A decoder-only transformer (checked: every count positive, `heads` dividing `hidden`,
/// `kv_heads` dividing `heads`, `top_k <= experts`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Architecture {
    /// Transformer layers.
    pub layers: u32,
    /// Hidden size `h`.
    pub hidden: u32,
    /// Feed-forward width of a dense layer `f`.
    pub ffn_hidden: u32,
    /// Attention (query) heads.
    pub heads: u32,
    /// Key/value heads (grouped-query attention; `heads` for multi-head attention).
    pub kv_heads: u32,
    /// Vocabulary size `V`.
    pub vocabulary: u32,
    /// Gated or plain feed-forward unit.
    pub ffn: Ffn,
    /// Input embedding and output layer share their weights.
    pub tied_embeddings: bool,
    /// Experts per layer (0: dense; else every layer is a mixture of experts).
    pub experts: u32,
    /// Experts each token goes to.
    pub top_k: u32,
    /// Feed-forward width of one expert.
    pub expert_ffn_hidden: u32,
}

impl Architecture {
    fn h(&self) -> f64 {
        f64::from(self.hidden)
    }

    /// Width of K (and of V): `kv_heads x hidden / heads`.
    pub fn kv_dim(&self) -> f64 {
        f64::from(self.kv_heads) * self.h() / f64::from(self.heads)
    }

    /// Attention weights of one layer: `2 h^2 + 2 h d_kv`.
    pub fn attention_parameters(&self) -> f64 {
        2.0 * self.h() * self.h() + 2.0 * self.h() * self.kv_dim()
    }

    /// Feed-forward weights of one layer: the dense unit, or every expert and the router.
    pub fn ffn_parameters(&self) -> f64 {
        let m = f64::from(self.ffn.matrices());
        if self.experts == 0 {
            m * self.h() * f64::from(self.ffn_hidden)
        } else {
            f64::from(self.experts) * m * self.h() * f64::from(self.expert_ffn_hidden)
                + self.router_parameters()
        }
    }

    fn router_parameters(&self) -> f64 {
        self.h() * f64::from(self.experts)
    }

    /// Feed-forward weights one token goes through in one layer (its `top_k` experts and
    /// the router for a mixture of experts).
    pub fn active_ffn_parameters(&self) -> f64 {
        if self.experts == 0 {
            return self.ffn_parameters();
        }
        let m = f64::from(self.ffn.matrices());
        f64::from(self.top_k) * m * self.h() * f64::from(self.expert_ffn_hidden)
            + self.router_parameters()
    }

    /// Weights of one layer (two norms included).
    pub fn layer_parameters(&self) -> f64 {
        self.attention_parameters() + self.ffn_parameters() + 2.0 * self.h()
    }

    /// Input embedding weights, `V h` (the output layer has as many unless tied).
    pub fn embedding_parameters(&self) -> f64 {
        f64::from(self.vocabulary) * self.h()
    }

    /// All parameters: layers, final norm, embedding and (untied) output layer.
    pub fn parameters(&self) -> f64 {
        let out = if self.tied_embeddings { 1.0 } else { 2.0 };
        f64::from(self.layers) * self.layer_parameters()
            + self.h()
            + out * self.embedding_parameters()
    }

    /// Parameters one token uses (a mixture of experts' `top_k` experts only).
    pub fn active_parameters(&self) -> f64 {
        self.parameters()
            - f64::from(self.layers) * (self.ffn_parameters() - self.active_ffn_parameters())
    }

    /// Forward FLOPs per token at sequence length `seq`: the matmuls of the layers (its
    /// active weights), causal attention (`2 s h` per layer) and the logits (`2 h V`).
    pub fn forward_flops_per_token(&self, seq: u32) -> f64 {
        let layers = f64::from(self.layers);
        let matmuls = 2.0 * layers * (self.attention_parameters() + self.active_ffn_parameters());
        let attention = layers * 2.0 * f64::from(seq) * self.h();
        let logits = 2.0 * self.h() * f64::from(self.vocabulary);
        matmuls + attention + logits
    }

    /// Training FLOPs per token (forward and backward): 3 forward passes' worth.
    pub fn training_flops_per_token(&self, seq: u32) -> f64 {
        3.0 * self.forward_flops_per_token(seq)
    }

    /// Forward FLOPs per token of attention's two score matmuls alone (what selective
    /// recomputation computes again): `2 s h` per layer.
    pub fn attention_flops_per_token(&self, seq: u32) -> f64 {
        f64::from(self.layers) * 2.0 * f64::from(seq) * self.h()
    }

    /// K and V heads a tensor-parallel rank holds: `kv_heads / tp`, at least one (with
    /// fewer KV heads than TP ranks each rank keeps a copy of one, as Megatron-LM does).
    pub fn kv_heads_per_tp_rank(&self, tp: u32) -> f64 {
        (f64::from(self.kv_heads) / f64::from(tp)).max(1.0)
    }

    /// Activation bytes one layer keeps for its backward pass, per token and per unit of
    /// `h`, 16-bit values, excluding the attention scores (Korthikanti et al., "Reducing
    /// Activation Recomputation in Large Transformer Models", 2022, section 4.1, whose
    /// `34 s b h` counts, for GPT-3's multi-head attention and `f = 4 h`: attention 11 (the
    /// QKV input 2, Q and K 4, V 2, the projection input 2, a dropout mask 1), MLP 19 (the
    /// input 2, the first matmul's output 8, the GELU output 8, a dropout mask 1), two norm
    /// inputs 4). Generalized without dropout (Llama 3 and Mixtral train without it):
    /// attention `6 + 4 d_kv / h`; MLP `2 + 4 f / h` (plain) or `2 + 6 f / h` (gated: gate,
    /// up and their product); a mixture of experts `top_k` times its expert's MLP term;
    /// norms 4. GPT-3's shape gives 32, Korthikanti's 34 without its two masks.
    pub fn activation_coefficient(&self) -> f64 {
        let attention = 6.0 + 4.0 * self.kv_dim() / self.h();
        let per_f = if self.ffn == Ffn::Gated { 6.0 } else { 4.0 };
        let mlp = if self.experts == 0 {
            2.0 + per_f * f64::from(self.ffn_hidden) / self.h()
        } else {
            f64::from(self.top_k) * (2.0 + per_f * f64::from(self.expert_ffn_hidden) / self.h())
        };
        attention + mlp + 4.0
    }

    /// The attention scores' share of the same (`2 a s / h`: the softmax output, 16-bit,
    /// `a s` values per token; Korthikanti et al.'s `5 a s / h` without the dropout mask and
    /// output), kept only without recomputation.
    pub fn scores_coefficient(&self, seq: u32) -> f64 {
        2.0 * f64::from(self.heads) * f64::from(seq) / self.h()
    }
}
