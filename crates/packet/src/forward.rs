//! Steady-state fast-forward: the hybrid engine's packet part ([`FastForward`]).
//!
//! A training collective or a long transfer spends most of its time in a steady state: the
//! same flows, each at a rate its congestion control has settled on, queues moving about a
//! mean. Simulating that stretch packet by packet repeats itself. Wormhole (NSDI 2026)
//! detects such steady states in a packet simulation and jumps over them, reported within
//! about 1% of ns-3 on flow completion times; this part does the same on the engine's own
//! state:
//! - every window (by default 8 base round trips of the longest path) a monitor event reads,
//!   per active flow, the packets it sent for the first time in the window (in a steady
//!   state, its goodput: each new packet is delivered once, and counting sends is finer than
//!   counting ACKs, which cover several packets each);
//! - the state is **steady** when no active flow started within the last `steady_windows`
//!   windows, from each of those windows to the next the flows' packet counts changed by at
//!   most `tolerance` of their sum (a sum over flows: one flow's sprayed packets vary from
//!   window to window, the set's share of the network does not; a flow that finishes frees
//!   bandwidth the others' counts then show), and no flow stalled (every active flow
//!   acknowledged something in each window);
//! - steadiness is judged over windows of 1, 2 and then 4 monitor windows, the finest that is
//!   steady winning: flows sharing a bottleneck trade packets from one window to the next
//!   (an incast's fair share is fair over longer windows);
//! - then every active flow's **rate** is its packets sent over those `steady_windows`
//!   windows, and the clock jumps by `dt`: the longest stretch over which
//!   no flow would run out of unsent packets (each keeps `keep_windows` windows of its own
//!   rate to be simulated, so every flow's end, and the change it causes, is at packet
//!   level) and no flow's start time is reached. Each flow drops `rate x dt` of its unsent
//!   packets (they count as delivered in `dt`), and timed starts move `dt` earlier on the
//!   simulation's clock. Nothing in flight, no queue, timer or congestion-control state is
//!   touched: the simulation resumes from the state it was in, `dt` later.
//!
//! Reported times (flow starts and finishes, the makespan) are on the real clock: the
//! simulation's plus the time skipped before them. Queue statistics and link loads cover the
//! simulated stretches only. The error: flows whose rate drifted inside a skip, within
//! `tolerance` of the set's in a steady window; a flow's FCT moves by at most its rate's
//! error times the time skipped in its life (the hybrid's agreement with the full engine is
//! measured in tests and the README).

use crate::event::Event;
use crate::sim::Sim;
use serde::Serialize;

/// When and how far the hybrid engine fast-forwards steady states (see the module's docs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FastForward {
    /// The monitor's window, picoseconds; 0: eight base round trips of the longest path.
    pub window_ps: u64,
    /// Windows without a change of the active flows before a skip (and over which each
    /// flow's rate is measured).
    pub steady_windows: u32,
    /// Most change of the flows' packet counts between the last two windows, as a share
    /// of their sum, for a steady state.
    pub tolerance: f64,
    /// Windows of its own rate every flow keeps to be simulated after a skip.
    pub keep_windows: u32,
}

impl Default for FastForward {
    fn default() -> Self {
        FastForward {
            window_ps: 0,
            steady_windows: 3,
            tolerance: 0.05,
            keep_windows: 2,
        }
    }
}

/// Round trips of the longest path in the monitor's window by default.
pub(crate) const WINDOW_RTTS: u64 = 8;

/// The longest windows steadiness is judged over, in monitor windows (1, 2, then 4).
const MAX_SCALE: usize = 4;

/// What fast-forwarding did in a run (`PacketResult::hybrid`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HybridStats {
    /// The monitor's window, seconds.
    pub window_s: f64,
    /// Steady states skipped.
    pub skips: u64,
    /// Simulated time skipped, seconds (the makespan's share that was not simulated).
    pub skipped_s: f64,
    /// Data packets not simulated: counted as delivered at their flow's rate.
    pub skipped_packets: u64,
    /// Data packets simulated (sent for the first time).
    pub simulated_packets: u64,
    /// Why nothing could be skipped, when nothing was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_skipped: Option<String>,
}

/// The monitor's state.
#[derive(Default)]
pub(crate) struct Forward {
    pub opts: Option<FastForward>,
    /// The window, picoseconds (resolved).
    pub window_ps: u64,
    /// Time skipped so far: the real clock is the simulation's plus this.
    pub offset_ps: u64,
    /// Per flow: packets sent for the first time at each of the last
    /// `steady_windows x MAX_SCALE + 1` window boundaries (oldest first).
    pub sent_at: Vec<Vec<u32>>,
    /// Skips made, time and data packets skipped.
    pub skips: u64,
    pub skipped_ps: u64,
    pub skipped_packets: u64,
    /// Flows that start at a time: (start, real clock; flow), by time; and the first of
    /// them that may not have started.
    pub timed_starts: Vec<(u64, u32)>,
    pub next_start: usize,
}

impl Forward {
    /// The real clock at simulation time `now`.
    #[inline]
    pub fn real(&self, now: u64) -> u64 {
        now + self.offset_ps
    }
}

impl Sim<'_> {
    /// The monitor's event: read each active flow's progress; in a steady state, skip.
    pub(crate) fn monitor(&mut self) {
        let Some(opts) = self.forward.opts else {
            return;
        };
        let w = self.forward.window_ps;
        let steady_windows = opts.steady_windows.max(2) as usize;
        // This window's boundary, per flow (flows not active read u32::MAX: never steady
        // with them in the window).
        let sent_now: Vec<u32> = self
            .flows
            .iter()
            .map(|f| {
                if f.started && !f.done {
                    f.next_new
                } else {
                    u32::MAX
                }
            })
            .collect();
        let hist = &mut self.forward.sent_at;
        hist.push(sent_now);
        if hist.len() > steady_windows * MAX_SCALE + 1 {
            hist.remove(0);
        }
        // The finest scale whose windows are steady: flows sharing a bottleneck trade
        // packets from one window to the next (an incast's fair share is fair over longer
        // windows), so a window twice or four times as long may be steady where one is not.
        let mut scale = 1;
        let held = hist.len();
        let next_start = self.next_timed_start_real();
        while scale <= MAX_SCALE && held > steady_windows * scale {
            if let Some(dt) = self.steady_skip(opts, steady_windows, scale, next_start) {
                self.skip(dt, steady_windows, scale);
                break;
            }
            scale *= 2;
        }
        if self.done_flows < self.flows.len() {
            self.events.push(self.now + w, Event::Monitor);
        }
    }

    /// The `n + 1` boundaries of `n` windows of `scale` monitor windows each, ending now
    /// (oldest first).
    fn boundaries(&self, n: usize, scale: usize) -> Vec<&[u32]> {
        let hist = &self.forward.sent_at;
        let last = hist.len() - 1;
        (0..=n)
            .map(|j| hist[last - (n - j) * scale].as_slice())
            .collect()
    }

    /// How far to skip, if the state is steady over windows of `scale` monitor windows:
    /// see the module's docs.
    fn steady_skip(
        &self,
        opts: FastForward,
        n: usize,
        scale: usize,
        next_start: Option<u64>,
    ) -> Option<u64> {
        let hist = self.boundaries(n, scale);
        let w = self.forward.window_ps * scale as u64;
        // Per pair of consecutive windows: the flows' packets in the later one, and how
        // much they changed from the earlier one.
        let mut sum = vec![0u64; n - 1];
        let mut change = vec![0u64; n - 1];
        let mut active = 0usize;
        let mut dt = u64::MAX;
        for (k, f) in self.flows.iter().enumerate() {
            if !f.started || f.done {
                continue;
            }
            // Started within the windows: not steady yet.
            if hist[0][k] == u32::MAX {
                return None;
            }
            active += 1;
            for i in 0..n - 1 {
                let older = u64::from(hist[i + 1][k] - hist[i][k]);
                let newer = u64::from(hist[i + 2][k] - hist[i + 1][k]);
                if older == 0 || newer == 0 {
                    return None;
                }
                sum[i] += newer;
                change[i] += newer.abs_diff(older);
            }
            // This flow's rate over the steady windows: packets per window.
            let per_window = f64::from(hist[n][k] - hist[0][k]) / n as f64;
            let keep = per_window * f64::from(opts.keep_windows.max(1));
            let room = f64::from(f.packets - f.next_new) - keep;
            if room <= 0.0 {
                return None;
            }
            dt = dt.min((room / per_window * w as f64) as u64);
        }
        let steady = sum
            .iter()
            .zip(&change)
            .all(|(&s, &c)| c as f64 <= opts.tolerance * s as f64);

        if active == 0 || !steady {
            return None;
        }
        // No timed start inside the skip.
        if let Some(t) = next_start {
            dt = dt.min(t.saturating_sub(self.forward.real(self.now)));
        }
        // A skip shorter than a window is not worth its error.
        (dt >= w).then_some(dt)
    }

    /// The earliest start time (real clock) of a flow that starts at a time and has not.
    fn next_timed_start_real(&mut self) -> Option<u64> {
        let starts = &self.forward.timed_starts;
        let mut i = self.forward.next_start;
        while i < starts.len() && self.flows[starts[i].1 as usize].started {
            i += 1;
        }
        self.forward.next_start = i;
        starts.get(i).map(|&(t, _)| t)
    }

    /// Jump `dt` ahead: each active flow drops the unsent packets its rate sends in `dt`,
    /// timed starts come `dt` closer.
    fn skip(&mut self, dt: u64, n: usize, scale: usize) {
        let w = (self.forward.window_ps * scale as u64) as f64;
        let hist = self.boundaries(n, scale);
        let (first, last) = (hist[0].to_vec(), hist[n].to_vec());
        let mut dropped = 0u64;
        for (k, f) in self.flows.iter_mut().enumerate() {
            if !f.started || f.done {
                continue;
            }
            let per_window = f64::from(last[k] - first[k]) / n as f64;
            let drop = ((per_window * dt as f64 / w) as u32).min(f.packets - f.next_new);
            if drop == 0 {
                continue;
            }
            let left = (f.packets - drop) as usize;
            f.packets -= drop;
            f.skipped += drop;
            f.state.truncate(left);
            f.sent_ps.truncate(left);
            if !f.ev.is_empty() {
                f.ev.truncate(left);
            }
            f.got.truncate(left.div_ceil(64));
            dropped += u64::from(drop);
        }
        // Timed starts move closer on the simulation's clock.
        self.events.shift_starts(self.now, dt);
        let fw = &mut self.forward;
        fw.offset_ps += dt;
        fw.skips += 1;
        fw.skipped_ps += dt;
        fw.skipped_packets += dropped;
        // The history stays: the counts of packets sent are untouched by a skip (only
        // unsent packets go), so the next windows continue the steady ones.
    }

    /// What fast-forwarding did (`None` when it was off).
    pub(crate) fn hybrid_stats(&self) -> Option<HybridStats> {
        self.forward.opts.map(|_| {
            let fw = &self.forward;
            HybridStats {
                window_s: fw.window_ps as f64 * 1e-12,
                skips: fw.skips,
                skipped_s: fw.skipped_ps as f64 * 1e-12,
                skipped_packets: fw.skipped_packets,
                simulated_packets: self.counters.data_new,
                not_skipped: (fw.skips == 0).then(|| {
                    "no steady state long enough: the flows changed (started or finished) or \
                     their rates moved by more than the tolerance within every stretch of \
                     steady windows, or ended within their kept windows"
                        .to_owned()
                }),
            }
        })
    }
}
