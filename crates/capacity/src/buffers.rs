//! PFC headroom at design time: does every switch hold the headroom its lossless ports need?
//!
//! A port that sends PAUSE keeps receiving what was already on the wire and what the sender
//! puts out before it reacts: per port and lossless priority
//! `H = R x (2 x L x 5 ns/m + t_response) + 2 x MTU` (the cable both ways at 5 ns/m, the
//! sender's response time, a packet in flight at each end; the standard sizing of PFC
//! headroom, as in the Prometheus post's remark that long BAG-to-BAG cables need deep
//! buffers). A switch must hold the sum over its Ethernet and host ports; its buffer is the
//! model's HBM plus SRAM. DSF fabric ports carry credited cells, not PFC, and are left out.

use aifabric_model::{DeviceId, Fabric, FailureMask, PortKind, Role};
use serde::Serialize;
use std::collections::BTreeMap;

/// Propagation in fiber, nanoseconds per metre.
pub const NS_PER_M: f64 = 5.0;

/// What the report assumes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BufferOptions {
    /// Lossless priorities (PFC classes) per port.
    pub lossless_priorities: u32,
    /// Largest frame, bytes.
    pub mtu_bytes: u32,
}

impl Default for BufferOptions {
    /// One lossless class (RoCE), 9,216 B jumbo frames.
    fn default() -> Self {
        BufferOptions {
            lossless_priorities: 1,
            mtu_bytes: 9216,
        }
    }
}

/// PFC headroom of one port and lossless priority, bytes: `rate_mbps` Mb/s, a cable of
/// `length_m`, a sender reacting in `response_ns`.
pub fn headroom_bytes(rate_mbps: u32, length_m: f64, response_ns: f64, mtu_bytes: u32) -> f64 {
    let bytes_per_ns = f64::from(rate_mbps) * 1e6 / 8.0 * 1e-9;
    bytes_per_ns * (2.0 * length_m * NS_PER_M + response_ns) + 2.0 * f64::from(mtu_bytes)
}

/// The longest cable whose headroom fits in `budget_bytes` per port and priority, metres
/// (0 when not even a zero-length cable fits).
pub fn longest_cable_m(rate_mbps: u32, budget_bytes: f64, response_ns: f64, mtu_bytes: u32) -> f64 {
    let bytes_per_ns = f64::from(rate_mbps) * 1e6 / 8.0 * 1e-9;
    let ns = (budget_bytes - 2.0 * f64::from(mtu_bytes)) / bytes_per_ns - response_ns;
    (ns / (2.0 * NS_PER_M)).max(0.0)
}

/// The lossless ports of one kind of switch: same model, role, speed and port kind.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PortClass {
    /// Hardware model.
    pub model: String,
    /// Switch role.
    pub role: String,
    /// Port speed, Gb/s.
    pub speed_gbps: f64,
    /// Ports of the class (both ends of every link counted at their own switch).
    pub ports: u64,
    /// Longest cable, metres.
    pub longest_m: f64,
    /// Headroom per port and priority on the longest cable, bytes.
    pub headroom_bytes: f64,
}

/// A switch's headroom against its buffer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SwitchHeadroom {
    /// Device.
    pub switch: String,
    /// Hardware model.
    pub model: String,
    /// Lossless ports in use.
    pub ports: u64,
    /// Headroom over every port and lossless priority, bytes.
    pub headroom_bytes: f64,
    /// HBM plus SRAM, bytes.
    pub buffer_bytes: u64,
    /// Headroom over buffer.
    pub share: f64,
}

/// The longest lossless cable a model carries at one speed, with its buffer shared evenly by
/// all its ports at that speed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CableLimit {
    /// Hardware model.
    pub model: String,
    /// Port speed, Gb/s.
    pub speed_gbps: f64,
    /// Ports at that speed.
    pub ports: u32,
    /// HBM plus SRAM, bytes.
    pub buffer_bytes: u64,
    /// Longest cable, metres.
    pub longest_m: f64,
}

/// A switch that cannot hold its headroom, and what would fix it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferProblem {
    /// The switch.
    pub switch: String,
    /// Its model.
    pub model: String,
    /// Headroom needed, bytes.
    pub headroom_bytes: f64,
    /// Buffer, bytes.
    pub buffer_bytes: u64,
    /// Its longest lossless cable, with the link's far end, metres.
    pub longest_link: String,
    /// What to change.
    pub fix: String,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferReport {
    /// The assumptions.
    pub options: BufferOptions,
    /// Port classes, by model, role and speed.
    pub classes: Vec<PortClass>,
    /// Per model: the switch that needs the largest share of its buffer.
    pub fullest: Vec<SwitchHeadroom>,
    /// Switches whose headroom exceeds their buffer (at most 50 listed).
    pub problems: Vec<BufferProblem>,
    /// How many switches cannot hold their headroom.
    pub switches_over: u64,
    /// Longest lossless cable per model and speed.
    pub limits: Vec<CableLimit>,
}

/// Most problems listed (all are counted).
const PROBLEMS: usize = 50;

/// The PFC headroom report of `f` as built (every link's both ends).
pub fn buffer_report(f: &Fabric, opts: &BufferOptions) -> BufferReport {
    buffer_report_under(f, &FailureMask::none(f), opts)
}

/// [`buffer_report`] over the links that are up under `mask` (a link down needs no
/// headroom).
pub fn buffer_report_under(f: &Fabric, mask: &FailureMask, opts: &BufferOptions) -> BufferReport {
    let nd = f.devices().len();
    let prio = f64::from(opts.lossless_priorities);
    // Per switch: headroom, ports, longest cable (metres, link index).
    let mut need = vec![0.0f64; nd];
    let mut ports = vec![0u64; nd];
    let mut longest: Vec<(f64, u32)> = vec![(-1.0, 0); nd];
    let mut classes: BTreeMap<(String, &'static str, u32), (u64, f64, f64)> = BTreeMap::new();
    for (i, l) in f.links().iter().enumerate() {
        if l.kind == PortKind::Fabric || !f.link_up(aifabric_model::LinkId::from_idx(i), mask) {
            continue;
        }
        for (near, far) in [(l.a, l.b), (l.b, l.a)] {
            let _ = far;
            let d = f.device(near);
            if d.role == Role::Gpu {
                continue;
            }
            let hw = f.hardware(near);
            let h = headroom_bytes(
                l.capacity_mbps,
                l.length_m(),
                f64::from(hw.pfc_response_ns),
                opts.mtu_bytes,
            );
            need[near.idx()] += h * prio;
            ports[near.idx()] += 1;
            if l.length_m() > longest[near.idx()].0 {
                longest[near.idx()] = (l.length_m(), i as u32);
            }
            let c = classes
                .entry((hw.name.clone(), d.role.as_str(), l.capacity_mbps))
                .or_insert((0, 0.0, 0.0));
            c.0 += 1;
            if l.length_m() >= c.1 {
                c.1 = l.length_m();
                c.2 = h;
            }
        }
    }
    let classes = classes
        .into_iter()
        .map(|((model, role, mbps), (n, len, h))| PortClass {
            model,
            role: role.to_owned(),
            speed_gbps: f64::from(mbps) / 1000.0,
            ports: n,
            longest_m: len,
            headroom_bytes: h,
        })
        .collect();
    // Per model: (share, switch) of its fullest switch (first in device order on ties).
    let mut fullest: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut over = 0u64;
    for d in 0..nd {
        if ports[d] == 0 {
            continue;
        }
        let id = DeviceId::from_idx(d);
        let hw = f.hardware(id);
        let buffer = hw.hbm_bytes + hw.sram_bytes;
        let share = if buffer > 0 {
            need[d] / buffer as f64
        } else {
            f64::INFINITY
        };
        match fullest.get(hw.name.as_str()) {
            Some(r) if r.0 >= share => {}
            _ => {
                fullest.insert(hw.name.as_str(), (share, d));
            }
        }
        if need[d] > buffer as f64 {
            over += 1;
            if problems.len() < PROBLEMS {
                let (len, li) = longest[d];
                let l = f.link(aifabric_model::LinkId::from_idx(li as usize));
                let fit = longest_cable_m(
                    l.capacity_mbps,
                    buffer as f64 / ports[d] as f64 / prio,
                    f64::from(hw.pfc_response_ns),
                    opts.mtu_bytes,
                );
                let fix = if opts.lossless_priorities > 1 && need[d] / prio <= buffer as f64 {
                    format!(
                        "use 1 lossless priority instead of {} (it then needs {:.1} MB)",
                        opts.lossless_priorities,
                        need[d] / prio / 1e6
                    )
                } else {
                    format!(
                        "a deep-buffer model (it needs {:.1} MB, {} has {:.1} MB), or cables of \
                         at most {:.0} m at {} Gb/s on its ports",
                        need[d] / 1e6,
                        hw.name,
                        buffer as f64 / 1e6,
                        fit,
                        f64::from(l.capacity_mbps) / 1000.0
                    )
                };
                problems.push(BufferProblem {
                    switch: f.device_name(id),
                    model: hw.name.clone(),
                    headroom_bytes: need[d],
                    buffer_bytes: buffer,
                    longest_link: format!("{} m to {}", len, f.device_name(l.other(id))),
                    fix,
                });
            }
        }
    }
    let mut limits = Vec::new();
    for hw in f.catalog().models() {
        let buffer = hw.hbm_bytes + hw.sram_bytes;
        if let Some(g) = hw.group(PortKind::Ethernet) {
            for m in &g.modes {
                limits.push(CableLimit {
                    model: hw.name.clone(),
                    speed_gbps: f64::from(m.speed_mbps) / 1000.0,
                    ports: m.count,
                    buffer_bytes: buffer,
                    longest_m: longest_cable_m(
                        m.speed_mbps,
                        buffer as f64 / f64::from(m.count.max(1)) / prio,
                        f64::from(hw.pfc_response_ns),
                        opts.mtu_bytes,
                    ),
                });
            }
        }
    }
    BufferReport {
        options: *opts,
        classes,
        fullest: fullest
            .into_iter()
            .map(|(model, (share, d))| {
                let id = DeviceId::from_idx(d);
                let hw = f.hardware(id);
                SwitchHeadroom {
                    switch: f.device_name(id),
                    model: model.to_owned(),
                    ports: ports[d],
                    headroom_bytes: need[d],
                    buffer_bytes: hw.hbm_bytes + hw.sram_bytes,
                    share,
                }
            })
            .collect(),
        problems,
        switches_over: over,
        limits,
    }
}
