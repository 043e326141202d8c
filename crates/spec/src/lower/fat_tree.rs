//! Generic k-ary fat tree (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008): k pods, each with k/2
//! edge switches (k/2 hosts each) and k/2 aggregation switches; aggregation switch i of every
//! pod connects to core switches i*(k/2) .. (i+1)*(k/2)-1. Non-blocking by construction.

use super::{add_rack, device, mbps, size, Cx, Rack, Site};
use crate::error::SpecError;
use crate::spec::FatTreeSpec;
use aifabric_model::*;

pub(crate) fn build(cx: &mut Cx<'_>, site: &mut Site, s: &FatTreeSpec) -> Result<(), SpecError> {
    let gpu = cx.hw(&s.gpu_model)?;
    let sw = cx.hw(&s.switch_model)?;
    let k = cx.pos(&s.k, "k")?;
    if k % 2 == 1 || k > 4_096 {
        return Err(cx.err(
            s.k.referenced,
            format!("fat-tree radix k = {k}"),
            "k must be even and at most 4096",
        ));
    }
    let speed = mbps(cx.pos(&s.link_speed_gbps, "link_speed_gbps")?);
    let h = k / 2;
    cx.reserve(
        site.loc,
        size(&[&[k, h, h], &[k, h], &[k, h], &[h, h]]),
        size(&[&[k, h, h], &[k, h, h], &[k, h, h]]),
    )?;
    let halls = u32::from(site.halls);
    let len_rack = cx.lengths.rack_to_fabric_m;
    let len_spine = cx.lengths.fabric_to_spine_m;
    let mut aggs = Vec::with_capacity((k * h) as usize);
    for pod in 0..k {
        let hall = (pod % halls) as u16;
        let mut edges = Vec::with_capacity(h as usize);
        for e in 0..h {
            let rack = pod * h + e;
            let r = Rack {
                role: Role::Rtsw,
                hw: sw,
                rack,
                pod,
                hall,
                gpus: h,
                gpu_hw: gpu,
            };
            edges.push(add_rack(cx, site, r)?);
        }
        for a in 0..h {
            let pd = site.pd.next(&mut cx.fb, hall);
            let mut d = device(Role::Ctsw, sw, site.zone, pod * h + a, Some(hall), pd);
            d.pod = NonMaxU32::new(pod);
            let id = cx.fb.add_device(d);
            for &e in &edges {
                cx.bundle(site.loc, e, id, 1, PortKind::Ethernet, speed, len_rack)?;
            }
            aggs.push(id);
        }
    }
    for c in 0..h * h {
        let hall = (c % halls) as u16;
        let pd = site.pd.next(&mut cx.fb, hall);
        let core = cx
            .fb
            .add_device(device(Role::Atsw, sw, site.zone, c, Some(hall), pd));
        // Core switch c serves aggregation switch c / (k/2) of every pod.
        for pod in 0..k {
            let agg = aggs[(pod * h + c / h) as usize];
            cx.bundle(site.loc, agg, core, 1, PortKind::Ethernet, speed, len_spine)?;
        }
    }
    Ok(())
}
