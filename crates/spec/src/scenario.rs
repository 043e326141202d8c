//! Scenarios in YAML: the same selectors as the CLI's `--fail`, `--drain`, `--drain-soft`.
//!
//! ```yaml
//! # what-if: lose BAG plane 3 in the west while draining plane 1 gracefully
//! fail: [west.bag.plane3]
//! drain: []
//! drain_soft: [west.bag.plane1]
//! ```
//!
//! The network as built (`aifabric import` writes it) also lists links that run at another
//! speed than planned, each by its link selector:
//!
//! ```yaml
//! fail: ["east.dc1.nsf.rtsw0--east.dc1.nsf.ftsw3#0"]
//! link_speeds:
//!   - {link: "east.dc1.nsf.rtsw1--east.dc1.nsf.ftsw0#0", gbps: 200}
//! ```

use crate::error::{Source, SpecError};
use crate::spec::S;
use aifabric_model::{Fabric, Scenario};
use serde::Deserialize;

/// What a selector may be, for hints.
pub const SELECTOR_HINT: &str =
    "selectors are name prefixes (`east.bag.plane3`), bundles `A--B[#n]`, `pd:NAME` or `srg:NAME`";

/// A scenario file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Failed devices or links.
    #[serde(default)]
    pub fail: Vec<S<String>>,
    /// Hard-drained.
    #[serde(default)]
    pub drain: Vec<S<String>>,
    /// Soft-drained.
    #[serde(default)]
    pub drain_soft: Vec<S<String>>,
    /// Links running at another speed than planned ([`apply_link_speeds`]).
    #[serde(default)]
    pub link_speeds: Vec<LinkSpeed>,
}

/// A link running at another speed than planned.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpeed {
    /// The links: a bundle `A--B` or one member `A--B#k`.
    pub link: S<String>,
    /// Their speed, Gb/s per direction.
    pub gbps: S<f64>,
}

/// Set the speed of the links `file.link_speeds` names in `f` (the plan becomes the
/// network as built); a selector that names no link, or a speed that is not a positive
/// number of Gb/s, is an error at its place in the file.
pub fn apply_link_speeds(
    f: &mut Fabric,
    file: &ScenarioFile,
    src: &Source,
) -> Result<(), SpecError> {
    for ls in &file.link_speeds {
        let gbps = ls.gbps.value;
        let mbps = gbps * 1e3;
        if !(mbps.is_finite() && mbps >= 1.0 && mbps <= f64::from(u32::MAX)) {
            return Err(src.error(
                ls.gbps.referenced,
                format!("link speed {gbps} Gb/s is not a speed a link runs at"),
                Some("give Gb/s per direction, e.g. `gbps: 400`".to_owned()),
            ));
        }
        let links = match f.select(&ls.link.value) {
            Ok(aifabric_model::Selection::Links(links)) => links,
            Ok(_) => {
                return Err(src.error(
                    ls.link.referenced,
                    format!("`{}` names devices, not links", ls.link.value),
                    Some("name links as a bundle `A--B` or one member `A--B#k`".to_owned()),
                ))
            }
            Err(e) => {
                return Err(src.error(
                    ls.link.referenced,
                    format!("selector `{}`: {}", e.selector, e.problem),
                    Some(SELECTOR_HINT.to_owned()),
                ))
            }
        };
        for l in links {
            f.set_link_capacity(l, mbps.round() as u32);
        }
    }
    Ok(())
}

/// Parse a scenario file's text.
pub fn parse_scenario(name: &str, text: &str) -> Result<(ScenarioFile, Source), SpecError> {
    let src = Source {
        name: name.to_owned(),
        text: text.to_owned(),
    };
    let opts = serde_saphyr::options! { with_snippet: false };
    match serde_saphyr::from_str_with_options::<ScenarioFile>(text, opts) {
        Ok(s) => Ok((s, src)),
        Err(e) => Err(src.from_yaml_in(&e, crate::error::FileKind::Scenario)),
    }
}

/// Read and parse a scenario file.
pub fn load_scenario(path: &str) -> Result<(ScenarioFile, Source), SpecError> {
    let text = Source::read_yaml(
        path,
        "cannot read scenario",
        "give the path of a YAML file with `fail`, `drain`, `drain_soft` lists",
    )?;
    parse_scenario(path, &text)
}

/// Add a scenario file's selections to `into`; a selector that matches nothing is an error
/// at its place in the file.
pub fn apply_scenario(
    f: &Fabric,
    file: &ScenarioFile,
    src: &Source,
    into: &mut Scenario,
) -> Result<(), SpecError> {
    apply_selectors(f, [&file.fail, &file.drain, &file.drain_soft], src, into)
}

/// Add the selections of `[fail, drain, drain_soft]` lists (a scenario file's, an
/// operation's) to `into`, each error at its selector.
pub(crate) fn apply_selectors(
    f: &Fabric,
    [fail, drain, drain_soft]: [&[S<String>]; 3],
    src: &Source,
    into: &mut Scenario,
) -> Result<(), SpecError> {
    for (list, mask) in [
        (fail, &mut into.failed),
        (drain, &mut into.drained_hard),
        (drain_soft, &mut into.drained_soft),
    ] {
        for sel in list {
            select_into(f, sel, src, mask)?;
        }
    }
    Ok(())
}

/// Mark what selector `sel` selects in `mask`; one that matches nothing is an error at its
/// place in `src`.
pub(crate) fn select_into(
    f: &Fabric,
    sel: &S<String>,
    src: &Source,
    mask: &mut aifabric_model::FailureMask,
) -> Result<(), SpecError> {
    let selection = f.select(&sel.value).map_err(|e| {
        src.error(
            sel.referenced,
            format!("selector `{}`: {}", e.selector, e.problem),
            Some(SELECTOR_HINT.to_owned()),
        )
    })?;
    selection.apply_to(mask);
    Ok(())
}
