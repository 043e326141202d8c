//! The max-flow bound: one flow network per region pair, re-solved only when needed.

use aifabric_capacity::maxflow::{FlowNetwork, FlowNetworkBuilder};
use aifabric_routing::bgp::SessionState;

use super::{mbps_to_gbps, Evaluator, Workspace};

/// A region pair's max-flow network and where its scenario-dependent arcs are.
#[derive(Clone, Debug)]
pub(super) struct MaxflowNet {
    pub(super) net: FlowNetwork,
    /// Flow over each builder link in the healthy maximum flow.
    pub(super) healthy_flow: Vec<u64>,
    /// Builder link index of the source arc (region a) and sink arc (region b) per speaker.
    pub(super) src_arc: Vec<Option<u32>>,
    pub(super) sink_arc: Vec<Option<u32>>,
}

impl<'f> Evaluator<'f> {
    /// The max-flow network of region pair `r`: speakers, sessions as full-duplex arcs, a
    /// super source feeding region a's rack speakers and a super sink fed by region b's.
    pub(super) fn maxflow_net(&self, r: usize) -> MaxflowNet {
        self.maxflow_net_with(r, &self.healthy, &self.speaker_mbps)
    }

    pub(super) fn maxflow_net_with(
        &self,
        r: usize,
        states: &[SessionState],
        weights: &[u64],
    ) -> MaxflowNet {
        let (ra, rb) = self.region_pairs[r];
        let n = self.g.speakers.len();
        let (s, t) = (n as u32, n as u32 + 1);
        let mut b = FlowNetworkBuilder::new(n + 2);
        for (sid, &(x, y)) in self.g.sessions.iter().enumerate() {
            b.add_undirected(x.get(), y.get(), states[sid].mbps);
        }
        let mut next = self.g.sessions.len() as u32;
        let (mut src_arc, mut sink_arc) = (vec![None; n], vec![None; n]);
        for (site, spk) in self.site_speakers.iter().enumerate() {
            let region = self.site_region[site];
            for &v in spk {
                let w = weights[v.idx()];
                if region == ra {
                    b.add_arc(s, v.get(), w);
                    src_arc[v.idx()] = Some(next);
                    next += 1;
                } else if region == rb {
                    b.add_arc(v.get(), t, w);
                    sink_arc[v.idx()] = Some(next);
                    next += 1;
                }
            }
        }
        MaxflowNet {
            net: b.build(),
            healthy_flow: Vec::new(),
            src_arc,
            sink_arc,
        }
    }

    pub(super) fn maxflows(
        &self,
        changed: &[aifabric_routing::bgp::SessionId],
        weights: &[u64],
        states: &[SessionState],
        ws: &mut Workspace,
    ) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.nets.len());
        for ((m, net), &healthy) in self
            .nets
            .iter()
            .zip(ws.nets.iter_mut())
            .zip(&self.healthy_maxflow_gbps)
        {
            // Capacities only go down. If every lowered arc still fits its healthy flow, that
            // flow is still feasible and still maximal.
            let fits = changed
                .iter()
                .all(|&s| m.healthy_flow[s.idx()] <= states[s.idx()].mbps)
                && weights
                    .iter()
                    .zip(&self.speaker_mbps)
                    .enumerate()
                    .filter(|(_, (w, h))| w != h)
                    .all(|(v, (&w, _))| {
                        [m.src_arc[v], m.sink_arc[v]]
                            .into_iter()
                            .flatten()
                            .all(|a| m.healthy_flow[a as usize] <= w)
                    });
            if fits {
                out.push(healthy);
                continue;
            }
            let mut restore: Vec<(usize, u64, u64)> = Vec::new();
            for &s in changed {
                let c = states[s.idx()].mbps;
                net.set_link_capacity(s.idx(), c, c);
                let h = self.healthy[s.idx()].mbps;
                restore.push((s.idx(), h, h));
            }
            for (v, (&w, &h)) in weights.iter().zip(&self.speaker_mbps).enumerate() {
                if w == h {
                    continue;
                }
                for a in [m.src_arc[v], m.sink_arc[v]].into_iter().flatten() {
                    net.set_link_capacity(a as usize, w, 0);
                    restore.push((a as usize, h, 0));
                }
            }
            let n = net.num_nodes() as u32;
            out.push(mbps_to_gbps(net.max_flow(n - 2, n - 1) as f64));
            for (i, a, b) in restore {
                net.set_link_capacity(i, a, b);
            }
        }
        out
    }
}
