//! Design and verify questions on a study: routes, blackholes, Input Balanced Mode (capacity: `inventory.rs`).

use crate::{Error, Study};
use aifabric_routing::aggregation::{blackholes, Aggregation, AggregationTier, BlackholeReport};
use aifabric_routing::bgp::{routes_to, session_states, BgpGraph, RoutesTo, SpeakerId};
use aifabric_routing::fib::{find_prefix, prefixes, route_view, RouteView};
use aifabric_routing::ibm::{input_balanced, ZoneIbm};

impl Study<'_> {
    /// PFC headroom against every switch's buffer ([`aifabric_capacity::buffers`]), for the
    /// built fabric: a design-time check, so every link counts whatever the scenario.
    pub fn buffers(
        &self,
        opts: &aifabric_capacity::buffers::BufferOptions,
    ) -> aifabric_capacity::buffers::BufferReport {
        aifabric_capacity::buffers::buffer_report(self.fabric, opts)
    }

    /// DSF Input Balanced Mode per zone under the scenario.
    pub fn ibm(&self) -> Vec<ZoneIbm> {
        input_balanced(self.fabric, &self.scenario.unusable())
    }

    /// Aggregates and blackholes under the scenario, with `aggregation` made at `tier`.
    pub fn blackholes(
        &self,
        aggregation: Aggregation,
        tier: AggregationTier,
    ) -> Result<BlackholeReport, Error> {
        let (f, s) = (self.fabric, &self.setup);
        let g = BgpGraph::new(f, s.plan);
        let states = session_states(f, &g, &self.scenario);
        blackholes(f, &g, &states, &self.scenario, &s.bgp, aggregation, tier)
            .map_err(Error::runtime_from)
    }

    /// The converged routes at switch `device` toward `prefix` (a rack, `<zone>.rack<N>`), or
    /// toward every rack.
    pub fn routes(&self, device: &str, prefix: Option<&str>) -> Result<Vec<RouteView>, Error> {
        let (f, s) = (self.fabric, &self.setup);
        let dev = f.find_device(device).ok_or_else(|| {
            let hint = f.did_you_mean_device(device).unwrap_or_else(|| {
                let zones: Vec<&str> = f.zones().iter().map(|z| z.name.as_str()).collect();
                let example = (0..f.devices().len())
                    .map(aifabric_model::DeviceId::from_idx)
                    .find(|&d| f.device(d).role != aifabric_model::Role::Gpu)
                    .map(|d| format!(", e.g. `{}`", f.device_name(d)))
                    .unwrap_or_default();
                format!(
                    "a device's name is its zone's ({}{}) and its own{example}",
                    zones.iter().take(6).copied().collect::<Vec<_>>().join(", "),
                    if zones.len() > 6 { ", ..." } else { "" }
                )
            });
            Error::bad_request(format!("--device `{device}`: no such device; {hint}"))
        })?;
        if f.device(dev).role == aifabric_model::Role::Gpu {
            return Err(Error::bad_request(format!(
                "--device `{device}` is a GPU: it does not forward; ask a switch"
            )));
        }
        let wanted = match prefix {
            Some(p) => vec![find_prefix(f, p).ok_or_else(|| {
                let all = prefixes(f);
                match aifabric_model::did_you_mean(p, all.iter().map(|x| x.name.as_str())) {
                    Some(g) => Error::bad_request(format!(
                        "--prefix `{p}`: no such prefix; did you mean `{g}`?"
                    )),
                    None => Error::bad_request(format!(
                        "--prefix `{p}`: no such prefix; prefixes are `<zone>.rack<N>`, e.g. `{}`",
                        all.first().map_or("", |x| x.name.as_str())
                    )),
                }
            })?],
            None => prefixes(f),
        };
        let g = BgpGraph::new(f, s.plan);
        let states = session_states(f, &g, &self.scenario);
        let unusable = self.scenario.unusable();
        let mut out = Vec::with_capacity(wanted.len());
        // Prefixes of one DSF zone share their origin speaker: compute its routes once.
        let mut cached: Option<(SpeakerId, RoutesTo)> = None;
        for p in &wanted {
            let origin = g.rack_speaker(p.rack_switch);
            if cached.as_ref().map(|c| c.0) != Some(origin) {
                let r = routes_to(&g, &states, origin, &s.bgp).map_err(Error::runtime_from)?;
                cached = Some((origin, r));
            }
            let routes = &cached.as_ref().expect("just set").1;
            out.push(route_view(
                f, &g, &states, routes, &s.bgp, &unusable, dev, p,
            ));
        }
        Ok(out)
    }
}
