//! What the calendar queue holds: a closed set of events, each with its typed target.

use crate::ids::{CellId, FlowId, HostId, PacketId, PortId, SchedId, VoqId};

/// One event. Kept to 8 bytes (a tag, a 3-byte amount and a 4-byte id) so that a queue
/// entry (time, sequence number, event) stays 24 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// A port finished serializing its packet: it may start the next.
    TxDone(PortId),
    /// A packet reaches the far end of the port it crossed.
    Arrive(PacketId),
    /// A flow starts (its start time in the matrix).
    Start(FlowId),
    /// A flow's retransmission timer.
    Rto(FlowId),
    /// A receiver's delayed ACK is due.
    AckTimer(FlowId),
    /// A PAUSE frame reaches the port it stops (PFC).
    Pause(PortId),
    /// A RESUME frame reaches the port it restarts.
    Resume(PortId),
    /// A host's paced flows may send again (DCQCN).
    Pace(HostId),
    /// A cell reaches the far end of its fabric link (DSF).
    Cell(CellId),
    /// A VOQ's credit request of so many bytes reaches its egress port's scheduler.
    Request(VoqId, MsgBytes),
    /// A grant of so many bytes reaches its VOQ.
    Grant(VoqId, MsgBytes),
    /// An egress scheduler may grant again.
    Sched(SchedId),
    /// The hybrid engine's monitor reads the flows' progress (`forward.rs`).
    Monitor,
}

const _: () = assert!(std::mem::size_of::<Event>() <= 8);

/// The bytes one request or grant message carries: at most [`MsgBytes::MAX`] (a packet is at
/// most a few kilobytes, a credit a few more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MsgBytes([u8; 3]);

impl MsgBytes {
    /// Most bytes one message carries.
    pub const MAX: u64 = (1 << 24) - 1;

    /// `bytes`, of which only the low 24 bits are kept (at most [`MsgBytes::MAX`]).
    #[inline]
    pub fn new(bytes: u64) -> MsgBytes {
        debug_assert!(bytes <= MsgBytes::MAX, "a message of {bytes} B");
        let [a, b, c, ..] = bytes.to_le_bytes();
        MsgBytes([a, b, c])
    }

    /// The bytes.
    #[inline]
    pub fn get(self) -> u64 {
        let [a, b, c] = self.0;
        u64::from(u32::from_le_bytes([a, b, c, 0]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_bytes_round_trip_and_entries_stay_small() {
        for b in [0, 1, 64, 4096, 4150, 65_536, MsgBytes::MAX] {
            assert_eq!(MsgBytes::new(b).get(), b);
        }
        assert_eq!(std::mem::size_of::<Event>(), 8);
        assert_eq!(std::mem::size_of::<Option<PortId>>(), 4);
    }
}
