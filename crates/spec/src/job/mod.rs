//! Job files: the YAML description of a training job (model, parallelism plan, scale-up
//! domain, compute roofline, communication choices), read with located errors and checked
//! into an `aifabric_workload::job::JobPlan`, whose `iteration()` says what one step does.

mod model;

pub use model::{Model, Moe};

use crate::error::{Source, SpecError};
use aifabric_workload::job::{Dim, Iteration, JobPlan, RankOrder, Recompute, MAX_GPUS};
use aifabric_workload::{Algo, Placement};
use serde::Deserialize;
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
    /// Model chunks (virtual stages) per pipeline stage: the interleaved 1F1B schedule
    /// (Narayanan et al., SC 2021, section 2.2.2), whose bubble is `(pp - 1) / (pp_virtual x
    /// m)` of the compute for `pp_virtual` times the point-to-point traffic. 1 (the default):
    /// plain 1F1B.
    #[serde(default = "one")]
    pub pp_virtual: S<u32>,
    /// Data parallel (replicas).
    #[serde(default = "one")]
    pub dp: S<u32>,
    /// Context parallel.
    #[serde(default = "one")]
    pub cp: S<u32>,
    /// Expert parallel (a divisor of dp).
    #[serde(default = "one")]
    pub ep: S<u32>,
    /// The rank order, fastest dimension first: a permutation of `tp`, `cp`, `pp`, `dp`
    /// (those of degree 1 may be left out). Default `[tp, cp, dp, pp]`, Megatron-LM's;
    /// "The Llama 3 Herd of Models" (section 3.3.2) uses `[tp, cp, pp, dp]`.
    #[serde(default)]
    pub order: Option<S<Vec<String>>>,
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

/// The compute roofline: a GPU card (`gpu: h100-sxm`, its peak and its calibrated kernel
/// efficiency), or both figures given; a figure given beside a card replaces the card's.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compute {
    /// A GPU card shipped with the tool (`aifabric_workload::job::cards::gpus`).
    #[serde(default)]
    pub gpu: Option<S<String>>,
    /// Peak dense FLOP/s per GPU, in TFLOP/s (H100 SXM bf16: 989).
    #[serde(default)]
    pub peak_tflops: Option<S<f64>>,
    /// Share of the peak the kernels reach: the model FLOPs utilization of compute alone,
    /// excluding the pipeline bubble and exposed communication, which the model adds on top.
    /// Not a published end-to-end MFU: that one already contains the bubble and the
    /// communication (an end-to-end MFU `u` over a step of which bubble and exposed
    /// communication take a share `x` is a kernel efficiency of `u / (1 - x)`).
    #[serde(default)]
    pub efficiency: Option<S<f64>>,
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
    pub compute: S<Compute>,
    /// Communication choices.
    #[serde(default)]
    pub communication: Communication,
    /// Placement policy (see [`Placement::parse`]).
    #[serde(default = "d_place")]
    pub placement: S<String>,
    /// Activation recomputation: `none` (the default: no extra compute, every activation
    /// kept), `selective` (attention scores recomputed) or `full` (Korthikanti et al. 2022).
    #[serde(default)]
    pub recompute: Option<S<String>>,
}

/// Parse and check a job file; `name` names it in errors.
pub fn parse(name: &str, text: &str) -> Result<Iteration, SpecError> {
    parse_plan(name, text).map(|p| p.iteration())
}

/// Parse and check a job file into its plan (what [`parse`] makes an iteration of).
pub fn parse_plan(name: &str, text: &str) -> Result<JobPlan, SpecError> {
    let src = Source {
        name: name.to_owned(),
        text: text.to_owned(),
    };
    let opts = serde_saphyr::options! { with_snippet: false };
    let job: JobFile = serde_saphyr::from_str_with_options(text, opts)
        .map_err(|e| src.from_yaml_in(&e, crate::error::FileKind::Job))?;
    plan(&job, &src)
}

/// Read a job file from disk and parse it.
pub fn load(path: &str) -> Result<Iteration, SpecError> {
    let text = Source::read_yaml(
        path,
        "cannot read the job file",
        "give the path of a job YAML file, e.g. examples/jobs/llama3-405b-16k.yaml",
    )?;
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

/// The peak (FLOP/s) and the kernel efficiency: from the GPU card, each replaced by the
/// figure given beside it; without a card both must be given.
fn compute(src: &Source, c: &Compute, at: Location) -> Result<(f64, f64), SpecError> {
    use aifabric_workload::job::cards;
    let names = || {
        cards::gpus()
            .iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let card = match &c.gpu {
        None => None,
        Some(g) => Some(cards::find_gpu(&g.value).ok_or_else(|| {
            src.error(
                g.referenced,
                format!("unknown GPU card `{}`", g.value),
                Some(format!(
                    "GPU cards: {}; or give compute.peak_tflops and compute.efficiency",
                    names()
                )),
            )
        })?),
    };
    let figure = |v: &Option<S<f64>>, what: &str, from_card: Option<f64>| match (v, from_card) {
        (Some(v), _) => positive_f(src, v, what),
        (None, Some(x)) => Ok(x),
        (None, None) => Err(src.error(
            c.gpu.as_ref().map_or(at, |g| g.referenced),
            format!("{what} is missing"),
            Some(format!(
                "give compute.gpu (a GPU card: {}) or both compute.peak_tflops and \
                 compute.efficiency",
                names()
            )),
        )),
    };
    let peak = figure(
        &c.peak_tflops,
        "compute.peak_tflops",
        card.as_ref().map(|c| c.peak_tflops),
    )?;
    let eff = figure(
        &c.efficiency,
        "compute.efficiency",
        card.as_ref().map(|c| c.efficiency),
    )?;
    Ok((peak * 1e12, eff))
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

/// The interleaved schedule's conditions, as Megatron-LM checks them: a pipeline to
/// interleave, layers split evenly over the `pp x pp_virtual` chunks, and micro-batches per
/// replica (`micro`) in whole rounds of `pp` (the schedule runs them in groups of `pp`).
fn interleaving(
    src: &Source,
    p: &Parallelism,
    layers: u32,
    pp: u32,
    v: u32,
    micro: u64,
    even: bool,
) -> Result<(), SpecError> {
    let at = p.pp_virtual.referenced;
    if pp < 2 {
        return Err(src.error(
            at,
            format!("pp_virtual = {v} needs pipeline parallelism, but pp = {pp}"),
            Some("set pp_virtual to 1, or pp to 2 or more stages".into()),
        ));
    }
    let chunks = u64::from(pp) * u64::from(v);
    if even && !u64::from(layers).is_multiple_of(chunks) {
        return Err(src.error(
            at,
            format!(
                "{layers} layers do not split evenly into pp x pp_virtual = {pp} x {v} = \
                 {chunks} model chunks"
            ),
            Some("pick pp_virtual so that pp x pp_virtual divides the layer count".into()),
        ));
    }
    if !micro.is_multiple_of(u64::from(pp)) {
        return Err(src.error(
            at,
            format!(
                "the interleaved schedule (pp_virtual = {v}) runs micro-batches in rounds of \
                 pp = {pp}, but each replica has {micro}"
            ),
            Some(
                "make global_batch / (dp x micro_batch) a multiple of pp, or set pp_virtual \
                 to 1"
                    .into(),
            ),
        ));
    }
    Ok(())
}

/// Check a parsed job file into a plan.
pub fn plan(job: &JobFile, src: &Source) -> Result<JobPlan, SpecError> {
    let p = &job.parallelism;
    let tp = positive(src, &p.tp, "parallelism.tp")?;
    let pp = positive(src, &p.pp, "parallelism.pp")?;
    let pp_virtual = positive(src, &p.pp_virtual, "parallelism.pp_virtual")?;
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
    let model = m.resolve(src)?;
    let (params, layers, hidden, seq) = (
        model.parameters,
        model.layers,
        model.hidden,
        model.sequence_length,
    );
    let mb = positive(src, &m.micro_batch, "model.micro_batch")?;
    let gb = positive(src, &m.global_batch, "model.global_batch")?;
    let dtype = positive(src, &m.dtype_bytes, "model.dtype_bytes")?;
    // Without an architecture the layers split evenly over the stages (as always); with one
    // the busiest stage takes `ceil(layers / (pp x pp_virtual))` per chunk, and every chunk
    // needs a layer, or the embedding or the output layer (Llama 3 405B's 126 layers over
    // 16 x 8 chunks: the paper gives the embedding and the output layer a chunk of their
    // own, section 3.3.2).
    let even = model.arch.is_none();
    if even && !layers.is_multiple_of(pp) {
        return Err(src.error(
            model.layers_at,
            format!("{layers} layers do not split evenly over pp = {pp} stages"),
            Some("pick pp dividing the layer count".into()),
        ));
    }
    let chunks = u64::from(pp) * u64::from(pp_virtual);
    if !even && u64::from(layers) + 2 < chunks {
        return Err(src.error(
            p.pp.referenced,
            format!(
                "{layers} layers, the embedding and the output layer cannot fill pp x \
                 pp_virtual = {chunks} model chunks"
            ),
            Some("use at most layers + 2 pipeline stages x model chunks".into()),
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
    if pp_virtual > 1 {
        interleaving(
            src,
            p,
            layers,
            pp,
            pp_virtual,
            u64::from(gb) / per_step,
            even,
        )?;
    }
    let order = order(
        src,
        p,
        [(Dim::Tp, tp), (Dim::Cp, cp), (Dim::Pp, pp), (Dim::Dp, dp)],
    )?;
    let recompute = match &job.recompute {
        None => Recompute::None,
        Some(r) => Recompute::parse(&r.value).ok_or_else(|| {
            src.error(
                r.referenced,
                format!("unknown recompute `{}`", r.value),
                Some("use none, selective or full".into()),
            )
        })?,
    };
    let (peak, eff) = compute(src, &job.compute.value, job.compute.referenced)?;
    if eff > 1.0 {
        return Err(src.error(
            job.compute
                .value
                .efficiency
                .as_ref()
                .map_or(job.compute.referenced, |e| e.referenced),
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

    Ok(JobPlan {
        name: job.name.clone(),
        gpus,
        tp,
        pp,
        pp_virtual,
        dp,
        cp,
        ep,
        scale_up_gpus: g,
        scale_up_bytes_per_s: job.scale_up.gbs_per_direction * 1e9,
        parameters: params,
        layers,
        hidden,
        sequence_length: seq,
        micro_batch: mb,
        global_batch: gb,
        dtype_bytes: dtype,
        experts: model.experts,
        top_k: model.top_k,
        peak_flops_per_s: peak,
        efficiency: eff,
        alpha_s: c.alpha_us.value * 1e-6,
        dp_overlap: overlap,
        algorithm: algo,
        dp_reduce_scatter_all_gather: rs_ag,
        placement,
        arch: model.arch,
        order,
        recompute,
    })
}

/// The rank order of `parallelism.order`: each of tp, cp, pp, dp at most once, every one of
/// degree above 1 present.
fn order(src: &Source, p: &Parallelism, degrees: [(Dim, u32); 4]) -> Result<RankOrder, SpecError> {
    let Some(o) = &p.order else {
        return Ok(RankOrder::default());
    };
    let hint = || Some("list tp, cp, pp and dp fastest first, e.g. [tp, cp, pp, dp]".into());
    let mut dims = Vec::new();
    for name in &o.value {
        let d = Dim::parse(name).filter(|&d| d != Dim::Ep).ok_or_else(|| {
            let why = if name == "ep" {
                "ep is not a rank dimension: expert-parallel groups are made of data-parallel \
                 ranks"
                    .to_owned()
            } else {
                format!("unknown dimension `{name}` in parallelism.order")
            };
            src.error(o.referenced, why, hint())
        })?;
        if dims.contains(&d) {
            return Err(src.error(
                o.referenced,
                format!("parallelism.order names {name} twice"),
                hint(),
            ));
        }
        dims.push(d);
    }
    if let Some((d, n)) = degrees.iter().find(|(d, n)| *n > 1 && !dims.contains(d)) {
        return Err(src.error(
            o.referenced,
            format!("parallelism.order leaves out {} (degree {n})", d.name()),
            hint(),
        ));
    }
    Ok(RankOrder::new(&dims).expect("checked: no repeat, no ep"))
}
