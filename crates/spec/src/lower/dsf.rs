//! DSF builders. Counts from FBOSS: single stage 128 RDSW / 40 FDSW / 16 EDSW; dual stage
//! 4 x 128 RDSW + 128 EDSW, 5 x 40 FDSW, 128 SDSW, 4 parallel links per interface node and
//! FDSW, 4 per FDSW and SDSW.

use super::{add_rack, device, mbps, size, Cx, Rack, Site};
use crate::error::SpecError;
use crate::spec::{DsfL1Spec, DsfL2Spec, DsfModels};
use aifabric_model::*;

struct Models {
    gpu: HwId,
    iface: HwId,
    fabric: HwId,
}

fn models(cx: &Cx<'_>, m: &DsfModels) -> Result<Models, SpecError> {
    Ok(Models {
        gpu: cx.hw(&m.gpu)?,
        iface: cx.hw(&m.interface_node)?,
        fabric: cx.hw(&m.fabric_node)?,
    })
}

/// An RDSW with its rack of GPUs, in cluster `pod`.
fn add_rdsw(
    cx: &mut Cx<'_>,
    site: &mut Site,
    m: &Models,
    index: u32,
    pod: u32,
    hall: u16,
    gpus: u32,
) -> Result<DeviceId, SpecError> {
    let rack = Rack {
        role: Role::Rdsw,
        hw: m.iface,
        rack: index,
        pod,
        hall,
        gpus,
        gpu_hw: m.gpu,
    };
    add_rack(cx, site, rack)
}

fn add_switch(
    cx: &mut Cx<'_>,
    site: &mut Site,
    role: Role,
    hw: HwId,
    index: u32,
    pod: Option<u32>,
    hall: u16,
) -> DeviceId {
    let pd = site.pd.next(&mut cx.fb, hall);
    let mut d = device(role, hw, site.zone, index, Some(hall), pd);
    d.pod = pod.and_then(NonMaxU32::new);
    cx.fb.add_device(d)
}

/// EDSW uplinks: `per_plane` links to every BAG plane of the region.
fn attach_edges(
    cx: &mut Cx<'_>,
    site: &Site,
    edges: &[DeviceId],
    per_plane: Option<u32>,
    speed_gbps: u32,
    hyperports: bool,
) -> Result<(), SpecError> {
    let Some(per) = per_plane else {
        return Ok(());
    };
    let planes = cx.bags[site.region.idx()].as_ref().map_or(0, |b| b.planes);
    for &e in edges {
        for p in 0..planes {
            cx.attach_to_bag(
                site.loc,
                site.region,
                e,
                p,
                per,
                mbps(speed_gbps),
                site.bag_length_m,
                hyperports,
            )?;
        }
    }
    Ok(())
}

/// Single-stage DSF: every RDSW and EDSW has `links_per_fdsw` links to every FDSW.
pub(crate) fn build_l1(cx: &mut Cx<'_>, site: &mut Site, s: &DsfL1Spec) -> Result<(), SpecError> {
    let m = models(cx, &s.models)?;
    let rdsw = cx.pos(&s.rdsw, "rdsw")?;
    let fdsw = cx.pos(&s.fdsw, "fdsw")?;
    let edsw = s.edsw.value;
    let lpf = cx.pos(&s.links_per_fdsw, "links_per_fdsw")?;
    let gpus = cx.pos(&s.gpus_per_rdsw, "gpus_per_rdsw")?;
    let speed = cx.pos(&s.uplink_speed_gbps, "uplink_speed_gbps")?;
    if edsw == 0 && cx.bags[site.region.idx()].is_some() {
        // Only EDSWs go up to BAG: without them the zone would sit under the BAG unreached.
        return Err(cx.err(
            Cx::loc_or(s.edsw.referenced, site.loc),
            format!(
                "zone `{}` has `edsw: 0` but its region has a BAG layer: only EDSWs go up to \
                 BAG, so the zone would be cut off from the rest of the region",
                cx.zone_name(site.zone)
            ),
            "give it EDSWs (`edsw`, default 16), or put the zone in a region without `bag:`",
        ));
    }
    let per_plane = if edsw > 0 {
        cx.links_per_plane(
            site,
            &s.edsw_uplinks,
            "edsw_uplinks",
            "edge device",
            &s.uplink_speed_gbps,
            s.hyperports,
        )?
    } else {
        None
    };
    let uplinks = s.edsw_uplinks.value;
    cx.reserve(
        site.loc,
        size(&[&[rdsw, gpus], &[rdsw], &[edsw], &[fdsw]]),
        size(&[
            &[rdsw, gpus],
            &[rdsw, fdsw, lpf],
            &[edsw, fdsw, lpf],
            &[edsw, uplinks],
        ]),
    )?;
    let halls = u32::from(site.halls);
    site.gpu_loc = Cx::loc_or(s.gpus_per_rdsw.referenced, site.loc);
    let hall_of = |i: u32, n: u32| (u64::from(i) * u64::from(halls) / u64::from(n)) as u16;
    let mut ifaces = Vec::with_capacity((rdsw + edsw) as usize);
    for r in 0..rdsw {
        ifaces.push(add_rdsw(cx, site, &m, r, 0, hall_of(r, rdsw), gpus)?);
    }
    let mut edges = Vec::new();
    for e in 0..edsw {
        let id = add_switch(
            cx,
            site,
            Role::Edsw,
            m.iface,
            e,
            Some(1),
            (e % halls) as u16,
        );
        edges.push(id);
        ifaces.push(id);
    }
    let fdsws: Vec<DeviceId> = (0..fdsw)
        .map(|f| {
            add_switch(
                cx,
                site,
                Role::Fdsw,
                m.fabric,
                f,
                Some(0),
                (f % halls) as u16,
            )
        })
        .collect();
    let len = cx.lengths.rack_to_fabric_m;
    for &i in &ifaces {
        for &f in &fdsws {
            cx.bundle(site.loc, i, f, lpf, PortKind::Fabric, FABRIC_LANE_MBPS, len)?;
        }
    }
    attach_edges(cx, site, &edges, per_plane, speed, s.hyperports)
}

/// Dual-stage DSF L2 zone: `clusters` RDSW clusters plus an edge-pod cluster of EDSWs, each
/// cluster with its own FDSWs; every FDSW connects to every SDSW.
pub(crate) fn build_l2(cx: &mut Cx<'_>, site: &mut Site, s: &DsfL2Spec) -> Result<(), SpecError> {
    let m = models(cx, &s.models)?;
    let clusters = cx.pos(&s.clusters, "clusters")?;
    let rpc = cx.pos(&s.rdsw_per_cluster, "rdsw_per_cluster")?;
    let edsw = cx.pos(&s.edsw, "edsw")?;
    let fpc = cx.pos(&s.fdsw_per_cluster, "fdsw_per_cluster")?;
    let sdsw = cx.pos(&s.sdsw, "sdsw")?;
    let lpf = cx.pos(&s.links_per_fdsw, "links_per_fdsw")?;
    let lps = cx.pos(&s.links_per_sdsw, "links_per_sdsw")?;
    let gpus = cx.pos(&s.gpus_per_rdsw, "gpus_per_rdsw")?;
    let speed = cx.pos(&s.uplink_speed_gbps, "uplink_speed_gbps")?;
    let per_plane = cx.links_per_plane(
        site,
        &s.edsw_uplinks,
        "edsw_uplinks",
        "edge device",
        &s.uplink_speed_gbps,
        s.hyperports,
    )?;
    let uplinks = s.edsw_uplinks.value;
    let c1 = clusters.saturating_add(1);
    cx.reserve(
        site.loc,
        size(&[
            &[clusters, rpc, gpus],
            &[clusters, rpc],
            &[edsw],
            &[c1, fpc],
            &[sdsw],
        ]),
        size(&[
            &[clusters, rpc, gpus],
            &[clusters, rpc, fpc, lpf],
            &[edsw, fpc, lpf],
            &[c1, fpc, sdsw, lps],
            &[edsw, uplinks],
        ]),
    )?;
    let halls = u32::from(site.halls);
    site.gpu_loc = Cx::loc_or(s.gpus_per_rdsw.referenced, site.loc);
    let len_rack = cx.lengths.rack_to_fabric_m;
    let len_spine = cx.lengths.fabric_to_spine_m;
    let mut all_fdsw = Vec::with_capacity(((clusters + 1) * fpc) as usize);
    let mut edges = Vec::new();
    // Clusters 0..clusters hold RDSWs; cluster `clusters` is the edge pod.
    for c in 0..=clusters {
        let hall = (c % halls) as u16;
        let mut ifaces = Vec::new();
        if c < clusters {
            for r in 0..rpc {
                ifaces.push(add_rdsw(cx, site, &m, c * rpc + r, c, hall, gpus)?);
            }
        } else {
            for e in 0..edsw {
                ifaces.push(add_switch(cx, site, Role::Edsw, m.iface, e, Some(c), hall));
            }
            edges.clone_from(&ifaces);
        }
        let fdsws: Vec<DeviceId> = (0..fpc)
            .map(|f| add_switch(cx, site, Role::Fdsw, m.fabric, c * fpc + f, Some(c), hall))
            .collect();
        for &i in &ifaces {
            for &f in &fdsws {
                cx.bundle(
                    site.loc,
                    i,
                    f,
                    lpf,
                    PortKind::Fabric,
                    FABRIC_LANE_MBPS,
                    len_rack,
                )?;
            }
        }
        all_fdsw.extend(fdsws);
    }
    let sdsws: Vec<DeviceId> = (0..sdsw)
        .map(|i| add_switch(cx, site, Role::Sdsw, m.fabric, i, None, (i % halls) as u16))
        .collect();
    for &f in &all_fdsw {
        for &sd in &sdsws {
            cx.bundle(
                site.loc,
                f,
                sd,
                lps,
                PortKind::Fabric,
                FABRIC_LANE_MBPS,
                len_spine,
            )?;
        }
    }
    attach_edges(cx, site, &edges, per_plane, speed, s.hyperports)
}
