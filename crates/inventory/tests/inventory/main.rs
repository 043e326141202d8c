//! The integration tests of `aifabric-inventory`, one binary: the drift of a NetBox export
//! (CSV) from its plan, and the same inventory from NetBox's API and `lldpctl`'s JSON.

mod drift;
mod json;

use aifabric_model::Fabric;
use aifabric_report::export::{write, Format};
use std::path::Path;

/// The two-region, four-plane fixture.
fn plan() -> Fabric {
    aifabric_spec::build_str(
        "planes.yaml",
        aifabric_fixtures::specs::TWO_REGIONS_NSF_4_PLANES_PLANAR,
    )
    .expect("fixture")
}

/// The plan's NetBox CSV export in `dir`.
fn export(f: &Fabric, dir: &Path) {
    for name in Format::Netbox.files() {
        let mut out = Vec::new();
        write(f, Format::Netbox, name, &mut out).expect("export");
        std::fs::write(dir.join(name), out).unwrap();
    }
}

/// The lines of `dir/file`.
fn lines(dir: &Path, file: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(file))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `lines` as `dir/file`.
fn put(dir: &Path, file: &str, lines: &[String]) {
    std::fs::write(dir.join(file), lines.join("\n") + "\n").unwrap();
}

/// `cables.csv`'s lines damaged: the cables of lines 20 and 30 swapped at their B ends,
/// those of lines 5 and 9 gone.
fn damage(cables: &mut Vec<String>) {
    let cols = |s: &str| s.split(',').map(str::to_owned).collect::<Vec<_>>();
    let (c5, c9) = (cables[5].clone(), cables[9].clone());
    let (mut x, mut y) = (cols(&cables[20]), cols(&cables[30]));
    for k in 3..6 {
        std::mem::swap(&mut x[k], &mut y[k]);
    }
    cables[20] = x.join(",");
    cables[30] = y.join(",");
    cables.retain(|c| *c != c5 && *c != c9);
}
