//! The drift of a NetBox export from its plan: none for the plan's own export; exactly the
//! damage done to it otherwise (cables removed, two cables swapped across BAG planes, a
//! speed changed, a device left out, an unknown device and an extra cable added), with the
//! capacity lost as the closed form gives it (the planned capacity of the links missing or
//! miswired); located errors for bad files.

use super::{damage, export, lines, plan, put};
use aifabric_inventory::{drift, lldp, read_dir, Finding};
use aifabric_model::{DeviceId, LinkId, Role};
use aifabric_report::export::interface_name;

fn count(r: &aifabric_inventory::DriftReport, kind: &str) -> u64 {
    r.counts.get(kind).copied().unwrap_or(0)
}

#[test]
fn the_plans_own_export_has_no_drift() {
    let f = plan();
    let dir = tempfile::tempdir().unwrap();
    export(&f, dir.path());
    let inv = read_dir(dir.path()).unwrap();
    let r = drift(&f, &inv, interface_name);
    assert!(r.clean(), "{:?}", &r.findings[..r.findings.len().min(5)]);
    assert_eq!(r.cables, f.links().len() as u64);
    assert!(r.tiers.is_empty() && r.groups.is_empty());
}

#[test]
fn the_damage_done_is_exactly_what_drift_names() {
    let f = plan();
    let dir = tempfile::tempdir().unwrap();
    export(&f, dir.path());
    let links: Vec<LinkId> = (0..f.links().len()).map(LinkId::from_idx).collect();
    // Two links to BAG switches of two planes (a planar design: each spine switch in one
    // plane): swap their BAG ends, each cable lands in the other plane.
    let to_bag = |l: &LinkId| f.device(f.link(*l).b).role == Role::Bag;
    let l1 = *links.iter().find(|l| to_bag(l)).expect("a link to the BAG");
    let a1 = f.link(l1).a;
    let p1 = f.device(f.link(l1).b).plane();
    let l2 = *links
        .iter()
        .find(|l| to_bag(l) && f.device(f.link(**l).b).plane() != p1)
        .expect("a link to another plane");
    // Two GPU links to remove, one rack-switch link whose speed changes.
    let gpu_links: Vec<LinkId> = links
        .iter()
        .copied()
        .filter(|l| {
            f.device(f.link(*l).a).role == Role::Gpu || f.device(f.link(*l).b).role == Role::Gpu
        })
        .collect();
    let (l3, l4) = (gpu_links[0], gpu_links[5]);
    let l5 = *links
        .iter()
        .find(|l| ![l1, l2, l3, l4].contains(l) && !gpu_links.contains(l) && !to_bag(l))
        .expect("a switch link");
    // cables.csv: line k + 1 is link k (after the header).
    let mut cables = lines(dir.path(), "cables.csv");
    let cols = |s: &str| s.split(',').map(str::to_owned).collect::<Vec<_>>();
    let (mut c1, mut c2) = (cols(&cables[l1.idx() + 1]), cols(&cables[l2.idx() + 1]));
    for k in 3..6 {
        std::mem::swap(&mut c1[k], &mut c2[k]);
    }
    cables[l1.idx() + 1] = c1.join(",");
    cables[l2.idx() + 1] = c2.join(",");
    cables.push("ghost1,dcim.interface,eth0,ghost2,dcim.interface,eth0,smf,planned,10,m,".into());
    let removed: Vec<String> = [l3, l4]
        .iter()
        .map(|l| cables[l.idx() + 1].clone())
        .collect();
    cables.retain(|c| !removed.contains(c));
    put(dir.path(), "cables.csv", &cables);
    // interfaces.csv: l5's side A at half its speed.
    let (d5, if5) = (
        f.device_name(f.link(l5).a),
        interface_name(&f, l5, f.link(l5).a),
    );
    let mut ifaces = lines(dir.path(), "interfaces.csv");
    let planned_kbps = u64::from(f.link(l5).capacity_mbps) * 1000;
    for line in ifaces.iter_mut() {
        if line.starts_with(&format!("{d5},{if5},")) {
            *line = line.replace(
                &format!(",{planned_kbps},"),
                &format!(",{},", planned_kbps / 2),
            );
        }
    }
    put(dir.path(), "interfaces.csv", &ifaces);
    // devices.csv: the last GPU left out, an unknown switch added.
    let gone = (0..f.devices().len())
        .map(DeviceId::from_idx)
        .rfind(|&d| f.device(d).role == Role::Gpu)
        .unwrap();
    let mut devices = lines(dir.path(), "devices.csv");
    devices.retain(|d| !d.starts_with(&format!("{},", f.device_name(gone))));
    devices.push("mystery-switch,rtsw,acme,x,active,,,,".into());
    put(dir.path(), "devices.csv", &devices);

    let r = drift(&f, &read_dir(dir.path()).unwrap(), interface_name);
    assert_eq!(count(&r, "missing_cable"), 2, "{:?}", r.counts);
    assert_eq!(
        count(&r, "miswired"),
        4,
        "two cables, each end on a planned link"
    );
    assert_eq!(count(&r, "wrong_speed"), 1);
    assert_eq!(count(&r, "missing_device"), 1);
    assert_eq!(count(&r, "unexpected_device"), 1);
    assert_eq!(count(&r, "extra_cable"), 1);
    assert_eq!(r.findings.len(), 10, "{:#?}", r.findings);
    // The missing cables are l3 and l4; the swapped ones went to another plane.
    let missing: Vec<&str> = r
        .findings
        .iter()
        .filter_map(|x| match x {
            Finding::MissingCable { a, .. } => Some(a.device.as_str()),
            _ => None,
        })
        .collect();
    let a_names: Vec<String> = [l3, l4]
        .iter()
        .map(|l| f.device_name(f.link(*l).a))
        .collect();
    assert_eq!(missing, a_names);
    assert!(r.findings.iter().any(|x| matches!(x,
        Finding::Miswired { how, at, .. } if how == "wrong plane" && at.device == f.device_name(a1))));
    assert!(r.findings.iter().any(|x| matches!(x,
        Finding::WrongSpeed { found_gbps, planned_gbps, .. } if (found_gbps * 2.0 - planned_gbps).abs() < 1e-9)));
    // Capacity lost: the four links missing or miswired, at their planned capacity.
    let gbps = |l: LinkId| f64::from(f.link(l).capacity_mbps) / 1e3;
    let want: f64 = [l1, l2, l3, l4].iter().map(|&l| gbps(l)).sum();
    let got: f64 = r.tiers.iter().map(|t| t.lost_gbps).sum();
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    // The BAG ends of the swapped cables are grouped by their plane.
    let planes: Vec<Option<u16>> = r
        .groups
        .iter()
        .map(|g| g.plane)
        .filter(Option::is_some)
        .collect();
    assert!(planes.len() >= 2, "{:?}", r.groups);
    let grouped: f64 = r.groups.iter().map(|g| g.lost_gbps).sum();
    assert!((grouped - want).abs() < 1e-9, "{grouped} vs {want}");
}

#[test]
fn bad_inventory_files_are_located() {
    let f = plan();
    let dir = tempfile::tempdir().unwrap();
    export(&f, dir.path());
    let mut ifaces = lines(dir.path(), "interfaces.csv");
    ifaces[3] = ifaces[3].replacen(",400000000,", ",fast,", 1);
    put(dir.path(), "interfaces.csv", &ifaces);
    let e = read_dir(dir.path()).unwrap_err();
    assert!(
        e.file.ends_with("interfaces.csv") && e.line == 4 && e.column == 4,
        "{e}"
    );
    assert!(e.to_string().contains("speed `fast`"), "{e}");
    std::fs::remove_file(dir.path().join("cables.csv")).unwrap();
    export(&f, dir.path());
    let mut cables = lines(dir.path(), "cables.csv");
    cables[0] = cables[0].replace("side_b_name", "side_b_port");
    put(dir.path(), "cables.csv", &cables);
    let e = read_dir(dir.path()).unwrap_err();
    assert!(e.to_string().contains("no column `side_b_name`"), "{e}");
    std::fs::remove_file(dir.path().join("devices.csv")).unwrap();
    let e = read_dir(dir.path()).unwrap_err();
    assert!(
        e.file.ends_with("devices.csv") && e.to_string().contains("cannot read"),
        "{e}"
    );
}

/// LLDP's view of the same damaged cabling gives the same drift as NetBox's: each cable
/// reported by the switch at each end (GPUs run no LLDP: their cables from the switch's side
/// only), so most cables are seen twice.
#[test]
fn lldp_neighbours_agree_with_netbox_on_the_same_damage() {
    let f = plan();
    let dir = tempfile::tempdir().unwrap();
    export(&f, dir.path());
    let mut cables = lines(dir.path(), "cables.csv");
    // Damage: two cables gone, two swapped at their B ends.
    damage(&mut cables);
    let cols = |s: &str| s.split(',').map(str::to_owned).collect::<Vec<_>>();
    put(dir.path(), "cables.csv", &cables);
    let netbox = read_dir(dir.path()).unwrap();
    // The same cabling as neighbour tables.
    let is_gpu = |d: &str| {
        (0..f.devices().len())
            .map(DeviceId::from_idx)
            .any(|x| f.device_name(x) == d && f.device(x).role == Role::Gpu)
    };
    let mut rows = vec!["local_device,local_port,remote_device,remote_port".to_owned()];
    for c in &cables[1..] {
        let v = cols(c);
        for (l, r) in [
            ((&v[0], &v[2]), (&v[3], &v[5])),
            ((&v[3], &v[5]), (&v[0], &v[2])),
        ] {
            if !is_gpu(l.0) {
                rows.push(format!("{},{},{},{}", l.0, l.1, r.0, r.1));
            }
        }
    }
    let file = dir.path().join("lldp.csv");
    std::fs::write(&file, rows.join("\n") + "\n").unwrap();
    let seen = lldp::read_csv(&[file.as_path()]).unwrap();
    assert_eq!(seen.len(), cables.len() - 1, "each cable once");
    let by_lldp = netbox.clone().with_cables(seen, "lldp.csv");
    let (a, b) = (
        drift(&f, &netbox, interface_name),
        drift(&f, &by_lldp, interface_name),
    );
    assert_eq!(a.counts, b.counts);
    assert_eq!(a.counts.get("missing_cable"), Some(&2));
    assert_eq!(a.tiers, b.tiers);
    let ends = |r: &aifabric_inventory::DriftReport| {
        let mut v: Vec<String> = r
            .findings
            .iter()
            .map(|x| match x {
                Finding::Miswired { at, found_peer, .. } => format!("{at} {found_peer}"),
                other => format!("{other:?}"),
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(ends(&a), ends(&b));
}

/// Reading tells its meter how far it is: never backwards, and all the files' bytes at the
/// end.
#[test]
fn reading_reports_its_bytes_to_the_end() {
    let f = plan();
    let dir = tempfile::tempdir().unwrap();
    export(&f, dir.path());
    let total = aifabric_inventory::bytes_to_read(Some(dir.path()), &[]);
    let sizes: u64 = [
        "devices.csv",
        "interfaces.csv",
        "ip-addresses.csv",
        "cables.csv",
    ]
    .iter()
    .map(|n| std::fs::metadata(dir.path().join(n)).unwrap().len())
    .sum();
    assert_eq!(total, sizes);
    let seen = std::cell::RefCell::new(Vec::new());
    let report = |read: u64, of: u64| seen.borrow_mut().push((read, of));
    let mut meter = aifabric_inventory::Meter::new(total, &report);
    aifabric_inventory::read_dir_metered(dir.path(), &mut meter).unwrap();
    let seen = seen.into_inner();
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
    assert_eq!(seen.last(), Some(&(total, total)));
}

/// A line card left out: eight consecutive ports of one switch without their cables. The
/// drift by switch puts that switch first, its ports as one run, with the hint.
#[test]
fn a_line_card_left_out_is_named_at_its_switch() {
    let f = aifabric_spec::load("nsf-l2").expect("built in");
    let dir = tempfile::tempdir().unwrap();
    export(&f, dir.path());
    // The switch with the most links, and its first eight ports by number.
    let sw = (0..f.devices().len())
        .map(DeviceId::from_idx)
        .filter(|&d| f.device(d).role != Role::Gpu)
        .max_by_key(|&d| f.incident(d).len())
        .unwrap();
    let name = f.device_name(sw);
    let mut ports: Vec<(u64, String)> = f
        .incident(sw)
        .iter()
        .map(|&l| {
            let p = interface_name(&f, l, sw);
            let n = p
                .trim_start_matches(|c: char| !c.is_ascii_digit())
                .parse()
                .unwrap();
            (n, p)
        })
        .collect();
    ports.sort();
    let card: Vec<&str> = ports[..8].iter().map(|p| p.1.as_str()).collect();
    let on_card = |line: &str| {
        let v: Vec<&str> = line.split(',').collect();
        (v[0] == name && card.contains(&v[2])) || (v[3] == name && card.contains(&v[5]))
    };
    let mut cables = lines(dir.path(), "cables.csv");
    let before = cables.len();
    cables.retain(|c| !on_card(c));
    assert_eq!(before - cables.len(), 8);
    put(dir.path(), "cables.csv", &cables);
    let r = drift(&f, &read_dir(dir.path()).unwrap(), interface_name);
    assert_eq!(count(&r, "missing_cable"), 8);
    let first = &r.switches[0];
    assert_eq!(first.device, name, "{:?}", r.switches);
    assert_eq!(first.findings.get("missing_cable"), Some(&8));
    let (lo, hi) = (&ports[0].1, ports[7].0);
    assert_eq!(first.ports, format!("{lo}-{hi}"));
    let hint = first.hint.as_deref().expect("a line card's worth of ports");
    assert!(hint.starts_with("8 consecutive ports"), "{hint}");
    // Their far ends are switches too: each cable counts at both.
    let at_far: u64 = r.switches[1..]
        .iter()
        .map(|s| s.findings.get("missing_cable").copied().unwrap_or(0))
        .sum();
    assert_eq!(at_far, 8, "{:?}", r.switches);
}
