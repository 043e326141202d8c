//! # aifabric-packet
//!
//! The packet-level engine: what the flow engine's ideal fluid cannot show (queues filling,
//! ECN and congestion-control transients, packets trimmed or dropped and retransmitted, the
//! tail of completion times), on aifabric's own fabric model and routes.
//!
//! A discrete-event simulator in integer picoseconds, single-threaded and deterministic by
//! seed ([`run`]):
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
//!   at once and everything outstanding after a retransmission timeout.
//!
//! Scale-up (NVLink) transfers are not modelled: every flow crosses the scale-out network.
//! DSF zones (VOQs, credits, cells) are refused with a clear error for now.

mod events;
pub mod nscc;
mod sim;
mod topo;

pub use sim::{run, MAX_PACKETS};

use serde::Serialize;

/// How switches pick among next hops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lb {
    /// Per-flow hash: one path per flow.
    Ecmp,
    /// Per-packet: the flow's hash and an entropy value chosen per packet out of N, over the
    /// next hops weighted by UCMP. The sender recycles the value of every packet acknowledged
    /// without an ECN mark (REPS, per packet: it remembers which value each packet took, so a
    /// coalesced ACK recycles all the packets it covers); otherwise it walks the N values
    /// round robin, skipping penalized ones.
    Spray(u32),
    /// As [`Lb::Spray`], with htsim's "mixed" feedback: one value per ACK, the one echoed
    /// by the ACK (the packet that triggered it), as htsim's Ultra Ethernet model feeds its
    /// load balancer. With an ACK every ~4 packets, three packets in four are not recycled.
    Mixed(u32),
    /// The next hop whose egress queue holds fewest bytes (ties by the flow's hash).
    Adaptive,
}

impl Lb {
    /// Parse `ecmp`, `spray:N` (`spray` is `spray:128`), `mixed:N` (`mixed` is `mixed:128`)
    /// or `adaptive`.
    pub fn parse(s: &str) -> Option<Lb> {
        match s {
            "ecmp" => Some(Lb::Ecmp),
            "adaptive" => Some(Lb::Adaptive),
            "spray" => Some(Lb::Spray(128)),
            "mixed" => Some(Lb::Mixed(128)),
            _ => {
                let (kind, n) = s.split_once(':')?;
                let n: u32 = n.parse().ok()?;
                if !(1..=65_536).contains(&n) {
                    return None;
                }
                match kind {
                    "spray" => Some(Lb::Spray(n)),
                    "mixed" => Some(Lb::Mixed(n)),
                    _ => None,
                }
            }
        }
    }

    /// Accepted spellings.
    pub const HELP: &'static str =
        "ecmp, spray:N (N entropy values, 1..=65536; spray = spray:128), \
         mixed:N (spray with htsim's one entropy per ACK; mixed = mixed:128) or adaptive";

    /// Name as parsed.
    pub fn name(self) -> String {
        match self {
            Lb::Ecmp => "ecmp".into(),
            Lb::Spray(n) => format!("spray:{n}"),
            Lb::Mixed(n) => format!("mixed:{n}"),
            Lb::Adaptive => "adaptive".into(),
        }
    }

    /// The number of entropy values of a sprayed mode (`spray` or `mixed`).
    pub fn entropies(self) -> Option<u32> {
        match self {
            Lb::Spray(n) | Lb::Mixed(n) => Some(n),
            Lb::Ecmp | Lb::Adaptive => None,
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
    /// Trim data packets that do not fit (else drop them).
    pub trim: bool,
    /// Load balancing.
    pub lb: Lb,
    /// Congestion control.
    pub cc: Cc,
    /// One propagation delay for every link, picoseconds (`None`: cable length at 5 ns/m).
    pub link_latency_ps: Option<u64>,
    /// Forwarding latency of each switch, picoseconds.
    pub switch_latency_ps: u64,
    /// Retransmission timeout, picoseconds.
    pub rto_ps: u64,
    /// Seed of every random choice (switch hash salts, entropy values, trim victims, ECN).
    pub seed: u64,
    /// Stop at this simulated time, picoseconds (flows not done by then are reported as
    /// unfinished); `u64::MAX`: run until every flow is done.
    pub end_ps: u64,
    /// Check at every event that the bytes hosts put on the wire equal those delivered,
    /// dropped, trimmed off and still in the network (by a scan of live packets: slow, for
    /// tests).
    #[serde(skip)]
    pub check_conservation: bool,
}

impl Config {
    /// htsim's Ultra Ethernet regression parameters (see the crate's README section and
    /// `shared/scenarios/htsim-uec`): 4,150 B MTU, 64 B headers, ACK every 16,384 B,
    /// 178,450 B data queues with trimming, ECN between 37,350 and 145,250 B, 1 us per link
    /// and no switch latency, NSCC for 100 Gb/s and a 14.02272 us base RTT, minimum RTO
    /// 100.656 us, spraying over 128 entropy values with htsim's default "mixed" entropy
    /// feedback ([`Lb::Mixed`]).
    pub fn uec_htsim() -> Config {
        Config {
            mtu_bytes: 4150,
            header_bytes: 64,
            ack_every_bytes: 16_384,
            queue_bytes: 178_450,
            priority_queue_bytes: 2 * 178_450,
            ecn_bytes: Some((37_350, 145_250)),
            trim: true,
            lb: Lb::Mixed(128),
            cc: Cc::Nscc(nscc::Params::for_path(100_000_000_000, 14_022_720, 4150)),
            link_latency_ps: Some(1_000_000),
            switch_latency_ps: 0,
            rto_ps: 100_656_000,
            seed: 13,
            end_ps: u64::MAX,
            check_conservation: false,
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
            lb: Lb::Ecmp,
            cc: Cc::NsccAuto,
            ..Config::uec_htsim()
        }
    }
}

/// Why the packet engine cannot run a matrix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PacketError {
    /// The request or the fabric does not allow it; the message says why and what to do.
    #[error("{0}")]
    Invalid(String),
}

/// Packet counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Data packets sent for the first time.
    pub data_new: u64,
    /// Data packets sent again (after a NACK or a timeout).
    pub data_retransmitted: u64,
    /// ACKs sent.
    pub acks: u64,
    /// NACKs sent.
    pub nacks: u64,
    /// Data packets trimmed to their header.
    pub trimmed: u64,
    /// Packets dropped (data with drop-tail, or any packet finding its class full).
    pub dropped: u64,
    /// Data packets marked ECN.
    pub ecn_marked: u64,
    /// Retransmission timeouts that resent something.
    pub timeouts: u64,
}

/// Queue occupancy of one tier's egress ports (those that carried traffic).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierQueues {
    /// Tier, as the flow engine names it (`gpu->rtsw`, `rtsw->ctsw`, ...).
    pub tier: String,
    /// Ports of the tier that carried packets.
    pub ports: u64,
    /// Largest occupancy of any of them (both classes), bytes.
    pub peak_bytes: u64,
    /// Time-averaged occupancy per port over the run, bytes.
    pub mean_bytes: f64,
}

/// Bytes a directed link carried.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkLoad {
    /// The link and direction, as the flow engine names it.
    pub link: String,
    /// Bytes sent over it (data, headers, ACKs and NACKs).
    pub bytes: u64,
    /// Largest queue at its egress port, bytes.
    pub peak_queue_bytes: u64,
}

/// What a traffic matrix does, packet by packet.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PacketResult {
    /// Flows.
    pub flows: u64,
    /// Payload bytes, all flows.
    pub bytes: u64,
    /// When the last flow completed, seconds.
    pub makespan_s: f64,
    /// Flow completion times (start to the sender holding the last ACK).
    pub fct: aifabric_engine::traffic::FctStats,
    /// The slowest flows, slowest first.
    pub slowest: Vec<aifabric_engine::traffic::SlowFlow>,
    /// Flows that never started (waiting on a trigger that never fired).
    pub never_started: u64,
    /// Flows not done when the run stopped at `Config::end_ps`.
    pub unfinished: u64,
    /// Packet counters.
    pub counters: Counters,
    /// Queue occupancy per tier.
    pub queues: Vec<TierQueues>,
    /// The links that carried most bytes, busiest first.
    pub busiest: Vec<LinkLoad>,
    /// Events processed.
    pub events: u64,
    /// The model's settings.
    pub config: Config,
}

#[cfg(test)]
mod tests {
    use super::Lb;

    #[test]
    fn load_balancing_spellings() {
        assert_eq!(Lb::parse("spray"), Some(Lb::Spray(128)));
        assert_eq!(Lb::parse("mixed:64"), Some(Lb::Mixed(64)));
        assert_eq!(Lb::parse("mixed:0"), None);
        assert_eq!(Lb::parse("spray:65537"), None);
        assert_eq!(Lb::parse("ecmp:4"), None);
        for lb in [Lb::Ecmp, Lb::Spray(16), Lb::Mixed(128), Lb::Adaptive] {
            assert_eq!(Lb::parse(&lb.name()), Some(lb));
        }
    }
}
