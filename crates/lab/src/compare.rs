//! One comparison: FRR's side read from every router (bgpd's table through vtysh, the kernel
//! FIB through `ip -j route`), aifabric's view of the zone aggregates, and when two routes
//! agree ([`disagreement`]).

use crate::check::{AggregateView, Hop, Mismatch, Side};
use crate::run;
use crate::state::{LabRouter, LabState};
use aifabric::stages::routing::aggregation::{Aggregation, AggregationTier};
use aifabric::stages::routing::fib::Prefix;
use aifabric::{Error, Study};
use std::collections::BTreeMap;
use std::path::Path;

/// A zone's aggregate as [`compare`] looks at it: the zone, its /48, its borders, and the
/// /64s of its live racks.
pub(crate) struct Watched {
    pub(crate) zone: String,
    pub(crate) prefix: String,
    pub(crate) borders: Vec<String>,
    pub(crate) live: Vec<String>,
}

/// aifabric's view of each watched aggregate: its blackhole detector at the zone tier.
pub(crate) fn aifabric_aggregates(
    study: &Study,
    aggregation: Aggregation,
    watched: &[Watched],
    all: &[Prefix],
) -> Result<Vec<AggregateView>, Error> {
    let report = study.blackholes(aggregation, AggregationTier::Zone)?;
    let ipv6_of: BTreeMap<&str, &str> = all
        .iter()
        .filter_map(|p| Some((p.name.as_str(), p.ipv6.as_deref()?)))
        .collect();
    Ok(watched
        .iter()
        .map(|w| {
            let mut view = AggregateView::default();
            if let Some(scope) = report.scopes.iter().find(|s| s.scope == w.zone) {
                view.advertising = scope.advertising.clone();
                view.withdrawn = scope.withdrawn.clone();
            }
            for b in report.blackholes.iter().filter(|b| b.scope == w.zone) {
                let mut v: Vec<String> = b
                    .prefixes
                    .iter()
                    .filter_map(|p| ipv6_of.get(p.as_str()).map(|x| (*x).to_owned()))
                    .collect();
                v.sort();
                view.blackholes.insert(b.device.clone(), v);
            }
            view.advertising.sort();
            view.withdrawn.sort();
            view
        })
        .collect())
}

/// FRR's view of an aggregate: who among its borders sends it to a BAG router, and which
/// live covered /64s an advertising border has no route for.
fn frr_aggregate(
    state: &LabState,
    a: &Watched,
    senders: &BTreeMap<&str, Senders>,
    fibs: &BTreeMap<&str, BTreeMap<String, BTreeMap<String, Hop>>>,
) -> AggregateView {
    let router_at: BTreeMap<&str, &str> = state
        .links
        .iter()
        .flat_map(|l| {
            l.ends
                .iter()
                .map(|e| (e.address.as_str(), e.router.as_str()))
        })
        .collect();
    let mut view = AggregateView::default();
    for b in &a.borders {
        let advertises = senders.values().any(|table| {
            table.get(&a.prefix).is_some_and(|peers| {
                peers
                    .iter()
                    .any(|p| router_at.get(p.as_str()) == Some(&b.as_str()))
            })
        });
        if !advertises {
            view.withdrawn.push(b.clone());
            continue;
        }
        view.advertising.push(b.clone());
        let missing: Vec<String> = a
            .live
            .iter()
            .filter(|p| !fibs[b.as_str()].contains_key(p.as_str()))
            .cloned()
            .collect();
        let mut missing = missing;
        missing.sort();
        if !missing.is_empty() {
            view.blackholes.insert(b.clone(), missing);
        }
    }
    view
}

/// Every route of `want` (router, prefix, next hops) against the kernel FIBs, and every
/// watched aggregate as FRR sees it.
pub(crate) fn compare(
    state: &LabState,
    dir: &Path,
    origin_of: &BTreeMap<&str, &str>,
    want: &[(String, String, Side)],
    watched: &[Watched],
) -> Result<(Vec<Mismatch>, Vec<AggregateView>), Error> {
    let mut tables: BTreeMap<&str, BTreeMap<String, Side>> = BTreeMap::new();
    let mut senders: BTreeMap<&str, Senders> = BTreeMap::new();
    let mut fibs = BTreeMap::new();
    for r in &state.routers {
        let (mut routes, sent) = bgp_table(dir, r)?;
        let fib = fib(state, r)?;
        for (prefix, hops) in &fib {
            routes.entry(prefix.clone()).or_default().hops = hops.clone();
        }
        tables.insert(r.name.as_str(), routes);
        if matches!(r.role.as_str(), "bag" | "hub") {
            senders.insert(r.name.as_str(), sent);
        }
        fibs.insert(r.name.as_str(), fib);
    }
    let views = watched
        .iter()
        .map(|a| frr_aggregate(state, a, &senders, &fibs))
        .collect();
    let none = Side::default();
    let mut out = Vec::new();
    for (router, prefix, side) in want {
        let got = tables[router.as_str()].get(prefix).unwrap_or(&none);
        if let Some(gap) = disagreement(side, got, state.weight_steps) {
            out.push(Mismatch {
                router: router.clone(),
                prefix: prefix.clone(),
                origin: origin_of[prefix.as_str()].to_owned(),
                aifabric: side.clone(),
                frr: got.clone(),
                share_gap: gap,
            });
        }
    }
    Ok((out, views))
}

/// `None` when FRR's route `got` agrees with aifabric's `want`, else the largest share gap
/// (0 when only the attributes differ). They agree with the same next-hop neighbours, the
/// same live links to each, each share within one of FRR's `steps` per link (8.x programs
/// `floor(100 x share)`: 1% per link; see [`weight_steps`](crate::weight_steps)), the same
/// LOCAL_PREF and an AS path of the same length. Not the same AS path: with multipath-relax,
/// several equally good paths through different ASNs tie, and bgpd picks its best among them
/// by age and router id, which aifabric does not model.
pub fn disagreement(want: &Side, got: &Side, steps: u32) -> Option<f64> {
    let (w, g) = (&want.hops, &got.hops);
    let gap = w
        .keys()
        .chain(g.keys())
        .map(|n| {
            let s = |m: &BTreeMap<String, Hop>| m.get(n).map_or(0.0, |h| h.share);
            (s(w) - s(g)).abs()
        })
        .fold(0.0, f64::max);
    let same_hops = w.len() == g.len()
        && w.iter().all(|(n, h)| {
            g.get(n).is_some_and(|x| {
                x.links == h.links
                    && (x.share - h.share).abs() <= f64::from(h.links) / f64::from(steps) + 1e-9
            })
        });
    let same_attributes =
        want.local_pref == got.local_pref && want.as_path.len() == got.as_path.len();
    (!(same_hops && same_attributes)).then_some(gap)
}

/// Every prefix's senders: the neighbour address of each of its paths.
type Senders = BTreeMap<String, Vec<String>>;

/// bgpd's best path toward each prefix of one router (`show bgp ipv6 unicast json` through
/// vtysh): its LOCAL_PREF (100 when absent: eBGP carries none) and AS path (a router's own
/// prefix has an empty path); and every prefix's [`Senders`].
fn bgp_table(dir: &Path, r: &LabRouter) -> Result<(BTreeMap<String, Side>, Senders), Error> {
    let run_dir = dir.join("run").join(&r.namespace).display().to_string();
    let text = run(
        "vtysh",
        &["--vty_socket", &run_dir, "-c", "show bgp ipv6 unicast json"],
    )?;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let mut out = BTreeMap::new();
    let mut senders = Senders::new();
    let Some(routes) = v["routes"].as_object() else {
        return Ok((out, senders));
    };
    for (prefix, paths) in routes {
        senders.insert(
            prefix.clone(),
            paths
                .as_array()
                .map(|p| {
                    p.iter()
                        .filter_map(|x| x["peerId"].as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        );
        let Some(best) = paths
            .as_array()
            .and_then(|p| p.iter().find(|x| x["bestpath"].as_bool() == Some(true)))
        else {
            continue;
        };
        let as_path = best["path"]
            .as_str()
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|a| a.parse().ok())
            .collect();
        let local_pref = Some(best["locPrf"].as_u64().map_or(100, |x| x as u32));
        out.insert(
            prefix.clone(),
            Side {
                hops: BTreeMap::new(),
                local_pref,
                as_path,
            },
        );
    }
    Ok((out, senders))
}

/// One router's kernel FIB toward the rack prefixes: prefix -> neighbour -> (links, share).
fn fib(state: &LabState, r: &LabRouter) -> Result<BTreeMap<String, BTreeMap<String, Hop>>, Error> {
    let text = run("ip", &["-n", &r.namespace, "-6", "-j", "route", "show"])?;
    let routes: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap_or_default();
    let peer_of: BTreeMap<&str, &str> = state
        .links
        .iter()
        .flat_map(|l| {
            [(0, 1), (1, 0)]
                .into_iter()
                .filter(move |&(i, _)| l.ends[i].router == r.name)
                .map(move |(i, j)| (l.ends[i].interface.as_str(), l.ends[j].router.as_str()))
        })
        .collect();
    let mut out = BTreeMap::new();
    for route in &routes {
        let Some(dst) = route["dst"].as_str() else {
            continue;
        };
        let hops: Vec<(&str, f64)> = match route["nexthops"].as_array() {
            Some(list) => list
                .iter()
                .filter_map(|h| Some((h["dev"].as_str()?, h["weight"].as_f64().unwrap_or(1.0))))
                .collect(),
            None => route["dev"]
                .as_str()
                .map(|d| vec![(d, 1.0)])
                .unwrap_or_default(),
        };
        let total: f64 = hops.iter().map(|h| h.1).sum();
        let mut by_peer: BTreeMap<String, Hop> = BTreeMap::new();
        for (dev, w) in hops {
            let Some(&peer) = peer_of.get(dev) else {
                continue;
            };
            let h = by_peer.entry(peer.to_owned()).or_insert(Hop {
                links: 0,
                share: 0.0,
            });
            h.links += 1;
            h.share += w / total;
        }
        if !by_peer.is_empty() {
            out.insert(dst.to_owned(), by_peer);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weight_steps;

    fn hops(v: &[(&str, u32, f64)]) -> Side {
        Side {
            hops: v
                .iter()
                .map(|&(n, links, share)| (n.to_owned(), Hop { links, share }))
                .collect(),
            local_pref: Some(100),
            as_path: vec![1, 2],
        }
    }

    #[test]
    fn shares_agree_within_frr_rounding_and_neighbours_must_match() {
        // 2:1 over three links, as FRR 8.4 programs it: 33 + 33 and 33 of 99 per link.
        let want = hops(&[("a", 2, 2.0 / 3.0), ("b", 1, 1.0 / 3.0)]);
        assert_eq!(
            disagreement(&want, &hops(&[("a", 2, 0.666), ("b", 1, 0.334)]), 100),
            None
        );
        // A neighbour missing, a link missing, a share off by more than 1% per link.
        assert!(disagreement(&want, &hops(&[("a", 2, 1.0)]), 100).is_some());
        assert!(disagreement(&want, &hops(&[("a", 1, 0.5), ("b", 1, 0.5)]), 100).is_some());
        let gap = disagreement(&want, &hops(&[("a", 2, 0.5), ("b", 1, 0.5)]), 100).unwrap();
        assert!((gap - (2.0 / 3.0 - 0.5)).abs() < 1e-12);
        // The same next hops under another LOCAL_PREF or a longer AS path disagree; another
        // path of the same length (a multipath-relax tie) does not.
        let mut drained = want.clone();
        drained.local_pref = Some(0);
        assert_eq!(disagreement(&want, &drained, 100), Some(0.0));
        let mut longer = want.clone();
        longer.as_path.push(3);
        assert!(disagreement(&want, &longer, 100).is_some());
        let mut tie = want.clone();
        tie.as_path = vec![1, 7];
        assert_eq!(disagreement(&want, &tie, 100), None);
        // Finer weights (1-255) leave less room: 0.8% off on a one-link neighbour agrees
        // under 8.x's 100 steps, not under 255.
        let off = hops(&[("a", 2, 2.0 / 3.0 - 0.008), ("b", 1, 1.0 / 3.0 + 0.008)]);
        assert_eq!(disagreement(&want, &off, 100), None);
        assert!(disagreement(&want, &off, 255).is_some());
        assert_eq!(weight_steps("8.4.4").unwrap(), 100);
        assert_eq!(weight_steps("10.2").unwrap(), 255);
        assert!(weight_steps("latest").is_err());
    }
}
