//! Converged BGP state toward one origin, computed directly rather than message by message.
//!
//! Route preference is (LOCAL_PREF high, AS-path length low). A route learned over a session
//! that is soft-drained carries the graceful-shutdown community 65535:0 (RFC 8326) from then
//! on, and every router holding it gives it LOCAL_PREF 0, so it is used only when nothing else
//! is left; other eBGP routes get 100. (With drains by prepend instead, the drained side
//! lengthens the AS path of what it sends.) Either way preference only worsens as a path
//! grows, so the stable state is unique.
//! Loop prevention: a speaker rejects a path that already holds its own ASN. Multipath-relax:
//! every neighbor whose route ties with the best on (LOCAL_PREF, length) is a multipath, up to
//! `max_paths`, whatever its neighbor ASN.
//!
//! The fixpoint is found with a worklist: a speaker is re-evaluated when a neighbor's best
//! route changes. An AS path is not stored: it is the chain of best-route parents back to the
//! origin, walked for the loop check, plus a 64-bit hash of it, so that a change anywhere up
//! the chain counts as a change of the route (as a re-advertisement with a new AS_PATH would
//! in BGP) and the loop checks of everyone downstream are redone.
//!
//! The same `settle` step serves the first computation and incremental updates after failures
//! ([`RoutesTo::update`]): seed the worklist with the speakers next to what changed, re-run
//! the fixpoint from the current state, recompute the multipath sets of every speaker
//! evaluated, and propagate link-bandwidth values upward from there in path-length order.

use super::graph::{BgpGraph, SessionId, SpeakerId};
use crate::ucmp::{self, MissingBandwidth};
use aifabric_model::*;
use fixedbitset::FixedBitSet;
use serde::Serialize;

/// What the link-bandwidth community carries when a route is re-advertised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BandwidthMode {
    /// Originated with the session's link capacity; re-advertised as the sum of what the
    /// multipaths received (FRR `cumulative`).
    Cumulative,
    /// Path counts: originated with the session's number of links and re-advertised as the sum
    /// over multipaths, so weights follow the number of equal-cost paths below each next hop
    /// (the per-hop path counts of NSF capacity-aware routing). FRR's `num-multipaths`
    /// advertises only the local multipath count; this counts all the way down.
    NumMultipaths,
    /// No community: plain ECMP.
    None,
}

/// How a soft drain makes routes less preferred (RFC 8326 graceful shutdown, or AS-path
/// prepending as eBGP Clos fabrics often do).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SoftDrain {
    /// Graceful shutdown, RFC 8326: routes over a drained session carry the transitive
    /// community 65535:0, and every router that receives a route with it sets LOCAL_PREF 0,
    /// so such routes are used only when nothing else is left, fabric-wide.
    GracefulShutdown,
    /// The drained side prepends its ASN this many extra times, as eBGP Clos fabrics often
    /// drain: the longer path loses to any alternative up to that many hops longer.
    Prepend(u32),
}

/// Control-plane settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BgpConfig {
    /// How soft drains are signalled.
    pub soft_drain: SoftDrain,
    /// Link-bandwidth community mode.
    pub bandwidth: BandwidthMode,
    /// Receivers' behaviour when a multipath lacks the community.
    pub missing: MissingBandwidth,
    /// Maximum multipaths per prefix.
    pub max_paths: u32,
    /// Largest hardware next-hop group (see [`crate::ucmp::split`]).
    pub group_size: u32,
    /// NSF capacity-aware pruning: rack switches weight their planes by the links left usable
    /// toward the destination rack ([`crate::nsf`]) instead of by BGP link bandwidth.
    pub nsf_pruning: bool,
}

impl Default for BgpConfig {
    fn default() -> Self {
        BgpConfig {
            soft_drain: SoftDrain::GracefulShutdown,
            bandwidth: BandwidthMode::Cumulative,
            missing: MissingBandwidth::EcmpFallback,
            // J3 maximum ECMP width (FBOSS).
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
    /// Which ends drain it (`[first, second]` speaker of the session): a drained device, or
    /// both ends of a drained link. Prepending is done by the drained end, on what it sends.
    pub drained_by: [bool; 2],
}

/// Sessions under a scenario. A failed or hard-drained link carries nothing; a soft-drained
/// one (or one whose endpoint is soft-drained) still works. If a session has both, only its
/// non-drained links carry traffic.
pub fn session_states(f: &Fabric, g: &BgpGraph, s: &Scenario) -> Vec<SessionState> {
    let unusable = s.unusable();
    (0..g.sessions.len() as u32)
        .map(SessionId::new)
        .map(|sid| {
            let (mut normal, mut soft) = (SessionState::default(), SessionState::default());
            let first = g.sessions[sid.idx()].0;
            for &l in g.links(sid) {
                if !f.link_up(l, &unusable) {
                    continue;
                }
                let link = f.link(l);
                let is_soft = !f.link_up(l, &s.drained_soft);
                let st = if is_soft { &mut soft } else { &mut normal };
                st.mbps += u64::from(link.capacity_mbps);
                st.links += 1;
                if is_soft {
                    let link_drained = s.drained_soft.link_failed(l);
                    for d in [link.a, link.b] {
                        // Which side of the session is this link end on?
                        let side = usize::from(g.speaker(d) != Some(first));
                        if link_drained || s.drained_soft.device_failed(d) {
                            st.drained_by[side] = true;
                        }
                    }
                }
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
    /// Hash of the AS path (changes whenever any ASN on it does).
    pub path_hash: u64,
    /// The route carries the graceful-shutdown community (learned over a soft-drained session
    /// here or anywhere downstream).
    pub gshut: bool,
}

/// One multipath next hop of a speaker.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Multipath {
    /// Session to the neighbor.
    pub session: SessionId,
    /// The neighbor.
    pub neighbor: SpeakerId,
    /// Link-bandwidth value received from it (`None` without the community).
    pub received: Option<u64>,
}

/// The converged state of every speaker toward one prefix.
#[derive(Debug)]
pub struct RoutesTo {
    /// The originating speakers (one for a rack prefix; every advertiser of an aggregate).
    pub origins: Vec<SpeakerId>,
    /// Best route per speaker (`None`: no route).
    pub best: Vec<Option<Best>>,
    /// Multipath membership, one bit per adjacency entry of the BGP graph.
    pub(super) mp: FixedBitSet,
    /// Link-bandwidth value each speaker advertises (`None` without the community).
    pub advertised: Vec<Option<u64>>,
    pub(super) is_origin: Vec<bool>,
    pub(super) cfg: BgpConfig,
}

impl Clone for RoutesTo {
    fn clone(&self) -> Self {
        RoutesTo {
            origins: self.origins.clone(),
            best: self.best.clone(),
            mp: self.mp.clone(),
            advertised: self.advertised.clone(),
            is_origin: self.is_origin.clone(),
            cfg: self.cfg,
        }
    }

    /// Field by field, reusing `self`'s buffers: failure sweeps copy every route they update,
    /// once per scenario, and a fresh allocation of that size costs page faults each time.
    fn clone_from(&mut self, other: &Self) {
        self.origins.clone_from(&other.origins);
        self.best.clone_from(&other.best);
        self.mp.clone_from(&other.mp);
        self.advertised.clone_from(&other.advertised);
        self.is_origin.clone_from(&other.is_origin);
        self.cfg = other.cfg;
    }
}

/// The fixpoint did not settle (a policy dispute); should not happen with these policies.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("BGP toward {origin} did not converge after {evaluations} evaluations")]
pub struct NotConverged {
    /// First origin speaker.
    pub origin: SpeakerId,
    /// Evaluations done.
    pub evaluations: u64,
}

impl RoutesTo {
    /// The settings the routes were computed with.
    pub fn config(&self) -> BgpConfig {
        self.cfg
    }

    /// Whether `v` originates the prefix.
    pub fn is_origin(&self, v: SpeakerId) -> bool {
        self.is_origin[v.idx()]
    }

    /// Whether `v` picks the same multipaths toward this prefix as toward `other`'s: one
    /// word compare per 64 adjacency entries.
    pub fn same_multipaths(&self, other: &RoutesTo, g: &BgpGraph, v: SpeakerId) -> bool {
        let (a, b) = (self.mp.as_slice(), other.mp.as_slice());
        !for_bits(g.adj_range(v), |block, mask| {
            a[block] & mask != b[block] & mask
        })
    }

    /// Multipaths of speaker `v`, by session order, with the link-bandwidth value each sent.
    pub fn multipaths(
        &self,
        g: &BgpGraph,
        states: &[SessionState],
        v: SpeakerId,
    ) -> Vec<Multipath> {
        let range = g.adj_range(v);
        g.neighbors(v)
            .iter()
            .zip(range)
            .filter(|(_, i)| self.mp.contains(*i))
            .map(|(&(session, neighbor), _)| Multipath {
                session,
                neighbor,
                received: self.received(states, session, neighbor),
            })
            .collect()
    }

    /// What a speaker hears from `neighbor` over `session`, summed over the session's live
    /// links: eBGP runs per link (RFC 7938 section 5.2.1), so each link is a path of its own
    /// and the neighbor counts once per link. The origin advertises each link's capacity (or
    /// 1 per link, for path counts); others re-advertise their cumulative value on every link.
    /// A bundle that loses links so loses weight in proportion, at every hop.
    ///
    /// Values multiply by the fan-in at each hop; sums saturate at `u64::MAX` Mb/s rather than
    /// overflow (Prometheus peaks near 2e14).
    pub(super) fn received(
        &self,
        states: &[SessionState],
        session: SessionId,
        neighbor: SpeakerId,
    ) -> Option<u64> {
        let st = states[session.idx()];
        match self.cfg.bandwidth {
            BandwidthMode::None => None,
            _ if self.is_origin[neighbor.idx()] => Some(match self.cfg.bandwidth {
                BandwidthMode::Cumulative => st.mbps,
                _ => u64::from(st.links),
            }),
            _ => self.advertised[neighbor.idx()].map(|x| x.saturating_mul(u64::from(st.links))),
        }
    }

    /// Calls `f(adjacency position, session, neighbor)` for each multipath of `v`, in
    /// session order, walking the set bits of `v`'s slice of the multipath bitset a block
    /// at a time (no allocation: flow propagation visits every speaker).
    pub(super) fn for_each_multipath(
        &self,
        g: &BgpGraph,
        v: SpeakerId,
        mut f: impl FnMut(usize, SessionId, SpeakerId),
    ) {
        let range = g.adj_range(v);
        let nb = g.neighbors(v);
        let blocks = self.mp.as_slice();
        for_bits(range.clone(), |block, mask| {
            let mut word = blocks[block] & mask;
            while word != 0 {
                let pos = block * usize::BITS as usize + word.trailing_zeros() as usize;
                word &= word - 1;
                let (session, neighbor) = nb[pos - range.start];
                f(pos, session, neighbor);
            }
            false
        });
    }

    /// Ideal UCMP weights of `v`'s multipaths (same order as [`RoutesTo::multipaths`]).
    pub fn weights(&self, g: &BgpGraph, states: &[SessionState], v: SpeakerId) -> Vec<f64> {
        let paths: Vec<ucmp::Path> = self
            .multipaths(g, states, v)
            .iter()
            .map(|m| (m.received, states[m.session.idx()].links))
            .collect();
        ucmp::weights(&paths, self.cfg.missing)
    }

    /// The multipaths of `v` with their ideal UCMP weights, into reused buffers: `out` gets
    /// (adjacency position, neighbor, weight) in session order, the same split as
    /// [`RoutesTo::weights`]; `scratch` holds the received link-bandwidth values. For flow
    /// propagation, which visits every speaker on the way to a destination.
    pub fn weighted_next_hops(
        &self,
        g: &BgpGraph,
        states: &[SessionState],
        v: SpeakerId,
        scratch: &mut Vec<ucmp::Path>,
        weights: &mut Vec<f64>,
        out: &mut Vec<(usize, SpeakerId, f64)>,
    ) {
        out.clear();
        scratch.clear();
        // The common case first: every multipath carries the community and the sum fits in
        // 64 bits, so each weight is its value over the sum, the value parked in the weight
        // slot meanwhile (no scratch list, no 128-bit sum).
        let mut all_some = true;
        let mut total: Option<u64> = Some(0);
        self.for_each_multipath(g, v, |pos, session, neighbor| {
            let r = self.received(states, session, neighbor);
            match r {
                Some(x) => total = total.and_then(|t| t.checked_add(x)),
                None => all_some = false,
            }
            out.push((pos, neighbor, r.unwrap_or(0) as f64));
        });
        if let (true, Some(total)) = (all_some, total.filter(|&t| t > 0)) {
            // weight = bandwidth / sum (ucmp::weights).
            let total = total as f64;
            for o in out.iter_mut() {
                o.2 /= total;
            }
            return;
        }
        self.for_each_multipath(g, v, |_, session, neighbor| {
            scratch.push((
                self.received(states, session, neighbor),
                states[session.idx()].links,
            ));
        });
        ucmp::weights_into(scratch, self.cfg.missing, weights);
        for (o, &w) in out.iter_mut().zip(weights.iter()) {
            o.2 = w;
        }
    }

    /// Whether `v` splits traffic toward this prefix over several live links, and if so
    /// whether its link-bandwidth weights come to the same share on every live link (what
    /// ECMP gives each member): `None` for no choice (no route or fewer than 2 live links),
    /// `Some(true)` when UCMP and ECMP split alike. A session's links have one speed (the
    /// builders' bundles), so a multipath's share per link is the value it heard over its
    /// live links; the shares are compared exactly, as integers. A multipath without the
    /// community falls back on [`RoutesTo::weights`] and equal shares per multipath.
    pub fn equal_per_link_at(
        &self,
        g: &BgpGraph,
        states: &[SessionState],
        v: SpeakerId,
    ) -> Option<bool> {
        self.best[v.idx()].as_ref()?;
        let mut links = 0u64;
        // (value heard, live links) of the first multipath, the reference.
        let mut first: Option<(u128, u128)> = None;
        let mut equal = true;
        let mut community = true;
        self.for_each_multipath(g, v, |_, session, neighbor| {
            let n = states[session.idx()].links;
            if n == 0 {
                return;
            }
            links += u64::from(n);
            match self.received(states, session, neighbor) {
                None => community = false,
                Some(x) => {
                    let here = (u128::from(x), u128::from(n));
                    match first {
                        None => first = Some(here),
                        // x / n == x0 / n0, without division.
                        Some((x0, n0)) => equal &= here.0 * n0 == x0 * here.1,
                    }
                }
            }
        });
        if links < 2 {
            return None;
        }
        if !community {
            // Missing-community fallback: equal per link only if every multipath has the
            // same weight per live link.
            let w = self.weights(g, states, v);
            let per_link: Vec<f64> = self
                .multipaths(g, states, v)
                .iter()
                .zip(&w)
                .filter(|(m, _)| states[m.session.idx()].links > 0)
                .map(|(m, &w)| w / f64::from(states[m.session.idx()].links))
                .collect();
            return Some(per_link.windows(2).all(|p| (p[0] - p[1]).abs() <= 1e-12));
        }
        Some(equal)
    }

    /// Whether speaker `v` forwards toward this prefix exactly as toward `other`'s (both
    /// computed under `states` and the same settings): it has a route in both or neither,
    /// the same multipath sessions, and hears the same link-bandwidth value on each, so
    /// [`RoutesTo::weighted_next_hops`] gives the same next hops and weights, bit for bit.
    pub fn same_forwarding_at(
        &self,
        other: &RoutesTo,
        g: &BgpGraph,
        states: &[SessionState],
        v: SpeakerId,
    ) -> bool {
        if self.best[v.idx()].is_some() != other.best[v.idx()].is_some()
            || self.cfg.missing != other.cfg.missing
        {
            return false;
        }
        let range = g.adj_range(v);
        g.neighbors(v)
            .iter()
            .zip(range)
            .all(|(&(session, neighbor), i)| {
                let mp = self.mp.contains(i);
                mp == other.mp.contains(i)
                    && (!mp
                        || self.received(states, session, neighbor)
                            == other.received(states, session, neighbor))
            })
    }

    /// Speakers whose forwarding toward this prefix may differ between `before` (under
    /// `old` session states) and `self` (under `new`); see [`ChangeProbe`].
    pub fn changed_speakers(
        &self,
        before: &RoutesTo,
        g: &BgpGraph,
        old: &[SessionState],
        new: &[SessionState],
    ) -> FixedBitSet {
        let n = g.speakers.len();
        let sessions = ChangeProbe::sessions_changed(old, new);
        let mut probe = ChangeProbe::new(self, before, g, &sessions);
        let mut out = FixedBitSet::with_capacity(n);
        for v in g.speaker_ids() {
            if probe.changed(v) {
                out.insert(v.idx());
            }
        }
        out
    }

    /// Whether session `s` is one of the multipaths of either of its speakers.
    pub fn uses_session(&self, g: &BgpGraph, s: SessionId) -> bool {
        let (a, b) = g.sessions[s.idx()];
        [a, b].into_iter().any(|x| {
            let pos = g.neighbors(x).partition_point(|&(y, _)| y < s);
            self.mp.contains(g.adj_range(x).start + pos)
        })
    }
}

/// Call `f(block, mask)` for each block of a bitset that overlaps `range`, with the mask of
/// the range's bits in it, until `f` returns true; returns whether it did.
fn for_bits(range: std::ops::Range<usize>, mut f: impl FnMut(usize, usize) -> bool) -> bool {
    let bits = usize::BITS as usize;
    let mut block = range.start / bits;
    while block * bits < range.end {
        let lo = block * bits;
        let mut mask = !0usize;
        if lo < range.start {
            mask &= !0 << (range.start - lo);
        }
        if range.end < lo + bits {
            mask &= (1 << (range.end - lo)) - 1;
        }
        if f(block, mask) {
            return true;
        }
        block += 1;
    }
    false
}

/// Whether a speaker forwards differently toward a prefix after routes went from `before`
/// (under `old` session states) to `now` (under `new`), asked speaker by speaker and
/// remembered: a sweep asks only about the speakers its flows cross, and stops at the first
/// that changed. A speaker's split changes when its multipath set does (which includes
/// gaining or losing a route), when a multipath neighbor re-advertises a new link-bandwidth
/// value, or when a multipath session's links change (what is received scales with them). A
/// new best route alone moves no traffic.
pub struct ChangeProbe<'a> {
    now: &'a RoutesTo,
    before: &'a RoutesTo,
    g: &'a BgpGraph,
    session_changed: &'a FixedBitSet,
    /// 0 unknown, 1 changed, 2 unchanged.
    memo: Vec<u8>,
}

impl<'a> ChangeProbe<'a> {
    /// Set up for routes `now` against `before`; `session_changed` marks the sessions whose
    /// state differs between the two (see [`ChangeProbe::sessions_changed`]).
    pub fn new(
        now: &'a RoutesTo,
        before: &'a RoutesTo,
        g: &'a BgpGraph,
        session_changed: &'a FixedBitSet,
    ) -> Self {
        ChangeProbe {
            now,
            before,
            g,
            session_changed,
            memo: vec![0; g.speakers.len()],
        }
    }

    /// The sessions whose state differs between `old` and `new`, as a bitset.
    pub fn sessions_changed(old: &[SessionState], new: &[SessionState]) -> FixedBitSet {
        let mut b = FixedBitSet::with_capacity(old.len());
        for (s, (o, w)) in old.iter().zip(new).enumerate() {
            if o != w {
                b.insert(s);
            }
        }
        b
    }

    /// Whether `v` splits traffic differently.
    pub fn changed(&mut self, v: SpeakerId) -> bool {
        match self.memo[v.idx()] {
            1 => return true,
            2 => return false,
            _ => {}
        }
        let (g, now, before) = (self.g, self.now, self.before);
        let range = g.adj_range(v);
        let nb = g.neighbors(v);
        let (a, b) = (now.mp.as_slice(), before.mp.as_slice());
        let changed = for_bits(range.clone(), |block, mask| {
            let (x, y) = (a[block] & mask, b[block] & mask);
            if x != y {
                return true;
            }
            let mut word = x;
            while word != 0 {
                let pos = block * usize::BITS as usize + word.trailing_zeros() as usize;
                word &= word - 1;
                let (s, u) = nb[pos - range.start];
                if now.advertised[u.idx()] != before.advertised[u.idx()]
                    || self.session_changed.contains(s.idx())
                {
                    return true;
                }
            }
            false
        });
        self.memo[v.idx()] = if changed { 1 } else { 2 };
        changed
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
    let mut r = RoutesTo {
        origins: origins.to_vec(),
        best: vec![None; n],
        mp: FixedBitSet::with_capacity(g.adj_len()),
        advertised: vec![None; n],
        is_origin: vec![false; n],
        cfg: *cfg,
    };
    for &o in origins {
        r.is_origin[o.idx()] = true;
        r.best[o.idx()] = Some(Best {
            local_pref: u32::MAX,
            len: 0,
            parent: o,
            path_hash: 0,
            gshut: false,
        });
    }
    let seeds: Vec<SpeakerId> = origins
        .iter()
        .flat_map(|&o| g.neighbors(o).iter().map(|&(_, u)| u))
        .collect();
    r.settle(g, states, seeds, &[], true)?;
    Ok(r)
}
