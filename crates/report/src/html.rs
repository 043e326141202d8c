//! The HTML report: one self-contained file (inline SVG, no scripts, no network), rendered
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

/// Capacity retained CDF: x = capacity retained, y = share of scenarios at or below it.
fn cdf_svg(d: &ReportData) -> String {
    svg_plot(|root| {
        let mut c = ChartBuilder::on(root)
            .caption(
                format!("Capacity retained, {} scenarios", d.failures.scenarios),
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
        for (i, (pair, v)) in d.failures.cdf.iter().enumerate().take(COLORS.len()) {
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

/// busBW vs message size per mode, log x.
fn busbw_svg(d: &ReportData) -> String {
    svg_plot(|root| {
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
            .caption(format!("busBW, {}", d.collective), ("sans-serif", 16))
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
        }
        legend(&mut c)
    })
}

/// Link-utilization histogram of the largest size, one bar group per mode.
fn utilization_svg(d: &ReportData) -> String {
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

/// The hierarchy as boxes: a column per region, its buildings and zones stacked, BAG below.
fn hierarchy_svg(d: &ReportData) -> String {
    let col_w = 360.0;
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
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
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
                let _ = write!(
                    s,
                    r##"<text x="{}" y="{}">{} ({}): {} GPUs, {:.1} Tb/s to BAG</text>"##,
                    x + 18.0,
                    y + 14.0,
                    esc(&z.name),
                    esc(&z.kind),
                    z.gpus,
                    z.uplink_tbps
                );
                y += row_h;
            }
        }
        let by = 45.0 + rows * row_h;
        let _ = write!(
            s,
            r##"<rect x="{x}" y="{by}" width="{}" height="40" fill="#fbefe6" stroke="#c77a3f"/><text x="{}" y="{}">BAG: {} planes, {} chassis</text>"##,
            col_w - 20.0,
            x + 6.0,
            by + 24.0,
            r.bag_planes,
            r.bag_chassis
        );
    }
    s.push_str("</svg>");
    s
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
        hierarchy_svg => minijinja::Value::from_safe_string(hierarchy_svg(d)),
        cdf_svg => minijinja::Value::from_safe_string(cdf_svg(d)),
        busbw_svg => minijinja::Value::from_safe_string(busbw_svg(d)),
        utilization_svg => minijinja::Value::from_safe_string(utilization_svg(d)),
    })
}
