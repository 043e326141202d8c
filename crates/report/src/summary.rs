//! The report's first screen (issue 39): the figures an architect or operator asks first,
//! each linking to the section that details it, and the oversubscription table with its
//! identical rows grouped (ten buildings with the same tiers are one row "x 10").
//!
//! Both are derived from [`ReportData`] when the page is drawn: `report.json` keeps its
//! contract.

use crate::data::{ReportData, TierRow};
use serde::Serialize;

/// One figure of the summary panel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// What it is.
    pub label: &'static str,
    /// The figure.
    pub value: String,
    /// One line on it.
    pub detail: String,
    /// The section that details it (`#id`).
    pub href: &'static str,
}

fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "no up capacity".to_owned(), |r| format!("{r:.2}:1"))
}

/// The summary panel: the fabric's size, its most oversubscribed tiers, the capacity between
/// regions, the worst failure and what it costs, the collectives' bandwidth and, with a
/// cluster, the jobs. Sections that failed are said so.
pub fn figures(d: &ReportData) -> Vec<Figure> {
    let mut out = vec![Figure {
        label: "Fabric",
        value: format!("{} GPUs", thousands(d.gpus)),
        detail: format!(
            "{} switches, {} links, {:.1} MW",
            thousands(d.switches),
            thousands(d.links),
            d.power_mw
        ),
        href: "#hierarchy",
    }];
    // Per tier name, its most oversubscribed scope.
    let mut worst: Vec<(&str, Option<f64>)> = Vec::new();
    for t in &d.tiers {
        match worst.iter_mut().find(|w| w.0 == t.tier) {
            Some(w) => {
                if t.ratio.is_none() || w.1.is_some_and(|r| t.ratio.unwrap_or(0.0) > r) {
                    w.1 = t.ratio;
                }
            }
            None => worst.push((&t.tier, t.ratio)),
        }
    }
    if let Some(top) = worst.iter().max_by(|a, b| {
        a.1.unwrap_or(f64::INFINITY)
            .total_cmp(&b.1.unwrap_or(f64::INFINITY))
    }) {
        out.push(Figure {
            label: "Most oversubscribed",
            value: format!("{} at {}", ratio(top.1), top.0),
            detail: worst
                .iter()
                .map(|(t, r)| format!("{t} {}", ratio(*r)))
                .collect::<Vec<_>>()
                .join(", "),
            href: "#tiers",
        });
    }
    if !d.inter_bag.is_empty() {
        let total: f64 = d.inter_bag.iter().map(|p| p.2).sum();
        out.push(Figure {
            label: "Between regions",
            value: format!("{} Tb/s", thousands(total.round() as u64)),
            detail: format!(
                "both ways, over the inter-BAG links: {}",
                d.inter_bag
                    .iter()
                    .map(|(a, b, t)| format!("{a}-{b} {} Tb/s", thousands(t.round() as u64)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            href: "#inter-bag",
        });
    }
    match d.failures.as_ref().and_then(|f| f.worst.first().map(|w| (f, w))) {
        Some((f, w)) => out.push(Figure {
            label: "Worst failure",
            value: w.scenario.clone(),
            detail: format!(
                "keeps {:.2}% of the capacity{}; {} GPUs isolated, {} cut off ({} {} scenarios swept)",
                100.0 * w.capacity_retained,
                w.worst_pair
                    .as_ref()
                    .map_or_else(String::new, |p| format!(" of {p}")),
                thousands(w.gpus_isolated),
                thousands(w.gpus_cut_off),
                thousands(f.scenarios as u64),
                f.sweep
            ),
            href: "#worst",
        }),
        None if d.failures.is_none() => out.push(Figure {
            label: "Worst failure",
            value: "not measured".to_owned(),
            detail: "the failure sweep failed (its section says why)".to_owned(),
            href: "#failures",
        }),
        None => {}
    }
    let largest = d
        .busbw
        .iter()
        .filter_map(|b| b.points.last().map(|p| (b.lb.as_str(), p.0, p.1)))
        .collect::<Vec<_>>();
    if let Some(best) = largest.iter().max_by(|a, b| a.2.total_cmp(&b.2)) {
        out.push(Figure {
            label: "Collectives",
            value: format!("{:.1} GB/s busBW", best.2),
            detail: format!(
                "at {} B: {}",
                thousands(best.1),
                largest
                    .iter()
                    .map(|(lb, _, bw)| format!("{lb} {bw:.1}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            href: "#collectives",
        });
    }
    if let Some(job) = &d.job {
        if let Some(first) = job.bars.first() {
            let others: Vec<String> = job.bars[1..]
                .iter()
                .map(|b| {
                    format!(
                        "{} {:.3}x the {} step",
                        b.label,
                        b.step_ms / first.step_ms,
                        first.label
                    )
                })
                .collect();
            // The run on the report's state (a damaged one's bar, else the first).
            let last = job
                .bars
                .iter()
                .find(|b| b.label == crate::data::STATE_BAR)
                .unwrap_or(first);
            out.push(Figure {
                label: "The job",
                value: format!("{}: step {:.2} s", job.name, last.step_ms / 1e3),
                detail: format!(
                    "MFU {:.1}% on {} GPUs{}",
                    100.0 * last.mfu,
                    thousands(u64::from(job.gpus)),
                    if others.is_empty() {
                        String::new()
                    } else {
                        format!("; {}", others.join(", "))
                    }
                ),
                href: "#job",
            });
        }
    }
    if let Some(jobs) = &d.jobs {
        // The job that sharing the fabric slows most.
        let slowed = jobs
            .rows
            .iter()
            .filter(|j| j.alone_ms > 0.0)
            .max_by(|a, b| (a.together_ms / a.alone_ms).total_cmp(&(b.together_ms / b.alone_ms)));
        let hurt: Vec<String> = jobs
            .rows
            .iter()
            .filter_map(|j| j.scenario.as_ref().map(|s| (j, s)))
            .filter(|(_, s)| !s.starts_with("untouched"))
            .map(|(j, s)| format!("{}: {s}", j.name))
            .collect();
        out.push(Figure {
            label: "Jobs",
            value: format!("{} running", jobs.rows.len()),
            detail: match (slowed, hurt.first()) {
                (_, Some(h)) => format!("under the scenario, {h}"),
                (Some(j), None) => format!(
                    "{} is {:.3}x its step alone when they share the fabric",
                    j.name,
                    j.together_ms / j.alone_ms
                ),
                (None, None) => String::new(),
            },
            href: "#jobs",
        });
    }
    out
}

/// Rows of the oversubscription table that are one tier at the same figures in several
/// scopes (ten buildings built alike).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierGroup {
    /// Tier.
    pub tier: String,
    /// Its scopes, in the table's order.
    pub scopes: Vec<String>,
    /// Down, Tb/s.
    pub down_tbps: f64,
    /// Up, Tb/s.
    pub up_tbps: f64,
    /// Down / up.
    pub ratio: Option<f64>,
}

/// `tiers` with the rows of one tier at the same figures grouped, in order of first
/// appearance.
pub fn tier_groups(tiers: &[TierRow]) -> Vec<TierGroup> {
    let mut out: Vec<TierGroup> = Vec::new();
    for t in tiers {
        let same = |g: &TierGroup| {
            g.tier == t.tier
                && g.down_tbps == t.down_tbps
                && g.up_tbps == t.up_tbps
                && g.ratio == t.ratio
        };
        match out.iter_mut().find(|g| same(g)) {
            Some(g) => g.scopes.push(t.scope.clone()),
            None => out.push(TierGroup {
                tier: t.tier.clone(),
                scopes: vec![t.scope.clone()],
                down_tbps: t.down_tbps,
                up_tbps: t.up_tbps,
                ratio: t.ratio,
            }),
        }
    }
    out
}

/// `n` with thousands separators.
fn thousands(n: u64) -> String {
    let d = n.to_string();
    let mut s = String::with_capacity(d.len() + d.len() / 3);
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            s.push(',');
        }
        s.push(c);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(tier: &str, scope: &str, down: f64, up: f64) -> TierRow {
        TierRow {
            tier: tier.into(),
            scope: scope.into(),
            down_tbps: down,
            up_tbps: up,
            ratio: Some(down / up),
        }
    }

    #[test]
    fn identical_rows_are_grouped_and_different_ones_kept() {
        let tiers = [
            row("rdsw", "east.dc1.l2", 1843.2, 2176.0),
            row("fdsw", "east.dc1.l2", 2176.0, 272.0),
            row("rdsw", "east.dc2.l2", 1843.2, 2176.0),
            row("fdsw", "east.dc2.l2", 2176.0, 136.0),
            row("rdsw", "east.dc3.l2", 1843.2, 2176.0),
        ];
        let g = tier_groups(&tiers);
        assert_eq!(g.len(), 3);
        assert_eq!(g[0].scopes, ["east.dc1.l2", "east.dc2.l2", "east.dc3.l2"]);
        assert_eq!((g[1].scopes.len(), g[2].scopes.len()), (1, 1));
        assert_eq!(g.iter().map(|g| g.scopes.len()).sum::<usize>(), tiers.len());
    }

    #[test]
    fn counts_have_separators() {
        assert_eq!(thousands(216_192), "216,192");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }
}
