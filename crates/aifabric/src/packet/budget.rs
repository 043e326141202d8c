//! What a run will take, estimated from its inputs before any engine starts, and refused
//! when it cannot fit the memory limit ([`aifabric_model::limits`]): a run that does not fit
//! would otherwise abort in the allocator minutes in, with no word of why or of how to make
//! it fit.
//!
//! ## Calibration
//!
//! The packet engine's memory is modelled as per (destination rack, switch-to-switch link
//! its paths can take) (the next hops toward each rack: the forwarding tables and the
//! routes they are built from), per host (its ports), per flow (its state at both ends, its
//! congestion control) and per packet in flight (the packet arena, the FIFOs, the SACK
//! lists and the calendar's events, with the growth of their vectors), a flow having at
//! most [`WINDOW_PACKETS`] in flight. Measured on 2026-11-27 as the peak resident memory
//! (`/usr/bin/time -f %M`) of release builds of `aifabric traffic prometheus --engine
//! packet --pattern permutation` less the 263 MB of a 2-GPU run (the fabric, its routes,
//! the network); racks and links as the refusal counts them (`AIFABRIC_MAX_MEMORY_BYTES=1`):
//!
//! | --gpus, --size            | racks x links | packets/flow | over base | per unit          |
//! |---------------------------|---------------|--------------|-----------|-------------------|
//! | 4,096, 4K                 | 114 x 204,800 | 2            | 105 MB    | 4.0 B/(rack,link) |
//! | 16,384, 4K                | 456 x 204,800 | 2            | 427 MB    | 4.1 B/(rack,link) |
//! | 32,768, 4K (3 zones)      | 911 x 446,720 | 2            | 4,060 MB  | 9.8 B/(rack,link) |
//! | random:65536 on 4,096, 4K | 114 x 204,800 | 2            | 262 MB    | 2.6 KB/flow       |
//! | 16,384, 64K               | 456 x 204,800 | 16           | 743 MB    | 1.2 KB/packet     |
//! | 4,096, 256K               | 114 x 204,800 | 64           | 342 MB    | 0.9 KB/packet     |
//! | 4,096, 1M                 | 114 x 204,800 | 253          | 476 MB    | 1.1 KB/packet     |
//! | 8,192, 1M                 | 228 x 204,800 | 253          | 1,362 MB  | 1.8 KB/packet     |
//!
//! Measured again on 2026-11-29, after the forwarding tables came to share their groups of
//! next hops (and with the port state at 128 B), less the 259 MB of the 2-GPU run and the
//! hosts' and flows' figures below: 4,096 GPUs 109 MB over base, 3.4 B/(rack,link); 16,384
//! GPUs 437 MB, 3.4 B; 32,768 GPUs (3 zones) 3,345 MB, 7.6 B. [`TABLE_BYTES`] = 9 leaves
//! that run 12% of margin: its peak 3.61 GB against an estimate of 4.03 GB with what was held
//! (4.43 GB at the 10 before; at 8 it would be within 0.2% of the peak).
//!
//! (Per flow: the 65,536-flow run less the 4,096-flow one, two packets each; per packet:
//! the run less its tables and flows, over `min(packets, WINDOW_PACKETS)` per flow, the two
//! packets [`FLOW_BYTES`] covers not counted again.) Many small flows cost less than this:
//! a 1,024-GPU all-to-all of 4 KiB on `dsf-l1-zone` (1.05M flows) peaked at 1.07 GB and
//! estimates at 3.0 GiB, as its senders take their flows in turn. The estimate takes the
//! largest of each, rounded up ([`TABLE_BYTES`], [`FLOW_BYTES`], [`PACKET_BYTES`]): a
//! refusal of a run that would have fitted costs a narrower request, an abort costs the
//! minutes before it.
//!
//! Work: the same runs took 20-150 us per packet (4,096 x 1M: 24 s; 8,192 x 1M: 316 s); the
//! refusal says how long a run would take at least, at [`US_PER_PACKET`].
//! [`aifabric_packet::MAX_PACKETS`] stays the engine's own limit on work.
//!
//! The flow engine holds no packets: 10M flows of 4 KiB over 1,024 GPUs peaked at 3.8 GB
//! (378 B per flow, the parsed matrix included) and 131,072 flows of 1 MiB at 0.5 GB;
//! [`FLOW_ENGINE_FLOW_BYTES`] rounds it up.

use crate::Error;
use aifabric_model::limits::{self, human_bytes};
use aifabric_model::thousands;
use aifabric_model::{DeviceId, Fabric, Role};
use aifabric_packet::Config;
use aifabric_workload::traffic::{TmFlow, TrafficMatrix};

/// Engine memory per (destination rack, switch-to-switch link its paths can take), bytes:
/// the next hops toward each rack (the tables and the routes they are built from).
pub const TABLE_BYTES: u64 = 9;
/// Engine memory per host of the matrix, bytes (its NIC ports and their state; a bound,
/// within the per-rack figures measured).
pub const HOST_BYTES: u64 = 4 << 10;
/// Engine memory per flow, bytes (2.6 KB measured).
pub const FLOW_BYTES: u64 = 3 << 10;
/// Engine memory per packet in flight, bytes (0.9-1.8 KB measured).
pub const PACKET_BYTES: u64 = 2 << 10;
/// Packets a flow has in flight at most, for the estimate (a window of a few BDPs).
pub const WINDOW_PACKETS: u64 = 80;
/// Packets per flow that [`FLOW_BYTES`] covers (its runs sent 4 KiB flows: two packets).
pub const FLOW_PACKETS: u64 = 2;
/// Engine time per packet at the fast end of the runs measured, microseconds.
pub const US_PER_PACKET: u64 = 20;
/// Engine memory per switch-to-switch link for each part of a partitioned run beyond the
/// first, bytes: each part holds every port's state (both directions) and the DSF fabric's
/// per-port and per-entry state. Measured on 2026-11-28 (`traffic prometheus --pattern
/// permutation --gpus 512 --size 256K --placement spread --engine packet`, 2,138,240 links):
/// 2.17 GB with one part, 3.42 GB with 2, 4.64 GB with 4: 575 B per link per extra part.
pub const PART_LINK_BYTES: u64 = 640;
/// Flow-engine memory per flow, bytes (378 B measured, the parsed matrix included).
pub const FLOW_ENGINE_FLOW_BYTES: u64 = 512;

/// What a packet run will take, estimated from its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// Flows of the matrix.
    pub flows: u64,
    /// Hosts (GPUs the matrix names).
    pub hosts: u64,
    /// Rack switches of the hosts (the forwarding tables' destinations).
    pub racks: u64,
    /// Switch-to-switch links the paths toward them can take.
    pub links: u64,
    /// Packets sent for the first time.
    pub packets: u64,
    /// Packets in flight at most beyond each flow's first `FLOW_PACKETS`, summed over
    /// flows.
    pub in_flight: u64,
    /// Parts the run is cut into ([`Config::partitions`]).
    pub parts: u64,
    /// Engine memory, bytes.
    pub bytes: u64,
    /// Engine time, seconds, at least.
    pub seconds: u64,
}

impl Estimate {
    /// Of [`Estimate::bytes`], the forwarding tables' (built before the flows are).
    pub fn tables_bytes(&self) -> u64 {
        self.racks
            .saturating_mul(self.links)
            .saturating_mul(TABLE_BYTES)
    }

    /// The estimate of a run on a network whose tables are built and held already (a part
    /// of a matrix run on the whole one's network): without them.
    pub(crate) fn on_built_network(mut self) -> Estimate {
        self.bytes = self.bytes.saturating_sub(self.tables_bytes());
        self
    }
}

/// The racks of `hosts` and the switch-to-switch links their forwarding tables can take:
/// with every host in one zone, that zone's; else those of the zones holding these hosts
/// and of every zone without GPUs (the spine and aggregation tiers between zones).
fn table_extent(f: &Fabric, hosts: &[DeviceId]) -> (u64, u64) {
    let mut racks: Vec<DeviceId> = hosts
        .iter()
        .filter_map(|&h| f.incident(h).first().map(|&l| f.link(l).other(h)))
        .collect();
    racks.sort_unstable();
    racks.dedup();
    let mut spanned = vec![false; f.zones().len()];
    for &h in hosts {
        spanned[f.device(h).zone.idx()] = true;
    }
    let mut has_gpus = vec![false; f.zones().len()];
    for d in f.devices().iter().filter(|d| d.role == Role::Gpu) {
        has_gpus[d.zone.idx()] = true;
    }
    let one_zone = spanned.iter().filter(|&&s| s).count() <= 1;
    let counts = |d: &aifabric_model::Device| {
        spanned[d.zone.idx()] || (!one_zone && !has_gpus[d.zone.idx()])
    };
    let links = f
        .links()
        .iter()
        .filter(|l| {
            let (a, b) = (f.device(l.a), f.device(l.b));
            a.role != Role::Gpu
                && b.role != Role::Gpu
                && if one_zone {
                    counts(a) && counts(b)
                } else {
                    counts(a) || counts(b)
                }
        })
        .count() as u64;
    (racks.len() as u64, links)
}

/// The packet engine's estimate for `tm` with node `i` on `hosts[i]` under `cfg`.
pub fn estimate(f: &Fabric, tm: &TrafficMatrix, hosts: &[DeviceId], cfg: &Config) -> Estimate {
    estimate_flows(f, tm.flows.iter(), hosts, cfg)
}

/// [`estimate`] for `flows` of a matrix on `hosts` (the part of a matrix a run keeps, on
/// the whole matrix's network).
pub(crate) fn estimate_flows<'a>(
    f: &Fabric,
    flows: impl Iterator<Item = &'a TmFlow>,
    hosts: &[DeviceId],
    cfg: &Config,
) -> Estimate {
    let payload = u64::from(cfg.mtu_bytes.saturating_sub(cfg.header_bytes)).max(1);
    let (mut packets, mut in_flight, mut n) = (0u64, 0u64, 0u64);
    for f in flows {
        n += 1;
        let p = f.bytes.div_ceil(payload);
        packets = packets.saturating_add(p);
        // The first packets of a flow are in FLOW_BYTES: it was measured on flows of that
        // many packets.
        in_flight = in_flight.saturating_add(p.min(WINDOW_PACKETS).saturating_sub(FLOW_PACKETS));
    }
    let flows = n;
    let (racks, links) = table_extent(f, hosts);
    let hosts = hosts.len() as u64;
    // A partitioned run's parts each hold every port, host and flow (their own sides of
    // them); the tables are shared.
    let parts = u64::from(cfg.partitions.max(1));
    let bytes = racks
        .saturating_mul(links)
        .saturating_mul(TABLE_BYTES)
        .saturating_add(hosts.saturating_mul(HOST_BYTES).saturating_mul(parts))
        .saturating_add(flows.saturating_mul(FLOW_BYTES).saturating_mul(parts))
        .saturating_add(
            links
                .saturating_mul(PART_LINK_BYTES)
                .saturating_mul(parts - 1),
        )
        .saturating_add(in_flight.saturating_mul(PACKET_BYTES));
    Estimate {
        flows,
        hosts,
        racks,
        links,
        packets,
        in_flight,
        parts,
        bytes,
        seconds: packets.saturating_mul(US_PER_PACKET) / 1_000_000,
    }
}

/// The memory limit, or a refusal of a malformed `AIFABRIC_MAX_MEMORY_BYTES`.
fn limit() -> Result<(u64, String), Error> {
    let (bytes, from) = limits::memory_limit().map_err(Error::bad_request)?;
    Ok((bytes, limits::describe_limit(bytes, from)))
}

/// Refuse a packet run of `tm` over `hosts` GPUs that cannot fit the memory limit, with
/// the estimate, the limit and how to narrow it (`both`: the flow engine runs too).
pub(crate) fn check(
    fabric: &Fabric,
    tm: &TrafficMatrix,
    hosts: &[DeviceId],
    cfg: &Config,
    both: bool,
) -> Result<(), Error> {
    check_estimate(fabric, &estimate(fabric, tm, hosts, cfg), both)
}

/// Refuse a packet run estimated as `e` that cannot fit the memory limit (`both`: the flow
/// engine runs too), with the estimate, the limit and how to narrow it.
pub(crate) fn check_estimate(fabric: &Fabric, e: &Estimate, both: bool) -> Result<(), Error> {
    let (limit, said) = limit()?;
    let held = limits::resident_bytes();
    let flow_engine = if both {
        e.flows.saturating_mul(FLOW_ENGINE_FLOW_BYTES)
    } else {
        0
    };
    let need = e.bytes.saturating_add(flow_engine);
    if held.saturating_add(need) <= limit {
        return Ok(());
    }
    Err(Error::bad_request(format!(
        "the packet engine would need about {} for this run on {} ({} flows over {} GPUs in {} \
         racks, {} switch links toward them, {} packets, up to {} in flight: {} B per rack \
         and link, {} KiB per GPU, {} KiB per flow, {} B per packet in flight{}{}), on top of the {} already held, over the memory limit of {}; it would \
         also take at least {} s. Narrow it: {}fewer GPUs or flows \
         (--gpus, --pattern), smaller flows (--size), or the flow engine (--engine flow), \
         which holds no packets",
        human_bytes(need),
        fabric.name(),
        thousands(e.flows),
        thousands(e.hosts),
        thousands(e.racks),
        thousands(e.links),
        thousands(e.packets),
        thousands(e.in_flight),
        TABLE_BYTES,
        HOST_BYTES >> 10,
        FLOW_BYTES >> 10,
        PACKET_BYTES,
        if e.parts > 1 {
            format!(
                "; {} parts (--partitions), each holding every GPU's, flow's and link's \
                 state: {} B per link beyond the first",
                e.parts, PART_LINK_BYTES
            )
        } else {
            String::new()
        },
        if both {
            ", and the flow engine beside it"
        } else {
            ""
        },
        human_bytes(held),
        said,
        thousands(e.seconds),
        if e.parts > 1 { "fewer parts (--partitions), " } else { "" },
    )))
}

/// Refuse a flow-engine run of `tm` that cannot fit the memory limit.
pub fn check_flow_budget(tm: &TrafficMatrix) -> Result<(), Error> {
    let need = (tm.flows.len() as u64).saturating_mul(FLOW_ENGINE_FLOW_BYTES);
    let (limit, said) = limit()?;
    let held = limits::resident_bytes();
    if held.saturating_add(need) <= limit {
        return Ok(());
    }
    Err(Error::bad_request(format!(
        "the flow engine would need about {} for {} flows ({} B each), on top of the {} \
         already held, over the memory limit of {}; use fewer flows or split the matrix",
        human_bytes(need),
        thousands(tm.flows.len() as u64),
        FLOW_ENGINE_FLOW_BYTES,
        human_bytes(held),
        said
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use aifabric_workload::traffic::Pattern;

    #[test]
    fn the_estimate_grows_with_flows_and_packets_in_flight() {
        let f = aifabric_spec::load("htsim-k8").unwrap();
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).take(16).collect();
        let cfg = Config::default();
        let small = estimate(&f, &Pattern::Permutation.generate(16, 4096, 1), &gpus, &cfg);
        let big = estimate(
            &f,
            &Pattern::Permutation.generate(16, 1 << 20, 1),
            &gpus,
            &cfg,
        );
        let many = estimate(&f, &Pattern::AllToAll.generate(16, 4096, 1), &gpus, &cfg);
        assert_eq!((small.flows, small.hosts), (16, 16));
        assert!(small.racks >= 1 && small.links > 0, "{small:?}");
        // A 1 MiB flow holds a window of packets, a 4 KiB one the two of its flow state.
        assert_eq!(big.in_flight, 16 * (WINDOW_PACKETS - FLOW_PACKETS));
        assert_eq!(small.in_flight, 0);
        assert!(big.bytes > small.bytes && many.bytes > small.bytes);
        assert_eq!(
            big.bytes - small.bytes,
            (big.in_flight - small.in_flight) * PACKET_BYTES
        );
        // Each part beyond the first holds every GPU's, flow's and link's state again.
        let parts = |n| Config {
            partitions: n,
            ..cfg.clone()
        };
        let tm = Pattern::Permutation.generate(16, 4096, 1);
        let one = estimate(&f, &tm, &gpus, &parts(1));
        let three = estimate(&f, &tm, &gpus, &parts(3));
        assert_eq!(
            three.bytes - one.bytes,
            2 * (16 * HOST_BYTES + 16 * FLOW_BYTES + one.links * PART_LINK_BYTES)
        );
    }
}
