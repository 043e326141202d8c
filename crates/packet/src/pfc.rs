//! Priority flow control (IEEE 802.1Qbb) on the data class: per ingress link the bytes a
//! switch holds from it, PAUSE above XOFF and RESUME at XON over the link, the headroom
//! above XOFF (per link, or carved out of the switch's buffer) and what finds it full.

use crate::event::Event;
use crate::ids::{PacketId, PortId};
use crate::sim::Sim;
use crate::{Config, Pfc};
use aifabric_dataplane::{Net, Resource};
use aifabric_model::{DeviceId, PortKind, Role};

/// What PFC did: frames sent, data dropped for want of headroom, and the ingress links
/// given less headroom than they need (how many, the smallest share, its switch).
pub(crate) struct PfcStats {
    pub pauses: u64,
    pub resumes: u64,
    pub drops: u64,
    pub headroom_short: u64,
    pub headroom_share_min: f64,
    pub headroom_min_device: Option<DeviceId>,
}

impl Default for PfcStats {
    fn default() -> Self {
        PfcStats {
            pauses: 0,
            resumes: 0,
            drops: 0,
            headroom_short: 0,
            headroom_share_min: 1.0,
            headroom_min_device: None,
        }
    }
}

/// One directed port's PFC state, kept apart from [`crate::port::PortState`] (every port
/// with PFC on, none without).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PortPfc {
    // As the upstream side of the link: since when it is paused, for how long in all, and
    // how many PAUSE frames came.
    pub paused_since_ps: u64,
    pub paused_ps: u64,
    pub pauses_received: u64,
    // As the downstream switch's ingress accounting of what came in over this link: data
    // bytes still queued there, whether it sent a PAUSE not yet followed by a RESUME, the
    // headroom above XOFF, and the largest count.
    pub ingress: u64,
    pub pause_sent: bool,
    pub headroom: u64,
    pub ingress_peak: u64,
}

impl PfcStats {
    /// Add the frames and drops of another part of a partitioned run (every part computes
    /// the same headroom figures, kept as they are).
    pub fn add(&mut self, o: &PfcStats) {
        self.pauses += o.pauses;
        self.resumes += o.resumes;
        self.drops += o.drops;
    }
}

impl Sim<'_> {
    /// Give every port's ingress its headroom (before the run), counting the switch links
    /// short of what a PAUSE needs on them.
    pub(crate) fn init_headroom(&mut self, net: &Net<'_>, pfc: &Pfc) {
        let cfg = self.cfg;
        let topo = self.topo;
        let scale = if pfc.buffer_limited {
            headroom_scale(net, pfc, cfg)
        } else {
            Vec::new()
        };
        self.pfc_ports = vec![PortPfc::default(); topo.ports.len()];
        for (st, port) in self.pfc_ports.iter_mut().zip(&topo.ports) {
            // What a PAUSE on this link needs; the headroom given is this unless fixed.
            let physical =
                pfc_headroom_bytes(port.rate_bps, port.delay_ps, pfc.response_ps, cfg.mtu_bytes);
            let need = pfc.headroom_bytes.unwrap_or(physical);
            st.headroom = match scale.get(port.to.idx()) {
                Some(&k) if k < 1.0 => (need as f64 * k) as u64,
                _ => need,
            };
            // Short links, counted where headroom means something: a switch's ingress over
            // an Ethernet link (hosts do not pause; DSF fabric links carry credited cells).
            let fabric = match net.resource(port.resource) {
                Resource::Link(l, _) => net.f.link(l).kind == PortKind::Fabric,
                _ => false,
            };
            let switch = topo.host_of_device[port.to.idx()].is_none();
            if switch && !fabric && st.headroom < physical {
                self.pfc.headroom_short += 1;
                let share = st.headroom as f64 / physical as f64;
                if share < self.pfc.headroom_share_min {
                    self.pfc.headroom_share_min = share;
                    self.pfc.headroom_min_device = Some(port.to);
                }
            }
        }
    }

    /// PFC at a switch: count data packet `i`, arrived over port `p`, against that link's
    /// ingress; drop it if the headroom is full; send a PAUSE upstream when XOFF is crossed
    /// (by this packet, or by one dropped for want of headroom: with less headroom than a
    /// packet the link still gets paused). Whether the packet was admitted.
    pub(crate) fn admit(&mut self, p: PortId, i: PacketId) -> bool {
        let Some(pfc) = self.cfg.pfc else { return true };
        let bytes = u64::from(self.packets[i].bytes);
        let st = &mut self.pfc_ports[p.idx()];
        let admitted = st.ingress + bytes <= pfc.xoff_bytes + st.headroom;
        if admitted {
            st.ingress += bytes;
            st.ingress_peak = st.ingress_peak.max(st.ingress);
        }
        // A drop pauses the link only while it holds data here: the release of that data
        // sends the RESUME (with nothing held, no RESUME would ever come).
        let crossed = if admitted {
            st.ingress > pfc.xoff_bytes
        } else {
            st.ingress > 0 && st.ingress + bytes > pfc.xoff_bytes
        };
        if crossed && !st.pause_sent {
            st.pause_sent = true;
            self.pfc.pauses += 1;
            let delay = self.topo.ports[p.idx()].delay_ps;
            self.at_port(p, self.now + pfc.response_ps + delay, Event::Pause(p));
        }
        if !admitted {
            self.pfc.drops += 1;
            self.drop_packet(i);
        }
        admitted
    }

    /// PFC: data packet `i` leaves the switch that counted it against the link it came in
    /// over (its `port` until it is transmitted); a RESUME goes upstream at XON.
    pub(crate) fn release_ingress(&mut self, i: PacketId) {
        let Some(pfc) = self.cfg.pfc else { return };
        let p = self.packets[i].port;
        let st = &mut self.pfc_ports[p.idx()];
        st.ingress -= u64::from(self.packets[i].bytes);
        if st.pause_sent && st.ingress <= pfc.xon_bytes {
            st.pause_sent = false;
            self.pfc.resumes += 1;
            let delay = self.topo.ports[p.idx()].delay_ps;
            self.at_port(p, self.now + pfc.response_ps + delay, Event::Resume(p));
        }
    }

    /// A PAUSE (`on`) or RESUME frame reaches port `p`'s sender.
    pub(crate) fn pause(&mut self, p: PortId, on: bool) {
        let st = &mut self.ports[p.idx()];
        if st.paused == on {
            return;
        }
        st.paused = on;
        let busy = st.busy;
        let pfc = &mut self.pfc_ports[p.idx()];
        if on {
            pfc.pauses_received += 1;
            pfc.paused_since_ps = self.now;
            return;
        }
        pfc.paused_ps += self.now - pfc.paused_since_ps;
        if !busy {
            match self.topo.port_host[p.idx()] {
                None => self.dequeue(p),
                Some(host) => self.try_send(host),
            }
        }
    }
}

/// Per device, the share of its ports' headroom needs its buffer holds (1: all of it): the
/// model's HBM + SRAM less XOFF for each live Ethernet or host port, over the sum of those ports'
/// needs, each for its link's rate and delay (cable at 5 ns/m, or the run's one latency, and
/// the switch's forwarding latency) as [`pfc_headroom_bytes`] gives it.
fn headroom_scale(net: &Net<'_>, pfc: &Pfc, cfg: &Config) -> Vec<f64> {
    let f = net.f;
    (0..f.devices().len())
        .map(|d| {
            let id = DeviceId::from_idx(d);
            if f.device(id).role == Role::Gpu {
                return 1.0;
            }
            let (mut need, mut ports) = (0u128, 0u64);
            for &l in f.incident(id) {
                let link = f.link(l);
                // Ethernet and host ports hold headroom; DSF fabric ports carry credited cells.
                if link.kind == PortKind::Fabric || !f.link_up(l, &net.down) {
                    continue;
                }
                let prop = cfg.link_latency_ps.unwrap_or_else(|| {
                    (link.length_m() * crate::topo::PS_PER_M as f64).round() as u64
                });
                let rate = u64::from(link.capacity_mbps) * 1_000_000;
                need += u128::from(pfc.headroom_bytes.unwrap_or_else(|| {
                    pfc_headroom_bytes(
                        rate,
                        prop + cfg.switch_latency_ps,
                        pfc.response_ps,
                        cfg.mtu_bytes,
                    )
                }));
                ports += 1;
            }
            let hw = f.hardware(id);
            let buffer = u128::from(hw.hbm_bytes + hw.sram_bytes);
            let room = buffer.saturating_sub(u128::from(ports) * u128::from(pfc.xoff_bytes));
            if need == 0 || room >= need {
                1.0
            } else {
                room as f64 / need as f64
            }
        })
        .collect()
}

/// PFC headroom of one ingress link: what arrives after XOFF is crossed and before the
/// PAUSE takes effect upstream, `R x (2 x delay + response) + 2 MTU` bytes (the design-time
/// formula, `H = R x (2 L x 5 ns/m + t_response) + 2 MTU`, with the link's modelled delay:
/// the PAUSE travels back over the link while the data already on it keeps coming; one MTU
/// in serialization upstream, one crossing the threshold).
pub fn pfc_headroom_bytes(rate_bps: u64, delay_ps: u64, response_ps: u64, mtu: u32) -> u64 {
    let ps = u128::from(2 * delay_ps + response_ps);
    (u128::from(rate_bps) * ps).div_ceil(8_000_000_000_000) as u64 + 2 * u64::from(mtu)
}
