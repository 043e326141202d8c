//! Operations files: a maintenance plan's operations (what each takes out of service, for
//! how long, after which others) and how many may run at once, read with located errors.
//!
//! ```yaml
//! max_concurrent: 2               # operations at once (default 1)
//! limits:                         # narrower: at most N at once among those touching a scope
//!   - { within: [east.bag], at_most: 1 }
//! operations:
//!   - name: upgrade-plane0        # default: its selectors
//!     drain: [east.bag.plane0]    # or fail: / drain_soft: (the scenario selectors)
//!     hours: 4
//!   - name: upgrade-plane1
//!     drain: [east.bag.plane1]
//!     hours: 4
//!     after: [upgrade-plane0]     # only once these are done
//!     window: [0, 48]             # start no earlier, end no later (hours; optional)
//! ```

use crate::error::{FileKind, Source, SpecError};
use crate::scenario::{apply_selectors, select_into};
use crate::spec::S;
use aifabric_model::{Fabric, Scenario};
use serde::Deserialize;

/// An operations file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpsFile {
    /// Operations at once, at most.
    #[serde(default)]
    pub max_concurrent: Option<S<u32>>,
    /// Narrower limits: at most so many operations at once among those that touch a scope.
    #[serde(default)]
    pub limits: Vec<S<LimitEntry>>,
    /// The operations.
    pub operations: Vec<S<OpEntry>>,
}

/// A limit as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitEntry {
    /// The scope: selectors (a region, a BAG plane set, a building...).
    pub within: Vec<S<String>>,
    /// Operations touching it at once, at most.
    pub at_most: S<u32>,
}

/// A checked limit.
#[derive(Clone, Debug)]
pub struct Limit {
    /// The scope, as written.
    pub within: String,
    /// The operations (indices) that touch it: take out a device in it or a link with an
    /// end in it.
    pub ops: Vec<usize>,
    /// At once, at most.
    pub at_most: u32,
}

/// One operation as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpEntry {
    /// Name (default: its selectors).
    #[serde(default)]
    pub name: Option<S<String>>,
    /// Failed (taken down).
    #[serde(default)]
    pub fail: Vec<S<String>>,
    /// Hard-drained.
    #[serde(default)]
    pub drain: Vec<S<String>>,
    /// Soft-drained.
    #[serde(default)]
    pub drain_soft: Vec<S<String>>,
    /// Duration, hours.
    pub hours: S<f64>,
    /// Operations that must be done before this one starts.
    #[serde(default)]
    pub after: Vec<S<String>>,
    /// When it may run: `[start, end]`, hours from the plan's start.
    #[serde(default)]
    pub window: Option<S<Vec<f64>>>,
}

/// One checked operation.
#[derive(Clone, Debug)]
pub struct Op {
    /// Name.
    pub name: String,
    /// What it takes out of service.
    pub scenario: Scenario,
    /// Duration, hours.
    pub hours: f64,
    /// Indices of the operations that must be done first.
    pub after: Vec<usize>,
    /// When it may run: start and end, hours from the plan's start.
    pub window: Option<(f64, f64)>,
}

/// A checked plan: operations and the concurrency limit.
#[derive(Clone, Debug)]
pub struct Ops {
    /// The operations, in file order.
    pub ops: Vec<Op>,
    /// Operations at once, at most.
    pub max_concurrent: u32,
    /// Narrower limits.
    pub limits: Vec<Limit>,
}

/// Most operations a plan may list (the exact search is exponential in them; the heuristic
/// beyond its limit is linear, but a plan of thousands of operations is a different tool).
pub const MAX_OPS: usize = 64;

/// Read an operations file and check it against `f`.
pub fn load_ops(f: &Fabric, path: &str) -> Result<Ops, SpecError> {
    let text = Source::read_yaml(
        path,
        "cannot read the operations file",
        "give the path of an operations YAML file, e.g. examples/ops/upgrade-east-bag.yaml",
    )?;
    parse_ops(f, path, &text)
}

/// Parse and check an operations file's text.
pub fn parse_ops(f: &Fabric, name: &str, text: &str) -> Result<Ops, SpecError> {
    let src = Source {
        name: name.to_owned(),
        text: text.to_owned(),
    };
    let opts = serde_saphyr::options! { with_snippet: false };
    let file: OpsFile = serde_saphyr::from_str_with_options(text, opts)
        .map_err(|e| src.from_yaml_in(&e, FileKind::Ops))?;
    if file.operations.is_empty() {
        return Err(src.error_whole(
            "the operations file lists no operations",
            Some(
                "list them under `operations:`, each with `drain:` or `fail:` and `hours:`".into(),
            ),
        ));
    }
    if file.operations.len() > MAX_OPS {
        return Err(src.error(
            file.operations[MAX_OPS].referenced,
            format!(
                "{} operations; a plan holds at most {MAX_OPS}",
                file.operations.len()
            ),
            Some("split the plan into several files, one per maintenance window".into()),
        ));
    }
    let max_concurrent = match &file.max_concurrent {
        Some(k) if k.value == 0 => {
            return Err(src.error(
                k.referenced,
                "max_concurrent must be at least 1",
                Some("set it to how many operations may run at once".into()),
            ))
        }
        Some(k) => k.value,
        None => 1,
    };
    let mut ops: Vec<Op> = Vec::with_capacity(file.operations.len());
    for entry in &file.operations {
        let e = &entry.value;
        if e.fail.is_empty() && e.drain.is_empty() && e.drain_soft.is_empty() {
            return Err(src.error(
                entry.referenced,
                "this operation takes nothing out of service",
                Some("give `drain:`, `fail:` or `drain_soft:` selectors".into()),
            ));
        }
        if !(e.hours.value.is_finite() && e.hours.value > 0.0) {
            return Err(src.error(
                e.hours.referenced,
                format!("hours must be a positive number, not {}", e.hours.value),
                None,
            ));
        }
        let mut scenario = Scenario::healthy(f);
        apply_selectors(f, [&e.fail, &e.drain, &e.drain_soft], &src, &mut scenario)?;
        let name = e.name.as_ref().map_or_else(
            || {
                e.fail
                    .iter()
                    .chain(&e.drain)
                    .chain(&e.drain_soft)
                    .map(|s| s.value.as_str())
                    .collect::<Vec<_>>()
                    .join(" + ")
            },
            |n| n.value.clone(),
        );
        if ops.iter().any(|o| o.name == name) {
            return Err(src.error(
                e.name.as_ref().map_or(entry.referenced, |n| n.referenced),
                format!("two operations are named `{name}`"),
                Some("give each operation its own `name:`".into()),
            ));
        }
        let window = match &e.window {
            None => None,
            Some(w) => match w.value[..] {
                [a, b] if a.is_finite() && b.is_finite() && 0.0 <= a && a + e.hours.value <= b => {
                    Some((a, b))
                }
                _ => {
                    return Err(src.error(
                        w.referenced,
                        format!(
                            "a window is `[start, end]` in hours from the plan's start, with \
                             room for the operation's {} hours",
                            e.hours.value
                        ),
                        Some("e.g. `window: [0, 24]`".into()),
                    ))
                }
            },
        };
        ops.push(Op {
            name,
            scenario,
            hours: e.hours.value,
            after: Vec::new(),
            window,
        });
    }
    // Precedences, by name, then no cycle.
    for (i, entry) in file.operations.iter().enumerate() {
        for a in &entry.value.after {
            let Some(j) = ops.iter().position(|o| o.name == a.value) else {
                let near =
                    aifabric_model::did_you_mean(&a.value, ops.iter().map(|o| o.name.as_str()));
                return Err(src.error(
                    a.referenced,
                    format!("no operation named `{}`", a.value),
                    Some(near.map_or_else(
                        || "`after:` lists names of operations in this file".into(),
                        |n| format!("did you mean `{n}`?"),
                    )),
                ));
            };
            if j == i {
                return Err(src.error(a.referenced, "an operation cannot come after itself", None));
            }
            ops[i].after.push(j);
        }
    }
    if let Some(i) = cycle(&ops) {
        return Err(src.error(
            file.operations[i].referenced,
            format!("`{}` is in a cycle of `after:` precedences", ops[i].name),
            Some("remove one of the `after:` entries in the cycle".into()),
        ));
    }
    let mut limits = Vec::with_capacity(file.limits.len());
    for l in &file.limits {
        let l_at = l.referenced;
        let l = &l.value;
        if l.at_most.value == 0 || l.within.is_empty() {
            return Err(src.error(
                l_at,
                "a limit needs `within:` selectors and `at_most:` of at least 1",
                Some("e.g. `- { within: [east], at_most: 1 }`".into()),
            ));
        }
        let mut scope = aifabric_model::FailureMask::none(f);
        for sel in &l.within {
            select_into(f, sel, &src, &mut scope)?;
        }
        let touches = |op: &Op| {
            [
                &op.scenario.failed,
                &op.scenario.drained_hard,
                &op.scenario.drained_soft,
            ]
            .into_iter()
            .any(|m| {
                m.failed_devices().any(|d| scope.device_failed(d))
                    || m.failed_links().any(|x| {
                        let link = f.link(x);
                        scope.device_failed(link.a) || scope.device_failed(link.b)
                    })
            })
        };
        limits.push(Limit {
            within: l
                .within
                .iter()
                .map(|w| w.value.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            ops: (0..ops.len()).filter(|&i| touches(&ops[i])).collect(),
            at_most: l.at_most.value,
        });
    }
    Ok(Ops {
        ops,
        max_concurrent,
        limits,
    })
}

/// An operation on a cycle of precedences, if any (depth-first search).
fn cycle(ops: &[Op]) -> Option<usize> {
    // 0: unvisited, 1: on the stack, 2: done.
    let mut state = vec![0u8; ops.len()];
    fn visit(i: usize, ops: &[Op], state: &mut [u8]) -> Option<usize> {
        state[i] = 1;
        for &j in &ops[i].after {
            match state[j] {
                1 => return Some(j),
                0 => {
                    if let Some(c) = visit(j, ops, state) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        state[i] = 2;
        None
    }
    (0..ops.len()).find_map(|i| {
        if state[i] == 0 {
            visit(i, ops, &mut state)
        } else {
            None
        }
    })
}
