//! The report's drawings made by hand as SVG (bars, boxes and lines plotters has no chart
//! for): the job's step, the tier heat maps, the hierarchy and the inter-BAG view. Each
//! escapes its own text.

use crate::data::ReportData;
use std::fmt::Write;

/// `s` as HTML text, safe in element content and in quoted attribute values (the five
/// characters HTML 5 gives a meaning there, escaped as minijinja's autoescape does).
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#x27;")
}

/// The job's step as stacked horizontal bars, one per run (compute, the pipeline bubble,
/// each collective's exposed time), a legend under them; each part's `<title>` is its value
/// (the browser shows it on hover).
pub(crate) fn step_svg(d: &ReportData) -> Option<String> {
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

/// What a building brings each BAG plane, in words: `102.4 Tb/s per plane`, `96.0-102.4 Tb/s
/// per plane`, with the planes it reaches none of (drained, failed) counted apart.
fn per_plane_text(tbps: &[f64]) -> String {
    let live: Vec<f64> = tbps.iter().copied().filter(|&t| t > 0.0).collect();
    let none = tbps.len() - live.len();
    let (lo, hi) = live
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, c), &t| (a.min(t), c.max(t)));
    let mut s = if live.is_empty() {
        String::new()
    } else if hi - lo < 1e-9 {
        format!("{} per plane", capacity_text(hi))
    } else {
        format!("{}-{} per plane", capacity_text(lo), capacity_text(hi))
    };
    if none > 0 {
        if !s.is_empty() {
            s.push_str(", ");
        }
        let _ = write!(
            s,
            "none to {none} plane{}",
            if none == 1 { "" } else { "s" }
        );
    }
    s
}

/// Buildings built alike (the same zones, GPUs, capacities and ratios toward BAG): drawn as
/// one box `x N`. Each group: its buildings, first first.
fn alike_buildings<'a>(
    d: &ReportData,
    r: &'a crate::data::RegionNode,
) -> Vec<Vec<&'a crate::data::BuildingNode>> {
    let key = |b: &crate::data::BuildingNode| {
        let mut k = String::new();
        let prefix = format!("{}.{}.", r.name, b.name);
        for z in &b.zones {
            let (down, up, ratio) = zone_to_bag(d, z);
            // The zone's name within its building too: the box lists the first's.
            let short = z.name.strip_prefix(&prefix).unwrap_or(&z.name);
            let _ = write!(
                k,
                "{short}/{}/{}/{:.6}/{:.6}/{:.6}/{:?};",
                z.kind, z.gpus, z.uplink_tbps, down, up, ratio
            );
        }
        for p in &b.bag_plane_tbps {
            let _ = write!(k, "{p:.6},");
        }
        k
    };
    let mut groups: Vec<(String, Vec<&crate::data::BuildingNode>)> = Vec::new();
    for b in &r.buildings {
        let k = key(b);
        match groups.iter_mut().find(|g| g.0 == k) {
            Some(g) => g.1.push(b),
            None => groups.push((k, vec![b])),
        }
    }
    groups.into_iter().map(|g| g.1).collect()
}

/// A zone's capacity toward BAG in the report's state (its `l2_to_bag` tier row: down and
/// up, Tb/s, and their ratio), or its links' capacity into BAG when it has no such row.
fn zone_to_bag(d: &ReportData, z: &crate::data::ZoneNode) -> (f64, f64, Option<f64>) {
    d.tiers
        .iter()
        .find(|t| t.tier == "l2_to_bag" && t.scope == z.name)
        .map_or((0.0, z.uplink_tbps, None), |t| {
            (t.down_tbps, t.up_tbps, t.ratio)
        })
}

/// The fabric as a tree, a column per region: its BAG (each plane a square, its capacity
/// from the buildings on hover), a branch from BAG to each building (its capacity into
/// BAG, its oversubscription toward it, per plane), the buildings' zones in their boxes;
/// buildings built alike are one box `x N`.
pub(crate) fn hierarchy_svg(d: &ReportData) -> String {
    let col_w = 480.0;
    let (box_x, zone_h, gap) = (170.0, 18.0, 12.0);
    let groups: Vec<_> = d.hierarchy.iter().map(|r| alike_buildings(d, r)).collect();
    let box_h = |g: &[&crate::data::BuildingNode]| 24.0 + zone_h * g[0].zones.len() as f64;
    let top = 100.0;
    let h = groups
        .iter()
        .map(|gs| top + gs.iter().map(|g| box_h(g) + gap).sum::<f64>())
        .fold(top, f64::max)
        + 10.0;
    let w = (d.hierarchy.len().max(1) as f64) * col_w + 10.0;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    for (i, (r, gs)) in d.hierarchy.iter().zip(&groups).enumerate() {
        let x = 10.0 + i as f64 * col_w;
        let _ = write!(
            s,
            r##"<text x="{x}" y="20" font-size="15" font-weight="bold">region {}: {} GPUs</text>"##,
            esc(&r.name),
            r.gpus
        );
        let bag = r.bag_planes > 0 || r.hub;
        if bag {
            let _ = write!(
                s,
                r##"<rect x="{x}" y="32" width="{}" height="52" fill="#fbefe6" stroke="#c77a3f"/><text x="{}" y="48">{}</text>"##,
                col_w - 20.0,
                x + 6.0,
                esc(&bag_line(r))
            );
            // Each plane a square; a plane no building reaches (drained, failed) hollow, or
            // grey in a region without buildings (a hub's: its planes join regions). Past
            // what fits, the line above says how many there are.
            let planes = r.bag_planes as usize;
            let side = (col_w - 32.0) / planes.max(1) as f64 - 3.0;
            let squares = if side >= 4.0 { planes } else { 0 };
            let side = side.min(18.0);
            for p in 0..squares {
                let tbps: f64 = r
                    .buildings
                    .iter()
                    .map(|b| b.bag_plane_tbps.get(p).copied().unwrap_or(0.0))
                    .sum();
                let (fill, what) = if r.buildings.is_empty() {
                    ("#e0e0e0", "no building under it".to_owned())
                } else if tbps > 0.0 {
                    (
                        "#c77a3f",
                        format!("{} from the buildings", capacity_text(tbps)),
                    )
                } else {
                    ("#fff", "nothing from the buildings".to_owned())
                };
                let _ = write!(
                    s,
                    r##"<rect x="{:.1}" y="58" width="{side:.1}" height="{side:.1}" fill="{fill}" stroke="#c77a3f"><title>plane {p}: {what}</title></rect>"##,
                    x + 6.0 + p as f64 * (side + 3.0),
                );
            }
        } else {
            let _ = write!(s, r##"<text x="{}" y="52">no BAG layer</text>"##, x + 6.0);
        }
        let trunk = x + 24.0;
        let mut y = top;
        let mut last_branch = None;
        for g in gs {
            let b = g[0];
            let bh = box_h(g);
            let bx = x + box_x;
            let label = if g.len() == 1 {
                b.name.clone()
            } else {
                format!("{} and {} more alike (x {})", b.name, g.len() - 1, g.len())
            };
            let names: Vec<&str> = g.iter().map(|b| b.name.as_str()).collect();
            let _ = write!(
                s,
                r##"<rect x="{bx}" y="{y}" width="{}" height="{bh}" fill="#eef3fb" stroke="#6b8cc7"><title>{}</title></rect><text x="{}" y="{}" font-weight="bold">{}</text>"##,
                col_w - box_x - 20.0,
                esc(&names.join(", ")),
                bx + 6.0,
                y + 16.0,
                esc(&label)
            );
            let prefix = format!("{}.{}.", r.name, b.name);
            for (k, z) in b.zones.iter().enumerate() {
                let (name, each) = match z.name.strip_prefix(&prefix) {
                    Some(short) if g.len() > 1 => (short, " each"),
                    _ => (z.name.as_str(), ""),
                };
                let _ = write!(
                    s,
                    r##"<text x="{}" y="{}">{} ({}): {} GPUs{each}</text>"##,
                    bx + 14.0,
                    y + 34.0 + zone_h * k as f64,
                    esc(name),
                    esc(&z.kind),
                    z.gpus
                );
            }
            if bag {
                // The branch into BAG: the building's capacity, its ratio, per plane.
                let (down, up) = b.zones.iter().fold((0.0, 0.0), |(a, c), z| {
                    let (dn, u, _) = zone_to_bag(d, z);
                    (a + dn, c + u)
                });
                let ratio = if up > 0.0 && down > 0.0 {
                    format!(" · {:.2}:1", down / up)
                } else if up > 0.0 {
                    String::new()
                } else {
                    " · none left".to_owned()
                };
                let per_plane = per_plane_text(&b.bag_plane_tbps);
                let each = if g.len() > 1 { " each" } else { "" };
                let by = y + 16.0;
                let _ = write!(
                    s,
                    r##"<line x1="{trunk}" y1="{by}" x2="{bx}" y2="{by}" stroke="#c77a3f" stroke-width="3"><title>{}: {} into BAG{}</title></line><text x="{}" y="{}" font-size="11" fill="#8a4b1c">{}{each}{}</text><text x="{}" y="{}" font-size="11" fill="#8a4b1c">{}</text>"##,
                    esc(&label),
                    capacity_text(up),
                    esc(&ratio),
                    trunk + 6.0,
                    by - 5.0,
                    capacity_text(up),
                    esc(&ratio),
                    trunk + 6.0,
                    by + 13.0,
                    esc(&per_plane)
                );
                last_branch = Some(by);
            }
            y += bh + gap;
        }
        if let Some(end) = last_branch {
            let _ = write!(
                s,
                r##"<line x1="{trunk}" y1="84" x2="{trunk}" y2="{end}" stroke="#c77a3f" stroke-width="3"/>"##
            );
        }
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
pub(crate) fn inter_bag_svg(d: &ReportData) -> Option<String> {
    let n = d.hierarchy.len();
    if n < 2 {
        return None;
    }
    let hubs: Vec<usize> = (0..n).filter(|&i| d.hierarchy[i].hub).collect();
    let ring: Vec<usize> = (0..n).filter(|&i| !d.hierarchy[i].hub).collect();
    // Two regions face each other on one line: no room kept for a ring.
    let flat = hubs.is_empty() && ring.len() == 2;
    let (w, h) = (900.0f64, if flat { 90.0 } else { 460.0f64 });
    // An ellipse wide enough that a label between a box and the hub clears both.
    let (cx, cy, rx, ry) = (w / 2.0, h / 2.0, 330.0, if flat { 0.0 } else { 170.0 });
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

/// A share 0-1 as a heat color, white to dark red.
fn heat(x: f64) -> String {
    let x = x.clamp(0.0, 1.0);
    let mix = |a: f64, b: f64| (a + (b - a) * x).round() as u8;
    format!(
        "rgb({},{},{})",
        mix(255.0, 153.0),
        mix(245.0, 0.0),
        mix(240.0, 13.0)
    )
}

/// The job's tiers as heat maps, one per run (bar): a row per tier, a column per collective,
/// each cell colored by the tier's mean utilization during the collective and giving it, its
/// 99th percentile and highest on hover. Empty without a job or tiers.
pub(crate) fn heat_svgs(d: &ReportData) -> Vec<String> {
    let Some(job) = &d.job else {
        return Vec::new();
    };
    let (label_w, cell_w, cell_h, head_h) = (110.0f64, 84.0f64, 20.0f64, 44.0f64);
    let mut out = Vec::new();
    for b in job.bars.iter().filter(|b| !b.tiers.is_empty()) {
        let mut cols: Vec<&str> = Vec::new();
        let mut rows: Vec<&str> = Vec::new();
        for t in &b.tiers {
            if !cols.contains(&t.collective.as_str()) {
                cols.push(&t.collective);
            }
            if !rows.contains(&t.tier.as_str()) {
                rows.push(&t.tier);
            }
        }
        rows.sort_unstable();
        let w = label_w + cell_w * cols.len() as f64 + 10.0;
        let h = head_h + cell_h * rows.len() as f64 + 6.0;
        let mut s = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11"><text x="0" y="14" font-size="13" font-weight="bold">{}</text>"#,
            esc(&b.label)
        );
        for (c, name) in cols.iter().enumerate() {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                label_w + cell_w * (c as f64 + 0.5),
                head_h - 6.0,
                esc(name)
            );
        }
        for (r, tier) in rows.iter().enumerate() {
            let y = head_h + cell_h * r as f64;
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                label_w - 6.0,
                y + 14.0,
                esc(tier)
            );
            for (c, col) in cols.iter().enumerate() {
                let x = label_w + cell_w * c as f64;
                let cell = b
                    .tiers
                    .iter()
                    .find(|t| t.tier == *tier && t.collective == *col);
                let (fill, text, title) = match cell {
                    Some(t) => (
                        heat(t.mean),
                        format!("{:.0}%", 100.0 * t.mean),
                        format!(
                            "{tier} during {col} ({}): mean {:.1}%, p99 {:.1}%, max {:.1}% of {} resources",
                            b.label,
                            100.0 * t.mean,
                            100.0 * t.p99,
                            100.0 * t.max,
                            t.resources
                        ),
                    ),
                    None => (
                        "#f3f3f3".to_owned(),
                        "-".to_owned(),
                        format!("{col} does not use {tier}"),
                    ),
                };
                let ink = if cell.is_some_and(|t| t.mean > 0.55) {
                    "#fff"
                } else {
                    "#222"
                };
                let _ = write!(
                    s,
                    r##"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}" stroke="#fff"><title>{}</title></rect><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="{ink}" pointer-events="none">{text}</text>"##,
                    cell_w,
                    cell_h,
                    esc(&title),
                    x + cell_w / 2.0,
                    y + 14.0
                );
            }
        }
        s.push_str("</svg>");
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::per_plane_text;

    #[test]
    fn a_building_s_share_per_plane_in_words() {
        assert_eq!(per_plane_text(&[102.4; 16]), "102.4 Tb/s per plane");
        let mut v = vec![102.4; 16];
        v[0] = 0.0;
        assert_eq!(per_plane_text(&v), "102.4 Tb/s per plane, none to 1 plane");
        v[1] = 96.0;
        v[2] = 0.0;
        assert_eq!(
            per_plane_text(&v),
            "96.0 Tb/s-102.4 Tb/s per plane, none to 2 planes"
        );
        assert_eq!(per_plane_text(&[0.0, 0.0]), "none to 2 planes");
        assert_eq!(per_plane_text(&[]), "");
    }
}
