//! The packet engine's flags: which engine runs, and its model.

use super::engine_parser;

/// Which engine runs a traffic matrix, a collective or a job, and the packet engine's model
/// (their own group in the help: they apply to `--engine packet|both|hybrid` only).
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Packet engine (--engine packet, both or hybrid)")]
pub(crate) struct PacketArgs {
    /// flow: max-min fair fluid (fast, no queues); packet: packets through output-queued
    /// switches with ECN, trimming and sender congestion control; both: the two side by side
    /// with their ratio per completion-time percentile; hybrid: the packet engine jumping
    /// over steady states (each flow at its measured rate where no flow's rate changes;
    /// faster on long flows, within a few percent of packet). `collective` and `job` run
    /// flow, packet or hybrid: each distinct phase (one step of every group) packet by
    /// packet once, its repeats reused; `cluster` and `plan` time each job so, on the
    /// shares of the links it shares that the flow engine gives it.
    #[arg(long, default_value = "flow", value_parser = engine_parser())]
    pub engine: aifabric::Engine,
    /// Every model parameter from a preset; `uec-htsim` is htsim's Ultra
    /// Ethernet regression runs (100 Gb/s, 1 us links, 4,150 B MTU, 178,450 B queues with
    /// trimming, ECN 37,350:145,250, NSCC, mixed:128, seed 13); `roce` is a RoCE fabric as
    /// Meta ran its 400G AI zones (PFC, line-rate senders, receiver-driven admission, no ECN
    /// or trimming, ECMP, 4,160 B MTU). Flags given override it.
    #[arg(long, value_name = "uec-htsim|roce")]
    pub preset: Option<aifabric::packet::Preset>,
    /// nscc (default), dcqcn (rate control on ECN, for lossless RoCE fabrics;
    /// the paper's rate steps), dcqcn-htsim (htsim's larger steps) or line-rate (no
    /// congestion control).
    #[arg(long, value_name = "nscc|dcqcn|dcqcn-htsim|line-rate")]
    pub cc: Option<aifabric::packet::CcChoice>,
    /// NSCC: network (every flow takes the longest path's base RTT and window,
    /// htsim's default) or path (each flow its own path's, htsim's accurate base RTT; the
    /// gains and target delay stay the network's).
    #[arg(long, value_name = "network|path")]
    pub nscc_base_rtt: Option<aifabric::packet::BaseRtt>,
    /// MTU on the wire, bytes (default 4150).
    #[arg(long, value_name = "B")]
    pub mtu: Option<u32>,
    /// Data queue per switch port, bytes (default 178450).
    #[arg(long, value_name = "B")]
    pub queue_bytes: Option<u64>,
    /// ECN marking between MIN and MAX bytes of queue (probability linear to
    /// PMAX at MAX, 1 above; PMAX defaults to 1), or off (default 37350:145250).
    #[arg(long, value_name = "MIN:MAX[:PMAX]|off")]
    pub ecn: Option<aifabric::packet::Ecn>,
    /// Trim packets that do not fit to their header (the default).
    #[arg(long, conflicts_with = "drop_tail")]
    pub trim: bool,
    /// Drop packets that do not fit (recovered by timeout).
    #[arg(long)]
    pub drop_tail: bool,
    /// The receiver ACKs every this many bytes, 0 every packet (default 16384).
    #[arg(long, value_name = "B")]
    pub ack_bytes: Option<u32>,
    /// One latency for every link, microseconds (default: cable length at
    /// 5 ns/m).
    #[arg(long, value_name = "US")]
    pub link_latency_us: Option<f64>,
    /// Retransmission timeout, microseconds (default 100.656); a floor: each
    /// flow's timer is at least twice its path's base round trip.
    #[arg(long, value_name = "US")]
    pub rto_us: Option<f64>,
    /// Stop at this simulated time, microseconds; flows not done by then are
    /// reported unfinished (default: run until every flow is done).
    #[arg(long, value_name = "US")]
    pub end_us: Option<f64>,
    /// Priority flow control on the data class: on (XOFF 200000, XON 180000
    /// bytes per ingress link), XOFF:XON in bytes, or off (default off; on with --preset roce).
    #[arg(long, value_name = "on|off|XOFF:XON")]
    pub pfc: Option<aifabric::packet::PfcSetting>,
    /// PFC headroom above XOFF per ingress link: auto (each link's rate x
    /// (2 x delay + response) + 2 MTU), buffer (that need, cut to what each switch's HBM +
    /// SRAM holds once every port has its XOFF) or bytes; too little and data is dropped
    /// (counted).
    #[arg(long, value_name = "auto|buffer|B")]
    pub pfc_headroom: Option<aifabric::packet::Headroom>,
    /// Receiver-driven admission (a clear-to-send per chunk, as Meta's
    /// collective library on RoCE): on (524288-byte chunks, 2 outstanding per receiver),
    /// CHUNK:WINDOW, or off (default off; on with --preset roce).
    #[arg(long, value_name = "on|off|CHUNK:WINDOW")]
    pub admission: Option<aifabric::packet::AdmissionSetting>,
    /// DSF zones: largest cell a packet is cut into, bytes (default 256, an
    /// assumption: no Jericho3 figure is published). The packet engine's: the hybrid
    /// crosses the fabric in whole packets.
    #[arg(long, value_name = "B")]
    pub dsf_cell_bytes: Option<u32>,
    /// DSF zones: bytes one credit from an egress scheduler clears (default
    /// 4096, an assumption).
    #[arg(long, value_name = "B")]
    pub dsf_credit_bytes: Option<u32>,
    /// Cut the fabric into N parts simulated side by side on the cores (default 1): the
    /// same result at any thread count for a given N, as valid as one part's but not the
    /// same sample (a DSF zone stays whole). A matrix's triggers must fire and act within
    /// one part (a host's flow waiting on what it received: a ring's steps); not with
    /// admission or --engine hybrid (a collective or a job at --engine packet is cut).
    #[arg(long, value_name = "N")]
    pub partitions: Option<u32>,
    /// Seed of the random draws alone (trim victims, ECN marks, entropy offsets, adaptive
    /// routing's ties), the paths staying those of --seed: each value is another sample of
    /// the same network, to tell a result's noise from a change's effect (default: --seed's
    /// own draws).
    #[arg(long, value_name = "S")]
    pub draw_seed: Option<u64>,
}

impl PacketArgs {
    /// The packet-engine flags given, as spelled on the command line.
    pub(crate) fn given(&self) -> Vec<&'static str> {
        [
            ("--preset", self.preset.is_some()),
            ("--cc", self.cc.is_some()),
            ("--nscc-base-rtt", self.nscc_base_rtt.is_some()),
            ("--mtu", self.mtu.is_some()),
            ("--queue-bytes", self.queue_bytes.is_some()),
            ("--ecn", self.ecn.is_some()),
            ("--trim", self.trim),
            ("--drop-tail", self.drop_tail),
            ("--ack-bytes", self.ack_bytes.is_some()),
            ("--link-latency-us", self.link_latency_us.is_some()),
            ("--rto-us", self.rto_us.is_some()),
            ("--end-us", self.end_us.is_some()),
            ("--pfc", self.pfc.is_some()),
            ("--pfc-headroom", self.pfc_headroom.is_some()),
            ("--admission", self.admission.is_some()),
            ("--dsf-cell-bytes", self.dsf_cell_bytes.is_some()),
            ("--dsf-credit-bytes", self.dsf_credit_bytes.is_some()),
            ("--partitions", self.partitions.is_some()),
            ("--draw-seed", self.draw_seed.is_some()),
        ]
        .into_iter()
        .filter(|x| x.1)
        .map(|x| x.0)
        .collect()
    }
}
