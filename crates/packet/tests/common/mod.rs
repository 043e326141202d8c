//! Shared helpers of the packet engine's tests.
#![allow(dead_code)]

use aifabric_dataplane::{Net, NetParams};
use aifabric_model::{DeviceId, Fabric, Role, Scenario};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_workload::traffic::{Start, TmFlow, TrafficMatrix};

/// A k-ary fat tree of 100 Gb/s links (htsim's regression topology kind).
pub fn fat_tree(k: u32) -> Fabric {
    let yaml = format!(
        "name: ft{k}\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            fat_tree: {{k: {k}, link_speed_gbps: 100, gpu_model: nic-100g, switch_model: tomahawk3-100g}}\n"
    );
    aifabric_spec::build_str("ft.yaml", &yaml).expect("the fat tree builds")
}

/// A k-ary fat tree of 100 Gb/s links, oversubscribed as htsim's topology files do it:
/// `tor` aggregation switches per pod (edge tier k/2 : `tor`), `agg` uplinks each (k/2 :
/// `agg` above).
pub fn fat_tree_oversubscribed(k: u32, tor: u32, agg: u32) -> Fabric {
    let yaml = format!(
        "name: ft{k}os\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            fat_tree: {{k: {k}, link_speed_gbps: 100, gpu_model: nic-100g, switch_model: tomahawk3-100g, tor_uplinks: {tor}, agg_uplinks: {agg}}}\n"
    );
    aifabric_spec::build_str("ft.yaml", &yaml).expect("the fat tree builds")
}

pub fn net(f: &Fabric) -> Net<'_> {
    Net::new(
        f,
        &Scenario::healthy(f),
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        NetParams::default(),
    )
}

pub fn gpus(f: &Fabric) -> Vec<DeviceId> {
    f.devices_with_role(Role::Gpu).collect()
}

pub fn matrix(nodes: u32, flows: &[(u32, u32, u64)]) -> TrafficMatrix {
    TrafficMatrix {
        nodes,
        flows: flows
            .iter()
            .enumerate()
            .map(|(i, &(src, dst, bytes))| TmFlow {
                id: i as u64 + 1,
                src,
                dst,
                bytes,
                start: Start::AtPs(0),
                done_trigger: None,
                recv_trigger: None,
            })
            .collect(),
        triggers: Default::default(),
    }
}
