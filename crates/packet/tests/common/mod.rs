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

/// A single-stage DSF zone scaled down: `rdsw` interface nodes of `gpus` 400G GPUs each
/// (one EDSW), `fdsw` fabric nodes, `links` parallel 106.25G links from each interface
/// node to each fabric node.
pub fn dsf_l1(rdsw: u32, fdsw: u32, links: u32, gpus: u32) -> Fabric {
    let yaml = format!(
        "name: dsf\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            dsf_l1: {{rdsw: {rdsw}, fdsw: {fdsw}, edsw: 1, links_per_fdsw: {links}, gpus_per_rdsw: {gpus}}}\n"
    );
    aifabric_spec::build_str("dsf.yaml", &yaml).expect("the DSF zone builds")
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
