//! NCCL's protocols on the fabric: the simulated algorithm gives the bandwidth term (the
//! fluid makespans, what Simple moves) and the path latency (the chains); the protocol adds
//! NCCL's latency (base plus per step by link type) and divides the bandwidth term by its
//! payload efficiency, bounded by NCCL's per-protocol bandwidth caps
//! ([`aifabric_workload::nccl`] holds the constants and their sources).
//!
//! NVLS has no rank-to-rank schedule: it is timed in closed form on the scale-up bandwidth
//! ([`aifabric_workload::nccl::nvls_bandwidth_s`]).

use crate::sim::{channels, CollectiveResult, SimError};
use crate::Collective;
use aifabric_dataplane::Net;
use aifabric_workload::collective::{alg_bw_gbytes_per_s, bus_bw_gbytes_per_s, Op};
use aifabric_workload::nccl::{self, Scale};
use aifabric_workload::{Algo, Proto};
use fixedbitset::FixedBitSet;

/// Ranks, scale-up domains spanned (NCCL's nodes: distinct domains of the first group) and
/// NCCL's channels: the schedule's channels, at least one per GPU of the scale-up domain
/// (NCCL opens at least one ring or tree per NIC of an 8-NIC server; a group with one GPU
/// per server still runs several channels through its NIC).
pub fn scale(net: &Net<'_>, c: &Collective) -> Scale {
    let grp = c.groups.first().map_or(&[][..], Vec::as_slice);
    Scale {
        ranks: grp.len() as u32,
        nodes: net.domains_spanned(grp),
        channels: channels(net, c).max(net.params.scale_up_gpus.max(1)),
    }
}

/// How a protocol changes a simulated time: `time = latency_s + latency_factor x
/// nccl_latency_s + max(bandwidth_s / efficiency, cap_s)`.
#[derive(Clone, Copy, Debug)]
pub struct ProtoTerms {
    /// NCCL's latency of the algorithm and protocol, seconds.
    pub nccl_latency_s: f64,
    /// The ring plateau factor at this size.
    pub latency_factor: f64,
    /// Payload efficiency x the tree correction at this size.
    pub efficiency: f64,
    /// The time NCCL's bandwidth cap allows at least, seconds.
    pub cap_s: f64,
}

impl ProtoTerms {
    /// The terms of `proto` for `c` (of `c.bytes`) by `algo`, if NCCL models it.
    pub fn of(op: Op, algo: Algo, proto: Proto, s: Scale, bytes: f64) -> Option<ProtoTerms> {
        let lat = nccl::latency_us(op, algo, proto, s)?;
        let cap_s = nccl::bus_cap_gbytes_per_s(op, algo, proto, s).map_or(0.0, |cap| {
            bytes / (cap * 1e9 * nccl::bus_to_alg(op, algo, s.ranks))
        });
        Some(ProtoTerms {
            nccl_latency_s: lat * 1e-6,
            latency_factor: nccl::latency_factor(op, algo, proto, s, bytes),
            efficiency: nccl::efficiency(op, algo, proto, s)
                * nccl::tree_correction(op, algo, proto, bytes),
            cap_s,
        })
    }

    /// The time with these terms, from the simulated latency and bandwidth terms.
    pub fn time_s(&self, latency_s: f64, bandwidth_s: f64) -> f64 {
        self.total_latency_s(latency_s) + self.bandwidth_s(bandwidth_s)
    }

    fn total_latency_s(&self, latency_s: f64) -> f64 {
        latency_s + self.latency_factor * self.nccl_latency_s
    }

    fn bandwidth_s(&self, bandwidth_s: f64) -> f64 {
        (bandwidth_s / self.efficiency).max(self.cap_s)
    }
}

/// `r` (simulated with Simple's bandwidth and the path latency) with `proto`'s terms.
pub fn apply(
    net: &Net<'_>,
    c: &Collective,
    mut r: CollectiveResult,
    proto: Proto,
) -> Result<CollectiveResult, SimError> {
    let op =
        c.op.ok_or_else(|| SimError::Invalid("protocols apply to collectives".into()))?;
    let s = scale(net, c);
    let t = ProtoTerms::of(op, r.algo, proto, s, c.bytes).ok_or_else(|| {
        SimError::Invalid(format!(
            "NCCL does not run {} with {} for {} over {} ranks in {} scale-up domain(s) \
             (nvls: Simple, inside one domain; pat: Simple, all_gather or reduce_scatter \
             with one GPU per domain; tree: all_reduce)",
            r.algo.name(),
            proto.name(),
            op.as_str(),
            s.ranks,
            s.nodes
        ))
    })?;
    let bw = r.time_s - r.latency_s;
    r.latency_s = t.total_latency_s(r.latency_s);
    r.time_s = r.latency_s + t.bandwidth_s(bw);
    r.proto = Some(proto);
    r.channels = s.channels;
    if r.time_s > 0.0 {
        r.alg_bw_gbytes_per_s = alg_bw_gbytes_per_s(c.bytes, r.time_s);
        r.bus_bw_gbytes_per_s = bus_bw_gbytes_per_s(op, s.ranks, c.bytes, r.time_s);
    }
    Ok(r)
}

/// NVLS over `c`'s groups, each inside one scale-up domain: the closed form at the
/// scale-up bandwidth, the per-step `alpha_s` on its steps (2 for an all-reduce: reduce,
/// then multicast; else 1) and one scale-up hop of latency.
pub fn nvls(net: &Net<'_>, c: &Collective) -> Result<CollectiveResult, SimError> {
    let op = match c.op {
        Some(op @ (Op::AllReduce | Op::AllGather | Op::ReduceScatter)) => op,
        _ => {
            return Err(SimError::Invalid(
                "nvls runs all_reduce, all_gather and reduce_scatter".into(),
            ))
        }
    };
    let n = c.groups.first().map_or(0, Vec::len) as u32;
    if c.groups
        .iter()
        .any(|g| g.iter().any(|&x| !net.same_domain(x, g[0])))
    {
        return Err(SimError::Invalid(format!(
            "nvls reduces inside one NVSwitch domain: the group spans several scale-up domains \
             of {} GPUs; use ring or tree",
            net.params.scale_up_gpus
        )));
    }
    let steps: u64 = if op == Op::AllReduce { 2 } else { 1 };
    let bw = if n > 1 {
        nccl::nvls_bandwidth_s(op, n, c.bytes, net.params.scale_up_bytes_per_s)
    } else {
        0.0
    };
    let latency = if n > 1 {
        steps as f64 * c.alpha_s + net.params.scale_up_latency_s
    } else {
        0.0
    };
    let time = bw + latency;
    let (alg, bus) = if time > 0.0 {
        (
            alg_bw_gbytes_per_s(c.bytes, time),
            bus_bw_gbytes_per_s(op, n, c.bytes, time),
        )
    } else {
        (0.0, 0.0)
    };
    Ok(CollectiveResult {
        bytes: c.bytes,
        time_s: time,
        latency_s: latency,
        alg_bw_gbytes_per_s: alg,
        bus_bw_gbytes_per_s: bus,
        steps,
        flows: 0,
        tiers: Vec::new(),
        bottlenecks: Vec::new(),
        utilization_histogram: vec![0; 20],
        te_gap: None,
        algo: Algo::Nvls,
        proto: None,
        channels: nccl::NVLS_CHANNELS_HOPPER,
        tuned: Vec::new(),
        used_links: FixedBitSet::with_capacity(net.f.links().len()),
        // Inside one NVSwitch domain: nothing another job shares.
        carried: Vec::new(),
    })
}
