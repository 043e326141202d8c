//! RoCE AI zones (Llama 3 paper section 3.3.1; Gangidi et al., SIGCOMM 2024): racks of 16 GPUs
//! on one RTSW, RTSW -> CTSW inside an AI zone (full bisection), CTSW -> ATSW across zones
//! (oversubscribed). Under a BAG, the ATSWs are the zone's edge: each has `atsw_uplinks`
//! links spread evenly over the BAG planes, as a DSF zone's EDSWs have (Meta's RoCE zones
//! reach BAG through their aggregation tier; the count is an assumption, see
//! [`RoceSpec::atsw_uplinks`]).

use super::{add_rack, device, mbps, size, Cx, Rack, Site};
use crate::error::SpecError;
use crate::spec::RoceSpec;
use aifabric_model::*;
use serde_saphyr::Location;

pub(crate) fn build(cx: &mut Cx<'_>, site: &mut Site, s: &RoceSpec) -> Result<(), SpecError> {
    let gpu = cx.hw(&s.gpu_model)?;
    let rtsw_hw = cx.hw(&s.rtsw_model)?;
    let spine_hw = cx.hw(&s.spine_model)?;
    let zones = cx.pos(&s.ai_zones, "ai_zones")?;
    let racks = cx.pos(&s.racks_per_zone, "racks_per_zone")?;
    let gpr = cx.pos(&s.gpus_per_rack, "gpus_per_rack")?;
    let cpz = cx.pos(&s.ctsw_per_zone, "ctsw_per_zone")?;
    let l1 = cx.pos(&s.rtsw_links_per_ctsw, "rtsw_links_per_ctsw")?;
    let atsw = cx.pos(&s.atsw, "atsw")?;
    let l2 = cx.pos(&s.ctsw_links_per_atsw, "ctsw_links_per_atsw")?;
    let speed = mbps(cx.pos(&s.link_speed_gbps, "link_speed_gbps")?);
    let per_plane = cx.links_per_plane(
        site,
        &s.atsw_uplinks,
        "atsw_uplinks",
        "ATSW",
        &s.link_speed_gbps,
        false,
    )?;
    let uplinks = per_plane.map_or(0, |_| s.atsw_uplinks.value);
    cx.reserve(
        site.loc,
        size(&[
            &[zones, racks, gpr],
            &[zones, racks],
            &[zones, cpz],
            &[atsw],
        ]),
        size(&[
            &[zones, racks, gpr],
            &[zones, racks, cpz, l1],
            &[zones, cpz, atsw, l2],
            &[atsw, uplinks],
        ]),
    )?;
    if per_plane.is_some() {
        let down = size(&[&[zones, cpz, l2]]);
        check_atsw_ports(cx, site, s, spine_hw, down, speed)?;
    }
    let halls = u32::from(site.halls);
    site.gpu_loc = Cx::loc_or(s.gpus_per_rack.referenced, site.loc);
    let (len_rack, len_spine) = (cx.lengths.rack_to_fabric_m, cx.lengths.fabric_to_spine_m);
    let mut ctsws = Vec::with_capacity((zones * cpz) as usize);
    for z in 0..zones {
        let hall = (z % halls) as u16;
        let mut rtsws = Vec::with_capacity(racks as usize);
        for r in 0..racks {
            let rack = z * racks + r;
            let r = Rack {
                role: Role::Rtsw,
                hw: rtsw_hw,
                rack,
                pod: z,
                hall,
                gpus: gpr,
                gpu_hw: gpu,
            };
            rtsws.push(add_rack(cx, site, r)?);
        }
        for c in 0..cpz {
            let pd = site.pd.next(&mut cx.fb, hall);
            let mut d = device(Role::Ctsw, spine_hw, site.zone, z * cpz + c, Some(hall), pd);
            d.pod = NonMaxU32::new(z);
            let id = cx.fb.add_device(d);
            for &r in &rtsws {
                cx.bundle(site.loc, r, id, l1, PortKind::Ethernet, speed, len_rack)?;
            }
            ctsws.push(id);
        }
    }
    for a in 0..atsw {
        let hall = (a % halls) as u16;
        let pd = site.pd.next(&mut cx.fb, hall);
        let id = cx
            .fb
            .add_device(device(Role::Atsw, spine_hw, site.zone, a, Some(hall), pd));
        for &c in &ctsws {
            cx.bundle(site.loc, c, id, l2, PortKind::Ethernet, speed, len_spine)?;
        }
        if let Some(per) = per_plane {
            let planes = cx.bags[site.region.idx()].as_ref().map_or(0, |b| b.planes);
            for p in 0..planes {
                let len = site.bag_length_m;
                cx.attach_to_bag(site.loc, site.region, id, p, per, speed, len, false)?;
            }
        }
    }
    Ok(())
}

/// Under a BAG, each ATSW needs `atsw_uplinks` ports beside its `down` CTSW links (all at
/// the zone's one link speed): refuse the zone, naming the field, when they do not fit.
fn check_atsw_ports(
    cx: &Cx<'_>,
    site: &Site,
    s: &RoceSpec,
    hw: HwId,
    down: u64,
    speed_mbps: u32,
) -> Result<(), SpecError> {
    let model = cx.fb.catalog().get(hw);
    let Some(group) = model.group(PortKind::Ethernet) else {
        // The CTSW links report a model without Ethernet ports.
        return Ok(());
    };
    let by_bw = group.budget_mbps() / u64::from(speed_mbps.max(1));
    let ports = u64::from(group.ports_at(speed_mbps)).min(by_bw);
    let up = u64::from(s.atsw_uplinks.value);
    if ports == 0 || down > ports || down.saturating_add(up) <= ports {
        // An unsupported speed, or CTSW links that alone overflow the ATSW, are reported by
        // the CTSW links themselves.
        return Ok(());
    }
    let planes = cx.bags[site.region.idx()]
        .as_ref()
        .map_or(1, |b| u64::from(b.planes));
    let free = ports.saturating_sub(down) / planes * planes;
    let fix = if free > 0 {
        format!("set `atsw_uplinks: {free}` (a multiple of the {planes} BAG planes that fits)")
    } else {
        "free ATSW ports: fewer `ctsw_links_per_atsw`, fewer CTSWs or AI zones".to_owned()
    };
    let default = if s.atsw_uplinks.referenced == Location::UNKNOWN {
        " (the default)"
    } else {
        ""
    };
    Err(cx.err(
        Cx::loc_or(s.atsw_uplinks.referenced, site.loc),
        format!(
            "zone `{}`: `atsw_uplinks` = {up}{default} BAG uplinks per ATSW do not fit beside \
             its {down} CTSW links: a {} has {ports} ports at {}G",
            cx.zone_name(site.zone),
            model.name,
            speed_mbps / 1_000
        ),
        format!("{fix}, or pick a `spine_model` with more ports"),
    ))
}
