//! Before the event loop: the request checked, the fabric's ports and tables built, every
//! automatic choice resolved (congestion control's parameters, NSCC's per path, each flow's
//! timer) and the flows laid out.

use crate::cc::dcqcn::{self, DcqcnFlow};
use crate::cc::line_rate::LineRate;
use crate::cc::nscc::{self, NsccFlow};
use crate::cc::{CcTable, FlowCc};
use crate::cells::Fabric;
use crate::event::Event;
use crate::events::Events;
use crate::flow::{Flow, FlowKey, MAX_PENALIZED};
use crate::forward::{Forward, WINDOW_RTTS};
use crate::host::Host;
use crate::ids::{FlowId, HostId};
use crate::packet::Packets;
use crate::port::PortState;
use crate::sim::{Sim, MAX_PACKETS};
use crate::topo::Topo;
use crate::trigger::Triggers;
use crate::{Cc, Config, Counters, PacketError, PacketLb};
use aifabric_dataplane::{mix, Net};
use aifabric_model::DeviceId;
use aifabric_workload::traffic::{Start, TrafficMatrix};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Check the request, build the topology and resolve the configuration's automatic
/// choices: the topology and the configuration the run takes (which its result shows).
pub(crate) fn prepare(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    gpus: &[DeviceId],
    cfg: &Config,
) -> Result<(Topo, Config), PacketError> {
    if cfg.header_bytes == 0 {
        // Control packets and trimmed headers are this size: every packet has bytes (a
        // port that sent none was not used).
        return Err(PacketError::Invalid(
            "header_bytes 0: a packet's header must have bytes (the presets use 64)".into(),
        ));
    }
    if cfg.mtu_bytes <= cfg.header_bytes {
        return Err(PacketError::Invalid(format!(
            "--mtu {}: must exceed the {} B header",
            cfg.mtu_bytes, cfg.header_bytes
        )));
    }
    if (cfg.queue_bytes) < u64::from(cfg.mtu_bytes) {
        return Err(PacketError::Invalid(format!(
            "--queue-bytes {}: a queue must hold at least one MTU ({} B)",
            cfg.queue_bytes, cfg.mtu_bytes
        )));
    }
    if let Some(pfc) = cfg.pfc {
        // Below one packet, an empty ingress could never take one: every packet would be
        // dropped and resent for ever.
        if pfc.xoff_bytes < u64::from(cfg.mtu_bytes) {
            return Err(PacketError::Invalid(format!(
                "--pfc {}:{}: XOFF must hold at least one packet ({} B MTU)",
                pfc.xoff_bytes, pfc.xon_bytes, cfg.mtu_bytes
            )));
        }
    }
    if let Some(ff) = cfg.fast_forward {
        if cfg.admission.is_some() {
            // Admission clears a flow's packets chunk by chunk: dropping unsent packets
            // would leave chunks that never complete.
            return Err(PacketError::Invalid(
                "the hybrid engine does not fast-forward receiver-driven admission (its \
                 chunks count the flow's packets): use --engine packet, or --admission off"
                    .into(),
            ));
        }
        if !(ff.tolerance.is_finite() && ff.tolerance >= 0.0) || ff.steady_windows < 2 {
            return Err(PacketError::Invalid(format!(
                "fast-forward: tolerance {} and steady windows {}: give a tolerance of 0 or \
                 more and at least 2 windows",
                ff.tolerance, ff.steady_windows
            )));
        }
    }
    if let Some((lo, hi)) = cfg.ecn_bytes {
        if lo >= hi {
            return Err(PacketError::Invalid(format!(
                "--ecn {lo}:{hi}: the first threshold must be below the second"
            )));
        }
    }
    if (gpus.len() as u64) < u64::from(tm.nodes) {
        return Err(PacketError::Invalid(format!(
            "the matrix has {} nodes but {} GPUs were placed",
            tm.nodes,
            gpus.len()
        )));
    }
    // Hosts: the GPUs the matrix names, in node order.
    let hosts: Vec<DeviceId> = gpus[..tm.nodes as usize].to_vec();
    let pairs = pairs(tm)?;
    let topo = Topo::build(
        net,
        &hosts,
        &pairs,
        cfg.lb,
        cfg.link_latency_ps,
        cfg.switch_latency_ps,
    )?;
    let cc = match cfg.cc {
        Cc::NsccAuto => Cc::Nscc(auto_params(&topo, &pairs, cfg)),
        Cc::DcqcnAuto => Cc::Dcqcn(dcqcn::Params::for_line_rate(hosts_nic_rate(&topo))),
        Cc::DcqcnHtsimAuto => Cc::Dcqcn(dcqcn::Params::htsim_steps(hosts_nic_rate(&topo))),
        cc @ (Cc::Nscc(_) | Cc::LineRate | Cc::Dcqcn(_)) => cc,
    };
    Ok((topo, Config { cc, ..cfg.clone() }))
}

/// The matrix's (source, destination) hosts, flow by flow.
fn pairs(tm: &TrafficMatrix) -> Result<Vec<(u32, u32)>, PacketError> {
    let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(tm.flows.len());
    for fl in &tm.flows {
        if fl.src == fl.dst {
            return Err(PacketError::Invalid(format!(
                "flow {}: {} sends to itself; drop the line",
                fl.id, fl.src
            )));
        }
        // The clock adds the run's durations to a start: past the model's input bound
        // (10^18 ps) a sum could wrap and the run would end before it began.
        if let Start::AtPs(t) = fl.start {
            if t > aifabric_model::time::MAX_INPUT_PS {
                return Err(PacketError::Invalid(format!(
                    "flow {}: start {t} ps is past the latest start, {} ps (about 11.6 days); \
                     give an earlier start",
                    fl.id,
                    aifabric_model::time::MAX_INPUT_PS
                )));
            }
        }
        pairs.push((fl.src, fl.dst));
    }
    Ok(pairs)
}

/// Per switch of `topo` (compact index), the salt of its hash under `cfg`'s seed.
pub(crate) fn salts(topo: &Topo, cfg: &Config) -> Vec<u64> {
    (0..topo.switches as u64)
        .map(|k| mix(cfg.seed ^ mix(k + 1)))
        .collect()
}

/// The engine for matrix `tm` on `topo` under the resolved `cfg` (every flow under `law`
/// when given, else the law `cfg.cc` names), its flows' starts scheduled.
pub(crate) fn build<'a>(
    net: &Net<'_>,
    tm: &TrafficMatrix,
    topo: &'a Topo,
    cfg: &'a Config,
    law: Option<FlowCc>,
) -> Result<Sim<'a>, PacketError> {
    let payload = u64::from(cfg.mtu_bytes - cfg.header_bytes);
    // NSCC: the network's parameters, and with `nscc_path_rtt` one set per path base RTT.
    let mut nscc_params: Vec<nscc::Params> = match cfg.cc {
        Cc::Nscc(p) => vec![p],
        _ => Vec::new(),
    };
    // Keyed by (base RTT, NIC rate): the window is that path's BDP.
    let mut nscc_of: FxHashMap<(u64, u64), u32> = FxHashMap::default();
    // Every packet is at least one event on each hop: refuse what would take hours (and
    // tens of bytes of state per packet of the flows running) before allocating anything.
    let total: u64 = tm.flows.iter().map(|f| f.bytes.div_ceil(payload)).sum();
    if total > MAX_PACKETS {
        return Err(PacketError::Invalid(format!(
            "the matrix makes {total} packets of {payload} B, over the limit of {MAX_PACKETS} \
             (each packet is at least 2 events per hop: billions of events, hours at the engine's \
             3-15M events/s on 2 cores); use smaller flows or fewer of them, \
             or the flow engine (--engine flow)"
        )));
    }
    let mut flows = Vec::with_capacity(tm.flows.len());
    // Per (source rack, destination rack): the flow's timer and its NSCC parameters.
    let mut path_of: FxHashMap<(u32, u32), (u64, u32, u64)> = FxHashMap::default();
    // The longest base round trip of any flow's path (the hybrid's monitor window).
    let mut worst_rtt = 0u64;
    // And the longest less the first packet's serialization at its sender's NIC.
    let mut worst_latency = 0u64;
    // The flows' paths' delays one way, summed.
    let mut delays_ps = 0u128;
    for (k, fl) in tm.flows.iter().enumerate() {
        let (src, dst) = (HostId::new(fl.src), HostId::new(fl.dst));
        let dest = |h: HostId| topo.host_dest[h.idx()].expect("a destination").get();
        let key = (dest(src), dest(dst));
        let (rto_ps, nscc, delay_ps) = *path_of.entry(key).or_insert_with(|| {
            let base = base_path_ps(topo, src, dst, cfg);
            let rtt = base.rtt_ps;
            worst_rtt = worst_rtt.max(rtt);
            let nic = topo.ports[topo.host_up[src.idx()].idx()].serialize_ps(cfg.mtu_bytes);
            worst_latency = worst_latency.max(rtt.saturating_sub(nic));
            let nscc = match cfg.cc {
                Cc::Nscc(p) if cfg.nscc_path_rtt => {
                    let rate = topo.ports[topo.host_up[src.idx()].idx()].rate_bps;
                    *nscc_of.entry((rtt, rate)).or_insert_with(|| {
                        nscc_params.push(p.for_peer(rate, rtt));
                        nscc_params.len() as u32 - 1
                    })
                }
                _ => 0,
            };
            (cfg.rto_ps.max(2 * rtt), nscc, base.delay_ps)
        });
        delays_ps += u128::from(delay_ps);
        let packets = fl.bytes.div_ceil(payload);
        if packets > u64::from(u32::MAX / 2) {
            return Err(PacketError::Invalid(format!(
                "flow {}: {} bytes is too many packets for one flow",
                fl.id, fl.bytes
            )));
        }
        let cc = match (law, cfg.cc) {
            (Some(law), _) => law,
            (None, Cc::Nscc(_)) => FlowCc::Nscc(NsccFlow {
                state: nscc::State::new(&nscc_params[nscc as usize]),
                params: nscc,
            }),
            (None, Cc::Dcqcn(p)) => FlowCc::Dcqcn(DcqcnFlow {
                state: dcqcn::State::new(&p, 0),
                next_send_ps: 0,
                cnp: dcqcn::CnpPacer::new(),
            }),
            (None, Cc::LineRate) => FlowCc::LineRate(LineRate),
            (None, Cc::NsccAuto | Cc::DcqcnAuto | Cc::DcqcnHtsimAuto) => {
                unreachable!("resolved by `prepare`")
            }
        };
        flows.push(Flow {
            id: fl.id,
            src,
            dst,
            bytes: fl.bytes,
            packets: packets as u32,
            skipped: 0,
            start_ps: 0,
            started: false,
            done: false,
            finish_ps: 0,
            done_trigger: fl.done_trigger,
            recv_trigger: fl.recv_trigger,
            next_new: 0,
            state: Vec::new(),
            acked: 0,
            retx: VecDeque::new(),
            in_flight_bytes: 0,
            cc,
            sent_ps: Vec::new(),
            ev: Vec::new(),
            sends: VecDeque::new(),
            rto_armed: false,
            rto_ps,
            rng: mix(cfg.draws() ^ mix(fl.id ^ (k as u64) << 32)),
            good: VecDeque::new(),
            penalty: match cfg.lb {
                PacketLb::Spray(n) | PacketLb::Mixed(n) if n <= MAX_PENALIZED => {
                    vec![0; n as usize]
                }
                _ => Vec::new(),
            },
            ev_next: u32::MAX,
            ev_offset: 0,
            got: Vec::new(),
            received: 0,
            pending: Vec::new(),
            pending_bytes: 0,
            pending_ecn: 0,
            ack_timer: false,
            cleared: if cfg.admission.is_some() { 0 } else { u32::MAX },
            chunks_granted: 0,
            chunks_done: 0,
        });
    }
    let paced = flows.iter().any(|f| f.cc.next_send_ps().is_some());
    let dcqcn = match cfg.cc {
        Cc::Dcqcn(p) => Some(p),
        _ => None,
    };
    let n_hosts = topo.host_up.len();
    let mut sim = Sim {
        cfg,
        topo,
        now: 0,
        events: Events::new(),
        packets: Packets::default(),
        ports: topo
            .ports
            .iter()
            .map(|&port| PortState::new(port))
            .collect(),
        pfc_ports: Vec::new(),
        keys: flows.iter().map(FlowKey::from).collect(),
        flows,
        hosts: vec![Host::default(); n_hosts],
        receivers: vec![Default::default(); n_hosts],
        salts: salts(topo, cfg),
        cc: CcTable {
            nscc: nscc_params,
            dcqcn,
            paced,
        },
        rng: mix(cfg.draws() ^ 0x7061_636b_6574),
        counters: Counters::default(),
        ledger: Default::default(),
        triggers: Triggers {
            kinds: tm.triggers.clone(),
            ..Triggers::default()
        },
        pfc: Default::default(),
        fabric: match &topo.dsf {
            Some(d) => Fabric::new(topo.ports.len(), &d.table),
            None => Fabric::default(),
        },
        done_flows: 0,
        events_done: 0,
        forward: Forward::default(),
        max_base_latency_ps: worst_latency,
        mean_path_delay_ps: (delays_ps / tm.flows.len().max(1) as u128) as u64,
        ack_delay_ps: cfg.rto_ps / 4 * 3,
        part: None,
        packets_acked: 0,
        // One engine for every flow (`partition.rs` sets each part's by the flows it sends).
        prefetch: crate::prefetch::worth_prefetching(tm.flows.len(), topo),
    };
    if let Some(pfc) = cfg.pfc {
        sim.init_headroom(net, &pfc);
    }
    for (k, fl) in tm.flows.iter().enumerate() {
        let fi = FlowId::from_idx(k);
        match fl.start {
            Start::AtPs(t) => sim.events.push(t, Event::Start(fi)),
            Start::Trigger(t) => sim.triggers.waiting.entry(t).or_default().push_back(fi),
        }
    }
    if let Some(ff) = cfg.fast_forward {
        let fw = &mut sim.forward;
        fw.opts = Some(ff);
        fw.window_ps = match ff.window_ps {
            0 => WINDOW_RTTS * worst_rtt.max(1),
            w => w,
        };
        fw.timed_starts = tm
            .flows
            .iter()
            .enumerate()
            .filter_map(|(k, fl)| match fl.start {
                Start::AtPs(t) => Some((t, k as u32)),
                Start::Trigger(_) => None,
            })
            .collect();
        fw.timed_starts.sort_unstable();
        let w = fw.window_ps;
        sim.events.push(w, Event::Monitor);
    }
    Ok(sim)
}

/// The fastest NIC among the hosts, bits per second (DCQCN starts at line rate).
fn hosts_nic_rate(topo: &Topo) -> u64 {
    topo.host_up
        .iter()
        .map(|&p| topo.ports[p.idx()].rate_bps)
        .max()
        .unwrap_or(1)
        .max(1)
}

/// NSCC parameters for the matrix's longest path ([`Cc::NsccAuto`]): the path of entropy 0
/// of each flow, through the forwarding tables.
fn auto_params(topo: &Topo, pairs: &[(u32, u32)], cfg: &Config) -> nscc::Params {
    let (mut worst, mut rate) = (0u64, 0u64);
    let mut seen: rustc_hash::FxHashSet<(u32, u32)> = Default::default();
    for &(s, d) in pairs {
        let (s, d) = (HostId::new(s), HostId::new(d));
        let dest = |h: HostId| topo.host_dest[h.idx()].expect("a destination").get();
        if seen.insert((dest(s), dest(d))) {
            rate = rate.max(topo.ports[topo.host_up[s.idx()].idx()].rate_bps);
            worst = worst.max(base_rtt_ps(topo, s, d, cfg));
        }
    }
    nscc::Params::for_path(rate.max(1), worst.max(1), cfg.mtu_bytes)
}

/// A path's base latencies, picoseconds: what a packet takes on it when nothing queues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BasePath {
    /// The round trip: each hop of the path a flow takes (its first next hop at every
    /// switch) twice over its delay, with an MTU and an ACK serialized on it, plus, where
    /// the path crosses a DSF zone's scheduled fabric, the request, grant and cells each way
    /// (the ACK is credited too).
    pub rtt_ps: u64,
    /// One way, the hops' delays alone (what the flow engine's path latency counts).
    pub delay_ps: u64,
}

/// The base round trip from host `s` to host `d`, picoseconds ([`BasePath::rtt_ps`]).
pub(crate) fn base_rtt_ps(topo: &Topo, s: HostId, d: HostId, cfg: &Config) -> u64 {
    base_path_ps(topo, s, d, cfg).rtt_ps
}

/// The base latencies of the path from host `s` to host `d` ([`BasePath`]).
pub(crate) fn base_path_ps(topo: &Topo, s: HostId, d: HostId, cfg: &Config) -> BasePath {
    let mut b = BasePath::default();
    let mut p = topo.host_up[s.idx()];
    for _ in 0..64 {
        let port = topo.ports[p.idx()];
        b.delay_ps += port.delay_ps;
        b.rtt_ps += 2 * port.delay_ps
            + port.serialize_ps(cfg.mtu_bytes)
            + port.serialize_ps(cfg.header_bytes);
        let v = port.to;
        if topo.host_of_device[v.idx()].is_some() {
            break;
        }
        let dest = topo.host_dest[d.idx()].expect("a destination");
        let rack = topo.dest_rack[dest.idx()];
        p = if rack == v || topo.dsf.as_ref().is_some_and(|x| x.same_zone(v, rack)) {
            topo.host_down[d.idx()]
        } else {
            let sw = topo.switch_index[v.idx()].expect("a switch on the way");
            topo.members[topo.group(dest.idx(), sw.idx()).0]
        };
        if let Some(x) = &topo.dsf {
            let w = topo.ports[p.idx()].from;
            if v != w && x.scheduled(v, w) {
                b.rtt_ps += 6 * x.ctrl_delay(v, w);
            }
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use aifabric_model::Role;
    use aifabric_workload::traffic::Pattern;

    /// A header of no bytes is refused up front, naming the setting (every packet must have
    /// bytes: a port that sent none counts as unused).
    #[test]
    fn a_header_of_no_bytes_is_refused() {
        let f = crate::testing::fat_tree(4);
        let net = crate::testing::healthy(&f);
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
        let tm = Pattern::Permutation.generate(16, 1 << 20, 1);
        let cfg = Config {
            header_bytes: 0,
            ..Config::uec_htsim()
        };
        match prepare(&net, &tm, &gpus, &cfg) {
            Err(PacketError::Invalid(m)) => assert!(m.contains("header_bytes 0"), "{m}"),
            other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
        }
    }

    /// The switches' hash salts are the seed's alone: a draw seed leaves every path as it
    /// was, and another seed moves them.
    #[test]
    fn a_draw_seed_keeps_the_seeds_salts() {
        let f = crate::testing::fat_tree(4);
        let net = crate::testing::healthy(&f);
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
        let tm = Pattern::Permutation.generate(16, 1 << 20, 1);
        let cfg = Config::uec_htsim();
        let (topo, _) = prepare(&net, &tm, &gpus, &cfg).unwrap();
        let drawn = Config {
            draw_seed: Some(7),
            ..cfg.clone()
        };
        assert_eq!(salts(&topo, &cfg), salts(&topo, &drawn));
        assert_ne!(cfg.draws(), drawn.draws());
        let other = Config {
            seed: 14,
            ..cfg.clone()
        };
        assert_ne!(salts(&topo, &cfg), salts(&topo, &other));
        assert_eq!(
            Config {
                draw_seed: None,
                ..cfg.clone()
            }
            .draws(),
            cfg.seed
        );
    }
}
