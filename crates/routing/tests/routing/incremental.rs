//! Incremental updates of the whole forwarding state equal a recomputation from scratch.

use aifabric_model::*;
use aifabric_routing::bgp::*;
use proptest::prelude::*;

const TWO_REGIONS: &str = aifabric_fixtures::specs::TWO_REGIONS_NSF_DSF_SHARED;

fn same(g: &BgpGraph, x: &ForwardingState, y: &ForwardingState) -> Result<(), String> {
    for (k, (rx, ry)) in x.routes.iter().zip(&y.routes).enumerate() {
        for v in g.speaker_ids() {
            let (bx, by) = (rx.best[v.idx()], ry.best[v.idx()]);
            if bx != by {
                return Err(format!("origin {k}, {v}: best {bx:?} vs {by:?}"));
            }
            let mx = rx.multipaths(g, &x.states, v);
            let my = ry.multipaths(g, &y.states, v);
            if mx != my {
                return Err(format!("origin {k}, {v}: multipaths {mx:?} vs {my:?}"));
            }
        }
    }
    Ok(())
}

fn scenario(f: &Fabric, links: &[LinkId], soft: &[LinkId]) -> Scenario {
    let mut s = Scenario::healthy(f);
    for &l in links {
        s.failed.fail_link(l);
    }
    for &l in soft {
        s.drained_soft.fail_link(l);
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn incremental_equals_from_scratch(
        step1 in proptest::collection::vec(any::<u32>(), 0..6),
        step2 in proptest::collection::vec(any::<u32>(), 0..6),
        soft in proptest::collection::vec(any::<u32>(), 0..3),
        repair in any::<bool>(),
        unique in any::<bool>(),
        prepend in any::<bool>(),
    ) {
        let f = aifabric_spec::build_str("t.yaml", TWO_REGIONS).unwrap();
        // Unique ASNs allow valley paths: re-convergence after failures is less trivial.
        let plan = if unique { AsnPlan::Unique } else { AsnPlan::Rfc7938 };
        let g = BgpGraph::new(&f, plan);
        let cfg = BgpConfig {
            soft_drain: if prepend { SoftDrain::Prepend(2) } else { SoftDrain::GracefulShutdown },
            ..BgpConfig::default()
        };
        // Only Ethernet links carry BGP sessions.
        let eth: Vec<LinkId> = (0..f.links().len() as u32)
            .map(LinkId::new)
            .filter(|&l| f.link(l).kind == PortKind::Ethernet)
            .collect();
        let pick = |v: &[u32]| v.iter().map(|x| eth[*x as usize % eth.len()]).collect::<Vec<_>>();
        let (s1, s2, sd) = (pick(&step1), pick(&step2), pick(&soft));
        let mut inc = converge_all(&f, &g, session_states(&f, &g, &Scenario::healthy(&f)), &cfg).unwrap();
        let first = scenario(&f, &s1, &[]);
        inc.update(&g, session_states(&f, &g, &first)).unwrap();
        // Then more failures and soft drains, or a repair of the first step's links.
        let mut all = if repair { Vec::new() } else { s1.clone() };
        all.extend(&s2);
        let last = scenario(&f, &all, &sd);
        inc.update(&g, session_states(&f, &g, &last)).unwrap();
        let fresh = converge_all(&f, &g, session_states(&f, &g, &last), &cfg).unwrap();
        prop_assert_eq!(&inc.states, &fresh.states);
        // Both are stable BGP states.
        for r in inc.routes.iter().chain(&fresh.routes) {
            if let Err(e) = r.check_stable(&g, &inc.states) {
                prop_assert!(false, "not stable: {}", e);
            }
        }
        // Preference only worsens as a path grows (the graceful-shutdown community is
        // transitive, prepends lengthen), so the stable state is unique: the incremental one
        // must be the from-scratch one.
        if let Err(e) = same(&g, &inc, &fresh) {
            prop_assert!(false, "{}", e);
        }
    }
}

#[test]
fn nothing_changed_updates_nothing() {
    let f = aifabric_spec::build_str("t.yaml", TWO_REGIONS).unwrap();
    let g = BgpGraph::new(&f, AsnPlan::Rfc7938);
    let states = session_states(&f, &g, &Scenario::healthy(&f));
    let mut st = converge_all(&f, &g, states.clone(), &BgpConfig::default()).unwrap();
    assert_eq!(st.update(&g, states).unwrap(), 0);
    // One origin per NSF rack, one for the DSF zone.
    assert_eq!(st.origins.len(), 2 * 4 + 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `equal_per_link_at` (exact, integers) agrees with the float UCMP weights of
    /// `RoutesTo::weights` spread over each multipath's live links: equal per link exactly
    /// when every live link gets the same share; no choice with fewer than 2 live links.
    #[test]
    fn equal_per_link_agrees_with_the_weights(
        fail in proptest::collection::vec(any::<u32>(), 0..8),
        mode in 0..3u8,
    ) {
        let f = aifabric_spec::build_str("t.yaml", TWO_REGIONS).unwrap();
        let g = BgpGraph::new(&f, AsnPlan::Rfc7938);
        let cfg = BgpConfig {
            // Without the community (None) the missing-community fallback decides.
            bandwidth: [BandwidthMode::Cumulative, BandwidthMode::NumMultipaths, BandwidthMode::None]
                [mode as usize],
            ..BgpConfig::default()
        };
        let eth: Vec<LinkId> = (0..f.links().len() as u32)
            .map(LinkId::new)
            .filter(|&l| f.link(l).kind == PortKind::Ethernet)
            .collect();
        let down: Vec<LinkId> = fail.iter().map(|x| eth[*x as usize % eth.len()]).collect();
        let states = session_states(&f, &g, &scenario(&f, &down, &[]));
        let all = converge_all(&f, &g, states.clone(), &cfg).unwrap();
        let mut unequal = 0;
        for r in &all.routes {
            for v in g.speaker_ids() {
                let got = r.equal_per_link_at(&g, &states, v);
                let per_link: Vec<f64> = r
                    .multipaths(&g, &states, v)
                    .iter()
                    .zip(r.weights(&g, &states, v))
                    .flat_map(|(m, w)| {
                        let n = states[m.session.idx()].links;
                        std::iter::repeat_n(w / f64::from(n.max(1)), n as usize)
                    })
                    .collect();
                let want = if r.best[v.idx()].is_none() || per_link.len() < 2 {
                    None
                } else {
                    Some(per_link.iter().all(|&x| (x - per_link[0]).abs() <= 1e-12))
                };
                prop_assert_eq!(got, want, "speaker {}", v.idx());
                unequal += usize::from(got == Some(false));
            }
        }
        // Healthy, every split is equal.
        if fail.is_empty() {
            prop_assert_eq!(unequal, 0);
        }
    }
}
