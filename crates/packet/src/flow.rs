//! A flow's state at both ends: the sender's packets (sent, in flight, lost, acknowledged),
//! its timers, entropy values and congestion control; the receiver's bitmap and pending
//! ACK; admission's chunks.

use crate::cc::FlowCc;
use crate::ids::HostId;
use crate::sim::next_rand;
use std::collections::VecDeque;

/// Where a sender stands with one of its packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sent {
    Unsent,
    InFlight,
    /// Presumed lost (NACKed or timed out), queued to be sent again.
    Lost,
    Acked,
}

/// What a switch reads of a flow to route its packets: a dense copy of [`Flow`]'s `id`,
/// `src` and `dst` (16 bytes against the flow's hundreds), so that routing reads one small
/// array that stays in cache.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlowKey {
    pub id: u64,
    pub src: HostId,
    pub dst: HostId,
}

impl From<&Flow> for FlowKey {
    fn from(f: &Flow) -> FlowKey {
        FlowKey {
            id: f.id,
            src: f.src,
            dst: f.dst,
        }
    }
}

/// One flow's state at both ends.
///
/// Laid out by use (`repr(C)`, 64-byte aligned, 512 bytes): the first line holds what both
/// ends read on every packet (the line prefetched ahead of an arrival), the second the
/// receiver's (its trigger, read once, opens the third), then the sender's congestion
/// control and per-packet lists, and last what is read once per flow. Rust's own order had
/// the receiver's fields over four lines.
#[repr(C, align(64))]
pub(crate) struct Flow {
    // Both ends, every packet.
    pub src: HostId,
    pub dst: HostId,
    /// Packets simulated: its packets less those fast-forwarding skipped.
    pub packets: u32,
    pub next_new: u32,
    pub acked: u32,
    /// Admission: packets the sender may send for the first time (cleared by CTS), chunks
    /// the receiver granted and saw complete.
    pub cleared: u32,
    pub in_flight_bytes: u64,
    pub bytes: u64,
    /// Retransmission timeout: the configured one, or twice the path's base round trip
    /// where that is longer (a timer shorter than the round trip fires on every packet).
    pub rto_ps: u64,
    pub rng: u64,
    pub started: bool,
    pub done: bool,
    pub rto_armed: bool,
    /// A delayed-ACK event is scheduled.
    pub ack_timer: bool,
    // Receiver.
    pub got: Vec<u64>,
    pub pending: Vec<u32>,
    pub pending_bytes: u64,
    pub received: u32,
    pub pending_ecn: u32,
    /// Fired when the receiver holds every byte.
    pub recv_trigger: Option<u32>,
    /// Its congestion control, both ends (the receiver's part only on a mark).
    pub cc: FlowCc,
    // Sender.
    pub state: Vec<Sent>,
    pub retx: VecDeque<u32>,
    /// When each packet was last sent, picoseconds.
    pub sent_ps: Vec<u64>,
    /// The entropy value each packet was last sent with (`spray`: its ACK recycles it).
    pub ev: Vec<u32>,
    /// (send time, packet) in send order; entries whose packet was acknowledged, declared
    /// lost or sent again since are skipped when read.
    pub sends: VecDeque<(u64, u32)>,
    /// Entropy values that came back unmarked, to reuse first (REPS).
    pub good: VecDeque<u32>,
    /// Penalties of entropy values that came back marked or trimmed (sprayed flows of at
    /// most `MAX_PENALIZED` values), the round-robin position and its offset.
    pub penalty: Vec<u8>,
    pub ev_next: u32,
    pub ev_offset: u32,
    // Once per flow.
    pub id: u64,
    pub start_ps: u64,
    pub finish_ps: u64,
    pub done_trigger: Option<u32>,
    /// Packets fast-forwarding counted as delivered without simulating them (the hybrid
    /// engine: `forward.rs`).
    pub skipped: u32,
    pub chunks_granted: u32,
    pub chunks_done: u32,
}

/// Most entropy values whose penalties a sprayed flow tracks (beyond, values are not
/// penalized).
pub(crate) const MAX_PENALIZED: u32 = 1024;

/// Most entropy values a sprayed flow keeps for reuse.
const GOOD_ENTROPIES: usize = 64;

impl Flow {
    /// An entropy value when none can be reused: a round-robin walk over the N values from
    /// a random offset (redrawn at each wrap), skipping values with a penalty; the first
    /// penalized value met loses one point of it, so a penalty fades with use (htsim's
    /// default "mixed" load balancing works this way; ECN counts 1, a trim 4).
    pub fn fresh_entropy(&mut self, n: u32) -> u32 {
        let mut decremented = false;
        for _ in 0..=n {
            if self.ev_next >= n {
                self.ev_next = 0;
                self.ev_offset = (next_rand(&mut self.rng) % u64::from(n)) as u32;
            }
            let e = (self.ev_next + self.ev_offset) % n;
            self.ev_next += 1;
            match self.penalty.get_mut(e as usize) {
                Some(p) if *p > 0 => {
                    if !decremented {
                        *p -= 1;
                        decremented = true;
                    }
                }
                _ => return e,
            }
        }
        (next_rand(&mut self.rng) % u64::from(n)) as u32
    }

    /// Entropy value `e` came back marked (1 point) or trimmed (4).
    pub fn penalize(&mut self, e: u32, points: u8) {
        if let Some(p) = self.penalty.get_mut(e as usize) {
            *p = (*p + points).min(15);
        }
    }

    /// Entropy value `e` came back unmarked: reuse it (the oldest such value goes when
    /// too many wait).
    #[inline]
    pub fn recycle(&mut self, e: u32) {
        if self.good.len() >= GOOD_ENTROPIES {
            self.good.pop_front();
        }
        self.good.push_back(e);
    }

    /// Bytes on the wire of packet `seq`.
    #[inline]
    pub fn wire_bytes(&self, seq: u32, mtu: u32, header: u32) -> u32 {
        let payload = mtu - header;
        // The skipped packets are full ones: the last keeps its size.
        let before = u64::from(self.packets - 1) + u64::from(self.skipped);
        let last = (self.bytes - before * u64::from(payload)) as u32;
        if seq + 1 == self.packets {
            last + header
        } else {
            mtu
        }
    }
}
