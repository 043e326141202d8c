//! Published figures against what aifabric predicts for them: the rows of `VALIDATION.md`.
//!
//! Every row is a prediction, never a fit: nothing here is calibrated on the figure it is
//! compared with (the NCCL constants come from NCCL's source, the link rates from the
//! specs). A row that misses its tolerance stays, with its error; the tests pin each
//! prediction so that a change of the model shows up as a change of the table.

use crate::{CollectiveRequest, Error, Lb, Placement, Setup, Study};
use aifabric_workload::{Algo, Op, Proto};
use serde::Serialize;

/// One published figure and its prediction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValidationRow {
    /// What is measured.
    pub figure: String,
    /// Where it is published.
    pub source: String,
    /// The setup aifabric predicts it on.
    pub setup: String,
    /// The prediction, in `unit`.
    pub prediction: f64,
    /// The published value, in `unit` (the middle of a published range).
    pub published: f64,
    /// Unit of both.
    pub unit: String,
    /// Relative error of the prediction, `prediction / published - 1`.
    pub error: f64,
    /// The tolerance stated before the comparison (relative).
    pub tolerance: f64,
    /// Whether `|error| <= tolerance`.
    pub within: bool,
}

impl ValidationRow {
    #[allow(clippy::too_many_arguments)]
    fn new(
        figure: &str,
        source: &str,
        setup: &str,
        prediction: f64,
        published: f64,
        unit: &str,
        tolerance: f64,
    ) -> ValidationRow {
        let error = prediction / published - 1.0;
        ValidationRow {
            figure: figure.into(),
            source: source.into(),
            setup: setup.into(),
            prediction,
            published,
            unit: unit.into(),
            error,
            tolerance,
            within: error.abs() <= tolerance,
        }
    }
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
pub fn collective_rows() -> Result<Vec<ValidationRow>, Error> {
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
        ValidationRow::new(
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
        ValidationRow::new(
            "nccl-tests all_reduce bus bandwidth, one 8 x H100 NVLink node, NVLS",
            "NVIDIA nccl-tests issue 290; ASTRA-sim validation docs (about 476 GB/s)",
            &format!("llama3-24k, 8 GPUs of one server (NVLink 4, 450 GB/s), {large}, nvls/simple"),
            nvls,
            476.0,
            "GB/s",
            0.10,
        ),
        ValidationRow::new(
            "nccl-tests all_reduce bus bandwidth, one 8 x H100 NVLink node, ring plateau",
            "NVIDIA nccl-tests issue 290; ASTRA-sim validation docs (about 370 GB/s)",
            &format!("llama3-24k, 8 GPUs of one server (NVLink 4, 450 GB/s), {large}, ring/simple"),
            ring,
            370.0,
            "GB/s",
            0.10,
        ),
        ValidationRow::new(
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
        ),
    ])
}
