//! Route preference and loop prevention: the routes a speaker can pick from, each keyed by
//! (LOCAL_PREF, AS-path length) as the speaker would hold it.

use super::compute::{RoutesTo, SessionState, SoftDrain};
use super::graph::{BgpGraph, SpeakerId};

pub(super) fn better(a: (u32, u32), b: (u32, u32)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
}

/// One step of a 64-bit FNV-1a-style mix: the hash of an AS path with `asn` prepended.
pub(super) fn extend_hash(h: u64, asn: u32) -> u64 {
    (h ^ u64::from(asn))
        .wrapping_mul(0x0000_0100_0000_01b3)
        .rotate_left(17)
}

impl RoutesTo {
    /// Whether `asn` is on the AS path that speaker `u` advertises (u's ASN, then its parents').
    fn on_path(&self, g: &BgpGraph, u: SpeakerId, asn: u32) -> bool {
        let mut x = u;
        // A path is at most as long as the speaker count; the bound also guards against a
        // transient parent cycle while the worklist is still settling.
        for _ in 0..=g.speakers.len() {
            if g.speakers[x.idx()].asn == asn {
                return true;
            }
            match self.best[x.idx()] {
                Some(b) if b.parent != x => x = b.parent,
                _ => return false,
            }
        }
        true
    }

    /// Candidates of `v`: (adjacency position, neighbor, key) of every usable, loop-free route.
    /// The key is (LOCAL_PREF, AS-path length) as `v` would hold the route; LOCAL_PREF 0 marks
    /// a route carrying the graceful-shutdown community.
    pub(super) fn candidates(
        &self,
        g: &BgpGraph,
        states: &[SessionState],
        v: SpeakerId,
        out: &mut Vec<(usize, SpeakerId, (u32, u32))>,
    ) {
        out.clear();
        let asn = g.speakers[v.idx()].asn;
        for (&(s, u), pos) in g.neighbors(v).iter().zip(g.adj_range(v)) {
            let st = states[s.idx()];
            let Some(b) = self.best[u.idx()] else {
                continue;
            };
            if st.links == 0 || self.on_path(g, u, asn) {
                continue;
            }
            // Does u, the sender, drain this session?
            let u_side = usize::from(g.sessions[s.idx()].0 != u);
            let key = match (st.soft, self.cfg.soft_drain) {
                // The community travels with the route: LOCAL_PREF 0 wherever it arrives.
                (_, SoftDrain::GracefulShutdown) if st.soft || b.gshut => (0, b.len + 1),
                (true, SoftDrain::Prepend(n)) if st.drained_by[u_side] => (100, b.len + 1 + n),
                _ => (100, b.len + 1),
            };
            out.push((pos, u, key));
        }
    }
}
