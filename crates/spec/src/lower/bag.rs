//! BAG layers: planes of chassis, attachment of L2 edges to planes, inter-BAG links.

use super::{device, size, Cx, Site};
use crate::error::SpecError;
use crate::spec::{BagSpec, InterBagSpec, InterBagTopology, SpecFile, S};
use aifabric_model::*;
use serde_saphyr::Location;

/// A built BAG layer: its chassis are `first + plane * chassis_per_plane + c`.
pub(crate) struct BagLayer {
    pub planes: u32,
    pub chassis_per_plane: u32,
    pub first: DeviceId,
    /// Per plane: next chassis to receive a link (round robin keeps chassis balanced).
    next: Vec<u32>,
    /// Where `planes` is set, for plane-mismatch errors.
    pub planes_loc: Location,
}

impl BagLayer {
    fn chassis(&self, plane: u32, c: u32) -> DeviceId {
        DeviceId::new(self.first.get() + plane * self.chassis_per_plane + c)
    }

    /// Spread `n` links over the chassis of `plane`, round robin: `(chassis, count)` pairs.
    fn take(&mut self, plane: u32, n: u32) -> Vec<(DeviceId, u32)> {
        let c = self.chassis_per_plane;
        let start = self.next[plane as usize];
        self.next[plane as usize] = (start + n) % c;
        (0..c.min(n))
            .map(|k| {
                let extra = u32::from(k < n % c);
                (self.chassis(plane, (start + k) % c), n / c + extra)
            })
            .collect()
    }
}

impl Cx<'_> {
    pub(crate) fn build_bag(
        &mut self,
        region: RegionId,
        region_name: &str,
        b: &BagSpec,
    ) -> Result<BagLayer, SpecError> {
        let planes = self.pos(&b.planes, "planes")?;
        let cpp = self.pos(&b.chassis_per_plane, "chassis_per_plane")?;
        if planes > 4_096 || cpp > 4_096 {
            return Err(self.err(
                b.planes.referenced,
                format!("{planes} planes x {cpp} chassis"),
                "at most 4096 planes and 4096 chassis per plane",
            ));
        }
        self.reserve(b.planes.referenced, size(&[&[planes, cpp]]), 0)?;
        let hw = self.hw(&b.model)?;
        let name = match &b.name {
            Some(n) => {
                self.check_name(n)?;
                n.value.clone()
            }
            None => format!("{region_name}.bag"),
        };
        let name_loc = b
            .name
            .as_ref()
            .map_or(b.planes.referenced, |n| n.referenced);
        let zone = self.add_zone(name.clone(), name_loc, ZoneKind::Bag, region, None)?;
        let role = if b.hub { Role::Hub } else { Role::Bag };
        let first = DeviceId::from_idx(self.fb.partial().devices().len());
        for p in 0..planes {
            for c in 0..cpp {
                let pd = self
                    .fb
                    .add_power_domain(format!("{name}.plane{p}.c{c}.pd"), None);
                let mut d = device(role, hw, zone, c, None, pd);
                d.plane = NonMaxU16::new(p as u16);
                self.fb.add_device(d);
            }
        }
        Ok(BagLayer {
            planes,
            chassis_per_plane: cpp,
            first,
            next: vec![0; planes as usize],
            planes_loc: b.planes.referenced,
        })
    }

    /// Connect `dev` to BAG plane `plane` of `region` with `n` links of `speed_mbps`.
    /// With `hyperports`, links go in groups of 4 to one chassis, each group one logical port.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn attach_to_bag(
        &mut self,
        loc: Location,
        region: RegionId,
        dev: DeviceId,
        plane: u32,
        n: u32,
        speed_mbps: u32,
        length_m: f64,
        hyperports: bool,
    ) -> Result<(), SpecError> {
        let bag = self.bags[region.idx()]
            .as_mut()
            .expect("caller checked the region has a BAG");
        // A hyperport is 4 links to one chassis that act as one port.
        let (unit, groups) = if hyperports { (4, n / 4) } else { (1, n) };
        for (chassis, count) in bag.take(plane, groups) {
            let bundles = if hyperports { count } else { 1 };
            for _ in 0..bundles {
                let links = if hyperports { unit } else { count };
                self.fb
                    .add_bundle(
                        dev,
                        chassis,
                        links,
                        PortKind::Ethernet,
                        speed_mbps,
                        length_m,
                        0,
                        hyperports,
                    )
                    .map_err(|e| self.port_err(loc, e))?;
            }
        }
        Ok(())
    }

    /// Check that an L2 edge with `uplinks` per device can spread evenly over the BAG planes
    /// of the zone's region; returns the links per plane, or `None` when the region has no
    /// BAG. `field` is the uplinks' field (`edsw_uplinks`, `atsw_uplinks`) and `device` the
    /// edge device's role; errors about values left at their defaults point at the zone.
    pub(crate) fn links_per_plane(
        &self,
        site: &Site,
        uplinks: &S<u32>,
        field: &str,
        device: &str,
        speed_gbps: &S<u32>,
        hyperports: bool,
    ) -> Result<Option<u32>, SpecError> {
        let Some(bag) = &self.bags[site.region.idx()] else {
            return Ok(None);
        };
        let n = uplinks.value;
        let loc = Cx::loc_or(uplinks.referenced, site.loc);
        let default = if uplinks.referenced == Location::UNKNOWN {
            ", the default"
        } else {
            ""
        };
        let zone = self.zone_name(site.zone);
        if n == 0 {
            return Err(self.err(
                loc,
                format!(
                    "zone `{zone}`: `{field}` is 0, but its region has a BAG layer: the zone \
                     would be cut off from the rest of the region"
                ),
                format!(
                    "give each {device} at least {} uplinks (one per BAG plane), or put the \
                     zone in a region without `bag:`",
                    bag.planes
                ),
            ));
        }
        if !n.is_multiple_of(bag.planes) {
            let up = u64::from(n.div_ceil(bag.planes)) * u64::from(bag.planes);
            let down = n / bag.planes * bag.planes;
            let e_g = if down > 0 {
                format!("`{field}: {down}` or `{up}`")
            } else {
                format!("`{field}: {up}`")
            };
            return Err(self.err(
                loc,
                format!(
                    "zone `{zone}`: {n} uplinks per {device} (`{field}`{default}) do not spread \
                     evenly over {} BAG planes (set at line {})",
                    bag.planes,
                    bag.planes_loc.line()
                ),
                format!(
                    "use a multiple of {} uplinks (e.g. {e_g}) or change `bag.planes`",
                    bag.planes
                ),
            ));
        }
        let per = n / bag.planes;
        if hyperports && (!per.is_multiple_of(4) || speed_gbps.value != 800) {
            return Err(self.err(
                loc,
                format!(
                    "{per} x {}G uplinks per BAG plane cannot form hyperports",
                    speed_gbps.value
                ),
                "a hyperport is 4 x 800G: with `hyperports: true`, use 800G uplinks and a \
                 multiple of 4 per plane",
            ));
        }
        Ok(Some(per))
    }

    pub(crate) fn build_inter_bag(
        &mut self,
        spec: &SpecFile,
        ib: &InterBagSpec,
    ) -> Result<(), SpecError> {
        let names: Vec<&String> = ib.between.value.iter().map(|n| &n.value).collect();
        let loc = ib.between.referenced;
        if names.len() != 2 || names[0] == names[1] {
            return Err(self.err(
                loc,
                format!(
                    "`between` lists {}",
                    names
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "name exactly two different regions, e.g. `between: [east, west]`",
            ));
        }
        let mut ids = [RegionId::new(0); 2];
        for (k, sn) in ib.between.value.iter().enumerate() {
            let (n, loc) = (&sn.value, Cx::loc_or(sn.referenced, loc));
            let Some(i) = spec.regions.iter().position(|r| &r.name.value == n) else {
                let all: Vec<&str> = spec.regions.iter().map(|r| r.name.value.as_str()).collect();
                let hint = match crate::error::did_you_mean(n, all.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("regions: {}", all.join(", ")),
                };
                return Err(self.err(loc, format!("unknown region `{n}`"), hint));
            };
            if self.bags[i].is_none() {
                return Err(self.err(
                    loc,
                    format!("region `{n}` has no BAG layer"),
                    format!("add `bag:` to region `{n}`"),
                ));
            }
            ids[k] = RegionId::from_idx(i);
        }
        let n = self.pos(&ib.links_per_plane, "links_per_plane")?;
        let speed = super::mbps(self.pos(&ib.speed_gbps, "speed_gbps")?);
        let length = self.length(&ib.length_m, "length_m")?;
        let pa = self.bags[ids[0].idx()].as_ref().map_or(0, |b| b.planes);
        let pb = self.bags[ids[1].idx()].as_ref().map_or(0, |b| b.planes);
        self.reserve(ib.links_per_plane.referenced, 0, size(&[&[pa, n]]))?;
        // (plane of a, plane of b, link count)
        let mut pairs = Vec::new();
        match ib.topology {
            InterBagTopology::Planar => {
                if pa != pb {
                    return Err(self.err(
                        loc,
                        format!("planar inter-BAG needs equal plane counts, got {pa} and {pb}"),
                        "give both BAG layers the same `planes`, or use `topology: spread`",
                    ));
                }
                pairs.extend((0..pa).map(|p| (p, p, n)));
            }
            InterBagTopology::Spread => {
                if !n.is_multiple_of(pb) {
                    return Err(self.err(
                        ib.links_per_plane.referenced,
                        format!("{n} links per plane do not spread evenly over {pb} planes"),
                        format!("use a multiple of {pb}"),
                    ));
                }
                for p in 0..pa {
                    pairs.extend((0..pb).map(|q| (p, q, n / pb)));
                }
            }
        }
        for (p, q, count) in pairs {
            let a_side = self.bags[ids[0].idx()].as_mut().unwrap().take(p, count);
            let mut b_side = self.bags[ids[1].idx()].as_mut().unwrap().take(q, count);
            // Match the two round-robin spreads link by link into chassis-pair bundles.
            let mut bi = 0;
            for (ca, mut left) in a_side {
                while left > 0 {
                    let (cb, avail) = &mut b_side[bi];
                    let k = left.min(*avail);
                    self.fb
                        .add_bundle(
                            ca,
                            *cb,
                            k,
                            PortKind::Ethernet,
                            speed,
                            length,
                            LINK_MACSEC,
                            false,
                        )
                        .map_err(|e| self.port_err(ib.links_per_plane.referenced, e))?;
                    left -= k;
                    *avail -= k;
                    if *avail == 0 {
                        bi += 1;
                    }
                }
            }
        }
        Ok(())
    }
}
