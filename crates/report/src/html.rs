//! The HTML report: one self-contained file (inline SVG, no network; one inline script that
//! sorts and filters tables, the page whole without it), rendered
//! from [`ReportData`] with a minijinja template; plots are drawn by plotters into SVG with the
//! DejaVu Sans font shipped in `assets/` (plotters measures text with it).

use crate::data::ReportData;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::fmt::Write;

const TEMPLATE: &str = include_str!("../assets/report.html.j2");
const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// The sections every report has, by element id.
pub const SECTIONS: &[&str] = &[
    "summary",
    "hierarchy",
    "tiers",
    "pfc-headroom",
    "inter-bag",
    "failures",
    "collectives",
    "utilization",
];

fn font() {
    // Registering twice is harmless; the first call wins.
    let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

type Plot = Result<(), Box<dyn std::error::Error>>;

/// A 720 x 360 SVG plot on white drawn by `draw`, or a note saying why it failed.
fn svg_plot(draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Plot) -> String {
    let mut s = String::new();
    let r: Plot = (|| {
        let root = SVGBackend::with_string(&mut s, (720, 360)).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
        Ok(())
    })();
    match r {
        Ok(()) => s,
        Err(e) => format!("<p>plot failed: {e}</p>"),
    }
}

/// The series legend, boxed, upper left.
fn legend<'a, CT: CoordTranslate>(c: &mut ChartContext<'a, SVGBackend<'a>, CT>) -> Plot {
    c.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    Ok(())
}

/// Capacity retained CDF: x = capacity retained, y = share of scenarios at or below it
/// (empty when the sweep failed: the page shows its error instead).
fn cdf_svg(d: &ReportData) -> String {
    let Some(failures) = &d.failures else {
        return String::new();
    };
    if let Some(sentence) = one_value_cdf(&failures.cdf, failures.scenarios) {
        return format!("<p class=\"degenerate\">{}</p>", esc(&sentence));
    }
    svg_plot(|root| {
        let mut c = ChartBuilder::on(root)
            .caption(
                format!("Capacity retained, {} scenarios", failures.scenarios),
                ("sans-serif", 16),
            )
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(45)
            .build_cartesian_2d(0f64..1.0, 0f64..1.0)?;
        c.configure_mesh()
            .x_desc("capacity retained")
            .y_desc("share of scenarios")
            .draw()?;
        for (i, (pair, v)) in failures.cdf.iter().enumerate().take(COLORS.len()) {
            let n = v.len().max(1) as f64;
            let color = COLORS[i];
            c.draw_series(LineSeries::new(
                v.iter().enumerate().map(|(k, &x)| (x, (k + 1) as f64 / n)),
                color.stroke_width(2),
            ))?
            .label(pair.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
        legend(&mut c)
    })
}

/// When every pair's capacity retained is one value across the scenarios (a CDF of vertical
/// lines, nothing to read off a plot): that, in a sentence.
fn one_value_cdf(
    cdf: &std::collections::BTreeMap<String, Vec<f64>>,
    scenarios: usize,
) -> Option<String> {
    let mut parts = Vec::new();
    for (pair, v) in cdf {
        let (lo, hi) = v
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        if v.is_empty() || hi - lo > 1e-9 {
            return None;
        }
        parts.push(format!("{pair} {:.2}%", 100.0 * lo));
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "Every one of the {scenarios} scenarios keeps the same share of routed capacity: {} \
         (a CDF would be one vertical line per pair).",
        parts.join(", ")
    ))
}

/// busBW vs message size per mode, log x (empty when the collectives failed).
fn busbw_svg(d: &ReportData) -> String {
    let Some(collective) = &d.collective else {
        return String::new();
    };
    // Each point where the plot puts it, with its values: a dot whose title the browser
    // shows on hover.
    let dots = std::cell::RefCell::new(Vec::new());
    let svg = svg_plot(|root| {
        let (lo, hi) = d
            .busbw
            .iter()
            .flat_map(|b| b.points.iter().map(|p| p.0 as f64))
            .fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
        let top = d
            .busbw
            .iter()
            .flat_map(|b| b.points.iter().map(|p| p.1))
            .fold(1.0f64, f64::max)
            * 1.1;
        let mut c = ChartBuilder::on(root)
            .caption(format!("busBW, {collective}"), ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(45)
            .build_cartesian_2d((lo.max(1.0)..hi.max(2.0)).log_scale(), 0f64..top)?;
        c.configure_mesh()
            .x_desc("message size (B)")
            .y_desc("busBW (GB/s)")
            .x_label_formatter(&|x| {
                let x = *x;
                if x >= 1e9 {
                    format!("{:.0}G", x / 1e9)
                } else if x >= 1e6 {
                    format!("{:.0}M", x / 1e6)
                } else {
                    format!("{x:.0}")
                }
            })
            .draw()?;
        for (i, b) in d.busbw.iter().enumerate().take(COLORS.len()) {
            let color = COLORS[i];
            c.draw_series(LineSeries::new(
                b.points.iter().map(|&(x, y)| (x as f64, y)),
                color.stroke_width(2),
            ))?
            .label(b.lb.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            for &(x, y) in &b.points {
                let (px, py) = c.backend_coord(&(x as f64, y));
                let (r, g, bl) = (color.0, color.1, color.2);
                dots.borrow_mut().push(format!(
                    r##"<circle cx="{px}" cy="{py}" r="4" fill="rgb({r},{g},{bl})"><title>{}: {:.2} GB/s at {x} B</title></circle>"##,
                    esc(&b.lb),
                    y
                ));
            }
        }
        legend(&mut c)
    });
    match svg.rfind("</svg>") {
        Some(end) => format!(
            "{}{}{}",
            &svg[..end],
            dots.into_inner().concat(),
            &svg[end..]
        ),
        None => svg,
    }
}

/// Link-utilization histogram of the largest size, one bar group per mode (empty when the
/// collectives failed).
fn utilization_svg(d: &ReportData) -> String {
    if d.busbw.is_empty() {
        return String::new();
    }
    svg_plot(|root| {
        let top = d
            .busbw
            .iter()
            .flat_map(|b| b.utilization_histogram.iter().copied())
            .max()
            .unwrap_or(1)
            .max(1) as f64
            * 1.1;
        let mut c = ChartBuilder::on(root)
            .caption("Link utilization at the largest size", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(55)
            .build_cartesian_2d(0f64..100.0, 0f64..top)?;
        c.configure_mesh()
            .x_desc("utilization (%)")
            .y_desc("resources")
            .draw()?;
        let modes = d.busbw.len().max(1) as f64;
        for (i, b) in d.busbw.iter().enumerate().take(COLORS.len()) {
            let color = COLORS[i];
            let w = 5.0 / modes;
            c.draw_series(b.utilization_histogram.iter().enumerate().map(|(k, &n)| {
                let x0 = k as f64 * 5.0 + i as f64 * w;
                Rectangle::new([(x0, 0.0), (x0 + w, n as f64)], color.filled())
            }))?
            .label(b.lb.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
        }
        legend(&mut c)
    })
}

/// `s` as HTML text, safe in element content and in quoted attribute values (the five
/// characters HTML 5 gives a meaning there, escaped as minijinja's autoescape does).
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#x27;")
}

/// The job's step as stacked horizontal bars, one per run (compute, the pipeline bubble,
/// each collective's exposed time), a legend under them; each part's `<title>` is its value
/// (the browser shows it on hover).
fn step_svg(d: &ReportData) -> Option<String> {
    let job = d.job.as_ref()?;
    const COLORS: [&str; 8] = [
        "#9e9e9e", "#d9d9d9", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    ];
    let (w, label_w, row_h) = (720.0f64, 170.0f64, 34.0f64);
    let longest = job.bars.iter().map(|b| b.step_ms).fold(0.0, f64::max);
    if longest <= 0.0 {
        return None;
    }
    let scale = (w - label_w - 90.0) / longest;
    // Every part's name, in the order first met: one color each.
    let mut names: Vec<&str> = Vec::new();
    for b in &job.bars {
        for (n, _) in &b.parts {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
    }
    let color = |n: &str| COLORS[names.iter().position(|x| *x == n).unwrap_or(0) % COLORS.len()];
    let legend_rows = names.len().div_ceil(3) as f64;
    let h = 10.0 + row_h * job.bars.len() as f64 + 10.0 + 18.0 * legend_rows;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    for (i, b) in job.bars.iter().enumerate() {
        let y = 10.0 + row_h * i as f64;
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            label_w - 8.0,
            y + 17.0,
            esc(&b.label)
        );
        let mut x = label_w;
        for (n, ms) in &b.parts {
            let len = (ms * scale).max(0.0);
            let _ = write!(
                s,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{len:.1}" height="24" fill="{}"><title>{}: {ms:.1} ms</title></rect>"#,
                color(n),
                esc(n)
            );
            x += len;
        }
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{:.1} ms</text>"#,
            x + 6.0,
            y + 17.0,
            b.step_ms
        );
    }
    let top = 20.0 + row_h * job.bars.len() as f64;
    for (k, n) in names.iter().enumerate() {
        let (x, y) = (
            label_w + (k % 3) as f64 * 180.0,
            top + 18.0 * (k / 3) as f64,
        );
        let _ = write!(
            s,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            y - 10.0,
            color(n),
            x + 16.0,
            y,
            esc(n)
        );
    }
    s.push_str("</svg>");
    Some(s)
}

/// What a region's BAG box says: planes and chassis, and for a hub the spokes it joins.
fn bag_line(r: &crate::data::RegionNode) -> String {
    if r.hub {
        format!(
            "hub BAG: {} planes, {} chassis; joins {}",
            r.bag_planes,
            r.bag_chassis,
            if r.spokes.is_empty() {
                "no spoke".to_owned()
            } else {
                r.spokes.join(", ")
            }
        )
    } else {
        format!("BAG: {} planes, {} chassis", r.bag_planes, r.bag_chassis)
    }
}

/// The hierarchy as boxes: a column per region, its buildings and zones stacked, BAG below.
fn hierarchy_svg(d: &ReportData) -> String {
    let col_w = 420.0;
    let row_h = 22.0;
    let rows = d
        .hierarchy
        .iter()
        .map(|r| r.buildings.iter().map(|b| 1 + b.zones.len()).sum::<usize>())
        .max()
        .unwrap_or(0) as f64;
    let h = 60.0 + rows * row_h + 70.0;
    let w = (d.hierarchy.len().max(1) as f64) * col_w + 20.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    for (i, r) in d.hierarchy.iter().enumerate() {
        let x = 10.0 + i as f64 * col_w;
        let _ = write!(
            s,
            r##"<text x="{}" y="20" font-size="15" font-weight="bold">region {}</text>"##,
            x,
            esc(&r.name)
        );
        let mut y = 35.0;
        for b in &r.buildings {
            let _ = write!(
                s,
                r##"<rect x="{x}" y="{y}" width="{}" height="{}" fill="#eef3fb" stroke="#6b8cc7"/><text x="{}" y="{}">{}</text>"##,
                col_w - 20.0,
                row_h * (1 + b.zones.len()) as f64 - 4.0,
                x + 6.0,
                y + 15.0,
                esc(&b.name)
            );
            y += row_h;
            for z in &b.zones {
                // A region without BAG: its zones have no uplink to name.
                let up = if r.bag_planes == 0 {
                    String::new()
                } else {
                    // With the zone's oversubscription toward BAG (the tiers' row).
                    let ratio = d
                        .tiers
                        .iter()
                        .find(|t| t.tier == "l2_to_bag" && t.scope == z.name)
                        .and_then(|t| t.ratio)
                        .map_or_else(String::new, |x| format!(" ({x:.2}:1)"));
                    format!(", {:.1} Tb/s to BAG{ratio}", z.uplink_tbps)
                };
                let _ = write!(
                    s,
                    r##"<text x="{}" y="{}">{} ({}): {} GPUs{up}</text>"##,
                    x + 18.0,
                    y + 14.0,
                    esc(&z.name),
                    esc(&z.kind),
                    z.gpus,
                );
                y += row_h;
            }
        }
        let by = 45.0 + rows * row_h;
        if r.bag_planes == 0 && !r.hub {
            let _ = write!(
                s,
                r##"<text x="{}" y="{}">no BAG layer</text>"##,
                x + 6.0,
                by + 24.0
            );
            continue;
        }
        let _ = write!(
            s,
            r##"<rect x="{x}" y="{by}" width="{}" height="40" fill="#fbefe6" stroke="#c77a3f"/><text x="{}" y="{}">{}</text>"##,
            col_w - 20.0,
            x + 6.0,
            by + 24.0,
            esc(&bag_line(r))
        );
    }
    s.push_str("</svg>");
    s
}

/// Capacity in the unit that reads best: Pb/s from 1,000 Tb/s.
fn capacity_text(tbps: f64) -> String {
    if tbps >= 1000.0 {
        format!("{:.2} Pb/s", tbps / 1000.0)
    } else {
        format!("{tbps:.1} Tb/s")
    }
}

/// The inter-BAG view: each region a box (hubs in the middle, the others round them), a line
/// per pair of regions with links between them, labelled with its capacity both ways.
/// `None` with fewer than two regions.
fn inter_bag_svg(d: &ReportData) -> Option<String> {
    let n = d.hierarchy.len();
    if n < 2 {
        return None;
    }
    let (w, h) = (900.0f64, 460.0f64);
    // An ellipse wide enough that a label between a box and the hub clears both.
    let (cx, cy, rx, ry) = (w / 2.0, h / 2.0, 330.0, 170.0);
    let hubs: Vec<usize> = (0..n).filter(|&i| d.hierarchy[i].hub).collect();
    let ring: Vec<usize> = (0..n).filter(|&i| !d.hierarchy[i].hub).collect();
    let mut pos = vec![(0.0f64, 0.0f64); n];
    for (k, &i) in hubs.iter().enumerate() {
        pos[i] = (cx, cy + (k as f64 - (hubs.len() as f64 - 1.0) / 2.0) * 70.0);
    }
    for (k, &i) in ring.iter().enumerate() {
        // Start at the left; two regions face each other.
        let a = std::f64::consts::PI + 2.0 * std::f64::consts::PI * k as f64 / ring.len() as f64;
        pos[i] = (cx + rx * a.cos(), cy + ry * a.sin());
    }
    let index = |name: &str| d.hierarchy.iter().position(|r| r.name == name);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    for (a, b, tbps) in &d.inter_bag {
        let (Some(i), Some(j)) = (index(a), index(b)) else {
            continue;
        };
        let ((x1, y1), (x2, y2)) = (pos[i], pos[j]);
        let _ = write!(
            s,
            r##"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="#c77a3f" stroke-width="3"/><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#8a4b1c">{}</text>"##,
            (x1 + x2) / 2.0,
            (y1 + y2) / 2.0 - 6.0,
            esc(&capacity_text(*tbps))
        );
    }
    for (i, r) in d.hierarchy.iter().enumerate() {
        let (x, y) = pos[i];
        let (fill, stroke) = if r.hub {
            ("#fbefe6", "#c77a3f")
        } else {
            ("#eef3fb", "#6b8cc7")
        };
        let title = if r.hub {
            format!("{} (hub)", r.name)
        } else {
            format!("region {}", r.name)
        };
        let line = if r.hub {
            format!("{} planes, {} hub chassis", r.bag_planes, r.bag_chassis)
        } else {
            format!("{} GPUs, {} BAG planes", r.gpus, r.bag_planes)
        };
        let _ = write!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="180" height="46" rx="6" fill="{fill}" stroke="{stroke}"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-weight="bold">{}</text><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            x - 90.0,
            y - 23.0,
            y - 5.0,
            esc(&title),
            y + 13.0,
            esc(&line)
        );
    }
    s.push_str("</svg>");
    Some(s)
}

/// Render the report. Every value from the data (the fabric's, regions', zones' and
/// scenarios' names come from the spec) is HTML-escaped; only the SVGs drawn here, which
/// escape their own text, are inserted as they are.
pub fn render(d: &ReportData) -> Result<String, minijinja::Error> {
    font();
    let mut env = minijinja::Environment::new();
    // minijinja escapes by the template name's extension; say so rather than rely on a name.
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.add_template("report.html", TEMPLATE)?;
    let t = env.get_template("report.html")?;
    t.render(minijinja::context! {
        d => minijinja::Value::from_serialize(d),
        figures => minijinja::Value::from_serialize(crate::summary::figures(d)),
        tier_groups => minijinja::Value::from_serialize(crate::summary::tier_groups(&d.tiers)),
        hierarchy_svg => minijinja::Value::from_safe_string(hierarchy_svg(d)),
        cdf_svg => minijinja::Value::from_safe_string(cdf_svg(d)),
        busbw_svg => minijinja::Value::from_safe_string(busbw_svg(d)),
        utilization_svg => minijinja::Value::from_safe_string(utilization_svg(d)),
        inter_bag_svg => inter_bag_svg(d).map(minijinja::Value::from_safe_string),
        step_svg => step_svg(d).map(minijinja::Value::from_safe_string),
    })
}

#[cfg(test)]
mod tests {
    use super::one_value_cdf;
    use std::collections::BTreeMap;

    #[test]
    fn a_cdf_of_one_value_per_pair_is_a_sentence() {
        let mut cdf = BTreeMap::new();
        cdf.insert("east-west".to_owned(), vec![0.9375; 32]);
        let s = one_value_cdf(&cdf, 32).expect("one value");
        assert!(
            s.contains("32 scenarios") && s.contains("east-west 93.75%"),
            "{s}"
        );
        cdf.insert("east-east".to_owned(), vec![0.5, 0.9375]);
        assert_eq!(
            one_value_cdf(&cdf, 32),
            None,
            "a pair with two values is plotted"
        );
        assert_eq!(one_value_cdf(&BTreeMap::new(), 0), None);
    }
}
