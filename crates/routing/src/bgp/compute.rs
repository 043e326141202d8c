//! Converged BGP state toward one origin, computed directly rather than message by message.
//!
//! Route preference is (LOCAL_PREF high, AS-path length low). A route learned over a session
//! that is soft-drained (graceful shutdown community 65535:0, RFC 8326) gets LOCAL_PREF 0 at
//! the receiver, so it is used only when nothing else is left; other eBGP routes get 100.
//! Loop prevention: a speaker rejects a path that already holds its own ASN. Multipath-relax:
//! every neighbor whose route ties with the best on (LOCAL_PREF, length) is a multipath, up to
//! `max_paths`, whatever its neighbor ASN.
//!
//! The fixpoint is found with a worklist: a speaker is re-evaluated when a neighbor's best
//! route changes. An AS path is not stored: it is the chain of best-route parents back to the
//! origin, walked for the loop check.

use super::graph::{BgpGraph, SpeakerId};
use crate::ucmp::{self, MissingBandwidth};
use aifabric_model::*;
use serde::Serialize;
use std::collections::VecDeque;

/// What the link-bandwidth community carries when a route is re-advertised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BandwidthMode {
    /// Originated with the session's link capacity; re-advertised as the sum of what the
    /// multipaths received (FRR `cumulative`).
    Cumulative,
    /// Originated with the number of links; re-advertised as the sum over multipaths: weights
    /// follow path counts rather than capacity.
    NumMultipaths,
    /// No community: plain ECMP.
    None,
}

/// Control-plane settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BgpConfig {
    /// Link-bandwidth community mode.
    pub bandwidth: BandwidthMode,
    /// Receivers' behaviour when a multipath lacks the community.
    pub missing: MissingBandwidth,
    /// Maximum multipaths per prefix.
    pub max_paths: u32,
    /// Hardware next-hop group size for quantized weights.
    pub group_size: u32,
    /// NSF capacity-aware pruning: rack switches weight their planes by the links left usable
    /// toward the destination rack ([`crate::nsf`]) instead of by BGP link bandwidth.
    pub nsf_pruning: bool,
}

impl Default for BgpConfig {
    fn default() -> Self {
        BgpConfig {
            bandwidth: BandwidthMode::Cumulative,
            missing: MissingBandwidth::EcmpFallback,
            // J3 maximum ECMP width (FACTS.md section 2).
            max_paths: 2_048,
            group_size: 64,
            nsf_pruning: false,
        }
    }
}

/// A session under a scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionState {
    /// Capacity of the links that carry the session's traffic, Mb/s (0 = session down).
    pub mbps: u64,
    /// Number of those links.
    pub links: u32,
    /// Every usable link is soft-drained: routes over it get LOCAL_PREF 0.
    pub soft: bool,
}

/// Sessions under a scenario. A failed or hard-drained link carries nothing; a soft-drained
/// one (or one whose endpoint is soft-drained) still works. If a session has both, only its
/// non-drained links carry traffic.
pub fn session_states(f: &Fabric, g: &BgpGraph, s: &Scenario) -> Vec<SessionState> {
    let unusable = s.unusable();
    (0..g.sessions.len() as u32)
        .map(|sid| {
            let (mut normal, mut soft) = (SessionState::default(), SessionState::default());
            for &l in g.links(sid) {
                if !f.link_up(l, &unusable) {
                    continue;
                }
                let link = f.link(l);
                let is_soft = !f.link_up(l, &s.drained_soft);
                let st = if is_soft { &mut soft } else { &mut normal };
                st.mbps += u64::from(link.capacity_mbps);
                st.links += 1;
            }
            if normal.links > 0 {
                normal
            } else {
                SessionState {
                    soft: soft.links > 0,
                    ..soft
                }
            }
        })
        .collect()
}

/// A speaker's best route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Best {
    /// LOCAL_PREF (the origin's own route: `u32::MAX`).
    pub local_pref: u32,
    /// AS-path length.
    pub len: u32,
    /// Neighbor the best path came from (the origin: itself).
    pub parent: SpeakerId,
}

/// One multipath next hop of a speaker.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Multipath {
    /// Session to the neighbor.
    pub session: u32,
    /// The neighbor.
    pub neighbor: SpeakerId,
    /// Link-bandwidth value received from it (`None` without the community).
    pub received: Option<u64>,
}

/// The converged state of every speaker toward one prefix.
#[derive(Clone, Debug)]
pub struct RoutesTo {
    /// The originating speakers (one for a rack prefix; every advertiser of an aggregate).
    pub origins: Vec<SpeakerId>,
    /// Best route per speaker (`None`: no route).
    pub best: Vec<Option<Best>>,
    mp_off: Vec<u32>,
    mp: Vec<Multipath>,
    /// Link-bandwidth value each speaker advertises (`None` without the community).
    pub advertised: Vec<Option<u64>>,
}

/// The fixpoint did not settle (a policy dispute); should not happen with these policies.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("BGP toward {origin} did not converge after {evaluations} evaluations")]
pub struct NotConverged {
    /// Origin speaker.
    pub origin: SpeakerId,
    /// Evaluations done.
    pub evaluations: u64,
}

fn better(a: (u32, u32), b: (u32, u32)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
}

impl RoutesTo {
    /// Whether `v` originates the prefix.
    pub fn is_origin(&self, v: SpeakerId) -> bool {
        self.origins.contains(&v)
    }

    /// Multipaths of speaker `v`.
    pub fn multipaths(&self, v: SpeakerId) -> &[Multipath] {
        let (a, b) = (self.mp_off[v as usize], self.mp_off[v as usize + 1]);
        &self.mp[a as usize..b as usize]
    }

    /// Ideal UCMP weights of `v`'s multipaths (same order as [`RoutesTo::multipaths`]).
    pub fn weights(&self, v: SpeakerId, cfg: &BgpConfig) -> Vec<f64> {
        let received: Vec<Option<u64>> = self.multipaths(v).iter().map(|m| m.received).collect();
        ucmp::weights(&received, cfg.missing)
    }
}

/// Whether `asn` is on the AS path that speaker `u` advertises (u's ASN, then its parents').
fn on_path(g: &BgpGraph, best: &[Option<Best>], u: SpeakerId, asn: u32) -> bool {
    let mut x = u;
    // A path is at most as long as the speaker count; the bound also guards against a
    // transient parent cycle while the worklist is still settling.
    for _ in 0..=g.speakers.len() {
        if g.speakers[x as usize].asn == asn {
            return true;
        }
        match best[x as usize] {
            Some(b) if b.parent != x => x = b.parent,
            _ => return false,
        }
    }
    true
}

/// Candidates of `v`: (session, neighbor, key) for every usable, loop-free neighbor route.
fn candidates(
    g: &BgpGraph,
    states: &[SessionState],
    best: &[Option<Best>],
    v: SpeakerId,
    out: &mut Vec<(u32, SpeakerId, (u32, u32))>,
) {
    out.clear();
    let asn = g.speakers[v as usize].asn;
    for &(s, u) in g.neighbors(v) {
        let st = states[s as usize];
        let Some(b) = best[u as usize] else { continue };
        if st.links == 0 || on_path(g, best, u, asn) {
            continue;
        }
        let lp = if st.soft { 0 } else { 100 };
        out.push((s, u, (lp, b.len + 1)));
    }
}

/// Compute the converged routes of every speaker toward a prefix originated by `origin`.
pub fn routes_to(
    g: &BgpGraph,
    states: &[SessionState],
    origin: SpeakerId,
    cfg: &BgpConfig,
) -> Result<RoutesTo, NotConverged> {
    routes_to_many(g, states, &[origin], cfg)
}

/// Compute the converged routes of every speaker toward a prefix originated by all of
/// `origins` (an aggregate advertised by several border speakers).
pub fn routes_to_many(
    g: &BgpGraph,
    states: &[SessionState],
    origins: &[SpeakerId],
    cfg: &BgpConfig,
) -> Result<RoutesTo, NotConverged> {
    let n = g.speakers.len();
    let origin = origins.first().copied().unwrap_or(0);
    let mut is_origin = vec![false; n];
    let mut best: Vec<Option<Best>> = vec![None; n];
    for &o in origins {
        is_origin[o as usize] = true;
        best[o as usize] = Some(Best {
            local_pref: u32::MAX,
            len: 0,
            parent: o,
        });
    }
    let mut queue: VecDeque<SpeakerId> = VecDeque::new();
    let mut queued = vec![false; n];
    let push_neighbors = |v: SpeakerId, q: &mut VecDeque<SpeakerId>, queued: &mut [bool]| {
        for &(_, u) in g.neighbors(v) {
            if !is_origin[u as usize] && !queued[u as usize] {
                queued[u as usize] = true;
                q.push_back(u);
            }
        }
    };
    for &o in origins {
        push_neighbors(o, &mut queue, &mut queued);
    }
    let mut cands = Vec::new();
    let mut evaluations = 0u64;
    let limit = 64 * (n as u64 + 1) * (n as u64 + 1).min(64);
    while let Some(v) = queue.pop_front() {
        queued[v as usize] = false;
        evaluations += 1;
        if evaluations > limit {
            return Err(NotConverged {
                origin,
                evaluations,
            });
        }
        candidates(g, states, &best, v, &mut cands);
        let mut new: Option<Best> = None;
        for &(_, u, key) in &cands {
            let tie_better = |b: &Best| {
                (g.speakers[u as usize].asn, u) < (g.speakers[b.parent as usize].asn, b.parent)
            };
            match new {
                Some(b) if better((b.local_pref, b.len), key) => {}
                Some(b) if (b.local_pref, b.len) == key && !tie_better(&b) => {}
                _ => {
                    new = Some(Best {
                        local_pref: key.0,
                        len: key.1,
                        parent: u,
                    })
                }
            }
        }
        if new != best[v as usize] {
            best[v as usize] = new;
            push_neighbors(v, &mut queue, &mut queued);
        }
    }
    // Multipaths at the fixpoint, lowest (neighbor ASN, id) first, at most max_paths.
    let mut mp_off = Vec::with_capacity(n + 1);
    let mut mp = Vec::new();
    mp_off.push(0u32);
    for v in 0..n as u32 {
        if let (Some(b), false) = (best[v as usize], is_origin[v as usize]) {
            candidates(g, states, &best, v, &mut cands);
            cands.retain(|c| c.2 == (b.local_pref, b.len));
            cands.sort_by_key(|c| (g.speakers[c.1 as usize].asn, c.1, c.0));
            cands.truncate(cfg.max_paths as usize);
            mp.extend(cands.iter().map(|&(session, neighbor, _)| Multipath {
                session,
                neighbor,
                received: None,
            }));
        }
        mp_off.push(mp.len() as u32);
    }
    // Link bandwidth: a speaker's multipaths are all one hop closer to the origin, so
    // processing by path length sees every value before it is summed.
    let mut order: Vec<SpeakerId> = (0..n as u32)
        .filter(|&v| best[v as usize].is_some())
        .collect();
    order.sort_by_key(|&v| best[v as usize].map(|b| b.len));
    let mut advertised: Vec<Option<u64>> = vec![None; n];
    for v in order {
        if cfg.bandwidth == BandwidthMode::None {
            break;
        }
        let (a, b) = (mp_off[v as usize] as usize, mp_off[v as usize + 1] as usize);
        let mut sum = 0u64;
        let mut any = false;
        for m in &mut mp[a..b] {
            let st = states[m.session as usize];
            m.received = if is_origin[m.neighbor as usize] {
                Some(match cfg.bandwidth {
                    BandwidthMode::Cumulative => st.mbps,
                    _ => u64::from(st.links),
                })
            } else {
                advertised[m.neighbor as usize]
            };
            if let Some(x) = m.received {
                sum += x;
                any = true;
            }
        }
        if any {
            advertised[v as usize] = Some(sum);
        }
    }
    Ok(RoutesTo {
        origins: origins.to_vec(),
        best,
        mp_off,
        mp,
        advertised,
    })
}
