//! Slurm hostlist expressions (`node[001-004,007]`, `rack[1-2]-gpu[01-08]`, `a1,b2`), expanded
//! into node names in Slurm's order.
//!
//! The syntax, as `squeue` and `scontrol` write node lists: names separated by commas; a name
//! may hold bracket groups of comma-separated numbers and ranges `lo-hi`, each group one
//! dimension (several groups expand as a cartesian product, the leftmost varying slowest). A
//! range keeps the zero padding of its low bound: `[098-102]` is `098, 099, 100, 101, 102`.
//!
//! Why not the `hostlist-parser` crate: its 0.1.6 drops the padding of a range that crosses a
//! power of ten (`node[098-102]` gives `node98`), a common shape of Slurm node lists, and it
//! refuses `_` in names.

/// At most this many names from one expression: a typo such as `n[1-100000000]` is an error,
/// not an allocation of gigabytes. The largest Slurm clusters have some 10^5 nodes.
pub const MAX_HOSTS: u64 = 1 << 20;

/// Why an expression cannot be expanded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HostlistError(pub String);

/// One bracket element: `lo..=hi`, each number written with at least `width` digits.
#[derive(Clone, Copy, Debug)]
struct Range {
    lo: u64,
    hi: u64,
    width: usize,
}

/// A piece of a name: literal text or a bracket group.
#[derive(Debug)]
enum Part<'a> {
    Text(&'a str),
    Group(Vec<Range>),
}

/// Expand a hostlist expression into node names, in order. An empty expression (or Slurm's
/// `(null)`) is no node.
pub fn expand(expr: &str) -> Result<Vec<String>, HostlistError> {
    let expr = expr.trim();
    if expr.is_empty() || expr == "(null)" {
        return Ok(Vec::new());
    }
    let mut names = Vec::new();
    let mut parsed = Vec::new();
    let mut total: u64 = 0;
    for item in split_top(expr)? {
        let parts = parse_name(item)?;
        let count = parts.iter().fold(1u64, |n, p| match p {
            Part::Text(_) => n,
            Part::Group(g) => n.saturating_mul(g.iter().fold(0u64, |s, r| {
                s.saturating_add((r.hi - r.lo).saturating_add(1))
            })),
        });
        total = total.saturating_add(count);
        if total > MAX_HOSTS {
            return Err(HostlistError(format!(
                "`{expr}` names more than {MAX_HOSTS} nodes"
            )));
        }
        parsed.push(parts);
    }
    names.reserve(total as usize);
    for parts in &parsed {
        push_product(parts, &mut String::new(), &mut names);
    }
    Ok(names)
}

/// Split on the commas outside brackets, checking that brackets pair up.
fn split_top(expr: &str) -> Result<Vec<&str>, HostlistError> {
    let mut items = Vec::new();
    let mut depth = 0u32;
    let mut start = 0;
    for (i, c) in expr.char_indices() {
        match c {
            '[' if depth == 0 => depth = 1,
            '[' => return Err(err(expr, "a bracket opens inside a bracket")),
            ']' if depth == 1 => depth = 0,
            ']' => return Err(err(expr, "a `]` closes no bracket")),
            ',' if depth == 0 => {
                items.push(expr[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(err(expr, "a `[` is not closed"));
    }
    items.push(expr[start..].trim());
    if items.iter().any(|s| s.is_empty()) {
        return Err(err(expr, "an empty name between commas"));
    }
    Ok(items)
}

/// One name with its bracket groups (brackets already checked to pair up, unnested).
fn parse_name(item: &str) -> Result<Vec<Part<'_>>, HostlistError> {
    if item.chars().any(char::is_whitespace) {
        return Err(err(item, "a node name holds a space"));
    }
    let mut parts = Vec::new();
    let mut rest = item;
    while let Some(open) = rest.find('[') {
        if open > 0 {
            parts.push(Part::Text(&rest[..open]));
        }
        let close = open
            + rest[open..]
                .find(']')
                .ok_or_else(|| err(item, "unclosed `[`"))?;
        let body = &rest[open + 1..close];
        let mut group = Vec::new();
        for el in body.split(',') {
            group.push(parse_range(item, el.trim())?);
        }
        parts.push(Part::Group(group));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Text(rest));
    }
    Ok(parts)
}

/// `7`, `007` or `098-102`.
fn parse_range(item: &str, el: &str) -> Result<Range, HostlistError> {
    let (lo_s, hi_s) = el.split_once('-').unwrap_or((el, el));
    let number = |s: &str| -> Result<u64, HostlistError> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err(
                item,
                &format!("`{el}` in brackets is not a number or a range `lo-hi`"),
            ));
        }
        s.parse::<u64>()
            .map_err(|_| err(item, &format!("`{s}` is too large a node number")))
    };
    let (lo, hi) = (number(lo_s.trim())?, number(hi_s.trim())?);
    if lo > hi {
        return Err(err(
            item,
            &format!("the range `{el}` runs backwards; write `{hi}-{lo}`"),
        ));
    }
    Ok(Range {
        lo,
        hi,
        width: lo_s.trim().len(),
    })
}

/// Every name of `parts`, leftmost group varying slowest, appended to `out`.
fn push_product(parts: &[Part<'_>], prefix: &mut String, out: &mut Vec<String>) {
    let Some((first, rest)) = parts.split_first() else {
        out.push(prefix.clone());
        return;
    };
    let len = prefix.len();
    match first {
        Part::Text(t) => {
            prefix.push_str(t);
            push_product(rest, prefix, out);
        }
        Part::Group(g) => {
            for r in g {
                for n in r.lo..=r.hi {
                    prefix.truncate(len);
                    prefix.push_str(&format!("{n:0width$}", width = r.width));
                    push_product(rest, prefix, out);
                }
            }
        }
    }
    prefix.truncate(len);
}

fn err(expr: &str, why: &str) -> HostlistError {
    HostlistError(format!("cannot read the node list `{expr}`: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(expr: &str) -> Vec<String> {
        expand(expr).unwrap()
    }

    #[test]
    fn slurm_shapes() {
        assert_eq!(names("vm"), ["vm"]);
        assert_eq!(names(""), Vec::<String>::new());
        assert_eq!(names("(null)"), Vec::<String>::new());
        assert_eq!(
            names("node[001-004,007]"),
            ["node001", "node002", "node003", "node004", "node007"]
        );
        assert_eq!(
            names("node[098-102]"),
            ["node098", "node099", "node100", "node101", "node102"]
        );
        assert_eq!(names("n[9-11]"), ["n9", "n10", "n11"]);
        assert_eq!(names("a1,b[2-3],c_4"), ["a1", "b2", "b3", "c_4"]);
        assert_eq!(
            names("r[1-2]-g[01-02].x"),
            ["r1-g01.x", "r1-g02.x", "r2-g01.x", "r2-g02.x"]
        );
        assert_eq!(names("gpu-[7]"), ["gpu-7"]);
    }

    #[test]
    fn malformed_lists_are_errors_not_panics() {
        for bad in [
            "node[1-",
            "node1]",
            "n[[1]]",
            "n[a-b]",
            "n[3-1]",
            "n[]",
            "n[1,,2]",
            "a,,b",
            ",",
            "n[1-2-3]",
            "n[99999999999999999999]",
            "a b",
        ] {
            let e = expand(bad).unwrap_err();
            assert!(e.0.contains("cannot read the node list"), "{bad}: {e}");
        }
        let e = expand("n[0-99999999999],m").unwrap_err();
        assert!(e.0.contains("more than 1048576 nodes"), "{e}");
        let e = expand("a[1-1024]b[1-1024]c[1-2]").unwrap_err();
        assert!(e.0.contains("more than"), "{e}");
    }

    /// A range as Slurm writes it: the low bound padded to `width`, the high bound to
    /// `width` too (its own digits when it has more).
    fn range() -> impl Strategy<Value = (u64, u64, usize)> {
        (0u64..2_000, 0u64..40, 1usize..5).prop_map(|(lo, len, w)| (lo, lo + len, w))
    }

    proptest! {
        /// A prefix and ranges written out as Slurm does expand to each number padded to its
        /// low bound's width, in order.
        #[test]
        fn ranges_expand_with_their_padding(
            prefix in "[a-z][a-z0-9_.-]{0,8}",
            ranges in prop::collection::vec(range(), 1..4),
            suffix in "([.-][a-z]{1,4})?",
        ) {
            let body: Vec<String> = ranges
                .iter()
                .map(|&(lo, hi, w)| {
                    if lo == hi {
                        format!("{lo:0w$}")
                    } else {
                        format!("{lo:0w$}-{hi:0w$}")
                    }
                })
                .collect();
            let expr = format!("{prefix}[{}]{suffix}", body.join(","));
            let want: Vec<String> = ranges
                .iter()
                .flat_map(|&(lo, hi, w)| (lo..=hi).map(move |n| (n, w)))
                .map(|(n, w)| format!("{prefix}{n:0w$}{suffix}"))
                .collect();
            prop_assert_eq!(expand(&expr).unwrap(), want);
        }

        /// Lists of names join: the expansion of `a,b` is `a`'s then `b`'s.
        #[test]
        fn lists_concatenate(
            a in "[a-z]{1,4}\\[[0-4]?[0-9]-[5-9][0-9]\\]",
            b in "[a-z]{1,4}[0-9]{0,3}",
        ) {
            let mut want = expand(&a).unwrap();
            want.extend(expand(&b).unwrap());
            prop_assert_eq!(expand(&format!("{a},{b}")).unwrap(), want);
        }

        /// Any text: a list of names or an error, never a panic.
        #[test]
        fn any_text_is_read_or_refused(s in "[a-c0-9\\[\\],\\- ]{0,24}") {
            if let Ok(v) = expand(&s) {
                prop_assert!(v.len() as u64 <= MAX_HOSTS);
            }
        }
    }
}
