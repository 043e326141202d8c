//! Flows without a path: counting them while a phase is built, and the error that names the
//! first and its cause.

use crate::sim::SimError;
use aifabric_dataplane::{Net, NoPath};
use aifabric_model::DeviceId;

/// Flows without a path: how many, the first (source and destination GPU), and why.
pub(crate) type Unreached = (u64, (DeviceId, DeviceId), NoPath);

/// Why a flow has no path, in words.
pub(crate) fn no_path_reason(why: NoPath) -> &'static str {
    match why {
        NoPath::GpuDown => "a GPU or its link is down",
        NoPath::NoRoute => "a switch on the way has no route",
        NoPath::NoCapacity => "the path crosses a resource with no capacity left",
    }
}

/// The error for flows without a path, naming the first and the cause: when no built link
/// joins its ends (a zone left off any BAG, regions without inter-BAG links), that, rather
/// than the missing route it shows up as.
pub(crate) fn unreachable_error(net: &Net<'_>, (count, (src, dst), why): Unreached) -> SimError {
    let why = match why {
        NoPath::NoRoute => net
            .unconnected_cause(src, dst)
            .unwrap_or_else(|| no_path_reason(why).to_owned()),
        _ => no_path_reason(why).to_owned(),
    };
    SimError::Unreachable {
        count,
        first: pair_name(net, src, dst),
        why,
    }
}

pub(crate) fn pair_name(net: &Net<'_>, a: DeviceId, b: DeviceId) -> String {
    format!("{} -> {}", net.f.device_name(a), net.f.device_name(b))
}
