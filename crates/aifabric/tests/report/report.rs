//! The HTML report and report.json.

use aifabric::ReportOptions;
use aifabric_model::{DomainClass, SrgClass};
use aifabric_report::html::{render, SECTIONS};

#[test]
fn the_report_has_every_section_and_its_data() {
    let f = aifabric_spec::load("prometheus").unwrap();
    let opts = ReportOptions {
        sweep: Some(SrgClass::Domain(DomainClass::BagPlane)),
        gpus: Some(256),
        sizes: vec![1 << 20, 1 << 26],
        spec_text: Some(aifabric_spec::read("prometheus").unwrap()),
        ..Default::default()
    };
    let d = super::data(&f, &opts);
    let fs = d.failures.as_ref().unwrap();
    assert_eq!(d.gpus, 216_192);
    // Losing one of 16 planar planes leaves 15/16 between the regions.
    let cdf = &fs.cdf["east<->west"];
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
    assert!(fs.scenarios > 0 && !fs.cdf.is_empty());
    for v in fs.cdf.values() {
        assert!(v.windows(2).all(|w| w[0] <= w[1]) && v.iter().all(|&x| (0.0..=1.0).contains(&x)));
    }
    // Planar vs spread: one plane of 16 lost either way leaves 15/16 (REFERENCE closed form).
    let c = fs.planar_vs_spread.as_ref().unwrap();
    assert_eq!(c.scenarios, 32);
    assert!((c.planar.capacity_retained.min - 15.0 / 16.0).abs() < 1e-9);
    assert!((c.spread.capacity_retained.min - 15.0 / 16.0).abs() < 1e-9);
    // Single plane failures cannot tell the wirings apart; a plane on each side can: planar
    // loses 1/16 when the two planes face each other, spread loses 2/16 minus their shared
    // share of links (so planar keeps more in 1 case of 16, spread in the other 15).
    let pairs = fs.planar_vs_spread_pairs.as_ref().unwrap();
    assert_eq!(
        (pairs.scenarios, pairs.spread_better, pairs.planar_better),
        (16, 15, 1)
    );
    let note = fs.planar_vs_spread_note.as_deref().unwrap();
    assert!(note.contains("keep the same capacity either way"), "{note}");
    // Packed, 256 GPUs sit in one DSF zone, where the modes cannot differ: the ring runs
    // spread over the buildings, and there ECMP falls behind spraying.
    assert!(
        d.collective
            .as_deref()
            .unwrap()
            .contains("spread over the buildings"),
        "{:?}",
        d.collective
    );
    assert!(d.collective_note.is_some());
    let last = |lb: &str| {
        d.busbw
            .iter()
            .find(|b| b.lb == lb)
            .unwrap()
            .points
            .last()
            .unwrap()
            .1
    };
    assert!(last("ecmp") < last("spray"), "{:?}", d.busbw);
    // The worst scenarios say which pair and which tier.
    let w = &fs.worst[0];
    assert_eq!(w.class, "plane");
    assert!(
        w.worst_pair.is_some() && w.worst_tier.starts_with("bag "),
        "{w:?}"
    );
    assert_eq!(fs.worst_per_class.len(), 1);
    // Every resource that carried traffic is in the histogram.
    let hist: u64 = d.busbw[0].utilization_histogram.iter().sum();
    assert!(hist > 0);
    insta::assert_json_snapshot!("report_prometheus", d);

    let html = render(&d).unwrap();
    // Self-contained: one inline script (sorting, filtering), no external resources.
    assert_eq!(html.matches("<script").count(), 1);
    assert!(
        !html.contains("<script src") && !html.contains("http://cdn") && !html.contains("https://")
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
    // Every busBW point carries its values on hover.
    let coll = &html[html.find("<section id=\"collectives\"").unwrap()..];
    let coll = &coll[..coll.find("</section>").unwrap()];
    let points: usize = d.busbw.iter().map(|b| b.points.len()).sum();
    assert_eq!(coll.matches("<title>").count(), points, "a title per point");
    assert!(coll.contains("<title>spray: "), "{coll}");
    // The first screen: the figures that matter, each a link to a section of the page;
    // the worst failure is the sweep's worst scenario.
    let figures = aifabric_report::summary::figures(&d);
    let labels: Vec<&str> = figures.iter().map(|x| x.label).collect();
    assert_eq!(
        labels,
        [
            "Fabric",
            "Most oversubscribed",
            "Between regions",
            "Worst failure",
            "Collectives"
        ]
    );
    assert_eq!(figures[3].value, w.scenario);
    assert!(
        figures[0].value.starts_with("216,192 GPUs"),
        "{:?}",
        figures[0]
    );
    for x in &figures {
        let id = x.href.trim_start_matches('#');
        assert!(
            doc.descendants().any(|n| n.attribute("id") == Some(id)),
            "{} links to {id}, not on the page",
            x.label
        );
        assert!(html.contains(&format!("href=\"{}\"", x.href)));
    }
    let summary = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("summary"))
        .unwrap();
    assert_eq!(
        summary
            .descendants()
            .filter(|n| n.attribute("class") == Some("figure"))
            .count(),
        figures.len()
    );
    // Buildings built alike are one row of the oversubscription table.
    let groups = aifabric_report::summary::tier_groups(&d.tiers);
    assert!(groups.len() < d.tiers.len(), "{} rows", d.tiers.len());
    assert_eq!(
        groups.iter().map(|g| g.scopes.len()).sum::<usize>(),
        d.tiers.len()
    );
    let tier_rows = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("tiers"))
        .unwrap()
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .count();
    assert_eq!(tier_rows, groups.len() + 1, "a header and a row per group");
    assert!(html.contains("more alike (x "));
    // The hierarchy as a tree: each region's BAG, a branch per group of buildings built
    // alike (five DSF buildings, then the NSF one), each building's capacity into BAG the
    // sum over its planes, spread evenly over the 16: a DSF building's 1,638.4 Tb/s is
    // 102.4 Tb/s per plane.
    for r in &d.hierarchy {
        assert_eq!(r.buildings.len(), 6);
        for b in &r.buildings {
            let up: f64 = b.zones.iter().map(|z| z.uplink_tbps).sum();
            assert_eq!(b.bag_plane_tbps.len(), 16);
            assert!((b.bag_plane_tbps.iter().sum::<f64>() - up).abs() < 1e-6);
            assert!(b
                .bag_plane_tbps
                .iter()
                .all(|&p| (p - up / 16.0).abs() < 1e-9));
        }
    }
    let section = |id: &str| {
        let s = &html[html.find(&format!("<section id=\"{id}\"")).unwrap()..];
        s[..s.find("</section>").unwrap()].to_owned()
    };
    let hier = section("hierarchy");
    assert_eq!(
        hier.matches(">dc1 and 4 more alike (x 5)</text>").count(),
        2
    );
    assert!(hier.contains("102.4 Tb/s per plane") && hier.contains("80.0 Tb/s per plane"));
    assert!(hier.contains("1.64 Pb/s each · 4.50:1"), "{hier}");
    // A branch per group and a trunk per region; a square per plane with its capacity.
    assert_eq!(hier.matches("<line").count(), 2 * 2 + 2);
    assert_eq!(hier.matches("<title>plane ").count(), 32);
    // Every bar of the utilization histogram gives its values on hover.
    let util = section("utilization");
    let bars: usize = d
        .busbw
        .iter()
        .map(|b| b.utilization_histogram.iter().filter(|&&n| n > 0).count())
        .sum();
    assert_eq!(util.matches("<title>").count(), bars, "a title per bar");
    assert!(util.contains("% utilization</title>"), "{util}");
    let svgs = doc.descendants().filter(|n| n.has_tag_name("svg")).count();
    // The plane sweep keeps one value per pair: its CDF is a sentence, not a plot.
    let sentences = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("degenerate"))
        .count();
    assert_eq!(sentences, 1, "the CDF of one value per pair, said in words");
    assert_eq!(
        svgs, 4,
        "hierarchy, inter-BAG view, busBW and utilization plots"
    );
}

#[test]
fn names_from_the_spec_are_escaped_in_the_page() {
    // The spec's name is free text; a page that wrote it as it is would run it.
    const SCRIPT: &str = "<script>alert(1)</script>";
    let text = aifabric_fixtures::specs::TWO_REGIONS_NSF_2_PODS_PLANAR
        .replace("name: two", &format!("name: \"{SCRIPT}\""));
    let f = aifabric_spec::build_str("t.yaml", &text).unwrap();
    let opts = ReportOptions {
        gpus: Some(16),
        sizes: vec![1 << 20],
        spec_text: Some(("t.yaml".into(), text.clone())),
        ..Default::default()
    };
    let mut d = super::data(&f, &opts);
    assert_eq!(d.fabric, SCRIPT);
    let escaped = |html: &str| {
        // The page's own sorting script is the one live one.
        assert_eq!(
            html.matches("<script").count(),
            1,
            "a live <script> in the page"
        );
        assert!(
            !html.contains("alert(1)</script>"),
            "a live <script> in the page"
        );
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
    let fs = d.failures.as_mut().unwrap();
    hostile(&mut fs.sweep);
    for w in fs.worst.iter_mut().chain(&mut fs.worst_per_class) {
        hostile(&mut w.scenario);
        hostile(&mut w.class);
        hostile(&mut w.worst_tier);
        w.worst_pair = Some(SCRIPT.to_owned());
    }
    for r in &mut d.hierarchy {
        r.spokes = vec![SCRIPT.to_owned()];
    }
    d.hub_pairs = vec![aifabric_capacity::HubPair {
        a: SCRIPT.into(),
        b: SCRIPT.into(),
        via: vec![SCRIPT.into()],
        capacity_tbps_per_direction: 1.0,
        capacity_tbps: 2.0,
    }];
    d.collective_note = Some(SCRIPT.to_owned());
    let fs = d.failures.as_mut().unwrap();
    fs.planar_vs_spread_note = Some(SCRIPT.to_owned());
    fs.cdf = std::mem::take(&mut fs.cdf)
        .into_iter()
        .map(|(k, v)| (format!("{k}{SCRIPT}"), v))
        .collect();
    let c = fs.planar_vs_spread.as_mut().unwrap();
    for side in [&mut c.planar, &mut c.spread] {
        hostile(&mut side.topology);
        side.worst = Some(SCRIPT.to_owned());
    }
    hostile(d.collective.as_mut().unwrap());
    for b in &mut d.busbw {
        hostile(&mut b.lb);
    }
    assert!(!d.hierarchy.is_empty() && !d.tiers.is_empty() && !d.inter_bag.is_empty());
    assert!(!d.failures.as_ref().unwrap().worst.is_empty() && !d.busbw.is_empty());
    escaped(&render(&d).unwrap());
    // A failed section's error quotes names too.
    d.failed_sections = vec![aifabric::export::FailedSection {
        section: SCRIPT.to_owned(),
        error: SCRIPT.to_owned(),
    }];
    escaped(&render(&d).unwrap());
}

#[test]
fn a_hub_is_shown_as_a_hub_with_spoke_to_spoke_capacity() {
    let text = include_str!("../../../../examples/specs/hub-and-spoke.yaml");
    let f = aifabric_spec::build_str("hub-and-spoke", text).unwrap();
    let opts = ReportOptions {
        gpus: Some(64),
        sizes: vec![1 << 20],
        lbs: vec![aifabric::Lb::Ecmp],
        ..Default::default()
    };
    let d = super::data(&f, &opts);
    let fs = d.failures.as_ref().unwrap();
    let hub = &d.hierarchy[0];
    assert!(hub.hub && hub.gpus == 0);
    assert_eq!((hub.bag_planes, hub.bag_chassis), (16, 16));
    assert_eq!(hub.spokes, vec!["a", "b", "c"]);
    assert!(!d.hierarchy[1].hub && d.hierarchy[1].spokes.is_empty());
    // Spoke to spoke: 16 planes x 128 x 800G one way, for each of the three pairs.
    assert_eq!(d.hub_pairs.len(), 3);
    assert!(d
        .hub_pairs
        .iter()
        .all(|p| p.capacity_tbps_per_direction == 16.0 * 128.0 * 0.8 && p.via == ["hub"]));
    // The hub has no GPUs: no pair of its own in the sweep.
    assert!(
        fs.cdf.keys().all(|k| !k.contains("hub")),
        "{:?}",
        fs.cdf.keys()
    );
    assert_eq!(fs.cdf.len(), 3);
    let html = render(&d).unwrap();
    assert!(html.contains("hub BAG: 16 planes, 16 chassis; joins a, b, c"));
    assert!(html.contains("Spoke to spoke"));
    assert!(
        html.contains("hub (hub)"),
        "the drawn inter-BAG view names the hub"
    );
    // The hub has no building: its 16 planes are drawn as such, not as drained ones; each
    // spoke's buildings bring every plane of their BAG something.
    assert_eq!(html.matches("no building under it</title>").count(), 16);
    assert!(!html.contains("nothing from the buildings"));
    for r in &d.hierarchy[1..] {
        for b in &r.buildings {
            assert!(b.bag_plane_tbps.iter().all(|&t| t > 0.0), "{b:?}");
        }
    }
}

#[test]
fn a_spec_without_the_swept_class_sweeps_every_group_and_says_so() {
    let f = aifabric_spec::load("llama3-24k").unwrap();
    let opts = ReportOptions {
        gpus: Some(64),
        sizes: vec![1 << 20],
        pair_tables: true,
        ..Default::default()
    };
    let d = super::data(&f, &opts);
    let fs = d.failures.as_ref().unwrap();
    assert_eq!(fs.sweep, "single (every group: llama3-24k has no plane)");
    assert_eq!(fs.scenarios, f.srg_catalog().len());
    assert_eq!(fs.worst[0].scenario, "building:east.dc1");
    assert_eq!(fs.worst[0].gpus_isolated, 24_576);
    // One table per AI-zone pair: 8 AI zones, 28 pairs, each losing its capacity at least
    // when the building goes.
    assert_eq!(fs.pair_tables.len(), 28);
    for t in &fs.pair_tables {
        assert!(t.healthy_tbps > 0.0 && !t.worst.is_empty(), "{t:?}");
        assert!(t.worst.windows(2).all(|w| w[0].1 <= w[1].1));
        assert!(t.scenarios_losing >= t.worst.len());
    }
    // Per class: one row per class swept, each its class's worst.
    let classes: Vec<&str> = fs
        .worst_per_class
        .iter()
        .map(|w| w.class.as_str())
        .collect();
    assert!(
        classes.contains(&"building") && classes.contains(&"hall"),
        "{classes:?}"
    );
    let html = render(&d).unwrap();
    assert!(html.contains("id=\"pair-tables\""));
}

#[test]
fn a_section_that_fails_is_marked_and_the_others_are_kept() {
    // Two buildings under one BAG, 36 GPUs each: the benchmark's 72 GPUs span both. With the
    // whole BAG drained the ring has no path between the buildings, so the collectives fail;
    // the capacity and the failure sweep from that state do not.
    let f =
        aifabric_spec::build_str("tz.yaml", aifabric_fixtures::specs::TWO_ZONES_UNDER_BAG).unwrap();
    let scenario =
        aifabric_model::Scenario::from_selectors(&f, &[], &["a.bag".to_owned()], &[]).unwrap();
    let opts = ReportOptions {
        sizes: vec![1 << 20],
        ..Default::default()
    };
    let (d, html) = aifabric::Study::new(&f, scenario, aifabric::Setup::default())
        .report(&opts, &|_, _, _| {})
        .unwrap();
    assert!(!d.is_complete());
    assert_eq!(d.failed_sections.len(), 1, "{:?}", d.failed_sections);
    let failed = &d.failed_sections[0];
    assert_eq!(failed.section, "collectives");
    assert!(failed.error.contains("have no path"), "{}", failed.error);
    assert!(d.collective.is_none() && d.busbw.is_empty());
    // What did not fail is all there.
    assert_eq!(d.gpus, 72);
    assert!(!d.tiers.is_empty());
    let fs = d.failures.as_ref().unwrap();
    assert!(fs.scenarios > 0 && fs.starting_state.is_some());
    // The page says so at the top and in the section, and is still one document.
    assert!(html.contains("id=\"failed-sections\""));
    assert!(html.contains("This part failed</b> (collectives)"));
    assert!(html.contains("have no path"));
    roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap();
    let v = serde_json::to_value(&d).unwrap();
    assert_eq!(v["collective"], serde_json::Value::Null);
    assert_eq!(v["failed_sections"][0]["section"], "collectives");
}

/// A job in the report (`report --job`): its step as bars, the healthy fabric's first and then
/// the report's state (a core switch failed), each made of compute, the pipeline bubble and
/// each collective's exposed time adding up to the step; drawn, tabled and in the summary.
#[test]
fn a_job_is_drawn_as_what_its_step_is_made_of() {
    let f = aifabric_spec::load("htsim-k16").unwrap();
    let it = aifabric_spec::job::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/jobs/small-64.yaml"
    ))
    .unwrap();
    let scenario =
        aifabric_model::Scenario::from_selectors(&f, &["r.b.z.atsw0".into()], &[], &[]).unwrap();
    let opts = ReportOptions {
        gpus: Some(16),
        sizes: vec![1 << 20],
        job: Some(aifabric::ReportJob {
            it,
            placement: Some(aifabric::Placement::Spread),
            scenario: None,
            mitigation: None,
            ran: Vec::new(),
        }),
        ..Default::default()
    };
    let (d, html) = aifabric::Study::new(&f, scenario, aifabric::Setup::default())
        .report(&opts, &|_, _, _| {})
        .unwrap();
    assert!(d.is_complete(), "{:?}", d.failed_sections);
    let job = d.job.as_ref().expect("the job's section");
    let labels: Vec<&str> = job.bars.iter().map(|b| b.label.as_str()).collect();
    assert_eq!(labels, ["healthy", "as the report's state"]);
    for b in &job.bars {
        let sum: f64 = b.parts.iter().map(|p| p.1).sum();
        assert!((sum - b.step_ms).abs() <= 1e-6 * b.step_ms, "{b:?}");
        assert_eq!(
            (b.parts[0].0.as_str(), b.parts[1].0.as_str()),
            ("compute", "pipeline bubble")
        );
        assert!(b.parts[2..]
            .iter()
            .all(|p| p.0.ends_with(" exposed") || p.0 == "other"));
        assert!(b.mfu > 0.0 && b.mfu < 1.0);
    }
    assert!(job.bars[1].step_ms >= job.bars[0].step_ms);
    // Drawn: a rectangle per part of each bar, each with its value on hover.
    let section = &html[html.find("<section id=\"job\"").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    let svgs: Vec<&str> = section
        .split("<svg")
        .skip(1)
        .map(|x| &x[..x.find("</svg>").unwrap()])
        .collect();
    let parts: usize = job.bars.iter().map(|b| b.parts.len()).sum();
    assert_eq!(svgs[0].matches("<title>").count(), parts, "{section}");
    // A heat map per run: a cell per tier and collective, each with its figures on hover;
    // the means within each tier's 99th percentile and highest, all shares of capacity.
    assert_eq!(
        svgs.len(),
        1 + job.bars.len(),
        "the step and a heat map per run"
    );
    for (b, svg) in job.bars.iter().zip(&svgs[1..]) {
        let mut tiers: Vec<&str> = b.tiers.iter().map(|t| t.tier.as_str()).collect();
        let mut cols: Vec<&str> = b.tiers.iter().map(|t| t.collective.as_str()).collect();
        for v in [&mut tiers, &mut cols] {
            v.sort_unstable();
            v.dedup();
        }
        assert!(tiers.len() >= 3 && cols.len() >= 2, "{b:?}");
        assert_eq!(svg.matches("<title>").count(), tiers.len() * cols.len());
        for t in &b.tiers {
            assert!(
                0.0 < t.mean && t.mean <= t.p99 + 1e-12 && t.p99 <= t.max + 1e-12,
                "{t:?}"
            );
            assert!(t.max <= 1.0 + 1e-9 && t.resources > 0, "{t:?}");
        }
        // The busiest links, fabric links only, busiest first: the first is as busy as the
        // busiest tier of any collective that lengthens the step (two figures the engine
        // makes apart: its tiers and its bottleneck list).
        assert!(!b.busiest.is_empty());
        assert!(b.busiest.iter().all(|x| x.tier != "nvlink"));
        assert!(b
            .busiest
            .windows(2)
            .all(|w| w[0].utilization >= w[1].utilization));
        let exposed: Vec<&str> = b
            .parts
            .iter()
            .filter_map(|p| p.0.strip_suffix(" exposed"))
            .collect();
        let top = b
            .tiers
            .iter()
            .filter(|t| t.tier != "nvlink" && exposed.contains(&t.collective.as_str()))
            .map(|t| t.max)
            .fold(0.0, f64::max);
        assert!(
            (b.busiest[0].utilization - top).abs() < 1e-9,
            "{} against {top}",
            b.busiest[0].utilization
        );
    }
    assert!(section.contains("id=\"job-links\"") && section.contains("id=\"job-tiers\""));
    let figures = aifabric_report::summary::figures(&d);
    let fig = figures.iter().find(|x| x.label == "The job").unwrap();
    assert_eq!(fig.href, "#job");
    assert!(fig.detail.contains("the healthy step"), "{fig:?}");
}
