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

use aifabric_engine::fluid::finish_times;
use aifabric_engine::FlowSet;
use aifabric_packet::{FlowPaths, PathHop};
use rustc_hash::FxHashMap;

/// Flows the fluid finishes within this fraction of the phase's slowest are critical.
pub(crate) const WITHIN: f64 = 0.1;

/// Which flows of a phase the hybrid simulates: the critical ones and every flow sharing
/// a link with one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cut {
    /// Per flow, whether it is simulated.
    pub keep: Vec<bool>,
    /// Critical flows (the fluid's last within [`WITHIN`]).
    pub critical: u64,
}

/// The cut of flows on `paths` carrying `bytes` each.
pub(crate) fn cut(paths: &FlowPaths, bytes: &[u64]) -> Cut {
    // Links as compact resources, their capacity in bytes per second.
    let mut local: FxHashMap<u32, u32> = FxHashMap::default();
    let mut cap: Vec<f64> = Vec::new();
    let mut id = |h: &PathHop| {
        *local.entry(h.resource.get()).or_insert_with(|| {
            cap.push(h.rate_bps as f64 / 8.0);
            cap.len() as u32 - 1
        })
    };
    // The fluid runs the data; a flow touches its data's links and its ACKs'.
    let mut flows = FlowSet::new();
    let mut touches: Vec<Vec<u32>> = Vec::with_capacity(paths.len());
    let mut uses: Vec<(u32, f64)> = Vec::new();
    for k in 0..paths.len() {
        uses.clear();
        uses.extend(paths.path(k).iter().map(|h| (id(h), 1.0)));
        flows.push(&uses);
        let mut t: Vec<u32> = uses.iter().map(|u| u.0).collect();
        t.extend(paths.ack_path(k).iter().map(&mut id));
        touches.push(t);
    }
    let bytes: Vec<f64> = bytes.iter().map(|&b| b as f64).collect();
    let end = finish_times(&cap, &flows, &bytes);
    let slowest = end
        .iter()
        .copied()
        .filter(|t| t.is_finite())
        .fold(0.0, f64::max);
    let critical: Vec<bool> = end
        .iter()
        .map(|&t| !t.is_finite() || t >= (1.0 - WITHIN) * slowest)
        .collect();
    // The critical flows and every flow whose data or ACKs touch one of their links.
    let mut hot = vec![false; cap.len()];
    for (k, _) in critical.iter().enumerate().filter(|(_, &c)| c) {
        for &r in &touches[k] {
            hot[r as usize] = true;
        }
    }
    let keep = (0..paths.len())
        .map(|k| critical[k] || touches[k].iter().any(|&r| hot[r as usize]))
        .collect();
    Cut {
        keep,
        critical: critical.iter().filter(|&&c| c).count() as u64,
    }
}
