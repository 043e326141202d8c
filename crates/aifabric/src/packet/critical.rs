//! The hybrid's cut of a phase: packet by packet where the phase's time is made, fluid
//! elsewhere.
//!
//! A phase ends with its slowest flow. Under `ecmp` every flow's path is known before the
//! run, so the fluid (max-min fair rates as flows leave, [`finish_times`]) tells which flows
//! end last: those within [`WITHIN`] of the slowest are the phase's **critical** flows. The
//! hybrid simulates them packet by packet with every flow that shares a link with one of
//! them (their queues' other senders), on the whole phase's network, each on its path of
//! the whole run; the flows left out share no link with a critical flow.
//!
//! What this drops, and its error: a kept flow's competitors on links away from the critical
//! flows. Such a flow may finish earlier or later than in the whole phase and so free the
//! critical link it shares sooner or later: the cut errs both ways. A flow that the fluid
//! finishes more than [`WITHIN`] early but the packet engine would finish last (a queueing
//! effect the fluid cannot see that costs it more than a tenth of its time) is not
//! simulated, and random events (a straggler) replay differently in the smaller run.
//! Measured against the whole phase (the test below `packet::phases`): -7.3% to +5.4% over
//! 7 cases, mean -0.9%. Parsimon (Zhao et al., NSDI 2023) decomposes a whole workload by
//! link in the same spirit; here only one phase's links that matter are kept, together.
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

/// Which flows of a phase the hybrid simulates: the critical ones (at most [`MAX_SEEDS`])
/// and every flow sharing a link with one.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cut {
    /// Per flow, whether it is simulated.
    pub keep: Vec<bool>,
    /// Critical flows simulated (the fluid's last within [`WITHIN`]).
    pub critical: u64,
    /// Critical flows left to the fluid, beyond the [`MAX_SEEDS`] slowest.
    pub critical_fluid: u64,
    /// Per flow, its completion time in the fluid, seconds: its bytes through the fluid's
    /// fair shares from the phase's start, then its base round trip (the last packet out
    /// and its ACK back). What a flow left out of the cut is taken to take.
    pub fluid_fct_s: Vec<f64>,
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
    let simulated = (0..keep.len()).filter(|&k| critical[k] && keep[k]).count() as u64;
    let fluid_fct_s = end
        .iter()
        .enumerate()
        .map(|(k, &t)| t + paths.base_rtt_s(k))
        .collect();
    Cut {
        keep,
        critical: simulated,
        critical_fluid: all_critical - simulated,
        fluid_fct_s,
    }
}
