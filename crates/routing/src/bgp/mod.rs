//! eBGP over the fabric: the speakers and sessions ([`graph`]) and the converged routes toward
//! each origin ([`compute`]).

mod bandwidth;
pub mod compute;
mod fixpoint;
pub mod graph;
mod preference;
pub mod state;

pub use compute::{
    routes_to, routes_to_many, session_states, BandwidthMode, Best, BgpConfig, ChangeProbe,
    Multipath, NotConverged, RoutesTo, SessionState, SoftDrain,
};
pub use graph::{AsnPlan, BgpGraph, SessionId, Speaker, SpeakerId, SpeakerKind, PRIVATE_ASN_BASE};
pub use state::{affected, converge_all, ForwardingState};
