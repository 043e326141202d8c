//! Rates files: failure rates and checkpointing for `aifabric goodput`, read with located
//! errors into an [`aifabric_workload::interruptions::Rates`]. Every field is optional; what
//! is not given keeps its default (the Llama 3 rates, see
//! [`aifabric_workload::interruptions`]).
//!
//! ```yaml
//! # Failure rates, interruptions per day.
//! per_gpu_per_day:          # host-side classes, per GPU (gpu, hbm3, software, nic, cpu, ...)
//!   gpu: 1.5e-4
//!   software: 0                # e.g. a software stack known to be stable
//! per_element_per_day:      # network elements whose failure isolates a GPU
//!   switch: 3.0e-5
//!   link: 3.0e-5
//! srgs_per_day:             # the spec's named shared-risk groups (`srgs:`), per group
//!   conduit-a: 0.002
//! checkpoint: { write_s: 60, restart_s: 600 }   # every job's, unless its own is given
//! jobs:                     # per job (names of the cluster file), either field
//!   llama3-405b-16k: { write_s: 30 }
//! ```

use crate::error::{FileKind, Source, SpecError};
use crate::spec::S;
use aifabric_model::{did_you_mean, Fabric};
use aifabric_workload::interruptions::{Checkpointing, Rates, LINK, SWITCH};
use serde::Deserialize;
use serde_saphyr::Location;
use std::collections::HashMap;

/// A rates file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatesFile {
    /// Host-side classes, per GPU per day.
    #[serde(default)]
    pub per_gpu_per_day: HashMap<S<String>, S<f64>>,
    /// `switch` and `link`, per element per day.
    #[serde(default)]
    pub per_element_per_day: HashMap<S<String>, S<f64>>,
    /// Named SRGs, per group per day.
    #[serde(default)]
    pub srgs_per_day: HashMap<S<String>, S<f64>>,
    /// Every job's checkpointing.
    #[serde(default)]
    pub checkpoint: Option<CheckpointEntry>,
    /// Per job checkpointing, by the cluster file's names.
    #[serde(default)]
    pub jobs: HashMap<S<String>, CheckpointEntry>,
}

/// Checkpoint write and restart times, either or both.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointEntry {
    /// Time to write a checkpoint, seconds.
    #[serde(default)]
    pub write_s: Option<S<f64>>,
    /// Time from an interruption to training again, seconds.
    #[serde(default)]
    pub restart_s: Option<S<f64>>,
}

/// Parse a rates file's text.
pub fn parse_rates(name: &str, text: &str) -> Result<(RatesFile, Source), SpecError> {
    let src = Source {
        name: name.to_owned(),
        text: text.to_owned(),
    };
    let opts = serde_saphyr::options! { with_snippet: false };
    match serde_saphyr::from_str_with_options::<Option<RatesFile>>(text, opts) {
        Ok(r) => Ok((r.unwrap_or_default(), src)),
        Err(e) => Err(src.from_yaml_in(&e, FileKind::Rates)),
    }
}

/// Read a rates file and check it against the fabric (its named SRGs) and the jobs' names.
pub fn load_rates(f: &Fabric, jobs: &[&str], path: &str) -> Result<Rates, SpecError> {
    let text = Source::read_yaml(
        path,
        "cannot read the rates file",
        "give the path of a rates YAML file, e.g. examples/rates/llama3.yaml",
    )?;
    let (file, src) = parse_rates(path, &text)?;
    resolve_rates(f, jobs, &file, &src)
}

/// A map's entries in file order (YAML maps are read into a hash map).
fn in_order<V>(m: &HashMap<S<String>, V>) -> Vec<(&S<String>, &V)> {
    let mut v: Vec<_> = m.iter().collect();
    v.sort_by_key(|(k, _)| (k.referenced.line(), k.referenced.column()));
    v
}

/// A rate: finite and not negative.
fn rate(src: &Source, v: &S<f64>, what: &str) -> Result<f64, SpecError> {
    if v.value.is_finite() && v.value >= 0.0 {
        Ok(v.value)
    } else {
        Err(src.error(
            v.referenced,
            format!("{what} must be a number of interruptions per day, 0 or more"),
            Some("write e.g. `1.5e-4`; 0 turns the class off".into()),
        ))
    }
}

/// An unknown name at `at`: the message and the closest valid name.
fn unknown<'a>(
    src: &Source,
    at: Location,
    what: &str,
    name: &str,
    valid: impl IntoIterator<Item = &'a str> + Clone,
) -> SpecError {
    let list: Vec<&str> = valid.clone().into_iter().collect();
    let hint = match did_you_mean(name, valid) {
        Some(n) => format!("did you mean `{n}`?"),
        None if list.is_empty() => format!("there are no {what}s to name here"),
        None => format!("{what}s: {}", list.join(", ")),
    };
    src.error(at, format!("unknown {what} `{name}`"), Some(hint))
}

/// Resolve a parsed rates file: the defaults with the file's values over them.
pub fn resolve_rates(
    f: &Fabric,
    jobs: &[&str],
    file: &RatesFile,
    src: &Source,
) -> Result<Rates, SpecError> {
    let mut r = Rates {
        source: src.name.clone(),
        ..Rates::default()
    };
    for (k, v) in in_order(&file.per_gpu_per_day) {
        let known: Vec<&str> = r.per_gpu_per_day.iter().map(|(n, _)| n.as_str()).collect();
        let Some(i) = known.iter().position(|n| *n == k.value) else {
            let mut e = unknown(
                src,
                k.referenced,
                "host-side class",
                &k.value,
                known.iter().copied(),
            );
            if k.value == SWITCH || k.value == LINK {
                e.hint = Some(format!("`{}` goes under `per_element_per_day`", k.value));
            }
            return Err(e);
        };
        r.per_gpu_per_day[i].1 = rate(src, v, &format!("`{}`", k.value))?;
    }
    for (k, v) in in_order(&file.per_element_per_day) {
        let value = rate(src, v, &format!("`{}`", k.value))?;
        match k.value.as_str() {
            SWITCH => r.switch_per_day = value,
            LINK => r.link_per_day = value,
            other => {
                let mut e = unknown(src, k.referenced, "element class", other, [SWITCH, LINK]);
                if r.per_gpu_per_day.iter().any(|(n, _)| n == other) {
                    e.hint = Some(format!(
                        "`{other}` is per GPU: put it under `per_gpu_per_day`"
                    ));
                }
                return Err(e);
            }
        }
    }
    for (k, v) in in_order(&file.srgs_per_day) {
        let name = k.value.strip_prefix("srg:").unwrap_or(&k.value);
        if !f.srgs().iter().any(|s| s.name == name) {
            let mut e = unknown(
                src,
                k.referenced,
                "shared-risk group",
                name,
                f.srgs().iter().map(|s| s.name.as_str()),
            );
            if f.srgs().is_empty() {
                e.hint = Some(format!(
                    "{} names no shared-risk groups (`srgs:` in the spec); remove this entry",
                    f.name()
                ));
            }
            return Err(e);
        }
        let value = rate(src, v, &format!("shared-risk group `{name}`"))?;
        r.srg_per_day.push((name.to_owned(), value));
    }
    r.srg_per_day.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(c) = &file.checkpoint {
        r.checkpoint = checkpointing(src, c, r.checkpoint)?;
    }
    for (k, c) in in_order(&file.jobs) {
        if !jobs.contains(&k.value.as_str()) {
            return Err(unknown(
                src,
                k.referenced,
                "job",
                &k.value,
                jobs.iter().copied(),
            ));
        }
        let own = checkpointing(src, c, r.checkpoint)?;
        r.jobs.push((k.value.clone(), own));
    }
    r.jobs.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(r)
}

/// `base` with the entry's fields over it, checked.
fn checkpointing(
    src: &Source,
    c: &CheckpointEntry,
    base: Checkpointing,
) -> Result<Checkpointing, SpecError> {
    let mut out = base;
    if let Some(w) = &c.write_s {
        if !(w.value.is_finite() && w.value > 0.0) {
            return Err(src.error(
                w.referenced,
                "`write_s` must be a time in seconds above 0",
                Some("the time a job stops to write one checkpoint, e.g. `60`".into()),
            ));
        }
        out.write_s = w.value;
    }
    if let Some(r) = &c.restart_s {
        if !(r.value.is_finite() && r.value >= 0.0) {
            return Err(src.error(
                r.referenced,
                "`restart_s` must be a time in seconds, 0 or more",
                Some("the time from an interruption to training again, e.g. `600`".into()),
            ));
        }
        out.restart_s = r.value;
    }
    Ok(out)
}
