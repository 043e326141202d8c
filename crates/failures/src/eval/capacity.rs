//! Routed capacity of site pairs and region pairs from their unit loads.

use aifabric_routing::bgp::SessionState;

use super::loads::{Inside, Loads};
use super::{mbps_to_gbps, Evaluator, Workspace};
use std::sync::Arc;

/// Routed capacity, Gb/s per direction, from the largest scaling `lambda` (Mb/s per unit of
/// demand) and the share of demand that has a route; 0 when nothing flows or nothing loads.
fn routed_gbps(lambda: f64, delivered: f64) -> f64 {
    if delivered == 0.0 || !lambda.is_finite() {
        0.0
    } else {
        mbps_to_gbps(lambda * delivered)
    }
}

impl<'f> Evaluator<'f> {
    /// `min capacity / load` over sparse loads already summed into `ws.load` at `ws.touched`;
    /// clears them.
    fn lambda_of_touched(&self, states: &[SessionState], ws: &mut Workspace) -> f64 {
        let mut lambda = f64::INFINITY;
        for &p in &ws.touched {
            let load = std::mem::replace(&mut ws.load[p as usize], 0.0);
            if load > 0.0 {
                let cap = states[self.session_of_pos[p as usize] as usize].mbps as f64;
                lambda = lambda.min(cap / load);
            }
        }
        ws.touched.clear();
        lambda
    }

    fn add_loads(ws: &mut Workspace, entries: &[(u32, f64)], scale: f64) {
        for &(p, x) in entries {
            if ws.load[p as usize] == 0.0 {
                ws.touched.push(p);
            }
            ws.load[p as usize] += x * scale;
        }
    }

    /// `min capacity / load` over the loaded `entries` under `states`.
    pub(super) fn min_ratio(&self, entries: &[(u32, f64)], states: &[SessionState]) -> f64 {
        // Ratios are never NaN (loads are positive), so a plain comparison does what
        // `f64::min` does without its NaN handling, on the sweep's hottest loop.
        let mut lambda = f64::INFINITY;
        for &(p, x) in entries {
            if x > 0.0 {
                let r = states[self.session_of_pos[p as usize] as usize].mbps as f64 / x;
                if r < lambda {
                    lambda = r;
                }
            }
        }
        lambda
    }

    /// Routed capacity of a site pair from its two unit flows, Gb/s per direction.
    pub(super) fn pair_capacity(
        &self,
        l: [&Loads; 2],
        states: &[SessionState],
        ws: &mut Workspace,
    ) -> f64 {
        let delivered = (l[0].delivered + l[1].delivered) / 2.0;
        // A flow's part inside its source site is loaded by that flow alone: the other
        // direction ends where it enters that site. Its minimum comes ready; the rest is
        // scanned.
        let (rest0, rest1) = (&l[0].entries[..], &l[1].entries[..]);
        let mut lambda = l[0].inside_lambda().min(l[1].inside_lambda());
        // The two directions almost never share an entry (each is owned by its sender): take
        // each one's minimum, marking the first's entries to catch a shared one.
        for &(p, _) in rest0 {
            ws.mark.insert(p as usize);
        }
        let shared = rest1.iter().any(|&(p, _)| ws.mark.contains(p as usize));
        for &(p, _) in rest0 {
            ws.mark.set(p as usize, false);
        }
        if shared {
            Self::add_loads(ws, rest0, 1.0);
            Self::add_loads(ws, rest1, 1.0);
            lambda = lambda.min(self.lambda_of_touched(states, ws));
        } else {
            lambda = lambda
                .min(self.min_ratio(rest0, states))
                .min(self.min_ratio(rest1, states));
        }
        routed_gbps(lambda, delivered)
    }

    /// Routed capacity of region pair `r` under a gravity matrix over its site pairs `loads`
    /// (same order as `region_members[r]`). Returns the summed unit loads and Gb/s.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn region_capacity(
        &self,
        r: usize,
        loads: &[[&Loads; 2]],
        states: &[SessionState],
        site_weights: &[f64],
        want_entries: bool,
        ws: &mut Workspace,
    ) -> (Vec<(u32, f64)>, f64) {
        let grav: Vec<f64> = self.region_members[r]
            .iter()
            .map(|&p| {
                let (a, b) = self.site_pairs[p];
                site_weights[a.idx()] * site_weights[b.idx()]
            })
            .collect();
        let total: f64 = grav.iter().sum();
        if total == 0.0 {
            return (Vec::new(), 0.0);
        }
        let mut delivered = 0.0;
        // Inside parts shared by several member flows are added once, with their shares
        // summed.
        let mut parts: Vec<(&Arc<Inside>, f64)> = Vec::new();
        for (l, g) in loads.iter().zip(&grav) {
            let share = g / total;
            for d in l {
                Self::add_loads(ws, &d.entries, share);
                if let Some(p) = &d.inside {
                    match parts.iter_mut().find(|(q, _)| Arc::ptr_eq(q, p)) {
                        Some(x) => x.1 += share,
                        None => parts.push((p, share)),
                    }
                }
            }
            delivered += share * (l[0].delivered + l[1].delivered) / 2.0;
        }
        for (p, share) in parts {
            Self::add_loads(ws, &p.entries, share);
        }
        let entries: Vec<(u32, f64)> = if want_entries {
            ws.touched
                .iter()
                .map(|&p| (p, ws.load[p as usize]))
                .collect()
        } else {
            Vec::new()
        };
        let lambda = self.lambda_of_touched(states, ws);
        (entries, routed_gbps(lambda, delivered))
    }

    /// The loads of site pair `p`: fresh where propagated again, else the healthy ones.
    pub(super) fn loads_of<'a>(
        &'a self,
        fresh: &'a [[Option<Loads>; 2]],
        p: usize,
    ) -> [&'a Loads; 2] {
        [0, 1].map(|d| fresh[p][d].as_ref().unwrap_or(&self.pair_loads[p][d]))
    }

    /// Live GPU-facing Mb/s of each site under speaker `weights`.
    pub(super) fn site_weights(&self, weights: &[u64]) -> Vec<f64> {
        self.site_speakers
            .iter()
            .map(|spk| spk.iter().map(|&v| weights[v.idx()] as f64).sum())
            .collect()
    }

    /// `min capacity / load` of stored sparse loads under `states`, with their delivery.
    pub(super) fn capacity_of_entries(
        &self,
        entries: &[(u32, f64)],
        delivered: f64,
        states: &[SessionState],
    ) -> f64 {
        routed_gbps(self.min_ratio(entries, states), delivered)
    }

    /// Healthy delivery of a region pair's gravity mix (1 unless some rack has no route).
    pub(super) fn healthy_region_delivered(&self, r: usize) -> f64 {
        let sw = self.site_weights(&self.speaker_mbps);
        let (mut num, mut den) = (0.0, 0.0);
        for &p in &self.region_members[r] {
            let (a, b) = self.site_pairs[p];
            let g = sw[a.idx()] * sw[b.idx()];
            let l = &self.pair_loads[p];
            num += g * (l[0].delivered + l[1].delivered) / 2.0;
            den += g;
        }
        if den == 0.0 {
            0.0
        } else {
            num / den
        }
    }
}
