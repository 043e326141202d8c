//! `Net::unconnected_cause`: two devices no built link joins get their cause named; devices
//! that built links join get none, whatever fails.

use aifabric_dataplane::{Net, NetParams};
use aifabric_model::{Fabric, Scenario};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};

const ZONE: &str = "roce: {ai_zones: 1, racks_per_zone: 2, gpus_per_rack: 2, ctsw_per_zone: 2, atsw: 2, ctsw_links_per_atsw: 1, atsw_uplinks: 2}";

/// Region `east` of two buildings, with or without a 2-plane BAG, and region `west` of one
/// more building and no BAG.
fn fabric(bag: bool) -> Fabric {
    let bag = if bag { "    bag: {planes: 2}\n" } else { "" };
    let yaml = format!(
        "name: t
regions:
  - name: east
{bag}    buildings:
      - {{name: dc1, zones: [{{name: a, {ZONE}}}]}}
      - {{name: dc2, zones: [{{name: b, {ZONE}}}]}}
  - name: west
    buildings:
      - {{name: dc1, zones: [{{name: c, {ZONE}}}]}}
"
    );
    aifabric_spec::build_str("t.yaml", &yaml).unwrap()
}

fn gpu(f: &Fabric, name: &str) -> aifabric_model::DeviceId {
    f.find_device(name).unwrap()
}

fn cause(f: &Fabric, s: &Scenario, a: &str, b: &str) -> Option<String> {
    let net = Net::new(
        f,
        s,
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        NetParams::default(),
    );
    net.unconnected_cause(gpu(f, a), gpu(f, b))
}

#[test]
fn a_zone_without_bag_and_an_unjoined_region_are_named() {
    let f = fabric(false);
    let healthy = Scenario::healthy(&f);
    let why = cause(
        &f,
        &healthy,
        "east.dc1.a.rack0.gpu0",
        "east.dc2.b.rack0.gpu0",
    )
    .unwrap();
    assert!(
        why.contains("zone `east.dc1.a` has no link out of itself"),
        "{why}"
    );
    assert!(why.contains("region `east` has no BAG layer"), "{why}");
    // Inside one zone, built links join every pair.
    assert_eq!(
        cause(
            &f,
            &healthy,
            "east.dc1.a.rack0.gpu0",
            "east.dc1.a.rack1.gpu1"
        ),
        None
    );

    let f = fabric(true);
    let healthy = Scenario::healthy(&f);
    // Under the BAG, the ATSWs join the two buildings: nothing to name, even with the whole
    // BAG failed (a failure is the scenario's, not the spec's).
    assert_eq!(
        cause(
            &f,
            &healthy,
            "east.dc1.a.rack0.gpu0",
            "east.dc2.b.rack0.gpu0"
        ),
        None
    );
    let bag_down = Scenario::from_selectors(&f, &["east.bag".to_owned()], &[], &[]).unwrap();
    assert_eq!(
        cause(
            &f,
            &bag_down,
            "east.dc1.a.rack0.gpu0",
            "east.dc2.b.rack0.gpu0"
        ),
        None
    );
    // West has no BAG: its zone has no way out, named before the regions.
    let why = cause(
        &f,
        &healthy,
        "east.dc1.a.rack0.gpu0",
        "west.dc1.c.rack0.gpu0",
    )
    .unwrap();
    assert!(
        why.contains("zone `west.dc1.c` has no link out of itself"),
        "{why}"
    );
}
