//! Planar vs spread inter-BAG wiring on the same failure set (Meta, "Building Prometheus ..."
//! 2026: planar is simple but concentrates failure domains; spread gives more path diversity).
//!
//! The caller builds the spec twice, once with every `inter_bag` entry planar and once spread
//! (`aifabric_spec::build_inter_bag`); the two fabrics have the same shared-risk groups (only
//! the inter-BAG wiring differs), so the same sweep runs on both and scenario `i` is the same
//! failure on each.

use crate::eval::Evaluator;
use crate::report::Distribution;
use crate::sweep::{impact, run, Progress, Sweep};
use aifabric_model::Fabric;
use aifabric_routing::bgp::{AsnPlan, BgpConfig, NotConverged};
use serde::Serialize;

/// One design's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DesignResult {
    /// `planar` or `spread`.
    pub topology: String,
    /// Healthy routed capacity of the first region pair, Gb/s per direction.
    pub healthy_gbps: f64,
    /// Routed capacity left over the scenarios (weighted by draws).
    pub capacity_retained: Distribution,
    /// Its worst scenario.
    pub worst: Option<String>,
}

/// A scenario where the designs differ most.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Difference {
    /// Scenario name.
    pub scenario: String,
    /// Capacity left with planar wiring.
    pub planar: f64,
    /// Capacity left with spread wiring.
    pub spread: f64,
}

/// Planar vs spread.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// Scenarios run on each.
    pub scenarios: usize,
    /// Planar wiring.
    pub planar: DesignResult,
    /// Spread wiring.
    pub spread: DesignResult,
    /// Scenarios where spread keeps more / planar keeps more.
    pub spread_better: usize,
    /// Scenarios where planar keeps more.
    pub planar_better: usize,
    /// The largest differences either way, biggest first.
    pub largest_differences: Vec<Difference>,
    /// Why the two tie, when no scenario tells them apart (absent otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Run `sweep` on the planar and the spread build of a spec.
pub fn planar_vs_spread(
    planar: &Fabric,
    spread: &Fabric,
    plan: AsnPlan,
    cfg: BgpConfig,
    sweep: &Sweep,
    top: usize,
    progress: Progress,
) -> Result<Comparison, NotConverged> {
    let mut results = Vec::new();
    for (label, f) in [("planar", planar), ("spread", spread)] {
        let catalog = f.srg_catalog();
        let ev = Evaluator::new(f, plan, cfg)?;
        let recs = run(&ev, &catalog, sweep, progress)?;
        let values: Vec<(String, f64, u64)> = recs
            .iter()
            .map(|r| (r.scenario.clone(), impact(&ev, &r.outcome), r.draws))
            .collect();
        results.push((
            label,
            ev.healthy_region_gbps.first().copied().unwrap_or(0.0),
            values,
        ));
    }
    let design = |(label, healthy, values): &(&str, f64, Vec<(String, f64, u64)>)| {
        let w: Vec<(f64, u64)> = values.iter().map(|v| (v.1, v.2)).collect();
        let worst = values
            .iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|v| v.0.clone());
        DesignResult {
            topology: (*label).to_owned(),
            healthy_gbps: *healthy,
            capacity_retained: Distribution::of(&w),
            worst,
        }
    };
    let (p, s) = (&results[0].2, &results[1].2);
    // Monte Carlo patterns can differ in order between the designs only if the catalogs
    // differ, which they do not; match by name to be safe.
    let spread_by_name: std::collections::HashMap<&str, f64> =
        s.iter().map(|v| (v.0.as_str(), v.1)).collect();
    let mut diffs: Vec<Difference> = p
        .iter()
        .filter_map(|v| {
            spread_by_name.get(v.0.as_str()).map(|&sp| Difference {
                scenario: v.0.clone(),
                planar: v.1,
                spread: sp,
            })
        })
        .collect();
    const SAME: f64 = 1e-9;
    let spread_better = diffs.iter().filter(|d| d.spread > d.planar + SAME).count();
    let planar_better = diffs.iter().filter(|d| d.planar > d.spread + SAME).count();
    let notes = if spread_better + planar_better == 0 && !diffs.is_empty() {
        vec![tie(sweep, &diffs)]
    } else {
        Vec::new()
    };
    diffs.sort_by(|a, b| {
        (b.spread - b.planar)
            .abs()
            .total_cmp(&(a.spread - a.planar).abs())
    });
    diffs.retain(|d| (d.spread - d.planar).abs() > SAME);
    diffs.truncate(top);
    Ok(Comparison {
        scenarios: p.len(),
        planar: design(&results[0]),
        spread: design(&results[1]),
        spread_better,
        planar_better,
        largest_differences: diffs,
        notes,
    })
}

/// Why planar and spread tie in every scenario of `sweep` (`diffs`: each scenario's
/// capacity under both, equal), from what the scenarios kept.
fn tie(sweep: &Sweep, diffs: &[Difference]) -> String {
    let n = diffs.len();
    let losing: Vec<f64> = diffs
        .iter()
        .map(|d| d.planar.min(d.spread))
        .filter(|&x| x < 1.0 - 1e-9)
        .collect();
    if losing.is_empty() {
        return format!(
            "planar and spread tie in all {n} scenarios: none of them costs either wiring any \
             routed capacity"
        );
    }
    let min = losing.iter().copied().fold(f64::INFINITY, f64::min);
    let lost = format!(
        "planar and spread tie in all {n} scenarios ({} of them lose capacity, exactly as much \
         under both; least kept {min:.4})",
        losing.len()
    );
    match sweep {
        Sweep::Single(class) => {
            let c = class.map_or("plane", |c| c.prefix());
            format!(
                "{lost}: a group failed alone takes the same inter-BAG links out of service \
                 whichever way they are wired (a {c} loses its own links to the other region, \
                 wherever they land); the wirings differ only when groups fail on both sides \
                 of an inter-BAG pair, which `--sweep pairs:{c}` runs"
            )
        }
        _ => lost,
    }
}
