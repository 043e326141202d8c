//! # aifabric-packet
//!
//! The packet-level engine: what the flow engine's ideal fluid cannot show (queues filling,
//! ECN and congestion-control transients, packets trimmed or dropped and retransmitted, the
//! tail of completion times), on aifabric's own fabric model and routes.
//!
//! A discrete-event simulator in integer picoseconds, deterministic by seed ([`run`]): one
//! thread, or with [`Config::partitions`] the fabric cut into parts run side by side with
//! conservative synchronization (the same bytes at any thread count):
//! - **links** serialize each packet's bytes at their rate and delay it by their propagation
//!   (cable length at 5 ns/m, or one latency for every link) plus the far switch's
//!   forwarding latency;
//! - **switches** are output-queued: per egress port a data class limited in bytes and a
//!   high-priority class (trimmed headers, ACKs, NACKs) served first. A data packet that
//!   does not fit is **trimmed** to its header (NDP, Handley et al., SIGCOMM 2017; Ultra
//!   Ethernet's packet trimming) or dropped (drop-tail); ECN marks data packets on dequeue
//!   with a probability linear in the data-class occupancy between two thresholds (RED-style
//!   marking as in DCTCP's switch configuration, Alizadeh et al., SIGCOMM 2010);
//! - **forwarding** follows the control plane: at each switch the next hops of its converged
//!   BGP route toward the destination rack. `ecmp` hashes the flow (one path), `spray:N`
//!   hashes the flow and a per-packet entropy value out of N (htsim's `-paths N`) over the
//!   next hops weighted by UCMP, the sender recycling the values of packets acknowledged
//!   unmarked (REPS; `mixed:N` feeds back one value per ACK, as htsim), `adaptive` takes the
//!   next hop whose queue holds least (NSF's adaptive routing);
//! - **endpoints**: a sender in the NSCC family ([`nscc`]) or a line-rate sender, a receiver
//!   that acknowledges every `ack_every_bytes` (selective: each ACK lists the packets it
//!   covers) and answers a trimmed header with a NACK; the sender retransmits NACKed packets
//!   at once and everything outstanding after a retransmission timeout; or DCQCN senders
//!   ([`dcqcn`]) paced at a rate the receiver's CNPs cut;
//! - **lossless fabrics** ([`Pfc`], [`Admission`]): priority flow control per ingress link
//!   (PAUSE and RESUME over the link, headroom per link or carved out of the switch's
//!   buffer, headroom drops counted) and receiver-driven admission (a clear-to-send per
//!   chunk), as Meta's RoCE zones run (`Config::roce`);
//! - **DSF zones** run as a scheduled fabric ([`dsf`]): ingress VOQs per egress port and
//!   class, credits granted by the egress port's scheduler at its rate, packets cut into
//!   cells sprayed over every live fabric link that still reaches the egress node (within
//!   Input Balanced Mode's share), and reassembled there.
//!
//! Scale-up (NVLink) transfers are not modelled: every flow crosses the scale-out network.
//!
//! ## The engine's parts
//!
//! One concern per file, htsim-style; each adds its methods to the engine's state
//! (`sim::Sim`) and keeps its own state in a part of it:
//! - `sim.rs`: the state, [`run`] and the event loop (one `match` over a closed `Event`);
//! - `setup.rs`: the request checked, every automatic choice resolved before the loop
//!   (congestion-control parameters, NSCC per path, timers), the flows laid out;
//! - `event.rs`, `events.rs`, `radix.rs`: the events (typed ids, 8 bytes) and the
//!   calendar queue (a timing wheel for the next 4.2 us over a radix heap, equal times in
//!   insertion order); `prefetch.rs`: what the next few events
//!   will read, asked of the caches before each event (it only reads);
//! - `ids.rs`: typed ids (`PacketId`, `PortId`, `FlowId`, `HostId`, ...; `Option<Id>` is
//!   4 bytes); `packet.rs`: packets, their arena, FIFOs and SACK lists;
//! - `port.rs`: egress queues, transmission, ECN marking, trimming and drops;
//!   `pfc.rs`: PAUSE/RESUME, ingress accounting and headroom; `switch.rs`: next hops;
//! - `flow.rs`: a flow's state at both ends; `host.rs`: senders and receivers (ACK, NACK,
//!   timeouts); `trigger.rs`: flows started by others; `admission.rs`: clear-to-send;
//! - `cc/`: congestion control, one interface and one file per law ([`nscc`], [`dcqcn`],
//!   line rate, a fixed window);
//! - `cells.rs`: the DSF cell fabric (VOQs, credits, cells, reassembly; [`dsf`] builds
//!   its topology, `topo.rs` the ports and forwarding tables);
//! - `ledger.rs`: the conservation checks; `result.rs`: the [`PacketResult`];
//! - `partition.rs`: the fabric cut into parts, run in lookahead windows on the cores;
//! - `subset.rs`: every flow's path under `ecmp`, and part of a matrix run on the whole
//!   matrix's network ([`run_part`]).

mod admission;
mod cc;
mod cells;
pub mod dsf;
mod event;
mod events;
mod flow;
mod forward;
mod host;
mod ids;
mod ledger;
mod packet;
mod partition;
mod pfc;
mod port;
mod prefetch;
mod radix;
mod result;
mod setup;
mod sim;
mod subset;
mod switch;
#[cfg(test)]
mod testing;
mod topo;
mod trigger;

pub use cc::{dcqcn, nscc};
pub use forward::{FastForward, HybridStats};
pub use partition::MAX_PARTITIONS;
pub use pfc::pfc_headroom_bytes;
pub use result::{
    Counters, DsfResult, FabricTier, LinkLoad, PacketResult, PartitionStats, PfcResult, TierPauses,
    TierQueues, TierVoqs,
};
pub use sim::{run, run_with_progress, Progress, MAX_PACKETS};
pub use subset::{
    run_part, run_part_repeats, Chains, Choose, FabricStage, FlowPaths, PartRun, PartRuns, PathHop,
};

use aifabric_dataplane::lb::DEFAULT_ENTROPIES;
use aifabric_dataplane::mix;
use aifabric_dataplane::Lb;
use serde::Serialize;

/// How switches pick among next hops: the modes of the data plane's [`Lb`] the packet
/// engine runs, resolved (`spray` is `spray:128`). Built by `TryFrom<Lb>`, which refuses the
/// others with the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PacketLb {
    /// Per-flow hash: one path per flow.
    Ecmp,
    /// Per-packet: the flow's hash and an entropy value chosen per packet out of N, over the
    /// next hops weighted by UCMP. The sender recycles the value of every packet acknowledged
    /// without an ECN mark (REPS, per packet: it remembers which value each packet took, so a
    /// coalesced ACK recycles all the packets it covers); otherwise it walks the N values
    /// round robin, skipping penalized ones.
    Spray(u32),
    /// As [`PacketLb::Spray`], with htsim's "mixed" feedback: one value per ACK, the one echoed
    /// by the ACK (the packet that triggered it), as htsim's Ultra Ethernet model feeds its
    /// load balancer. With an ACK every ~4 packets, three packets in four are not recycled.
    Mixed(u32),
    /// The next hop whose egress queue holds fewest bytes (ties by the flow's hash).
    Adaptive,
}

impl PacketLb {
    /// The modes the packet engine runs, for refusals.
    pub const MODES: &'static str =
        "ecmp, spray:N (N entropy values, 1..=65536; spray = spray:128), \
         mixed:N (spray with htsim's one entropy per ACK; mixed = mixed:128) or adaptive";

    /// Name as parsed.
    pub fn name(self) -> String {
        match self {
            PacketLb::Ecmp => "ecmp".into(),
            PacketLb::Spray(n) => format!("spray:{n}"),
            PacketLb::Mixed(n) => format!("mixed:{n}"),
            PacketLb::Adaptive => "adaptive".into(),
        }
    }

    /// The number of entropy values of a sprayed mode (`spray` or `mixed`).
    pub fn entropies(self) -> Option<u32> {
        match self {
            PacketLb::Spray(n) | PacketLb::Mixed(n) => Some(n),
            PacketLb::Ecmp | PacketLb::Adaptive => None,
        }
    }
}

impl TryFrom<Lb> for PacketLb {
    type Error = String;

    fn try_from(lb: Lb) -> Result<PacketLb, String> {
        match lb {
            Lb::Ecmp => Ok(PacketLb::Ecmp),
            Lb::Spray(n) => Ok(PacketLb::Spray(n.unwrap_or(DEFAULT_ENTROPIES))),
            Lb::Mixed(n) => Ok(PacketLb::Mixed(n)),
            Lb::Adaptive => Ok(PacketLb::Adaptive),
            Lb::Eecmp(_) | Lb::Ucmp | Lb::Te => Err(format!(
                "--lb {lb}: the packet engine takes {}",
                PacketLb::MODES
            )),
        }
    }
}

impl From<PacketLb> for Lb {
    fn from(lb: PacketLb) -> Lb {
        match lb {
            PacketLb::Ecmp => Lb::Ecmp,
            PacketLb::Spray(n) => Lb::Spray(Some(n)),
            PacketLb::Mixed(n) => Lb::Mixed(n),
            PacketLb::Adaptive => Lb::Adaptive,
        }
    }
}

/// Sender congestion control.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cc {
    /// NSCC-family window control ([`nscc::Params`]).
    Nscc(nscc::Params),
    /// NSCC with parameters for the fabric: [`nscc::Params::for_path`] at the hosts' NIC
    /// rate and the base RTT of the longest path a flow of the matrix takes (its links'
    /// delays both ways, an MTU and an ACK serialized at each hop); the result's `config`
    /// shows the parameters chosen.
    NsccAuto,
    /// No congestion control: the NIC sends at line rate whatever the network does.
    LineRate,
    /// DCQCN ([`dcqcn`]): each flow paced at a rate cut on every congestion notification
    /// packet (CNP) its receiver returns for ECN-marked data (at most one per
    /// `cnp_interval_ps`), raised again by timer and byte counter.
    Dcqcn(dcqcn::Params),
    /// DCQCN with [`dcqcn::Params::for_line_rate`] at the hosts' NIC rate.
    DcqcnAuto,
    /// DCQCN with [`dcqcn::Params::htsim_steps`] at the hosts' NIC rate: htsim's rate
    /// increase steps, for runs set next to htsim's DCQCN.
    DcqcnHtsimAuto,
}

/// Everything the packet engine's model takes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Config {
    /// Largest packet on the wire, bytes (payload + header).
    pub mtu_bytes: u32,
    /// Header, and the size of ACKs, NACKs and trimmed packets, bytes.
    pub header_bytes: u32,
    /// The receiver acknowledges every this many payload bytes (0: every packet); a packet
    /// that asks for an ACK (the last of a window or of the flow, a retransmission) is
    /// acknowledged at once.
    pub ack_every_bytes: u32,
    /// Data-class queue per egress port, bytes.
    pub queue_bytes: u64,
    /// High-priority class per egress port, bytes.
    pub priority_queue_bytes: u64,
    /// ECN marking on dequeue, linear from 0 at the first to 1 at the second data-class
    /// occupancy, bytes; `None`: no marking.
    pub ecn_bytes: Option<(u64, u64)>,
    /// Marking probability at the second threshold (RED's `Pmax`; above it every packet is
    /// marked): 1 is the linear ramp htsim uses, DCQCN's switches use 0.01.
    pub ecn_max_probability: f64,
    /// Trim data packets that do not fit (else drop them).
    pub trim: bool,
    /// Load balancing.
    pub lb: PacketLb,
    /// Congestion control.
    pub cc: Cc,
    /// One propagation delay for every link, picoseconds (`None`: cable length at 5 ns/m).
    pub link_latency_ps: Option<u64>,
    /// Forwarding latency of each switch, picoseconds.
    pub switch_latency_ps: u64,
    /// NSCC: each flow takes its own path's base RTT and window (htsim's accurate base RTT
    /// per connection), the gains and target delay staying the network's; `false` (htsim's
    /// default): every flow takes the network's (the `Cc::Nscc` parameters as given).
    pub nscc_path_rtt: bool,
    /// Retransmission timeout, picoseconds: the floor; each flow's timer is at least twice
    /// its path's base round trip (a shorter one would fire on every packet of a long path).
    pub rto_ps: u64,
    /// Seed of every random choice (switch hash salts, entropy values, trim victims, ECN).
    pub seed: u64,
    /// Seed of the random draws alone (trim victims, ECN marks, entropy offsets, adaptive
    /// routing's ties), the paths staying `seed`'s (its switch hash salts): another value is
    /// another sample of the same network, which tells a result's noise from a change's
    /// effect. `None`: `seed`'s own draws ([`Config::draws`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draw_seed: Option<u64>,
    /// Stop at this simulated time, picoseconds (flows not done by then are reported as
    /// unfinished); `u64::MAX`: run until every flow is done.
    pub end_ps: u64,
    /// Priority flow control (IEEE 802.1Qbb) on the data class: `None`, a lossy fabric.
    pub pfc: Option<Pfc>,
    /// Receiver-driven admission (clear-to-send per chunk): `None`, senders need no leave.
    pub admission: Option<Admission>,
    /// The scheduled fabric of DSF zones (used only when a matrix crosses one; its
    /// settings are reported in [`PacketResult::dsf`], so the JSON of other runs is
    /// unchanged).
    #[serde(skip)]
    pub dsf: Dsf,
    /// Check at every event that the bytes hosts put on the wire equal those delivered,
    /// dropped, trimmed off and still in the network (by a scan of live packets: slow, for
    /// tests).
    #[serde(skip)]
    pub check_conservation: bool,
    /// Fast-forward steady states (the hybrid engine, [`FastForward`]); `None`: simulate
    /// every packet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fast_forward: Option<FastForward>,
    /// Parts the fabric is cut into, each simulated on its own with conservative
    /// synchronization, side by side on the cores (1: one engine for the whole fabric).
    /// A model setting: the result is the same at any thread count for a given number of
    /// parts, and differs from one part's as one seed's differs from another's
    /// (`partition.rs`). A DSF zone stays whole in one part. Triggers only where each fires
    /// and acts within one part; not with admission or fast-forwarding.
    #[serde(skip_serializing_if = "is_one")]
    pub partitions: u32,
}

impl Config {
    /// Whether a packet crosses a DSF fabric whole, as one cell ([`Dsf::cell_bytes`]): when
    /// fast-forwarding (the hybrid).
    pub fn dsf_whole_packets(&self) -> bool {
        self.fast_forward.is_some()
    }

    /// The seed the random draws start from: `seed`'s, mixed with `draw_seed` when given
    /// (so that `None` keeps every earlier run's draws).
    pub fn draws(&self) -> u64 {
        match self.draw_seed {
            None => self.seed,
            Some(d) => self.seed ^ mix(d ^ 0x6472_6177_7300),
        }
    }

    /// htsim's Ultra Ethernet regression parameters (see the crate's README section and
    /// `shared/scenarios/htsim-uec`): 4,150 B MTU, 64 B headers, ACK every 16,384 B,
    /// 178,450 B data queues with trimming, ECN between 37,350 and 145,250 B, 1 us per link
    /// and no switch latency, NSCC for 100 Gb/s and a 14.02272 us base RTT, minimum RTO
    /// 100.656 us, spraying over 128 entropy values with htsim's default "mixed" entropy
    /// feedback ([`PacketLb::Mixed`]).
    pub fn uec_htsim() -> Config {
        Config {
            mtu_bytes: 4150,
            header_bytes: 64,
            ack_every_bytes: 16_384,
            queue_bytes: 178_450,
            priority_queue_bytes: 2 * 178_450,
            ecn_bytes: Some((37_350, 145_250)),
            ecn_max_probability: 1.0,
            trim: true,
            lb: PacketLb::Mixed(128),
            cc: Cc::Nscc(nscc::Params::for_path(100_000_000_000, 14_022_720, 4150)),
            link_latency_ps: Some(1_000_000),
            switch_latency_ps: 0,
            rto_ps: 100_656_000,
            seed: 13,
            draw_seed: None,
            end_ps: u64::MAX,
            nscc_path_rtt: false,
            pfc: None,
            admission: None,
            dsf: Dsf::default(),
            check_conservation: false,
            fast_forward: None,
            partitions: 1,
        }
    }

    /// A RoCE fabric as Meta ran its 400G AI zones (Gangidi et al., "RDMA over Ethernet for
    /// Distributed Training at Meta Scale", SIGCOMM 2024): PFC on the data class and no
    /// congestion control (DCQCN off; line-rate senders), receiver-driven admission in the
    /// collective library (a clear-to-send per chunk), no trimming or ECN, per-flow ECMP,
    /// 4,096 B of payload per packet plus 64 B of headers, ACK every 16,384 B, and a
    /// retransmission timeout far above any pause (lossless: nothing to recover).
    pub fn roce() -> Config {
        Config {
            mtu_bytes: 4160,
            ecn_bytes: None,
            trim: false,
            lb: PacketLb::Ecmp,
            cc: Cc::LineRate,
            rto_ps: 10_000_000_000,
            pfc: Some(Pfc::default()),
            admission: Some(Admission::default()),
            ..Config::default()
        }
    }
}

/// Receiver-driven admission, as Meta's collective library does on its RoCE fabrics
/// (Gangidi et al., SIGCOMM 2024: a clear-to-send before each RDMA write, CTS packets in a
/// high-priority queue): a flow is cut into chunks; its sender may send a chunk's packets
/// only once the receiver's CTS for it arrived. Each receiving host lets at most `window`
/// chunks be granted and not yet received, over all the flows toward it, granting them
/// round robin among those flows. The receiver knows of a flow when it starts (a
/// collective's schedule is known at both ends); the first CTS takes the way back. The
/// chunk size and the window are not published: the defaults are assumptions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Admission {
    /// Bytes of payload a CTS clears.
    pub chunk_bytes: u64,
    /// Chunks a receiver has granted and not yet received, at most.
    pub window: u32,
}

impl Default for Admission {
    /// 512 KiB chunks, two outstanding per receiver (one in flight while the next CTS
    /// travels).
    fn default() -> Self {
        Admission {
            chunk_bytes: 512 << 10,
            window: 2,
        }
    }
}

/// A DSF zone as a scheduled fabric ([`dsf`]): cells and credits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Dsf {
    /// Largest cell, bytes: a packet crosses the fabric as `ceil(bytes / cell_bytes)` cells,
    /// the last one shorter; cell headers are not modelled (the fabric's speedup is there
    /// partly to carry them). 256 B is an assumption: Broadcom describes Jericho/Ramon cells
    /// as variable-size, up to a few hundred bytes, but publishes no figure for Jericho3.
    /// The packet engine's only: fast-forwarding (the hybrid, [`Config::fast_forward`]), a
    /// packet crosses the fabric as one cell. The credits keep the fabric's links from
    /// queueing, so the cells are a cost more than a queue: the whole packet holds its link
    /// for all its bytes and is across a hop when its cells would be, side by side on
    /// `min(cells, live links)` links. A tenth to a fifth of the events on DSF permutations,
    /// within about 2% of the cells (the README's hybrid section).
    pub cell_bytes: u32,
    /// One credit, bytes: what the egress port's scheduler grants a VOQ at a time (4 KB,
    /// an assumption of the same kind: credit sizes are configured, not published).
    pub credit_bytes: u32,
}

impl Default for Dsf {
    fn default() -> Self {
        Dsf {
            cell_bytes: 256,
            credit_bytes: 4096,
        }
    }
}

/// Priority flow control on the data class (IEEE 802.1Qbb): a switch counts, per ingress
/// link, the data bytes that came in over it and still wait in its egress queues. Above
/// `xoff_bytes` it sends the upstream port a PAUSE, which travels back over the link; the
/// upstream port then sends no data (its control class still goes) until a RESUME, sent when
/// the count falls to `xon_bytes`. The data that arrives meanwhile (what was on the wire and
/// in serialization when the PAUSE took effect) lands in the headroom above XOFF; what finds
/// the headroom full is dropped and counted. With PFC the egress data queues have no limit
/// of their own (`queue_bytes` is not applied): a lossless switch's buffer is its ingress
/// accounting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Pfc {
    /// Pause the upstream port above this many bytes per ingress link.
    pub xoff_bytes: u64,
    /// Resume it at or below this many.
    pub xon_bytes: u64,
    /// Headroom above XOFF per ingress link, bytes; `None`: for each link, what a PAUSE
    /// needs to take effect, `R x (2 x delay + response) + 2 MTU` (the headroom formula of
    /// the design-time `buffers` report, with the link's modelled one-way delay: cable and
    /// the far switch's forwarding latency).
    pub headroom_bytes: Option<u64>,
    /// From XOFF crossed to the upstream port's reaction, beyond the PAUSE frame's trip,
    /// picoseconds (the catalog's `pfc_response_ns`, 1 us, is the design-time value).
    pub response_ps: u64,
    /// Carve the headroom out of each switch's buffer (its model's HBM + SRAM): every live
    /// Ethernet or host port of the switch gets XOFF, and the rest is shared as headroom in
    /// proportion to each port's need (of `headroom_bytes`, or its own). A shallow switch on
    /// long links then holds less than the data on the wire when a PAUSE lands, and drops.
    pub buffer_limited: bool,
}

impl Default for Pfc {
    /// XOFF 200 KB, XON 180 KB (a few MTUs of hysteresis), headroom for each link's own
    /// delay, 1 us response.
    fn default() -> Self {
        Pfc {
            xoff_bytes: 200_000,
            xon_bytes: 180_000,
            headroom_bytes: None,
            response_ps: 1_000_000,
            buffer_limited: false,
        }
    }
}

impl Default for Config {
    /// The htsim-like defaults ([`Config::uec_htsim`]) with links at their cable delays, 1 us
    /// per switch (as the flow engine assumes), NSCC scaled to the fabric ([`Cc::NsccAuto`]),
    /// per-flow ECMP and seed 1.
    fn default() -> Self {
        Config {
            link_latency_ps: None,
            switch_latency_ps: 1_000_000,
            seed: 1,
            lb: PacketLb::Ecmp,
            cc: Cc::NsccAuto,
            ..Config::uec_htsim()
        }
    }
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// Why the packet engine cannot run a matrix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PacketError {
    /// The request or the fabric does not allow it; the message says why and what to do.
    #[error("{0}")]
    Invalid(String),
}

#[cfg(test)]
mod tests {
    use super::{Lb, PacketLb};

    #[test]
    fn load_balancing_spellings() {
        let packet = |s: &str| s.parse::<Lb>().ok().map(PacketLb::try_from);
        assert_eq!(packet("spray"), Some(Ok(PacketLb::Spray(128))));
        assert_eq!(packet("mixed:64"), Some(Ok(PacketLb::Mixed(64))));
        assert_eq!(packet("mixed:0"), None);
        assert_eq!(packet("spray:65537"), None);
        assert_eq!(packet("ecmp:4"), None);
        for refused in ["ucmp", "eecmp:4", "te"] {
            let e = packet(refused).unwrap().unwrap_err();
            assert!(e.contains("the packet engine takes ecmp, spray:N"), "{e}");
        }
        for lb in [
            PacketLb::Ecmp,
            PacketLb::Spray(16),
            PacketLb::Mixed(128),
            PacketLb::Adaptive,
        ] {
            assert_eq!(packet(&lb.name()), Some(Ok(lb)));
            assert_eq!(PacketLb::try_from(Lb::from(lb)), Ok(lb));
        }
    }
}
