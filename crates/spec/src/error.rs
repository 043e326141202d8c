//! [`SpecError`]: every problem with a spec, located (file, line, column), with a hint.

use miette::{Diagnostic, NamedSource, SourceSpan};
use serde_saphyr::Location;
use std::fmt;

/// A bad spec: where, what, and how to fix it. Rendered as
/// `file:line:column: message` + `hint: ...`; also a [`miette::Diagnostic`] that underlines
/// the offending value.
#[derive(Debug, thiserror::Error, Diagnostic)]
pub struct SpecError {
    /// File name (or `builtin:<name>`).
    pub file: String,
    /// 1-based line, 0 if unknown.
    pub line: u64,
    /// 1-based column, 0 if unknown.
    pub column: u64,
    /// What is wrong, naming the offending value.
    pub message: String,
    /// How to fix it.
    #[help]
    pub hint: Option<String>,
    // Arc keeps the error small (clippy::result_large_err): it is returned through every builder.
    #[source_code]
    src: Option<std::sync::Arc<NamedSource<String>>>,
    #[label("here")]
    span: Option<SourceSpan>,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )?;
        } else {
            write!(f, "{}: {}", self.file, self.message)?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

/// The text of a spec and its name, for locating errors.
#[derive(Clone, Debug)]
pub struct Source {
    /// File name or `builtin:<name>`.
    pub name: String,
    /// The YAML text.
    pub text: String,
}

impl Source {
    /// An error at `loc` (may be [`Location::UNKNOWN`]).
    pub fn error(
        &self,
        loc: Location,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> SpecError {
        let known = loc != Location::UNKNOWN && loc.line() > 0;
        let span = if known {
            loc.span().byte_offset().map(|off| {
                let len = loc.span().len().max(1) as usize;
                SourceSpan::from((off as usize, len))
            })
        } else {
            None
        };
        SpecError {
            file: self.name.clone(),
            line: if known { loc.line() } else { 0 },
            column: if known { loc.column() } else { 0 },
            message: message.into(),
            hint,
            src: span.map(|_| {
                std::sync::Arc::new(NamedSource::new(self.name.clone(), self.text.clone()))
            }),
            span,
        }
    }

    /// An error at a 1-based `line` and `column` of a file that is not YAML (JSON, CSV),
    /// whose readers give positions rather than a [`Location`].
    pub fn error_at_line(
        &self,
        line: u64,
        column: u64,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> SpecError {
        SpecError {
            file: self.name.clone(),
            line,
            column: if line > 0 { column.max(1) } else { 0 },
            message: message.into(),
            hint,
            src: None,
            span: None,
        }
    }

    /// Read the YAML file at `path` with the input size limit
    /// ([`aifabric_model::input::YAML_LIMIT_BYTES`]); a failure is an error on the whole file,
    /// `cannot_read: <why>`, with `hint`.
    pub fn read_yaml(path: &str, cannot_read: &str, hint: &str) -> Result<String, SpecError> {
        aifabric_model::input::read_text(path.as_ref(), aifabric_model::input::YAML_LIMIT_BYTES)
            .map_err(|e| {
                Source {
                    name: path.to_owned(),
                    text: String::new(),
                }
                .error_whole(format!("{cannot_read}: {e}"), Some(hint.to_owned()))
            })
    }

    /// An error about the spec as a whole (no place in the text to point at).
    pub fn error_whole(&self, message: impl Into<String>, hint: Option<String>) -> SpecError {
        self.error(Location::UNKNOWN, message, hint)
    }

    /// Turn a YAML/serde error in a spec into a located [`SpecError`] with a hint.
    pub fn from_yaml(&self, e: &serde_saphyr::Error) -> SpecError {
        self.from_yaml_in(e, FileKind::Spec)
    }

    /// Turn a YAML/serde error in a file of `kind` into a located [`SpecError`] with a hint.
    pub fn from_yaml_in(&self, e: &serde_saphyr::Error, kind: FileKind) -> SpecError {
        let loc = e.location().unwrap_or(Location::UNKNOWN);
        if let Some(breach) = budget_breach(e) {
            let (message, hint) = too_large(breach, kind);
            return self.error(loc, message, Some(hint));
        }
        let raw = e.to_string();
        // serde-saphyr appends " at line L, column C"; we print the location ourselves.
        let first = raw.lines().next().unwrap_or("invalid YAML").trim();
        let mut message = match first.rfind(" at line ") {
            Some(i) => first[..i].to_owned(),
            None => first.to_owned(),
        };
        if let Some(tok) = self.token_at(loc) {
            if !message.contains(&tok) {
                // Quote at most 40 characters: the offending line may be huge.
                let short: String = tok.chars().take(40).collect();
                let more = if short.len() < tok.len() { "..." } else { "" };
                message = format!("{message}: `{short}{more}`");
            }
        }
        let hint = yaml_hint(&message);
        self.error(loc, message, hint)
    }

    /// The scalar written at `loc`, for quoting the offending value.
    fn token_at(&self, loc: Location) -> Option<String> {
        if loc == Location::UNKNOWN || loc.line() == 0 {
            return None;
        }
        let line = self.text.lines().nth(loc.line() as usize - 1)?;
        let rest: String = line.chars().skip(loc.column() as usize - 1).collect();
        let tok: String = rest
            .chars()
            .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | '}' | ']' | ':'))
            .collect();
        (!tok.is_empty()).then_some(tok)
    }
}

/// What a YAML file is, for messages about it as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A fabric spec.
    Spec,
    /// A scenario file (selector lists).
    Scenario,
    /// A job file.
    Job,
    /// A cluster state (the running jobs and their placements).
    Cluster,
    /// An operations file (a maintenance plan).
    Ops,
    /// A rates file (failure rates and checkpointing).
    Rates,
}

impl FileKind {
    fn name(self) -> &'static str {
        match self {
            FileKind::Spec => "spec",
            FileKind::Scenario => "scenario file",
            FileKind::Job => "job file",
            FileKind::Cluster => "cluster file",
            FileKind::Ops => "operations file",
            FileKind::Rates => "rates file",
        }
    }
}

/// The YAML reader's resource limit a file broke, under any wrapping.
fn budget_breach(mut e: &serde_saphyr::Error) -> Option<&serde_saphyr::budget::BudgetBreach> {
    loop {
        match e {
            serde_saphyr::Error::Budget { breach, .. } => return Some(breach),
            serde_saphyr::Error::WithSnippet { error, .. }
            | serde_saphyr::Error::AliasError { error, .. } => e = error,
            _ => return None,
        }
    }
}

/// `n` with thousands separators: 250000 -> `250,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A file over one of the YAML reader's limits (serde-saphyr's default `Budget`, which keeps
/// a hostile file from exhausting memory): what was exceeded, stated, and how to say the
/// same in less.
fn too_large(breach: &serde_saphyr::budget::BudgetBreach, kind: FileKind) -> (String, String) {
    use serde_saphyr::budget::BudgetBreach as B;
    let limits = serde_saphyr::Budget::default();
    let what = kind.name();
    let smaller = match kind {
        FileKind::Spec => {
            "say repeated parts by their counts (`pods:`, `racks_per_pod:`, `planes:`, \
             `chassis_per_plane:`) instead of listing them one by one, let shared-risk groups \
             name prefixes (`east.dc1`) or generated domains (`hall:east.dc1.hall0`) rather \
             than each member, or split the fabric into several specs; the built-in \
             `prometheus` (216,192 GPUs) takes about 100 lines"
        }
        FileKind::Scenario => {
            "select by prefix (`east.dc1`) or generated domain (`hall:east.dc1.hall0`) rather \
             than device by device"
        }
        FileKind::Job => "a job file is a few dozen lines: check that this is the file meant",
        FileKind::Ops => "an operations file lists a few dozen operations by their selectors",
        FileKind::Cluster => {
            "give each job's placement by hosts only where it must be exact; `placement:` with \
             `within:` selectors places a job by policy in a few lines"
        }
        FileKind::Rates => "a rates file is a few dozen lines: check that this is the file meant",
    };
    let message = match breach {
        B::Nodes { .. } => format!(
            "{what} too large: more than {} YAML nodes (values, lists and maps)",
            thousands(limits.max_nodes)
        ),
        B::Events { .. } => format!(
            "{what} too large: more than {} YAML events",
            thousands(limits.max_events)
        ),
        B::Depth { .. } => format!(
            "{what} nested too deep: more than {} levels of lists and maps",
            limits.max_depth
        ),
        B::ScalarBytes { .. } => format!(
            "{what} too large: more than {} MiB of values",
            limits.max_total_scalar_bytes >> 20
        ),
        B::Documents { .. } => format!(
            "{what} holds more than {} YAML documents (`---`); a {what} is one document",
            thousands(limits.max_documents)
        ),
        B::Aliases { .. } | B::Anchors { .. } | B::AliasAnchorRatio { .. } => format!(
            "{what} uses too many YAML anchors or aliases (`&a`, `*a`): it expands beyond the \
             reader's limits"
        ),
        _ => {
            format!("{what} exceeds the YAML reader's limits (input size, merge keys or includes)")
        }
    };
    (message, smaller.to_owned())
}

/// The closest of `candidates` to `word`, if close enough to be a plausible typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    aifabric_model::did_you_mean(word, candidates)
}

/// Hints for the common serde messages.
fn yaml_hint(message: &str) -> Option<String> {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let field = rest.split('`').next().unwrap_or("");
        let expected: Vec<&str> = rest
            .split("expected one of ")
            .nth(1)
            .map(|e| {
                e.split(", ")
                    .map(|w| w.trim_matches('`').split(':').next().unwrap_or("").trim())
                    .collect()
            })
            .unwrap_or_default();
        return Some(match did_you_mean(field, expected.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None if !expected.is_empty() => format!("allowed keys here: {}", expected.join(", ")),
            None => "remove this key".to_owned(),
        });
    }
    if message.contains("missing field") {
        return Some("add the missing key (see specs/*.yaml for complete examples)".to_owned());
    }
    if message.contains("invalid u32")
        || message.contains("invalid value: integer `-")
        || message.contains("expected u32")
    {
        return Some("counts are whole numbers of at least 1".to_owned());
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let word = rest.split('`').next().unwrap_or("");
        let expected: Vec<&str> = rest
            .split("expected one of ")
            .nth(1)
            .or_else(|| rest.split("expected ").nth(1))
            .map(|e| {
                e.split([',', ' '])
                    .map(|w| w.trim_matches('`'))
                    .filter(|w| !w.is_empty() && *w != "or")
                    .collect()
            })
            .unwrap_or_default();
        return Some(match did_you_mean(word, expected.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "use one of the listed values".to_owned(),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_finds_typos() {
        assert_eq!(
            did_you_mean("plnes", ["planes", "model", "hub"]),
            Some("planes")
        );
        assert_eq!(did_you_mean("zzz", ["planes", "model"]), None);
    }
}
