//! NCCL's cost model of a collective: protocols (LL, LL128, Simple), their latencies per
//! algorithm and link type, their bandwidth efficiencies and caps, as NCCL's tuner models
//! them. The engine takes the bandwidth term from the fabric (the fluid makespans) and adds
//! these terms; this module holds the constants and the closed forms, no fabric.
//!
//! Every constant is read from NCCL 2.30.7 (github.com/NVIDIA/nccl, `makefiles/version.mk`),
//! `src/graph/tuning.cc` unless said otherwise: `ncclTunerConstantsDefaults` (its fields
//! `baseLatencies`, `hwLatencies`, `llMaxBws`, `perChMaxRingLL128Bws`, `perChMaxTreeBws`,
//! `perChMaxTreeLL128Bws`), `nvlsEfficiency`, `getNetOverhead`, `treeCorrectionFactor`, and
//! the refinements of `ncclTopoTuneModel` and `ncclTopoGetAlgoTime`. The GPU is a Hopper
//! (H100: compute capability 9.0) with an Intel host CPU, as in the Llama 3 cluster.
//!
//! Units: microseconds (`_us`) as NCCL's tables, GB/s (10^9 B/s, `_gbytes_per_s`).

use crate::collective::Op;
use crate::schedule::Algo;
use serde::Serialize;

/// An NCCL protocol: how data and its readiness flags travel (NCCL `NCCL_PROTO_*`,
/// `src/include/device.h`; chosen with the `NCCL_PROTO` environment variable).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Proto {
    /// Low latency: 8-byte stores of 4 bytes of data and a 4-byte flag (half the bytes
    /// are payload), no fence: the lowest latency, the lowest bandwidth.
    Ll,
    /// LL128: 128-byte lines of 120 bytes of data and an 8-byte flag (NVLink's 128-byte
    /// atomicity): most of Simple's bandwidth at a lower latency.
    Ll128,
    /// Simple: large chunks with a fence and a flag per chunk: full bandwidth, the highest
    /// latency.
    Simple,
    /// The protocol NCCL's tuner would pick for the algorithm and size.
    Auto,
}

impl Proto {
    /// The protocols NCCL runs, in its order (`NCCL_PROTO_LL`, `_LL128`, `_SIMPLE`).
    pub const ALL: [Proto; 3] = [Proto::Ll, Proto::Ll128, Proto::Simple];

    /// The name [`Proto::parse`] reads back.
    pub fn name(self) -> &'static str {
        match self {
            Proto::Ll => "ll",
            Proto::Ll128 => "ll128",
            Proto::Simple => "simple",
            Proto::Auto => "auto",
        }
    }

    /// Parse a name (case-insensitive, as `NCCL_PROTO` takes them).
    pub fn parse(s: &str) -> Option<Proto> {
        Some(match s.to_ascii_lowercase().as_str() {
            "ll" => Proto::Ll,
            "ll128" => Proto::Ll128,
            "simple" => Proto::Simple,
            "auto" => Proto::Auto,
            _ => return None,
        })
    }

    fn idx(self) -> usize {
        match self {
            Proto::Ll => 0,
            Proto::Ll128 => 1,
            Proto::Simple | Proto::Auto => 2,
        }
    }
}

impl std::str::FromStr for Proto {
    type Err = String;

    fn from_str(s: &str) -> Result<Proto, String> {
        Proto::parse(s).ok_or_else(|| {
            format!(
                "unknown protocol `{s}`{}; use auto, ll, ll128 or simple",
                aifabric_model::did_you_mean_hint(s, &["auto", "ll", "ll128", "simple"])
            )
        })
    }
}

impl std::fmt::Display for Proto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Link types of NCCL's latency table (`NCCL_HW_NVLINK`, `NCCL_HW_PCI`, `NCCL_HW_NET`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hw {
    /// NVLink (inside a scale-up domain).
    NvLink,
    /// PCIe.
    Pci,
    /// The network (between scale-up domains).
    Net,
}

/// Algorithms of NCCL's tables that this model runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NcclAlgo {
    Tree,
    Ring,
    Nvls,
    Pat,
}

impl NcclAlgo {
    fn of(a: Algo) -> Option<NcclAlgo> {
        Some(match a {
            Algo::Ring => NcclAlgo::Ring,
            Algo::Tree => NcclAlgo::Tree,
            Algo::Nvls => NcclAlgo::Nvls,
            Algo::Pat => NcclAlgo::Pat,
            _ => return None,
        })
    }
}

/// `ncclTunerConstantsDefaults.baseLatencies` (us): Tree, Ring; NVLS 0; PAT 8.0.
fn base_latency_us(a: NcclAlgo, p: Proto) -> f64 {
    let t = match a {
        NcclAlgo::Tree => [6.8, 14.0, 8.4],
        NcclAlgo::Ring => [6.6, 14.0, 8.4],
        NcclAlgo::Nvls => [0.0, 0.0, 0.0],
        NcclAlgo::Pat => [8.0, 8.0, 8.0],
    };
    t[p.idx()]
}

/// `ncclTunerConstantsDefaults.hwLatencies` (us), per link type, algorithm and protocol
/// (LL, LL128, Simple).
pub fn hw_latency_us(hw: Hw, a: Algo, p: Proto) -> f64 {
    let Some(a) = NcclAlgo::of(a) else {
        return 0.0;
    };
    let t = match (hw, a) {
        (Hw::NvLink, NcclAlgo::Tree) => [0.6, 1.25, 4.0],
        (Hw::NvLink, NcclAlgo::Ring) => [0.6, 1.9, 3.4],
        (Hw::NvLink, NcclAlgo::Nvls) => [0.0, 0.0, 25.0],
        (Hw::NvLink, NcclAlgo::Pat) => [0.0, 0.0, 4.0],
        (Hw::Pci, NcclAlgo::Tree) => [1.0, 1.9, 4.0],
        (Hw::Pci, NcclAlgo::Ring) => [1.0, 2.5, 5.7],
        (Hw::Pci, NcclAlgo::Nvls) => [0.0, 0.0, 0.0],
        (Hw::Pci, NcclAlgo::Pat) => [0.0, 0.0, 4.0],
        (Hw::Net, NcclAlgo::Tree) => [5.0, 8.5, 14.0],
        (Hw::Net, NcclAlgo::Ring) => [2.7, 4.0, 14.0],
        (Hw::Net, NcclAlgo::Nvls) => [0.0, 0.0, 18.0],
        (Hw::Net, NcclAlgo::Pat) => [0.0, 0.0, 14.0],
    };
    t[p.idx()]
}

/// `getNetOverhead`: the network post overhead of an Intel x86 host, us (AMD: 2.0).
pub const NET_OVERHEAD_US: f64 = 1.0;

/// `nvlsEfficiency[NCCL_HOPPER_COMPCAP_IDX]`: NVLS's share of the NVLink bandwidth on H100.
pub const NVLS_EFFICIENCY_HOPPER: f64 = 0.85;

/// `NVLS_NCHANNELS_SM90` (`src/transport/nvls.cc`): NVLS channels on Hopper; NCCL's model
/// loses one of them (`(nChannels - 1) / nChannels`).
pub const NVLS_CHANNELS_HOPPER: u32 = 16;

/// `ncclTopoGetAlgoTime`: the "plateau effect of ring" (Simple all-reduce across nodes, at
/// least 64 bytes per channel and rank) multiplies the latency by 1.4 from Ampere on.
pub const RING_PLATEAU_LATENCY_FACTOR: f64 = 1.4;

/// `treeCorrectionFactor` (LL, LL128, Simple): tree all-reduce bandwidth per power of two
/// of the size from 64 B (index `log2(bytes / 64)`, 0..23).
const TREE_CORRECTION: [[f64; 24]; 3] = [
    [
        1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8,
        0.9, 1.0, 1.0, 1.0, 1.0, 1.0,
    ],
    [
        1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9,
        0.9, 0.9, 0.9, 1.0, 1.0, 1.0,
    ],
    [
        0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8,
        0.7, 0.7, 0.8, 0.9, 0.9, 0.9,
    ],
];

/// Where a collective runs: ranks, the scale-up domains (NCCL's nodes) they span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// Ranks.
    pub ranks: u32,
    /// Scale-up domains spanned (NCCL's `nNodes`).
    pub nodes: u32,
    /// Channels (rings or trees) NCCL runs: caps per channel multiply by it.
    pub channels: u32,
}

impl Scale {
    fn ppn(&self) -> f64 {
        f64::from(self.ranks) / f64::from(self.nodes.max(1))
    }
}

/// Whether NCCL runs `algo` with `proto` for `op` at this scale (`ncclTopoTuneModel`'s
/// skips: NVLS and PAT are Simple only; NVLS inside one node without CollNet; PAT for
/// all-gather and reduce-scatter with one GPU per node, `ncclPatEnable`; tree for
/// all-reduce only).
pub fn applies(op: Op, algo: Algo, proto: Proto, s: Scale) -> bool {
    if proto == Proto::Auto || s.ranks < 2 {
        return false;
    }
    let ag_rs = matches!(op, Op::AllGather | Op::ReduceScatter);
    match algo {
        Algo::Ring => matches!(op, Op::AllReduce) || ag_rs,
        Algo::Tree => op == Op::AllReduce,
        Algo::Nvls => (op == Op::AllReduce || ag_rs) && proto == Proto::Simple && s.nodes == 1,
        Algo::Pat => ag_rs && proto == Proto::Simple && s.nodes == s.ranks,
        _ => false,
    }
}

/// NCCL's latency of one collective (`comm->latencies[coll][algo][proto]`), us, before the
/// ring plateau factor; `None` if the model has none for it.
pub fn latency_us(op: Op, algo: Algo, proto: Proto, s: Scale) -> Option<f64> {
    let a = NcclAlgo::of(algo)?;
    if !applies(op, algo, proto, s) {
        return None;
    }
    let n = f64::from(s.ranks);
    let nodes = f64::from(s.nodes.max(1));
    let nsteps = match op {
        Op::AllReduce => 2.0 * (n - 1.0),
        Op::AllGather | Op::ReduceScatter => n - 1.0,
        _ => n,
    };
    let mut lat = base_latency_us(a, proto);
    let mut intra = hw_latency_us(Hw::NvLink, algo, proto);
    // "With ppn=1 latencies are fully exposed, use the Tree network latency."
    let inter = if s.ppn() == 1.0 {
        hw_latency_us(Hw::Net, Algo::Tree, proto)
    } else {
        hw_latency_us(Hw::Net, algo, proto)
    };
    // `graphs[a]->latencyInter` (added once, twice for Simple) is 0 unless the topology
    // file gives one: left out.
    let log2_nodes = f64::from(31 - s.nodes.max(1).leading_zeros());
    match a {
        NcclAlgo::Ring => {
            // Inter-node rings still pay the network post overhead at every step (x3 for
            // Simple).
            if s.nodes > 1 {
                let overhead = NET_OVERHEAD_US * if proto == Proto::Simple { 3.0 } else { 1.0 };
                intra = intra.max(overhead);
            }
            let inter_steps = if s.nodes == 1 {
                0.0
            } else if op == Op::AllReduce {
                2.0 * (nodes - 1.0)
            } else {
                nodes - 1.0
            };
            lat += (nsteps - inter_steps) * intra + inter_steps * inter;
        }
        NcclAlgo::Tree => {
            lat += 2.0 * ((s.ppn() - 1.0) * intra + log2_nodes * inter);
        }
        NcclAlgo::Nvls => {
            // NVLS replaces the base latency by the NVLink one (plus the network's across
            // nodes, which this model does not run).
            lat = intra;
        }
        NcclAlgo::Pat => {
            lat += log2_nodes * (inter / 3.5) + n * 2.8;
        }
    }
    Some(lat)
}

/// The latency factor of `ncclTopoGetAlgoTime` at `bytes`: 1.4 for a Simple ring
/// all-reduce across nodes once each channel and rank has at least 64 bytes, else 1.
pub fn latency_factor(op: Op, algo: Algo, proto: Proto, s: Scale, bytes: f64) -> f64 {
    let per = bytes / f64::from(s.channels.max(1)) / f64::from(s.ranks.max(1));
    if algo == Algo::Ring
        && proto == Proto::Simple
        && s.nodes > 1
        && op == Op::AllReduce
        && per >= 64.0
    {
        RING_PLATEAU_LATENCY_FACTOR
    } else {
        1.0
    }
}

/// The protocol's payload efficiency on the algorithm's bandwidth (NCCL's "model
/// refinements" in `ncclTopoTuneModel`): ring LL x0.5, ring LL128 x0.92 (the 120 of 128
/// bytes), tree all-reduce x0.92, tree LL x1/3.8, tree LL128 x7/9 in one node else
/// x120/128, PAT x0.75; the rest 1.
pub fn efficiency(op: Op, algo: Algo, proto: Proto, s: Scale) -> f64 {
    match (algo, proto) {
        (Algo::Ring, Proto::Ll) => 0.5,
        (Algo::Ring, Proto::Ll128) => 0.92,
        (Algo::Tree, p) if op == Op::AllReduce => {
            0.92 * match p {
                Proto::Ll => 1.0 / 3.8,
                Proto::Ll128 if s.nodes == 1 => 7.0 / 9.0,
                Proto::Ll128 => 120.0 / 128.0,
                _ => 1.0,
            }
        }
        (Algo::Pat, _) => 0.75,
        _ => 1.0,
    }
}

/// NCCL's cap on the bus bandwidth (GB/s, NCCL's `busBw`), if any: LL at `llMaxBws`
/// (Hopper in one node 141.0; an Intel host across 2 nodes 39.0, more 20.4), LL128 at
/// channels x `perChMaxRingLL128Bws` (Hopper 36.7) or `perChMaxTreeLL128Bws` (36.7, 36.7,
/// 29.0), tree all-reduce at channels x `perChMaxTreeBws` (38.7, 41.4, 36.0).
pub fn bus_cap_gbytes_per_s(op: Op, algo: Algo, proto: Proto, s: Scale) -> Option<f64> {
    let i = match s.nodes {
        0 | 1 => 0,
        2 => 1,
        _ => 2,
    };
    let ch = f64::from(s.channels.max(1));
    let ll_max = [141.0, 39.0, 20.4][i];
    match (algo, proto) {
        (Algo::Ring, Proto::Ll) => Some(ll_max),
        (Algo::Ring, Proto::Ll128) => Some(ch * 36.7),
        (Algo::Tree, p) if op == Op::AllReduce => {
            let tree = ch * [38.7, 41.4, 36.0][i];
            Some(match p {
                Proto::Ll => tree.min(ll_max),
                Proto::Ll128 => tree.min(ch * [36.7, 36.7, 29.0][i]),
                _ => tree,
            })
        }
        _ => None,
    }
}

/// NCCL's conversion of its bus bandwidth to the algorithm bandwidth: n / nsteps for ring
/// and NVLS all-reduce (the nccl-tests factor), 0.5 for tree; none for all-gather and
/// reduce-scatter other than by ring (their bandwidth is used as is).
pub fn bus_to_alg(op: Op, algo: Algo, n: u32) -> f64 {
    let ag_rs = matches!(op, Op::AllGather | Op::ReduceScatter);
    match algo {
        Algo::Ring => 1.0 / op.bus_factor(n.max(2)),
        Algo::Nvls if !ag_rs => 1.0 / op.bus_factor(n.max(2)),
        Algo::Tree if !ag_rs => 0.5,
        _ => 1.0,
    }
}

/// `treeCorrectionFactor` for a tree all-reduce of `bytes` (1 outside 64 B .. 512 MB or for
/// other algorithms): NCCL's tree bandwidth is multiplied by it.
pub fn tree_correction(op: Op, algo: Algo, proto: Proto, bytes: f64) -> f64 {
    if algo != Algo::Tree || op != Op::AllReduce || proto == Proto::Auto {
        return 1.0;
    }
    let units = (bytes / 64.0).floor();
    if units < 1.0 {
        return 1.0;
    }
    let log = units.log2().floor() as usize;
    TREE_CORRECTION[proto.idx()]
        .get(log)
        .copied()
        .unwrap_or(1.0)
}

/// NVLS in one NVSwitch domain: the switch reduces in the network (`multimem` loads and
/// stores). Per GPU and direction an all-reduce moves its whole buffer to the switch and
/// its 1/n share back reduced, then its share out and the whole result in, pipelined:
/// `S x (1 + 1/n)` each way; an all-gather or reduce-scatter moves S one way. Seconds at
/// `bytes_per_s` per GPU and direction, at NCCL's efficiency (`nvlsEfficiency` x
/// `(channels - 1) / channels`).
pub fn nvls_bandwidth_s(op: Op, n: u32, bytes: f64, bytes_per_s: f64) -> f64 {
    let nf = f64::from(n.max(1));
    let ch = f64::from(NVLS_CHANNELS_HOPPER);
    let eff = NVLS_EFFICIENCY_HOPPER * (ch - 1.0) / ch;
    let moved = match op {
        Op::AllReduce => bytes * (1.0 + 1.0 / nf),
        _ => bytes,
    };
    moved / (bytes_per_s * eff)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scale(ranks: u32, nodes: u32) -> Scale {
        Scale {
            ranks,
            nodes,
            channels: 8,
        }
    }

    #[test]
    fn ring_latency_follows_ncclopotunemodel() {
        // 4 nodes of 8: 2 x 31 steps, 6 of them across nodes. Simple: base 8.4, intra
        // max(3.4, 3 x 1.0), inter 14.0.
        let l = latency_us(Op::AllReduce, Algo::Ring, Proto::Simple, scale(32, 4)).unwrap();
        assert!((l - (8.4 + 56.0 * 3.4 + 6.0 * 14.0)).abs() < 1e-9, "{l}");
        // LL, one node of 8: base 6.6, 14 steps of 0.6.
        let l = latency_us(Op::AllReduce, Algo::Ring, Proto::Ll, scale(8, 1)).unwrap();
        assert!((l - (6.6 + 14.0 * 0.6)).abs() < 1e-9, "{l}");
        // One GPU per node: every step is the tree's network latency (LL128: 8.5), and the
        // intra-node step count is zero.
        let l = latency_us(Op::AllGather, Algo::Ring, Proto::Ll128, scale(16, 16)).unwrap();
        assert!((l - (14.0 + 15.0 * 8.5)).abs() < 1e-9, "{l}");
    }

    #[test]
    fn tree_nvls_pat_latencies() {
        // Tree, 16 nodes of 8, LL: 6.8 + 2 (7 x 0.6 + 4 x 5.0).
        let l = latency_us(Op::AllReduce, Algo::Tree, Proto::Ll, scale(128, 16)).unwrap();
        assert!(
            (l - (6.8 + 2.0 * (7.0 * 0.6 + 4.0 * 5.0))).abs() < 1e-9,
            "{l}"
        );
        assert_eq!(
            latency_us(Op::AllReduce, Algo::Nvls, Proto::Simple, scale(8, 1)),
            Some(25.0)
        );
        assert_eq!(
            latency_us(Op::AllReduce, Algo::Nvls, Proto::Simple, scale(16, 2)),
            None
        );
        assert_eq!(
            latency_us(Op::AllReduce, Algo::Nvls, Proto::Ll, scale(8, 1)),
            None
        );
        // PAT, 1,024 nodes of one GPU: 8 + 10 x 14 / 3.5 + 1,024 x 2.8.
        let l = latency_us(Op::AllGather, Algo::Pat, Proto::Simple, scale(1024, 1024)).unwrap();
        assert!((l - (8.0 + 40.0 + 1024.0 * 2.8)).abs() < 1e-9, "{l}");
        assert_eq!(
            latency_us(Op::AllGather, Algo::Pat, Proto::Simple, scale(16, 2)),
            None
        );
        assert_eq!(
            latency_us(Op::AllReduce, Algo::Pat, Proto::Simple, scale(16, 16)),
            None
        );
    }

    #[test]
    fn efficiencies_caps_and_corrections() {
        let s = scale(64, 8);
        assert_eq!(efficiency(Op::AllReduce, Algo::Ring, Proto::Ll, s), 0.5);
        assert_eq!(efficiency(Op::AllReduce, Algo::Ring, Proto::Ll128, s), 0.92);
        assert_eq!(efficiency(Op::AllReduce, Algo::Ring, Proto::Simple, s), 1.0);
        assert_eq!(
            bus_cap_gbytes_per_s(Op::AllReduce, Algo::Ring, Proto::Ll, s),
            Some(20.4)
        );
        assert_eq!(
            bus_cap_gbytes_per_s(Op::AllReduce, Algo::Ring, Proto::Ll128, s),
            Some(8.0 * 36.7)
        );
        assert_eq!(
            bus_cap_gbytes_per_s(Op::AllReduce, Algo::Ring, Proto::Simple, s),
            None
        );
        // 1 MB = 2^14 x 64 B: index 14.
        assert_eq!(
            tree_correction(Op::AllReduce, Algo::Tree, Proto::Simple, 1048576.0),
            0.5
        );
        assert_eq!(
            tree_correction(Op::AllReduce, Algo::Ring, Proto::Simple, 1048576.0),
            1.0
        );
        assert_eq!(
            tree_correction(Op::AllReduce, Algo::Tree, Proto::Ll, 1e12),
            1.0
        );
        // Plateau: 1 GB over 64 ranks and 8 channels has far more than 64 B per channel.
        assert_eq!(
            latency_factor(Op::AllReduce, Algo::Ring, Proto::Simple, s, 1e9),
            1.4
        );
        assert_eq!(
            latency_factor(Op::AllReduce, Algo::Ring, Proto::Simple, s, 1e3),
            1.0
        );
    }

    #[test]
    fn nvls_closed_form() {
        // 8 GPUs at 450 GB/s: S (1 + 1/8) / (450 x 0.85 x 15/16).
        let t = nvls_bandwidth_s(Op::AllReduce, 8, 1e9, 450e9);
        assert!((t - 1.125e9 / (450e9 * 0.85 * 15.0 / 16.0)).abs() < 1e-12);
    }

    #[test]
    fn names_round_trip() {
        for p in Proto::ALL.into_iter().chain([Proto::Auto]) {
            assert_eq!(p.name().parse::<Proto>(), Ok(p));
        }
        assert!("LL128".parse::<Proto>().is_ok());
        assert!("fast".parse::<Proto>().is_err());
    }
}
