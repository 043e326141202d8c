//! Packets: what they carry, the arena that holds them, the FIFOs linked through them and
//! the pool of ACKs' SACK lists.

use crate::ids::{FlowId, HostId, PacketId, PortId, SackId};
use std::ops::{Index, IndexMut};

/// What a packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Payload, sender to receiver.
    Data,
    /// A data packet trimmed to its header, on its way to the receiver (which NACKs it).
    Header,
    /// Acknowledgement, receiver to sender.
    Ack,
    /// Negative acknowledgement of a trimmed packet, receiver to sender.
    Nack,
    /// DCQCN's congestion notification, receiver to sender.
    Cnp,
    /// Receiver-driven admission: clear to send one more chunk, receiver to sender.
    Cts,
}

impl Kind {
    /// A control packet, going from the flow's receiver back to its sender.
    #[inline]
    pub fn backward(self) -> bool {
        matches!(self, Kind::Ack | Kind::Nack | Kind::Cnp | Kind::Cts)
    }
}

/// One packet: one cache line (64-byte aligned), so that the line prefetched ahead of its
/// arrival holds all of it (at 56 bytes unaligned, six packets in eight straddled two).
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub(crate) struct Packet {
    pub flow: FlowId,
    pub seq: u32,
    pub bytes: u32,
    pub kind: Kind,
    pub ecn: bool,
    /// The receiver should acknowledge at once.
    pub ack_request: bool,
    pub entropy: u32,
    /// The port it is on (queued, or crossing; its sender's NIC before it leaves).
    pub port: PortId,
    /// Data: when the sender sent it. ACK: the send time of the newest packet it covers.
    pub stamp_ps: u64,
    /// ACK: its list of packets in the SACK pool.
    pub sack: Option<SackId>,
    /// ACK: data bytes among those it covers that were marked ECN.
    pub ecn_bytes: u32,
    /// The next packet in its queue (`None` at the tail).
    pub next: Option<PacketId>,
    /// Data: a retransmission. ACK: its RTT sample is not valid (the packet that triggered
    /// it was a retransmission).
    pub again: bool,
    pub live: bool,
    /// It crossed a DSF zone's fabric (its ingress accounting, if any, was released when
    /// it left the VOQ; `port` is then its egress port until it is transmitted).
    pub dsf: bool,
    /// Cells of it still to reach the egress interface node.
    pub cells: u32,
    /// What a switch routes it by, so that routing reads only the packet: the host it
    /// travels to (its flow's receiver; a control packet's, its sender) and the hash of its
    /// flow's id and its entropy value. Set when it is allocated
    /// ([`Sim::alloc_packet`](crate::sim::Sim::alloc_packet)); [`Packet::new`] leaves host 0
    /// and 0.
    pub to: HostId,
    pub route_hash: u64,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 64);

impl Packet {
    /// A packet of `kind` of flow `flow` at port `port`, all else zero.
    pub fn new(flow: FlowId, seq: u32, kind: Kind, bytes: u32, port: PortId) -> Packet {
        Packet {
            flow,
            seq,
            bytes,
            kind,
            ecn: false,
            ack_request: false,
            entropy: 0,
            port,
            stamp_ps: 0,
            sack: None,
            ecn_bytes: 0,
            next: None,
            again: false,
            live: true,
            dsf: false,
            cells: 0,
            to: HostId::from_idx(0),
            route_hash: 0,
        }
    }
}

/// A FIFO of packets linked through their `next` field: no buffer of its own, so a queue
/// costs 8 bytes and reading one touches only the packets.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Fifo {
    pub head: Option<PacketId>,
    pub tail: Option<PacketId>,
}

/// An ACK's SACK list on its way to another part (`partition.rs`): inline up to four
/// packets (an ACK covers about three on the htsim permutations), so that it mostly costs
/// no allocation (a longer list spills to the heap).
pub(crate) type SackCopy = smallvec::SmallVec<[u32; 4]>;

/// The packets (an arena with a free list) and the SACK lists of ACKs.
#[derive(Default)]
pub(crate) struct Packets {
    pub slots: Vec<Packet>,
    free: Vec<PacketId>,
    sacks: Vec<Vec<u32>>,
    free_sacks: Vec<SackId>,
}

impl Index<PacketId> for Packets {
    type Output = Packet;
    #[inline]
    fn index(&self, i: PacketId) -> &Packet {
        &self.slots[i.idx()]
    }
}

impl IndexMut<PacketId> for Packets {
    #[inline]
    fn index_mut(&mut self, i: PacketId) -> &mut Packet {
        &mut self.slots[i.idx()]
    }
}

impl Packets {
    /// Append `i` to `q`.
    #[inline]
    pub fn push(&mut self, q: Fifo, i: PacketId) -> Fifo {
        self[i].next = None;
        match q.tail {
            None => Fifo {
                head: Some(i),
                tail: Some(i),
            },
            Some(t) => {
                self[t].next = Some(i);
                Fifo {
                    head: q.head,
                    tail: Some(i),
                }
            }
        }
    }

    /// Take the head of `q`.
    #[inline]
    pub fn pop(&self, q: Fifo) -> (Fifo, Option<PacketId>) {
        let Some(i) = q.head else {
            return (q, None);
        };
        let q = match self[i].next {
            None => Fifo::default(),
            next => Fifo {
                head: next,
                tail: q.tail,
            },
        };
        (q, Some(i))
    }

    /// The packets of `q`, head first.
    pub fn iter(&self, q: Fifo) -> impl Iterator<Item = PacketId> + '_ {
        std::iter::successors(q.head, |&i| self[i].next)
    }

    pub fn alloc(&mut self, p: Packet) -> PacketId {
        match self.free.pop() {
            Some(i) => {
                self[i] = p;
                i
            }
            None => {
                self.slots.push(p);
                PacketId::from_idx(self.slots.len() - 1)
            }
        }
    }

    pub fn release(&mut self, i: PacketId) {
        let p = &mut self[i];
        p.live = false;
        if let Some(s) = p.sack.take() {
            self.sacks[s.idx()].clear();
            self.free_sacks.push(s);
        }
        self.free.push(i);
    }

    /// A SACK list holding `list` (which is left empty, with the pool's spare capacity).
    pub fn new_sack(&mut self, list: &mut Vec<u32>) -> SackId {
        let s = match self.free_sacks.pop() {
            Some(s) => s,
            None => {
                self.sacks.push(Vec::new());
                SackId::from_idx(self.sacks.len() - 1)
            }
        };
        std::mem::swap(&mut self.sacks[s.idx()], list);
        s
    }

    /// Bytes of the live packets (the conservation checks).
    pub fn live_bytes(&self) -> u64 {
        self.slots
            .iter()
            .filter(|p| p.live)
            .map(|p| u64::from(p.bytes))
            .sum()
    }

    /// A SACK list holding a copy of `list`, in a slot of the pool (whose buffer, reused,
    /// has room once the run is warm: no allocation).
    pub fn copy_sack(&mut self, list: &[u32]) -> SackId {
        let s = match self.free_sacks.pop() {
            Some(s) => s,
            None => {
                self.sacks.push(Vec::new());
                SackId::from_idx(self.sacks.len() - 1)
            }
        };
        self.sacks[s.idx()].extend_from_slice(list);
        s
    }

    /// An ACK's SACK list.
    #[inline]
    pub fn sack(&self, s: SackId) -> &[u32] {
        &self.sacks[s.idx()]
    }
}
