//! What the crate's unit tests share: htsim's fat trees and their healthy network.

use aifabric_dataplane::{Net, NetParams};
use aifabric_model::{Fabric, Scenario};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};

/// A k-ary fat tree of 100 Gb/s links (htsim's regression topology kind).
pub(crate) fn fat_tree(k: u32) -> Fabric {
    let yaml = format!(
        "name: ft{k}\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            fat_tree: {{k: {k}, link_speed_gbps: 100, gpu_model: nic-100g, switch_model: tomahawk3-100g}}\n"
    );
    aifabric_spec::build_str("ft.yaml", &yaml).expect("the fat tree builds")
}

/// Two regions over BAG, an NSF zone and a DSF zone (the fixtures' shared spec).
pub(crate) fn two_regions() -> Fabric {
    aifabric_spec::build_str(
        "t.yaml",
        aifabric_fixtures::specs::TWO_REGIONS_NSF_DSF_SHARED,
    )
    .expect("the fixture builds")
}

/// `f`'s healthy network, routed as the CLI routes it by default.
pub(crate) fn healthy(f: &Fabric) -> Net<'_> {
    Net::new(
        f,
        &Scenario::healthy(f),
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        NetParams::default(),
    )
}
