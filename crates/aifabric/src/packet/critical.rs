//! The hybrid's cut of a phase: packet by packet where the phase's time is made, fluid
//! elsewhere.
//!
//! A phase ends with its slowest flow. Under `ecmp` every flow's path is known before the
//! run, so the fluid (max-min fair rates as flows leave, [`finish_times`]) tells which flows
//! end last: those within [`WITHIN`] of the slowest are the phase's **critical** flows. The
//! fluid also sorts the others into **levels** (flows it completes within [`LEVEL`] of each
//! other: alone on their path, one of two on a link, ...); of each level holding
//! [`LEVEL_SHARE`] of the flows or more, [`SAMPLES_PER_LEVEL`] flows are **sampled**. The
//! critical and sampled flows are the seeds: the hybrid simulates them packet by packet with
//! every flow that shares a link with one of them (their queues' other senders), on the
//! whole phase's network, each on its path of the whole run. A seed so has every competitor
//! it has in the whole phase; the flows left out share no link with a seed, and take their
//! fluid time scaled by what the packet engine made of their level's seeds
//! ([`left_out_fct_s`]): the fluid is optimistic wherever flows share a link (NSCC takes
//! 5-29% longer than max-min's fair share to move two ECMP flows through one link), and
//! without the samples the cut's per-flow tail was the fluid's (P99 -14% to +7%).
//!
//! What this drops, and its error: a kept flow's competitors on links away from the seeds.
//! Such a flow may finish earlier or later than in the whole phase and so free the link it
//! shares with a seed sooner or later: the cut errs both ways. A flow that the fluid
//! finishes more than [`WITHIN`] early but the packet engine would finish last (a queueing
//! effect the fluid cannot see that costs it more than a tenth of its time) is not
//! simulated, and random events (a straggler) replay differently in the smaller run.
//! Measured against the whole phase (the test below `packet::phases`, 7 cases): makespan
//! -3.9% to +0.8%, per-flow median -1.8% to +2.8%, 99th percentile -5.2% to +0.3%, at
//! 26-46% of 1,024 flows simulated (the samples' cost is per level, not per flow: a Llama 3
//! step on 16,384 GPUs has 28 samples in all, in phases of 32,768 flows). Parsimon (Zhao et
//! al., NSDI 2023) decomposes a whole workload by link in the same spirit; here only one
//! phase's links that matter are kept, together.
//!
//! Inside a DSF zone cells are sprayed over the whole fabric, which the walk tells as two
//! fabric stages per crossing (out of the ingress interface node, into the egress one). When
//! they slow no flow in the fluid (the fabric does not bind) they are left out of the cut,
//! and an even phase (a ring, every flow alike) has every flow critical: the cut then
//! simulates [`MAX_SEEDS`] of them with their links' flows, and they stand for the others
//! (the fabric carries less than in the whole phase: -0.2% to -0.4% measured on
//! `dsf-l1-zone`). A fabric that binds is a link like any other, and every critical flow is
//! simulated.

use aifabric_engine::fluid::finish_times;
use aifabric_engine::FlowSet;
use aifabric_model::DeviceId;
use aifabric_packet::{FabricStage, FlowPaths, PathHop};
use rustc_hash::FxHashMap;

/// Flows the fluid finishes within this fraction of the phase's slowest are critical.
pub(crate) const WITHIN: f64 = 0.1;

/// Critical flows the cut simulates at most when they are alike (all end together in the
/// fluid: an even phase) and no DSF fabric binds; the first by index.
pub(crate) const MAX_SEEDS: u64 = 64;

/// Which flows of a phase the hybrid simulates: the seeds (the critical flows, at most
/// [`MAX_SEEDS`] of them when alike, and the samples of the populous fluid levels) and every
/// flow sharing a link with one.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cut {
    /// Per flow, whether it is simulated.
    pub keep: Vec<bool>,
    /// Per flow, whether it is simulated with every flow that shares a link with it (its
    /// packet time is then a fair sample of the whole phase's: [`left_out_fct_s`]).
    pub complete: Vec<bool>,
    /// Critical flows simulated (the fluid's last within [`WITHIN`]).
    pub critical: u64,
    /// Flows run as samples of their fluid levels ([`SAMPLES_PER_LEVEL`]), besides the
    /// critical ones.
    pub sampled: u64,
    /// Critical flows left to the fluid, beyond the [`MAX_SEEDS`] slowest.
    pub critical_fluid: u64,
    /// Per flow, its completion time in the fluid, seconds: its bytes through the fluid's
    /// fair shares from the phase's start, then its base round trip (the last packet out
    /// and its ACK back). A flow left out of the cut takes it scaled as its level's seeds
    /// fared ([`left_out_fct_s`]).
    pub fluid_fct_s: Vec<f64>,
}

/// Flows sampled at each fluid level (`cut`), run with their links' flows: what the
/// level's left-out flows take from the packet engine. At 3 samples one unlucky flow moves
/// a level's median by 10%; at 4 and 6 the per-flow medians of the test in
/// `packet::phases` are within 3% of the whole phase's and the 99th percentiles within 5.2%
/// and 7.4%, with 26-46% and 34-54% of its 1,024 flows simulated (the cost is per level,
/// not per flow).
pub(crate) const SAMPLES_PER_LEVEL: usize = 4;

/// A fluid level is sampled when it holds at least this share of the phase's flows (the
/// levels that make a median or a 99th percentile).
pub(crate) const LEVEL_SHARE: f64 = 0.02;

/// A fluid level is sampled when it holds at least this many flows too (four times its
/// samples): a smaller one is left to the nearest sampled level, or run whole if it holds a
/// critical flow's neighbours.
pub(crate) const LEVEL_FLOWS_MIN: usize = 4 * SAMPLES_PER_LEVEL;

/// Width of a fluid level, a bin of the logarithm of the fluid completion time: flows in one
/// bin complete within about this factor of each other, so they share the fluid's bottleneck
/// share (alone, one of two, ...) up to their paths' base round trips (a fixed bin: two flows
/// 1% apart may fall on either side of its edge).
const LEVEL: f64 = 0.05;

/// The fluid level of a flow that the fluid completes in `fct_s` seconds.
fn level(fct_s: f64) -> i64 {
    (fct_s.ln() / LEVEL.ln_1p()).round() as i64
}

/// The completion times of the flows `keep` leaves out, in their order, seconds: each one's
/// fluid time scaled by what the packet engine made of the simulated flows at the same fluid
/// level, in the same run.
///
/// The fluid is optimistic where flows share a bottleneck (NSCC converges to the fair share
/// slower than max-min does: two ECMP flows on one link take 5-29% longer than the fluid's
/// twice the bytes at rate) and a little where they are alone (a window's ramp: about 3%).
/// The cut's seeds (the critical flows and the samples of each populous level) run with
/// every flow on their links: they are the phase's flows as the whole run would have them.
/// At each level (fluid times within [`LEVEL`] of each other), the left-out flows take those
/// flows' ratios of packet to fluid time, spread evenly over their empirical
/// distribution in flow order (the k-th of m left-out flows takes its (k + 1/2)/m
/// quantile), so that the level's left-out flows have the distribution its simulated ones
/// have. A level without a seed takes the nearest level's, however far (the lower one on a
/// tie). No left-out flow ends after the slowest simulated one (the cut's premise: the
/// critical flows end the phase), unless a simulated flow did not finish (a run stopped by
/// `end_ps`): then nothing is capped, and a flow whose time passes the end stays unfinished.
/// `simulated_s` is the packet run's completion times of the kept flows, in their order.
pub(crate) fn left_out_fct_s(cut: &Cut, simulated_s: &[Option<f64>]) -> Vec<f64> {
    let (fluid_fct_s, keep) = (&cut.fluid_fct_s, &cut.keep);
    let mut ratios: std::collections::BTreeMap<i64, Vec<f64>> = Default::default();
    let kept = keep.iter().enumerate().filter(|(_, &k)| k).map(|(i, _)| i);
    let mut slowest = 0.0f64;
    for (i, t) in kept.zip(simulated_s) {
        let (Some(t), f) = (*t, fluid_fct_s[i]) else {
            // A simulated flow unfinished (the run stopped early): no cap.
            slowest = f64::INFINITY;
            continue;
        };
        slowest = slowest.max(t);
        if cut.complete[i] && f.is_finite() && f > 0.0 {
            ratios.entry(level(f)).or_default().push(t / f);
        }
    }
    for r in ratios.values_mut() {
        r.sort_unstable_by(f64::total_cmp);
    }
    // The left-out flows by level, in flow order; each takes its quantile of the level's.
    let left: Vec<usize> = (0..keep.len()).filter(|&i| !keep[i]).collect();
    let mut at: std::collections::BTreeMap<i64, Vec<usize>> = Default::default();
    for (j, &i) in left.iter().enumerate() {
        let f = fluid_fct_s[i];
        if f.is_finite() && f > 0.0 {
            at.entry(level(f)).or_default().push(j);
        }
    }
    let mut out: Vec<f64> = left.iter().map(|&i| fluid_fct_s[i]).collect();
    for (lv, js) in at {
        let near = ratios
            .range(..=lv)
            .next_back()
            .into_iter()
            .chain(ratios.range(lv + 1..).next())
            .min_by_key(|(k, _)| (**k - lv).abs());
        let Some((_, r)) = near else {
            continue;
        };
        let m = js.len();
        for (k, &j) in js.iter().enumerate() {
            let q = ((2 * k + 1) * r.len()) / (2 * m);
            let t = out[j] * r[q.min(r.len() - 1)];
            out[j] = if slowest > 0.0 { t.min(slowest) } else { t };
        }
    }
    out
}

/// Links as compact resources, their capacity in bytes per second: the paths' links, then
/// the DSF fabric stages.
#[derive(Default)]
struct Links {
    local: FxHashMap<u32, u32>,
    stages: FxHashMap<(DeviceId, bool), u32>,
    cap: Vec<f64>,
}

impl Links {
    fn hop(&mut self, h: &PathHop) -> u32 {
        let cap = &mut self.cap;
        *self.local.entry(h.resource.get()).or_insert_with(|| {
            cap.push(h.rate_bps as f64 / 8.0);
            cap.len() as u32 - 1
        })
    }

    fn stage(&mut self, s: &FabricStage) -> u32 {
        let cap = &mut self.cap;
        *self.stages.entry((s.node, s.into)).or_insert_with(|| {
            cap.push(s.rate_bps as f64 / 8.0);
            cap.len() as u32 - 1
        })
    }
}

/// The cut of flows on `paths` carrying `bytes` each.
pub(crate) fn cut(paths: &FlowPaths, bytes: &[u64]) -> Cut {
    let mut links = Links::default();
    // The fluid runs the data over its links (`plain`) and over them and the fabric stages
    // it crosses (`staged`); a flow touches its data's links and its ACKs'.
    let (mut plain, mut staged) = (FlowSet::new(), FlowSet::new());
    let mut touches: Vec<Vec<u32>> = Vec::with_capacity(paths.len());
    let mut stage_ids: Vec<Vec<u32>> = Vec::with_capacity(paths.len());
    let mut uses: Vec<(u32, f64)> = Vec::new();
    let mut any_stage = false;
    for k in 0..paths.len() {
        uses.clear();
        uses.extend(paths.path(k).iter().map(|h| (links.hop(h), 1.0)));
        plain.push(&uses);
        let mut t: Vec<u32> = uses.iter().map(|u| u.0).collect();
        t.extend(paths.ack_path(k).iter().map(|h| links.hop(h)));
        touches.push(t);
        let s: Vec<u32> = paths
            .fabric_stages(k)
            .iter()
            .filter(|s| s.rate_bps > 0)
            .map(|s| links.stage(s))
            .collect();
        any_stage |= !s.is_empty();
        uses.extend(s.iter().map(|&r| (r, 1.0)));
        staged.push(&uses);
        stage_ids.push(s);
    }
    let bytes: Vec<f64> = bytes.iter().map(|&b| b as f64).collect();
    let mut end = finish_times(&links.cap, &plain, &bytes);
    // A fabric that slows a flow in the fluid is a shared link like any other: its flows
    // are kept together, and every critical flow is simulated (fewer would load it less).
    let mut fabric_binds = false;
    if any_stage {
        let with = finish_times(&links.cap, &staged, &bytes);
        fabric_binds = with
            .iter()
            .zip(&end)
            .any(|(w, e)| w.is_finite() != e.is_finite() || *w > e * (1.0 + 1e-9));
        if fabric_binds {
            end = with;
            for (t, s) in touches.iter_mut().zip(stage_ids) {
                t.extend(s);
            }
        }
    }
    let slowest = end
        .iter()
        .copied()
        .filter(|t| t.is_finite())
        .fold(0.0, f64::max);
    let critical: Vec<bool> = end
        .iter()
        .map(|&t| !t.is_finite() || t >= (1.0 - WITHIN) * slowest)
        .collect();
    // The seeds: the critical flows; or, when they are alike (an even phase: every critical
    // flow ends at the same time in the fluid, as inside a DSF zone whose fabric does not
    // bind) and more than a few, the first few, which stand for the others. Critical flows
    // that end apart (ECMP collisions in a Clos) all run.
    let mut seed = critical.clone();
    let all_critical = critical.iter().filter(|&&c| c).count() as u64;
    let alike = end
        .iter()
        .zip(&critical)
        .filter(|(_, &c)| c)
        .all(|(&t, _)| t.is_finite() && (slowest - t) <= 1e-9 * slowest);
    if all_critical > MAX_SEEDS && alike && !fabric_binds {
        // All end together: the first by index.
        for k in (0..end.len())
            .filter(|&k| critical[k])
            .skip(MAX_SEEDS as usize)
        {
            seed[k] = false;
        }
    }
    // Samples: at each fluid level holding at least [`LEVEL_SHARE`] of the flows and
    // [`LEVEL_FLOWS_MIN`], [`SAMPLES_PER_LEVEL`] of its flows, evenly spaced in flow order,
    // run with their links' flows as the seeds are: their packet times are the level's
    // (`left_out_fct_s`).
    let mut at: std::collections::BTreeMap<i64, Vec<usize>> = Default::default();
    for (k, &t) in end.iter().enumerate() {
        if t.is_finite() && t > 0.0 && !critical[k] {
            at.entry(level(t + paths.base_rtt_s(k)))
                .or_default()
                .push(k);
        }
    }
    let mut sampled = 0u64;
    for ks in at.values() {
        if (ks.len() as f64) < LEVEL_SHARE * end.len() as f64 || ks.len() < LEVEL_FLOWS_MIN {
            continue;
        }
        for j in 0..SAMPLES_PER_LEVEL {
            let k = ks[(2 * j + 1) * ks.len() / (2 * SAMPLES_PER_LEVEL)];
            sampled += u64::from(!seed[k]);
            seed[k] = true;
        }
    }
    // The seeds and every flow whose data or ACKs touch one of their links.
    let mut hot = vec![false; links.cap.len()];
    for (k, _) in seed.iter().enumerate().filter(|(_, &c)| c) {
        for &r in &touches[k] {
            hot[r as usize] = true;
        }
    }
    let keep: Vec<bool> = (0..paths.len())
        .map(|k| seed[k] || touches[k].iter().any(|&r| hot[r as usize]))
        .collect();
    // A kept flow is a fair sample of the packet engine when every flow on its links is
    // kept too: its competitors are all there.
    let mut short = vec![false; links.cap.len()];
    for k in (0..keep.len()).filter(|&k| !keep[k]) {
        for &r in &touches[k] {
            short[r as usize] = true;
        }
    }
    let complete: Vec<bool> = (0..keep.len())
        .map(|k| keep[k] && !touches[k].iter().any(|&r| short[r as usize]))
        .collect();
    let simulated = (0..keep.len()).filter(|&k| critical[k] && keep[k]).count() as u64;
    let fluid_fct_s = end
        .iter()
        .enumerate()
        .map(|(k, &t)| t + paths.base_rtt_s(k))
        .collect();
    Cut {
        keep,
        complete,
        critical: simulated,
        sampled,
        critical_fluid: all_critical - simulated,
        fluid_fct_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut_of(fluid_fct_s: Vec<f64>, keep: Vec<bool>, complete: Vec<bool>) -> Cut {
        Cut {
            keep,
            complete,
            critical: 0,
            sampled: 0,
            critical_fluid: 0,
            fluid_fct_s,
        }
    }

    /// Left-out flows take their level's samples' ratios, spread over the samples'
    /// distribution; a level without a sample takes the nearest's; an incomplete kept flow
    /// (its links' other flows not all run) is no sample; nothing ends after the slowest
    /// simulated flow.
    #[test]
    fn left_out_flows_take_their_levels_samples() {
        // Level 100 us: samples at 1.0x and 1.2x, four left out. Level 200 us: one sample
        // at 1.1x, one incomplete kept flow at 0.5x (ignored), two left out. Level 400 us:
        // no sample, one left out: the nearest level's 1.1x (440 us), capped at the slowest
        // simulated flow's 300 us.
        let us = 1e-6;
        let fluid = [
            100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 200.0, 200.0, 200.0, 200.0, 400.0,
        ];
        let keep = [
            true, true, false, false, false, false, true, true, false, false, false,
        ];
        let complete = [
            true, true, false, false, false, false, true, false, false, false, false,
        ];
        let c = cut_of(
            fluid.iter().map(|t| t * us).collect(),
            keep.to_vec(),
            complete.to_vec(),
        );
        let simulated = [
            Some(100.0 * us),
            Some(120.0 * us),
            Some(220.0 * us),
            Some(300.0 * us),
        ];
        let got: Vec<f64> = left_out_fct_s(&c, &simulated)
            .iter()
            .map(|t| (t / us * 1e6).round() / 1e6)
            .collect();
        assert_eq!(got, [100.0, 100.0, 120.0, 120.0, 220.0, 220.0, 300.0]);
        // A simulated flow unfinished (a run stopped early): nothing is capped.
        let stopped = [Some(100.0 * us), Some(120.0 * us), Some(220.0 * us), None];
        let last = left_out_fct_s(&c, &stopped)[6] / us;
        assert!((last - 440.0).abs() < 1e-6, "{last}");
        // Without a complete sample, the fluid's times stand.
        let bare = cut_of(c.fluid_fct_s.clone(), keep.to_vec(), vec![false; 11]);
        let left: Vec<f64> = (0..11)
            .filter(|&i| !keep[i])
            .map(|i| fluid[i] * us)
            .collect();
        assert_eq!(left_out_fct_s(&bare, &simulated), left);
    }
}
