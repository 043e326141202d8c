//! The run's result: flow completion times, counters, queues per tier, the busiest links,
//! and what PFC and the DSF fabric did.

use crate::dsf::DsfTopo;
use crate::ids::HostId;
use crate::pfc::pfc_headroom_bytes;
use crate::sim::Sim;
use crate::{Config, Dsf, Pfc};
use aifabric_dataplane::{FctStats, Net, SlowFlow};
use aifabric_workload::traffic::TrafficMatrix;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Most busiest links reported.
const BUSIEST: usize = 10;

/// Most slowest flows reported.
const SLOWEST: usize = 10;

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
    /// Congestion notification packets sent (DCQCN).
    pub cnps: u64,
    /// Clear-to-send packets sent (receiver-driven admission).
    pub cts: u64,
}

impl Counters {
    /// Add `o`'s counts (the parts of a partitioned run).
    pub(crate) fn add(&mut self, o: &Counters) {
        self.data_new += o.data_new;
        self.data_retransmitted += o.data_retransmitted;
        self.acks += o.acks;
        self.nacks += o.nacks;
        self.trimmed += o.trimmed;
        self.dropped += o.dropped;
        self.ecn_marked += o.ecn_marked;
        self.timeouts += o.timeouts;
        self.cnps += o.cnps;
        self.cts += o.cts;
    }
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
    pub fct: FctStats,
    /// The slowest flows, slowest first.
    pub slowest: Vec<SlowFlow>,
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
    /// The longest retransmission timeout of any flow, seconds: `Config::rto_ps` is a
    /// floor, each flow's timer at least twice its path's base round trip.
    pub max_rto_s: f64,
    /// Pauses per tier (with PFC on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcResult>,
    /// What the scheduled fabric did (when the matrix crossed a DSF zone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dsf: Option<DsfResult>,
    /// What the hybrid engine fast-forwarded (with [`Config::fast_forward`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<crate::HybridStats>,
    /// How the run was cut into parts (with [`Config::partitions`] above 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<PartitionStats>,
    /// What a run takes beyond its bytes at rate when nothing queues, seconds: the longest
    /// base round trip of any flow's path (each hop's delay both ways, an MTU and an ACK
    /// serialized on it) less the one MTU its sender's NIC serializes, which the bytes at
    /// rate already count (the later hops' store and forward of the last packet stay).
    /// Not serialized.
    #[serde(skip)]
    pub max_base_latency_s: f64,
    /// The mean over the flows of their paths' delays one way (each hop's link and switch
    /// latency: what the flow engine's path latency counts), seconds. Not serialized.
    #[serde(skip)]
    pub mean_path_delay_s: f64,
    /// The model's settings.
    pub config: Config,
    /// Every finished flow's completion time, ascending, seconds (what `fct` summarizes).
    /// Not serialized.
    #[serde(skip)]
    pub fct_sorted_s: Vec<f64>,
    /// Each flow's completion time in the matrix's order, seconds (`None`: it did not
    /// finish). Not serialized.
    #[serde(skip)]
    pub fct_by_flow_s: Vec<Option<f64>>,
}

/// How a partitioned run went ([`Config::partitions`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionStats {
    /// Parts the fabric was cut into: as many as asked, or as many as the traffic's rack
    /// switches when fewer (a part holds at least one).
    pub parts: u32,
    /// The smallest delay of a link between parts (each window's length), seconds; `None`
    /// when no link joins two parts (the traffic stays within each, one window).
    pub lookahead_s: Option<f64>,
    /// Windows run.
    pub windows: u64,
    /// Packets and PFC frames that went from one part to another.
    pub messages: u64,
    /// Events each part processed (their balance bounds the speed-up).
    pub events_per_part: Vec<u64>,
}

/// What priority flow control did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PfcResult {
    /// PAUSE frames sent.
    pub pauses: u64,
    /// RESUME frames sent.
    pub resumes: u64,
    /// Data packets dropped because they found their ingress link's headroom full (a
    /// lossless fabric with enough headroom drops none).
    pub headroom_drops: u64,
    /// Largest ingress count of any link, bytes (XOFF plus what the headroom took).
    pub peak_ingress_bytes: u64,
    /// Switch ingress links (Ethernet) whose headroom is below what a PAUSE needs on them
    /// ([`pfc_headroom_bytes`] of their rate and delay): cut by the switch's buffer
    /// ([`Pfc::buffer_limited`]) or given too small ([`Pfc::headroom_bytes`]). What arrives
    /// after their PAUSE beyond it may be dropped.
    pub ports_short_of_headroom: u64,
    /// The smallest share of that need any such link's headroom is (1 when all fit).
    pub min_headroom_share: f64,
    /// The switch whose links got that smallest share (none when all fit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_headroom_switch: Option<String>,
    /// Paused egress ports whose XON is below what their link carries in a PAUSE round
    /// trip, `rate x (2 x delay + response)`: after each RESUME the data held downstream
    /// can drain before new data comes back, which costs throughput where nothing else
    /// feeds that switch's egress (one long link into a receiver), and nothing where other
    /// links do (an incast over many).
    pub paused_ports_xon_below_round_trip: u64,
    /// The largest such round trip's bytes: an XON (and XOFF above it, within the buffer)
    /// of about this much keeps those ports busy.
    pub max_round_trip_bytes: u64,
    /// Per tier, the egress ports that were paused.
    pub tiers: Vec<TierPauses>,
}

/// The pauses one tier's egress ports took.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierPauses {
    /// Tier, as the flow engine names it (`gpu->rtsw` is the NICs).
    pub tier: String,
    /// Ports of the tier that were paused at least once.
    pub ports_paused: u64,
    /// PAUSE frames they received.
    pub pauses: u64,
    /// Time paused, summed over those ports, seconds.
    pub paused_s: f64,
    /// Longest total time one port of the tier was paused, seconds.
    pub max_paused_s: f64,
}

/// What the scheduled fabric of the DSF zones did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DsfResult {
    /// The model's cell and credit sizes.
    pub settings: Dsf,
    /// Packets that crossed a zone's fabric (entered a VOQ).
    pub packets: u64,
    /// Credit requests (and updates) the VOQs sent to egress schedulers.
    pub requests: u64,
    /// Grants the egress schedulers issued.
    pub grants: u64,
    /// Bytes of credit granted.
    pub credits_granted_bytes: u64,
    /// Bytes the VOQs sent into the fabric (granted = sent once the VOQs are empty).
    pub sent_bytes: u64,
    /// Bytes still queued in VOQs when the run stopped.
    pub queued_bytes: u64,
    /// Cells sent into the fabric.
    pub cells_sent: u64,
    /// Cells reassembled at egress interface nodes.
    pub cells_reassembled: u64,
    /// Largest VOQ of each interface-node role, bytes.
    pub voqs: Vec<TierVoqs>,
    /// Fabric links per tier: bytes and utilization over the run.
    pub fabric: Vec<FabricTier>,
}

/// The VOQs of one role of interface node (`rdsw`, `edsw`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierVoqs {
    /// Role of the ingress interface node.
    pub tier: String,
    /// VOQs that held a packet.
    pub voqs: u64,
    /// Largest occupancy of any of them, bytes.
    pub peak_bytes: u64,
}

/// One tier of fabric links: the directed links that carried cells.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FabricTier {
    /// Tier, as the flow engine names it (`rdsw-fdsw`, `fdsw-sdsw`, ...).
    pub tier: String,
    /// Directed links of the tier that carried cells.
    pub links: u64,
    /// Bytes of cells they carried.
    pub bytes: u64,
    /// Mean utilization of those links over the run (bytes / (links x capacity x run
    /// time)).
    pub mean_utilization: f64,
    /// Utilization of the busiest link of the tier over the run.
    pub max_utilization: f64,
}

impl Sim<'_> {
    /// The run's result, at its end.
    pub(crate) fn result(&mut self, net: &Net<'_>, tm: &TrafficMatrix) -> PacketResult {
        let end = self.now;
        for st in &mut self.ports {
            st.account(end);
        }
        let mut fcts: Vec<(u64, usize)> = Vec::new();
        let mut never = 0u64;
        let mut unfinished = 0u64;
        for (k, f) in self.flows.iter().enumerate() {
            if !f.started {
                never += 1;
            } else if !f.done {
                unfinished += 1;
            } else {
                fcts.push((f.finish_ps - f.start_ps, k));
            }
        }
        let s = |ps: u64| ps as f64 * 1e-12;
        let mut fct_by_flow_s = vec![None; self.flows.len()];
        for &(ps, k) in &fcts {
            fct_by_flow_s[k] = Some(s(ps));
        }
        let mut sorted = fcts.clone();
        sorted.sort_unstable();
        let fct_sorted_s: Vec<f64> = sorted.iter().map(|x| s(x.0)).collect();
        let fct = FctStats::of_sorted(&fct_sorted_s);
        let mut slow = fcts.clone();
        slow.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let gpus_name = |h: HostId| net.f.device_name(self.topo.host_device[h.idx()]);
        let slowest = slow
            .iter()
            .take(SLOWEST)
            .map(|&(ps, k)| {
                let f = &self.flows[k];
                SlowFlow {
                    id: f.id,
                    pair: format!("{} -> {}", gpus_name(f.src), gpus_name(f.dst)),
                    bytes: f.bytes,
                    start_s: s(f.start_ps),
                    fct_s: s(ps),
                }
            })
            .collect();
        let makespan = self
            .flows
            .iter()
            .filter(|f| f.done)
            .map(|f| f.finish_ps)
            .max()
            .unwrap_or(0);
        // Queues per tier, over the ports that carried something.
        let mut tiers: Vec<(String, u64, u64, u128)> = Vec::new();
        let mut index: FxHashMap<String, usize> = FxHashMap::default();
        for (p, st) in self.ports.iter().enumerate() {
            if st.sent == 0 {
                continue;
            }
            let name = net.resource_tier(self.topo.ports[p].resource);
            let k = *index.entry(name.clone()).or_insert_with(|| {
                tiers.push((name, 0, 0, 0));
                tiers.len() - 1
            });
            tiers[k].1 += 1;
            tiers[k].2 = tiers[k].2.max(st.peak);
            tiers[k].3 += st.area;
        }
        tiers.sort_by(|a, b| a.0.cmp(&b.0));
        let queues = tiers
            .into_iter()
            .map(|(tier, ports, peak, area)| TierQueues {
                tier,
                ports,
                peak_bytes: peak,
                mean_bytes: if end > 0 {
                    area as f64 / end as f64 / ports as f64
                } else {
                    0.0
                },
            })
            .collect();
        // The busiest links (ties by port order, which follows first use).
        let mut by_load: Vec<(u64, usize)> = self
            .ports
            .iter()
            .enumerate()
            .filter(|(_, st)| st.sent > 0)
            .map(|(p, st)| (st.sent, p))
            .collect();
        by_load.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let busiest = by_load
            .iter()
            .take(BUSIEST)
            .map(|&(bytes, p)| LinkLoad {
                link: net.resource_name(self.topo.ports[p].resource),
                bytes,
                peak_queue_bytes: self.ports[p].peak,
            })
            .collect();
        let pfc = self.cfg.pfc.map(|p| self.pfc_result(net, end, &p));
        let dsf = self.topo.dsf.as_ref().map(|d| self.dsf_result(net, d, end));
        PacketResult {
            pfc,
            dsf,
            busiest,
            flows: self.flows.len() as u64,
            bytes: tm.flows.iter().map(|f| f.bytes).sum(),
            makespan_s: s(makespan),
            fct,
            slowest,
            never_started: never,
            unfinished,
            counters: self.counters.clone(),
            queues,
            events: self.events_done,
            max_rto_s: s(self
                .flows
                .iter()
                .map(|f| f.rto_ps)
                .max()
                .unwrap_or(self.cfg.rto_ps)),
            hybrid: self.hybrid_stats(),
            partitions: None,
            max_base_latency_s: s(self.max_base_latency_ps),
            mean_path_delay_s: s(self.mean_path_delay_ps),
            config: self.cfg.clone(),
            fct_sorted_s,
            fct_by_flow_s,
        }
    }

    /// Pauses per tier, the frames and the drops.
    fn pfc_result(&self, net: &Net<'_>, end: u64, pfc: &Pfc) -> PfcResult {
        let mut tiers: Vec<TierPauses> = Vec::new();
        let (mut xon_short, mut round_trip_max) = (0u64, 0u64);
        for (p, st) in self.pfc_ports.iter().enumerate() {
            if st.pauses_received == 0 {
                continue;
            }
            let port = &self.topo.ports[p];
            let round_trip = pfc_headroom_bytes(port.rate_bps, port.delay_ps, pfc.response_ps, 0);
            if pfc.xon_bytes < round_trip {
                xon_short += 1;
                round_trip_max = round_trip_max.max(round_trip);
            }
            let paused = st.paused_ps
                + if self.ports[p].paused {
                    end - st.paused_since_ps
                } else {
                    0
                };
            let paused_s = paused as f64 * 1e-12;
            let tier = net.resource_tier(self.topo.ports[p].resource);
            let t = match tiers.iter().position(|t| t.tier == tier) {
                Some(k) => &mut tiers[k],
                None => {
                    tiers.push(TierPauses {
                        tier,
                        ports_paused: 0,
                        pauses: 0,
                        paused_s: 0.0,
                        max_paused_s: 0.0,
                    });
                    tiers.last_mut().expect("just pushed")
                }
            };
            t.ports_paused += 1;
            t.pauses += st.pauses_received;
            t.paused_s += paused_s;
            t.max_paused_s = t.max_paused_s.max(paused_s);
        }
        tiers.sort_by(|a, b| a.tier.cmp(&b.tier));
        PfcResult {
            pauses: self.pfc.pauses,
            resumes: self.pfc.resumes,
            headroom_drops: self.pfc.drops,
            peak_ingress_bytes: self
                .pfc_ports
                .iter()
                .map(|st| st.ingress_peak)
                .max()
                .unwrap_or(0),
            ports_short_of_headroom: self.pfc.headroom_short,
            min_headroom_share: self.pfc.headroom_share_min,
            min_headroom_switch: self.pfc.headroom_min_device.map(|d| net.f.device_name(d)),
            paused_ports_xon_below_round_trip: xon_short,
            max_round_trip_bytes: round_trip_max,
            tiers,
        }
    }

    /// Credits, cells, VOQ peaks per role and fabric-link utilization per tier.
    fn dsf_result(&self, net: &Net<'_>, d: &DsfTopo, end: u64) -> DsfResult {
        let mut voqs: Vec<TierVoqs> = Vec::new();
        for q in &self.fabric.voqs {
            let tier = net.f.device(q.ingress).role.as_str().to_string();
            let t = match voqs.iter().position(|t| t.tier == tier) {
                Some(k) => &mut voqs[k],
                None => {
                    voqs.push(TierVoqs {
                        tier,
                        voqs: 0,
                        peak_bytes: 0,
                    });
                    voqs.last_mut().expect("just pushed")
                }
            };
            t.voqs += 1;
            t.peak_bytes = t.peak_bytes.max(q.peak);
        }
        voqs.sort_by(|a, b| a.tier.cmp(&b.tier));
        // Per tier: links, bytes, capacity (bits/s) and the busiest link's utilization.
        let mut tiers: Vec<(String, u64, u64, u128, f64)> = Vec::new();
        let secs = end as f64 * 1e-12;
        for &p in &d.fabric_ports {
            let port = self.topo.ports[p.idx()];
            if self.ports[p.idx()].sent == 0 {
                continue;
            }
            let tier = net.resource_tier(port.resource);
            let k = match tiers.iter().position(|t| t.0 == tier) {
                Some(k) => k,
                None => {
                    tiers.push((tier, 0, 0, 0, 0.0));
                    tiers.len() - 1
                }
            };
            let sent = self.ports[p.idx()].sent;
            let t = &mut tiers[k];
            t.1 += 1;
            t.2 += sent;
            t.3 += u128::from(port.rate_bps);
            if secs > 0.0 {
                t.4 = t.4.max(sent as f64 * 8.0 / (port.rate_bps as f64 * secs));
            }
        }
        tiers.sort_by(|a, b| a.0.cmp(&b.0));
        let s = &self.fabric.stats;
        DsfResult {
            settings: self.cfg.dsf,
            packets: s.packets,
            requests: s.requests,
            grants: s.grants,
            credits_granted_bytes: s.granted,
            sent_bytes: s.sent,
            queued_bytes: self.fabric.voqs.iter().map(|q| q.bytes).sum(),
            cells_sent: s.cells_sent,
            cells_reassembled: s.cells_reassembled,
            voqs,
            fabric: tiers
                .into_iter()
                .map(|(tier, links, bytes, bps, max)| FabricTier {
                    tier,
                    links,
                    bytes,
                    mean_utilization: if secs > 0.0 && bps > 0 {
                        bytes as f64 * 8.0 / (bps as f64 * secs)
                    } else {
                        0.0
                    },
                    max_utilization: max,
                })
                .collect(),
        }
    }
}
