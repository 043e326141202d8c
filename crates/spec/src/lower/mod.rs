//! Spec -> [`Fabric`]: validation and building in one pass, so every check can point at the
//! value that caused it. Builders per fabric kind live in the submodules.

mod bag;
mod dsf;
mod fat_tree;
mod nsf;
mod roce;

use crate::error::{did_you_mean, Source, SpecError};
use crate::spec::*;

use aifabric_model::*;
use serde_saphyr::Location;

pub(crate) use bag::BagLayer;

/// Build the fabric a spec describes. Every problem is a located [`SpecError`].
pub fn build(spec: &SpecFile, src: &Source) -> Result<Fabric, SpecError> {
    let mut cx = Cx {
        src,
        fb: FabricBuilder::new(spec.name.clone(), Catalog::builtin()),
        lengths: CableLengths::default(),
        bags: Vec::new(),
        devices_left: MAX_DEVICES,
        links_left: MAX_LINKS,
        zone_names: Vec::new(),
    };
    cx.lengths = cx.check_lengths(&spec.lengths)?;
    cx.add_hardware(&spec.hardware)?;
    check_unique(src, spec.regions.iter().map(|r| &r.name), "region")?;
    for region in &spec.regions {
        cx.check_name(&region.name)?;
        check_addressable(src, spec, region)?;
        let rid = cx.fb.add_region(region.name.value.clone());
        let bag = match &region.bag {
            Some(b) => Some(cx.build_bag(rid, &region.name.value, b)?),
            None => None,
        };
        cx.bags.push(bag);
        check_unique(src, region.buildings.iter().map(|b| &b.name), "building")?;
        for building in &region.buildings {
            cx.build_building(rid, &region.name.value, building)?;
        }
    }
    for ib in &spec.inter_bag {
        cx.build_inter_bag(spec, ib)?;
    }
    for g in &spec.srgs {
        // `srg:NAME` takes any text, but the command line splits selector lists at commas.
        cx.check_name(&g.name)?;
    }
    let mut fabric = cx.fb.finish();
    check_unique(src, spec.srgs.iter().map(|g| &g.name), "shared-risk group")?;
    for g in &spec.srgs {
        let mut srg = Srg {
            name: g.name.value.clone(),
            ..Srg::default()
        };
        if g.members.is_empty() {
            return Err(src.error(
                g.name.referenced,
                format!("shared-risk group `{}` has no members", g.name.value),
                Some("list selectors under `members:`".to_owned()),
            ));
        }
        for m in &g.members {
            match fabric.select(&m.value) {
                Ok(Selection::Devices(d)) => srg.devices.extend(d),
                Ok(Selection::Links(l)) => srg.links.extend(l),
                Ok(Selection::Group { devices, links }) => {
                    srg.devices.extend(devices);
                    srg.links.extend(links);
                }
                Err(e) => {
                    return Err(src.error(
                        m.referenced,
                        format!("selector `{}`: {}", e.selector, e.problem),
                        Some(crate::scenario::SELECTOR_HINT.to_owned()),
                    ))
                }
            }
        }
        fabric.add_srg(srg);
    }
    Ok(fabric)
}

/// Build context: the fabric under construction plus what builders share.
pub(crate) struct Cx<'a> {
    pub src: &'a Source,
    pub fb: FabricBuilder,
    pub lengths: CableLengths,
    /// BAG layer of each region (by region id), if it has one.
    pub bags: Vec<Option<BagLayer>>,
    /// What the spec may still build before it hits [`MAX_DEVICES`] / [`MAX_LINKS`].
    devices_left: u64,
    links_left: u64,
    /// Full names of the zones made so far (they prefix device names: must be unique).
    zone_names: Vec<(String, Location)>,
}

/// Upper bound on devices in one fabric: 40x the built-in `prometheus`. Checked before
/// anything is allocated, so a typo like `pods: 80000000` is an error, not an out-of-memory.
pub const MAX_DEVICES: u64 = 10_000_000;
/// Upper bound on links in one fabric (about 1 GB of link records).
pub const MAX_LINKS: u64 = 40_000_000;

/// Cable lengths per link class in metres, validated.
pub(crate) struct CableLengths {
    pub host_m: f64,
    pub rack_to_fabric_m: f64,
    pub fabric_to_spine_m: f64,
}

impl Default for CableLengths {
    fn default() -> Self {
        CableLengths {
            host_m: 0.0,
            rack_to_fabric_m: 0.0,
            fabric_to_spine_m: 0.0,
        }
    }
}

/// Sum of products, saturating: the size of a zone from its counts.
pub(crate) fn size(terms: &[&[u32]]) -> u64 {
    terms
        .iter()
        .map(|t| {
            t.iter()
                .fold(1u64, |acc, &x| acc.saturating_mul(u64::from(x)))
        })
        .fold(0u64, u64::saturating_add)
}

/// Where a zone sits: what builders need to place devices.
pub(crate) struct Site {
    pub region: RegionId,
    pub zone: ZoneId,
    pub halls: u16,
    pub pd: PdAlloc,
    pub bag_length_m: f64,
    /// Location of the zone's name, for errors about the zone as a whole.
    pub loc: Location,
    /// Location of the GPUs-per-rack count, for port errors on GPU links.
    pub gpu_loc: Location,
}

impl Cx<'_> {
    pub fn err(&self, loc: Location, msg: impl Into<String>, hint: impl Into<String>) -> SpecError {
        self.src.error(loc, msg, Some(hint.into()))
    }

    /// Claim room for `devices` and `links` before building them, or fail at `loc`.
    pub fn reserve(&mut self, loc: Location, devices: u64, links: u64) -> Result<(), SpecError> {
        if devices > self.devices_left || links > self.links_left {
            return Err(self.err(
                loc,
                format!("this would build {devices} devices and {links} links"),
                format!(
                    "a spec may build at most {MAX_DEVICES} devices and {MAX_LINKS} links in all; \
                     check the counts"
                ),
            ));
        }
        self.devices_left -= devices;
        self.links_left -= links;
        Ok(())
    }

    fn check_lengths(&self, l: &Lengths) -> Result<CableLengths, SpecError> {
        Ok(CableLengths {
            host_m: self.length(&l.host_m, "host_m")?,
            rack_to_fabric_m: self.length(&l.rack_to_fabric_m, "rack_to_fabric_m")?,
            fabric_to_spine_m: self.length(&l.fabric_to_spine_m, "fabric_to_spine_m")?,
        })
    }

    /// Add a zone whose full name must be unique: device names start with it.
    pub fn add_zone(
        &mut self,
        name: String,
        loc: Location,
        kind: ZoneKind,
        region: RegionId,
        building: Option<BuildingId>,
    ) -> Result<ZoneId, SpecError> {
        if let Some((_, first)) = self.zone_names.iter().find(|(n, _)| *n == name) {
            return Err(self.err(
                loc,
                format!("a second zone or BAG layer is named `{name}`"),
                format!(
                    "names prefix device names and must be unique; the first is at line {}",
                    first.line()
                ),
            ));
        }
        self.zone_names.push((name.clone(), loc));
        Ok(self.fb.add_zone(name, kind, region, building))
    }

    /// Full name of a zone made so far (`region.building.zone`).
    pub fn zone_name(&self, z: ZoneId) -> &str {
        &self.fb.partial().zones()[z.idx()].name
    }

    /// `primary` if the spec set it, else `fallback` (for values left at their default).
    pub fn loc_or(primary: Location, fallback: Location) -> Location {
        if primary == Location::UNKNOWN {
            fallback
        } else {
            primary
        }
    }

    /// A count that must be at least 1.
    pub fn pos(&self, v: &S<u32>, what: &str) -> Result<u32, SpecError> {
        if v.value == 0 {
            // Defaults are never 0, so the value was written and has a location.
            return Err(self.err(
                v.referenced,
                format!("`{what}` is 0"),
                format!("`{what}` must be at least 1"),
            ));
        }
        Ok(v.value)
    }

    /// A length or speed that must be a positive, finite number.
    pub fn positive_f64(&self, v: &S<f64>, what: &str) -> Result<f64, SpecError> {
        if !(v.value.is_finite() && v.value > 0.0) {
            return Err(self.err(
                v.referenced,
                format!("`{what}` is {}", v.value),
                format!("`{what}` must be a positive number"),
            ));
        }
        Ok(v.value)
    }

    /// A cable length in metres: positive, and at most 40,000 km (lengths are stored as 32-bit
    /// decimetres).
    pub fn length(&self, v: &S<f64>, what: &str) -> Result<f64, SpecError> {
        let m = self.positive_f64(v, what)?;
        if m > 4.0e7 {
            return Err(self.err(
                v.referenced,
                format!("`{what}` is {m} m"),
                "a cable is at most 40,000 km long",
            ));
        }
        Ok(m)
    }

    /// A hardware model by name, with a "did you mean" on a miss.
    pub fn hw(&self, name: &S<String>) -> Result<HwId, SpecError> {
        self.fb.catalog().find(&name.value).ok_or_else(|| {
            let hint = match did_you_mean(&name.value, self.fb.catalog().names()) {
                Some(s) => format!("did you mean `{s}`? (or define it under `hardware:`)"),
                None => format!(
                    "known models: {}; or define it under `hardware:`",
                    self.fb.catalog().names().collect::<Vec<_>>().join(", ")
                ),
            };
            self.err(
                name.referenced,
                format!("unknown hardware model `{}`", name.value),
                hint,
            )
        })
    }

    /// Names become parts of device names and selectors (`aifabric_model::scenario`): keep
    /// them to one dotless token that a selector can address. Letters, digits, `_` and `-`,
    /// but never `--` (a selector with it is a bundle `A--B`) and no `-` at either end (the
    /// conduit `conduit:A--B` of regions `a-` and `b` would read as `a` and `-b`).
    pub fn check_name(&self, name: &S<String>) -> Result<(), SpecError> {
        let n = &name.value;
        let bad = |why: &str, hint: &str| {
            Err(self.err(name.referenced, format!("invalid name `{n}`: {why}"), hint))
        };
        if n.is_empty()
            || !n
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return bad(
                "names are letters, digits, `-` and `_`",
                "use letters, digits, `-` and `_` only (names join into dotted device names)",
            );
        }
        // The same name with every run of `-` made one and none at the ends.
        let fixed = n
            .split('-')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        if n.contains("--") {
            return bad(
                "`--` separates the two ends of a bundle in selectors (`A--B`), so nothing \
                 under this name could be selected",
                &format!("use a single `-` or `_`, e.g. `{fixed}`"),
            );
        }
        if n.starts_with('-') || n.ends_with('-') {
            return bad(
                "a `-` at either end runs into the `--` of bundle and conduit selectors",
                &format!("start and end the name with a letter, digit or `_`, e.g. `{fixed}`"),
            );
        }
        Ok(())
    }

    /// Turn a port-budget failure into a located error.
    pub fn port_err(&self, loc: Location, e: PortError) -> SpecError {
        self.err(
            loc,
            format!("more links than ports: {e}"),
            "lower the link counts of this zone or pick a hardware model with more ports",
        )
    }

    /// Add a link bundle, locating any port error at `loc`.
    #[allow(clippy::too_many_arguments)]
    pub fn bundle(
        &mut self,
        loc: Location,
        a: DeviceId,
        b: DeviceId,
        count: u32,
        kind: PortKind,
        speed_mbps: u32,
        length_m: f64,
    ) -> Result<BundleId, SpecError> {
        self.fb
            .add_bundle(a, b, count, kind, speed_mbps, length_m, 0, false)
            .map_err(|e| self.port_err(loc, e))
    }

    fn add_hardware(&mut self, hw: &[HardwareSpec]) -> Result<(), SpecError> {
        check_unique(self.src, hw.iter().map(|h| &h.name), "hardware model")?;
        for h in hw {
            let mut ports = Vec::new();
            for (kind, modes) in [
                (PortKind::Host, &h.host),
                (PortKind::Ethernet, &h.ethernet),
                (PortKind::Fabric, &h.fabric),
            ] {
                if modes.is_empty() {
                    continue;
                }
                let mut out = Vec::new();
                for m in modes {
                    let count = self.pos(&m.count, "count")?;
                    if count > 16_384 {
                        return Err(self.err(
                            m.count.referenced,
                            format!("{count} ports in one mode"),
                            "a port group has at most 16384 ports",
                        ));
                    }
                    let speed = self.positive_f64(&m.speed_gbps, "speed_gbps")?;
                    if !(0.001..=4_000_000.0).contains(&speed) {
                        return Err(self.err(
                            m.speed_gbps.referenced,
                            format!("{speed} Gb/s per port"),
                            "a port runs at 0.001 to 4,000,000 Gb/s (the model stores whole Mb/s \
                             in 32 bits)",
                        ));
                    }
                    out.push(PortMode {
                        count,
                        speed_mbps: (speed * 1_000.0).round() as u32,
                    });
                }
                ports.push(PortGroup { kind, modes: out });
            }
            if !(h.power_w.value.is_finite() && h.power_w.value >= 0.0) {
                return Err(self.err(
                    h.power_w.referenced,
                    format!("`power_w` is {}", h.power_w.value),
                    "power is a number of watts, 0 or more",
                ));
            }
            if ports.is_empty() {
                return Err(self.err(
                    h.name.referenced,
                    format!("hardware model `{}` has no ports", h.name.value),
                    "give it `host`, `ethernet` or `fabric` port modes",
                ));
            }
            self.fb.catalog_mut().insert(HardwareModel {
                name: h.name.value.clone(),
                description: h.description.clone(),
                ports,
                hbm_bytes: h.hbm_bytes,
                sram_bytes: h.sram_bytes,
                gpu_memory_bytes: h.gpu_memory_bytes,
                power_w: h.power_w.value,
                line_cards: 0,
                pfc_response_ns: aifabric_model::DEFAULT_PFC_RESPONSE_NS,
            });
        }
        Ok(())
    }

    fn build_building(
        &mut self,
        region: RegionId,
        region_name: &str,
        b: &BuildingSpec,
    ) -> Result<(), SpecError> {
        self.check_name(&b.name)?;
        let halls = self.pos(&b.data_halls, "data_halls")?;
        if halls > 1_000 {
            return Err(self.err(
                b.data_halls.referenced,
                format!("{halls} data halls"),
                "a building has at most 1000 data halls",
            ));
        }
        let pd_size = self.pos(&b.power_domain_size, "power_domain_size")?;
        let bag_length_m = self.length(&b.distance_to_bag_m, "distance_to_bag_m")?;
        let bid = self
            .fb
            .add_building(b.name.value.clone(), region, halls as u16);
        let prefix = format!("{region_name}.{}", b.name.value);
        check_unique(self.src, b.zones.iter().map(|z| &z.name), "zone")?;
        if b.zones.is_empty() {
            return Err(self.err(
                b.name.referenced,
                format!("building `{}` has no zones", b.name.value),
                "add at least one zone under `zones:`",
            ));
        }
        for z in &b.zones {
            self.check_name(&z.name)?;
            let kinds = [
                z.dsf_l1.is_some(),
                z.dsf_l2.is_some(),
                z.nsf.is_some(),
                z.roce.is_some(),
                z.fat_tree.is_some(),
            ];
            if kinds.iter().filter(|k| **k).count() != 1 {
                return Err(self.err(
                    z.name.referenced,
                    format!("zone `{}` must have exactly one fabric", z.name.value),
                    "give it one of `dsf_l1`, `dsf_l2`, `nsf`, `roce`, `fat_tree` (`{}` takes defaults)",
                ));
            }
            let kind = if z.dsf_l1.is_some() {
                ZoneKind::DsfL1
            } else if z.dsf_l2.is_some() {
                ZoneKind::DsfL2
            } else if z.nsf.is_some() {
                ZoneKind::Nsf
            } else if z.roce.is_some() {
                ZoneKind::Roce
            } else {
                ZoneKind::FatTree
            };
            let name = format!("{prefix}.{}", z.name.value);
            let zone = self.add_zone(name.clone(), z.name.referenced, kind, region, Some(bid))?;
            let mut site = Site {
                region,
                zone,
                halls: halls as u16,
                pd: PdAlloc::new(name, bid, halls as u16, pd_size),
                bag_length_m,
                loc: z.name.referenced,
                gpu_loc: z.name.referenced,
            };
            if let Some(s) = &z.dsf_l1 {
                dsf::build_l1(self, &mut site, s)?;
            } else if let Some(s) = &z.dsf_l2 {
                dsf::build_l2(self, &mut site, s)?;
            } else if let Some(s) = &z.nsf {
                nsf::build(self, &mut site, s)?;
            } else if let Some(s) = &z.roce {
                roce::build(self, &mut site, s)?;
            } else if let Some(s) = &z.fat_tree {
                fat_tree::build(self, &mut site, s)?;
            }
        }
        Ok(())
    }
}

/// Hands out power-distribution domains of a building: each hall's units (racks, or switches
/// outside racks) fill domains of `size` in order.
pub(crate) struct PdAlloc {
    prefix: String,
    building: BuildingId,
    size: u32,
    /// Per hall: current domain and how many units it holds.
    current: Vec<Option<(PowerDomainId, u32)>>,
    made: u32,
}

impl PdAlloc {
    fn new(prefix: String, building: BuildingId, halls: u16, size: u32) -> Self {
        PdAlloc {
            prefix,
            building,
            size,
            current: vec![None; usize::from(halls)],
            made: 0,
        }
    }

    /// The domain of the next unit in `hall`.
    pub fn next(&mut self, fb: &mut FabricBuilder, hall: u16) -> PowerDomainId {
        let slot = &mut self.current[usize::from(hall)];
        match slot {
            Some((id, used)) if *used < self.size => {
                *used += 1;
                *id
            }
            _ => {
                let id = fb.add_power_domain(
                    format!("{}.hall{hall}.pd{}", self.prefix, self.made),
                    Some(self.building),
                );
                self.made += 1;
                *slot = Some((id, 1));
                id
            }
        }
    }
}

/// A device with the fields every builder sets; the rest "not applicable".
pub(crate) fn device(
    role: Role,
    hw: HwId,
    zone: ZoneId,
    index: u32,
    hall: Option<u16>,
    pd: PowerDomainId,
) -> Device {
    Device {
        role,
        hw,
        zone,
        index,
        plane: None,
        hall: hall.and_then(NonMaxU16::new),
        pod: None,
        rack: None,
        power_domain: pd,
    }
}

/// A rack: its switch and its GPUs.
pub(crate) struct Rack {
    /// Role of the rack switch (RDSW, RTSW).
    pub role: Role,
    /// Its hardware.
    pub hw: HwId,
    /// Rack number in the zone (also the switch's index).
    pub rack: u32,
    /// Pod (cluster, AI zone).
    pub pod: u32,
    /// Data hall.
    pub hall: u16,
    /// GPUs in the rack.
    pub gpus: u32,
    /// GPU hardware.
    pub gpu_hw: HwId,
}

/// Add a rack: its switch in a new power-domain slot, then its GPUs sharing that domain.
pub(crate) fn add_rack(cx: &mut Cx<'_>, site: &mut Site, r: Rack) -> Result<DeviceId, SpecError> {
    let pd = site.pd.next(&mut cx.fb, r.hall);
    let mut d = device(r.role, r.hw, site.zone, r.rack, Some(r.hall), pd);
    d.rack = NonMaxU32::new(r.rack);
    d.pod = NonMaxU32::new(r.pod);
    let id = cx.fb.add_device(d);
    add_gpus(cx, site, id, r.gpus, r.gpu_hw)?;
    Ok(id)
}

/// Add `gpus` GPUs under rack switch `tor` (rack `rack`), sharing its power domain.
fn add_gpus(
    cx: &mut Cx<'_>,
    site: &Site,
    tor: DeviceId,
    gpus: u32,
    gpu_hw: HwId,
) -> Result<(), SpecError> {
    let t = cx.fb.partial().device(tor).to_owned();
    let speed = cx
        .fb
        .catalog()
        .get(gpu_hw)
        .group(PortKind::Host)
        .and_then(|g| g.modes.first())
        .map(|m| m.speed_mbps)
        .ok_or_else(|| {
            cx.err(
                site.loc,
                "the GPU model has no host port",
                "pick a GPU model with a `host` port mode",
            )
        })?;
    for g in 0..gpus {
        let mut d = device(Role::Gpu, gpu_hw, site.zone, g, t.hall(), t.power_domain);
        d.rack = t.rack;
        d.pod = t.pod;
        let gid = cx.fb.add_device(d);
        cx.bundle(
            site.gpu_loc,
            gid,
            tor,
            1,
            PortKind::Host,
            speed,
            cx.lengths.host_m,
        )?;
    }
    Ok(())
}

/// Names that are valid alone but that a selector could not tell from another name: a prefix
/// selector (`east.bag`) selects every zone whose name starts with it on a dot boundary, so a
/// zone name must not be a dotted prefix of another's. Zone names are `region.building.zone`,
/// `region.bag` (a BAG layer's default) and a BAG layer's own one-token `name:`; the clashes
/// are a building `bag` beside a default-named BAG layer (`east.bag.plane0` is then a BAG
/// plane and a zone) and a BAG layer named like a region (`west.plane0` a plane and a
/// building's zones).
fn check_addressable(src: &Source, spec: &SpecFile, region: &RegionSpec) -> Result<(), SpecError> {
    let r = &region.name.value;
    if let Some(bag) = &region.bag {
        match &bag.name {
            None => {
                if let Some(b) = region.buildings.iter().find(|b| b.name.value == "bag") {
                    return Err(src.error(
                        b.name.referenced,
                        format!(
                            "building `bag` of region `{r}` has the name of the region's BAG \
                             layer, `{r}.bag`: the selector `{r}.bag` would select both, and \
                             `{r}.bag.plane0` a BAG plane and a zone"
                        ),
                        Some(
                            "rename the building, or give the BAG layer its own `name:`".to_owned(),
                        ),
                    ));
                }
            }
            Some(n) => {
                if let Some(other) = spec.regions.iter().find(|o| o.name.value == n.value) {
                    return Err(src.error(
                        n.referenced,
                        format!(
                            "BAG layer `{}` has the name of region `{}`: the selector `{}` \
                             would select both, and `{}.plane0` a BAG plane and a building",
                            n.value, other.name.value, n.value, n.value
                        ),
                        Some(format!(
                            "name the BAG layer apart from every region, e.g. `{r}-bag`, or \
                             leave `name:` out for `{r}.bag`"
                        )),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Names must be unique among their siblings.
fn check_unique<'a>(
    src: &Source,
    names: impl Iterator<Item = &'a S<String>>,
    what: &str,
) -> Result<(), SpecError> {
    let mut seen: Vec<&S<String>> = Vec::new();
    for n in names {
        if let Some(first) = seen.iter().find(|s| s.value == n.value) {
            return Err(src.error(
                n.referenced,
                format!("duplicate {what} name `{}`", n.value),
                Some(format!(
                    "the first `{}` is at line {}; rename one of them",
                    n.value,
                    first.referenced.line()
                )),
            ));
        }
        seen.push(n);
    }
    Ok(())
}

/// Gb/s (spec) -> Mb/s (model).
pub(crate) fn mbps(gbps: u32) -> u32 {
    gbps.saturating_mul(1_000)
}
