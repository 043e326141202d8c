//! `aifabric routes`: resolve names, run the control plane once per origin, collect views.

use crate::Failure;
use aifabric_model::{Fabric, Scenario};
use aifabric_routing::bgp::{routes_to, session_states, AsnPlan, BgpConfig, BgpGraph};
use aifabric_routing::fib::{find_prefix, prefixes, route_view, RouteView};

pub fn compute(
    f: &Fabric,
    scenario: &Scenario,
    plan: &AsnPlan,
    cfg: &BgpConfig,
    device: &str,
    prefix: Option<&str>,
) -> Result<Vec<RouteView>, Failure> {
    let dev = f.find_device(device).ok_or_else(|| {
        Failure::BadArgument(format!(
            "--device `{device}`: no such device (`aifabric build SPEC --out model.json` lists them)"
        ))
    })?;
    if f.device(dev).role == aifabric_model::Role::Gpu {
        return Err(Failure::BadArgument(format!(
            "--device `{device}` is a GPU: it does not forward; ask a switch"
        )));
    }
    let wanted = match prefix {
        Some(p) => vec![find_prefix(f, p).ok_or_else(|| {
            Failure::BadArgument(format!(
                "--prefix `{p}`: no such prefix; prefixes are `<zone>.rack<N>`, e.g. `{}`",
                prefixes(f).first().map_or("", |x| x.name.as_str())
            ))
        })?],
        None => prefixes(f),
    };
    let g = BgpGraph::new(f, *plan);
    let states = session_states(f, &g, scenario);
    let unusable = scenario.unusable();
    let mut out = Vec::with_capacity(wanted.len());
    // Prefixes of one DSF zone share their origin speaker: compute its routes once.
    let mut cached: Option<(u32, aifabric_routing::bgp::RoutesTo)> = None;
    for p in &wanted {
        let origin = g.speaker_of[p.rack_switch.idx()];
        if cached.as_ref().map(|c| c.0) != Some(origin) {
            let r =
                routes_to(&g, &states, origin, cfg).map_err(|e| Failure::Runtime(e.to_string()))?;
            cached = Some((origin, r));
        }
        let routes = &cached.as_ref().expect("just set").1;
        out.push(route_view(f, &g, &states, routes, cfg, &unusable, dev, p));
    }
    Ok(out)
}
