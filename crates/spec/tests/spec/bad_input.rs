//! Every class of bad spec gives a located error with a hint, never a panic.

use aifabric_spec::{build_str, SpecError};

const BASE: &str = "\
name: t
regions:
  - name: east
    bag:
      planes: 16
    buildings:
      - name: dc1
        zones:
          - name: z
            dsf_l2: {}
";

fn err(yaml: &str) -> SpecError {
    build_str("t.yaml", yaml).expect_err("spec must be rejected")
}

/// Line (1-based) of the first occurrence of `needle` in `yaml`.
fn line_of(yaml: &str, needle: &str) -> u64 {
    yaml.lines()
        .position(|l| l.contains(needle))
        .expect("needle") as u64
        + 1
}

#[test]
fn the_base_spec_is_valid() {
    build_str("t.yaml", BASE).unwrap();
}

#[test]
fn malformed_yaml_is_located() {
    let yaml = "name: t\nregions: [\n  {name: a\n";
    let e = err(yaml);
    assert_eq!(e.file, "t.yaml");
    assert!(e.line >= 2, "{e}");
    assert!(e.to_string().starts_with("t.yaml:"), "{e}");
}

#[test]
fn unknown_key_suggests_the_right_one() {
    let yaml = BASE.replace("planes: 16", "plnes: 16");
    let e = err(&yaml);
    assert_eq!(e.line, line_of(&yaml, "plnes"));
    assert!(e.message.contains("plnes"), "{e}");
    assert_eq!(e.hint.as_deref(), Some("did you mean `planes`?"));
}

#[test]
fn zero_count_is_rejected() {
    let yaml = BASE.replace("dsf_l2: {}", "dsf_l2: {sdsw: 0}");
    let e = err(&yaml);
    assert_eq!(e.line, line_of(&yaml, "sdsw: 0"));
    assert!(e.message.contains("`sdsw` is 0"), "{e}");
    assert!(e.hint.unwrap().contains("at least 1"));
}

#[test]
fn negative_count_is_rejected() {
    let yaml = BASE.replace("dsf_l2: {}", "dsf_l2: {clusters: -2}");
    let e = err(&yaml);
    assert_eq!(e.line, line_of(&yaml, "clusters"));
    assert!(e.message.contains("-2"), "{e}");
    assert!(e.hint.unwrap().contains("whole numbers"));
}

/// Column (1-based) of `needle` on its line.
fn column_of(yaml: &str, needle: &str) -> u64 {
    let line = yaml.lines().find(|l| l.contains(needle)).expect("needle");
    line.find(needle).unwrap() as u64 + 1
}

#[test]
fn more_links_than_ports_points_at_the_count() {
    // 40 GPUs x 400G = 16 Tb/s > Jericho3's 36 x 400G = 14.4 Tb/s of Ethernet.
    let yaml = BASE.replace("dsf_l2: {}", "dsf_l2: {gpus_per_rdsw: 40}");
    let e = err(&yaml);
    assert_eq!(e.line, line_of(&yaml, "gpus_per_rdsw"));
    assert_eq!(e.column, column_of(&yaml, "40"));
    assert!(e.message.contains("more links than ports"), "{e}");
    assert!(e.message.contains("meru800bia"), "{e}");
    assert!(e.message.contains("link 37"), "{e}");
    assert!(e.message.contains("36 ports of 400G"), "{e}");
}

#[test]
fn ports_are_counted_not_only_bandwidth() {
    // 4 x 800G or 8 x 100G: 32 x 100G fits the 3.2 Tb/s budget but not the 8 ports.
    let yaml = "name: t\nhardware:\n  - {name: tor, ethernet: [{count: 4, speed_gbps: 800}, {count: 8, speed_gbps: 100}]}\n  - {name: gpu100, host: [{count: 1, speed_gbps: 100}]}\nregions:\n  - name: a\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            roce: {ai_zones: 1, racks_per_zone: 1, gpus_per_rack: 1, ctsw_per_zone: 1, rtsw_links_per_ctsw: 32, link_speed_gbps: 100, atsw: 1, rtsw_model: tor, gpu_model: gpu100}\n";
    let e = err(yaml);
    assert!(e.message.contains("8 ports of 100G"), "{e}");
}

#[test]
fn a_tiny_port_speed_is_rejected_not_divided_by() {
    let yaml = "name: t\nhardware: [{name: tiny, ethernet: [{count: 10, speed_gbps: 0.0001}]}]\nregions: [{name: a, bag: {planes: 1, model: tiny}}]\n";
    let e = err(yaml);
    assert!(e.message.contains("0.0001 Gb/s"), "{e}");
    assert_eq!(e.column, column_of(yaml, "0.0001"));
}

#[test]
fn bag_planes_must_match_the_edge() {
    let yaml = BASE.replace("planes: 16", "planes: 3");
    let e = err(&yaml);
    // `edsw_uplinks` is left at its default: the error points at the zone.
    assert_eq!(e.line, line_of(&yaml, "- name: z"));
    assert!(e.message.contains("16 uplinks"), "{e}");
    assert!(e.message.contains("3 BAG planes"), "{e}");
    assert!(e.hint.unwrap().contains("multiple of 3"));
    // NSF: STSW i of every spine plane goes to BAG plane i.
    let yaml = BASE.replace("dsf_l2: {}", "nsf: {stsw_per_plane: 8}");
    let e = err(&yaml);
    assert_eq!(e.line, line_of(&yaml, "stsw_per_plane"));
    assert!(e.message.contains("16 planes"), "{e}");
}

#[test]
fn unknown_hardware_model_suggests() {
    let yaml = BASE.replace("planes: 16", "planes: 16\n      model: bag-j3-chasis");
    let e = err(&yaml);
    assert_eq!(e.line, line_of(&yaml, "bag-j3-chasis"));
    assert!(e.message.contains("unknown hardware model `bag-j3-chasis`"));
    assert!(e.hint.unwrap().contains("did you mean `bag-j3-chassis`"));
}

#[test]
fn duplicate_names_point_at_both() {
    let yaml = format!(
        "{BASE}      - name: dc1\n        zones:\n          - name: z\n            nsf: {{}}\n"
    );
    let e = err(&yaml);
    assert_eq!(e.line, 11);
    assert!(e.message.contains("duplicate building name `dc1`"), "{e}");
    assert!(e.hint.unwrap().contains("line 7"));
}

#[test]
fn a_zone_needs_exactly_one_fabric() {
    let yaml = BASE.replace("dsf_l2: {}", "dsf_l2: {}\n            nsf: {}");
    let e = err(&yaml);
    assert!(e.message.contains("exactly one fabric"), "{e}");
}

#[test]
fn inter_bag_unknown_region_and_plane_mismatch() {
    let two = "name: t\nregions:\n  - name: a\n    bag: {planes: 4}\n  - name: b\n    bag: {planes: 2}\ninter_bag:\n  - {between: [a, c], topology: planar, links_per_plane: 4, length_m: 100}\n";
    let e = err(two);
    assert!(e.message.contains("unknown region `c`"), "{e}");
    let e = err(&two.replace("[a, c]", "[a, b]"));
    assert!(e.message.contains("equal plane counts"), "{e}");
    // Spread works across unequal plane counts.
    build_str(
        "t.yaml",
        &two.replace("[a, c], topology: planar", "[a, b], topology: spread"),
    )
    .unwrap();
}

#[test]
fn unreadable_file_names_builtins() {
    let e = aifabric_spec::load("prometeus").expect_err("no such file");
    assert!(e
        .hint
        .unwrap()
        .contains("did you mean the built-in spec `prometheus`"));
}

#[test]
fn edge_uplinks_must_exist_and_hyperports_are_4x800g() {
    let e = err(&BASE.replace("dsf_l2: {}", "dsf_l2: {edsw_uplinks: 0}"));
    assert!(e.message.contains("`edsw_uplinks` is 0"), "{e}");
    let e = err(&BASE.replace(
        "dsf_l2: {}",
        "dsf_l2: {edsw_uplinks: 64, uplink_speed_gbps: 400, hyperports: true}",
    ));
    assert!(e.message.contains("cannot form hyperports"), "{e}");
    build_str(
        "t.yaml",
        &BASE.replace("dsf_l2: {}", "dsf_l2: {edsw_uplinks: 64, hyperports: true}"),
    )
    .expect_err("64 x 800G exceeds the J3's 18 x 800G");
}

#[test]
fn zones_under_a_bag_must_reach_it() {
    // RoCE: the ATSW uplinks spread evenly over the planes, fit the ATSW, and exist.
    let roce = BASE.replace("dsf_l2: {}", "roce: {atsw_uplinks: 40}");
    let e = err(&roce);
    assert_eq!(e.line, line_of(&roce, "atsw_uplinks"));
    assert!(e.message.contains("zone `east.dc1.z`"), "{e}");
    assert!(e.message.contains("`atsw_uplinks`"), "{e}");
    assert!(e.hint.unwrap().contains("`atsw_uplinks: 32` or `48`"));
    // Left at its default (192), the error points at the zone and names the field.
    let yaml = BASE
        .replace("dsf_l2: {}", "roce: {}")
        .replace("planes: 16", "planes: 5");
    let e = err(&yaml);
    assert_eq!(e.line, line_of(&yaml, "- name: z"));
    assert!(e.message.contains("(`atsw_uplinks`, the default)"), "{e}");
    let yaml = BASE.replace("dsf_l2: {}", "roce: {atsw_uplinks: 208}");
    let e = err(&yaml);
    assert!(
        e.message.contains("do not fit beside its 384 CTSW links"),
        "{e}"
    );
    assert!(e.hint.unwrap().contains("`atsw_uplinks: 192`"));
    let e = err(&BASE.replace("dsf_l2: {}", "roce: {atsw_uplinks: 0}"));
    assert!(e.message.contains("`atsw_uplinks` is 0"), "{e}");
    // Fat trees and DSF zones without EDSWs have no way up: refused, not left off the BAG.
    let e = err(&BASE.replace("dsf_l2: {}", "fat_tree: {k: 4}"));
    assert!(
        e.message.contains("zone `east.dc1.z` is a `fat_tree`"),
        "{e}"
    );
    let e = err(&BASE.replace("dsf_l2: {}", "dsf_l1: {edsw: 0}"));
    assert!(e.message.contains("`edsw: 0`"), "{e}");
    // Without a BAG, all three build, each on its own.
    for zone in ["roce: {}", "fat_tree: {k: 4}", "dsf_l1: {edsw: 0}"] {
        let yaml = BASE
            .replace("    bag:\n      planes: 16\n", "")
            .replace("dsf_l2: {}", zone);
        build_str("t.yaml", &yaml).unwrap();
    }
}

#[test]
fn zone_and_bag_names_are_unique_across_regions() {
    let yaml = "name: t\nregions:\n  - name: a\n    bag: {name: core, planes: 1}\n  - name: b\n    bag: {name: core, planes: 1}\n";
    let e = err(yaml);
    assert_eq!(e.line, 6);
    assert!(e.message.contains("`core`"), "{e}");
    assert!(e.hint.unwrap().contains("line 4"));
}

#[test]
fn enum_values_and_region_names_get_suggestions_at_the_value() {
    let yaml = "name: t\nregions:\n  - name: east\n    bag: {planes: 2}\n  - name: west\n    bag: {planes: 2}\ninter_bag:\n  - {between: [east, wset], topology: planar, links_per_plane: 2, length_m: 5}\n";
    let e = err(yaml);
    assert_eq!((e.line, e.column), (8, column_of(yaml, "wset")));
    assert_eq!(e.hint.as_deref(), Some("did you mean `west`?"));
    let e = err(&yaml.replace("wset", "west").replace("planar", "spred"));
    assert_eq!(e.hint.as_deref(), Some("did you mean `spread`?"));
}

#[test]
fn absurd_lengths_and_huge_tokens_are_handled() {
    let e = err(&BASE.replace("name: t", "name: t\nlengths: {host_m: 1e300}"));
    assert!(e.message.contains("`host_m`"), "{e}");
    let garbage = format!("name: t\nregions: {}\n", "[".repeat(5_000));
    let e = err(&garbage);
    assert!(
        e.message.len() < 300,
        "the message quotes at most a short token"
    );
}

/// Every name a spec gives must be one a selector can address (the grammar is
/// `aifabric_model::scenario`): the error points at the name and says how to fix it.
#[test]
fn names_that_selectors_cannot_address_are_rejected() {
    // `--` is the bundle separator: `east.dc--1` would be read as a bundle.
    for (from, to, what) in [
        ("name: dc1", "name: dc--1", "building"),
        ("name: east", "name: ea--st", "region"),
        ("name: z", "name: z--a", "zone"),
    ] {
        let yaml = BASE.replace(from, to);
        let e = err(&yaml);
        assert_eq!(
            (e.line, e.column),
            (line_of(&yaml, to), column_of(&yaml, &to[6..])),
            "{what}: {e}"
        );
        assert!(e.message.contains(&format!("`{}`", &to[6..])), "{e}");
        assert!(e.message.contains("`--`"), "{e}");
        assert!(e.hint.as_deref().unwrap().contains("single `-`"), "{e}");
    }
    let e = err(&BASE.replace("name: dc1", "name: dc---1"));
    assert!(
        e.hint.unwrap().contains("e.g. `dc-1`"),
        "runs of `-` become one"
    );
    // A `-` at either end: regions `a-` and `b` would make the conduit `conduit:a---b`.
    for name in ["east-", "-east"] {
        let yaml = BASE.replace("name: east", &format!("name: {name}"));
        let e = err(&yaml);
        assert_eq!(e.line, line_of(&yaml, name), "{e}");
        assert!(e.message.contains("either end"), "{e}");
        assert!(e.hint.unwrap().contains("e.g. `east`"));
    }
    // A shared-risk group's name goes into `--fail srg:NAME,...`: no commas.
    let yaml = format!("{BASE}srgs:\n  - name: \"a,b\"\n    members: [east.dc1.z]\n");
    let e = err(&yaml);
    assert_eq!(e.line, line_of(&yaml, "a,b"), "{e}");
    assert!(e.message.contains("invalid name `a,b`"), "{e}");
}

#[test]
fn a_building_named_bag_beside_the_default_bag_layer_is_rejected() {
    // `east.bag.plane0` would be both BAG plane 0 and the building's zone `plane0`.
    let yaml = BASE
        .replace("name: dc1", "name: bag")
        .replace("name: z", "name: plane0");
    let e = err(&yaml);
    assert_eq!(
        (e.line, e.column),
        (
            line_of(&yaml, "name: bag"),
            column_of(&yaml, "name: bag") + 6
        )
    );
    assert!(e.message.contains("`east.bag`"), "{e}");
    assert!(e.hint.unwrap().contains("own `name:`"));
    // Any zone: the selector `east.bag` would still select the building and the BAG layer.
    err(&BASE.replace("name: dc1", "name: bag"));
    // With the BAG layer named apart, the building may be called `bag`.
    let yaml = BASE
        .replace("planes: 16", "planes: 16\n      name: east-core")
        .replace("name: dc1", "name: bag")
        .replace("name: z", "name: plane0");
    let f = build_str("t.yaml", &yaml).unwrap();
    use aifabric_model::Selection;
    let Ok(Selection::Devices(zone)) = f.select("east.bag.plane0") else {
        panic!("the zone is selectable")
    };
    let Ok(Selection::Devices(plane)) = f.select("east-core.plane0") else {
        panic!("the plane is selectable")
    };
    assert!(zone.iter().all(|d| !plane.contains(d)));
}

#[test]
fn a_bag_layer_named_like_a_region_is_rejected() {
    let yaml = format!(
        "{}  - name: west\n    bag:\n      planes: 1\n",
        BASE.replace("planes: 16", "planes: 16\n      name: west")
    );
    let e = err(&yaml);
    assert_eq!(e.line, line_of(&yaml, "name: west"), "{e}");
    assert!(e.message.contains("region `west`"), "{e}");
    assert!(e.hint.unwrap().contains("`east-bag`"));
    // Its own region's name too: `east.plane0` would be a plane and a building.
    let e = err(&BASE.replace("planes: 16", "planes: 16\n      name: east"));
    assert!(e.message.contains("region `east`"), "{e}");
}

#[test]
fn a_file_over_the_yaml_node_limit_is_stated_with_a_hint() {
    // 130,000 one-key maps: 390,000 nodes, over the reader's 250,000.
    let regions: String = (0..130_000)
        .map(|i| format!("  - {{name: r{i}}}\n"))
        .collect();
    let yaml = format!("name: t\nregions:\n{regions}");
    let e = err(&yaml);
    assert_eq!(
        e.message,
        "spec too large: more than 250,000 YAML nodes (values, lists and maps)"
    );
    assert!(e.line > 2, "located where the limit was passed: {e}");
    let hint = e.hint.clone().unwrap();
    assert!(hint.contains("counts") && hint.contains("split"), "{hint}");
    assert!(!e.to_string().contains("Nodes {"), "no debug text: {e}");
    // A scenario file says what it is, with its own hint.
    let fail: String = (0..260_000).map(|i| format!("  - r{i}\n")).collect();
    let e =
        aifabric_spec::scenario::parse_scenario("s.yaml", &format!("fail:\n{fail}")).unwrap_err();
    assert!(e.message.starts_with("scenario file too large"), "{e}");
    assert!(
        e.hint.unwrap().contains("prefix"),
        "the scenario's own hint"
    );
}

/// A job's parameter count past any model (issue 35: `parameters: 1e300` was accepted and
/// became infinite gradient bytes) is refused at its line with the range.
#[test]
fn a_job_with_an_absurd_parameter_count_is_refused_at_its_line() {
    let job = include_str!("../../../../examples/jobs/small-64.yaml");
    assert!(aifabric_spec::job::parse("job.yaml", job).is_ok());
    let bad = job.replace("parameters: 8.0e9", "parameters: 1e300");
    let e = aifabric_spec::job::parse("job.yaml", &bad).expect_err("refused");
    let text = e.to_string();
    assert!(text.contains("over the largest model of 1e15"), "{text}");
    assert!(e.hint.as_deref().unwrap_or("").contains("70e9"), "{text}");
    assert_eq!(e.line, line_of(&bad, "parameters: 1e300"), "{text}");
}
