//! A fixed window: the sender keeps at most so many bytes in flight and ignores every
//! signal. On an idle path a window of `W` bytes below the bandwidth-delay product gives
//! `W / RTT`; the law exists to show what a new law takes (this file and one arm of
//! [`super::FlowCc`]).

use super::Law;

/// A fixed window of `window_bytes`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FixedWindow {
    pub window_bytes: u64,
}

impl Law for FixedWindow {
    #[inline]
    fn window_bytes(&self) -> u64 {
        self.window_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::FixedWindow;
    use crate::cc::FlowCc;
    use crate::{Cc, Config, PacketLb};
    use aifabric_model::{DeviceId, Role};
    use aifabric_workload::traffic::{Start, TmFlow, TrafficMatrix};

    /// A window of `W` packets on an idle path, ACKed packet by packet, sends `W` packets per
    /// round trip: packet `j` leaves at `floor(j / W) RTT + (j mod W) x` (one MTU's
    /// serialization `x` after the other at the NIC), so `m W` packets complete at
    /// `m RTT + (W - 1) x`, to the picosecond, with nothing lost or resent.
    #[test]
    fn a_fixed_window_sends_w_packets_per_round_trip() {
        let f = crate::testing::fat_tree(4);
        let net = crate::testing::healthy(&f);
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
        let cfg = Config {
            cc: Cc::LineRate,
            lb: PacketLb::Ecmp,
            ack_every_bytes: 0,
            check_conservation: true,
            ..Config::uec_htsim()
        };
        let (mtu, payload) = (u64::from(cfg.mtu_bytes), u64::from(cfg.mtu_bytes - 64));
        // Host 0 (pod 0) to host 15 (pod 3): 6 hops of 1 us, each way an MTU and an ACK
        // serialized at 100 Gb/s (80 ps per byte).
        let x = mtu * 80;
        let rtt = 6 * (2 * 1_000_000 + x + 64 * 80);
        assert_eq!(rtt, 14_022_720);
        let m = 50;
        for w in [1u64, 4, 16] {
            let tm = TrafficMatrix {
                nodes: 16,
                flows: vec![TmFlow {
                    id: 1,
                    src: 0,
                    dst: 15,
                    bytes: m * w * payload,
                    start: Start::AtPs(0),
                    done_trigger: None,
                    recv_trigger: None,
                }],
                triggers: Default::default(),
            };
            let law = FlowCc::FixedWindow(FixedWindow {
                window_bytes: w * mtu,
            });
            let r = crate::sim::run_law(&net, &tm, &gpus, &cfg, Some(law), &mut |_| {})
                .expect("it runs");
            let want = m * rtt + (w - 1) * x;
            assert_eq!(r.fct.max_s, want as f64 * 1e-12, "window of {w} packets");
            // W x MTU / RTT, within the last window's serialization.
            let gbps = (m * w * mtu * 8) as f64 / r.fct.max_s / 1e9;
            let closed = (w * mtu * 8) as f64 / (rtt as f64 * 1e-12) / 1e9;
            assert!(
                (gbps / closed - 1.0).abs() < 0.03,
                "{gbps} vs {closed} Gb/s"
            );
            assert_eq!(r.counters.data_new, m * w);
            assert_eq!(r.counters.data_retransmitted + r.counters.timeouts, 0);
            assert_eq!(r.counters.trimmed + r.counters.dropped, 0);
        }
    }
}
