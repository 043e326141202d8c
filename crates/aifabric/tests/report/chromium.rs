//! The report as a browser shows it: headless Chromium renders `report.html` to a screenshot
//! and dumps its DOM. Skipped, with a message, where Chromium is not installed (`.ci/run`
//! installs Debian's `chromium`); `AIFABRIC_CHROMIUM` names another binary.

use aifabric::ReportOptions;
use aifabric_report::html::{render, SECTIONS};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("AIFABRIC_CHROMIUM") {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
    .find(|p| p.is_file())
}

/// Run the browser headless on `page` with `args`, at most 120 s; its stdout.
fn headless(bin: &Path, page: &Path, args: &[&str]) -> Vec<u8> {
    let out_file = page.with_extension("stdout");
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(std::fs::File::create(&out_file).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium exited with {status}");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::read(out_file).unwrap()
}

/// The report `page` as a window of `width` x `height` CSS pixels shows it, measured by a
/// probe page beside it (the report itself has no script): its content width against the
/// window's, the elements past the window's right edge, and where the summary ends.
fn layout(bin: &Path, page: &Path, width: u32, height: u32) -> serde_json::Value {
    let probe = page.with_file_name(format!("probe-{width}.html"));
    let name = page.file_name().unwrap().to_str().unwrap();
    std::fs::write(
        &probe,
        format!(
            r#"<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="{name}" style="width:{width}px;height:{height}px;border:0"></iframe>
<pre id="out">pending</pre>
<script>
document.getElementById('f').addEventListener('load', function () {{
  var d = this.contentDocument, w = d.documentElement.clientWidth, wide = [];
  d.querySelectorAll('body *').forEach(function (e) {{
    var b = e.getBoundingClientRect();
    if (b.right > w + 1 && wide.length < 8) wide.push(e.tagName + ':' + Math.round(b.right));
  }});
  // The page's script: a click on the worst scenarios' "scenario" header sorts them by
  // name up, a second click down.
  var t = d.querySelector('#worst + p + table'), col = function () {{
    return Array.prototype.slice.call(t.rows, 1).map(function (r) {{
      return r.cells[0].textContent.trim(); }}); }};
  var ordered = function (v, up) {{
    return v.every(function (x, i) {{
      return i == 0 || (up ? v[i - 1].localeCompare(x) <= 0 : v[i - 1].localeCompare(x) >= 0); }}); }};
  t.rows[0].cells[0].click(); var up = col();
  t.rows[0].cells[0].click(); var down = col();
  // Sections the browser shows (almost) nothing in.
  var empty = [];
  d.querySelectorAll('section').forEach(function (x) {{
    if (x.innerText.trim().length < 40) empty.push(x.id); }});
  document.getElementById('out').textContent = JSON.stringify({{
    empty: empty,
    scroll_width: d.documentElement.scrollWidth, client_width: w, wide: wide,
    summary_bottom: d.getElementById('summary').getBoundingClientRect().bottom,
    figures: d.querySelectorAll('#summary .figure').length,
    rows: up.length, sorted: ordered(up, true) && ordered(down, false),
    moved: up[0] != down[0]}});
}});
</script></body></html>"#
        ),
    )
    .unwrap();
    let dom = String::from_utf8(headless(
        bin,
        &probe,
        &[
            "--allow-file-access-from-files",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ],
    ))
    .unwrap();
    let start = dom.find("<pre id=\"out\">").expect("the probe's output") + 14;
    let end = start + dom[start..].find("</pre>").unwrap();
    serde_json::from_str(&dom[start..end].replace("&quot;", "\""))
        .unwrap_or_else(|e| panic!("the probe said {:?}: {e}", &dom[start..end]))
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let be = |i: usize| u32::from_be_bytes(png[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn chromium_renders_every_section_of_the_report() {
    let Some(bin) = chromium() else {
        eprintln!(
            "skipped: no chromium on PATH (install Debian's `chromium`, or set AIFABRIC_CHROMIUM)"
        );
        return;
    };
    let text = include_str!("../../../../examples/specs/hub-and-spoke.yaml");
    let f = aifabric_spec::build_str("hub-and-spoke", text).unwrap();
    let opts = ReportOptions {
        gpus: Some(64),
        sizes: vec![1 << 20, 1 << 24],
        spec_text: Some(("hub-and-spoke".into(), text.into())),
        pair_tables: true,
        // A job, so that its step and its tiers' heat map are drawn too.
        job: Some(aifabric::ReportJob {
            it: aifabric_spec::job::load(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../examples/jobs/small-64.yaml"
            ))
            .unwrap(),
            placement: Some(aifabric::Placement::Spread),
            scenario: None,
            mitigation: None,
            ran: Vec::new(),
        }),
        ..Default::default()
    };
    let html = render(&super::data(&f, &opts)).unwrap();
    let dir = std::env::temp_dir().join(format!("aifabric-chromium-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    std::fs::write(&page, &html).unwrap();
    let blank = dir.join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();

    // Every section, and every drawing, is in the DOM the browser built.
    let dom = String::from_utf8(headless(&bin, &page, &["--dump-dom"])).unwrap();
    for id in SECTIONS.iter().chain(&[
        "worst",
        "per-class",
        "pair-tables",
        "job",
        "job-tiers",
        "job-links",
    ]) {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "section {id} missing"
        );
    }
    // Every plot's hover values (an SVG `<title>` per point, bar, cell or plane) as the
    // browser built them, beside the page's own title; buildings built alike on one row.
    assert!(dom.matches("<title>").count() > 10);
    assert_eq!(
        dom.matches("<title>").count(),
        html.matches("<title>").count(),
        "every hover title kept"
    );
    assert!(dom.contains("more alike (x "));
    // Seven drawings (the job's step and its heat map among them), a plot of one value per
    // pair said in a sentence instead.
    assert_eq!(
        dom.matches("<svg").count() + dom.matches("class=\"degenerate\"").count(),
        7,
        "seven drawings"
    );

    // The screenshot has the window's size and holds far more than a blank page.
    let shot = |p: &Path, name: &str| {
        let png = dir.join(name);
        headless(
            &bin,
            p,
            &[
                &format!("--screenshot={}", png.display()),
                "--window-size=1280,3000",
            ],
        );
        std::fs::read(png).unwrap()
    };
    let (report, empty) = (shot(&page, "report.png"), shot(&blank, "blank.png"));
    assert_eq!(png_size(&report), (1280, 3000));
    assert!(
        report.len() > 4 * empty.len(),
        "the screenshot looks empty: {} bytes, a blank page {}",
        report.len(),
        empty.len()
    );

    // At a desktop's width and a narrow one: nothing runs past the window's right edge, and
    // the summary's figures are on the first screen.
    for (width, height) in [(1400, 900), (800, 900)] {
        let l = layout(&bin, &page, width, height);
        assert!(
            l["scroll_width"].as_f64() <= l["client_width"].as_f64()
                && l["wide"].as_array().is_some_and(|w| w.is_empty()),
            "{width} px: overflow {l}"
        );
        assert!(l["figures"].as_u64().unwrap() >= 4, "{l}");
        assert!(
            l["empty"].as_array().is_some_and(|e| e.is_empty()),
            "{width} px: sections without content: {l}"
        );
        assert!(
            l["rows"].as_u64().unwrap() >= 2 && l["sorted"] == true && l["moved"] == true,
            "the page's sort: {l}"
        );
        assert!(
            l["summary_bottom"].as_f64().unwrap() <= f64::from(height),
            "{width} px: the summary ends below the first screen: {l}"
        );
        let png = dir.join(format!("report-{width}.png"));
        headless(
            &bin,
            &page,
            &[
                &format!("--screenshot={}", png.display()),
                &format!("--window-size={width},{height}"),
            ],
        );
        assert_eq!(png_size(&std::fs::read(png).unwrap()), (width, height));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
