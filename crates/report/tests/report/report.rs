//! The HTML report and report.json.

use aifabric_model::{DomainClass, SrgClass};
use aifabric_report::data::{build, ReportOptions};
use aifabric_report::html::{render, SECTIONS};

#[test]
fn the_report_has_every_section_and_its_data() {
    let f = aifabric_spec::load("prometheus").unwrap();
    let opts = ReportOptions {
        sweep: Some(SrgClass::Domain(DomainClass::BagPlane)),
        gpus: 256,
        sizes: vec![1 << 20, 1 << 26],
        spec_text: Some(aifabric_spec::read("prometheus").unwrap()),
        ..Default::default()
    };
    let d = build(&f, &opts, &|_, _, _| {}).unwrap();
    assert_eq!(d.gpus, 216_192);
    // Losing one of 16 planar planes leaves 15/16 between the regions.
    let cdf = &d.failures.cdf["east<->west"];
    assert_eq!(cdf.len(), 32);
    assert!(
        cdf.iter().all(|&x| (x - 15.0 / 16.0).abs() < 1e-9),
        "{cdf:?}"
    );
    assert_eq!(d.busbw.len(), 3);
    assert!(d
        .busbw
        .iter()
        .all(|b| b.points.len() == 2 && b.points[1].1 > b.points[0].1));
    assert!(d.failures.scenarios > 0 && !d.failures.cdf.is_empty());
    for v in d.failures.cdf.values() {
        assert!(v.windows(2).all(|w| w[0] <= w[1]) && v.iter().all(|&x| (0.0..=1.0).contains(&x)));
    }
    // Planar vs spread: one plane of 16 lost either way leaves 15/16 (REFERENCE closed form).
    let c = d.failures.planar_vs_spread.as_ref().unwrap();
    assert_eq!(c.scenarios, 32);
    assert!((c.planar.capacity_retained.min - 15.0 / 16.0).abs() < 1e-9);
    assert!((c.spread.capacity_retained.min - 15.0 / 16.0).abs() < 1e-9);
    // Every resource that carried traffic is in the histogram.
    let hist: u64 = d.busbw[0].utilization_histogram.iter().sum();
    assert!(hist > 0);
    insta::assert_json_snapshot!("report_prometheus", d);

    let html = render(&d).unwrap();
    // Self-contained: no scripts, no external resources.
    assert!(
        !html.contains("<script") && !html.contains("http://cdn") && !html.contains("https://")
    );
    // Well-formed XML (the template is XHTML-compatible and plotters writes SVG), every section.
    let doc = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap();
    for id in SECTIONS {
        assert!(
            doc.descendants().any(|n| n.attribute("id") == Some(id)),
            "section {id} missing"
        );
    }
    let svgs = doc.descendants().filter(|n| n.has_tag_name("svg")).count();
    assert_eq!(svgs, 4, "hierarchy, CDF, busBW and utilization plots");
}

#[test]
fn a_stage_failure_keeps_the_stage_error_as_source() {
    use aifabric_report::data::ReportError;
    use aifabric_workload::placement::PlacementError;
    use std::error::Error as _;
    let e = ReportError::from(PlacementError("only 8 GPUs".into()));
    assert_eq!(
        e.to_string(),
        PlacementError("only 8 GPUs".into()).to_string()
    );
    let source = e.source().and_then(|s| s.downcast_ref::<PlacementError>());
    assert_eq!(source.map(|p| p.0.as_str()), Some("only 8 GPUs"));
}

#[test]
fn names_from_the_spec_are_escaped_in_the_page() {
    // The spec's name is free text; a page that wrote it as it is would run it.
    const SCRIPT: &str = "<script>alert(1)</script>";
    let text = aifabric_fixtures::specs::TWO_REGIONS_NSF_2_PODS_PLANAR
        .replace("name: two", &format!("name: \"{SCRIPT}\""));
    let f = aifabric_spec::build_str("t.yaml", &text).unwrap();
    let opts = ReportOptions {
        gpus: 16,
        sizes: vec![1 << 20],
        spec_text: Some(("t.yaml".into(), text.clone())),
        ..Default::default()
    };
    let mut d = build(&f, &opts, &|_, _, _| {}).unwrap();
    assert_eq!(d.fabric, SCRIPT);
    let escaped = |html: &str| {
        assert!(!html.contains("<script"), "a live <script> in the page");
        assert!(
            html.contains("&lt;script&gt;alert(1)"),
            "the name is shown, escaped"
        );
        // Still one well-formed document: nothing the names held became markup.
        let doc = roxmltree::Document::parse_with_options(
            html,
            roxmltree::ParsingOptions {
                allow_dtd: true,
                ..Default::default()
            },
        )
        .unwrap();
        let title = doc.descendants().find(|n| n.has_tag_name("title")).unwrap();
        assert_eq!(title.text(), Some(&*format!("aifabric report: {SCRIPT}")));
    };
    escaped(&render(&d).unwrap());

    // Every other name the page shows (regions, buildings, zones, tier scopes, region pairs,
    // scenarios, modes) is escaped too, whatever a later stage lets through.
    let hostile = |s: &mut String| *s = format!("{s}{SCRIPT}\"'&");
    for r in &mut d.hierarchy {
        hostile(&mut r.name);
        for b in &mut r.buildings {
            hostile(&mut b.name);
            for z in &mut b.zones {
                hostile(&mut z.name);
                hostile(&mut z.kind);
            }
        }
    }
    for t in &mut d.tiers {
        hostile(&mut t.tier);
        hostile(&mut t.scope);
    }
    for p in &mut d.inter_bag {
        hostile(&mut p.0);
        hostile(&mut p.1);
    }
    hostile(&mut d.failures.sweep);
    for w in &mut d.failures.worst {
        hostile(&mut w.0);
    }
    d.failures.cdf = std::mem::take(&mut d.failures.cdf)
        .into_iter()
        .map(|(k, v)| (format!("{k}{SCRIPT}"), v))
        .collect();
    let c = d.failures.planar_vs_spread.as_mut().unwrap();
    for side in [&mut c.planar, &mut c.spread] {
        hostile(&mut side.topology);
        side.worst = Some(SCRIPT.to_owned());
    }
    hostile(&mut d.collective);
    for b in &mut d.busbw {
        hostile(&mut b.lb);
    }
    assert!(!d.hierarchy.is_empty() && !d.tiers.is_empty() && !d.inter_bag.is_empty());
    assert!(!d.failures.worst.is_empty() && !d.busbw.is_empty());
    escaped(&render(&d).unwrap());
}
