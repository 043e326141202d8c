//! Training jobs: a checked plan (`JobPlan`; the job file that gives one is read by
//! `aifabric_spec::job`) and what one iteration does.
//!
//! A job is a model, a parallelism plan with its rank order, a scale-up domain and a
//! compute roofline. The model is either an architecture ([`arch`]: layers, hidden size, FFN
//! width, heads, KV heads, vocabulary, experts; written out or from a [`cards`] model card)
//! or, as job files gave it before architectures existed, a parameter count with layers and
//! hidden size; such a file is sized exactly as it always was (the formulas marked "without
//! an architecture" below). One iteration (one optimizer step) becomes compute time plus the
//! collectives it issues, with sizes derived from the model (Megatron-LM's layout; Narayanan
//! et al., SC 2021, and Korthikanti et al., "Reducing activation recomputation", 2022):
//! - compute: the training FLOPs per token ([`Architecture::training_flops_per_token`]: 3 x
//!   forward, the forward being 2 per active weight, causal attention's `2 s h` per layer and
//!   the logits' `2 h V`; without an architecture `6 x parameters`, Kaplan et al. 2020) times
//!   the tokens, plus what recomputation runs again (selective: the score matmuls; full: a
//!   forward pass), over the GPUs at `peak x efficiency`, where `efficiency` is the kernels'
//!   share of the peak (the model FLOPs utilization of compute alone: no bubble, no exposed
//!   communication);
//! - the pipeline bubble of 1F1B, `(pp - 1) / m` of the compute for `m` micro-batches per
//!   replica, or with the interleaved schedule (Narayanan et al., SC 2021, section 2.2.2: each
//!   GPU holds `v = pp_virtual` model chunks) `(pp - 1) / (v m)`; with an architecture a
//!   chunk holds `ceil(layers / (pp v))` layers (the embedding and the output layer may take
//!   a chunk of their own, as Llama 3 405B's 126 layers in 128 chunks), without one the
//!   layers split evenly;
//! - tensor parallelism: per layer of the busiest stage and micro-batch, 4 all-reduces (2
//!   forward, 2 backward) of the activations `b x s x h x dtype / cp` inside each TP group,
//!   not overlapped;
//! - context parallelism: per layer and micro-batch, an all-gather of K and V (forward) and a
//!   reduce-scatter of their gradients (backward): `2 x b x s x d_kv,tp x dtype`, where a TP
//!   rank's K (or V) width `d_kv,tp` is its `max(kv_heads / tp, 1)` heads of `h / heads`
//!   (grouped-query attention: 1/16 of Q's for Llama 3 405B's 8 KV heads of 128); without an
//!   architecture `h / tp` (multi-head attention);
//! - expert parallelism (MoE): per layer and micro-batch, 4 all-to-alls (dispatch and combine,
//!   forward and backward) of `b x s x h x dtype x top_k / cp` per rank;
//! - pipeline parallelism: activations `b x s x h x dtype / (tp x cp)` sent to the next stage
//!   per micro-batch and model chunk, forward and backward; on the critical path
//!   `2 (v m + pp - 1)` times (interleaving divides the bubble by `v` at the cost of `v` times
//!   the point-to-point traffic, the same paper's trade-off); with `v > 1` the last stage
//!   also sends to the first (its chunk `k` feeds the first stage's chunk `k + 1`), so the
//!   stages form a ring;
//! - data parallelism: the gradients of a rank's shard, `parameters / (tp x pp) x dtype`, once
//!   per iteration over the dp x cp ranks that hold the same weights: an all-reduce, or
//!   reduce-scatter + all-gather (ZeRO / FSDP); a share `dp_overlap` hides behind the
//!   backward pass. (Experts' gradients are counted the same way: an overstatement under EP.)
//!
//! Memory ([`memory`], with an architecture): weights, gradients, Adam's state (2 + 2 + 12
//! bytes per parameter, ZeRO; gradients and state sharded over DP with
//! `reduce_scatter_all_gather`), activations after Korthikanti et al. with or without
//! recomputation, for the micro-batches the first stage holds in flight.
//!
//! Ranks are numbered in the plan's [`RankOrder`], fastest dimension first; the default is
//! Megatron-LM's (tp, cp, dp, pp): `rank = t + tp (c + cp (d + dp p))`, so a TP group is `tp`
//! consecutive ranks, i.e. one scale-up domain when `tp` divides its size. Llama 3 uses
//! (tp, cp, pp, dp). Expert-parallel groups are `ep` consecutive DP coordinates.

pub mod arch;
pub mod cards;
pub mod memory;
pub mod order;

pub use arch::{Architecture, Ffn};
pub use memory::{MemoryNeed, Recompute};
pub use order::{RankOrder, MEGATRON};

use crate::collective::Op;
use crate::placement::Placement;
use crate::schedule::Algo;
use order::Layout;
use serde::Serialize;

/// Which parallelism a collective serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dim {
    /// Tensor.
    Tp,
    /// Context.
    Cp,
    /// Expert.
    Ep,
    /// Pipeline.
    Pp,
    /// Data.
    Dp,
}

impl Dim {
    /// As a job file writes it: `tp`, `cp`, `ep`, `pp`, `dp`.
    pub fn name(self) -> &'static str {
        match self {
            Dim::Tp => "tp",
            Dim::Cp => "cp",
            Dim::Ep => "ep",
            Dim::Pp => "pp",
            Dim::Dp => "dp",
        }
    }

    /// Parse a name of [`Dim::name`].
    pub fn parse(s: &str) -> Option<Dim> {
        [Dim::Tp, Dim::Cp, Dim::Ep, Dim::Pp, Dim::Dp]
            .into_iter()
            .find(|d| d.name() == s)
    }
}

/// One kind of communication of an iteration: every group of a dimension runs it at once.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comm {
    /// Label, e.g. `tp all_reduce`.
    pub name: String,
    /// Parallelism it serves.
    pub dim: Dim,
    /// Operation (`None`: point-to-point sends between pipeline stages).
    pub op: Option<Op>,
    /// Algorithm.
    pub algo: Algo,
    /// Groups of ranks; all run concurrently. For point-to-point, pairs (src, dst).
    pub groups: Vec<Vec<u32>>,
    /// Size, nccl-tests convention (point-to-point: bytes per send).
    pub bytes: f64,
    /// Times per iteration on the critical path.
    pub count: u64,
    /// Share of its time exposed (not hidden behind compute).
    pub exposed: f64,
}

/// One iteration of a job.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Iteration {
    /// Job name.
    pub name: String,
    /// GPUs.
    pub gpus: u32,
    /// Compute time without the bubble, seconds.
    pub compute_s: f64,
    /// Pipeline bubble, seconds.
    pub bubble_s: f64,
    /// The pipeline schedule the bubble comes from.
    pub pipeline: Pipeline,
    /// Communications.
    pub comms: Vec<Comm>,
    /// Scale-up domain size.
    pub scale_up_gpus: u32,
    /// Scale-up bandwidth per GPU and direction, bytes/s.
    pub scale_up_bytes_per_s: f64,
    /// Per-step software latency, seconds.
    pub alpha_s: f64,
    /// Placement.
    pub placement: Placement,
    /// Tokens per iteration.
    pub tokens: f64,
    /// Peak FLOP/s per GPU.
    pub peak_flops_per_s: f64,
    /// Share of the peak the kernels reach (compute alone, without bubble or communication).
    pub efficiency: f64,
    /// Hardware FLOPs over model FLOPs (recomputation runs part of the forward pass again;
    /// 1 without): the end-to-end MFU is `efficiency x compute / step / this`.
    pub recompute_overhead: f64,
    /// The rank order, fastest dimension first.
    pub order: RankOrder,
    /// Per-GPU memory need (with an architecture; `None` for a model given by its parameter
    /// count alone).
    pub memory: Option<MemoryNeed>,
}

/// A pipeline schedule: 1F1B (Narayanan et al., SC 2021, section 2.2.1), interleaved when each
/// GPU holds several model chunks (section 2.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Pipeline {
    /// Pipeline stages (GPUs a micro-batch crosses), `pp`.
    pub stages: u32,
    /// Model chunks per stage, `pp_virtual` (1: plain 1F1B).
    pub virtual_stages: u32,
    /// Micro-batches per replica and iteration, `m`.
    pub micro_batches: u64,
}

impl Pipeline {
    /// The bubble as a share of the compute: `(stages - 1) / (virtual_stages x m)`.
    pub fn bubble_fraction(&self) -> f64 {
        self.bubble_s(1.0)
    }

    /// The bubble of `compute_s` seconds of compute, seconds. Multiplied before dividing, so
    /// that one chunk per stage gives, bit for bit, the plain 1F1B bubble
    /// `compute x (stages - 1) / m`.
    pub fn bubble_s(&self, compute_s: f64) -> f64 {
        let chunks = u64::from(self.virtual_stages) * self.micro_batches;
        compute_s * f64::from(self.stages.saturating_sub(1)) / chunks as f64
    }

    /// Point-to-point sends on the critical path, forward and backward: `2 (v m + stages - 1)`
    /// (none without pipeline parallelism).
    pub fn sends(&self) -> u64 {
        if self.stages < 2 {
            return 0;
        }
        2 * (u64::from(self.virtual_stages) * self.micro_batches + u64::from(self.stages) - 1)
    }
}

/// Largest job accepted (its rank groups are materialized).
pub const MAX_GPUS: u32 = 1 << 22;

/// A job whose numbers have been checked (degrees >= 1 whose product is the GPU count, `ep`
/// dividing `dp`, layers split evenly over the `pp x pp_virtual` model chunks, a whole number
/// of micro-batches per replica (a multiple of `pp` when interleaved), efficiency and overlap
/// within 0..=1): what [`JobPlan::iteration`] needs.
#[derive(Clone, Debug, PartialEq)]
pub struct JobPlan {
    /// Job name, for reports.
    pub name: String,
    /// GPUs (= tp x pp x dp x cp).
    pub gpus: u32,
    /// Tensor-parallel degree.
    pub tp: u32,
    /// Pipeline stages.
    pub pp: u32,
    /// Model chunks per pipeline stage (interleaved 1F1B; 1: plain 1F1B).
    pub pp_virtual: u32,
    /// Data-parallel replicas.
    pub dp: u32,
    /// Context-parallel degree.
    pub cp: u32,
    /// Expert-parallel degree (a divisor of dp).
    pub ep: u32,
    /// GPUs per scale-up domain.
    pub scale_up_gpus: u32,
    /// Scale-up bandwidth per GPU and direction, bytes/s.
    pub scale_up_bytes_per_s: f64,
    /// Model parameters.
    pub parameters: f64,
    /// Transformer layers (a multiple of pp x pp_virtual).
    pub layers: u32,
    /// Hidden size.
    pub hidden: u32,
    /// Sequence length, tokens.
    pub sequence_length: u32,
    /// Sequences per micro-batch.
    pub micro_batch: u32,
    /// Sequences per iteration, all replicas (a multiple of dp x micro_batch).
    pub global_batch: u32,
    /// Bytes per value of activations and gradients.
    pub dtype_bytes: u32,
    /// Experts per MoE layer (0: dense).
    pub experts: u32,
    /// Experts each token goes to.
    pub top_k: u32,
    /// Peak FLOP/s per GPU.
    pub peak_flops_per_s: f64,
    /// Share of the peak the kernels reach: the model FLOPs utilization of compute alone,
    /// without the pipeline bubble and exposed communication (which the model adds).
    pub efficiency: f64,
    /// Per-step software latency of a collective, seconds.
    pub alpha_s: f64,
    /// Share of the DP communication hidden behind the backward pass.
    pub dp_overlap: f64,
    /// Algorithm of the scale-out collectives.
    pub algorithm: Algo,
    /// Data parallelism as reduce-scatter + all-gather (else all-reduce).
    pub dp_reduce_scatter_all_gather: bool,
    /// Placement policy.
    pub placement: Placement,
    /// The architecture (`None`: the model is its parameter count, layers and hidden size
    /// alone, sized as before architectures existed).
    pub arch: Option<Architecture>,
    /// The rank order.
    pub order: RankOrder,
    /// Activation recomputation.
    pub recompute: Recompute,
}

impl JobPlan {
    /// One iteration: compute, bubble and every collective with its groups and sizes.
    pub fn iteration(&self) -> Iteration {
        let JobPlan {
            gpus,
            tp,
            pp,
            pp_virtual,
            dp,
            cp,
            ep,
            layers,
            hidden,
            sequence_length: seq,
            micro_batch: mb,
            global_batch: gb,
            dtype_bytes: dtype,
            top_k,
            experts,
            parameters: params,
            peak_flops_per_s: peak,
            efficiency: eff,
            dp_overlap: overlap,
            algorithm: algo,
            dp_reduce_scatter_all_gather: rs_ag,
            ..
        } = *self;
        let micro = u64::from(gb) / (u64::from(dp) * u64::from(mb));
        let tokens = f64::from(gb) * f64::from(seq);
        let (compute_s, recompute_overhead) = match &self.arch {
            // A model given by its parameter count: 6 FLOPs per parameter and token.
            None => (6.0 * params * tokens / f64::from(gpus) / (peak * eff), 1.0),
            Some(a) => {
                let model = a.training_flops_per_token(seq);
                let extra = match self.recompute {
                    Recompute::None => 0.0,
                    Recompute::Selective => a.attention_flops_per_token(seq),
                    Recompute::Full => a.forward_flops_per_token(seq),
                };
                let hardware = model + extra;
                (
                    hardware * tokens / f64::from(gpus) / (peak * eff),
                    hardware / model,
                )
            }
        };
        let pipeline = Pipeline {
            stages: pp,
            virtual_stages: pp_virtual,
            micro_batches: micro,
        };
        let bubble_s = pipeline.bubble_s(compute_s);
        let act = f64::from(mb) * f64::from(seq) * f64::from(hidden) * f64::from(dtype);
        // The busiest stage's layers (`layers / pp` when they split evenly).
        let (layers_per_stage, _) = memory::stage_layers(layers, pp, pp_virtual);
        let layout = Layout::new(self.order, tp, cp, dp, pp);
        // Interleaved, the last stage's chunk k feeds the first stage's chunk k + 1: one
        // more pair, closing the ring.
        let pairs = if pp_virtual > 1 { pp } else { pp - 1 };
        let groups_of = |dim: Dim| layout.groups(dim, ep, pairs);
        let mut comms = Vec::new();
        // Counts in u64: layers x micro-batches x 4 can pass u32 for absurd but valid files.
        let per_layer = u64::from(layers_per_stage) * micro;
        if tp > 1 {
            comms.push(Comm {
                name: "tp all_reduce".into(),
                dim: Dim::Tp,
                op: Some(Op::AllReduce),
                algo: Algo::Ring,
                groups: groups_of(Dim::Tp),
                bytes: act / f64::from(cp),
                count: 4 * per_layer,
                exposed: 1.0,
            });
        }
        if cp > 1 {
            // K and V of a TP rank's heads: `h / tp` each for multi-head attention, its
            // `kv_heads / tp` heads (at least one) under grouped-query attention.
            let kv = match &self.arch {
                None => 2.0 * act / f64::from(tp),
                Some(a) => {
                    let head_dim = f64::from(a.hidden) / f64::from(a.heads);
                    2.0 * f64::from(mb)
                        * f64::from(seq)
                        * a.kv_heads_per_tp_rank(tp)
                        * head_dim
                        * f64::from(dtype)
                }
            };
            for (op, name) in [
                (Op::AllGather, "cp all_gather"),
                (Op::ReduceScatter, "cp reduce_scatter"),
            ] {
                comms.push(Comm {
                    name: name.into(),
                    dim: Dim::Cp,
                    op: Some(op),
                    algo: Algo::Ring,
                    groups: groups_of(Dim::Cp),
                    bytes: kv,
                    count: per_layer,
                    exposed: 1.0,
                });
            }
        }
        if ep > 1 && experts > 0 {
            comms.push(Comm {
                name: "ep all_to_all".into(),
                dim: Dim::Ep,
                op: Some(Op::AllToAll),
                algo: Algo::Direct,
                groups: groups_of(Dim::Ep),
                bytes: act * f64::from(top_k.max(1)) / f64::from(cp),
                count: 4 * per_layer,
                exposed: 1.0,
            });
        }
        if pp > 1 {
            comms.push(Comm {
                name: "pp send_recv".into(),
                dim: Dim::Pp,
                op: None,
                algo: Algo::Direct,
                groups: groups_of(Dim::Pp),
                bytes: act / f64::from(tp * cp),
                count: pipeline.sends(),
                exposed: 1.0,
            });
        }
        if dp > 1 {
            let grad = params / f64::from(tp * pp) * f64::from(dtype);
            let ops: &[(Op, &str)] = if rs_ag {
                &[
                    (Op::ReduceScatter, "dp reduce_scatter"),
                    (Op::AllGather, "dp all_gather"),
                ]
            } else {
                &[(Op::AllReduce, "dp all_reduce")]
            };
            for &(op, name) in ops {
                comms.push(Comm {
                    name: name.into(),
                    dim: Dim::Dp,
                    op: Some(op),
                    algo,
                    groups: groups_of(Dim::Dp),
                    bytes: grad,
                    count: 1,
                    exposed: 1.0 - overlap,
                });
            }
        }
        Iteration {
            name: self.name.clone(),
            gpus,
            compute_s,
            bubble_s,
            pipeline,
            comms,
            scale_up_gpus: self.scale_up_gpus,
            scale_up_bytes_per_s: self.scale_up_bytes_per_s,
            alpha_s: self.alpha_s,
            placement: self.placement,
            tokens,
            peak_flops_per_s: peak,
            efficiency: eff,
            recompute_overhead,
            order: self.order,
            memory: self.arch.as_ref().map(|a| memory::need(self, a)),
        }
    }
}
