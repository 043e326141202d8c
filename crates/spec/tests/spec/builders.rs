//! Exact counts of every builder against the published configurations (FBOSS DSF counts,
//! Llama 3 paper section 3.3.1, Meta's "Building Prometheus ..." post).

use aifabric_model::*;

fn count(f: &Fabric, role: Role) -> usize {
    f.devices_with_role(role).count()
}

/// Links of `d` whose other end has role `toward`.
fn links_toward(f: &Fabric, d: DeviceId, toward: Role) -> usize {
    f.incident(d)
        .iter()
        .filter(|&&l| f.device(f.link(l).other(d)).role == toward)
        .count()
}

#[test]
fn dsf_l2_zone_matches_fboss_counts() {
    let f = aifabric_spec::load("dsf-l2-zone").unwrap();
    assert_eq!(count(&f, Role::Rdsw), 512);
    assert_eq!(count(&f, Role::Edsw), 128);
    assert_eq!(count(&f, Role::Fdsw), 200);
    assert_eq!(count(&f, Role::Sdsw), 128);
    assert_eq!(count(&f, Role::Gpu), 18_432);
    for fd in f.devices_with_role(Role::Fdsw) {
        let down = links_toward(&f, fd, Role::Rdsw) + links_toward(&f, fd, Role::Edsw);
        assert_eq!(down, 512, "FDSW down links");
        assert_eq!(links_toward(&f, fd, Role::Sdsw), 512, "FDSW up links");
    }
    for sd in f.devices_with_role(Role::Sdsw) {
        assert_eq!(f.incident(sd).len(), 800, "SDSW links");
    }
    for r in f.devices_with_role(Role::Rdsw) {
        assert_eq!(links_toward(&f, r, Role::Fdsw), 160, "RDSW fabric links");
        assert_eq!(links_toward(&f, r, Role::Gpu), 36);
    }
    for e in f.devices_with_role(Role::Edsw) {
        assert_eq!(links_toward(&f, e, Role::Bag), 16, "EDSW uplinks");
    }
    // Every fabric link is one 106.25G SerDes lane.
    assert!(f
        .links()
        .iter()
        .filter(|l| l.kind == PortKind::Fabric)
        .all(|l| l.capacity_mbps == 106_250));
}

#[test]
fn dsf_l1_zone_and_variant() {
    let f = aifabric_spec::load("dsf-l1-zone").unwrap();
    assert_eq!(count(&f, Role::Rdsw), 128);
    assert_eq!(count(&f, Role::Fdsw), 40);
    assert_eq!(count(&f, Role::Edsw), 16);
    assert_eq!(count(&f, Role::Gpu), 4_608);
    for r in f.devices_with_role(Role::Rdsw) {
        assert_eq!(links_toward(&f, r, Role::Fdsw), 160);
    }
    // The 192/40/32 variant (FBOSS).
    let yaml = aifabric_fixtures::specs::DSF_L1_192_40_32;
    let f = aifabric_spec::build_str("v.yaml", yaml).unwrap();
    assert_eq!(count(&f, Role::Rdsw), 192);
    assert_eq!(count(&f, Role::Edsw), 32);
    assert_eq!(count(&f, Role::Gpu), 192 * 36);
    for fd in f.devices_with_role(Role::Fdsw) {
        assert_eq!(f.incident(fd).len(), (192 + 32) * 4);
    }
}

#[test]
fn nsf_counts_follow_the_planar_pod_design() {
    let f = aifabric_spec::load("nsf-l2").unwrap();
    let (pods, racks, gpus, planes, p, stsw, up) = (83, 6, 32, 8, 4, 16, 25);
    assert_eq!(count(&f, Role::Rtsw), pods * racks);
    assert_eq!(count(&f, Role::Gpu), pods * racks * gpus);
    assert_eq!(count(&f, Role::Ftsw), pods * planes);
    assert_eq!(count(&f, Role::Stsw), planes * stsw);
    for r in f.devices_with_role(Role::Rtsw) {
        assert_eq!(links_toward(&f, r, Role::Ftsw), planes * p);
    }
    // STSW i of every spine plane goes to BAG plane i, and only there.
    for s in f.devices_with_role(Role::Stsw) {
        let i = f.device(s).index as usize % stsw;
        assert_eq!(links_toward(&f, s, Role::Bag), up);
        for &l in f.incident(s) {
            let other = f.device(f.link(l).other(s));
            if other.role == Role::Bag {
                assert_eq!(other.plane().map(usize::from), Some(i));
            }
        }
    }
}

#[test]
fn roce_llama3_counts() {
    let f = aifabric_spec::load("llama3-24k").unwrap();
    assert_eq!(count(&f, Role::Gpu), 24_576);
    assert_eq!(count(&f, Role::Rtsw), 8 * 192);
    for r in f.devices_with_role(Role::Rtsw) {
        assert_eq!(links_toward(&f, r, Role::Gpu), 16);
        assert_eq!(links_toward(&f, r, Role::Ctsw), 16);
    }
}

#[test]
fn roce_zone_under_bag_goes_up_from_its_atsws() {
    // Llama 3's zone (`roce: {}`) under a 16-plane BAG of 2 chassis per plane: each of the 9
    // ATSWs takes the default 192 uplinks, 12 to each plane, round robin over its chassis.
    let yaml = "name: r\nregions:\n  - name: east\n    bag: {planes: 16, chassis_per_plane: 2}\n    buildings:\n      - name: dc1\n        zones:\n          - {name: llama, roce: {}}\n";
    let f = aifabric_spec::build_str("r.yaml", yaml).unwrap();
    assert_eq!(count(&f, Role::Atsw), 9);
    for a in f.devices_with_role(Role::Atsw) {
        assert_eq!(links_toward(&f, a, Role::Bag), 192, "ATSW uplinks");
        assert_eq!(
            links_toward(&f, a, Role::Ctsw),
            8 * 16 * 3,
            "ATSW downlinks"
        );
        let mut per_plane = [0usize; 16];
        for &l in f.incident(a) {
            let other = f.device(f.link(l).other(a));
            if other.role == Role::Bag {
                per_plane[usize::from(other.plane().unwrap())] += 1;
                assert_eq!(f.link(l).capacity_mbps, 400_000);
            }
        }
        assert_eq!(per_plane, [12; 16]);
    }
    // Every BAG chassis gets the same share: 9 x 12 / 2 = 54 links.
    for b in f.devices_with_role(Role::Bag) {
        assert_eq!(links_toward(&f, b, Role::Atsw), 54);
    }
    // Without a BAG, the same zone has no uplinks (as `llama3-24k`).
    let f = aifabric_spec::load("llama3-24k").unwrap();
    assert_eq!(count(&f, Role::Bag), 0);
}

#[test]
fn prometheus_is_two_regions_of_five_dsf_and_one_nsf_buildings() {
    let f = aifabric_spec::load("prometheus").unwrap();
    assert_eq!(f.regions().len(), 2);
    assert!(count(&f, Role::Gpu) >= 90_000);
    for (r, _) in f.regions().iter().enumerate() {
        let kinds: Vec<ZoneKind> = f
            .zones()
            .iter()
            .filter(|z| z.region.idx() == r)
            .map(|z| z.kind)
            .collect();
        assert!(kinds.iter().filter(|k| **k == ZoneKind::DsfL2).count() >= 5);
        assert!(kinds.contains(&ZoneKind::Nsf));
        assert!(kinds.contains(&ZoneKind::Bag));
    }
}

#[test]
fn bag_planar_and_spread_wiring() {
    let spec = |topology: &str| {
        format!(
            "name: t\nregions:\n  - name: a\n    bag: {{planes: 4, chassis_per_plane: 2}}\n  - name: b\n    bag: {{planes: 4, chassis_per_plane: 2}}\ninter_bag:\n  - between: [a, b]\n    topology: {topology}\n    links_per_plane: 8\n    length_m: 20000\n"
        )
    };
    let planar = aifabric_spec::build_str("t.yaml", &spec("planar")).unwrap();
    assert_eq!(planar.links().len(), 4 * 8);
    for l in planar.links() {
        assert_eq!(planar.device(l.a).plane(), planar.device(l.b).plane());
        assert_eq!(l.optic, Optic::Er);
        assert_ne!(l.flags & LINK_MACSEC, 0, "BAG-BAG links are MACsec");
    }
    let spread = aifabric_spec::build_str("t.yaml", &spec("spread")).unwrap();
    assert_eq!(spread.links().len(), 4 * 8);
    // Each plane of `a` reaches every plane of `b` with 8 / 4 = 2 links.
    let mut m = [[0; 4]; 4];
    for l in spread.links() {
        let plane = |d| usize::from(spread.device(d).plane().unwrap());
        m[plane(l.a)][plane(l.b)] += 1;
    }
    assert!(m.iter().flatten().all(|&c| c == 2));
    // Chassis stay balanced: each of the 8 chassis per side has 4 links.
    for c in spread.devices_with_role(Role::Bag) {
        assert_eq!(spread.incident(c).len(), 4);
    }
}

#[test]
fn hub_and_spoke_and_hyperports() {
    let yaml = aifabric_fixtures::specs::HUB_AND_SPOKE;
    let f = aifabric_spec::build_str("hs.yaml", yaml).unwrap();
    assert_eq!(count(&f, Role::Hub), 2);
    for h in f.devices_with_role(Role::Hub) {
        assert_eq!(
            links_toward(&f, h, Role::Bag),
            8,
            "4 links from each spoke plane"
        );
    }
    // 8 uplinks per EDSW over 2 planes = 4 per plane = one 4 x 800G hyperport.
    let hyper: Vec<&Bundle> = f.bundles().iter().filter(|b| b.hyperport).collect();
    assert_eq!(hyper.len(), 2 * 2);
    assert!(hyper.iter().all(|b| b.count == 4));
    let zr = f.links().iter().filter(|l| l.optic == Optic::Zr).count();
    assert_eq!(zr, 8, "the 80 km spoke uses coherent optics");
}

#[test]
fn device_names_are_unique_and_found() {
    let f = aifabric_spec::load("dsf-l1-zone").unwrap();
    let mut names: Vec<String> = (0..f.devices().len() as u32)
        .map(|i| f.device_name(DeviceId::new(i)))
        .collect();
    let probe = names[1234].clone();
    assert_eq!(f.find_device(&probe), Some(DeviceId::new(1234)));
    names.sort();
    names.dedup();
    assert_eq!(names.len(), f.devices().len());
}

#[test]
fn power_domains_group_racks() {
    let f = aifabric_spec::load("dsf-l1-zone").unwrap();
    // A rack's GPUs share their RDSW's power domain.
    for r in f.devices_with_role(Role::Rdsw) {
        let pd = f.device(r).power_domain;
        for &l in f.incident(r) {
            let o = f.device(f.link(l).other(r));
            if o.role == Role::Gpu {
                assert_eq!(o.power_domain, pd);
            }
        }
    }
    // Default domain size 4 over 128 RDSW + 56 other switches in one hall.
    assert_eq!(f.power_domains().len(), (128 + 16 + 40_usize).div_ceil(4));
}

/// Every job file under `examples/jobs` loads, with as many GPUs as it declares.
#[test]
fn every_example_job_loads() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/jobs");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("examples/jobs") {
        let path = e.expect("an entry").path();
        if path.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let it = aifabric_spec::job::load(path.to_str().unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(it.gpus > 0, "{}", path.display());
        n += 1;
    }
    assert!(n >= 6, "{n} example jobs");
}
