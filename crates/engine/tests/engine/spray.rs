//! Sprayed flows stored hop by hop and shared (the engine's memo of frontiers, routing
//! classes and interned splits) against the definition: every flow spread on its own with
//! [`Net::path`], its whole (resource, share) list written out, and the naive event loop.

use crate::fluid::naive;
use aifabric_dataplane::PathWs;
use aifabric_dataplane::{Forwarding, Lb, Net, NetParams, ResourceId};
use aifabric_engine::{traffic, FlowSet};
use aifabric_model::{DeviceId, Fabric, LinkId, Role, Scenario};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_workload::traffic::{Start, TmFlow, TrafficMatrix};
use proptest::prelude::*;
use std::sync::OnceLock;

/// Two regions under BAG, with NSF and DSF buildings: routing classes per NSF rack and per
/// DSF zone, hops inside zones, across BAG and across regions.
fn fabric() -> &'static Fabric {
    static F: OnceLock<Fabric> = OnceLock::new();
    F.get_or_init(|| {
        aifabric_spec::build_str(
            "t.yaml",
            aifabric_fixtures::specs::TWO_REGIONS_NSF_DSF_SPLIT,
        )
        .unwrap()
    })
}

type Case = (Vec<u32>, Vec<(usize, usize, u32, u32)>, u64);

fn cases() -> impl Strategy<Value = Case> {
    let f = fabric();
    let (nl, ng) = (
        f.links().len() as u32,
        f.devices_with_role(Role::Gpu).count(),
    );
    (
        prop::collection::vec(0..nl, 0..6),
        prop::collection::vec((0..ng, 0..ng, 1u32..5, 0u32..3), 1..30),
        0u64..4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Same reachability, and every flow's completion time within rounding, whatever links
    /// fail (routes and UCMP weights then differ between destinations of one zone).
    #[test]
    fn shared_hops_equal_each_flow_spread_on_its_own((failed, spec, seed) in cases()) {
        let f = fabric();
        let mut s = Scenario::healthy(f);
        for l in failed {
            s.failed.fail_link(LinkId::new(l));
        }
        // One GPU per scale-up domain: every flow between two GPUs crosses the network.
        let params = NetParams { scale_up_gpus: 1, ..NetParams::default() };
        let net = Net::new(f, &s, AsnPlan::Rfc7938, BgpConfig::default(), params);
        let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
        let tm = TrafficMatrix {
            nodes: gpus.len() as u32,
            flows: spec
                .iter()
                .enumerate()
                .filter(|(_, x)| x.0 != x.1)
                .map(|(i, &(a, b, mb, wave))| TmFlow {
                    id: i as u64,
                    src: a as u32,
                    dst: b as u32,
                    bytes: u64::from(mb) << 20,
                    start: Start::AtPs(u64::from(wave) * 3_000_000),
                    done_trigger: None,
                    recv_trigger: None,
                })
                .collect(),
            triggers: Default::default(),
        };
        let got = traffic::run_exact(&net, &tm, &gpus, Lb::Spray(None), seed);

        // The definition: each flow's own spreading, all of it.
        let routes = Forwarding::new(&net, tm.flows.iter().map(|x| gpus[x.dst as usize])).unwrap();
        let mut flows = FlowSet::new();
        let (mut bytes, mut starts, mut latency) = (Vec::new(), Vec::new(), Vec::new());
        let mut reachable = true;
        let mut ws = PathWs::default();
        for x in tm.flows.iter().filter(|x| x.src != x.dst) {
            let (a, b) = (gpus[x.src as usize], gpus[x.dst as usize]);
            let r = net.dest_speaker(b).and_then(|sp| routes.get(sp));
            let mut uses = Vec::new();
            match net.path(r, a, b, 0, Lb::Spray(None), seed, &mut ws, &mut uses) {
                Ok(lat) if uses.iter().all(|u| !net.is_dead(ResourceId::new(u.0))) => {
                    flows.push(&uses);
                    bytes.push(x.bytes as f64);
                    starts.push(match x.start {
                        Start::AtPs(ps) => ps as f64 * 1e-12,
                        Start::Trigger(_) => unreachable!("no triggers here"),
                    });
                    latency.push(lat);
                }
                _ => reachable = false,
            }
        }
        prop_assert_eq!(got.is_ok(), reachable, "{:?}", got.as_ref().err());
        let Ok(got) = got else { return Ok(()) };
        let caps: Vec<f64> = (0..net.resources()).map(|r| net.capacity_bps(ResourceId::new(r))).collect();
        let end = naive(&caps, &flows, &bytes, &starts);
        for (i, (&e, &st)) in end.iter().zip(&starts).enumerate() {
            let want = e + latency[i] - st;
            let have = got.fct_s[i];
            prop_assert!(
                (want - have).abs() <= 1e-9 * want.max(1e-6),
                "flow {i}: {have} s, alone {want} s"
            );
        }
    }
}

/// Flows between GPUs of one DSF zone take the same path whatever the mode (cells are
/// sprayed in the zone), so they are counted as load-balancing free, and give the same
/// completion times under `ecmp` and `spray`; a flow leaving the zone is not.
#[test]
fn flows_inside_one_dsf_zone_do_not_depend_on_the_mode() {
    let f = fabric();
    let params = NetParams {
        scale_up_gpus: 1,
        ..NetParams::default()
    };
    let net = Net::new(
        f,
        &Scenario::healthy(f),
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        params,
    );
    let gpus: Vec<DeviceId> = f.devices_with_role(Role::Gpu).collect();
    let in_dsf: Vec<u32> = (0..gpus.len() as u32)
        .filter(|&i| f.device_name(gpus[i as usize]).starts_with("a.d.d."))
        .collect();
    assert!(in_dsf.len() >= 4, "{in_dsf:?}");
    let flow = |id: u64, src: u32, dst: u32| TmFlow {
        id,
        src,
        dst,
        bytes: 1 << 20,
        start: Start::AtPs(0),
        done_trigger: None,
        recv_trigger: None,
    };
    let inside = TrafficMatrix {
        nodes: gpus.len() as u32,
        flows: vec![flow(1, in_dsf[0], in_dsf[3]), flow(2, in_dsf[1], in_dsf[2])],
        triggers: Default::default(),
    };
    let e = traffic::run(&net, &inside, &gpus, Lb::Ecmp, 1).unwrap();
    let s = traffic::run(&net, &inside, &gpus, Lb::Spray(None), 1).unwrap();
    assert_eq!(e.lb_free_flows, 2);
    assert_eq!(e.fct_s, s.fct_s);
    let outside = (0..gpus.len() as u32)
        .find(|i| !in_dsf.contains(i))
        .unwrap();
    let mixed = TrafficMatrix {
        flows: vec![flow(1, in_dsf[0], in_dsf[3]), flow(2, in_dsf[1], outside)],
        ..inside
    };
    assert_eq!(
        traffic::run(&net, &mixed, &gpus, Lb::Ecmp, 1)
            .unwrap()
            .lb_free_flows,
        1
    );
}
