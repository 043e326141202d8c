//! The IPv6 addressing plan: unique, nested, deterministic.

use aifabric_model::*;
use aifabric_routing::addressing::{AddressPlan, Ipv6Net};
use aifabric_routing::fib::{find_prefix, prefixes};
use proptest::prelude::*;
use std::collections::HashSet;

#[test]
fn prometheus_rack_prefixes_are_unique_and_nest_in_zone_and_region() {
    let f = aifabric_spec::load("prometheus").unwrap();
    let plan = AddressPlan::new(&f).unwrap();
    let mut seen = HashSet::new();
    for p in prefixes(&f) {
        let net = plan.rack_prefix(&f, p.rack_switch);
        assert_eq!(net.prefix_len(), 64);
        assert_eq!(net, net.trunc(), "host bits set in {net}");
        assert!(seen.insert(net), "duplicate {net}");
        let zone = f.device(p.rack_switch).zone;
        let za = plan.zone_aggregate(&f, zone);
        let ra = plan.region_aggregate(f.zones()[zone.idx()].region);
        assert!(
            za.contains(&net) && ra.contains(&za),
            "{net} in {za} in {ra}"
        );
        assert_eq!(p.ipv6.as_deref(), Some(net.to_string().as_str()));
    }
    assert_eq!(seen.len(), 10 * 512 + 2 * 498);
    // Zone aggregates of different zones do not overlap.
    let aggs: Vec<Ipv6Net> = (0..f.zones().len() as u32)
        .map(|z| plan.zone_aggregate(&f, ZoneId::new(z)))
        .collect();
    for (i, a) in aggs.iter().enumerate() {
        for b in &aggs[i + 1..] {
            assert!(!a.contains(b) && !b.contains(a));
        }
    }
}

#[test]
fn links_get_a_127_and_devices_a_loopback() {
    let f = aifabric_spec::load("dsf-l1-zone").unwrap();
    let plan = AddressPlan::new(&f).unwrap();
    let mut addrs = HashSet::new();
    for l in 0..f.links().len() as u32 {
        let (net, a, b) = plan.link(LinkId::new(l));
        assert_eq!(net.prefix_len(), 127);
        assert_eq!(net.network(), a);
        assert!(net.contains(&a));
        assert!(net.contains(&b));
        assert!(addrs.insert(a) && addrs.insert(b));
    }
    let lo: HashSet<_> = (0..f.devices().len() as u32)
        .map(|d| plan.loopback(DeviceId::new(d)))
        .collect();
    assert_eq!(lo.len(), f.devices().len());
}

#[test]
fn prefixes_are_found_by_name_address_or_switch() {
    let f = aifabric_spec::load("nsf-l2").unwrap();
    let by_name = find_prefix(&f, "east.dc1.nsf.rack3").unwrap();
    let ip = by_name.ipv6.clone().unwrap();
    assert_eq!(find_prefix(&f, &ip).unwrap(), by_name);
    assert_eq!(find_prefix(&f, "east.dc1.nsf.rtsw3").unwrap(), by_name);
    assert!(find_prefix(&f, "fd00:a1:ff:3::/64").is_none());
    // An address inside the /64 names it too.
    let inside = ip.replace("::/64", "::1/64");
    assert_ne!(inside, ip);
    assert_eq!(find_prefix(&f, &inside).unwrap(), by_name);
}

#[test]
fn too_many_zones_for_the_plan_is_an_error() {
    let zones: String = (0..257)
        .map(|i| format!("          - name: z{i}\n            fat_tree: {{k: 2}}\n"))
        .collect();
    let yaml = format!("name: big\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n{zones}");
    let f = aifabric_spec::build_str("big.yaml", &yaml).unwrap();
    let e = AddressPlan::new(&f).unwrap_err();
    assert!(e.to_string().contains("more than 256 zones"), "{e}");
    // Without a plan, prefixes still work, without addresses.
    assert!(prefixes(&f).iter().all(|p| p.ipv6.is_none()));
}

proptest! {
    #[test]
    fn prefix_text_round_trips(bits in any::<u128>(), len in 0u8..=128) {
        let text = format!("{}/{len}", std::net::Ipv6Addr::from(bits));
        let net: Ipv6Net = text.parse().unwrap();
        prop_assert_eq!(net.to_string().parse::<Ipv6Net>().unwrap(), net);
        prop_assert!(net.contains(&net));
        // Truncated, it prints as the network address as std prints it, then the length.
        let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
        let network = std::net::Ipv6Addr::from(bits & mask);
        prop_assert_eq!(net.trunc().to_string(), format!("{network}/{len}"));
    }
}
