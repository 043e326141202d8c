//! The reference evaluation: one scenario recomputed from scratch, without shortcuts.

use aifabric_model::*;
use aifabric_routing::bgp::{self, routes_to_many, NotConverged};

use super::loads::Loads;
use super::standing::{gpu_connected, is_rack, rack_weight, RackStanding};
use super::{mbps_to_gbps, Down, Evaluator, Outcome};

impl<'f> Evaluator<'f> {
    /// Evaluate one scenario from scratch, with none of the shortcuts of
    /// [`Evaluator::evaluate`]: every session state, rack and GPU recomputed from the mask,
    /// routes toward every site converged anew, every flow propagated, max-flow networks
    /// rebuilt. Slow; the reference the incremental path is tested against.
    pub fn evaluate_from_scratch(&self, down: &Down) -> Result<Outcome, NotConverged> {
        let f = self.f;
        let mut scenario = Scenario::healthy(f);
        scenario.failed = down.mask.clone();
        let states = bgp::session_states(f, &self.g, &scenario);
        let mut weights = vec![0u64; self.g.speakers.len()];
        let none = &self.base.mask;
        let mut gpus_disconnected = 0;
        for (i, d) in f.devices().iter().enumerate() {
            let id = DeviceId::from_idx(i);
            if let (true, Some(v)) = (is_rack(d.role), self.g.speaker(id)) {
                weights[v.idx()] += rack_weight(f, id, &down.mask);
            }
            if d.role == Role::Gpu
                && gpu_connected(f, id, none)
                && !gpu_connected(f, id, &down.mask)
            {
                gpus_disconnected += 1;
            }
        }
        let cfg = self.routes.first().map(|r| r.config()).unwrap_or_default();
        let routes = self
            .site_speakers
            .iter()
            .map(|o| routes_to_many(&self.g, &states, o, &cfg))
            .collect::<Result<Vec<_>, _>>()?;
        let mut ws = self.workspace();
        let loads: Vec<[Loads; 2]> = self
            .site_pairs
            .iter()
            .map(|&(a, b)| {
                [
                    self.flow(a, b, &routes[b.idx()], &states, &weights, &mut ws),
                    self.flow(b, a, &routes[a.idx()], &states, &weights, &mut ws),
                ]
            })
            .collect();
        let site_pair_gbps = loads
            .iter()
            .map(|l| self.pair_capacity([&l[0], &l[1]], &states, &mut ws))
            .collect();
        let region_pair_gbps = (0..self.region_pairs.len())
            .map(|r| {
                let refs: Vec<[&Loads; 2]> = self.region_members[r]
                    .iter()
                    .map(|&p| [&loads[p][0], &loads[p][1]])
                    .collect();
                let sw = self.site_weights(&weights);
                self.region_capacity(r, &refs, &states, &sw, false, &mut ws)
                    .1
            })
            .collect();
        let region_maxflow_gbps = (0..self.region_pairs.len())
            .map(|r| {
                let mut m = self.maxflow_net_with(r, &states, &weights);
                let n = m.net.num_nodes() as u32;
                mbps_to_gbps(m.net.max_flow(n - 2, n - 1) as f64)
            })
            .collect();
        let down_links = down.down_links(f);
        let routes: Vec<_> = routes.into_iter().map(Some).collect();
        let gpus_isolated = gpus_disconnected
            + self.gpus_without_a_way_out(&routes, &RackStanding::new(f, &down.mask, &[]));
        Ok(Outcome {
            site_pair_gbps,
            region_pair_gbps,
            region_maxflow_gbps,
            gpus_disconnected,
            gpus_isolated,
            tiers: self
                .ledger
                .changes(&self.ledger.without(f, down_links.iter().copied())),
        })
    }
}
