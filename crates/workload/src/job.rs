//! Training jobs: a checked plan (`JobPlan`; the job file that gives one is read by
//! `aifabric_spec::job`) and what one iteration does.
//!
//! A job is a model, a parallelism plan, a scale-up domain and a compute roofline. One
//! iteration (one optimizer step) becomes compute time plus the collectives it issues, with
//! sizes derived from the model (Megatron-LM's layout; Narayanan et al., SC 2021, and
//! Korthikanti et al., "Reducing activation recomputation", 2022):
//! - compute: `6 x parameters x tokens` FLOPs (forward + backward, Kaplan et al. 2020) over
//!   the GPUs at `peak x efficiency`, stretched by the 1F1B pipeline bubble `(m + pp - 1) / m`
//!   for `m` micro-batches per replica;
//! - tensor parallelism: per layer and micro-batch, 4 all-reduces (2 forward, 2 backward) of
//!   the activations `b x s x h x dtype / cp` inside each TP group, not overlapped;
//! - context parallelism: per layer and micro-batch, an all-gather of K and V (forward) and a
//!   reduce-scatter of their gradients (backward), `2 x b x s x h x dtype / tp`;
//! - expert parallelism (MoE): per layer and micro-batch, 4 all-to-alls (dispatch and combine,
//!   forward and backward) of `b x s x h x dtype x top_k / cp` per rank;
//! - pipeline parallelism: activations `b x s x h x dtype / (tp x cp)` sent to the next stage
//!   per micro-batch forward and backward; on the critical path `2 (m + pp - 1)` times;
//! - data parallelism: the gradients of a rank's shard, `parameters / (tp x pp) x dtype`, once
//!   per iteration over the dp x cp ranks that hold the same weights: an all-reduce, or
//!   reduce-scatter + all-gather (ZeRO / FSDP); a share `dp_overlap` hides behind the
//!   backward pass.
//!
//! Ranks are laid out tensor-fastest: `rank = t + tp (c + cp (d + dp p))`, the Megatron
//! order (tp, cp, dp, pp), so a TP group is `tp` consecutive ranks, i.e. one scale-up domain
//! when `tp` divides its size. Expert-parallel groups are `ep` consecutive DP ranks.

use crate::collective::Op;
use crate::placement::Placement;
use crate::schedule::Algo;
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
    /// Share of the peak reached.
    pub efficiency: f64,
}

/// Largest job accepted (its rank groups are materialized).
pub const MAX_GPUS: u32 = 1 << 22;

/// A job whose numbers have been checked (degrees >= 1 whose product is the GPU count, `ep`
/// dividing `dp`, layers split evenly over the stages, a whole number of micro-batches per
/// replica, efficiency and overlap within 0..=1): what [`JobPlan::iteration`] needs.
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
    /// Transformer layers (a multiple of pp).
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
    /// Share of the peak reached.
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
}

impl JobPlan {
    /// One iteration: compute, bubble and every collective with its groups and sizes.
    pub fn iteration(&self) -> Iteration {
        let JobPlan {
            gpus,
            tp,
            pp,
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
        let compute_s = 6.0 * params * tokens / f64::from(gpus) / (peak * eff);
        let bubble_s = compute_s * f64::from(pp - 1) / micro as f64;
        let act = f64::from(mb) * f64::from(seq) * f64::from(hidden) * f64::from(dtype);
        let layers_per_stage = layers / pp;
        let rank = |t: u32, cc: u32, d: u32, s: u32| t + tp * (cc + cp * (d + dp * s));
        let mut comms = Vec::new();
        let groups_of = |dim: Dim| -> Vec<Vec<u32>> {
            let mut out = Vec::new();
            match dim {
                Dim::Tp => {
                    for s in 0..pp {
                        for d in 0..dp {
                            for cc in 0..cp {
                                out.push((0..tp).map(|t| rank(t, cc, d, s)).collect());
                            }
                        }
                    }
                }
                Dim::Cp => {
                    for s in 0..pp {
                        for d in 0..dp {
                            for t in 0..tp {
                                out.push((0..cp).map(|cc| rank(t, cc, d, s)).collect());
                            }
                        }
                    }
                }
                Dim::Dp => {
                    // Gradients are reduced over data and context parallelism together (every
                    // context-parallel rank holds the same weights), as Megatron-LM does.
                    for s in 0..pp {
                        for t in 0..tp {
                            out.push(
                                (0..dp)
                                    .flat_map(|d| (0..cp).map(move |cc| rank(t, cc, d, s)))
                                    .collect(),
                            );
                        }
                    }
                }
                Dim::Ep => {
                    for s in 0..pp {
                        for cc in 0..cp {
                            for t in 0..tp {
                                for e in 0..dp / ep {
                                    out.push((0..ep).map(|k| rank(t, cc, e * ep + k, s)).collect());
                                }
                            }
                        }
                    }
                }
                Dim::Pp => {
                    for s in 0..pp.saturating_sub(1) {
                        for d in 0..dp {
                            for cc in 0..cp {
                                for t in 0..tp {
                                    out.push(vec![rank(t, cc, d, s), rank(t, cc, d, s + 1)]);
                                }
                            }
                        }
                    }
                }
            }
            out
        };
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
                    bytes: 2.0 * act / f64::from(tp),
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
                count: 2 * (micro + u64::from(pp) - 1),
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
            comms,
            scale_up_gpus: self.scale_up_gpus,
            scale_up_bytes_per_s: self.scale_up_bytes_per_s,
            alpha_s: self.alpha_s,
            placement: self.placement,
            tokens,
            peak_flops_per_s: peak,
            efficiency: eff,
        }
    }
}
