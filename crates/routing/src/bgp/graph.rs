//! The BGP view of a fabric: speakers, sessions, ASNs.
//!
//! Speakers are the switches that run BGP. A DSF zone's interface nodes (RDSW, EDSW) form one
//! system: the cell fabric between them is not BGP (outside, the whole fabric looks like one
//! big switch: Meta, "Disaggregated Scheduled Fabric ..." 2025), so the zone is one speaker
//! whose sessions are its EDSWs' Ethernet links. FDSW and SDSW do not speak BGP; GPUs are
//! hosts.
//!
//! A session joins two speakers that share at least one Ethernet link; its links are all of
//! them (BGP runs per link, but every link between two speakers carries the same routes).

use aifabric_model::*;
use serde::Serialize;

aifabric_model::id_type!(
    /// A BGP speaker: its index in [`BgpGraph::speakers`].
    SpeakerId
);

aifabric_model::id_type!(
    /// A BGP session (every link between two speakers): its index in [`BgpGraph::sessions`]
    /// and in the session states.
    SessionId
);

impl std::fmt::Display for SpeakerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "speaker {}", self.get())
    }
}

/// What a speaker is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeakerKind {
    /// One switch.
    Device(DeviceId),
    /// The interface nodes of a DSF zone, as one system.
    DsfSystem(ZoneId),
}

/// A BGP speaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Speaker {
    /// Device or DSF system.
    pub kind: SpeakerKind,
    /// Its ASN.
    pub asn: u32,
}

/// How ASNs are assigned (RFC 7938 section 5.2 and its variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AsnPlan {
    /// RFC 7938: a private ASN per rack switch (and per DSF system); switches of one tier share
    /// an ASN per pod (FTSW, CTSW) or per zone (STSW, ATSW); BAG chassis share one per region.
    /// Valley paths repeat an ASN, so loop prevention rejects them.
    Rfc7938,
    /// As `Rfc7938`, but spines (STSW) share an ASN per spine plane and BAG chassis per BAG
    /// plane, so each plane is its own routing domain.
    PerPlane,
    /// Every speaker its own ASN: loop prevention then rejects only true loops.
    Unique,
}

/// First ASN of the 4-byte private range (RFC 6996).
pub const PRIVATE_ASN_BASE: u32 = 4_200_000_000;

/// The speakers and sessions of a fabric, with a compressed adjacency.
#[derive(Clone, Debug)]
pub struct BgpGraph {
    /// All speakers.
    pub speakers: Vec<Speaker>,
    /// Speaker of each device (`None` for GPUs and DSF fabric nodes).
    speaker_of: Vec<Option<SpeakerId>>,
    /// Sessions: (a, b) with a < b.
    pub sessions: Vec<(SpeakerId, SpeakerId)>,
    /// Links of session `s`: `session_links[session_off[s]..session_off[s + 1]]`.
    session_off: Vec<u32>,
    session_links: Vec<LinkId>,
    /// Sessions of speaker `v`: `adj[adj_off[v]..adj_off[v + 1]]` as (session, neighbor).
    adj_off: Vec<u32>,
    adj: Vec<(SessionId, SpeakerId)>,
    /// For each adjacency entry (v -> u over s), the position of the entry u -> v.
    rev: Vec<u32>,
}

fn speaks_bgp(r: Role) -> bool {
    !matches!(r, Role::Gpu | Role::Fdsw | Role::Sdsw)
}

impl BgpGraph {
    /// Build the BGP view of `f` with ASNs from `plan`.
    pub fn new(f: &Fabric, plan: AsnPlan) -> Self {
        let mut speakers = Vec::new();
        let mut speaker_of = vec![None; f.devices().len()];
        let mut system_of_zone = vec![None; f.zones().len()];
        let mut asn_key: Vec<(u8, u32, u32)> = Vec::new();
        for (i, d) in f.devices().iter().enumerate() {
            if !speaks_bgp(d.role) {
                continue;
            }
            let zone = &f.zones()[d.zone.idx()];
            let dsf = matches!(zone.kind, ZoneKind::DsfL1 | ZoneKind::DsfL2)
                && matches!(d.role, Role::Rdsw | Role::Edsw);
            if dsf {
                if system_of_zone[d.zone.idx()].is_none() {
                    system_of_zone[d.zone.idx()] = Some(SpeakerId::from_idx(speakers.len()));
                    speakers.push(Speaker {
                        kind: SpeakerKind::DsfSystem(d.zone),
                        asn: 0,
                    });
                    asn_key.push((0, d.zone.get(), u32::MAX));
                }
                speaker_of[i] = system_of_zone[d.zone.idx()];
                continue;
            }
            speaker_of[i] = Some(SpeakerId::from_idx(speakers.len()));
            speakers.push(Speaker {
                kind: SpeakerKind::Device(DeviceId::from_idx(i)),
                asn: 0,
            });
            // (class, scope, member): speakers with equal keys share an ASN.
            let region = zone.region.get();
            asn_key.push(match (plan, d.role) {
                (AsnPlan::Unique, _) => (9, i as u32, 0),
                (_, Role::Ftsw | Role::Ctsw) => (2, d.zone.get(), d.pod().unwrap_or(0)),
                (AsnPlan::PerPlane, Role::Stsw) => {
                    (3, d.zone.get(), d.plane().map_or(0, |p| u32::from(p) + 1))
                }
                (_, Role::Stsw | Role::Atsw) => (3, d.zone.get(), 0),
                (AsnPlan::PerPlane, Role::Bag) => {
                    (4, region, d.plane().map_or(0, |p| u32::from(p) + 1))
                }
                (_, Role::Bag) => (4, region, 0),
                (_, Role::Hub) => (5, region, 0),
                // Rack switches and anything else: their own ASN.
                _ => (1, i as u32, 0),
            });
        }
        // Number ASNs in order of first appearance: deterministic.
        let mut seen: std::collections::HashMap<(u8, u32, u32), u32> = Default::default();
        for (s, key) in speakers.iter_mut().zip(&asn_key) {
            let next = PRIVATE_ASN_BASE + seen.len() as u32;
            s.asn = *seen.entry(*key).or_insert(next);
        }
        // Sessions: group Ethernet links by speaker pair.
        let mut pairs: Vec<((SpeakerId, SpeakerId), LinkId)> = Vec::new();
        for (i, l) in f.links().iter().enumerate() {
            let (Some(a), Some(b)) = (speaker_of[l.a.idx()], speaker_of[l.b.idx()]) else {
                continue;
            };
            if a == b || l.kind == PortKind::Fabric {
                continue;
            }
            pairs.push(((a.min(b), a.max(b)), LinkId::from_idx(i)));
        }
        pairs.sort_unstable();
        let mut sessions = Vec::new();
        let mut session_off = vec![0u32];
        let mut session_links = Vec::with_capacity(pairs.len());
        for (k, &(pair, link)) in pairs.iter().enumerate() {
            if k > 0 && pairs[k - 1].0 != pair {
                session_off.push(session_links.len() as u32);
            }
            if k == 0 || pairs[k - 1].0 != pair {
                sessions.push(pair);
            }
            session_links.push(link);
        }
        session_off.push(session_links.len() as u32);
        if sessions.is_empty() {
            session_off = vec![0];
        }
        let n = speakers.len();
        let mut adj_off = vec![0u32; n + 1];
        for &(a, b) in &sessions {
            adj_off[a.idx() + 1] += 1;
            adj_off[b.idx() + 1] += 1;
        }
        for i in 0..n {
            adj_off[i + 1] += adj_off[i];
        }
        let mut fill = adj_off.clone();
        let mut adj = vec![(SessionId::new(0), SpeakerId::new(0)); adj_off[n] as usize];
        let mut rev = vec![0u32; adj_off[n] as usize];
        for (s, &(a, b)) in sessions.iter().enumerate() {
            let (pa, pb) = (fill[a.idx()], fill[b.idx()]);
            adj[pa as usize] = (SessionId::from_idx(s), b);
            adj[pb as usize] = (SessionId::from_idx(s), a);
            rev[pa as usize] = pb;
            rev[pb as usize] = pa;
            fill[a.idx()] += 1;
            fill[b.idx()] += 1;
        }
        BgpGraph {
            speakers,
            speaker_of,
            sessions,
            session_off,
            session_links,
            adj_off,
            adj,
            rev,
        }
    }

    /// The links of session `s`.
    pub fn links(&self, s: SessionId) -> &[LinkId] {
        let (a, b) = (self.session_off[s.idx()], self.session_off[s.idx() + 1]);
        &self.session_links[a as usize..b as usize]
    }

    /// The speaker of device `d`: its own, its DSF system's, or `None` (a GPU, a DSF fabric
    /// node).
    #[inline]
    pub fn speaker(&self, d: DeviceId) -> Option<SpeakerId> {
        self.speaker_of[d.idx()]
    }

    /// The speaker of a rack switch (RTSW, RDSW), which always speaks BGP; panics on a device
    /// that does not.
    #[track_caller]
    pub fn rack_speaker(&self, rack_switch: DeviceId) -> SpeakerId {
        self.speaker_of[rack_switch.idx()].expect("a rack switch speaks BGP")
    }

    /// Every speaker, in id order.
    pub fn speaker_ids(&self) -> impl Iterator<Item = SpeakerId> + Clone {
        (0..self.speakers.len() as u32).map(SpeakerId::new)
    }

    /// Sessions of speaker `v` as (session, neighbor), by session id.
    pub fn neighbors(&self, v: SpeakerId) -> &[(SessionId, SpeakerId)] {
        let (a, b) = (self.adj_off[v.idx()], self.adj_off[v.idx() + 1]);
        &self.adj[a as usize..b as usize]
    }

    /// Positions of `v`'s entries in the adjacency (for per-entry bitsets).
    pub fn adj_range(&self, v: SpeakerId) -> std::ops::Range<usize> {
        self.adj_off[v.idx()] as usize..self.adj_off[v.idx() + 1] as usize
    }

    /// The entry for the same session seen from the other end: if `pos` is v -> u, the
    /// position of u -> v.
    #[inline]
    pub fn reverse(&self, pos: usize) -> usize {
        self.rev[pos] as usize
    }

    /// The speaker whose adjacency holds entry `pos`.
    pub fn owner(&self, pos: usize) -> SpeakerId {
        SpeakerId::new((self.adj_off.partition_point(|&o| o as usize <= pos) - 1) as u32)
    }

    /// Total adjacency entries (twice the sessions).
    pub fn adj_len(&self) -> usize {
        self.adj.len()
    }

    /// Human name of a speaker.
    pub fn name(&self, f: &Fabric, v: SpeakerId) -> String {
        match self.speakers[v.idx()].kind {
            SpeakerKind::Device(d) => f.device_name(d),
            SpeakerKind::DsfSystem(z) => format!("{} (DSF system)", f.zones()[z.idx()].name),
        }
    }
}
