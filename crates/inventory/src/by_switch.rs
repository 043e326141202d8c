//! The drift by switch: each switch's findings and the ports they name, as runs
//! (`eth32-63`), so that a line card left out (every port of one card without its cable)
//! reads as such.

use crate::drift::Finding;
use serde::Serialize;
use std::collections::BTreeMap;

/// Consecutive ports without their cables, at least, for the hint that a line card (or a
/// breakout, or a bundle) is not there.
pub const CARD_PORTS: usize = 8;

/// The drift at one switch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SwitchDrift {
    /// The switch.
    pub device: String,
    /// Its findings by kind (a cable counts at each of its switch ends).
    pub findings: BTreeMap<String, u64>,
    /// Planned capacity of its cables missing, Gb/s.
    pub missing_gbps: f64,
    /// The ports the findings name, as runs (`eth0-7, eth32-63`).
    pub ports: String,
    /// When its missing cables fill a run of [`CARD_PORTS`] or more consecutive ports: what
    /// that looks like.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Ports as runs of consecutive numbers per prefix: `eth0, eth1, eth2, eth5` is
/// `eth0-2, eth5`; names without a number stay as they are. Also the longest run's length
/// and its text.
fn runs(ports: &[&str]) -> (String, usize, String) {
    let mut by_prefix: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut plain: Vec<&str> = Vec::new();
    for p in ports {
        let digits = p.len() - p.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        match p[p.len() - digits..].parse::<u64>() {
            Ok(n) if digits > 0 => by_prefix.entry(&p[..p.len() - digits]).or_default().push(n),
            _ => plain.push(p),
        }
    }
    let (mut out, mut longest, mut longest_text) = (Vec::new(), 0, String::new());
    for (prefix, mut ns) in by_prefix {
        ns.sort_unstable();
        ns.dedup();
        let mut i = 0;
        while i < ns.len() {
            let mut j = i;
            while j + 1 < ns.len() && ns[j + 1] == ns[j] + 1 {
                j += 1;
            }
            let text = if i == j {
                format!("{prefix}{}", ns[i])
            } else {
                format!("{prefix}{}-{}", ns[i], ns[j])
            };
            if j - i + 1 > longest {
                longest = j - i + 1;
                longest_text.clone_from(&text);
            }
            out.push(text);
            i = j + 1;
        }
    }
    plain.sort_unstable();
    out.extend(plain.into_iter().map(str::to_owned));
    (out.join(", "), longest, longest_text)
}

/// The switches (devices `is_switch` says are) with findings, most findings first.
pub(crate) fn by_switch(
    findings: &[Finding],
    is_switch: impl Fn(&str) -> bool,
) -> Vec<SwitchDrift> {
    #[derive(Default)]
    struct At<'a> {
        findings: BTreeMap<String, u64>,
        missing_gbps: f64,
        ports: Vec<&'a str>,
        missing: Vec<&'a str>,
    }
    let mut at: BTreeMap<&str, At<'_>> = BTreeMap::new();
    for x in findings {
        let ends: Vec<(&crate::End, f64)> = match x {
            Finding::MissingCable { a, b, gbps, .. } => vec![(a, *gbps), (b, *gbps)],
            Finding::Miswired { at, .. }
            | Finding::WrongSpeed { at, .. }
            | Finding::WrongAddress { at, .. } => vec![(at, 0.0)],
            Finding::ExtraCable { a, b, .. } => vec![(a, 0.0), (b, 0.0)],
            Finding::MissingDevice { .. } | Finding::UnexpectedDevice { .. } => Vec::new(),
        };
        for (e, gbps) in ends {
            if !is_switch(&e.device) {
                continue;
            }
            let s = at.entry(&e.device).or_default();
            *s.findings.entry(x.kind().to_owned()).or_default() += 1;
            s.ports.push(&e.interface);
            if matches!(x, Finding::MissingCable { .. }) {
                s.missing_gbps += gbps;
                s.missing.push(&e.interface);
            }
        }
    }
    let mut out: Vec<SwitchDrift> = at
        .into_iter()
        .map(|(device, s)| {
            let (_, longest, run) = runs(&s.missing);
            SwitchDrift {
                device: device.to_owned(),
                hint: (longest >= CARD_PORTS).then(|| {
                    format!(
                        "{longest} consecutive ports without their cables ({run}): a line card, \
                         a breakout or a bundle not installed?"
                    )
                }),
                ports: runs(&s.ports).0,
                findings: s.findings,
                missing_gbps: s.missing_gbps,
            }
        })
        .collect();
    let total = |s: &SwitchDrift| s.findings.values().sum::<u64>();
    out.sort_by(|a, b| {
        total(b)
            .cmp(&total(a))
            .then_with(|| a.device.cmp(&b.device))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::runs;

    #[test]
    fn ports_read_as_runs() {
        let (text, longest, run) = runs(&["eth3", "eth1", "eth2", "eth7", "mgmt", "swp10", "eth2"]);
        assert_eq!(text, "eth1-3, eth7, swp10, mgmt");
        assert_eq!((longest, run.as_str()), (3, "eth1-3"));
        assert_eq!(runs(&[]).0, "");
    }
}
