//! The HTML report: one self-contained file (inline SVG, no network; one inline script that
//! sorts and filters tables, the page whole without it), rendered
//! from [`ReportData`] with a minijinja template; plots are drawn by plotters into SVG with the
//! DejaVu Sans font shipped in `assets/` (plotters measures text with it).

use crate::data::ReportData;
use crate::drawings::{esc, heat_svgs, hierarchy_svg, inter_bag_svg, step_svg};
use plotters::coord::Shift;
use plotters::prelude::*;

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

/// `svg` with `marks` (SVG elements, each with a `<title>` the browser shows on hover) drawn
/// last, over the plot.
fn with_marks(svg: String, marks: Vec<String>) -> String {
    match svg.rfind("</svg>") {
        Some(end) => format!("{}{}{}", &svg[..end], marks.concat(), &svg[end..]),
        None => svg,
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
fn cdf_svg(failures: Option<&crate::data::FailureSection>) -> String {
    let Some(failures) = failures else {
        return String::new();
    };
    if let Some(sentence) = one_value_cdf(&failures.cdf, failures.scenarios) {
        return format!("<p class=\"degenerate\">{}</p>", esc(&sentence));
    }
    // Each step of each line, with its values: a dot whose title the browser shows on hover.
    let marks = std::cell::RefCell::new(Vec::new());
    let svg = svg_plot(|root| {
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
            for (x, share) in cdf_steps(v, MAX_MARKS) {
                let (px, py) = c.backend_coord(&(x, share));
                marks.borrow_mut().push(format!(
                    r##"<circle cx="{px}" cy="{py}" r="4" fill="{}"><title>{}: {:.1}% of scenarios keep at most {:.2}% of routed capacity</title></circle>"##,
                    hex(color),
                    esc(pair),
                    100.0 * share,
                    100.0 * x
                ));
            }
        }
        legend(&mut c)
    });
    with_marks(svg, marks.into_inner())
}

/// Hover marks a plot draws at most per series.
const MAX_MARKS: usize = 200;

/// A sorted sample's CDF as the points where it steps up: each distinct value with the share
/// of the sample at or below it; at most `max` of them, evenly spaced, the last always kept.
fn cdf_steps(sorted: &[f64], max: usize) -> Vec<(f64, f64)> {
    let n = sorted.len() as f64;
    let steps: Vec<(f64, f64)> = sorted
        .iter()
        .enumerate()
        .filter(|&(k, x)| sorted.get(k + 1) != Some(x))
        .map(|(k, &x)| (x, (k + 1) as f64 / n))
        .collect();
    if steps.len() <= max {
        return steps;
    }
    let stride = steps.len().div_ceil(max);
    let last = steps.len() - 1;
    steps
        .into_iter()
        .enumerate()
        .filter(|&(k, _)| k % stride == 0 || k == last)
        .map(|(_, p)| p)
        .collect()
}

/// A color as CSS `rgb()`.
fn hex(c: RGBColor) -> String {
    format!("rgb({},{},{})", c.0, c.1, c.2)
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
                dots.borrow_mut().push(format!(
                    r##"<circle cx="{px}" cy="{py}" r="4" fill="{}"><title>{}: {:.2} GB/s at {x} B</title></circle>"##,
                    hex(color),
                    esc(&b.lb),
                    y
                ));
            }
        }
        legend(&mut c)
    });
    with_marks(svg, dots.into_inner())
}

/// Link-utilization histogram of the largest size, one bar group per mode (empty when the
/// collectives failed).
fn utilization_svg(d: &ReportData) -> String {
    if d.busbw.is_empty() {
        return String::new();
    }
    let marks = std::cell::RefCell::new(Vec::new());
    let svg = svg_plot(|root| {
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
            // Each bar's values on hover: a clear box over it, as tall as the plot (a bar of
            // a few resources is a few pixels high).
            for (k, &n) in b.utilization_histogram.iter().enumerate() {
                if n == 0 {
                    continue;
                }
                let x0 = k as f64 * 5.0 + i as f64 * w;
                let (l, t) = c.backend_coord(&(x0, top));
                let (r, btm) = c.backend_coord(&(x0 + w, 0.0));
                marks.borrow_mut().push(format!(
                    r##"<rect x="{l}" y="{t}" width="{}" height="{}" fill="#000" fill-opacity="0"><title>{}: {n} resources at {}-{}% utilization</title></rect>"##,
                    (r - l).max(1),
                    (btm - t).max(1),
                    esc(&b.lb),
                    5 * k,
                    5 * (k + 1)
                ));
            }
        }
        legend(&mut c)
    });
    with_marks(svg, marks.into_inner())
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
        cdf_svg => minijinja::Value::from_safe_string(cdf_svg(d.failures.as_ref())),
        busbw_svg => minijinja::Value::from_safe_string(busbw_svg(d)),
        utilization_svg => minijinja::Value::from_safe_string(utilization_svg(d)),
        inter_bag_svg => inter_bag_svg(d).map(minijinja::Value::from_safe_string),
        step_svg => step_svg(d).map(minijinja::Value::from_safe_string),
        heat_svgs => heat_svgs(d)
            .into_iter()
            .map(minijinja::Value::from_safe_string)
            .collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::{cdf_steps, cdf_svg, one_value_cdf};
    use std::collections::BTreeMap;

    #[test]
    fn each_step_of_a_cdf_gives_its_values_on_hover() {
        let mut cdf = BTreeMap::new();
        cdf.insert("east<->west".to_owned(), vec![0.5, 0.9375, 0.9375, 1.0]);
        let f = crate::data::FailureSection {
            sweep: "single:plane".into(),
            starting_state: None,
            scenarios: 4,
            cdf,
            worst: Vec::new(),
            worst_per_class: Vec::new(),
            pair_tables: Vec::new(),
            planar_vs_spread: None,
            planar_vs_spread_pairs: None,
            planar_vs_spread_note: None,
        };
        super::font();
        let svg = cdf_svg(Some(&f));
        assert_eq!(svg.matches("<title>").count(), 3, "{svg}");
        assert!(
            svg.contains(
                "<title>east&lt;-&gt;west: 75.0% of scenarios keep at most 93.75% of routed capacity</title>"
            ),
            "{svg}"
        );
        assert_eq!(cdf_svg(None), "");
    }

    #[test]
    fn a_cdf_steps_up_at_each_distinct_value() {
        // 4 samples: 0.5 twice, 0.75, 1.0: steps at 50%, 75%, 100%.
        assert_eq!(
            cdf_steps(&[0.5, 0.5, 0.75, 1.0], 10),
            vec![(0.5, 0.5), (0.75, 0.75), (1.0, 1.0)]
        );
        // 1,000 distinct values thinned to at most 100, the last (100%) kept.
        let v: Vec<f64> = (1..=1000).map(|k| k as f64 / 1000.0).collect();
        let s = cdf_steps(&v, 100);
        assert!(s.len() <= 101 && s.len() >= 90, "{}", s.len());
        assert_eq!(s.last(), Some(&(1.0, 1.0)));
        assert!(s.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
    }

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
