//! NSF builder: pods of racks; each rack switch has P parallel links to its pod's FTSW of each
//! of S spine planes; each FTSW links to every STSW of its plane; STSW i of every spine plane
//! goes up to BAG plane i (Prometheus post; FBOSS defaults R = 6 racks per pod).

use super::{add_rack, device, mbps, size, Cx, Rack, Site};
use crate::error::SpecError;
use crate::spec::NsfSpec;
use aifabric_model::*;

pub(crate) fn build(cx: &mut Cx<'_>, site: &mut Site, s: &NsfSpec) -> Result<(), SpecError> {
    let gpu = cx.hw(&s.gpu_model)?;
    let sw = cx.hw(&s.switch_model)?;
    let pods = cx.pos(&s.pods, "pods")?;
    let rpp = cx.pos(&s.racks_per_pod, "racks_per_pod")?;
    let gpr = cx.pos(&s.gpus_per_rack, "gpus_per_rack")?;
    let planes = cx.pos(&s.spine_planes, "spine_planes")?;
    let p = cx.pos(&s.rack_links_per_plane, "rack_links_per_plane")?;
    let tpp = cx.pos(&s.stsw_per_plane, "stsw_per_plane")?;
    let f = cx.pos(&s.ftsw_links_per_stsw, "ftsw_links_per_stsw")?;
    let up = cx.pos(&s.stsw_uplinks, "stsw_uplinks")?;
    let speed = mbps(cx.pos(&s.link_speed_gbps, "link_speed_gbps")?);
    if planes > u32::from(u16::MAX - 1) {
        return Err(cx.err(
            s.spine_planes.referenced,
            format!("{planes} spine planes"),
            "at most 65534 planes",
        ));
    }
    if let Some(bag) = &cx.bags[site.region.idx()] {
        if bag.planes != tpp {
            return Err(cx.err(
                Cx::loc_or(s.stsw_per_plane.referenced, site.loc),
                format!(
                    "{tpp} STSWs per spine plane but the region's BAG has {} planes (line {})",
                    bag.planes,
                    bag.planes_loc.line()
                ),
                "STSW i of every spine plane connects to BAG plane i: make `stsw_per_plane` \
                 equal `bag.planes`",
            ));
        }
    }
    cx.reserve(
        site.loc,
        size(&[
            &[pods, rpp, gpr],
            &[pods, rpp],
            &[pods, planes],
            &[planes, tpp],
        ]),
        size(&[
            &[pods, rpp, gpr],
            &[pods, rpp, planes, p],
            &[pods, planes, tpp, f],
            &[planes, tpp, up],
        ]),
    )?;
    let halls = u32::from(site.halls);
    site.gpu_loc = Cx::loc_or(s.gpus_per_rack.referenced, site.loc);
    let (len_rack, len_spine) = (cx.lengths.rack_to_fabric_m, cx.lengths.fabric_to_spine_m);
    let mut ftsw = Vec::with_capacity((pods * planes) as usize);
    for pod in 0..pods {
        let hall = (pod % halls) as u16;
        let mut racks = Vec::with_capacity(rpp as usize);
        for r in 0..rpp {
            let rack = pod * rpp + r;
            let r = Rack {
                role: Role::Rtsw,
                hw: sw,
                rack,
                pod,
                hall,
                gpus: gpr,
                gpu_hw: gpu,
            };
            racks.push(add_rack(cx, site, r)?);
        }
        for plane in 0..planes {
            let pd = site.pd.next(&mut cx.fb, hall);
            let mut d = device(
                Role::Ftsw,
                sw,
                site.zone,
                pod * planes + plane,
                Some(hall),
                pd,
            );
            d.pod = NonMaxU32::new(pod);
            d.plane = NonMaxU16::new(plane as u16);
            let id = cx.fb.add_device(d);
            for &r in &racks {
                cx.bundle(site.loc, r, id, p, PortKind::Ethernet, speed, len_rack)?;
            }
            ftsw.push(id);
        }
    }
    for plane in 0..planes {
        let hall = (plane % halls) as u16;
        for t in 0..tpp {
            let pd = site.pd.next(&mut cx.fb, hall);
            let mut d = device(Role::Stsw, sw, site.zone, plane * tpp + t, Some(hall), pd);
            d.plane = NonMaxU16::new(plane as u16);
            let id = cx.fb.add_device(d);
            for pod in 0..pods {
                let ft = ftsw[(pod * planes + plane) as usize];
                cx.bundle(site.loc, ft, id, f, PortKind::Ethernet, speed, len_spine)?;
            }
            if cx.bags[site.region.idx()].is_some() {
                let len = site.bag_length_m;
                cx.attach_to_bag(site.loc, site.region, id, t, up, speed, len, false)?;
            }
        }
    }
    Ok(())
}
