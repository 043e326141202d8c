//! Sprayed flows at scale: spread hop by hop, each hop computed once and stored once.
//!
//! A sprayed flow from rack switch `S` to rack switch `D` spreads over every next hop of the
//! control plane ([`Net::hop`]). Between two distant racks that is every link the spray can
//! reach: about 10,000 links from one building of `prometheus` to another over BAG, so one
//! stored split per rack pair is 10,000 entries, and 65,536 pairs are 650M. Most of it is
//! shared: every rack of a DSF zone hands its traffic to the same BAG links with the same
//! weights, and from there on its spreading no longer depends on which rack it left.
//!
//! So a pair's spreading is walked one hop at a time, as a chain of **frontiers** (the
//! devices the flow's mass has reached, with the mass and the latency so far). A hop depends
//! only on its frontier and on the routes at the frontier's speakers; toward a destination
//! outside the frontier's zones, those routes are the same for every destination whose
//! routes agree at every speaker outside its zone (a **routing class**: one per DSF zone,
//! and usually one per NSF zone, whose racks are reached alike from outside). Each hop is
//! memoized by (frontier, class), or by (frontier, destination rack switch) once the
//! frontier reaches the destination's zone or stands at a rack switch that is its own
//! speaker (the first hop from an NSF or RoCE rack: classes leave the thousands of rack
//! speakers out, so that finding a class stays cheap), and its resources become two splits (DSF
//! crossbar resources and links) interned by content: equal content, one split. A flow
//! then uses one split per hop and kind, a handful, and the splits together hold what the
//! distinct hops load, not what every pair loads.
//!
//! Exact by construction: a memoized hop is reused only where it would be computed from the
//! same inputs, and a split only where its (resource, share) list is bit for bit the same.
//! The only difference with one split per pair is the order in which a resource's shares
//! are summed. A pair inside one zone, whose first hop already depends on its destination,
//! keeps one split of its own (nothing to share, and the walk would only cost time).

use crate::maxmin::FlowSet;
use aifabric_dataplane::{Forwarding, Lb, Net, NoPath, PathWs, ResourceId, MAX_HOPS};
use aifabric_model::DeviceId;
use aifabric_routing::bgp::{RoutesTo, SpeakerId};
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};

/// A frontier device: (device, mass, latency so far in seconds).
type Front = (DeviceId, f64, f64);

/// What one hop from a frontier does, memoized.
#[derive(Clone, Copy, Debug)]
struct Hop {
    /// Split of the DSF crossbar resources it loads, and of the links.
    crossbar: Option<u32>,
    links: Option<u32>,
    /// The next frontier.
    next: u32,
    /// Latency of the slowest mass that arrived in this hop (`-inf`: none did).
    arrived: f64,
    /// Whether it loads a resource of capacity 0.
    dead: bool,
}

/// A pair's splits, in 16 bytes (one hash-map entry per rack pair, probed once per flow):
/// `first` is the split itself when `n == 1` (a pair inside one zone), else where its `n`
/// splits start in `pair_splits`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PairSplits {
    /// Latency without the host cables, seconds.
    pub(crate) lat: f64,
    first: u32,
    n: u32,
}

/// Routing key of a hop whose frontier touches the destination's zone: the destination
/// rack switch itself (above every class id).
const EXACT: u64 = 1 << 32;

/// The memo of one phase (splits use the phase's local resource ids).
#[derive(Default)]
pub(crate) struct SprayMemo {
    /// Per (source, destination) rack switch: its splits and its latency without the host
    /// cables.
    pairs: FxHashMap<(DeviceId, DeviceId), PairSplits>,
    /// Splits of the pairs that have more than one, and of the pair being walked.
    pair_splits: Vec<u32>,
    /// The pair asked for last.
    last: Option<((DeviceId, DeviceId), PairSplits)>,
    /// Routing class of each destination speaker; per class, its zone and a representative.
    class_of: FxHashMap<SpeakerId, u32>,
    classes: Vec<(u32, SpeakerId)>,
    /// Interned frontiers `fr[fr_off[i]..fr_off[i + 1]]`, found by content hash.
    fr: Vec<Front>,
    fr_off: Vec<u32>,
    fr_index: FxHashMap<u64, Vec<u32>>,
    /// (frontier, routing key) -> the hop.
    hops: FxHashMap<(u32, u64), Hop>,
    /// Interned splits by content hash.
    split_index: FxHashMap<u64, Vec<u32>>,
    cur: Vec<Front>,
    next: Vec<Front>,
    out: Vec<(u32, f64)>,
    part: Vec<(u32, f64)>,
}

/// Where splits go: the phase's flows, with its local resource ids.
pub(crate) struct Sink<'a> {
    pub(crate) flows: &'a mut FlowSet,
    pub(crate) local_id: &'a mut dyn FnMut(u32) -> u32,
}

impl SprayMemo {
    /// Forget a phase's hops and splits (their resource ids are the phase's). The routing
    /// classes stay: they depend only on the network and its routes, which a phase
    /// workspace keeps for its life.
    pub(crate) fn clear(&mut self) {
        self.last = None;
        self.pairs.clear();
        self.pair_splits.clear();
        self.fr.clear();
        self.fr_off.clear();
        self.fr_index.clear();
        self.hops.clear();
        self.split_index.clear();
    }

    /// Distinct rack pairs seen.
    pub(crate) fn pairs(&self) -> usize {
        self.pairs.len()
    }

    /// The splits of the sprayed flow between rack switches `key` (computed from GPUs `src`
    /// -> `dst` the first time) and its latency without the host cables.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn pair(
        &mut self,
        net: &Net<'_>,
        cache: &Forwarding,
        src: DeviceId,
        dst: DeviceId,
        key: (DeviceId, DeviceId),
        seed: u64,
        path: &mut PathWs,
        sink: &mut Sink<'_>,
    ) -> Result<PairSplits, NoPath> {
        // Consecutive flows often join the same two rack switches (a ring step, a round of
        // an all-to-all): the last pair answers without a probe.
        if let Some((k, p)) = self.last {
            if k == key {
                return Ok(p);
            }
        }
        if let Some(&p) = self.pairs.get(&key) {
            self.last = Some((key, p));
            return Ok(p);
        }
        // The first time: walked hop by hop (the map remembers it).
        let (tor_src, tor_dst) = key;
        let ds = net.g.rack_speaker(tor_dst);
        let routes = cache.get(ds).ok_or(NoPath::NoRoute)?;
        let zone_dst = net.zone_of(tor_dst);
        let start = self.pair_splits.len();
        if net.zone_of(tor_src) == zone_dst {
            // Inside one zone a pair's spreading shares little with other pairs' (its first
            // hop already reads the destination): the whole of it, one split.
            self.out.clear();
            let lat = net.path(
                Some(routes),
                src,
                dst,
                0,
                Lb::Spray(None),
                seed,
                path,
                &mut self.out,
            )?;
            if self.out.iter().any(|u| net.is_dead(ResourceId::new(u.0))) {
                return Err(NoPath::NoCapacity);
            }
            // The first and last uses are the host links; the split is what lies between.
            let n = self.out.len();
            if n > 2 {
                let local_id = &mut sink.local_id;
                let sp = sink
                    .flows
                    .add_split(self.out[1..n - 1].iter().map(|&(r, s)| (local_id(r), s)));
                self.pair_splits.push(sp);
            }
            let lat = lat - net.host_cables_s(src, dst);
            return Ok(self.keep(key, start, lat));
        }
        let mut f = self.intern_frontier(&[(tor_src, 1.0, 0.0)]);
        let mut class = None;
        let mut latency = 0.0f64;
        let mut dead = false;
        let mut ok = false;
        for _hop in 0..MAX_HOPS {
            let fr = self.frontier(f);
            if fr.is_empty() {
                ok = true;
                break;
            }
            // A frontier in the destination's zone, or at a rack switch that speaks for
            // itself (a source; classes do not look at those), reads the destination itself.
            let touches = fr
                .iter()
                .any(|x| net.zone_of(x.0) == zone_dst || net.is_rack_speaker(x.0));
            let rk = if touches {
                EXACT | u64::from(tor_dst.get())
            } else {
                let c = match class {
                    Some(c) => c,
                    None => *class.insert(self.class(net, cache, ds, routes)),
                };
                u64::from(c)
            };
            let hop = match self.hops.get(&(f, rk)) {
                Some(&h) => h,
                None => {
                    let h = self.compute(net, routes, f, tor_dst, ds, seed, path, sink);
                    let h = match h {
                        Ok(h) => h,
                        Err(e) => {
                            self.pair_splits.truncate(start);
                            return Err(e);
                        }
                    };
                    self.hops.insert((f, rk), h);
                    h
                }
            };
            latency = latency.max(hop.arrived);
            dead |= hop.dead;
            for sp in [hop.crossbar, hop.links].into_iter().flatten() {
                let sp = if self.pair_splits[start..].contains(&sp) {
                    // The same content twice in one flow (a path that loads the same
                    // resources alike in two hops): a copy of its own.
                    let copy: Vec<(u32, f64)> = sink.flows.split_uses(sp).collect();
                    sink.flows.add_split(copy.into_iter())
                } else {
                    sp
                };
                self.pair_splits.push(sp);
            }
            f = hop.next;
        }
        if !ok || dead {
            self.pair_splits.truncate(start);
            return Err(if ok {
                NoPath::NoCapacity
            } else {
                NoPath::NoRoute
            });
        }
        // As `Net::path` adds it up, less the host cables (they differ between the GPUs
        // of the same rack switches).
        let lat = net.spray_base_latency_s(src, dst) + latency - net.host_cables_s(src, dst);
        Ok(self.keep(key, start, lat))
    }

    /// Keep the splits walked for `key` (`pair_splits[start..]`), and return them.
    fn keep(&mut self, key: (DeviceId, DeviceId), start: usize, lat: f64) -> PairSplits {
        let n = self.pair_splits.len() - start;
        let first = if n == 1 {
            self.pair_splits.pop().expect("one split")
        } else {
            start as u32
        };
        let p = PairSplits {
            lat,
            first,
            n: n as u32,
        };
        self.pairs.insert(key, p);
        p
    }

    /// The splits of `p`.
    pub(crate) fn ids<'a>(&'a self, p: &'a PairSplits) -> &'a [u32] {
        if p.n == 1 {
            std::slice::from_ref(&p.first)
        } else {
            let a = p.first as usize;
            &self.pair_splits[a..a + p.n as usize]
        }
    }

    /// Frontier `i`.
    fn frontier(&self, i: u32) -> &[Front] {
        &self.fr[self.fr_off[i as usize] as usize..self.fr_off[i as usize + 1] as usize]
    }

    /// The id of frontier `x`, added on first sight.
    fn intern_frontier(&mut self, x: &[Front]) -> u32 {
        let bits = |e: &Front| (e.0, e.1.to_bits(), e.2.to_bits());
        let mut h = FxHasher::default();
        for e in x {
            bits(e).hash(&mut h);
        }
        let h = h.finish();
        if let Some(ids) = self.fr_index.get(&h) {
            for &i in ids {
                let y = self.frontier(i);
                if y.len() == x.len() && y.iter().zip(x).all(|(a, b)| bits(a) == bits(b)) {
                    return i;
                }
            }
        }
        if self.fr_off.is_empty() {
            self.fr_off.push(0);
        }
        self.fr.extend_from_slice(x);
        self.fr_off.push(self.fr.len() as u32);
        let i = (self.fr_off.len() - 2) as u32;
        self.fr_index.entry(h).or_default().push(i);
        i
    }

    /// The routing class of destination speaker `ds`: the first class of its zone whose
    /// representative's routes agree with `routes` at every speaker outside that zone, rack
    /// switches speaking for themselves aside (a hop from one is keyed by the destination).
    fn class(
        &mut self,
        net: &Net<'_>,
        cache: &Forwarding,
        ds: SpeakerId,
        routes: &RoutesTo,
    ) -> u32 {
        if let Some(&c) = self.class_of.get(&ds) {
            return c;
        }
        let z = net.speaker_zone(ds);
        let found = self.classes.iter().position(|&(cz, rep)| {
            cz == z
                && cache.get(rep).is_some_and(|other| {
                    net.g
                        .speaker_ids()
                        .filter(|&s| net.speaker_zone(s) != z && !net.speaker_is_rack(s))
                        .all(|s| routes.same_forwarding_at(other, &net.g, &net.states, s))
                })
        });
        let c = match found {
            Some(c) => c as u32,
            None => {
                self.classes.push((z, ds));
                (self.classes.len() - 1) as u32
            }
        };
        self.class_of.insert(ds, c);
        c
    }

    /// Spread frontier `f` one hop toward `tor_dst`.
    #[allow(clippy::too_many_arguments)]
    fn compute(
        &mut self,
        net: &Net<'_>,
        routes: &RoutesTo,
        f: u32,
        tor_dst: DeviceId,
        target: SpeakerId,
        seed: u64,
        path: &mut PathWs,
        sink: &mut Sink<'_>,
    ) -> Result<Hop, NoPath> {
        self.cur.clear();
        let (a, b) = (
            self.fr_off[f as usize] as usize,
            self.fr_off[f as usize + 1] as usize,
        );
        self.cur.extend_from_slice(&self.fr[a..b]);
        self.out.clear();
        let arrived = net.hop(
            routes,
            &self.cur,
            tor_dst,
            target,
            0,
            Lb::Spray(None),
            seed,
            path,
            &mut self.next,
            &mut self.out,
        )?;
        // One entry per resource, its shares summed in the order they came.
        self.out.sort_by_key(|e| e.0);
        let mut dead = false;
        self.part.clear();
        for &(r, s) in &self.out {
            match self.part.last_mut() {
                Some(last) if last.0 == r => last.1 += s,
                _ => self.part.push((r, s)),
            }
        }
        let mut crossbar = Vec::new();
        let mut links = Vec::new();
        for &(r, s) in &self.part {
            dead |= net.is_dead(ResourceId::new(r));
            if s <= 0.0 {
                continue;
            }
            let e = ((sink.local_id)(r), s);
            if net.is_link(ResourceId::new(r)) {
                links.push(e);
            } else {
                crossbar.push(e);
            }
        }
        let crossbar = (!crossbar.is_empty()).then(|| self.intern_split(sink.flows, &crossbar));
        let links = (!links.is_empty()).then(|| self.intern_split(sink.flows, &links));
        let next = std::mem::take(&mut self.next);
        let id = self.intern_frontier(&next);
        self.next = next;
        Ok(Hop {
            crossbar,
            links,
            next: id,
            arrived,
            dead,
        })
    }

    /// The id of a split with exactly these (local resource, share) entries, added on
    /// first sight.
    fn intern_split(&mut self, flows: &mut FlowSet, x: &[(u32, f64)]) -> u32 {
        let mut h = FxHasher::default();
        for &(r, s) in x {
            (r, s.to_bits()).hash(&mut h);
        }
        let h = h.finish();
        if let Some(ids) = self.split_index.get(&h) {
            for &i in ids {
                let mut y = flows.split_uses(i);
                let same = x.iter().all(|&(r, s)| {
                    y.next()
                        .is_some_and(|(r2, s2)| r2 == r && s2.to_bits() == s.to_bits())
                }) && y.next().is_none();
                if same {
                    return i;
                }
            }
        }
        let i = flows.add_split(x.iter().copied());
        self.split_index.entry(h).or_default().push(i);
        i
    }
}
