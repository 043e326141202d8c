//! k-ary fat tree against its closed forms (Al-Fares et al. 2008).

use aifabric_capacity::capacity_report;
use aifabric_model::*;
use proptest::prelude::*;

fn fat_tree(k: u32) -> Fabric {
    aifabric_spec::build_str("ft.yaml", &aifabric_fixtures::fat_tree(k)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn counts_and_bisection_match_al_fares(half in 1u32..12) {
        let k = 2 * half;
        let f = fat_tree(k);
        let n = |r| f.devices_with_role(r).count() as u32;
        let switches = n(Role::Rtsw) + n(Role::Ctsw) + n(Role::Atsw);
        prop_assert_eq!(switches, 5 * k * k / 4);
        prop_assert_eq!(n(Role::Gpu), k * k * k / 4);
        prop_assert_eq!(n(Role::Atsw), (k / 2) * (k / 2));
        // Every switch uses exactly k ports.
        for d in f.devices_with_role(Role::Ctsw).chain(f.devices_with_role(Role::Rtsw)) {
            prop_assert_eq!(f.incident(d).len() as u32, k);
        }
        let r = capacity_report(&f, &FailureMask::none(&f));
        let b = r.zones[0].bisection.clone().unwrap();
        // Full bisection: half the hosts (k^3/8) at 400G each.
        prop_assert_eq!(b.bisection_gbps, f64::from(k * k * k / 8) * 400.0);
        prop_assert!(r.tiers.iter().all(|t| t.oversubscription == Some(1.0)));
    }
}

#[test]
fn losing_core_switches_cuts_the_bisection_by_their_share() {
    // k = 8: 16 core switches carry all cross-pod traffic; the bisection's cross-half traffic
    // is k^3/8 = 64 hosts' worth and needs all of them. Failing 4 of 16 cores leaves 12/16.
    let f = fat_tree(8);
    let mut m = FailureMask::none(&f);
    for c in f.devices_with_role(Role::Atsw).take(4) {
        m.fail_device(c);
    }
    let b = capacity_report(&f, &m).zones[0].bisection.clone().unwrap();
    assert_eq!(b.bisection_gbps, 64.0 * 400.0 * 12.0 / 16.0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Oversubscribed per tier (htsim's wiring): A = `tor_uplinks` aggregation switches per
    /// pod, A x `agg_uplinks` cores; the edge tier is (k/2) : A, the aggregation tier
    /// (k/2) : `agg_uplinks`; every core links to one aggregation switch per pod.
    #[test]
    fn oversubscribed_trees_have_their_ratios(half in 1u32..9, tor in 1u32..9, agg in 1u32..9) {
        let k = 2 * half;
        let (tor, agg) = (tor.min(half), agg.min(half));
        let yaml = format!(
            "name: os\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            fat_tree: {{k: {k}, tor_uplinks: {tor}, agg_uplinks: {agg}}}\n"
        );
        let f = aifabric_spec::build_str("os.yaml", &yaml).unwrap();
        let n = |r| f.devices_with_role(r).count() as u32;
        prop_assert_eq!(n(Role::Gpu), k * half * half);
        prop_assert_eq!(n(Role::Rtsw), k * half);
        prop_assert_eq!(n(Role::Ctsw), k * tor);
        prop_assert_eq!(n(Role::Atsw), tor * agg);
        for c in f.devices_with_role(Role::Atsw) {
            prop_assert_eq!(f.incident(c).len() as u32, k);
        }
        let r = capacity_report(&f, &FailureMask::none(&f));
        let ratio = |role: &str| r.tiers.iter().find(|t| t.name == role).and_then(|t| t.oversubscription);
        prop_assert_eq!(ratio("rtsw"), Some(f64::from(half) / f64::from(tor)));
        prop_assert_eq!(ratio("ctsw"), Some(f64::from(half) / f64::from(agg)));
    }
}
