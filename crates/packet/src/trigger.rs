//! Triggers (htsim's semantics, as in the flow engine): flows waiting on a trigger start
//! when it fires; a oneshot fires on its first activation, a barrier on its n-th, a
//! multishot starts one waiting flow per activation.

use crate::ids::FlowId;
use crate::sim::Sim;
use aifabric_workload::traffic::TriggerKind;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// The flows waiting on each trigger, and what the triggers have seen.
#[derive(Default)]
pub(crate) struct Triggers {
    pub waiting: FxHashMap<u32, VecDeque<FlowId>>,
    pub kinds: FxHashMap<u32, TriggerKind>,
    pub activations: FxHashMap<u32, u32>,
    pub fired: FxHashMap<u32, bool>,
}

impl Triggers {
    /// One activation of trigger `t`: the flows it starts, in order.
    fn activate(&mut self, t: u32) -> Vec<FlowId> {
        let kind = self.kinds.get(&t).copied().unwrap_or(TriggerKind::Oneshot);
        let fire_all = match kind {
            TriggerKind::Oneshot => !self.fired.insert(t, true).unwrap_or(false),
            TriggerKind::Barrier(n) => {
                let a = self.activations.entry(t).or_insert(0);
                *a += 1;
                *a == n
            }
            TriggerKind::Multishot => {
                return self
                    .waiting
                    .get_mut(&t)
                    .and_then(VecDeque::pop_front)
                    .into_iter()
                    .collect();
            }
        };
        if fire_all {
            self.waiting.remove(&t).map(Vec::from).unwrap_or_default()
        } else {
            Vec::new()
        }
    }
}

impl Sim<'_> {
    /// One activation of trigger `t`, starting the flows it releases.
    pub(crate) fn activate(&mut self, t: u32) {
        for fi in self.triggers.activate(t) {
            self.start_flow(fi);
        }
    }
}
