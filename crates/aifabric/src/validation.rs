//! Published figures against what aifabric predicts: the table `VALIDATION.md` is generated
//! from (`aifabric validation`): the collective rows (NCCL's constants come from NCCL's source,
//! the link rates from the specs) and the training-run rows.
//!
//! Calibrate once, predict the rest: a model parameter may be derived from one published
//! figure, named with its source ([`Role::Calibration`]: it is listed, and its error is zero
//! by construction, so it is never a check). Every other figure is a prediction
//! ([`Role::Prediction`]) whose error is reported, and a test holds it within the tolerance
//! stated in its row, even when that tolerance is wide: a miss stays in the table as a miss.

use crate::{CollectiveRequest, Error, Lb, Placement, Setup, Study};
use aifabric_engine::job::StepResult;
use aifabric_workload::job::cards::{find_gpu, H100_EFFICIENCY};
use aifabric_workload::job::Iteration;
use aifabric_workload::{Algo, Op, Proto};
use serde::Serialize;
use std::fmt::Write as _;

/// The job files the training-run rows run (`crates/aifabric/validation/`; the 16k one is
/// `examples/jobs/llama3-405b-16k.yaml`).
pub const JOB_SETUPS: [(&str, &str); 3] = [
    (
        "llama3-405b-8k.yaml",
        include_str!("../validation/llama3-405b-8k.yaml"),
    ),
    (
        "llama3-405b-16k.yaml",
        include_str!("../validation/llama3-405b-16k.yaml"),
    ),
    (
        "llama3-405b-16k-ctx128k.yaml",
        include_str!("../validation/llama3-405b-16k-ctx128k.yaml"),
    ),
];

/// "The Llama 3 Herd of Models" (Meta, 2024), table 4.
const LLAMA3_TABLE4: &str = "\"The Llama 3 Herd of Models\" (Meta, 2024), table 4";

/// The kernel efficiency that makes `step` (a run of `it`) reach `published_flops_per_s` of
/// model FLOPs per GPU: compute and bubble scale with `1 / efficiency`, the exposed
/// communication does not, so `e' = e x (compute + bubble) / (W / published - exposed)`
/// where `W` is the model FLOPs per GPU and step. `None` when the exposed communication
/// alone is longer than the published step.
pub fn calibrate_efficiency(
    step: &StepResult,
    it: &Iteration,
    published_flops_per_s: f64,
) -> Option<f64> {
    let model_flops_per_gpu = step.mfu * it.peak_flops_per_s * step.step_s;
    let target_step_s = model_flops_per_gpu / published_flops_per_s;
    let left_s = target_step_s - step.exposed_comm_s;
    (left_s > 0.0).then(|| it.efficiency * (step.compute_s + step.bubble_s) / left_s)
}

/// Model FLOP/s per GPU of a step, TFLOP/s.
fn tflops(step: &StepResult, it: &Iteration) -> f64 {
    step.mfu * it.peak_flops_per_s / 1e12
}

fn job_setup(name: &str) -> Result<Iteration, Error> {
    let (_, text) = JOB_SETUPS
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| Error::bad_request(format!("no validation setup {name}")))?;
    aifabric_spec::job::parse(name, text).map_err(Error::runtime_from)
}

/// The training-run rows: Llama 3 405B's three configurations of table 4 on `llama3-24k`
/// (the cluster it trained on), packed, in the paper's rank order. The first (8,192 GPUs)
/// is the H100 card's calibration point; the other two are predictions. Also returns the
/// efficiency the calibration row derives now (the card stores it rounded).
pub fn job_checks() -> Result<(Vec<Check>, f64), Error> {
    let fabric = aifabric_spec::load("llama3-24k").map_err(Error::runtime_from)?;
    // The cluster's load balancing as the paper gives it: 16 flows (queue pairs) per GPU
    // pair, hashed apart (E-ECMP; section 3.3.1).
    let study = Study::healthy(
        &fabric,
        Setup {
            lb: Lb::Eecmp(LLAMA3_FLOWS_PER_PAIR),
            ..Setup::default()
        },
    );
    let run = |name: &str| -> Result<(Iteration, StepResult), Error> {
        let it = job_setup(name)?;
        let r = study.job(&it, None)?;
        Ok((it, r.run.result))
    };
    let card = find_gpu("h100-sxm").ok_or_else(|| Error::bad_request("no H100 card".into()))?;
    let (it8, r8) = run("llama3-405b-8k.yaml")?;
    let derived = calibrate_efficiency(&r8, &it8, 430e12).ok_or_else(|| {
        Error::bad_request(
            "the 8,192-GPU Llama 3 run's exposed communication alone exceeds its published \
             step: no kernel efficiency reaches it"
                .into(),
        )
    })?;
    let setup = |gpus: &str, plan: &str, file: &str| {
        format!(
            "llama3-24k, {gpus} H100 packed, {plan}, order [tp, cp, pp, dp], \
             eecmp:{LLAMA3_FLOWS_PER_PAIR} ({file})"
        )
    };
    let mut checks = vec![Check::new(
        "Llama 3 405B pre-training, 8,192 H100, 8K context: model FLOP/s per GPU",
        format!("{LLAMA3_TABLE4}, row 1"),
        setup(
            "8,192",
            "TP 8, PP 16, DP 64",
            "crates/aifabric/validation/llama3-405b-8k.yaml",
        ),
        "TFLOP/s",
        430.0,
        tflops(&r8, &it8),
        0.0,
        Role::Calibration,
    )
    .note(format!(
        "derives the H100 card's kernel efficiency: {derived:.4} (stored {H100_EFFICIENCY}; {})",
        card.peak_source
    ))];
    for (file, row, gpus, context, plan, published, tolerance, note) in [
        (
            "llama3-405b-16k.yaml",
            2,
            "16,384",
            "8K context",
            "TP 8, PP 16, DP 128",
            400.0,
            0.10,
            "",
        ),
        (
            "llama3-405b-16k-ctx128k.yaml",
            3,
            "16,384",
            "128K context",
            "TP 8, CP 16, PP 16, DP 8, 131,072-token sequences",
            380.0,
            0.10,
            "context parallelism's all-gather of K and V and its reduce-scatter are counted \
             as exposed (not overlapped with attention), as are the pipeline's sends",
        ),
    ] {
        let (it, r) = run(file)?;
        checks.push(
            Check::new(
                format!("Llama 3 405B pre-training, {gpus} H100, {context}: model FLOP/s per GPU"),
                format!("{LLAMA3_TABLE4}, row {row}"),
                setup(gpus, plan, &format!("crates/aifabric/validation/{file}")),
                "TFLOP/s",
                published,
                tflops(&r, &it),
                tolerance,
                Role::Prediction,
            )
            .note(note),
        );
    }
    Ok((checks, derived))
}

/// What a row is to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A parameter was derived from this figure: not a check.
    Calibration,
    /// Predicted without it: its error is the model's.
    Prediction,
}

/// One published figure and the prediction set against it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    /// What is measured, e.g. `Llama 3 405B, 16,384 H100: model TFLOP/s per GPU`.
    pub figure: String,
    /// Where it is published (paper, table or section; issue or page).
    pub source: String,
    /// What aifabric runs to predict it (fabric, job or collective, options).
    pub setup: String,
    /// The figure's unit, e.g. `TFLOP/s per GPU`, `GB/s`.
    pub unit: String,
    /// The published value.
    pub published: f64,
    /// What aifabric predicts.
    pub predicted: f64,
    /// `predicted / published - 1`.
    pub error: f64,
    /// Largest `|error|` the tests accept (the model's stated accuracy on this figure).
    pub tolerance: f64,
    /// Calibration point or prediction.
    pub role: Role,
    /// What explains the error, when it is large or the comparison is not like for like.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl Check {
    /// A row, its error computed.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        figure: impl Into<String>,
        source: impl Into<String>,
        setup: impl Into<String>,
        unit: impl Into<String>,
        published: f64,
        predicted: f64,
        tolerance: f64,
        role: Role,
    ) -> Check {
        Check {
            figure: figure.into(),
            source: source.into(),
            setup: setup.into(),
            unit: unit.into(),
            published,
            predicted,
            error: predicted / published - 1.0,
            tolerance,
            role,
            note: String::new(),
        }
    }

    /// With a note.
    pub fn note(mut self, note: impl Into<String>) -> Check {
        self.note = note.into();
        self
    }

    /// Whether the prediction is within its tolerance (a calibration row always is).
    pub fn holds(&self) -> bool {
        self.role == Role::Calibration || self.error.abs() <= self.tolerance
    }
}

/// The whole table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Validation {
    /// [`crate::SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Rows: calibration points first, then predictions.
    pub checks: Vec<Check>,
}

impl Validation {
    /// The table from its rows (calibration points first, each group in the given order).
    pub fn new(mut checks: Vec<Check>) -> Validation {
        checks.sort_by_key(|c| c.role != Role::Calibration);
        Validation {
            schema_version: crate::SCHEMA_VERSION,
            checks,
        }
    }

    /// Predictions within their tolerance, and predictions in all.
    pub fn score(&self) -> (usize, usize) {
        let p = self.checks.iter().filter(|c| c.role == Role::Prediction);
        (p.clone().filter(|c| c.holds()).count(), p.count())
    }

    /// `VALIDATION.md`: the rows as a Markdown table, with what they mean.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let (ok, n) = self.score();
        let _ = writeln!(
            s,
            "# Validation: published figures against aifabric's predictions\n\n\
             Generated by `aifabric validation --markdown > VALIDATION.md`; a test fails when this \
             file and the command's output differ, and another when a prediction leaves its \
             tolerance.\n\n\
             Calibrate once, predict the rest: a *calibration* row is the one published figure \
             a parameter was derived from (its error is zero by construction, so it checks \
             nothing); every *prediction* row is made without it. {ok} of {n} predictions are \
             within their stated tolerance.\n"
        );
        let _ = writeln!(
            s,
            "| figure | source | setup | published | predicted | error | tolerance | role |"
        );
        let _ = writeln!(s, "|---|---|---|---:|---:|---:|---:|---|");
        for c in &self.checks {
            let role = match c.role {
                Role::Calibration => "calibration",
                Role::Prediction if c.holds() => "prediction",
                Role::Prediction => "prediction (**miss**)",
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} {} | {} {} | {:+.1}% | {:.0}% | {role} |",
                cell(&c.figure),
                cell(&c.source),
                cell(&c.setup),
                number(c.published),
                c.unit,
                number(c.predicted),
                c.unit,
                100.0 * c.error,
                100.0 * c.tolerance,
            );
        }
        let notes: Vec<&Check> = self.checks.iter().filter(|c| !c.note.is_empty()).collect();
        if !notes.is_empty() {
            let _ = writeln!(s, "\n## Notes\n");
            for c in notes {
                let _ = writeln!(s, "- **{}**: {}", c.figure, c.note);
            }
        }
        s
    }
}

/// A table cell: pipes escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Three significant figures, at least, without exponents.
fn number(x: f64) -> String {
    let digits = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{x:.digits$}")
}

/// A collective row (a prediction): `Check` with the arguments in the order the rows read.
#[allow(clippy::too_many_arguments)]
fn row(
    figure: &str,
    source: &str,
    setup: &str,
    prediction: f64,
    published: f64,
    unit: &str,
    tolerance: f64,
) -> Check {
    Check::new(
        figure,
        source,
        setup,
        unit,
        published,
        prediction,
        tolerance,
        Role::Prediction,
    )
}

/// nccl-tests' "large message": the size every bandwidth row is predicted at (8 GiB).
pub const LARGE_BYTES: u64 = 8 << 30;

/// Llama 3's flows per GPU pair (queue pairs hashed apart by E-ECMP): "The Llama 3 Herd of
/// Models" (2024), section 3.3.1.
pub const LLAMA3_FLOWS_PER_PAIR: u32 = 16;

/// Bus bandwidth (GB/s) of `op` over `gpus` GPUs of the built-in `spec`, packed, at `bytes`.
fn bus_bw(
    spec: &str,
    gpus: u32,
    lb: Lb,
    algo: Algo,
    proto: Proto,
    bytes: u64,
) -> Result<f64, Error> {
    let f = aifabric_spec::load(spec).map_err(Error::bad_request_from)?;
    let setup = Setup {
        lb,
        ..Setup::default()
    };
    let r = Study::healthy(&f, setup).collective(&CollectiveRequest {
        op: Op::AllReduce,
        algo: Some(algo),
        proto: Some(proto),
        gpus,
        placement: Placement::Packed,
        sizes: vec![bytes],
        alpha_s: 0.0,
    })?;
    Ok(r.rows[0].bus_bw_gbytes_per_s)
}

/// The collective rows: nccl-tests' large-message all-reduce bus bandwidth per 400G NIC, on
/// one 8 x H100 NVLink node with NVLS and with the ring, and Meta's E-ECMP gain.
pub fn collective_checks() -> Result<Vec<Check>, Error> {
    let eecmp = Lb::Eecmp(LLAMA3_FLOWS_PER_PAIR);
    let large = format!("{} GiB", LARGE_BYTES >> 30);
    // 256 GPUs packed on llama3-24k: 16 racks of two 8-GPU servers, one 400G NIC per GPU,
    // inside one 3,072-GPU pod at full bisection.
    let per_gpu_nic = bus_bw(
        "llama3-24k",
        256,
        eecmp,
        Algo::Auto,
        Proto::Auto,
        LARGE_BYTES,
    )?;
    let ecmp = bus_bw(
        "llama3-24k",
        256,
        Lb::Ecmp,
        Algo::Auto,
        Proto::Auto,
        LARGE_BYTES,
    )?;
    let nvls = bus_bw(
        "llama3-24k",
        8,
        Lb::Ecmp,
        Algo::Nvls,
        Proto::Simple,
        LARGE_BYTES,
    )?;
    let ring = bus_bw(
        "llama3-24k",
        8,
        Lb::Ecmp,
        Algo::Ring,
        Proto::Simple,
        LARGE_BYTES,
    )?;
    Ok(vec![
        row(
            "nccl-tests all_reduce bus bandwidth per 400G NIC, large messages",
            "NVIDIA nccl-tests issue 290 (46-48 GB/s)",
            &format!(
                "llama3-24k, 256 GPUs packed (32 servers x 8 GPUs, one 400G NIC each), \
                 {large}, auto (NCCL tuner), eecmp:{LLAMA3_FLOWS_PER_PAIR}; bus bandwidth / 8 \
                 NICs per server"
            ),
            per_gpu_nic / 8.0,
            47.0,
            "GB/s",
            0.05,
        ),
        row(
            "nccl-tests all_reduce bus bandwidth, one 8 x H100 NVLink node, NVLS",
            "NVIDIA nccl-tests issue 290; ASTRA-sim validation docs (about 476 GB/s)",
            &format!("llama3-24k, 8 GPUs of one server (NVLink 4, 450 GB/s), {large}, nvls/simple"),
            nvls,
            476.0,
            "GB/s",
            0.10,
        )
        .note(
            "NCCL's own model (nvlsEfficiency 0.85 of the 450 GB/s NVLink rate) with no further \
             loss: the copy engines' and SMs' limits inside a server are not modelled",
        ),
        row(
            "nccl-tests all_reduce bus bandwidth, one 8 x H100 NVLink node, ring plateau",
            "NVIDIA nccl-tests issue 290; ASTRA-sim validation docs (about 370 GB/s)",
            &format!("llama3-24k, 8 GPUs of one server (NVLink 4, 450 GB/s), {large}, ring/simple"),
            ring,
            370.0,
            "GB/s",
            0.10,
        )
        .note(
            "the fluid ring reaches the full 450 GB/s NVLink rate: no copy-engine or SM limit \
             is modelled inside a server",
        ),
        row(
            "E-ECMP (16 queue pairs per GPU pair) over ECMP: all_reduce speed-up",
            "Meta, \"RDMA over Ethernet for Distributed AI Training at Meta Scale\", \
             SIGCOMM 2024 (up to +40%)",
            &format!(
                "llama3-24k, 256 GPUs packed, {large}, auto; bus bandwidth with \
                 eecmp:{LLAMA3_FLOWS_PER_PAIR} over ecmp (gain as a ratio: 1.40 published)"
            ),
            per_gpu_nic / ecmp,
            1.40,
            "x",
            0.10,
        )
        .note(
            "one flow per ring hop, hashed alone, collides on the rack uplinks far more in the \
             model than in Meta's production fabric, where ECMP already had mitigations; \
             \"up to 40%\" is also a best case, not a mean",
        ),
    ])
}

/// Every row: the collectives', then the training runs' (the H100 card's calibration point
/// among them), and the efficiency the calibration run derives now.
pub fn all() -> Result<(Validation, f64), Error> {
    let mut checks = collective_checks()?;
    let (jobs, derived) = job_checks()?;
    checks.extend(jobs);
    Ok((Validation::new(checks), derived))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_tolerances_and_the_table() {
        let v = Validation::new(vec![
            Check::new(
                "b",
                "paper",
                "llama3-24k",
                "GB/s",
                48.0,
                36.0,
                0.1,
                Role::Prediction,
            )
            .note("a | pipe"),
            Check::new(
                "a",
                "paper",
                "x",
                "TFLOP/s",
                430.0,
                430.0,
                0.0,
                Role::Calibration,
            ),
            Check::new("c", "paper", "x", "s", 2.0, 2.1, 0.1, Role::Prediction),
        ]);
        assert_eq!(v.checks[0].role, Role::Calibration);
        assert!((v.checks[1].error + 0.25).abs() < 1e-12);
        assert!(!v.checks[1].holds() && v.checks[2].holds());
        assert_eq!(v.score(), (1, 2));
        let md = v.markdown();
        assert!(md.contains("1 of 2 predictions"), "{md}");
        assert!(
            md.contains("| -25.0% | 10% | prediction (**miss**) |"),
            "{md}"
        );
        assert!(md.contains("a \\| pipe") || md.contains("a | pipe"), "{md}");
        assert_eq!(md.lines().filter(|l| l.starts_with("| ")).count(), 4);
    }
}
