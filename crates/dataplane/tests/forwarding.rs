//! The shared forwarding view against the control plane it caches: whatever order
//! destinations are asked in, eagerly or lazily, under any failures, each answer is the
//! converged state `aifabric-routing` computes for that destination on its own, and a flow's
//! spread over it does not depend on which destinations were asked before.

use aifabric_dataplane::{flow_hash, Forwarding, Lb, Net, NetParams, PathWs};
use aifabric_model::{DeviceId, Fabric, LinkId, Role, Scenario};
use aifabric_routing::bgp::{routes_to, AsnPlan, BgpConfig};
use proptest::prelude::*;
use std::sync::OnceLock;

/// Two regions under BAG, NSF and DSF buildings: destinations of several kinds.
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

fn net(failed: &[u32]) -> Net<'static> {
    let f = fabric();
    let mut s = Scenario::healthy(f);
    for &l in failed {
        s.failed.fail_link(LinkId::new(l));
    }
    let params = NetParams {
        scale_up_gpus: 1,
        ..NetParams::default()
    };
    Net::new(f, &s, AsnPlan::Rfc7938, BgpConfig::default(), params)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn each_destination_is_the_control_planes_own_answer(
        failed in prop::collection::vec(0..fabric().links().len() as u32, 0..5),
        picks in prop::collection::vec(0usize..1000, 1..8),
    ) {
        let n = net(&failed);
        let gpus: Vec<DeviceId> = fabric().devices_with_role(Role::Gpu).collect();
        let asked: Vec<DeviceId> = picks.iter().map(|&i| gpus[i % gpus.len()]).collect();
        // Half asked up front, the rest on demand.
        let (eager, lazy) = asked.split_at(asked.len() / 2);
        let fwd = Forwarding::new(&n, eager.iter().copied()).unwrap();
        for &g in eager {
            if let Some(s) = n.dest_speaker(g) {
                prop_assert!(fwd.get(s).is_some(), "asked up front, computed up front");
            }
        }
        for &g in lazy {
            let Some(s) = n.dest_speaker(g) else { continue };
            let own = routes_to(&n.g, &n.states, s, &n.cfg).unwrap();
            let cached = fwd.routes_to(&n, s).unwrap();
            prop_assert_eq!(&cached.best, &own.best);
            prop_assert!(std::ptr::eq(cached, fwd.get(s).unwrap()), "kept once computed");
        }
        // In speaker order, without repeats.
        let all = fwd.all();
        let mut speakers: Vec<_> = asked.iter().filter_map(|&g| n.dest_speaker(g)).collect();
        speakers.sort_unstable();
        speakers.dedup();
        prop_assert_eq!(all.len(), speakers.len());
        for (r, &s) in all.iter().zip(&speakers) {
            prop_assert!(std::ptr::eq(*r, fwd.get(s).unwrap()));
        }
    }

    /// A flow's spread reads the routes toward its destination only: the same from a view
    /// that computed just that destination as from one that computed every GPU's.
    #[test]
    fn a_flows_spread_does_not_depend_on_what_else_was_asked(
        failed in prop::collection::vec(0..fabric().links().len() as u32, 0..5),
        a in 0usize..1000, b in 0usize..1000, seed in 0u64..4,
        lb in prop::sample::select(vec![Lb::Ecmp, Lb::Ucmp, Lb::Spray(None)]),
    ) {
        let n = net(&failed);
        let gpus: Vec<DeviceId> = fabric().devices_with_role(Role::Gpu).collect();
        let (src, dst) = (gpus[a % gpus.len()], gpus[b % gpus.len()]);
        let one = Forwarding::new(&n, std::iter::once(dst)).unwrap();
        let every = Forwarding::new(&n, gpus.iter().copied()).unwrap();
        let spread = |fwd: &Forwarding| {
            let routes = n.dest_speaker(dst).and_then(|s| fwd.get(s));
            let mut out = Vec::new();
            let lat = n.path(routes, src, dst, flow_hash(src, dst, 0), lb, seed,
                             &mut PathWs::default(), &mut out);
            (lat.map(f64::to_bits), out.iter().map(|&(r, x)| (r, x.to_bits())).collect::<Vec<_>>())
        };
        prop_assert_eq!(spread(&one), spread(&every));
    }
}

/// A view is read with the `Net` it was built from: another scenario's routes would be wrong
/// for it, so asking with another `Net` (even one of the same fabric) is refused loudly.
#[test]
#[should_panic(expected = "the Net it was built from")]
fn a_view_refuses_another_net() {
    let (a, b) = (net(&[]), net(&[]));
    let fwd = Forwarding::empty(&a);
    let gpu = fabric().devices_with_role(Role::Gpu).next().unwrap();
    let s = b.dest_speaker(gpu).unwrap();
    let _ = fwd.routes_to(&b, s);
}
