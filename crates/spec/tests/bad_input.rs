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

#[test]
fn more_links_than_ports_is_rejected() {
    // 40 GPUs x 400G = 16 Tb/s > Jericho3's 14.4 Tb/s of Ethernet.
    let yaml = BASE.replace("dsf_l2: {}", "dsf_l2: {gpus_per_rdsw: 40}");
    let e = err(&yaml);
    assert_eq!(e.line, line_of(&yaml, "- name: z"));
    assert!(e.message.contains("more links than ports"), "{e}");
    assert!(e.message.contains("meru800bia"), "{e}");
    assert!(e.message.contains("14400 Gb/s"), "{e}");
}

#[test]
fn bag_planes_must_match_the_edge() {
    let yaml = BASE.replace("planes: 16", "planes: 3");
    let e = err(&yaml);
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
