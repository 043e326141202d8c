//! [`FabricBuilder`]: the only way to make a [`Fabric`]. It assigns ids and port numbers, checks
//! every link against its endpoints' port budgets as it is added, and builds the compressed
//! adjacency once at the end.

use crate::fabric::*;
use crate::hardware::Catalog;
use crate::ids::*;
use crate::role::{Optic, PortKind, Role, ZoneKind};

/// Why a link could not be attached to a device.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PortError {
    /// The device's hardware has no port group for this kind of link.
    #[error("{device} ({hw}) has no {kind} ports")]
    NoSuchPorts {
        /// Device name.
        device: String,
        /// Hardware model name.
        hw: String,
        /// Port kind asked for.
        kind: &'static str,
    },
    /// The hardware does not offer ports of this speed in that group.
    #[error("{device} ({hw}) has no {speed_gbps}G {kind} ports (offers: {offered})")]
    UnsupportedSpeed {
        /// Device name.
        device: String,
        /// Hardware model name.
        hw: String,
        /// Port kind.
        kind: &'static str,
        /// Speed asked for, Gb/s.
        speed_gbps: f64,
        /// Speeds the group offers, e.g. `18x800G, 36x400G`.
        offered: String,
    },
    /// More links than the device has ports (by port count or bandwidth budget).
    #[error(
        "{device} ({hw}) has no {kind} port left for link {needed_links}: it has {ports} ports \
         of {speed_gbps}G ({budget_gbps} Gb/s in all)"
    )]
    Exhausted {
        /// The link number (1-based) on this device's port group that did not fit.
        needed_links: u32,
        /// Device name.
        device: String,
        /// Hardware model name.
        hw: String,
        /// Port kind.
        kind: &'static str,
        /// Bandwidth the group has, Gb/s.
        budget_gbps: f64,
        /// Number of ports at the link speed.
        ports: u32,
        /// The link speed, Gb/s.
        speed_gbps: f64,
    },
}

/// Which port group of a device a link of `kind` draws from.
pub fn port_group_kind(role: Role, kind: PortKind) -> PortKind {
    match (role, kind) {
        (Role::Gpu, _) => PortKind::Host,
        (_, PortKind::Fabric) => PortKind::Fabric,
        _ => PortKind::Ethernet,
    }
}

/// Group slot in the per-device counters: 0 = Host/Ethernet, 1 = Fabric.
fn slot(k: PortKind) -> usize {
    usize::from(k == PortKind::Fabric)
}

/// Incrementally builds a [`Fabric`].
pub struct FabricBuilder {
    f: Fabric,
    next_port: Vec<[u16; 2]>,
    used_mbps: Vec<[u64; 2]>,
}

impl FabricBuilder {
    /// An empty fabric named `name` using `catalog`.
    pub fn new(name: impl Into<String>, catalog: Catalog) -> Self {
        FabricBuilder {
            f: Fabric {
                name: name.into(),
                catalog,
                regions: Vec::new(),
                buildings: Vec::new(),
                zones: Vec::new(),
                power_domains: Vec::new(),
                srgs: Vec::new(),
                devices: Vec::new(),
                links: Vec::new(),
                bundles: Vec::new(),
                adj_offsets: Vec::new(),
                adj: Vec::new(),
            },
            next_port: Vec::new(),
            used_mbps: Vec::new(),
        }
    }

    /// The fabric so far (adjacency not built yet: do not call `incident`/`neighbors`).
    pub fn partial(&self) -> &Fabric {
        &self.f
    }

    /// The catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.f.catalog
    }

    /// The catalog, to add spec-defined models before devices use them.
    pub fn catalog_mut(&mut self) -> &mut Catalog {
        &mut self.f.catalog
    }

    /// Add a region.
    pub fn add_region(&mut self, name: impl Into<String>) -> RegionId {
        self.f.regions.push(Region { name: name.into() });
        RegionId::new(self.f.regions.len() as u32 - 1)
    }

    /// Add a building.
    pub fn add_building(
        &mut self,
        name: impl Into<String>,
        region: RegionId,
        data_halls: u16,
    ) -> BuildingId {
        self.f.buildings.push(Building {
            name: name.into(),
            region,
            data_halls,
        });
        BuildingId::new(self.f.buildings.len() as u32 - 1)
    }

    /// Add a zone. Devices added after this belong to it: a zone's devices are contiguous.
    pub fn add_zone(
        &mut self,
        name: impl Into<String>,
        kind: ZoneKind,
        region: RegionId,
        building: Option<BuildingId>,
    ) -> ZoneId {
        self.f.zones.push(Zone {
            name: name.into(),
            kind,
            region,
            building,
        });
        ZoneId::new(self.f.zones.len() as u32 - 1)
    }

    /// Add a power-distribution domain.
    pub fn add_power_domain(
        &mut self,
        name: impl Into<String>,
        building: Option<BuildingId>,
    ) -> PowerDomainId {
        self.f.power_domains.push(PowerDomain {
            name: name.into(),
            building,
        });
        PowerDomainId::new(self.f.power_domains.len() as u32 - 1)
    }

    /// Add a device to the most recently added zone.
    ///
    /// # Panics
    /// If `d.zone` is not the last zone added (a builder bug, not an input error).
    pub fn add_device(&mut self, d: Device) -> DeviceId {
        assert_eq!(
            d.zone.idx() + 1,
            self.f.zones.len(),
            "devices must be added to the newest zone"
        );
        self.f.devices.push(d);
        self.next_port.push([0; 2]);
        self.used_mbps.push([0; 2]);
        DeviceId::new(self.f.devices.len() as u32 - 1)
    }

    /// Reserve the ports for `count` links of `speed_mbps` on `d`; returns the first port index.
    fn take_ports(
        &mut self,
        d: DeviceId,
        kind: PortKind,
        count: u32,
        speed_mbps: u32,
    ) -> Result<u16, PortError> {
        let dev = self.f.devices[d.idx()];
        let gk = port_group_kind(dev.role, kind);
        let hw = self.f.catalog.get(dev.hw);
        let name = || self.f.device_name(d);
        let gbps = |m: u64| m as f64 / 1_000.0;
        let Some(group) = hw.group(gk) else {
            return Err(PortError::NoSuchPorts {
                device: name(),
                hw: hw.name.clone(),
                kind: gk.as_str(),
            });
        };
        if !group.supports(speed_mbps) {
            let offered = group
                .modes
                .iter()
                .map(|m| format!("{}x{}G", m.count, gbps(u64::from(m.speed_mbps))))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(PortError::UnsupportedSpeed {
                device: name(),
                hw: hw.name.clone(),
                kind: gk.as_str(),
                speed_gbps: gbps(u64::from(speed_mbps)),
                offered,
            });
        }
        let s = slot(gk);
        let needed = self.used_mbps[d.idx()][s] + u64::from(count) * u64::from(speed_mbps);
        let first = self.next_port[d.idx()][s];
        // Ports are counted physically (a 400G link on an 800G-capable group takes one port)
        // and by bandwidth; port numbers are u16.
        let end = u32::from(first) + count;
        let ports = group.ports_at(speed_mbps).min(u32::from(u16::MAX));
        if needed > group.budget_mbps() || end > ports {
            return Err(PortError::Exhausted {
                needed_links: {
                    let used = self.used_mbps[d.idx()][s];
                    let fit_bw = group.budget_mbps().saturating_sub(used) / u64::from(speed_mbps);
                    let fit_ports = u64::from(ports.saturating_sub(u32::from(first)));
                    (u64::from(first) + fit_bw.min(fit_ports) + 1) as u32
                },
                device: name(),
                hw: hw.name.clone(),
                kind: gk.as_str(),
                budget_gbps: gbps(group.budget_mbps()),
                ports: group.ports_at(speed_mbps),
                speed_gbps: gbps(u64::from(speed_mbps)),
            });
        }
        self.used_mbps[d.idx()][s] = needed;
        self.next_port[d.idx()][s] = end as u16;
        Ok(first)
    }

    /// Add `count` parallel links of `capacity_mbps` each between `a` (lower tier) and `b`.
    #[allow(clippy::too_many_arguments)]
    pub fn add_bundle(
        &mut self,
        a: DeviceId,
        b: DeviceId,
        count: u32,
        kind: PortKind,
        capacity_mbps: u32,
        length_m: f64,
        flags: u8,
        hyperport: bool,
    ) -> Result<BundleId, PortError> {
        let a_port = self.take_ports(a, kind, count, capacity_mbps)?;
        let b_port = self.take_ports(b, kind, count, capacity_mbps)?;
        let bundle = BundleId::from_idx(self.f.bundles.len());
        let first = LinkId::from_idx(self.f.links.len());
        let optic = Optic::for_length(length_m);
        let length_dm = (length_m * 10.0).round() as u32;
        for i in 0..count as u16 {
            self.f.links.push(Link {
                a,
                b,
                a_port: a_port + i,
                b_port: b_port + i,
                capacity_mbps,
                length_dm,
                kind,
                optic,
                flags,
                bundle,
            });
        }
        self.f.bundles.push(Bundle {
            a,
            b,
            first,
            count,
            hyperport,
        });
        Ok(bundle)
    }

    /// Build the compressed adjacency and freeze the fabric.
    pub fn finish(mut self) -> Fabric {
        let n = self.f.devices.len();
        let mut offsets = vec![0u32; n + 1];
        for l in &self.f.links {
            offsets[l.a.idx() + 1] += 1;
            offsets[l.b.idx() + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut adj = vec![LinkId::new(0); offsets[n] as usize];
        for (i, l) in self.f.links.iter().enumerate() {
            for d in [l.a, l.b] {
                adj[fill[d.idx()] as usize] = LinkId::from_idx(i);
                fill[d.idx()] += 1;
            }
        }
        self.f.adj_offsets = offsets;
        self.f.adj = adj;
        self.f
    }
}
