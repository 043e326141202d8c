//! Resource limits every engine checks before heavy work: how much memory a run may take.
//!
//! An engine estimates what a request needs from its inputs (flows, hosts, ports, packets in
//! flight) and refuses it up front when the estimate is over [`memory_limit_bytes`]: the
//! operating system would otherwise kill the process, or the allocator abort it, minutes
//! into the run and with no word of why.
//!
//! The limit is `AIFABRIC_MAX_MEMORY_BYTES` when set (a byte count; `K`, `M`, `G`, `T`
//! suffixes are binary multiples, e.g. `8G`), else [`PHYSICAL_FRACTION`] of the machine's
//! physical memory (`MemTotal` of `/proc/meminfo`), else [`FALLBACK_BYTES`].

/// The environment variable that sets the limit, bytes.
pub const MEMORY_ENV: &str = "AIFABRIC_MAX_MEMORY_BYTES";

/// The share of physical memory a run may take when the variable is not set: the rest is
/// left to the operating system and whatever else runs beside it.
pub const PHYSICAL_FRACTION: f64 = 0.8;

/// The limit when neither the variable nor `/proc/meminfo` gives one (8 GiB, a laptop's).
pub const FALLBACK_BYTES: u64 = 8 << 30;

/// Where the limit came from, for refusals ("set AIFABRIC_MAX_MEMORY_BYTES to raise it").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitSource {
    /// [`MEMORY_ENV`].
    Env,
    /// [`PHYSICAL_FRACTION`] of `MemTotal`.
    Physical,
    /// [`FALLBACK_BYTES`].
    Fallback,
}

/// The memory a run may take, bytes, and where that figure came from.
///
/// # Errors
/// A value of [`MEMORY_ENV`] that is not a byte count (the message says how to write it).
pub fn memory_limit() -> Result<(u64, LimitSource), String> {
    if let Ok(v) = std::env::var(MEMORY_ENV) {
        return parse_bytes(&v)
            .map(|b| (b, LimitSource::Env))
            .ok_or_else(|| {
                format!("{MEMORY_ENV}={v:?} is not a byte count; write bytes like 8589934592 or 8G")
            });
    }
    Ok(match physical_bytes() {
        Some(total) => (
            (total as f64 * PHYSICAL_FRACTION) as u64,
            LimitSource::Physical,
        ),
        None => (FALLBACK_BYTES, LimitSource::Fallback),
    })
}

/// [`memory_limit`]'s bytes; a malformed [`MEMORY_ENV`] counts as unset (callers that can
/// report it use [`memory_limit`]).
pub fn memory_limit_bytes() -> u64 {
    memory_limit().map_or_else(
        |_| physical_bytes().map_or(FALLBACK_BYTES, |t| (t as f64 * PHYSICAL_FRACTION) as u64),
        |(b, _)| b,
    )
}

/// The memory this process may use: physical memory from `/proc/meminfo` (`MemTotal: N
/// kB`), or its cgroup's limit (`memory.max`, cgroup v2: what Slurm's `--mem` or a container
/// sets) when that is lower; `None` if neither is readable.
pub fn physical_bytes() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| meminfo_total_bytes(&t));
    match (total, cgroup_max_bytes()) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    }
}

/// `memory.max` of this process's cgroup (v2), bytes; `None` when unlimited (`max`) or not
/// readable.
fn cgroup_max_bytes() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let file = std::path::Path::new("/sys/fs/cgroup")
        .join(path.trim_start_matches('/'))
        .join("memory.max");
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// What this process holds in memory now (`VmRSS` of `/proc/self/status`), bytes; 0 when
/// unknown. An estimate of what a run adds is checked against the limit with this on top.
pub fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kb| kb.saturating_mul(1024))
}

/// How a refusal names the limit: the figure and where it came from, with how to change it.
pub fn describe_limit(bytes: u64, source: LimitSource) -> String {
    let from = match source {
        LimitSource::Env => MEMORY_ENV.to_string(),
        LimitSource::Physical => format!(
            "{:.0}% of physical memory or the cgroup's memory.max; set {MEMORY_ENV} to change it",
            PHYSICAL_FRACTION * 100.0
        ),
        LimitSource::Fallback => format!("physical memory unknown; set {MEMORY_ENV} to change it"),
    };
    format!("{} ({from})", human_bytes(bytes))
}

/// `MemTotal` of a `/proc/meminfo` text, bytes.
fn meminfo_total_bytes(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// A byte count with an optional binary suffix (`8G`, `512M`, `4096`).
fn parse_bytes(s: &str) -> Option<u64> {
    let t = s.trim();
    let t = t.strip_suffix(['B', 'b']).unwrap_or(t);
    let t = t.strip_suffix('i').unwrap_or(t);
    let (num, shift) = match t.chars().last()? {
        'K' | 'k' => (&t[..t.len() - 1], 10),
        'M' | 'm' => (&t[..t.len() - 1], 20),
        'G' | 'g' => (&t[..t.len() - 1], 30),
        'T' | 't' => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

/// `bytes` for a message: `3.2 GiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_total_is_read_in_kilobytes() {
        let text = "MemTotal:       24576000 kB\nMemFree:  100 kB\n";
        assert_eq!(meminfo_total_bytes(text), Some(24_576_000 * 1024));
        assert_eq!(meminfo_total_bytes("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn byte_counts_take_binary_suffixes() {
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("8G"), Some(8 << 30));
        assert_eq!(parse_bytes("8GiB"), Some(8 << 30));
        assert_eq!(parse_bytes("512M"), Some(512 << 20));
        assert_eq!(parse_bytes("-1"), None);
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("99999999999T"), None);
    }

    #[test]
    fn the_limit_is_positive() {
        assert!(memory_limit_bytes() > 0);
    }

    #[test]
    fn human_bytes_names_the_unit() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
