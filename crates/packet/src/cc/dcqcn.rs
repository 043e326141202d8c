//! DCQCN sender rate control (the reaction point, RP) and CNP pacing at the receiver (the
//! notification point, NP), as a pure state machine: no events, no simulator types. The
//! engine calls [`State::advance`] (or [`State::on_sent`], which advances first) whenever it
//! needs the rate; timers are applied lazily, so nothing has to be scheduled.
//!
//! Sources: Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015
//! (the algorithm, Section 3, and its parameters g, K, N, T, B, F); the rate-increase stages
//! come from QCN (IEEE 802.1Qau; Alizadeh et al., "Data Center Transport Mechanisms:
//! Congestion Control Theory and IEEE Standardization", Allerton 2008), which DCQCN's RP
//! inherits; NVIDIA's "DCQCN CC Parameters" page (ConnectX-4 and later firmware, DOCA/MLNX_OFED
//! documentation) for the deployed defaults quoted below.
//!
//! **Rate decrease**, on each CNP (current rate `Rc`, target rate `Rt`):
//! `Rt = Rc`, `Rc = Rc (1 - alpha/2)`, `alpha = (1 - g) alpha + g`; the alpha timer, the
//! rate-increase timer and the byte counter restart, and both stage counters go back to 0.
//! Since `alpha <= 1` a cut is at most a half (the firmware's `rpg_min_dec_fac` = 50 %).
//!
//! **Alpha decay**: every `K` (`alpha_timer_ps`) without a CNP, `alpha = (1 - g) alpha`.
//!
//! **Rate increase**: an increase event fires each time the timer expires (every `T`,
//! `rate_timer_ps`) and each time the byte counter passes `B` (`byte_counter_bytes`) sent
//! bytes; each source counts its own events since the last CNP (`t` and `bc`). With
//! `F` = `fast_recovery_steps`, after incrementing the counter of the event's source:
//! - `max(t, bc) <= F`: **fast recovery**, `Rc = (Rt + Rc) / 2`;
//! - `min(t, bc) <= F < max(t, bc)`: **additive increase**, `Rt += R_AI`, then
//!   `Rc = (Rt + Rc) / 2`;
//! - `min(t, bc) > F`: **hyper increase**, `Rt += i R_HAI` with `i = min(t, bc) - F`, then
//!   `Rc = (Rt + Rc) / 2`.
//!
//! `Rt` is capped at the line rate, `Rc` kept between the minimum rate and the line rate.
//! Rates are kept as `f64` bits per second; [`State::rate_bps`] rounds.
//!
//! **Defaults** ([`Params::for_line_rate`]), the paper's unless noted:
//! g = 1/256, K = 55 us, T = 55 us, B = 10 MB, F = 5, N = 50 us (at most one CNP per flow
//! per N), alpha starts at 1. R_AI is the paper's 40 Mb/s for its 40 Gb/s NICs, scaled
//! with the line rate (a thousandth of it: 100 Mb/s at 100 Gb/s); R_HAI is ten times R_AI,
//! the ratio of the firmware's `rpg_hai_rate`/`rpg_ai_rate` (50/5 Mb/s). The minimum rate is
//! the firmware's `rpg_min_rate`, 1 Mb/s (fixed). Only R_AI and R_HAI scale with the rate.
//! htsim's DCQCN source (`dcqcn.cpp` in its repository) uses the same g, T, B, F and CNP
//! interval; its rate steps are far larger (R_AI = rate / 20, R_HAI = rate / 10), which
//! [`Params::htsim_steps`] (`--cc dcqcn-htsim`) sets for runs next to htsim's.
//! For reference, NVIDIA ConnectX firmware defaults differ: `rpg_time_reset` 300 us,
//! `rpg_byte_reset` 32,767 B, `rpg_threshold` (F) 1, `rpg_ai_rate` 5 Mb/s, `rpg_hai_rate`
//! 50 Mb/s, `min_time_between_cnps` 4 us, `initial_alpha_value` 1023/1024; set the fields
//! to model them.
//!
//! Not modelled: the switch side (RED-like ECN marking, the engine's), the firmware's
//! `rate_reduce_monitor_period` and `rate_to_set_on_first_cnp`, and the `clamp_tgt_rate`
//! variants (the target is always set to the current rate on a CNP, as in the paper).

use serde::Serialize;

/// Parameters (bits per second, bytes, picoseconds).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Params {
    /// Line rate: the initial rate and the cap, bits per second.
    pub line_rate_bps: u64,
    /// Floor of the current rate, bits per second.
    pub min_rate_bps: u64,
    /// Alpha gain `g`.
    pub g: f64,
    /// Additive-increase step of the target rate `R_AI`, bits per second.
    pub rate_ai_bps: u64,
    /// Hyper-increase step of the target rate `R_HAI`, bits per second.
    pub rate_hai_bps: u64,
    /// Alpha decays once per this period without a CNP (`K`), picoseconds; 0: never.
    pub alpha_timer_ps: u64,
    /// Rate-increase timer period (`T`), picoseconds; 0: no timer.
    pub rate_timer_ps: u64,
    /// Rate-increase byte counter (`B`), bytes; 0: no byte counter.
    pub byte_counter_bytes: u64,
    /// Fast-recovery steps `F`.
    pub fast_recovery_steps: u32,
    /// NP side: at most one CNP per flow per this interval (`N`), picoseconds.
    pub cnp_interval_ps: u64,
}

impl Params {
    /// The defaults for a NIC of `rate_bps` (see the module documentation): the paper's
    /// g = 1/256, K = T = 55 us, B = 10 MB, F = 5, N = 50 us; R_AI = rate / 1000 and
    /// R_HAI = 10 R_AI (the only fields that scale with the rate); minimum rate 1 Mb/s.
    pub fn for_line_rate(rate_bps: u64) -> Params {
        let ai = rate_bps / 1000;
        Params {
            line_rate_bps: rate_bps,
            min_rate_bps: 1_000_000.min(rate_bps),
            g: 1.0 / 256.0,
            rate_ai_bps: ai,
            rate_hai_bps: 10 * ai,
            alpha_timer_ps: 55_000_000,
            rate_timer_ps: 55_000_000,
            byte_counter_bytes: 10_000_000,
            fast_recovery_steps: 5,
            cnp_interval_ps: 50_000_000,
        }
    }

    /// [`Params::for_line_rate`] with htsim's rate-increase steps (its `dcqcn.cpp`:
    /// R_AI = rate / 20, R_HAI = rate / 10: fifty and ten times the steps above); its other
    /// defaults there are the paper's, as here (g = 1/256, 55 us timer, 10 MB byte counter,
    /// F = 5, one CNP per 50 us).
    pub fn htsim_steps(rate_bps: u64) -> Params {
        Params {
            rate_ai_bps: rate_bps / 20,
            rate_hai_bps: rate_bps / 10,
            ..Params::for_line_rate(rate_bps)
        }
    }
}

/// One sender's (reaction point's) state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct State {
    /// Current rate `Rc`, bits per second.
    current_bps: f64,
    /// Target rate `Rt`, bits per second.
    target_bps: f64,
    /// Alpha right after the last CNP (or at the start).
    alpha_base: f64,
    /// Alpha-timer expirations since then.
    alpha_decays: u64,
    /// Alpha now: `alpha_base (1 - g)^alpha_decays`.
    alpha: f64,
    /// When the alpha timer next expires, picoseconds.
    next_alpha_ps: u64,
    /// When the rate-increase timer next expires, picoseconds.
    next_rate_ps: u64,
    /// Bytes sent since the byte counter last expired.
    bytes: u64,
    /// Timer-driven increase events since the last CNP.
    timer_count: u64,
    /// Byte-counter-driven increase events since the last CNP.
    byte_count: u64,
}

impl State {
    /// A sender at line rate with alpha = 1, its timers started at `now_ps`.
    pub fn new(p: &Params, now_ps: u64) -> State {
        let line = p.line_rate_bps as f64;
        State {
            current_bps: line,
            target_bps: line,
            alpha_base: 1.0,
            alpha_decays: 0,
            alpha: 1.0,
            next_alpha_ps: now_ps.saturating_add(p.alpha_timer_ps),
            next_rate_ps: now_ps.saturating_add(p.rate_timer_ps),
            bytes: 0,
            timer_count: 0,
            byte_count: 0,
        }
    }

    /// Current rate, bits per second (rounded).
    pub fn rate_bps(&self) -> u64 {
        self.current_bps.round() as u64
    }

    /// Target rate, bits per second (rounded).
    pub fn target_bps(&self) -> u64 {
        self.target_bps.round() as u64
    }

    /// The congestion estimate alpha, in [0, 1].
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// A CNP arrived at `now_ps`: cut the rate, raise alpha, restart the timers and counters.
    pub fn on_cnp(&mut self, p: &Params, now_ps: u64) {
        self.advance(p, now_ps);
        self.target_bps = self.current_bps;
        self.current_bps = (self.current_bps * (1.0 - self.alpha / 2.0))
            .max(p.min_rate_bps as f64)
            .min(p.line_rate_bps as f64);
        self.alpha_base = (1.0 - p.g) * self.alpha + p.g;
        self.alpha_decays = 0;
        self.alpha = self.alpha_base;
        self.next_alpha_ps = now_ps.saturating_add(p.alpha_timer_ps);
        self.next_rate_ps = now_ps.saturating_add(p.rate_timer_ps);
        self.bytes = 0;
        self.timer_count = 0;
        self.byte_count = 0;
    }

    /// `bytes` were put on the wire at `now_ps`: timers first, then the byte counter (one
    /// increase event per `byte_counter_bytes`, the remainder carried).
    pub fn on_sent(&mut self, p: &Params, bytes: u64, now_ps: u64) {
        self.advance(p, now_ps);
        if p.byte_counter_bytes == 0 {
            return;
        }
        self.bytes = self.bytes.saturating_add(bytes);
        while self.bytes >= p.byte_counter_bytes {
            self.bytes -= p.byte_counter_bytes;
            self.byte_count = self.byte_count.saturating_add(1);
            self.increase(p);
        }
    }

    /// Apply every alpha-timer and rate-timer expiration up to and including `now_ps`.
    pub fn advance(&mut self, p: &Params, now_ps: u64) {
        let k = expirations(self.next_alpha_ps, now_ps, p.alpha_timer_ps);
        if k > 0 {
            self.alpha_decays = self.alpha_decays.saturating_add(k);
            self.next_alpha_ps = self
                .next_alpha_ps
                .saturating_add(k.saturating_mul(p.alpha_timer_ps));
            // From the value after the last CNP, so that the result does not depend on how
            // often the engine calls in.
            self.alpha = self.alpha_base * (1.0 - p.g).powf(self.alpha_decays as f64);
        }
        if p.rate_timer_ps > 0 {
            let line = p.line_rate_bps as f64;
            // (A timer saturated at u64::MAX never fires.)
            while self.next_rate_ps <= now_ps && self.next_rate_ps < u64::MAX {
                if self.current_bps >= line && self.target_bps >= line {
                    // At line rate every further event leaves the rates as they are: count
                    // the remaining expirations at once.
                    let k = expirations(self.next_rate_ps, now_ps, p.rate_timer_ps);
                    self.timer_count = self.timer_count.saturating_add(k);
                    self.next_rate_ps = self
                        .next_rate_ps
                        .saturating_add(k.saturating_mul(p.rate_timer_ps));
                    break;
                }
                self.timer_count = self.timer_count.saturating_add(1);
                self.next_rate_ps = self.next_rate_ps.saturating_add(p.rate_timer_ps);
                self.increase(p);
            }
        }
    }

    /// When the next timer (alpha or rate increase) expires, picoseconds (`u64::MAX`: none).
    pub fn next_event_ps(&self, p: &Params) -> u64 {
        let a = if p.alpha_timer_ps > 0 {
            self.next_alpha_ps
        } else {
            u64::MAX
        };
        let r = if p.rate_timer_ps > 0 {
            self.next_rate_ps
        } else {
            u64::MAX
        };
        a.min(r)
    }

    /// One increase event, after its source's counter was incremented.
    fn increase(&mut self, p: &Params) {
        let f = u64::from(p.fast_recovery_steps);
        let hi = self.timer_count.max(self.byte_count);
        let lo = self.timer_count.min(self.byte_count);
        let line = p.line_rate_bps as f64;
        if lo > f {
            let i = (lo - f) as f64;
            self.target_bps += i * p.rate_hai_bps as f64;
        } else if hi > f {
            self.target_bps += p.rate_ai_bps as f64;
        }
        self.target_bps = self.target_bps.min(line);
        self.current_bps = ((self.target_bps + self.current_bps) / 2.0)
            .min(line)
            .max(p.min_rate_bps as f64);
    }
}

/// How many times a timer of `period_ps` next expiring at `next_ps` expires up to and
/// including `now_ps` (0 for a disabled timer, `period_ps` = 0).
fn expirations(next_ps: u64, now_ps: u64, period_ps: u64) -> u64 {
    if next_ps > now_ps {
        return 0;
    }
    (now_ps - next_ps)
        .checked_div(period_ps)
        .map_or(0, |q| q + 1)
}

/// The notification point's CNP pacing for one flow: at most one CNP per `cnp_interval_ps`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CnpPacer {
    last_ps: Option<u64>,
}

impl CnpPacer {
    /// A flow that has not sent a CNP yet.
    pub fn new() -> CnpPacer {
        CnpPacer::default()
    }

    /// A marked packet of the flow arrived at `now_ps`: true if a CNP goes out now (and the
    /// interval restarts), false if one went out less than `cnp_interval_ps` ago.
    pub fn should_send(&mut self, p: &Params, now_ps: u64) -> bool {
        match self.last_ps {
            Some(t) if now_ps.saturating_sub(t) < p.cnp_interval_ps => false,
            _ => {
                self.last_ps = Some(now_ps);
                true
            }
        }
    }
}

/// DCQCN as a [`super::Law`], both ends: the sender's rate and when it may send next
/// (each packet leaves one packet time, at the rate, after the previous one), and the
/// receiver's CNP pacing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DcqcnFlow {
    pub state: State,
    pub next_send_ps: u64,
    pub cnp: CnpPacer,
}

impl DcqcnFlow {
    fn params(t: &super::CcTable) -> &Params {
        t.dcqcn.as_ref().expect("DCQCN flows have DCQCN parameters")
    }
}

impl super::Law for DcqcnFlow {
    #[inline]
    fn pace(&mut self, t: &super::CcTable, bytes: u32, now: u64) -> bool {
        if now < self.next_send_ps {
            return false;
        }
        let st = &mut self.state;
        st.on_sent(DcqcnFlow::params(t), u64::from(bytes), now);
        let gap =
            (u128::from(bytes) * 8_000_000_000_000).div_ceil(u128::from(st.rate_bps().max(1)));
        self.next_send_ps = now + gap as u64;
        true
    }

    #[inline]
    fn next_send_ps(&self) -> Option<u64> {
        Some(self.next_send_ps)
    }

    /// The timers (alpha's decay above all) run from the flow's start.
    fn on_start(&mut self, t: &super::CcTable, now: u64) {
        self.state = State::new(DcqcnFlow::params(t), now);
    }

    #[inline]
    fn on_marked(&mut self, t: &super::CcTable, now: u64) -> bool {
        self.cnp.should_send(DcqcnFlow::params(t), now)
    }

    #[inline]
    fn on_cnp(&mut self, t: &super::CcTable, now: u64) {
        self.state.on_cnp(DcqcnFlow::params(t), now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const G100: u64 = 100_000_000_000;

    /// Parameters with the byte counter and alpha timer out of the way, to drive one
    /// mechanism at a time.
    fn timer_only() -> Params {
        Params {
            byte_counter_bytes: 0,
            alpha_timer_ps: 0,
            ..Params::for_line_rate(G100)
        }
    }

    #[test]
    fn defaults_follow_the_paper_and_scale_the_steps() {
        let p = Params::for_line_rate(G100);
        assert_eq!(p.g, 1.0 / 256.0);
        assert_eq!(p.alpha_timer_ps, 55_000_000);
        assert_eq!(p.rate_timer_ps, 55_000_000);
        assert_eq!(p.byte_counter_bytes, 10_000_000);
        assert_eq!(p.fast_recovery_steps, 5);
        assert_eq!(p.cnp_interval_ps, 50_000_000);
        // 40 Mb/s at 40 Gb/s, scaled to 100 Gb/s.
        assert_eq!(p.rate_ai_bps, 100_000_000);
        assert_eq!(p.rate_hai_bps, 1_000_000_000);
        assert_eq!(
            Params::for_line_rate(40_000_000_000).rate_ai_bps,
            40_000_000
        );
    }

    #[test]
    fn one_cnp_from_line_rate_halves_the_rate() {
        let p = Params::for_line_rate(G100);
        let mut s = State::new(&p, 0);
        assert_eq!(s.rate_bps(), G100);
        assert_eq!(s.alpha(), 1.0);
        s.on_cnp(&p, 1_000);
        // Rc = 100G (1 - 1/2), Rt = 100G, alpha = (1 - g) 1 + g = 1.
        assert_eq!(s.rate_bps(), 50_000_000_000);
        assert_eq!(s.target_bps(), G100);
        assert_eq!(s.alpha(), 1.0);
    }

    #[test]
    fn alpha_after_k_cnps_follows_the_closed_form() {
        // alpha_k = (1-g) alpha_{k-1} + g from alpha_0 = a0 gives
        // alpha_k = 1 - (1 - a0)(1 - g)^k.
        let p = Params::for_line_rate(G100);
        let g: f64 = 1.0 / 256.0;
        let mut s = State::new(&p, 0);
        // Start below 1 so the rise shows: after n alpha periods alpha = a0 = (1-g)^n.
        let n = 100u64;
        s.advance(&p, n * 55_000_000);
        let a0 = (1.0f64 - g).powi(n as i32);
        assert!((s.alpha() - a0).abs() < 1e-12);
        let mut t = n * 55_000_000;
        for k in 1..=20i32 {
            t += 1_000_000; // 1 us apart: no alpha timer expires in between
            s.on_cnp(&p, t);
            let want = 1.0 - (1.0 - a0) * (1.0 - g).powi(k);
            assert!(
                (s.alpha() - want).abs() < 1e-12,
                "k={k}: {} vs {want}",
                s.alpha()
            );
        }
    }

    #[test]
    fn alpha_decays_by_one_minus_g_per_alpha_timer() {
        let p = Params::for_line_rate(G100);
        let g: f64 = 1.0 / 256.0;
        let mut s = State::new(&p, 0);
        s.on_cnp(&p, 0); // alpha = 1, timer restarted at 0
        s.advance(&p, 55_000_000 - 1);
        assert_eq!(s.alpha(), 1.0, "no expiry before K");
        for k in 1..=10i32 {
            s.advance(&p, k as u64 * 55_000_000);
            assert!((s.alpha() - (1.0 - g).powi(k)).abs() < 1e-12);
        }
        // Lazily: 1000 periods at once.
        s.advance(&p, 1_000 * 55_000_000);
        assert!((s.alpha() - (1.0 - g).powi(1_000)).abs() < 1e-12);
    }

    #[test]
    fn fast_recovery_halves_the_gap_to_the_target_per_timer_step() {
        let p = timer_only();
        let mut s = State::new(&p, 0);
        s.on_cnp(&p, 0);
        let target = G100 as f64;
        let rc0 = target / 2.0;
        let f = p.fast_recovery_steps as i32;
        for step in 1..=f {
            s.advance(&p, step as u64 * p.rate_timer_ps);
            // Rt - Rc = (Rt - Rc0) / 2^step; the target does not move.
            let want = target - (target - rc0) * 0.5f64.powi(step);
            assert!((s.current_bps - want).abs() < 1e-3, "step {step}");
            assert_eq!(s.target_bps(), G100);
        }
        // Within (1/2)^F of the target after F steps: 100G - 50G/32.
        assert_eq!(s.rate_bps(), 98_437_500_000);
    }

    #[test]
    fn additive_increase_adds_r_ai_to_the_target_per_step() {
        let p = timer_only();
        let mut s = State::new(&p, 0);
        s.on_cnp(&p, 0);
        s.on_cnp(&p, 0); // second cut: Rt = 50G, Rc = 25G (alpha stays 1)
        assert_eq!(s.target_bps(), 50_000_000_000);
        assert_eq!(s.rate_bps(), 25_000_000_000);
        let f = u64::from(p.fast_recovery_steps);
        s.advance(&p, f * p.rate_timer_ps);
        assert_eq!(
            s.target_bps(),
            50_000_000_000,
            "fast recovery keeps the target"
        );
        let mut rc = 50e9 - 25e9 / 32.0;
        let mut rt = 50e9;
        for k in 1..=10u64 {
            s.advance(&p, (f + k) * p.rate_timer_ps);
            // The byte counter never fires, so min(t, bc) = 0 <= F: additive, not hyper.
            rt += 100e6;
            rc = (rt + rc) / 2.0;
            assert_eq!(s.target_bps(), 50_000_000_000 + k * 100_000_000);
            assert!((s.current_bps - rc).abs() < 1e-3);
        }
    }

    #[test]
    fn hyper_increase_when_both_counters_pass_f() {
        let p = Params {
            alpha_timer_ps: 0,
            byte_counter_bytes: 1_000,
            ..Params::for_line_rate(G100)
        };
        let mut s = State::new(&p, 0);
        s.on_cnp(&p, 0);
        s.on_cnp(&p, 0); // Rt = 50G
                         // Six byte-counter events at t = 0: 5 fast recovery, then 1 additive (bc = 6 > F,
                         // t = 0).
        s.on_sent(&p, 6_000, 0);
        assert_eq!(s.target_bps(), 50_100_000_000);
        // Six timer events: t = 1..=5 additive (bc = 6), t = 6 hyper with i = 6 - 5 = 1.
        s.advance(&p, 5 * p.rate_timer_ps);
        assert_eq!(s.target_bps(), 50_600_000_000);
        s.advance(&p, 6 * p.rate_timer_ps);
        assert_eq!(s.target_bps(), 51_600_000_000);
        // Another byte event: bc = 7, t = 6, i = 1 again.
        s.on_sent(&p, 1_000, 6 * p.rate_timer_ps);
        assert_eq!(s.target_bps(), 52_600_000_000);
    }

    #[test]
    fn cnp_pacer_sends_at_most_one_per_interval() {
        let p = Params::for_line_rate(G100);
        let mut np = CnpPacer::new();
        assert!(np.should_send(&p, 10));
        assert!(!np.should_send(&p, 10));
        assert!(!np.should_send(&p, 10 + 50_000_000 - 1));
        assert!(np.should_send(&p, 10 + 50_000_000));
        assert!(!np.should_send(&p, 10 + 60_000_000));
    }

    #[test]
    fn next_event_is_the_earlier_timer() {
        let p = Params {
            alpha_timer_ps: 30,
            rate_timer_ps: 20,
            ..Params::for_line_rate(G100)
        };
        let mut s = State::new(&p, 100);
        assert_eq!(s.next_event_ps(&p), 120);
        s.advance(&p, 125);
        assert_eq!(s.next_event_ps(&p), 130);
        s.on_cnp(&p, 200);
        assert_eq!(s.next_event_ps(&p), 220);
    }

    #[derive(Clone, Copy, Debug)]
    enum Ev {
        Cnp,
        Sent(u64),
        Advance,
    }

    fn ev() -> impl Strategy<Value = (u64, Ev)> {
        (
            0u64..200_000_000,
            prop_oneof![
                Just(Ev::Cnp),
                (0u64..20_000_000).prop_map(Ev::Sent),
                Just(Ev::Advance)
            ],
        )
    }

    fn run(p: &Params, evs: &[(u64, Ev)], eager: bool) -> Vec<(u64, u64, f64)> {
        let mut s = State::new(p, 0);
        let mut t = 0;
        let mut out = Vec::new();
        for &(dt, e) in evs {
            if eager {
                // Call in at every microsecond on the way: must not change anything.
                let mut u = t;
                while u + 1_000_000 < t + dt {
                    u += 1_000_000;
                    s.advance(p, u);
                }
            }
            t += dt;
            match e {
                Ev::Cnp => s.on_cnp(p, t),
                Ev::Sent(b) => s.on_sent(p, b, t),
                Ev::Advance => s.advance(p, t),
            }
            out.push((s.rate_bps(), s.target_bps(), s.alpha()));
        }
        out
    }

    proptest! {
        #[test]
        fn rate_stays_between_min_and_line_rate(
            evs in proptest::collection::vec(ev(), 0..200),
            line_gbps in 1u64..800,
            min_mbps in 1u64..1000,
        ) {
            let mut p = Params::for_line_rate(line_gbps * 1_000_000_000);
            p.min_rate_bps = min_mbps * 1_000_000;
            p.byte_counter_bytes = 1_000_000;
            p.fast_recovery_steps = 2;
            for (rate, target, alpha) in run(&p, &evs, false) {
                prop_assert!(rate >= p.min_rate_bps && rate <= p.line_rate_bps, "{rate}");
                prop_assert!(target <= p.line_rate_bps);
                prop_assert!((0.0..=1.0).contains(&alpha));
            }
        }

        #[test]
        fn deterministic_and_independent_of_how_often_the_engine_calls_in(
            evs in proptest::collection::vec(ev(), 0..60),
        ) {
            let mut p = Params::for_line_rate(G100);
            p.byte_counter_bytes = 1_000_000;
            let a = run(&p, &evs, false);
            prop_assert_eq!(&a, &run(&p, &evs, false));
            prop_assert_eq!(&a, &run(&p, &evs, true));
        }
    }
}
