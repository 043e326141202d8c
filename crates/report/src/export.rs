//! Exports to the tools people already run: NetBox bulk-import CSVs, GraphML and node-link
//! JSON for NetworkX, the IP plan as CSV, and a Graphviz DOT overview.
//!
//! Every export is a set of named files, each written by a function into any `Write` (the
//! CLI writes the set into a temporary directory and renames it into place). Everything
//! streams: nothing holds
//! the 2.35M links of `prometheus` in memory twice.
//!
//! Names: devices as `Fabric::device_name`; interfaces `nic0` (a GPU's NIC), `eth<port>`
//! (Ethernet ports, in port order) and `fab<port>` (DSF cell-fabric lanes). NetBox column names
//! follow NetBox's bulk-import forms (`dcim/forms/bulk_import.py`, `ipam/forms/bulk_import.py`).

use aifabric_model::{DeviceId, Fabric, Link, LinkId, Ordinal, PortKind, Role};
use aifabric_routing::addressing::{AddressPlan, PlanError};
use aifabric_routing::bgp::{AsnPlan, BgpGraph, SpeakerKind};
use std::io::{self, Write};

/// An export format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// NetBox bulk-import CSVs.
    Netbox,
    /// GraphML (devices and bundles).
    Graphml,
    /// NetworkX node-link JSON (devices and bundles).
    Nodelink,
    /// The IPv6 plan as CSV.
    Ipplan,
    /// Graphviz DOT at zone and BAG-plane level.
    Dot,
    /// FRRouting configuration per router and `topology.json` ([`crate::frr`]); its files
    /// depend on the fabric ([`crate::frr::file_names`]).
    Frr,
}

impl Format {
    /// Every format with a fixed set of files ([`Format::Frr`]'s depend on the fabric).
    pub const ALL: [Format; 5] = [
        Format::Netbox,
        Format::Graphml,
        Format::Nodelink,
        Format::Ipplan,
        Format::Dot,
    ];

    /// Parse a format name.
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "netbox" => Format::Netbox,
            "graphml" => Format::Graphml,
            "nodelink" => Format::Nodelink,
            "ipplan" => Format::Ipplan,
            "dot" => Format::Dot,
            "frr" => Format::Frr,
            _ => return None,
        })
    }

    /// Accepted names, for hints.
    pub const HELP: &'static str = "netbox, graphml, nodelink, ipplan, dot or frr";

    /// The files of the export (none listed for [`Format::Frr`]: see
    /// [`crate::frr::file_names`]).
    pub fn files(self) -> &'static [&'static str] {
        match self {
            Format::Frr => &[],
            Format::Netbox => &[
                "manufacturers.csv",
                "device-roles.csv",
                "device-types.csv",
                "sites.csv",
                "locations.csv",
                "racks.csv",
                "devices.csv",
                "interfaces.csv",
                "cables.csv",
                "ip-addresses.csv",
                "asns.csv",
                "device-asns.csv",
            ],
            Format::Graphml => &["fabric.graphml"],
            Format::Nodelink => &["fabric.json"],
            Format::Ipplan => &["ipplan.csv"],
            Format::Dot => &["fabric.dot"],
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        Format::parse(s).ok_or_else(|| {
            format!(
                "unknown format `{s}`{}; use {}",
                aifabric_model::did_you_mean_hint(
                    s,
                    &["netbox", "graphml", "nodelink", "ipplan", "dot", "frr"]
                ),
                Format::HELP
            )
        })
    }
}

/// Export failures.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The fabric is too large for the addressing plan (the plan's error is the source).
    #[error("{0}")]
    Plan(#[from] PlanError),
    /// The export has no file of that name.
    #[error("no file {0} in this export")]
    NoFile(String),
}

/// Write file `name` of `format` for `f` into `w`.
pub fn write(f: &Fabric, format: Format, name: &str, w: &mut dyn Write) -> Result<(), ExportError> {
    match (format, name) {
        (Format::Netbox, "manufacturers.csv") => netbox_manufacturers(w)?,
        (Format::Netbox, "device-roles.csv") => netbox_roles(f, w)?,
        (Format::Netbox, "device-types.csv") => netbox_device_types(f, w)?,
        (Format::Netbox, "sites.csv") => netbox_sites(f, w)?,
        (Format::Netbox, "locations.csv") => netbox_locations(f, w)?,
        (Format::Netbox, "racks.csv") => netbox_racks(f, w)?,
        (Format::Netbox, "devices.csv") => netbox_devices(f, w)?,
        (Format::Netbox, "interfaces.csv") => netbox_interfaces(f, w)?,
        (Format::Netbox, "cables.csv") => netbox_cables(f, w)?,
        (Format::Netbox, "ip-addresses.csv") => netbox_ips(f, &AddressPlan::new(f)?, w)?,
        (Format::Netbox, "asns.csv") => netbox_asns(f, w)?,
        (Format::Netbox, "device-asns.csv") => device_asns(f, w)?,
        (Format::Graphml, _) => graphml(f, w)?,
        (Format::Nodelink, _) => nodelink(f, w)?,
        (Format::Ipplan, _) => ipplan(f, &AddressPlan::new(f)?, w)?,
        (Format::Dot, _) => dot(f, w)?,
        _ => return Err(ExportError::NoFile(name.to_owned())),
    }
    Ok(())
}

/// NetBox `dcim.manufacturer` import columns written here.
pub const MANUFACTURER_COLUMNS: &[&str] = &["name", "slug", "description"];
/// NetBox `dcim.devicerole` import columns written here.
pub const ROLE_COLUMNS: &[&str] = &["name", "slug", "color", "description"];
/// NetBox `dcim.devicetype` import columns written here.
pub const DEVICE_TYPE_COLUMNS: &[&str] =
    &["manufacturer", "model", "slug", "u_height", "description"];
/// NetBox `dcim.site` import columns written here.
pub const SITE_COLUMNS: &[&str] = &["name", "slug", "status", "description"];
/// NetBox `dcim.location` import columns written here.
pub const LOCATION_COLUMNS: &[&str] = &["site", "name", "slug", "status"];
/// NetBox `dcim.rack` import columns written here.
pub const RACK_COLUMNS: &[&str] = &["site", "location", "name", "status", "width", "u_height"];
/// NetBox `dcim.device` import columns written here.
pub const DEVICE_COLUMNS: &[&str] = &[
    "name",
    "role",
    "manufacturer",
    "device_type",
    "status",
    "site",
    "location",
    "rack",
    "description",
];
/// NetBox `dcim.interface` import columns written here.
pub const INTERFACE_COLUMNS: &[&str] =
    &["device", "name", "type", "speed", "enabled", "description"];
/// NetBox `dcim.cable` import columns written here.
pub const CABLE_COLUMNS: &[&str] = &[
    "side_a_device",
    "side_a_type",
    "side_a_name",
    "side_b_device",
    "side_b_type",
    "side_b_name",
    "type",
    "status",
    "length",
    "length_unit",
    "description",
];
/// NetBox `ipam.ipaddress` import columns written here.
pub const IP_COLUMNS: &[&str] = &[
    "address",
    "status",
    "role",
    "device",
    "interface",
    "description",
];
/// NetBox `ipam.asn` import columns written here.
pub const ASN_COLUMNS: &[&str] = &["asn", "rir", "description"];

/// A CSV writer on `w` (the `csv` crate: RFC 4180 quoting where a field needs it, `\n` line
/// ends), its first record `cols`.
fn table<'w>(w: &'w mut dyn Write, cols: &[&str]) -> io::Result<csv::Writer<&'w mut dyn Write>> {
    let mut out = csv::WriterBuilder::new()
        .has_headers(false)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(w);
    out.write_record(cols)?;
    Ok(out)
}

/// Interface name of `d`'s end of link `l`.
pub fn interface_name(f: &Fabric, l: LinkId, d: DeviceId) -> String {
    let link = f.link(l);
    let port = if link.a == d {
        link.a_port
    } else {
        link.b_port
    };
    match (f.device(d).role, link.kind) {
        (Role::Gpu, _) => format!("nic{port}"),
        (_, PortKind::Fabric) => format!("fab{port}"),
        _ => format!("eth{port}"),
    }
}

/// NetBox interface type for a port speed (NetBox `InterfaceTypeChoices`).
fn interface_type(link: &Link) -> &'static str {
    match (link.kind, link.capacity_mbps) {
        (PortKind::Fabric, _) => "other",
        (_, 800_000) => "800gbase-x-osfp",
        (_, 400_000) => "400gbase-x-qsfpdd",
        (_, 200_000) => "200gbase-x-qsfp56",
        (_, 100_000) => "100gbase-x-qsfp28",
        _ => "other",
    }
}

/// A NetBox slug: lower case, dots and other separators as dashes.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// The manufacturer every exported device type is filed under.
const MANUFACTURER: &str = "aifabric";

fn netbox_manufacturers(w: &mut dyn Write) -> io::Result<()> {
    let mut out = table(w, MANUFACTURER_COLUMNS)?;
    out.write_record([
        MANUFACTURER,
        MANUFACTURER,
        "device types of an aifabric model",
    ])?;
    out.flush()
}

fn netbox_roles(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    let mut out = table(w, ROLE_COLUMNS)?;
    let mut seen = [false; Role::ALL.len()];
    for d in f.devices() {
        seen[d.role as usize] = true;
    }
    for r in Role::ALL {
        if seen[r as usize] {
            // A colour per tier, light at the GPUs, dark at BAG.
            let color = [
                "9e9e9e", "4caf50", "8bc34a", "cddc39", "2196f3", "03a9f4", "00bcd4", "3f51b5",
                "ff9800", "ff5722", "9c27b0", "673ab7",
            ][r as usize];
            out.write_record([r.as_str(), r.as_str(), color, r.as_str()])?;
        }
    }
    out.flush()
}

fn netbox_device_types(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    let mut out = table(w, DEVICE_TYPE_COLUMNS)?;
    let mut used = vec![false; f.catalog().models().len()];
    for d in f.devices() {
        used[d.hw.idx()] = true;
    }
    for (m, _) in f.catalog().models().iter().zip(&used).filter(|(_, &u)| u) {
        // GPUs sit in servers; switches take one unit (chassis their own height in NetBox).
        out.write_record([MANUFACTURER, &m.name, &slug(&m.name), "1", &m.description])?;
    }
    out.flush()
}

/// Sites (buildings, and each region's BAG) and locations (data halls) in id order.
fn sites_and_halls(f: &Fabric) -> (Vec<String>, Vec<(String, String)>) {
    let mut sites = Vec::new();
    let mut halls = Vec::new();
    for (r, region) in f.regions().iter().enumerate() {
        for b in f.buildings().iter().filter(|b| b.region.idx() == r) {
            let site = format!("{}.{}", region.name, b.name);
            for h in 0..b.data_halls {
                halls.push((site.clone(), format!("{site}.hall{h}")));
            }
            sites.push(site);
        }
        sites.push(format!("{}.bag", region.name));
    }
    (sites, halls)
}

fn netbox_sites(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    let mut out = table(w, SITE_COLUMNS)?;
    for s in sites_and_halls(f).0 {
        out.write_record([s.as_str(), &slug(&s), "planned", &s])?;
    }
    out.flush()
}

fn netbox_locations(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    let mut out = table(w, LOCATION_COLUMNS)?;
    for (site, hall) in sites_and_halls(f).1 {
        out.write_record([site.as_str(), &hall, &slug(&hall), "planned"])?;
    }
    out.flush()
}

fn netbox_racks(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    let mut out = table(w, RACK_COLUMNS)?;
    for i in 0..f.devices().len() {
        let d = DeviceId::from_idx(i);
        let dev = f.device(d);
        // One rack per rack switch (its GPUs and it share the rack).
        if matches!(dev.role, Role::Rtsw | Role::Rdsw) {
            let (site, hall) = f.site_and_hall(d);
            let rack = format!(
                "{}.rack{}",
                f.zones()[dev.zone.idx()].name,
                Ordinal(dev.rack())
            );
            out.write_record([site.as_str(), &hall, &rack, "planned", "19", "48"])?;
        }
    }
    out.flush()
}

fn netbox_devices(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    let mut out = table(w, DEVICE_COLUMNS)?;
    for i in 0..f.devices().len() {
        let d = DeviceId::from_idx(i);
        let dev = f.device(d);
        let (site, hall) = f.site_and_hall(d);
        let rack = dev.rack().map_or_else(String::new, |r| {
            format!("{}.rack{r}", f.zones()[dev.zone.idx()].name)
        });
        out.write_record([
            f.device_name(d).as_str(),
            dev.role.as_str(),
            MANUFACTURER,
            &f.hardware(d).name,
            "planned",
            &site,
            &hall,
            &rack,
            &f.zones()[dev.zone.idx()].name,
        ])?;
    }
    out.flush()
}

fn netbox_interfaces(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    let mut out = table(w, INTERFACE_COLUMNS)?;
    for i in 0..f.devices().len() {
        let d = DeviceId::from_idx(i);
        let name = f.device_name(d);
        for &l in f.incident(d) {
            let link = f.link(l);
            // NetBox speeds are in kb/s.
            out.write_record([
                name.as_str(),
                &interface_name(f, l, d),
                interface_type(link),
                &(u64::from(link.capacity_mbps) * 1000).to_string(),
                "true",
                link.kind.as_str(),
            ])?;
        }
    }
    out.flush()
}

fn netbox_cables(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    let mut out = table(w, CABLE_COLUMNS)?;
    for (i, link) in f.links().iter().enumerate() {
        let l = LinkId::from_idx(i);
        let ty = if link.optic == aifabric_model::Optic::Dac {
            "dac-passive"
        } else if link.length_m() <= 100.0 {
            "mmf"
        } else {
            "smf"
        };
        out.write_record([
            f.device_name(link.a).as_str(),
            "dcim.interface",
            &interface_name(f, l, link.a),
            &f.device_name(link.b),
            "dcim.interface",
            &interface_name(f, l, link.b),
            ty,
            "planned",
            &link.length_m().to_string(),
            "m",
            link.optic.as_str(),
        ])?;
    }
    out.flush()
}

/// The address of device `d`'s end of link `l` in the plan `p`, with its prefix length
/// (`fd00:b1::180/127`): an Ethernet link's /127, one address each end (GPU links are in the
/// rack's /64 and DSF fabric lanes carry cells: `None`).
pub fn interface_address(f: &Fabric, p: &AddressPlan, l: LinkId, d: DeviceId) -> Option<String> {
    let link = f.link(l);
    if link.kind != PortKind::Ethernet {
        return None;
    }
    let (_, a, b) = p.link(l);
    Some(format!("{}/127", if d == link.a { a } else { b }))
}

fn netbox_ips(f: &Fabric, p: &AddressPlan, w: &mut dyn Write) -> io::Result<()> {
    let mut out = table(w, IP_COLUMNS)?;
    for (i, link) in f.links().iter().enumerate() {
        // GPU links are in the rack's /64, not point-to-point; fabric lanes carry cells.
        if link.kind != PortKind::Ethernet {
            continue;
        }
        let l = LinkId::from_idx(i);
        for d in [link.a, link.b] {
            let Some(addr) = interface_address(f, p, l, d) else {
                continue;
            };
            out.write_record([
                addr.as_str(),
                "active",
                "",
                &f.device_name(d),
                &interface_name(f, l, d),
                &format!("link {}", l.get()),
            ])?;
        }
    }
    for i in 0..f.devices().len() {
        let d = DeviceId::from_idx(i);
        if f.device(d).role.is_switch() {
            out.write_record([
                p.loopback(d).to_string().as_str(),
                "active",
                "loopback",
                &f.device_name(d),
                "",
                "loopback",
            ])?;
        }
    }
    out.flush()
}

fn netbox_asns(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    let g = BgpGraph::new(f, AsnPlan::Rfc7938);
    let mut out = table(w, ASN_COLUMNS)?;
    // One row per ASN, described by its first speaker and how many share it.
    let mut by_asn: Vec<(u32, u32, usize)> = Vec::new();
    for (i, s) in g.speakers.iter().enumerate() {
        by_asn.push((s.asn, i as u32, 1));
    }
    by_asn.sort_unstable();
    let mut rows: Vec<(u32, u32, usize)> = Vec::new();
    for e in by_asn {
        match rows.last_mut() {
            Some(last) if last.0 == e.0 => last.2 += 1,
            _ => rows.push(e),
        }
    }
    for (asn, first, n) in rows {
        let who = match g.speakers[first as usize].kind {
            SpeakerKind::Device(d) => f.device_name(d),
            SpeakerKind::DsfSystem(z) => format!("{} (DSF system)", f.zones()[z.idx()].name),
        };
        let desc = if n > 1 {
            format!("{who} and {} more", n - 1)
        } else {
            who
        };
        // RFC 6996 private ASNs: NetBox files them under a private RIR.
        out.write_record([asn.to_string().as_str(), "private", &desc])?;
    }
    out.flush()
}

/// The columns of `device-asns.csv`.
pub const DEVICE_ASN_COLUMNS: &[&str] = &["device", "asn", "speaker"];

/// Every BGP-speaking device and its ASN (the RFC 7938 plan, as `asns.csv`), with the BGP
/// speaker it belongs to: itself, or its DSF zone, which speaks as one system. NetBox has no
/// ASN field on a device (ASNs are objects of their own, listed in `asns.csv`), so this is a
/// plain mapping, not a NetBox import: load it with a custom field `asn` on devices, or read it
/// directly. GPUs and DSF fabric nodes (FDSW, SDSW: cells inside the system), which speak no
/// BGP, are not listed.
fn device_asns(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    let g = BgpGraph::new(f, AsnPlan::Rfc7938);
    let mut out = table(w, DEVICE_ASN_COLUMNS)?;
    for i in 0..f.devices().len() {
        let d = DeviceId::from_idx(i);
        let Some(v) = g.speaker(d) else { continue };
        let s = &g.speakers[v.idx()];
        let speaker = match s.kind {
            SpeakerKind::Device(x) => f.device_name(x),
            SpeakerKind::DsfSystem(z) => format!("{} (DSF system)", f.zones()[z.idx()].name),
        };
        out.write_record([f.device_name(d).as_str(), &s.asn.to_string(), &speaker])?;
    }
    out.flush()
}

/// XML-escape text.
fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn graphml(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        w,
        r#"<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">"#
    )?;
    for (id, on, name, ty) in [
        ("d0", "node", "role", "string"),
        ("d1", "node", "zone", "string"),
        ("d2", "node", "model", "string"),
        ("d3", "edge", "links", "int"),
        ("d4", "edge", "capacity_gbps", "double"),
        ("d5", "edge", "kind", "string"),
        ("d6", "edge", "length_m", "double"),
    ] {
        writeln!(
            w,
            r#"  <key id="{id}" for="{on}" attr.name="{name}" attr.type="{ty}"/>"#
        )?;
    }
    writeln!(
        w,
        r#"  <graph id="{}" edgedefault="undirected">"#,
        xml(f.name())
    )?;
    for i in 0..f.devices().len() {
        let d = DeviceId::from_idx(i);
        let dev = f.device(d);
        writeln!(
            w,
            r#"    <node id="{}"><data key="d0">{}</data><data key="d1">{}</data><data key="d2">{}</data></node>"#,
            xml(&f.device_name(d)),
            dev.role.as_str(),
            xml(&f.zones()[dev.zone.idx()].name),
            xml(&f.hardware(d).name)
        )?;
    }
    for b in f.bundles() {
        let first = f.link(b.first);
        writeln!(
            w,
            r#"    <edge source="{}" target="{}"><data key="d3">{}</data><data key="d4">{}</data><data key="d5">{}</data><data key="d6">{}</data></edge>"#,
            xml(&f.device_name(b.a)),
            xml(&f.device_name(b.b)),
            b.count,
            f64::from(first.capacity_mbps) / 1000.0 * f64::from(b.count),
            first.kind.as_str(),
            first.length_m()
        )?;
    }
    writeln!(w, "  </graph>")?;
    writeln!(w, "</graphml>")
}

fn nodelink(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    // NetworkX's node-link format (`networkx.node_link_graph(data, edges="links")`).
    write!(
        w,
        r#"{{"directed": false, "multigraph": false, "graph": {{"name": {}}}, "nodes": ["#,
        json(f.name())
    )?;
    for i in 0..f.devices().len() {
        let d = DeviceId::from_idx(i);
        let dev = f.device(d);
        if i > 0 {
            write!(w, ",")?;
        }
        write!(
            w,
            "\n{{\"id\": {}, \"role\": \"{}\", \"zone\": {}, \"model\": {}}}",
            json(&f.device_name(d)),
            dev.role.as_str(),
            json(&f.zones()[dev.zone.idx()].name),
            json(&f.hardware(d).name)
        )?;
    }
    write!(w, "], \"links\": [")?;
    for (i, b) in f.bundles().iter().enumerate() {
        let first = f.link(b.first);
        if i > 0 {
            write!(w, ",")?;
        }
        write!(
            w,
            "\n{{\"source\": {}, \"target\": {}, \"links\": {}, \"capacity_gbps\": {}, \"kind\": \"{}\", \"length_m\": {}}}",
            json(&f.device_name(b.a)),
            json(&f.device_name(b.b)),
            b.count,
            f64::from(first.capacity_mbps) / 1000.0 * f64::from(b.count),
            first.kind.as_str(),
            first.length_m()
        )?;
    }
    writeln!(w, "]}}")
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn ipplan(f: &Fabric, p: &AddressPlan, w: &mut dyn Write) -> io::Result<()> {
    let mut out = table(w, &["kind", "name", "prefix"])?;
    for (i, r) in f.regions().iter().enumerate() {
        let id = aifabric_model::RegionId::from_idx(i);
        out.write_record(["region", &r.name, &p.region_aggregate(id).to_string()])?;
    }
    for (i, z) in f.zones().iter().enumerate() {
        let id = aifabric_model::ZoneId::from_idx(i);
        out.write_record(["zone", &z.name, &p.zone_aggregate(f, id).to_string()])?;
    }
    for i in 0..f.devices().len() {
        let d = DeviceId::from_idx(i);
        let role = f.device(d).role;
        if matches!(role, Role::Rtsw | Role::Rdsw) {
            let z = &f.zones()[f.device(d).zone.idx()].name;
            out.write_record([
                "rack",
                &format!("{z}.rack{}", Ordinal(f.device(d).rack())),
                &p.rack_prefix(f, d).to_string(),
            ])?;
        }
        if role.is_switch() {
            out.write_record(["loopback", &f.device_name(d), &p.loopback(d).to_string()])?;
        }
    }
    for (i, link) in f.links().iter().enumerate() {
        if link.kind == PortKind::Ethernet {
            let l = LinkId::from_idx(i);
            let name = format!(
                "{}--{}#{}",
                f.device_name(link.a),
                f.device_name(link.b),
                l.get() - f.bundles()[link.bundle.idx()].first.get()
            );
            out.write_record(["link", &name, &p.link(l).0.to_string()])?;
        }
    }
    out.flush()
}

/// Node of the DOT overview: a zone, or a BAG plane.
fn overview_node(f: &Fabric, d: DeviceId) -> String {
    let dev = f.device(d);
    let z = &f.zones()[dev.zone.idx()].name;
    if matches!(dev.role, Role::Bag | Role::Hub) {
        format!("{z}.plane{}", Ordinal(dev.plane()))
    } else {
        z.clone()
    }
}

fn dot(f: &Fabric, w: &mut dyn Write) -> io::Result<()> {
    use std::collections::BTreeMap;
    // Capacity between overview nodes (zones and BAG planes), Gb/s per direction.
    let mut edges: BTreeMap<(String, String), f64> = BTreeMap::new();
    let mut gpus: BTreeMap<String, u64> = BTreeMap::new();
    for link in f.links() {
        let (a, b) = (overview_node(f, link.a), overview_node(f, link.b));
        if f.device(link.a).role == Role::Gpu {
            *gpus.entry(a).or_default() += 1;
            continue;
        }
        if a == b {
            continue;
        }
        let key = if a < b { (a, b) } else { (b, a) };
        *edges.entry(key).or_default() += f64::from(link.capacity_mbps) / 1000.0;
    }
    writeln!(w, "graph \"{}\" {{", f.name().replace('"', "'"))?;
    writeln!(w, "  rankdir=BT; node [shape=box];")?;
    let mut nodes: Vec<String> = edges
        .keys()
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .chain(gpus.keys().cloned())
        .collect();
    nodes.sort();
    nodes.dedup();
    for n in &nodes {
        match gpus.get(n) {
            Some(g) => writeln!(w, "  \"{n}\" [label=\"{n}\\n{g} GPUs\"];")?,
            None => writeln!(w, "  \"{n}\";")?,
        }
    }
    for ((a, b), gbps) in &edges {
        writeln!(
            w,
            "  \"{a}\" -- \"{b}\" [label=\"{:.1} Tb/s\"];",
            gbps / 1000.0
        )?;
    }
    writeln!(w, "}}")
}
