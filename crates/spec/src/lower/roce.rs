//! RoCE AI zones (Llama 3 paper section 3.3.1; Gangidi et al., SIGCOMM 2024): racks of 16 GPUs
//! on one RTSW, RTSW -> CTSW inside an AI zone (full bisection), CTSW -> ATSW across zones
//! (oversubscribed).

use super::{add_rack, device, mbps, size, Cx, Rack, Site};
use crate::error::SpecError;
use crate::spec::RoceSpec;
use aifabric_model::*;

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
        ]),
    )?;
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
    }
    Ok(())
}
