//! Message sizes as nccl-tests spells them: `1M`, `8G`, `512K`, `4096` (binary multiples), and
//! sweeps `MIN:MAX[:FACTOR]`.

use std::str::FromStr;

/// A size such as `1M`, `8G`, `512K` or `4096` (binary multiples, as nccl-tests), bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    // `4KiB` is `4K`: the multiples are binary either way.
    let t = s.trim().trim_end_matches(['B', 'b']);
    let t = t.strip_suffix('i').unwrap_or(t);
    let (num, mult) = match t.chars().last()? {
        'K' | 'k' => (&t[..t.len() - 1], 1u64 << 10),
        'M' | 'm' => (&t[..t.len() - 1], 1 << 20),
        'G' | 'g' => (&t[..t.len() - 1], 1 << 30),
        'T' | 't' => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// `v` for a message as a person would write it: `1e300` rather than 301 digits, `12.5` as
/// is.
pub fn short_number(v: f64) -> String {
    if v != 0.0 && !(1e-6..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// Message sizes of a sweep, bytes: `MIN:MAX[:FACTOR]` (factor 2 by default) or one size; at
/// most 64 sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes(pub Vec<u64>);

impl FromStr for Sizes {
    type Err = String;

    fn from_str(s: &str) -> Result<Sizes, String> {
        let bad = || {
            format!("bad --sizes `{s}`; use MIN:MAX[:FACTOR] with sizes like 1M or 8G, e.g. 1M:8G")
        };
        let parts: Vec<&str> = s.split(':').collect();
        let (lo, hi, fac) = match parts.as_slice() {
            [one] => {
                let v = parse_size(one).ok_or_else(bad)?;
                (v, v, 2)
            }
            [a, b] => (
                parse_size(a).ok_or_else(bad)?,
                parse_size(b).ok_or_else(bad)?,
                2,
            ),
            [a, b, c] => (
                parse_size(a).ok_or_else(bad)?,
                parse_size(b).ok_or_else(bad)?,
                c.parse::<u64>().map_err(|_| bad())?,
            ),
            _ => return Err(bad()),
        };
        if lo == 0 || hi < lo || fac < 2 {
            return Err(bad());
        }
        let mut v = Vec::new();
        let mut x = lo;
        while x <= hi && v.len() < 64 {
            v.push(x);
            x = match x.checked_mul(fac) {
                Some(y) => y,
                None => break,
            };
        }
        Ok(Sizes(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary_multiples_swept_by_a_factor() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size("2MB"), Some(2 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(
            "1M:16M:4".parse::<Sizes>().unwrap().0,
            vec![1 << 20, 4 << 20, 16 << 20]
        );
        assert_eq!("1K:4K".parse::<Sizes>().unwrap().0, vec![1024, 2048, 4096]);
        for bad in ["0", "8M:1M", "1M:8M:1", "1M:2M:3:4", "big"] {
            assert!(bad.parse::<Sizes>().is_err(), "{bad}");
        }
    }
}
