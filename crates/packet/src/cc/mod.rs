//! Congestion control: one interface ([`Law`]), one file per law, and per flow an enum of
//! the laws' states ([`FlowCc`]) dispatched by `match` (no boxing, no trait objects on the
//! per-packet path). Everything automatic (`Cc::NsccAuto`, `Cc::DcqcnAuto`, NSCC's
//! parameters per path) is resolved before the event loop, into a [`CcTable`] and each
//! flow's starting state.
//!
//! A new law is one file here implementing [`Law`], one variant of [`FlowCc`] and its line
//! in `each_law!` ([`fixed`], a fixed window, is the example).

pub mod dcqcn;
pub(crate) mod fixed;
pub(crate) mod line_rate;
pub mod nscc;

/// The network-wide parameters the laws read (per flow, each law's state names its own).
pub(crate) struct CcTable {
    /// NSCC: the network's parameters, and with `Config::nscc_path_rtt` one set per
    /// (path base RTT, NIC rate); flows hold an index.
    pub nscc: Vec<nscc::Params>,
    /// DCQCN's parameters, when flows run it.
    pub dcqcn: Option<dcqcn::Params>,
    /// Some flow's law paces its packets ([`Law::next_send_ps`]): a host with nothing to
    /// send now asks when it may.
    pub paced: bool,
}

/// What a congestion-control law answers and hears, for one flow (both ends: a law with
/// a receiver side, as DCQCN's CNPs, keeps it in the same state). The defaults are a law
/// that does nothing: no window, no pacing, signals ignored.
pub(crate) trait Law {
    /// Bytes the sender may have in flight.
    #[inline]
    fn window_bytes(&self) -> u64 {
        u64::MAX
    }

    /// Whether the sender may put a packet of `bytes` on the wire at `now`; when it may,
    /// the packet is taken as sent.
    #[inline]
    fn pace(&mut self, _t: &CcTable, _bytes: u32, _now: u64) -> bool {
        true
    }

    /// When a paced sender may send next (`None`: not paced).
    #[inline]
    fn next_send_ps(&self) -> Option<u64> {
        None
    }

    /// The flow starts at `now`.
    #[inline]
    fn on_start(&mut self, _t: &CcTable, _now: u64) {}

    /// An ACK at `now` (see [`Ack`]).
    #[inline]
    fn on_ack(&mut self, _t: &CcTable, _now: u64, _ack: Ack) {}

    /// A NACK of the packet in flight, of `bytes`, with `in_flight` bytes outstanding (that
    /// packet included).
    #[inline]
    fn on_nack(&mut self, _t: &CcTable, _now: u64, _bytes: u64, _in_flight: u64) {}

    /// A retransmission timeout of a packet of `bytes`.
    #[inline]
    fn on_timeout(&mut self, _t: &CcTable, _bytes: u64) {}

    /// Receiver: an ECN-marked data packet arrived at `now`; whether to answer it with a
    /// congestion notification packet.
    #[inline]
    fn on_marked(&mut self, _t: &CcTable, _now: u64) -> bool {
        false
    }

    /// Sender: a congestion notification packet arrived at `now`.
    #[inline]
    fn on_cnp(&mut self, _t: &CcTable, _now: u64) {}
}

/// What an ACK tells the sender's law.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ack {
    /// New bytes acknowledged.
    pub acked: u64,
    /// Of them, bytes ECN-marked.
    pub marked: u64,
    /// The RTT sample (`None` when it is not valid: the packet was sent again).
    pub rtt_ps: Option<u64>,
    /// Bytes still in flight after it.
    pub in_flight: u64,
}

/// One flow's congestion control.
#[derive(Clone, Copy, Debug)]
pub(crate) enum FlowCc {
    LineRate(line_rate::LineRate),
    Nscc(nscc::NsccFlow),
    Dcqcn(dcqcn::DcqcnFlow),
    /// Selected by tests (not from [`crate::Cc`] yet: other crates match it exhaustively).
    #[cfg_attr(not(test), allow(dead_code))]
    FixedWindow(fixed::FixedWindow),
}

/// `$body` with `$s` bound to the law's state, whichever it is.
macro_rules! each_law {
    ($cc:expr, $s:ident => $body:expr) => {
        match $cc {
            FlowCc::LineRate($s) => $body,
            FlowCc::Nscc($s) => $body,
            FlowCc::Dcqcn($s) => $body,
            FlowCc::FixedWindow($s) => $body,
        }
    };
}

impl FlowCc {
    #[inline]
    pub fn window_bytes(&self) -> u64 {
        each_law!(self, s => s.window_bytes())
    }

    #[inline]
    pub fn pace(&mut self, t: &CcTable, bytes: u32, now: u64) -> bool {
        each_law!(self, s => s.pace(t, bytes, now))
    }

    #[inline]
    pub fn next_send_ps(&self) -> Option<u64> {
        each_law!(self, s => s.next_send_ps())
    }

    #[inline]
    pub fn on_start(&mut self, t: &CcTable, now: u64) {
        each_law!(self, s => s.on_start(t, now))
    }

    #[inline]
    pub fn on_ack(&mut self, t: &CcTable, now: u64, ack: Ack) {
        each_law!(self, s => s.on_ack(t, now, ack))
    }

    #[inline]
    pub fn on_nack(&mut self, t: &CcTable, now: u64, bytes: u64, in_flight: u64) {
        each_law!(self, s => s.on_nack(t, now, bytes, in_flight))
    }

    #[inline]
    pub fn on_timeout(&mut self, t: &CcTable, bytes: u64) {
        each_law!(self, s => s.on_timeout(t, bytes))
    }

    #[inline]
    pub fn on_marked(&mut self, t: &CcTable, now: u64) -> bool {
        each_law!(self, s => s.on_marked(t, now))
    }

    #[inline]
    pub fn on_cnp(&mut self, t: &CcTable, now: u64) {
        each_law!(self, s => s.on_cnp(t, now))
    }
}
