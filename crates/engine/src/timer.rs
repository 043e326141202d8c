//! Another engine's time for a phase: the hook through which the packet engine times the
//! phases of collectives and jobs ([`PhaseTimer`]), the rest of the composition staying the
//! flow engine's.

use crate::sim::{schedule_of, Collective, SimError};
use aifabric_dataplane::Net;
use aifabric_model::DeviceId;
use aifabric_workload::schedule::{Algo, Phase};

/// One transfer of a phase that crosses the network (its GPUs in different scale-up
/// domains), as a [`PhaseTimer`] receives it: one connection, whatever its channel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetTransfer {
    /// Sending GPU.
    pub src: DeviceId,
    /// Receiving GPU.
    pub dst: DeviceId,
    /// Bytes.
    pub bytes: f64,
}

/// Times the network transfers of one phase with another engine than the fluid (the packet
/// engine, through the facade): the phase's bandwidth term. The rest of a collective's
/// time is composed as for the fluid: each phase's term times its `repeat`, the per-step
/// latency and the chains of path latencies. A phase repeated, or met again in another
/// collective, is the timer's to memoize.
pub trait PhaseTimer: Send + Sync {
    /// How long `transfers`, all started at once on `net`, take beyond the unloaded
    /// latency of their slowest path (the chains charge path latency), seconds. `fluid_s`
    /// is the fluid's time for the same transfers (with the phase's scale-up transfers, if
    /// any), and `repeat` how many times the schedule runs the phase, for the timer's own
    /// accounting.
    fn bandwidth_s(
        &self,
        net: &Net<'_>,
        transfers: &[NetTransfer],
        fluid_s: f64,
        repeat: u32,
    ) -> Result<f64, SimError>;

    /// Refuse, before any phase runs, a schedule whose phases, each once, are `transfers`
    /// transfers carrying `bytes` (an upper bound: scale-up transfers counted too).
    fn check_work(&self, transfers: u64, bytes: f64) -> Result<(), SimError> {
        let _ = (transfers, bytes);
        Ok(())
    }
}

/// The phase's bandwidth term with `timer`: its network transfers timed by it, and where
/// the phase also has scale-up transfers, the fluid's time when longer (NVLink is not the
/// timer's to model).
pub(crate) fn timed_phase(
    net: &Net<'_>,
    c: &Collective,
    phase: &Phase,
    timer: &dyn PhaseTimer,
    fluid_s: f64,
) -> Result<f64, SimError> {
    let mut scale_up = false;
    let mut transfers = Vec::with_capacity(c.groups.len() * phase.transfers.len());
    for grp in &c.groups {
        for t in &phase.transfers {
            let (src, dst) = (grp[t.src as usize], grp[t.dst as usize]);
            if net.same_domain(src, dst) {
                scale_up = true;
            } else if t.bytes > 0.0 {
                transfers.push(NetTransfer {
                    src,
                    dst,
                    bytes: t.bytes,
                });
            }
        }
    }
    let t = if transfers.is_empty() {
        0.0
    } else {
        timer.bandwidth_s(net, &transfers, fluid_s, phase.repeat)?
    };
    Ok(if scale_up { t.max(fluid_s) } else { t })
}

/// Refuse `c` by `algo` at `timer`'s level when its distinct phases are too much work
/// ([`PhaseTimer::check_work`]), before anything runs.
pub(crate) fn check_work(
    net: &Net<'_>,
    c: &Collective,
    algo: Algo,
    timer: &dyn PhaseTimer,
) -> Result<(), SimError> {
    if algo == Algo::Nvls {
        return Ok(());
    }
    let n = c.groups.first().map_or(0, Vec::len) as u32;
    let sched = schedule_of(net, &Collective { algo, ..c.clone() }, n)?;
    let (transfers, bytes) = sched.distinct_work();
    let groups = c.groups.len() as u64;
    timer.check_work(transfers.saturating_mul(groups), bytes * groups as f64)
}
