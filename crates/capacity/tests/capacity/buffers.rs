//! PFC headroom against its closed form, and a switch each side of its limit.

use aifabric_capacity::buffers::{buffer_report, headroom_bytes, longest_cable_m, BufferOptions};

/// `H = R x (2 L x 5 ns/m + t) + 2 MTU`: at 800 Gb/s (100 bytes per ns), 2 km of cable is
/// 20 us both ways, 2 MB; 10 km, 10 MB (the figures the Prometheus post's remark rests on).
#[test]
fn headroom_is_the_closed_form() {
    assert_eq!(headroom_bytes(800_000, 2_000.0, 0.0, 0), 2_000_000.0);
    assert_eq!(headroom_bytes(800_000, 10_000.0, 0.0, 0), 10_000_000.0);
    // 400 Gb/s is 50 bytes per ns: 100 m (1 us both ways) + 1 us response = 100 KB, plus
    // two 9,216 B frames.
    assert_eq!(
        headroom_bytes(400_000, 100.0, 1_000.0, 9216),
        100_000.0 + 18_432.0
    );
    // The longest cable inverts it.
    for (mbps, budget) in [(100_000, 1e6), (400_000, 5e6), (800_000, 12e9)] {
        let l = longest_cable_m(mbps, budget, 1_000.0, 9216);
        assert!((headroom_bytes(mbps, l, 1_000.0, 9216) - budget).abs() < 1e-3 * budget);
    }
    assert_eq!(longest_cable_m(100_000, 10_000.0, 1_000.0, 9216), 0.0);
}

fn fat_tree(spine_m: f64) -> aifabric_model::Fabric {
    let yaml = format!(
        "name: ft\nlengths: {{fabric_to_spine_m: {spine_m}}}\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            fat_tree: {{k: 4, link_speed_gbps: 100, gpu_model: nic-100g, switch_model: tomahawk3-100g}}\n"
    );
    aifabric_spec::build_str("ft.yaml", &yaml).unwrap()
}

/// A k = 4 tree of 64 MB switches: each core has 4 ports, all on spine cables, so it holds
/// its headroom while each port's share (16 MB) covers one cable's; 1% longer, it cannot,
/// and the report says how long a cable may be.
#[test]
fn a_core_switch_each_side_of_its_longest_cable() {
    let opts = BufferOptions::default();
    let limit = longest_cable_m(100_000, 64e6 / 4.0, 1_000.0, opts.mtu_bytes);
    // 16 MB per port at 12.5 bytes per ns: about 128 km.
    assert!((100_000.0..200_000.0).contains(&limit), "{limit}");
    let under = buffer_report(&fat_tree((limit * 0.99).floor()), &opts);
    assert_eq!(under.switches_over, 0);
    let over = buffer_report(&fat_tree((limit * 1.01).ceil()), &opts);
    // The 4 cores; the aggregation switches have 2 short downlinks and stay within.
    assert_eq!(over.switches_over, 4);
    let p = &over.problems[0];
    assert!(p.switch.contains("atsw"), "{p:?}");
    assert!(p.headroom_bytes > 64e6);
    assert!(
        p.fix.contains("deep-buffer") && p.fix.contains(&format!("{:.0} m", limit)),
        "{}",
        p.fix
    );
    // Two lossless priorities double the need: the fix is then to drop one.
    let two = BufferOptions {
        lossless_priorities: 2,
        ..opts
    };
    let r = buffer_report(&fat_tree((limit * 0.99).floor()), &two);
    assert_eq!(r.switches_over, 4);
    assert!(
        r.problems[0].fix.contains("1 lossless priority"),
        "{}",
        r.problems[0].fix
    );
}

/// Every built-in spec answers; the shallow NSF spine has the fullest buffer of `prometheus`.
#[test]
fn built_in_specs_hold_their_headroom() {
    for name in aifabric_spec::builtin::names() {
        if name == "htsim-k32" {
            continue;
        }
        let f = aifabric_spec::load(name).unwrap();
        let r = buffer_report(&f, &BufferOptions::default());
        assert_eq!(r.switches_over, 0, "{name}: {:?}", r.problems.first());
        assert!(!r.classes.is_empty(), "{name}");
    }
}

/// The seeds' two cases. Shallow-buffer NSF spines far from BAG: `nsf-l2` holds its
/// headroom 300 m from BAG and not 20 km away (each STSW's BAG uplinks then need about 10 MB
/// each of its 150 MB). BAG-to-BAG at 60 km: `prometheus`'s deep-buffer J3 chassis hold it,
/// the same chassis with 150 MB of on-chip buffer only do not.
#[test]
fn shallow_buffers_far_from_bag_and_on_60_km_bag_links_are_flagged() {
    let opts = BufferOptions::default();
    let nsf = aifabric_spec::builtin::get("nsf-l2").unwrap();
    assert!(nsf.contains("distance_to_bag_m: 300"));
    let near = aifabric_spec::build_str("nsf.yaml", nsf).unwrap();
    assert_eq!(buffer_report(&near, &opts).switches_over, 0);
    let far_text = nsf.replace("distance_to_bag_m: 300", "distance_to_bag_m: 20000");
    let far = aifabric_spec::build_str("nsf-far.yaml", &far_text).unwrap();
    let r = buffer_report(&far, &opts);
    assert!(r.switches_over > 0);
    assert!(
        r.problems.iter().all(|p| p.switch.contains("stsw")),
        "{:?}",
        r.problems[0]
    );
    assert!(
        r.problems[0].fix.contains("deep-buffer"),
        "{}",
        r.problems[0].fix
    );

    let prom = aifabric_spec::builtin::get("prometheus").unwrap();
    assert!(prom.contains("length_m: 60000"));
    let shallow = format!(
        "hardware:\n  - name: shallow-bag\n    ethernet: [{{count: 432, speed_gbps: 800}}, {{count: 864, speed_gbps: 400}}]\n    sram_bytes: 150000000\n{}",
        prom.replace("model: bag-j3-chassis", "model: shallow-bag")
    );
    let f = aifabric_spec::build_str("prometheus-shallow.yaml", &shallow).unwrap();
    let r = buffer_report(&f, &opts);
    assert!(r.switches_over > 0);
    let p = &r.problems[0];
    assert!(
        p.model == "shallow-bag" && p.longest_link.starts_with("60000 m"),
        "{p:?}"
    );
    let deep = aifabric_spec::load("prometheus").unwrap();
    assert_eq!(buffer_report(&deep, &opts).switches_over, 0);
}
