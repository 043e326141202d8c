//! Sender congestion control in the Ultra Ethernet NSCC family (Network-Signaled Congestion
//! Control of Ultra Ethernet Transport).
//!
//! Sources: the Ultra Ethernet design paper (Hoefler et al., "Ultra Ethernet's Design
//! Principles and Architectural Innovations", arXiv 2508.08906, 2025), which describes NSCC
//! as a window control on two signals, ECN marks and queuing delay; SMaRTT-REPS / FASTFLOW
//! (Bonato et al., arXiv 2404.01630), which gives the control law; and htsim's Ultra Ethernet
//! model (`uec.cpp` in the Ultra Ethernet Consortium's htsim, read for its parameter
//! formulas, not copied), whose defaults the `uec-htsim` preset takes.
//!
//! On each ACK the sender has `acked` new bytes, whether the ACK echoes an ECN mark, and a
//! delay sample: RTT minus the base RTT. With `Tq` the target queuing delay:
//! - no mark, delay < `Tq`: **proportional increase**, `alpha * acked * (Tq - delay)` (about
//!   `alpha * (Tq - delay)` per RTT); when a whole window came back with under 1 us of delay,
//!   a **fast increase** instead grows the window by `fi_scale * acked` at once;
//! - no mark, delay >= `Tq`: **fair increase**, `fi * acked` (about `fi` bytes per RTT);
//! - mark, delay >= `Tq`: **multiplicative decrease**, at most once per base RTT and only
//!   when the smoothed delay also exceeds `Tq`:
//!   `cwnd *= max(1 - gamma * (avg - Tq) / avg, 1/2)`;
//! - mark, delay < `Tq`: no change (the mark came from a queue this flow barely waited in).
//!
//! Increases are credited and applied in batches (`cwnd += credit / cwnd` once more than 8
//! MTUs have been acknowledged, or one RTT has passed), plus `eta` once per RTT. A NACK
//! (a trimmed packet) takes the packet's size off the window; a timeout too. **Quick adapt**:
//! once per `base_rtt + Tq`, if a NACK came or the delay exceeded `4 Tq` and the flow
//! delivered less than an eighth of its maximum window in that period, the window drops to
//! what was delivered. The bytes then in flight were sent under the old window: until as
//! many bytes have been acknowledged or NACKed, their marks and NACKs change nothing (the
//! cut already answered them), as htsim's `UecSrc::quick_adapt` ignores them
//! (`_bytes_to_ignore`, `_bytes_ignored`). Without it, each NACK of a packet sent before the
//! cut took another MTU off the window, and a flow trimmed in a burst fell toward one
//! packet: measured against htsim's own runs (README, "Fidelity against htsim").
//!
//! htsim also feeds a NACK into the delay estimate (a sample of one network RTT,
//! `updateCwndOnNack_NSCC`) and learns its base RTT as the smallest round trip, a NACK's
//! included (`update_base_rtt`); neither is modelled here: the first put this engine's
//! incast tails 10-18% after htsim's, the second moved figures both ways and left them
//! farther from htsim's on the whole (the figures are in the README).
//!
//! Not modelled: the receiver-side credit control (RCCC), base-RTT learning (the base RTT is
//! given). Entropy values (REPS reuse, penalties) are the engine's, in `flow.rs` and
//! `host.rs`.

use serde::Serialize;

/// Parameters (bytes, picoseconds).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Params {
    /// Base RTT, picoseconds.
    pub base_rtt_ps: u64,
    /// Target queuing delay, picoseconds.
    pub target_delay_ps: u64,
    /// Initial window, bytes.
    pub init_cwnd_bytes: f64,
    /// Largest window, bytes.
    pub max_cwnd_bytes: f64,
    /// Smallest window, bytes (one MTU).
    pub min_cwnd_bytes: f64,
    /// Proportional-increase gain, bytes of window per acked byte per picosecond of delay
    /// below target.
    pub alpha: f64,
    /// Fair increase per acked byte (about `fi` bytes of window per RTT).
    pub fi: f64,
    /// Added once per RTT when increases are applied, bytes.
    pub eta: f64,
    /// Fast increase per acked byte.
    pub fi_scale: f64,
    /// Multiplicative-decrease gain.
    pub gamma: f64,
    /// Weight of a new sample in the smoothed delay.
    pub delay_weight: f64,
    /// Quick adapt: delay above which it may fire, picoseconds.
    pub qa_delay_ps: u64,
    /// Quick adapt fires only for flows that delivered less than this in its period, bytes.
    pub qa_bytes: f64,
    /// Increases are applied once more than this many bytes were acknowledged.
    pub adjust_bytes: f64,
    /// MTU on the wire, bytes.
    pub mtu_bytes: f64,
}

impl Params {
    /// The parameters for a path of `rate_bps` and base RTT `base_rtt_ps` with `mtu` bytes
    /// on the wire (64 B headers), scaled from the reference network of 100 Gb/s x 12 us as
    /// htsim's model scales them: BDP = rate x RTT; windows 1.5 BDP; `Tq` = 0.75 RTT (with
    /// trimming); with `a` = BDP / 150 KB: `fi` = 5 MSS a, `eta` = 0.15 MSS a, `fi_scale` =
    /// 0.25 a, `alpha` = 4 MSS a / 12 us; `gamma` 0.8; quick adapt at 4 `Tq`, under an
    /// eighth of the maximum window; increases every 8 MTU.
    pub fn for_path(rate_bps: u64, base_rtt_ps: u64, mtu: u32) -> Params {
        let bdp = (base_rtt_ps as f64 * 1e-12 * rate_bps as f64 / 8.0).floor();
        let mss = f64::from(mtu - 64);
        let a = bdp / 150_000.0;
        let target = (base_rtt_ps as f64 * 0.75).round() as u64;
        // At least one MTU, whatever the path.
        let max = (1.5 * bdp).floor().max(f64::from(mtu));
        Params {
            base_rtt_ps,
            target_delay_ps: target,
            init_cwnd_bytes: max,
            max_cwnd_bytes: max,
            min_cwnd_bytes: f64::from(mtu),
            alpha: 4.0 * mss * a / 12_000_000.0,
            fi: 5.0 * mss * a,
            eta: 0.15 * mss * a,
            fi_scale: 0.25 * a,
            gamma: 0.8,
            delay_weight: 0.0125,
            qa_delay_ps: 4 * target,
            qa_bytes: (max as u64 >> 3) as f64,
            adjust_bytes: 8.0 * f64::from(mtu),
            mtu_bytes: f64::from(mtu),
        }
    }
}

impl Params {
    /// These parameters for one flow whose own path has base RTT `base_rtt_ps` from a NIC
    /// of `rate_bps`: that base RTT for its delay samples, a window of 1.5 times that path's
    /// BDP (at least an MTU) to start from and cap at, quick adapt's bytes from it; the
    /// gains, the target delay and the periods stay the network's (htsim's per-connection
    /// `initNscc(cwnd, peer_rtt)` with an accurate base RTT).
    pub fn for_peer(&self, rate_bps: u64, base_rtt_ps: u64) -> Params {
        let bdp = (base_rtt_ps as f64 * 1e-12 * rate_bps as f64 / 8.0).floor();
        let max = (1.5 * bdp).floor().max(self.mtu_bytes);
        Params {
            base_rtt_ps,
            init_cwnd_bytes: max,
            max_cwnd_bytes: max,
            qa_bytes: (max as u64 >> 3) as f64,
            ..*self
        }
    }
}

/// One sender's state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct State {
    /// Congestion window, bytes.
    pub cwnd_bytes: f64,
    avg_delay_ps: f64,
    credit: f64,
    credited_bytes: f64,
    last_adjust_ps: u64,
    last_decrease_ps: Option<u64>,
    fast_bytes: f64,
    fast: bool,
    qa_end_ps: u64,
    delivered: f64,
    lossy: bool,
    /// After a quick-adapt cut: the bytes that were in flight then, and how many of them
    /// (or of any) have been acknowledged or NACKed since.
    ignore_bytes: f64,
    ignored_bytes: f64,
}

impl State {
    /// A sender at the initial window.
    pub fn new(p: &Params) -> State {
        State {
            cwnd_bytes: p.init_cwnd_bytes,
            ..State::default()
        }
    }

    fn clamp(&mut self, p: &Params) {
        self.cwnd_bytes = self
            .cwnd_bytes
            .clamp(p.min_cwnd_bytes, p.max_cwnd_bytes.max(p.min_cwnd_bytes));
    }

    /// Quick adapt, checked on each ACK and NACK, with `in_flight` bytes outstanding: true
    /// when it cut the window (the rest of the update is then skipped).
    fn quick_adapt(
        &mut self,
        p: &Params,
        now: u64,
        loss: bool,
        delay_ps: u64,
        in_flight: u64,
    ) -> bool {
        if now <= self.qa_end_ps {
            return false;
        }
        let mut cut = false;
        if self.qa_end_ps != 0
            && (self.lossy || loss || delay_ps > p.qa_delay_ps)
            && self.delivered < p.qa_bytes
        {
            self.cwnd_bytes = self.delivered.max(p.min_cwnd_bytes);
            self.ignore_bytes = in_flight as f64;
            self.ignored_bytes = 0.0;
            self.lossy = false;
            self.credit = 0.0;
            self.credited_bytes = 0.0;
            cut = true;
        }
        self.delivered = 0.0;
        self.qa_end_ps = now + p.base_rtt_ps + p.target_delay_ps;
        cut
    }

    /// Whether a congestion signal (a mark, a NACK) belongs to the bytes a quick-adapt cut
    /// already answered; if so, the increases credited meanwhile are dropped too.
    fn ignored(&mut self) -> bool {
        if self.ignored_bytes < self.ignore_bytes {
            self.credit = 0.0;
            self.credited_bytes = 0.0;
            return true;
        }
        false
    }

    /// An ACK of `acked` new bytes, `marked` of them ECN-marked, with an RTT sample (`None`
    /// when the packet that triggered it was retransmitted); `in_flight` bytes are still
    /// outstanding.
    pub fn on_ack(
        &mut self,
        p: &Params,
        now: u64,
        acked: u64,
        marked: u64,
        rtt_ps: Option<u64>,
        in_flight: u64,
    ) {
        let acked = acked as f64;
        self.delivered += acked;
        self.ignored_bytes += acked;
        let ecn = marked > 0;
        let delay = match rtt_ps {
            Some(rtt) => {
                let d = rtt.saturating_sub(p.base_rtt_ps);
                // Unmarked high-delay samples count as a quarter base RTT in the average: the
                // queue they saw is not this flow's bottleneck.
                let sample = if !ecn && d > p.target_delay_ps {
                    p.base_rtt_ps as f64 / 4.0
                } else {
                    d as f64
                };
                self.avg_delay_ps += p.delay_weight * (sample - self.avg_delay_ps);
                d
            }
            None => self.avg_delay_ps as u64,
        };
        if ecn && self.ignored() {
            return;
        }
        if self.quick_adapt(p, now, false, delay, in_flight) {
            return;
        }
        let tq = p.target_delay_ps;
        match (ecn, delay >= tq) {
            (false, true) => self.credit += p.fi * acked,
            (false, false) => {
                if delay < 1_000_000 {
                    self.fast_bytes += acked;
                    if self.fast_bytes > self.cwnd_bytes || self.fast {
                        self.cwnd_bytes += acked * p.fi_scale;
                        self.fast = true;
                    } else {
                        self.credit += p.alpha * acked * (tq - delay) as f64;
                    }
                } else {
                    self.fast_bytes = 0.0;
                    self.fast = false;
                    self.credit += p.alpha * acked * (tq - delay) as f64;
                }
            }
            (true, true) => {
                self.fast = false;
                self.fast_bytes = 0.0;
                let recent = self
                    .last_decrease_ps
                    .is_some_and(|t| now.saturating_sub(t) <= p.base_rtt_ps);
                let avg = self.avg_delay_ps;
                if avg > tq as f64 && !recent {
                    let f = (1.0 - p.gamma * (avg - tq as f64) / avg).max(0.5);
                    self.cwnd_bytes = (self.cwnd_bytes * f).floor();
                    self.last_decrease_ps = Some(now);
                }
            }
            (true, false) => {}
        }
        self.clamp(p);
        self.credited_bytes += acked;
        if self.credited_bytes > p.adjust_bytes
            || now.saturating_sub(self.last_adjust_ps) > p.base_rtt_ps
        {
            self.cwnd_bytes += (self.credit / self.cwnd_bytes).floor();
            self.credit = 0.0;
            self.credited_bytes = 0.0;
            if now.saturating_sub(self.last_adjust_ps) >= p.base_rtt_ps {
                self.cwnd_bytes += p.eta;
                self.last_adjust_ps = now;
            }
            self.clamp(p);
        }
    }

    /// A NACK of a packet of `bytes`, with `in_flight` bytes outstanding (that packet
    /// included).
    pub fn on_nack(&mut self, p: &Params, now: u64, bytes: u64, in_flight: u64) {
        self.ignored_bytes += bytes as f64;
        self.lossy = true;
        if self.ignored() {
            return;
        }
        if !self.quick_adapt(p, now, true, 0, in_flight) {
            self.cwnd_bytes = (self.cwnd_bytes - bytes as f64).max(p.min_cwnd_bytes);
        }
    }

    /// A retransmission timeout of a packet of `bytes`.
    pub fn on_timeout(&mut self, p: &Params, bytes: u64) {
        self.cwnd_bytes = (self.cwnd_bytes - bytes as f64).max(p.min_cwnd_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow's own path (htsim's per-connection `peer_rtt`): a 6 us round trip at
    /// 100 Gb/s is a 75,000 B BDP, so windows of 112,500 B and quick adapt at 14,062 B;
    /// the gains and target stay the network's.
    #[test]
    fn a_peer_takes_its_own_base_rtt_and_window() {
        let net = Params::for_path(100_000_000_000, 14_022_720, 4150);
        let peer = net.for_peer(100_000_000_000, 6_000_000);
        assert_eq!(peer.base_rtt_ps, 6_000_000);
        assert_eq!(
            (peer.init_cwnd_bytes, peer.max_cwnd_bytes),
            (112_500.0, 112_500.0)
        );
        assert_eq!(peer.qa_bytes, 14_062.0);
        assert_eq!(
            (peer.target_delay_ps, peer.alpha, peer.fi, peer.eta),
            (net.target_delay_ps, net.alpha, net.fi, net.eta)
        );
        // Never below one MTU.
        assert_eq!(net.for_peer(1_000_000, 1_000).max_cwnd_bytes, 4150.0);
    }

    /// htsim's figures for 100 Gb/s, a 14.02272 us base RTT and a 4,150 B MTU.
    #[test]
    fn parameters_scale_from_the_reference_network() {
        let p = Params::for_path(100_000_000_000, 14_022_720, 4150);
        assert_eq!(p.max_cwnd_bytes, 262_926.0);
        assert_eq!(p.target_delay_ps, 10_517_040);
        assert!((p.fi - 23_873.68).abs() < 0.5, "{}", p.fi);
        assert!((p.eta - 716.21).abs() < 0.05, "{}", p.eta);
        assert!((p.fi_scale - 0.29214).abs() < 1e-4);
        assert!((p.alpha - 1.59158e-3).abs() < 1e-7, "{}", p.alpha);
        assert_eq!(p.qa_bytes, 32_865.0);
    }

    /// A NACK burst (htsim's `UecSrc::quick_adapt` and `updateCwndOnNack_NSCC`): quick adapt
    /// cuts the window to what the period delivered, once; the NACKs and marks of the
    /// packets in flight at the cut change nothing more until as many bytes came back; the
    /// next NACK takes its packet off the window again.
    #[test]
    fn after_a_quick_adapt_cut_the_packets_in_flight_then_are_not_punished_again() {
        let p = Params::for_path(100_000_000_000, 14_022_720, 4150);
        let mut s = State::new(&p);
        let period = p.base_rtt_ps + p.target_delay_ps;
        // Arm the period, then deliver five packets in it (under an eighth of the window).
        s.quick_adapt(&p, 1, false, 0, 0);
        s.on_ack(&p, 2, 5 * 4150, 0, Some(p.base_rtt_ps), 20 * 4150);
        // The period is over: the first NACK cuts the window to the 20,750 B delivered.
        let t = period + 2;
        s.on_nack(&p, t, 4150, 20 * 4150);
        assert_eq!(s.cwnd_bytes, 20_750.0);
        // Ten more NACKs and a marked ACK of a queue far above target, all of packets sent
        // before the cut (83,000 B were in flight): the window stays.
        s.avg_delay_ps = 1e9;
        for k in 1..=10 {
            s.on_nack(&p, t + k, 4150, (20 - k) * 4150);
        }
        s.on_ack(
            &p,
            t + 11,
            4150,
            4150,
            Some(p.base_rtt_ps + 50_000_000),
            8 * 4150,
        );
        for k in 12..=19 {
            s.on_nack(&p, t + k, 4150, (20 - k + 1) * 4150);
        }
        assert_eq!(s.cwnd_bytes, 20_750.0, "the cut already answered them");
        // 83,000 B have come back: the next NACK counts, within the same period (no second
        // quick adapt), by its packet's size.
        s.on_nack(&p, t + 20, 4150, 4150);
        assert_eq!(s.cwnd_bytes, 16_600.0);
    }

    #[test]
    fn marks_with_high_delay_halve_at_most_once_per_rtt() {
        let p = Params::for_path(100_000_000_000, 14_022_720, 4150);
        let mut s = State::new(&p);
        // Arm quick adapt's period with an ACK that delivered plenty.
        s.delivered = 1e9;
        s.quick_adapt(&p, 1, false, 0, 0);
        s.delivered = 1e9;
        s.avg_delay_ps = 1e9; // far above target: the cut is capped at one half
        let w = s.cwnd_bytes;
        s.on_ack(&p, 2, 16_600, 4150, Some(p.base_rtt_ps + 50_000_000), 0);
        assert_eq!(s.cwnd_bytes, (w * 0.5).floor().max(p.min_cwnd_bytes));
        let w2 = s.cwnd_bytes;
        s.on_ack(&p, 3, 16_600, 4150, Some(p.base_rtt_ps + 50_000_000), 0);
        assert_eq!(s.cwnd_bytes, w2, "no second decrease within one base RTT");
    }
}

/// NSCC as a [`super::Law`]: the sender's state and its parameters' index in
/// [`super::CcTable::nscc`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct NsccFlow {
    pub state: State,
    pub params: u32,
}

impl super::Law for NsccFlow {
    #[inline]
    fn window_bytes(&self) -> u64 {
        self.state.cwnd_bytes as u64
    }

    #[inline]
    fn on_ack(&mut self, t: &super::CcTable, now: u64, a: super::Ack) {
        let p = &t.nscc[self.params as usize];
        self.state
            .on_ack(p, now, a.acked, a.marked, a.rtt_ps, a.in_flight);
    }

    #[inline]
    fn on_nack(&mut self, t: &super::CcTable, now: u64, bytes: u64, in_flight: u64) {
        self.state
            .on_nack(&t.nscc[self.params as usize], now, bytes, in_flight);
    }

    #[inline]
    fn on_timeout(&mut self, t: &super::CcTable, bytes: u64) {
        self.state.on_timeout(&t.nscc[self.params as usize], bytes);
    }
}
