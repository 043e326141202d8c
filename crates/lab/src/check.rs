//! [`check`]: a scenario applied live (links set down, soft drains switched per session),
//! aifabric's routes computed once, and the comparison repeated until FRR agrees or time
//! runs out; its answer's types.

use crate::compare::{aifabric_aggregates, compare, Watched};
use crate::state::LabState;
use crate::supervisor::alive;
use crate::{bad_request, run, DAEMONS_FILE, STATE_FILE};
use aifabric::stages::model::{Fabric, Scenario};
use aifabric::stages::report::frr;
use aifabric::stages::routing::aggregation::Aggregation;
use aifabric::stages::routing::fib;
use aifabric::{Error, Study};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// One next hop of a route, as a side sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hop {
    /// Live links to the neighbour.
    pub links: u32,
    /// Its share of the traffic.
    pub share: f64,
}

/// A router's route toward a prefix, as one side sees it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Side {
    /// Next hops by neighbour (aifabric's multipaths; the kernel FIB's).
    pub hops: BTreeMap<String, Hop>,
    /// LOCAL_PREF of the best route (FRR: bgpd's best path; 100 when eBGP set none).
    pub local_pref: Option<u32>,
    /// AS path of the best route, nearest first.
    pub as_path: Vec<u32>,
}

/// A route on which FRR and aifabric disagree.
#[derive(Clone, Debug, Serialize)]
pub struct Mismatch {
    /// The router.
    pub router: String,
    /// The prefix (a rack's /64).
    pub prefix: String,
    /// The router that originates it.
    pub origin: String,
    /// aifabric's route.
    pub aifabric: Side,
    /// FRR's: the kernel FIB's next hops, bgpd's best path.
    pub frr: Side,
    /// The largest share gap over the neighbours of either side.
    pub share_gap: f64,
}

/// What one side says of a zone's aggregate.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AggregateView {
    /// Borders that advertise the /48 to BAG.
    pub advertising: Vec<String>,
    /// Borders that do not.
    pub withdrawn: Vec<String>,
    /// Advertising borders that cannot reach some live covered rack (its traffic meets the
    /// discard route behind the aggregate), with those racks' /64s.
    pub blackholes: BTreeMap<String, Vec<String>>,
}

/// A zone's aggregate, both sides.
#[derive(Clone, Debug, Serialize)]
pub struct AggregateCheck {
    /// The zone.
    pub zone: String,
    /// Its /48.
    pub prefix: String,
    /// aifabric's blackhole detector (`blackholes --tier zone`).
    pub aifabric: AggregateView,
    /// FRR: the BAG routers' tables (who sends the /48) and the borders' FIBs (which /64s).
    pub frr: AggregateView,
}

/// The answer of [`check`].
#[derive(Clone, Debug, Serialize)]
pub struct LabCheck {
    /// The contract's version.
    pub schema_version: u32,
    /// The fabric.
    pub fabric: String,
    /// The scenario applied (the selectors, `healthy` for none).
    pub scenario: String,
    /// Links set down.
    pub links_down: Vec<String>,
    /// Routers.
    pub routers: usize,
    /// Routes compared (router x rack prefix, the origin's own excluded).
    pub routes: usize,
    /// Zone aggregates compared (with aggregation), each agreeing or not.
    pub aggregates: Vec<AggregateCheck>,
    /// Whether every route and aggregate agreed before the time limit.
    pub agreed: bool,
    /// Seconds from the links set to the last comparison.
    pub seconds: f64,
    /// The disagreements at the last comparison.
    pub mismatches: Vec<Mismatch>,
}

/// Check the lab in `dir` under `scenario` of fabric `f` (the lab's own, loaded from its
/// state): set its links, then compare every FIB with aifabric's routes every second until
/// they all agree or `timeout` passes. `describe` names the scenario in the answer.
pub fn check(
    f: &Fabric,
    dir: &Path,
    scenario: Scenario,
    describe: &str,
    timeout: Duration,
) -> Result<LabCheck, Error> {
    let mut state = LabState::read(dir)?;
    if f.name() != state.fabric {
        return Err(bad_request(format!(
            "the lab in {} runs {}, not {}; give its spec or its directory",
            dir.display(),
            state.fabric,
            f.name()
        )));
    }
    if !state
        .supervisor
        .is_some_and(|p| alive(p) && dir.join(DAEMONS_FILE).exists())
    {
        return Err(Error::Runtime {
            message: format!(
                "the lab's supervisor is not running (see {}); take the lab down and up again",
                dir.join("supervisor.log").display()
            ),
            source: None,
        });
    }
    let study = Study::new(f, scenario, state.setup()?);
    let aggregation: Option<Aggregation> = state
        .aggregation
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: String| bad_request(format!("{STATE_FILE}: aggregation: {e}")))?;
    let topo = study.frr_topology_aggregated(aggregation)?;
    // The lab's configuration carries each link's speed (its link bandwidth): a check on
    // other speeds (the network as built) needs a lab brought up on them.
    let speeds: Vec<String> = state
        .links
        .iter()
        .zip(&topo.links)
        .filter(|(l, t)| {
            // The lab's configuration carries whole Gb/s: a speed between two of them is
            // one it cannot run.
            u64::from(f.link(t.link()).capacity_mbps) != l.capacity_gbps * 1000
        })
        .map(|(l, t)| {
            format!(
                "{} ({} Gb/s in the lab, {} Gb/s here)",
                l.name,
                l.capacity_gbps,
                f64::from(f.link(t.link()).capacity_mbps) / 1e3
            )
        })
        .collect();
    if !speeds.is_empty() {
        return Err(bad_request(format!(
            "the lab in {} runs {} link(s) at another speed than this check: {}{}; bring it \
             up on the same network (`lab up` with the same --scenario or --as-built)",
            dir.display(),
            speeds.len(),
            speeds[..speeds.len().min(3)].join(", "),
            if speeds.len() > 3 { ", ..." } else { "" }
        )));
    }
    let unusable = study.scenario().unusable();
    let mut links_down = Vec::new();
    for (l, t) in state.links.iter().zip(&topo.links) {
        let up = f.link_up(t.link(), &unusable);
        if !up {
            links_down.push(l.name.clone());
        }
        for e in &l.ends {
            let to = if up { "up" } else { "down" };
            run("ip", &["-n", &e.namespace, "link", "set", &e.interface, to])?;
        }
    }
    let drained = set_drains(&state, f, study.scenario(), &topo, dir)?;
    state.drained = drained;
    state.write(dir)?;
    // aifabric's side, once: every router's routes toward every rack prefix.
    let origin_of: BTreeMap<&str, &str> = state
        .routers
        .iter()
        .flat_map(|r| {
            r.originates
                .iter()
                .map(move |p| (p.as_str(), r.name.as_str()))
        })
        .collect();
    // With aggregation, a zone's racks are seen from outside only as its /48: their routes
    // are checked through the aggregate (who advertises it, who blackholes what), not one by
    // one.
    let unusable = study.scenario().unusable();
    let all = fib::prefixes(f);
    let watched: Vec<Watched> = topo
        .aggregates
        .iter()
        .map(|a| Watched {
            zone: a.zone.clone(),
            prefix: a.prefix.clone(),
            borders: a.borders.clone(),
            live: all
                .iter()
                .filter(|p| {
                    f.zones()[f.device(p.rack_switch).zone.idx()].name == a.zone
                        && !unusable.device_failed(p.rack_switch)
                })
                .filter_map(|p| p.ipv6.clone())
                .collect(),
        })
        .collect();
    let aggregated: std::collections::BTreeSet<&str> = watched
        .iter()
        .flat_map(|w| {
            all.iter()
                .filter(move |p| f.zones()[f.device(p.rack_switch).zone.idx()].name == w.zone)
                .filter_map(|p| p.ipv6.as_deref())
        })
        .collect();
    let expected_aggregates = match aggregation {
        Some(a) if !watched.is_empty() => aifabric_aggregates(&study, a, &watched, &all)?,
        _ => Vec::new(),
    };
    let mut want: Vec<(String, String, Side)> = Vec::new();
    for r in &state.routers {
        for v in study.routes(&r.name, None)? {
            let Some(prefix) = v.ipv6 else { continue };
            match origin_of.get(prefix.as_str()) {
                Some(&o) if o != r.name && !aggregated.contains(prefix.as_str()) => {}
                _ => continue,
            }
            let hops = v
                .next_hops
                .iter()
                .map(|h| {
                    (
                        h.neighbor.clone(),
                        Hop {
                            links: h.links,
                            share: h.weight,
                        },
                    )
                })
                .collect();
            let side = Side {
                hops,
                local_pref: v.local_pref,
                as_path: v.as_path,
            };
            want.push((r.name.clone(), prefix, side));
        }
    }
    let start = Instant::now();
    loop {
        let (mismatches, views) = compare(&state, dir, &origin_of, &want, &watched)?;
        let aggregates: Vec<AggregateCheck> = watched
            .iter()
            .zip(views)
            .zip(&expected_aggregates)
            .map(|((w, frr), ours)| AggregateCheck {
                zone: w.zone.clone(),
                prefix: w.prefix.clone(),
                aifabric: ours.clone(),
                frr,
            })
            .collect();
        let agreed = mismatches.is_empty() && aggregates.iter().all(|a| a.aifabric == a.frr);
        if agreed || start.elapsed() >= timeout {
            return Ok(LabCheck {
                schema_version: aifabric::SCHEMA_VERSION,
                fabric: state.fabric.clone(),
                scenario: describe.to_owned(),
                links_down,
                routers: state.routers.len(),
                routes: want.len(),
                aggregates,
                agreed,
                seconds: start.elapsed().as_secs_f64(),
                mismatches,
            });
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Soft drains, live: each link end whose session the scenario soft-drains sends the
/// drained twin of its outbound route-map (`-DRAIN`: the graceful-shutdown community on both
/// ends of a drained session, or, when drains prepend, the ASN prepended by the end that
/// drains: a drained link's both ends, a drained device's own), every other end its plain
/// one; only ends that change are reconfigured (vtysh, then an outbound soft reset). Returns
/// the drained ends.
fn set_drains(
    state: &LabState,
    f: &Fabric,
    scenario: &Scenario,
    topo: &frr::Topology,
    dir: &Path,
) -> Result<Vec<String>, Error> {
    let soft = &scenario.drained_soft;
    let prepend = topo.soft_drain.starts_with("prepend:");
    let unusable = scenario.unusable();
    let mut drained = Vec::new();
    for (l, t) in state.links.iter().zip(&topo.links) {
        let id = t.link();
        let link = f.link(id);
        let is_soft = f.link_up(id, &unusable) && !f.link_up(id, soft);
        for (side, dev) in [link.a, link.b].into_iter().enumerate() {
            let drains_here = soft.link_failed(id) || soft.device_failed(dev);
            let want = is_soft && (!prepend || drains_here);
            let key = format!("{}:{side}", l.name);
            let had = state.drained.contains(&key);
            if want {
                drained.push(key);
            }
            if want == had {
                continue;
            }
            let (me, peer) = (&l.ends[side], &l.ends[1 - side]);
            let asn = state
                .routers
                .iter()
                .find(|r| r.name == me.router)
                .map_or(0, |r| r.asn);
            let map = |d| frr::out_map(&topo.bandwidth, l.capacity_gbps, d);
            let set = match (map(want), map(!want)) {
                (Some(m), _) => format!("neighbor {} route-map {m} out", peer.address),
                (None, Some(old)) => format!("no neighbor {} route-map {old} out", peer.address),
                (None, None) => continue,
            };
            let run_dir = dir.join("run").join(&me.namespace).display().to_string();
            let router = format!("router bgp {asn}");
            let clear = format!("clear bgp ipv6 unicast {} soft out", peer.address);
            run(
                "vtysh",
                &[
                    "--vty_socket",
                    &run_dir,
                    "-c",
                    "configure terminal",
                    "-c",
                    &router,
                    "-c",
                    "address-family ipv6 unicast",
                    "-c",
                    &set,
                    "-c",
                    "end",
                    "-c",
                    &clear,
                ],
            )?;
        }
    }
    Ok(drained)
}
