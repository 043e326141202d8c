//! Scenarios in YAML: the same selectors as the CLI's `--fail`, `--drain`, `--drain-soft`.
//!
//! ```yaml
//! # what-if: lose BAG plane 3 in the west while draining plane 1 gracefully
//! fail: [west.bag.plane3]
//! drain: []
//! drain_soft: [west.bag.plane1]
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
