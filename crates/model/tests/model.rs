//! Model invariants that do not need a spec.

use aifabric_model::*;

#[test]
fn records_stay_small() {
    // 200k+ devices and 2M+ links must fit in ~100 MB: keep the records compact.
    assert!(
        std::mem::size_of::<Device>() <= 32,
        "{}",
        std::mem::size_of::<Device>()
    );
    assert!(
        std::mem::size_of::<Link>() <= 28,
        "{}",
        std::mem::size_of::<Link>()
    );
}

/// Two racks of 2 GPUs under one spine, by hand.
fn tiny() -> (Fabric, Vec<DeviceId>) {
    let mut b = FabricBuilder::new("tiny", Catalog::builtin());
    let r = b.add_region("r");
    let bl = b.add_building("b", r, 1);
    let z = b.add_zone("r.b.z", ZoneKind::Roce, r, Some(bl));
    let pd = b.add_power_domain("pd", Some(bl));
    let cat = b.catalog().clone();
    let (gpu, tor) = (
        cat.find("gpu-400g").unwrap(),
        cat.find("minipack2").unwrap(),
    );
    let dev = |role, hw, index, rack| Device {
        role,
        hw,
        zone: z,
        index,
        plane: None,
        hall: NonMaxU16::new(0),
        pod: NonMaxU32::new(0),
        rack,
        power_domain: pd,
    };
    let spine = b.add_device(dev(Role::Ctsw, tor, 0, None));
    let mut ids = vec![spine];
    for rack in 0..2 {
        let t = b.add_device(dev(Role::Rtsw, tor, rack, NonMaxU32::new(rack)));
        ids.push(t);
        for g in 0..2 {
            let gid = b.add_device(dev(Role::Gpu, gpu, g, NonMaxU32::new(rack)));
            b.add_bundle(gid, t, 1, PortKind::Host, 400_000, 3.0, 0, false)
                .unwrap();
            ids.push(gid);
        }
        b.add_bundle(t, spine, 2, PortKind::Ethernet, 400_000, 30.0, 0, false)
            .unwrap();
    }
    (b.finish(), ids)
}

#[test]
fn adjacency_and_masks() {
    let (f, ids) = tiny();
    let spine = ids[0];
    assert_eq!(f.incident(spine).len(), 4);
    let healthy = FailureMask::none(&f);
    assert_eq!(
        f.capacity_toward_mbps(spine, Role::Rtsw, &healthy),
        1_600_000
    );
    let mut m = FailureMask::none(&f);
    m.fail_link(f.incident(spine)[0]);
    assert_eq!(f.capacity_toward_mbps(spine, Role::Rtsw, &m), 1_200_000);
    // A failed device takes its links down with it.
    let mut m = FailureMask::none(&f);
    m.fail_device(ids[1]);
    assert_eq!(f.capacity_toward_mbps(spine, Role::Rtsw, &m), 800_000);
    assert_eq!(f.neighbors(spine, &m).count(), 2);
    assert_eq!(f.device_name(ids[2]), "r.b.z.rack0.gpu0");
    assert_eq!(f.find_device("r.b.z.rtsw1"), Some(ids[4]));
    // Ports on a device are numbered uniquely within the group.
    let ports: Vec<u16> = f
        .incident(spine)
        .iter()
        .map(|&l| f.link(l).b_port)
        .collect();
    assert_eq!(ports, vec![0, 1, 2, 3]);
}

/// Every link's selector selects that link alone, and a link set to another speed carries
/// it (the network as built).
#[test]
fn link_selectors_select_their_link_and_speeds_can_be_set() {
    let (mut f, ids) = tiny();
    for i in 0..f.links().len() {
        let l = LinkId::from_idx(i);
        let name = f.link_selector(l);
        assert_eq!(f.select(&name), Ok(Selection::Links(vec![l])), "{name}");
    }
    let up = f.incident(ids[0])[1];
    assert_eq!(f.link_selector(up), "r.b.z.rtsw0--r.b.z.ctsw0#1");
    f.set_link_capacity(up, 200_000);
    let healthy = FailureMask::none(&f);
    assert_eq!(
        f.capacity_toward_mbps(ids[0], Role::Rtsw, &healthy),
        1_400_000
    );
}

#[test]
fn port_budgets_are_enforced() {
    let mut b = FabricBuilder::new("t", Catalog::builtin());
    let r = b.add_region("r");
    let z = b.add_zone("z", ZoneKind::Bag, r, None);
    let pd = b.add_power_domain("pd", None);
    let hw = b.catalog().find("minipack2").unwrap();
    let d = |index| Device {
        role: Role::Rtsw,
        hw,
        zone: z,
        index,
        plane: None,
        hall: None,
        pod: None,
        rack: None,
        power_domain: pd,
    };
    let (a, c) = (b.add_device(d(0)), b.add_device(d(1)));
    // Minipack2: 64 x 400G. 64 fit, the 65th does not.
    b.add_bundle(a, c, 64, PortKind::Ethernet, 400_000, 1.0, 0, false)
        .unwrap();
    let e = b
        .add_bundle(a, c, 1, PortKind::Ethernet, 400_000, 1.0, 0, false)
        .unwrap_err();
    assert!(matches!(e, PortError::Exhausted { .. }), "{e}");
    // No 800G mode on Minipack2.
    let x = b.add_device(d(2));
    let y = b.add_device(d(3));
    let e = b
        .add_bundle(x, y, 1, PortKind::Ethernet, 800_000, 1.0, 0, false)
        .unwrap_err();
    assert!(matches!(e, PortError::UnsupportedSpeed { .. }), "{e}");
    // No fabric ports at all.
    let e = b
        .add_bundle(x, y, 1, PortKind::Fabric, 106_250, 1.0, 0, false)
        .unwrap_err();
    assert!(matches!(e, PortError::NoSuchPorts { .. }), "{e}");
}

#[test]
fn optics_by_reach() {
    assert_eq!(Optic::for_length(2.0), Optic::Dac);
    assert_eq!(Optic::for_length(100.0), Optic::Sr);
    assert_eq!(Optic::for_length(400.0), Optic::Dr);
    assert_eq!(Optic::for_length(2_000.0), Optic::Fr);
    assert_eq!(Optic::for_length(10_000.0), Optic::Lr);
    assert_eq!(Optic::for_length(40_000.0), Optic::Er);
    assert_eq!(Optic::for_length(80_000.0), Optic::Zr);
}
