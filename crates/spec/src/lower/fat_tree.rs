//! Generic k-ary fat tree (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008): k pods, each with k/2
//! edge switches (k/2 hosts each) and k/2 aggregation switches, (k/2)^2 cores; non-blocking by
//! default. Wired as htsim builds its fat trees: every edge switch links to every aggregation
//! switch of its pod, and the aggregation switch at in-pod position p to cores p + A l,
//! l = 0 .. (uplinks - 1), with A aggregation switches per pod. Oversubscribed per tier with
//! `tor_uplinks` (A = that many aggregation switches per pod) and `agg_uplinks` (cores = A x
//! that).

use super::{add_rack, device, mbps, size, Cx, Rack, Site};
use crate::error::SpecError;
use crate::spec::FatTreeSpec;
use aifabric_model::*;

pub(crate) fn build(cx: &mut Cx<'_>, site: &mut Site, s: &FatTreeSpec) -> Result<(), SpecError> {
    if cx.bags[site.region.idx()].is_some() {
        // A k-ary tree's cores spend all k ports on the pods: nothing is left for BAG, and a
        // zone under a BAG that does not reach it would be cut off without a word.
        return Err(cx.err(
            site.loc,
            format!(
                "zone `{}` is a `fat_tree`, which has no uplinks to BAG (its cores use all k \
                 ports toward the pods), but its region has a BAG layer",
                cx.zone_name(site.zone)
            ),
            "put the fat tree in a region without `bag:`, or use a `roce` zone (its ATSWs go \
             up to BAG with `atsw_uplinks`)",
        ));
    }
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
    let uplinks = |v: &Option<crate::spec::S<u32>>, what: &str| -> Result<u32, SpecError> {
        match v {
            None => Ok(h),
            Some(x) => {
                let n = cx.pos(x, what)?;
                if n > h {
                    return Err(cx.err(
                        x.referenced,
                        format!("`{what}` = {n} is more than k/2 = {h}"),
                        format!(
                            "a switch of radix {k} has k/2 = {h} ports up; give 1..={h} (fewer \
                             oversubscribe the tier)"
                        ),
                    ));
                }
                Ok(n)
            }
        }
    };
    // Aggregation switches per pod, and uplinks of each to the cores.
    let a = uplinks(&s.tor_uplinks, "tor_uplinks")?;
    let up = uplinks(&s.agg_uplinks, "agg_uplinks")?;
    cx.reserve(
        site.loc,
        size(&[&[k, h, h], &[k, h], &[k, a], &[a, up]]),
        size(&[&[k, h, h], &[k, h, a], &[k, a, up]]),
    )?;
    let halls = u32::from(site.halls);
    let len_rack = cx.lengths.rack_to_fabric_m;
    let len_spine = cx.lengths.fabric_to_spine_m;
    let mut aggs = Vec::with_capacity((k * a) as usize);
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
        for p in 0..a {
            let pd = site.pd.next(&mut cx.fb, hall);
            let mut d = device(Role::Ctsw, sw, site.zone, pod * a + p, Some(hall), pd);
            d.pod = NonMaxU32::new(pod);
            let id = cx.fb.add_device(d);
            for &e in &edges {
                cx.bundle(site.loc, e, id, 1, PortKind::Ethernet, speed, len_rack)?;
            }
            aggs.push(id);
        }
    }
    for c in 0..a * up {
        let hall = (c % halls) as u16;
        let pd = site.pd.next(&mut cx.fb, hall);
        let core = cx
            .fb
            .add_device(device(Role::Atsw, sw, site.zone, c, Some(hall), pd));
        // Core c = p + A l serves the aggregation switch at position p = c mod A of every pod.
        for pod in 0..k {
            let agg = aggs[(pod * a + c % a) as usize];
            cx.bundle(site.loc, agg, core, 1, PortKind::Ethernet, speed, len_spine)?;
        }
    }
    Ok(())
}
