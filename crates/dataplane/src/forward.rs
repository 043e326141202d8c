//! Forwarding: the converged routes toward each destination, computed once and shared
//! ([`Forwarding`]), and the next-hop links of a switch toward a destination with their
//! shares.

use crate::{Net, PathWs, ResourceId, WeightDifferences};
use aifabric_model::{DeviceId, LinkId};
use aifabric_routing::bgp::{routes_to, NotConverged, RoutesTo, SpeakerId};
use fixedbitset::FixedBitSet;
use rayon::prelude::*;
use std::sync::OnceLock;

/// The converged BGP routes toward destination speakers of one [`Net`], each computed the
/// first time it is asked for and kept: the one forwarding view the flow engine's paths, the
/// reports and the replay read (a reader that needs each destination once streams them
/// with [`Net::routes_toward`] instead). [`Forwarding::new`] computes the routes
/// toward a set of GPUs' racks up front, in parallel; [`Forwarding::routes_to`] fills in any
/// other destination on demand.
///
/// A `Forwarding` belongs to the `Net` it was built from (another scenario's routes would be
/// wrong for it): the calls that take a `Net` check it is that one, and panic otherwise.
pub struct Forwarding {
    /// The `Net` it was built from.
    net: u64,
    /// Per speaker, its routes once computed.
    slots: Vec<OnceLock<RoutesTo>>,
}

impl Forwarding {
    /// Nothing computed yet.
    pub fn empty(net: &Net<'_>) -> Self {
        Forwarding {
            net: net.id,
            slots: (0..net.g.speakers.len()).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The routes toward the rack of every GPU in `gpus`, computed in parallel.
    pub fn new(net: &Net<'_>, gpus: impl Iterator<Item = DeviceId>) -> Result<Self, NotConverged> {
        let fwd = Forwarding::empty(net);
        let want: Vec<SpeakerId> = gpus.filter_map(|g| net.dest_speaker(g)).collect();
        fwd.prefill(net, want)?;
        Ok(fwd)
    }

    /// Compute the routes toward each of `speakers` not computed yet, in parallel.
    pub fn prefill(&self, net: &Net<'_>, mut speakers: Vec<SpeakerId>) -> Result<(), NotConverged> {
        self.check(net);
        speakers.sort_unstable();
        speakers.dedup();
        speakers.retain(|s| self.slots[s.idx()].get().is_none());
        let routes: Vec<RoutesTo> = speakers
            .par_iter()
            .map(|&s| routes_to(&net.g, &net.states, s, &net.cfg))
            .collect::<Result<_, _>>()?;
        for (s, r) in speakers.into_iter().zip(routes) {
            // Filled just above from a list without repeats: the slot is empty.
            let _ = self.slots[s.idx()].set(r);
        }
        Ok(())
    }

    /// The routes toward destination speaker `s`, if they were computed.
    pub fn get(&self, s: SpeakerId) -> Option<&RoutesTo> {
        self.slots.get(s.idx())?.get()
    }

    /// The routes toward destination speaker `s`, computed now if they were not yet.
    pub fn routes_to(&self, net: &Net<'_>, s: SpeakerId) -> Result<&RoutesTo, NotConverged> {
        self.check(net);
        if let Some(r) = self.get(s) {
            return Ok(r);
        }
        let r = routes_to(&net.g, &net.states, s, &net.cfg)?;
        Ok(self.slots[s.idx()].get_or_init(|| r))
    }

    fn check(&self, net: &Net<'_>) {
        assert_eq!(
            self.net, net.id,
            "a Forwarding is read with the Net it was built from"
        );
    }

    /// Every destination computed so far (what [`Forwarding::new`] asked for, and any filled
    /// in since), in speaker order.
    pub fn all(&self) -> Vec<&RoutesTo> {
        self.slots.iter().filter_map(OnceLock::get).collect()
    }
}

impl Net<'_> {
    /// The converged routes toward destination speaker `s`, computed now and not kept: for
    /// a reader that needs each destination once and would otherwise hold them all (the
    /// packet engine turns each into next-hop tables and drops it, so its peak memory is one
    /// destination's routes per thread, not every destination's).
    pub fn routes_toward(&self, s: SpeakerId) -> Result<RoutesTo, NotConverged> {
        routes_to(&self.g, &self.states, s, &self.cfg)
    }

    /// The live links speaker `sv` splits traffic toward `routes`' prefix over, into
    /// `ws.members` with each link's share: by BGP's link-bandwidth weights (`weighted`: UCMP,
    /// spray), each multipath's weight shared over its live links by capacity, or 1 per live
    /// link (ECMP, E-ECMP: hardware's equal-cost group, one member per link).
    pub(crate) fn next_hop_links(
        &self,
        routes: &RoutesTo,
        sv: SpeakerId,
        weighted: bool,
        ws: &mut PathWs,
    ) {
        let key = (std::ptr::from_ref(routes) as usize, sv, weighted);
        if let Some(&(at, len)) = ws.known.get(&key) {
            ws.members.clear();
            ws.members
                .extend_from_slice(&ws.known_links[at as usize..(at + len) as usize]);
            return;
        }
        self.find_next_hop_links(routes, sv, weighted, ws);
        let at = ws.known_links.len() as u32;
        ws.known_links.extend_from_slice(&ws.members);
        ws.known.insert(key, (at, ws.members.len() as u32));
    }

    /// [`Net::next_hop_links`] without the memo.
    fn find_next_hop_links(
        &self,
        routes: &RoutesTo,
        sv: SpeakerId,
        weighted: bool,
        ws: &mut PathWs,
    ) {
        routes.weighted_next_hops(
            &self.g,
            &self.states,
            sv,
            &mut ws.scratch,
            &mut ws.weights,
            &mut ws.hops,
        );
        // Members: every live link of every multipath session.
        ws.members.clear();
        let range = self.g.adj_range(sv);
        let nb = self.g.neighbors(sv);
        for &(pos, _, w) in &ws.hops {
            let session = nb[pos - range.start].0;
            let links = self.g.links(session);
            let live: f64 = links
                .iter()
                .filter(|&&l| self.f.link_up(l, &self.down))
                .map(|&l| f64::from(self.f.link(l).capacity_mbps))
                .sum();
            if live <= 0.0 || w <= 0.0 {
                continue;
            }
            for &l in links {
                if self.f.link_up(l, &self.down) {
                    let share = if weighted {
                        w * f64::from(self.f.link(l).capacity_mbps) / live
                    } else {
                        1.0
                    };
                    ws.members.push((l, share));
                }
            }
        }
    }

    /// The next-hop links of speaker `sv` toward `routes`' destination, each with its share:
    /// by BGP's link-bandwidth weights when `weighted` (UCMP), else 1 per live link (an ECMP
    /// group). For engines that forward packet by packet and build their own tables.
    pub fn next_hops(
        &self,
        routes: &RoutesTo,
        sv: SpeakerId,
        weighted: bool,
    ) -> Vec<(LinkId, f64)> {
        let mut ws = PathWs::default();
        self.next_hop_links(routes, sv, weighted, &mut ws);
        ws.members
    }

    /// Resource id of link `l` crossed from its end `from` (`2 l + dir`, `dir` 0 from `a`).
    pub fn link_resource(&self, l: LinkId, from: DeviceId) -> ResourceId {
        ResourceId::new(self.link_res(l, from))
    }

    /// Where the two kinds of weights split differently on these routes: at how many
    /// switches (BGP speakers) a prefix of `routes` has more than one next-hop link, and at
    /// how many of them BGP's link-bandwidth weights (`ucmp`, `spray`) give some link a
    /// different share than equal per live link (`ecmp`, `eecmp`). `ucmp` and `ecmp` can
    /// only differ at those; with none, they give the same results.
    pub fn weight_differences(&self, routes: &[&RoutesTo]) -> WeightDifferences {
        use rayon::prelude::*;
        let n = self.g.speakers.len();
        // Per destination in parallel: (choice, unequal) bits per speaker, OR-ed together.
        let (choice, unequal) = routes
            .par_iter()
            .fold(
                || (FixedBitSet::with_capacity(n), FixedBitSet::with_capacity(n)),
                |(mut choice, mut unequal), r| {
                    for v in self.g.speaker_ids() {
                        if r.is_origin(v) {
                            continue;
                        }
                        if let Some(equal) = r.equal_per_link_at(&self.g, &self.states, v) {
                            choice.insert(v.idx());
                            if !equal {
                                unequal.insert(v.idx());
                            }
                        }
                    }
                    (choice, unequal)
                },
            )
            .reduce(
                || (FixedBitSet::with_capacity(n), FixedBitSet::with_capacity(n)),
                |(mut c1, mut u1), (c2, u2)| {
                    c1.union_with(&c2);
                    u1.union_with(&u2);
                    (c1, u1)
                },
            );
        let first = unequal.ones().next();
        WeightDifferences {
            switches_with_choice: choice.count_ones(..) as u64,
            switches_unequal: unequal.count_ones(..) as u64,
            example: first.map(|v| {
                aifabric_routing::fib::speaker_name(self.f, &self.g, SpeakerId::from_idx(v))
            }),
        }
    }
}
