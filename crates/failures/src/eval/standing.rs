//! The standing of sessions, rack switches and GPUs under a failure mask.

use aifabric_model::*;
use aifabric_routing::bgp::{BgpGraph, SessionState};

/// Whether a device is a rack switch (originates a rack prefix, faces GPUs).
pub(super) fn is_rack(r: Role) -> bool {
    matches!(r, Role::Rtsw | Role::Rdsw)
}

/// A session's state with `mask` down (no drains): its live links and their capacity.
pub(super) fn session_state(f: &Fabric, g: &BgpGraph, s: u32, mask: &FailureMask) -> SessionState {
    let mut st = SessionState::default();
    for &l in g.links(aifabric_routing::bgp::SessionId::new(s)) {
        if f.link_up(l, mask) {
            st.mbps += u64::from(f.link(l).capacity_mbps);
            st.links += 1;
        }
    }
    st
}

/// Whether a rack switch is alive with at least one live uplink (a link to a non-GPU).
pub(super) fn rack_good(f: &Fabric, r: DeviceId, mask: &FailureMask) -> bool {
    !mask.device_failed(r)
        && f.incident(r)
            .iter()
            .any(|&l| f.device(f.link(l).other(r)).role != Role::Gpu && f.link_up(l, mask))
}

/// Live GPU-facing Mb/s of rack switch `r` (0 if it is not good).
pub(super) fn rack_weight(f: &Fabric, r: DeviceId, mask: &FailureMask) -> u64 {
    if !rack_good(f, r, mask) {
        return 0;
    }
    f.incident(r)
        .iter()
        .filter(|&&l| f.device(f.link(l).other(r)).role == Role::Gpu && f.link_up(l, mask))
        .map(|&l| u64::from(f.link(l).capacity_mbps))
        .sum()
}

/// Whether a GPU is alive with a live link to a good rack switch.
pub(super) fn gpu_connected(f: &Fabric, gpu: DeviceId, mask: &FailureMask) -> bool {
    gpu_connected_via(f, gpu, mask, |r| rack_good(f, r, mask))
}

/// [`gpu_connected`] with the racks' standing from `rack_good` (which must agree with
/// [`rack_good`] under `mask`): a rack switch faces dozens of GPUs, so callers that check
/// all of them work the rack's standing out once.
pub(super) fn gpu_connected_via(
    f: &Fabric,
    gpu: DeviceId,
    mask: &FailureMask,
    rack_good: impl Fn(DeviceId) -> bool,
) -> bool {
    !mask.device_failed(gpu)
        && f.incident(gpu).iter().any(|&l| {
            let r = f.link(l).other(gpu);
            f.link_up(l, mask) && is_rack(f.device(r).role) && rack_good(r)
        })
}

/// The standing of a few rack switches under one mask, worked out once each: `racks`
/// ascending (others are worked out when asked).
pub(super) struct RackStanding<'a> {
    f: &'a Fabric,
    mask: &'a FailureMask,
    racks: Vec<DeviceId>,
    good: Vec<bool>,
}

impl<'a> RackStanding<'a> {
    pub(super) fn new(f: &'a Fabric, mask: &'a FailureMask, racks: &[DeviceId]) -> Self {
        debug_assert!(racks.windows(2).all(|w| w[0] < w[1]));
        RackStanding {
            f,
            mask,
            racks: racks.to_vec(),
            good: racks.iter().map(|&r| rack_good(f, r, mask)).collect(),
        }
    }

    /// The mask the standing is under.
    pub(super) fn mask(&self) -> &'a FailureMask {
        self.mask
    }

    /// [`rack_good`] of `r`.
    pub(super) fn good(&self, r: DeviceId) -> bool {
        match self.racks.binary_search(&r) {
            Ok(i) => self.good[i],
            Err(_) => rack_good(self.f, r, self.mask),
        }
    }

    /// [`gpu_connected`] of `gpu`.
    pub(super) fn gpu_connected(&self, gpu: DeviceId) -> bool {
        gpu_connected_via(self.f, gpu, self.mask, |r| self.good(r))
    }
}
