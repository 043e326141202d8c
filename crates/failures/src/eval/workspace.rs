//! Per-thread scratch memory ([`Workspace`]), reused across scenarios.

use aifabric_capacity::maxflow::FlowNetwork;
use aifabric_routing::bgp::{RoutesTo, SessionState, SpeakerId};
use fixedbitset::FixedBitSet;

use super::Evaluator;

/// Per-thread working memory, reused across scenarios.
pub struct Workspace {
    pub(super) states: Vec<SessionState>,
    pub(super) flow: Vec<f64>,
    pub(super) load: Vec<f64>,
    pub(super) touched: Vec<u32>,
    pub(super) buckets: Vec<Vec<SpeakerId>>,
    pub(super) received: Vec<aifabric_routing::ucmp::Path>,
    pub(super) weights: Vec<f64>,
    pub(super) hops: Vec<(usize, SpeakerId, f64)>,
    pub(super) boundary: Vec<SpeakerId>,
    pub(super) mark: FixedBitSet,
    pub(super) nets: Vec<FlowNetwork>,
    /// Buffers of updated routes, given back after each scenario (see `RoutesTo::clone_from`).
    pub(super) spare_routes: Vec<RoutesTo>,
}

impl<'f> Evaluator<'f> {
    /// Working memory for one thread.
    pub fn workspace(&self) -> Workspace {
        Workspace {
            states: self.healthy.clone(),
            flow: vec![0.0; self.g.speakers.len()],
            load: vec![0.0; self.g.adj_len()],
            touched: Vec::new(),
            buckets: Vec::new(),
            received: Vec::new(),
            weights: Vec::new(),
            hops: Vec::new(),
            boundary: Vec::new(),
            mark: FixedBitSet::with_capacity(self.g.adj_len()),
            nets: self.nets.iter().map(|m| m.net.clone()).collect(),
            spare_routes: Vec::new(),
        }
    }
}
