//! Training jobs: the YAML description and what one iteration does.
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
use aifabric_spec::{Source, SpecError};
use serde::{Deserialize, Serialize};
use serde_saphyr::{Location, Spanned};

type S<T> = Spanned<T>;

fn sp<T>(v: T) -> S<T> {
    Spanned::new(v, Location::UNKNOWN, Location::UNKNOWN)
}

fn zero() -> S<f64> {
    sp(0.0)
}
fn one() -> S<u32> {
    sp(1)
}
fn d_domain() -> S<u32> {
    sp(8)
}
fn d_nvlink() -> f64 {
    // H100 NVLink 4: 900 GB/s bidirectional, 450 GB/s per direction.
    450.0
}
fn d_dtype() -> S<u32> {
    sp(2)
}
fn d_algo() -> S<String> {
    sp("auto".into())
}
fn d_dp() -> S<String> {
    sp("all_reduce".into())
}
fn d_place() -> S<String> {
    sp("packed".into())
}
fn d_alpha() -> S<f64> {
    sp(5.0)
}

/// Degrees of parallelism; their product is the GPU count.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parallelism {
    /// Tensor parallel.
    #[serde(default = "one")]
    pub tp: S<u32>,
    /// Pipeline parallel (stages).
    #[serde(default = "one")]
    pub pp: S<u32>,
    /// Data parallel (replicas).
    #[serde(default = "one")]
    pub dp: S<u32>,
    /// Context parallel.
    #[serde(default = "one")]
    pub cp: S<u32>,
    /// Expert parallel (a divisor of dp).
    #[serde(default = "one")]
    pub ep: S<u32>,
}

/// The scale-up (NVLink) domain.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleUp {
    /// GPUs per domain.
    #[serde(default = "d_domain")]
    pub gpus: S<u32>,
    /// Bandwidth per GPU and direction, GB/s (10^9 B).
    #[serde(default = "d_nvlink")]
    pub gbs_per_direction: f64,
}

impl Default for ScaleUp {
    fn default() -> Self {
        ScaleUp {
            gpus: d_domain(),
            gbs_per_direction: d_nvlink(),
        }
    }
}

/// Mixture of experts.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Moe {
    /// Experts per MoE layer (0: dense model).
    #[serde(default)]
    pub experts: u32,
    /// Experts each token goes to.
    #[serde(default)]
    pub top_k: u32,
}

/// The model.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// Parameters.
    pub parameters: S<f64>,
    /// Transformer layers.
    pub layers: S<u32>,
    /// Hidden size.
    pub hidden: S<u32>,
    /// Sequence length, tokens.
    pub sequence_length: S<u32>,
    /// Sequences per micro-batch.
    #[serde(default = "one")]
    pub micro_batch: S<u32>,
    /// Sequences per iteration (all replicas).
    pub global_batch: S<u32>,
    /// Bytes per value of activations and gradients (2: bf16).
    #[serde(default = "d_dtype")]
    pub dtype_bytes: S<u32>,
    /// Mixture of experts, if any.
    #[serde(default)]
    pub moe: Moe,
}

/// The compute roofline.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compute {
    /// Peak dense FLOP/s per GPU, in TFLOP/s (H100 SXM bf16: 989).
    pub peak_tflops: S<f64>,
    /// Share of the peak reached (model FLOPs utilization).
    pub efficiency: S<f64>,
}

/// How the job communicates.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Communication {
    /// Data-parallel gradient synchronization: `all_reduce` or `reduce_scatter_all_gather`.
    #[serde(default = "d_dp")]
    pub dp: S<String>,
    /// Algorithm of the scale-out collectives (DP, CP): auto (the fastest applicable, per
    /// collective and size), ring, tree, hd, hierarchical.
    #[serde(default = "d_algo")]
    pub algorithm: S<String>,
    /// Share of the DP communication hidden behind the backward pass, 0..=1.
    #[serde(default = "zero")]
    pub dp_overlap: S<f64>,
    /// Per-step software latency of a collective, microseconds.
    #[serde(default = "d_alpha")]
    pub alpha_us: S<f64>,
}

impl Default for Communication {
    fn default() -> Self {
        Communication {
            dp: d_dp(),
            algorithm: d_algo(),
            dp_overlap: sp(0.0),
            alpha_us: d_alpha(),
        }
    }
}

/// A job file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    /// Name, for reports.
    pub name: String,
    /// GPUs (= tp x pp x dp x cp).
    pub gpus: S<u32>,
    /// Parallelism plan.
    pub parallelism: Parallelism,
    /// Scale-up domain.
    #[serde(default)]
    pub scale_up: ScaleUp,
    /// The model.
    pub model: Model,
    /// Roofline.
    pub compute: Compute,
    /// Communication choices.
    #[serde(default)]
    pub communication: Communication,
    /// Placement policy (see [`Placement::parse`]).
    #[serde(default = "d_place")]
    pub placement: S<String>,
}

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

/// Parse and check a job file; `name` names it in errors.
pub fn parse(name: &str, text: &str) -> Result<Iteration, SpecError> {
    let src = Source {
        name: name.to_owned(),
        text: text.to_owned(),
    };
    let opts = serde_saphyr::options! { with_snippet: false };
    let job: JobFile =
        serde_saphyr::from_str_with_options(text, opts).map_err(|e| src.from_yaml(&e))?;
    iteration(&job, &src)
}

/// Read a job file from disk and parse it.
pub fn load(path: &str) -> Result<Iteration, SpecError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Source {
            name: path.to_owned(),
            text: String::new(),
        }
        .error_whole(
            format!("cannot read the job file: {e}"),
            Some(
                "give the path of a job YAML file, e.g. examples/jobs/llama3-405b-16k.yaml".into(),
            ),
        )
    })?;
    parse(path, &text)
}

fn positive(src: &Source, v: &S<u32>, what: &str) -> Result<u32, SpecError> {
    if v.value == 0 {
        return Err(src.error(
            v.referenced,
            format!("{what} must be at least 1"),
            Some(format!("set {what} to a positive integer")),
        ));
    }
    Ok(v.value)
}

fn positive_f(src: &Source, v: &S<f64>, what: &str) -> Result<f64, SpecError> {
    if !(v.value.is_finite() && v.value > 0.0) {
        return Err(src.error(
            v.referenced,
            format!("{what} must be a positive number, not {}", v.value),
            None,
        ));
    }
    Ok(v.value)
}

/// Derive an iteration from a parsed job.
pub fn iteration(job: &JobFile, src: &Source) -> Result<Iteration, SpecError> {
    let p = &job.parallelism;
    let tp = positive(src, &p.tp, "parallelism.tp")?;
    let pp = positive(src, &p.pp, "parallelism.pp")?;
    let dp = positive(src, &p.dp, "parallelism.dp")?;
    let cp = positive(src, &p.cp, "parallelism.cp")?;
    let ep = positive(src, &p.ep, "parallelism.ep")?;
    let gpus = positive(src, &job.gpus, "gpus")?;
    if gpus > MAX_GPUS {
        return Err(src.error(
            job.gpus.referenced,
            format!("gpus is {gpus}; at most {MAX_GPUS} are supported"),
            Some("the largest built-in fabric has 216,192 GPUs".into()),
        ));
    }
    let product = u64::from(tp) * u64::from(pp) * u64::from(dp) * u64::from(cp);
    if product != u64::from(gpus) {
        return Err(src.error(
            job.gpus.referenced,
            format!(
                "gpus is {gpus}, but tp x pp x dp x cp = {tp} x {pp} x {dp} x {cp} = {product}"
            ),
            Some("make gpus the product of the parallelism degrees".into()),
        ));
    }
    if !dp.is_multiple_of(ep) {
        return Err(src.error(
            p.ep.referenced,
            format!("ep = {ep} does not divide dp = {dp}"),
            Some(
                "expert-parallel groups are made of data-parallel ranks: pick a divisor of dp"
                    .into(),
            ),
        ));
    }
    let g = positive(src, &job.scale_up.gpus, "scale_up.gpus")?;
    let m = &job.model;
    let params = positive_f(src, &m.parameters, "model.parameters")?;
    let layers = positive(src, &m.layers, "model.layers")?;
    let hidden = positive(src, &m.hidden, "model.hidden")?;
    let seq = positive(src, &m.sequence_length, "model.sequence_length")?;
    let mb = positive(src, &m.micro_batch, "model.micro_batch")?;
    let gb = positive(src, &m.global_batch, "model.global_batch")?;
    let dtype = positive(src, &m.dtype_bytes, "model.dtype_bytes")?;
    if !layers.is_multiple_of(pp) {
        return Err(src.error(
            m.layers.referenced,
            format!("{layers} layers do not split evenly over pp = {pp} stages"),
            Some("pick pp dividing the layer count".into()),
        ));
    }
    let per_step = u64::from(dp) * u64::from(mb);
    if !u64::from(gb).is_multiple_of(per_step) {
        return Err(src.error(
            m.global_batch.referenced,
            format!("global_batch {gb} is not a multiple of dp x micro_batch = {per_step}"),
            Some("each replica needs a whole number of micro-batches".into()),
        ));
    }
    let micro = u64::from(gb) / per_step;
    let peak = positive_f(src, &job.compute.peak_tflops, "compute.peak_tflops")? * 1e12;
    let eff = positive_f(src, &job.compute.efficiency, "compute.efficiency")?;
    if eff > 1.0 {
        return Err(src.error(
            job.compute.efficiency.referenced,
            format!("efficiency {eff} is above 1"),
            Some("efficiency is a share of the peak, e.g. 0.4".into()),
        ));
    }
    let c = &job.communication;
    if !(c.alpha_us.value.is_finite() && c.alpha_us.value >= 0.0) {
        return Err(src.error(
            c.alpha_us.referenced,
            format!("alpha_us must be a number >= 0, not {}", c.alpha_us.value),
            Some("the per-step software latency, e.g. 5 (microseconds)".into()),
        ));
    }
    let overlap = c.dp_overlap.value;
    if !(0.0..=1.0).contains(&overlap) {
        return Err(src.error(
            c.dp_overlap.referenced,
            format!("dp_overlap {overlap} is not within 0..=1"),
            None,
        ));
    }
    let algo = Algo::parse(&c.algorithm.value).ok_or_else(|| {
        src.error(
            c.algorithm.referenced,
            format!("unknown algorithm `{}`", c.algorithm.value),
            Some("use auto, ring, tree, hd or hierarchical".into()),
        )
    })?;
    let rs_ag = match c.dp.value.as_str() {
        "all_reduce" => false,
        "reduce_scatter_all_gather" => true,
        other => {
            return Err(src.error(
                c.dp.referenced,
                format!("unknown data-parallel synchronization `{other}`"),
                Some("use all_reduce or reduce_scatter_all_gather".into()),
            ))
        }
    };
    let placement = Placement::parse(&job.placement.value).ok_or_else(|| {
        src.error(
            job.placement.referenced,
            format!("unknown placement `{}`", job.placement.value),
            Some(format!("use {}", Placement::HELP)),
        )
    })?;
    if !(job.scale_up.gbs_per_direction.is_finite() && job.scale_up.gbs_per_direction > 0.0) {
        return Err(src.error_whole("scale_up.gbs_per_direction must be a positive number", None));
    }

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
    if ep > 1 && m.moe.experts > 0 {
        comms.push(Comm {
            name: "ep all_to_all".into(),
            dim: Dim::Ep,
            op: Some(Op::AllToAll),
            algo: Algo::Direct,
            groups: groups_of(Dim::Ep),
            bytes: act * f64::from(m.moe.top_k.max(1)) / f64::from(cp),
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
    Ok(Iteration {
        name: job.name.clone(),
        gpus,
        compute_s,
        bubble_s,
        comms,
        scale_up_gpus: g,
        scale_up_bytes_per_s: job.scale_up.gbs_per_direction * 1e9,
        alpha_s: c.alpha_us.value * 1e-6,
        placement,
        tokens,
        peak_flops_per_s: peak,
        efficiency: eff,
    })
}
