//! The fabric as FRRouting configuration: for every BGP router a `bgpd.conf` and a
//! `zebra.conf`, and `topology.json` (routers, ASNs, the prefixes they originate, and every
//! link with its interfaces and addresses), so a real routing stack can run the fabric in
//! network namespaces and its FIBs be compared with aifabric's routes (`aifabric lab`).
//!
//! What is written, and why:
//! - eBGP per link (RFC 7938 section 5.2.1): one `neighbor` per link on the link's /127 of the
//!   IPv6 plan, the peer's ASN from the same ASN plan as `routes`; `bgp router-id` set
//!   explicitly (the fabric is IPv6 only, so FRR has no IPv4 address to take one from);
//!   `bgp bestpath as-path multipath-relax` and `maximum-paths` (FRR's Debian build caps it
//!   at 256, `--enable-multipath=256`).
//! - The link-bandwidth extended community (draft-ietf-idr-link-bandwidth) by an outbound
//!   route-map: a rack switch sends its own rack prefix with each link's capacity
//!   (`cumulative`) or 1 per link (`multipaths`), every router re-advertises the sum over its
//!   multipaths (FRR's `set extcommunity bandwidth cumulative`), as aifabric's model does.
//!   FRR takes 1-25,600 (Mb/s); capacities are written in Gb/s (400 per 400G link): every
//!   value is scaled alike, so the ratios, and the weights, are unchanged. `none`: no
//!   community, plain ECMP over every link.
//! - Short timers (keepalive 3 s, hold 9 s, connect retry 2 s), so a restored link comes
//!   back in seconds rather than FRR's default 120 s connect retry.
//! - `zebra.conf`: the /127 of every link and the rack's /64 (on an interface the lab
//!   creates inside the rack switch's namespace, `rack`), and `no zebra nexthop kernel
//!   enable`: FRR 8.4 with kernel nexthop groups keeps stale groups after a link flap (fixed
//!   later upstream: FRR pull requests 13413 and 14080), classic multipath routes do not.
//!
//! A DSF zone is one BGP speaker across its interface nodes (the cell fabric is not BGP), so
//! it has no per-router configuration: such fabrics are refused with the reason.

use crate::export::interface_name;
use aifabric_model::{Fabric, LinkId, Role};
use aifabric_routing::addressing::{AddressPlan, PlanError};
use aifabric_routing::aggregation::Aggregation;
use aifabric_routing::bgp::{AsnPlan, BandwidthMode, BgpGraph, SoftDrain, SpeakerKind};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::{self, Write};

/// What the configuration follows: the same options as `routes`.
#[derive(Clone, Copy, Debug)]
pub struct FrrOptions {
    /// ASN plan.
    pub plan: AsnPlan,
    /// Link-bandwidth community mode.
    pub bandwidth: BandwidthMode,
    /// `maximum-paths`, capped at FRR's 256.
    pub max_paths: u32,
    /// How a soft drain is signalled: the `-DRAIN` route-maps `lab` applies to drained
    /// sessions add the graceful-shutdown community, or prepend the sender's ASN.
    pub soft_drain: SoftDrain,
    /// Zone aggregation at the zone's borders toward BAG: `unconditional`, or
    /// `conditional:1` (FRR's conditional advertisement; more is not expressible, see
    /// [`FrrError::Conditional`]), or none.
    pub aggregation: Option<Aggregation>,
}

/// Most multipaths FRR's Debian build takes (`--enable-multipath=256`).
pub const FRR_MAX_PATHS: u32 = 256;

/// Why a fabric has no FRR configuration.
#[derive(Debug, thiserror::Error)]
pub enum FrrError {
    /// The IPv6 plan cannot number it.
    #[error("{0}")]
    Plan(#[from] PlanError),
    /// A DSF zone: one BGP speaker over many switches.
    #[error(
        "{0} is a DSF zone: one BGP speaker over its interface nodes (the cell fabric between \
         them is not BGP), which no single FRR router stands for; export RoCE, NSF, fat-tree \
         and BAG fabrics"
    )]
    Dsf(String),
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// No file of that name in this export.
    #[error("no file {0} in the frr export")]
    NoFile(String),
    /// Conditional aggregation asked of FRR.
    #[error(
        "{0} aggregation cannot be configured in FRR: its conditional advertisement \
         (advertise-map with exist-map or non-exist-map) tests whether any route of the \
         condition is in the BGP table, so it can say \"at least one covered rack is \
         reachable\" (`conditional:1`, the same rule as `unconditional`) but not \"all of \
         them\" or \"at least N\" for N > 1; use --aggregation unconditional or \
         conditional:1"
    )]
    Conditional(String),
}

/// A zone's aggregate and the borders that make it.
#[derive(Clone, Debug, Serialize)]
pub struct ZoneAggregate {
    /// The zone.
    pub zone: String,
    /// Its /48.
    pub prefix: String,
    /// Its routers with a session to BAG: each advertises the /48 to BAG (FRR's
    /// `aggregate-address`, while at least one covered rack prefix is in its BGP table, with a
    /// discard route behind it) and keeps the zone's specifics from BAG.
    pub borders: Vec<String>,
}

/// One router of the export.
#[derive(Clone, Debug, Serialize)]
pub struct Router {
    /// Device name (also the FRR hostname).
    pub name: String,
    /// Role (`rtsw`, `ctsw`, ...).
    pub role: String,
    /// ASN.
    pub asn: u32,
    /// `bgp router-id`.
    pub router_id: String,
    /// Prefixes it originates (a rack switch: its rack's /64).
    pub originates: Vec<String>,
}

/// One end of a link.
#[derive(Clone, Debug, Serialize)]
pub struct End {
    /// Router.
    pub router: String,
    /// Interface (`eth<port>`).
    pub interface: String,
    /// Its address (the link's /127).
    pub address: String,
}

/// One link between two routers.
#[derive(Clone, Debug, Serialize)]
pub struct TopoLink {
    /// `a--b#k`, the `--fail` selector of this link.
    pub name: String,
    /// Ends.
    pub a: End,
    /// Ends.
    pub b: End,
    /// Capacity, Gb/s.
    pub capacity_gbps: u64,
    #[serde(skip)]
    id: LinkId,
}

impl TopoLink {
    /// The fabric link it stands for.
    pub fn link(&self) -> LinkId {
        self.id
    }
}

/// `topology.json`: what the lab builds namespaces and veth pairs from.
#[derive(Clone, Debug, Serialize)]
pub struct Topology {
    /// The contract's version (1), as every JSON document aifabric writes.
    pub schema_version: u32,
    /// The fabric.
    pub fabric: String,
    /// ASN plan.
    pub asn_plan: String,
    /// Link-bandwidth mode.
    pub bandwidth: String,
    /// Unit of the link-bandwidth values in the configuration.
    pub bandwidth_unit: &'static str,
    /// `maximum-paths` written.
    pub maximum_paths: u32,
    /// Soft drains (`gshut` or `prepend:N`), as the `-DRAIN` route-maps apply them.
    pub soft_drain: String,
    /// Routers, in device order.
    pub routers: Vec<Router>,
    /// Links between routers, in link order.
    pub links: Vec<TopoLink>,
    /// Zone aggregation (`unconditional`), or none.
    pub aggregation: Option<String>,
    /// The zones' aggregates, with aggregation.
    pub aggregates: Vec<ZoneAggregate>,
}

/// The routers and links of `f` under `opts`.
pub fn topology(f: &Fabric, opts: &FrrOptions) -> Result<Topology, FrrError> {
    match opts.aggregation {
        Some(Aggregation::Conditional { min: Some(1) })
        | Some(Aggregation::Unconditional)
        | None => {}
        Some(a) => return Err(FrrError::Conditional(a.to_string())),
    }
    let plan = AddressPlan::new(f)?;
    let g = BgpGraph::new(f, opts.plan);
    let mut routers = Vec::new();
    for (i, s) in g.speakers.iter().enumerate() {
        let d = match s.kind {
            SpeakerKind::Device(d) => d,
            SpeakerKind::DsfSystem(z) => {
                return Err(FrrError::Dsf(f.zones()[z.idx()].name.clone()))
            }
        };
        let role = f.device(d).role;
        let originates = if matches!(role, Role::Rtsw | Role::Rdsw) {
            vec![plan.rack_prefix(f, d).to_string()]
        } else {
            Vec::new()
        };
        routers.push(Router {
            name: f.device_name(d),
            role: role.as_str().to_owned(),
            asn: s.asn,
            // 10.0.0.0/8 numbered by speaker: unique, and never 0.0.0.0.
            router_id: std::net::Ipv4Addr::from(0x0a00_0000 | (i as u32 + 1)).to_string(),
            originates,
        });
    }
    let mut links = Vec::new();
    for s in 0..g.sessions.len() {
        for &l in g.links(aifabric_routing::bgp::SessionId::from_idx(s)) {
            let link = f.link(l);
            let (_, a, b) = plan.link(l);
            let b0 = f.bundles()[link.bundle.idx()].first;
            links.push(TopoLink {
                name: format!(
                    "{}--{}#{}",
                    f.device_name(link.a),
                    f.device_name(link.b),
                    l.get() - b0.get()
                ),
                a: End {
                    router: f.device_name(link.a),
                    interface: interface_name(f, l, link.a),
                    address: a.to_string(),
                },
                b: End {
                    router: f.device_name(link.b),
                    interface: interface_name(f, l, link.b),
                    address: b.to_string(),
                },
                capacity_gbps: u64::from(link.capacity_mbps) / 1000,
                id: l,
            });
        }
    }
    links.sort_by_key(|l| l.id);
    let mut aggregates = Vec::new();
    if opts.aggregation.is_some() {
        let is_bag =
            |d: aifabric_model::DeviceId| matches!(f.device(d).role, Role::Bag | Role::Hub);
        for (z, zone) in f.zones().iter().enumerate() {
            let zid = aifabric_model::ZoneId::from_idx(z);
            if zone.kind == aifabric_model::ZoneKind::Bag {
                continue;
            }
            let mut borders: Vec<String> = f
                .zone_devices(zid)
                .map(aifabric_model::DeviceId::new)
                .filter(|&d| {
                    !is_bag(d)
                        && f.incident(d).iter().any(|&l| {
                            let o = f.link(l).other(d);
                            is_bag(o) && f.device(o).zone != zid
                        })
                })
                .map(|d| f.device_name(d))
                .collect();
            borders.sort();
            if !borders.is_empty() {
                aggregates.push(ZoneAggregate {
                    zone: zone.name.clone(),
                    prefix: plan.zone_aggregate(f, zid).to_string(),
                    borders,
                });
            }
        }
    }
    Ok(Topology {
        aggregation: opts.aggregation.map(|a| a.to_string()),
        aggregates,
        schema_version: 1,
        fabric: f.name().to_owned(),
        asn_plan: opts.plan.to_string(),
        soft_drain: opts.soft_drain.to_string(),
        bandwidth: opts.bandwidth.to_string(),
        bandwidth_unit: "Gb/s",
        maximum_paths: opts.max_paths.min(FRR_MAX_PATHS),
        routers,
        links,
    })
}

/// The files of the FRR export whose `topology.json` reads `topology_json`: that file and its
/// routers' two each. A folder's `*.bgpd.conf` that its `topology.json` does not list is not
/// an export's file (a user's own), and an export never replaces it. `None` when the text is
/// not an export's topology.
pub fn files_of(topology_json: &str) -> Option<Vec<String>> {
    let v: serde_json::Value = serde_json::from_str(topology_json).ok()?;
    let mut names = vec!["topology.json".to_owned()];
    for r in v.get("routers")?.as_array()? {
        let name = r.get("name")?.as_str()?;
        names.push(format!("{name}.bgpd.conf"));
        names.push(format!("{name}.zebra.conf"));
    }
    Some(names)
}

/// The files of the export of `t`: `topology.json`, then each router's two.
pub fn file_names(t: &Topology) -> Vec<String> {
    let mut v = vec!["topology.json".to_owned()];
    for r in &t.routers {
        v.push(format!("{}.bgpd.conf", r.name));
        v.push(format!("{}.zebra.conf", r.name));
    }
    v
}

/// Write file `name` of the export of `t`.
pub fn write(t: &Topology, name: &str, w: &mut dyn Write) -> Result<(), FrrError> {
    if name == "topology.json" {
        serde_json::to_writer_pretty(&mut *w, t).map_err(io::Error::other)?;
        return Ok(w.write_all(b"\n")?);
    }
    let (router, kind) = name
        .strip_suffix(".bgpd.conf")
        .map(|r| (r, "bgpd"))
        .or_else(|| name.strip_suffix(".zebra.conf").map(|r| (r, "zebra")))
        .ok_or_else(|| FrrError::NoFile(name.to_owned()))?;
    let r = t
        .routers
        .iter()
        .find(|r| r.name == router)
        .ok_or_else(|| FrrError::NoFile(name.to_owned()))?;
    let text = if kind == "bgpd" {
        bgpd(t, r)
    } else {
        zebra(t, r)
    };
    Ok(w.write_all(text.as_bytes())?)
}

/// This router's side of each of its links: (its end, the peer's end, the peer, capacity).
fn ends<'t>(t: &'t Topology, r: &Router) -> Vec<(&'t End, &'t End, &'t Router, u64)> {
    let peer = |name: &str| {
        t.routers
            .iter()
            .find(|x| x.name == name)
            .expect("both ends of a session's link are routers")
    };
    t.links
        .iter()
        .filter_map(|l| {
            if l.a.router == r.name {
                Some((&l.a, &l.b, peer(&l.b.router), l.capacity_gbps))
            } else if l.b.router == r.name {
                Some((&l.b, &l.a, peer(&l.a.router), l.capacity_gbps))
            } else {
                None
            }
        })
        .collect()
}

fn bgpd(t: &Topology, r: &Router) -> String {
    let mut s = String::new();
    let ends = ends(t, r);
    let _ = writeln!(
        s,
        "! aifabric export --format frr: {}, router {} ({}, ASN {})\n\
         ! link bandwidth: {} in {} (FRR takes 1-25600; ratios unchanged)\n\
         hostname {}\n\
         log timestamp precision 3\n!",
        t.fabric, r.name, r.role, r.asn, t.bandwidth, t.bandwidth_unit, r.name
    );
    let origin = !r.originates.is_empty();
    let mode = t.bandwidth.as_str();
    if mode != "none" && origin {
        for (k, p) in r.originates.iter().enumerate() {
            let _ = writeln!(s, "ipv6 prefix-list OWN seq {} permit {p}", 5 * (k + 1));
        }
        let _ = writeln!(s, "!");
    }
    // A border of an aggregated zone: the /48 to BAG, the zone's specifics kept inside.
    let aggregate = t.aggregates.iter().find(|a| a.borders.contains(&r.name));
    let conditional = t.aggregation.as_deref() == Some("conditional:1");
    if let Some(a) = aggregate {
        let _ = writeln!(
            s,
            "ipv6 prefix-list ZONE-SPECIFICS seq 5 deny {} ge 49\n\
             ipv6 prefix-list ZONE-SPECIFICS seq 10 permit any\n!",
            a.prefix
        );
        if conditional {
            // FRR's conditional advertisement: the /48 (a `network`, kept from the zone's
            // own routers) goes to BAG while some covered rack /64 is in the BGP table (the
            // exist-map matches any one of them). No discard route behind it (static routes
            // need staticd): traffic for a rack the border cannot reach finds no route and
            // is dropped all the same.
            let _ = writeln!(
                s,
                "ipv6 prefix-list ZONE-AGGREGATE seq 5 permit {p}\n\
                 ipv6 prefix-list ZONE-COVERED seq 5 permit {p} ge 64 le 64\n!\n\
                 route-map ZONE-AGGREGATE permit 10\n match ipv6 address prefix-list ZONE-AGGREGATE\n!\n\
                 route-map ZONE-COVERED permit 10\n match ipv6 address prefix-list ZONE-COVERED\n!\n\
                 ipv6 prefix-list NO-AGGREGATE seq 5 deny {p}\n\
                 ipv6 prefix-list NO-AGGREGATE seq 10 permit any\n!",
                p = a.prefix
            );
        }
    }
    // RFC 8326: a route carrying the graceful-shutdown community is used only when nothing
    // else is left, wherever it arrives.
    let _ = writeln!(
        s,
        "bgp community-list standard GSHUT seq 5 permit graceful-shutdown\n!\n\
         route-map IN permit 10\n match community GSHUT\n set local-preference 0\n!\n\
         route-map IN permit 20\n!"
    );
    // What a soft-drained session sends: the graceful-shutdown community, or this router's
    // ASN prepended.
    let drain = match t.soft_drain.strip_prefix("prepend:") {
        Some(n) => {
            let n: usize = n.parse().unwrap_or(1);
            format!(
                " set as-path prepend {}",
                vec![r.asn.to_string(); n].join(" ")
            )
        }
        None => " set community graceful-shutdown additive".to_owned(),
    };
    // Outbound per link capacity (a rack switch's own prefix carries its link's value),
    // each with its drained twin.
    let mut caps: Vec<u64> = ends.iter().map(|e| e.3).collect();
    caps.sort_unstable();
    caps.dedup();
    for &c in &caps {
        let own = if mode == "multipaths" { 1 } else { c.max(1) };
        for drained in [false, true] {
            let Some(name) = out_map(mode, c, drained) else {
                continue;
            };
            let extra = if drained {
                format!("\n{drain}")
            } else {
                String::new()
            };
            if mode == "none" {
                let _ = writeln!(s, "route-map {name} permit 20{extra}\n!");
                continue;
            }
            if origin {
                let _ = writeln!(
                    s,
                    "route-map {name} permit 10\n match ipv6 address prefix-list OWN\n \
                     set extcommunity bandwidth {own}{extra}\n!"
                );
            }
            let _ = writeln!(
                s,
                "route-map {name} permit 20\n set extcommunity bandwidth cumulative{extra}\n!"
            );
        }
    }
    let _ = writeln!(
        s,
        "router bgp {}\n bgp router-id {}\n no bgp ebgp-requires-policy\n \
         no bgp default ipv4-unicast\n no bgp network import-check\n \
         bgp bestpath as-path multipath-relax\n timers bgp 3 9",
        r.asn, r.router_id
    );
    for (_, peer_end, peer, _) in &ends {
        let _ = writeln!(
            s,
            " neighbor {a} remote-as {asn}\n neighbor {a} description {p} {i}\n \
             neighbor {a} timers connect 2",
            a = peer_end.address,
            asn = peer.asn,
            p = peer.name,
            i = peer_end.interface
        );
    }
    if conditional && aggregate.is_some() {
        // The condition is polled: every 5 s instead of FRR's default 60.
        let _ = writeln!(s, " bgp conditional-advertisement timer 5");
    }
    let _ = writeln!(s, " !\n address-family ipv6 unicast");
    for p in &r.originates {
        let _ = writeln!(s, "  network {p}");
    }
    match aggregate {
        Some(a) if conditional => {
            let _ = writeln!(s, "  network {}", a.prefix);
        }
        Some(a) => {
            let _ = writeln!(s, "  aggregate-address {}", a.prefix);
        }
        None => {}
    }
    let _ = writeln!(s, "  maximum-paths {}", t.maximum_paths);
    for (_, peer_end, peer, cap) in &ends {
        let _ = writeln!(s, "  neighbor {} activate", peer_end.address);
        let _ = writeln!(s, "  neighbor {} route-map IN in", peer_end.address);
        if aggregate.is_some() && matches!(peer.role.as_str(), "bag" | "hub") {
            let _ = writeln!(
                s,
                "  neighbor {} prefix-list ZONE-SPECIFICS out",
                peer_end.address
            );
            if conditional {
                let _ = writeln!(
                    s,
                    "  neighbor {} advertise-map ZONE-AGGREGATE exist-map ZONE-COVERED",
                    peer_end.address
                );
            }
        } else if conditional && aggregate.is_some() {
            let _ = writeln!(
                s,
                "  neighbor {} prefix-list NO-AGGREGATE out",
                peer_end.address
            );
        }
        if let Some(m) = out_map(mode, *cap, false) {
            let _ = writeln!(s, "  neighbor {} route-map {m} out", peer_end.address);
        }
    }
    let _ = writeln!(s, " exit-address-family\nexit\n!");
    s
}

/// The outbound route-map of a session on a link of `capacity_gbps` under link-bandwidth
/// `mode` (`cumulative`, `multipaths`, `none`), soft-drained or not: `LB-<Gb/s>` and its
/// twin `LB-<Gb/s>-DRAIN`; without link bandwidth, none and `OUT-DRAIN`.
pub fn out_map(mode: &str, capacity_gbps: u64, drained: bool) -> Option<String> {
    match (mode, drained) {
        ("none", false) => None,
        ("none", true) => Some("OUT-DRAIN".to_owned()),
        (_, false) => Some(format!("LB-{capacity_gbps}")),
        (_, true) => Some(format!("LB-{capacity_gbps}-DRAIN")),
    }
}

fn zebra(t: &Topology, r: &Router) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "! aifabric export --format frr: {}, router {}\n\
         hostname {}\n\
         ! FRR 8.4 keeps stale kernel nexthop groups after a link flap; classic multipath\n\
         ! routes (RTA_MULTIPATH) do not.\n\
         no zebra nexthop kernel enable\n!",
        t.fabric, r.name, r.name
    );
    for (mine, _, _, _) in ends(t, r) {
        let _ = writeln!(
            s,
            "interface {}\n ipv6 address {}/127\nexit\n!",
            mine.interface, mine.address
        );
    }
    for p in &r.originates {
        // The rack's /64 on the `rack` interface the lab creates (first host address).
        let net: aifabric_routing::addressing::Ipv6Net =
            p.parse().expect("a prefix this module printed");
        let host = std::net::Ipv6Addr::from(u128::from(net.network()) | 1);
        let _ = writeln!(s, "interface rack\n ipv6 address {host}/64\nexit\n!");
    }
    s
}
