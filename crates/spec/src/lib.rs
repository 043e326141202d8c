//! # aifabric-spec
//!
//! Every input file, read with located errors: fabric specs in YAML -> a validated
//! [`aifabric_model::Fabric`], scenario files, job files.
//!
//! - [`spec`]: the raw, deserialized form (values keep their source location).
//! - [`lower`]: validation and the builders (DSF L1/L2, NSF, RoCE, BAG, inter-BAG).
//! - [`builtin`]: specs shipped in `specs/` and embedded in the binary.
//! - [`scenario`]: scenario files (what failed or is drained).
//! - [`job`]: job files, checked into the workload's plan.
//! - [`cluster`]: cluster files (the jobs running on a fabric and where).
//! - [`slurm`]: Slurm's running jobs (`squeue --json`) imported as a cluster file.
//! - [`ops`]: operations files (a maintenance plan against the running jobs).
//! - [`rates`]: rates files (failure rates and checkpointing for `goodput`).
//!
//! Architecture invariant: no I/O beyond reading the one file asked for; every input problem
//! is a [`SpecError`] naming file, line, column and a fix, never a panic.
//!
//! ```
//! let fabric = aifabric_spec::load("dsf-l1-zone").unwrap();
//! assert!(fabric.devices().len() > 0);
//! let err = aifabric_spec::build_str("my.yaml", "regions: [").unwrap_err();
//! assert_eq!(err.file, "my.yaml");
//! assert!(err.line > 0);
//! ```

pub mod builtin;
pub mod cluster;
pub mod error;
pub mod job;
pub mod lower;
pub mod ops;
pub mod rates;
pub mod scenario;
pub mod slurm;
pub mod spec;

pub use error::{Source, SpecError};

use aifabric_model::Fabric;

/// Parse a spec text. `name` is used in error messages.
pub fn parse(name: &str, text: &str) -> Result<(spec::SpecFile, Source), SpecError> {
    let src = Source {
        name: name.to_owned(),
        text: text.to_owned(),
    };
    let opts = serde_saphyr::options! { with_snippet: false };
    match serde_saphyr::from_str_with_options::<spec::SpecFile>(text, opts) {
        Ok(s) => Ok((s, src)),
        Err(e) => Err(src.from_yaml(&e)),
    }
}

/// Parse and build a spec text.
pub fn build_str(name: &str, text: &str) -> Result<Fabric, SpecError> {
    let (spec, src) = parse(name, text)?;
    lower::build(&spec, &src)
}

/// Build `text` with every inter-BAG entry set to `topology` (planar vs spread comparisons:
/// the two fabrics differ only in that wiring). Errors if the spec has no `inter_bag` links.
pub fn build_inter_bag(
    name: &str,
    text: &str,
    topology: spec::InterBagTopology,
) -> Result<Fabric, SpecError> {
    let (mut spec, src) = parse(name, text)?;
    if spec.inter_bag.is_empty() {
        return Err(src.error_whole(
            "the spec has no `inter_bag` links, so planar and spread are the same fabric",
            Some("compare on a spec with two or more regions joined by `inter_bag`".to_owned()),
        ));
    }
    for ib in &mut spec.inter_bag {
        ib.topology = topology;
    }
    lower::build(&spec, &src)
}

/// Load a spec by built-in name (see [`builtin::names`]) or file path, and build it.
pub fn load(spec: &str) -> Result<Fabric, SpecError> {
    let (name, text) = read(spec)?;
    build_str(&name, &text)
}

/// The text of a spec given by built-in name or path, with the name to use in errors.
pub fn read(spec: &str) -> Result<(String, String), SpecError> {
    if let Some(text) = builtin::get(spec) {
        return Ok((format!("builtin:{spec}"), text.to_owned()));
    }
    aifabric_model::input::read_text(spec.as_ref(), aifabric_model::input::YAML_LIMIT_BYTES)
        .map(|t| (spec.to_owned(), t))
        .map_err(|e| {
            let src = Source {
                name: spec.to_owned(),
                text: String::new(),
            };
            let near = error::did_you_mean(spec, builtin::names());
            let hint = match near {
                Some(n) => format!("did you mean the built-in spec `{n}`?"),
                None => format!(
                    "give a YAML file path or a built-in spec: {}",
                    builtin::names().collect::<Vec<_>>().join(", ")
                ),
            };
            src.error(
                serde_saphyr::Location::UNKNOWN,
                format!("cannot read spec: {e}"),
                Some(hint),
            )
        })
}
