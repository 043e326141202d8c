//! The sweep report: one record per scenario, sorted by impact, and a summary.

use crate::eval::Evaluator;
use crate::sweep::{impact, retained, weighted_percentile, Record};
use aifabric_capacity::TierChange;
use aifabric_model::SrgCatalog;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// Pairs whose figure moved by less than this share count as unchanged.
const SAME: f64 = 1e-9;

/// Blackholes of a scenario under aggregation (see [`crate::mitigate`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlackholeFigures {
    /// Covered prefixes dropped at some advertising border.
    pub blackholed_prefixes: usize,
    /// Share of the scope's traffic that is dropped, summed over blackholes.
    pub blackholed_share: f64,
    /// Live racks no advertising border reaches (blackholed ones included): an outage even
    /// when no border advertises anything (a withdrawn aggregate drops no traffic but
    /// reaches no rack).
    pub unreachable_live_racks: usize,
    /// Share of the scopes' traffic with no way in, summed over scopes.
    pub unreachable_share: f64,
}

/// A mitigation applied to a scenario, and what it gives.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MitigationResult {
    /// `drain_bag_plane` or `conditional_aggregation`.
    pub mitigation: String,
    /// What it drained or withdrew.
    pub acts_on: Vec<String>,
    /// Blackholes left.
    pub blackholes: BlackholeFigures,
    /// Headline capacity left with the mitigation (same measure as the scenario's).
    pub min_capacity_retained: f64,
}

/// One scenario in the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioRecord {
    /// Scenario name.
    pub scenario: String,
    /// Shared-risk groups failed (selectors).
    pub srgs: Vec<String>,
    /// Monte Carlo draws that produced it (1 otherwise).
    pub draws: u64,
    /// Smallest share of routed capacity left over every site pair and region pair: the
    /// sort key.
    pub min_capacity_retained: f64,
    /// Routed capacity left per pair (region pairs always, site pairs when they changed;
    /// pairs not listed keep 1.0).
    pub capacity_retained: BTreeMap<String, f64>,
    /// Max-flow bound left per region pair.
    pub maxflow_retained: BTreeMap<String, f64>,
    /// GPUs down or cut off from the fabric.
    pub gpus_disconnected: u64,
    /// GPUs that reach no other site: those cut off, plus live GPUs whose rack switch has
    /// no route out of its site any more.
    pub gpus_isolated: u64,
    /// Prefixes blackholed (0 without aggregation: every border then carries specifics).
    pub blackholed_prefixes: usize,
    /// Share of aggregate traffic dropped in blackholes.
    pub blackholed_share: f64,
    /// Live racks that no border leads to under aggregation (blackholed ones included).
    #[serde(skip_serializing_if = "is_zero")]
    pub unreachable_live_racks: usize,
    /// Tiers whose oversubscription changed.
    pub tiers: Vec<TierChange>,
    /// Mitigations, when asked for and the scenario has something to mitigate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mitigations: Vec<MitigationResult>,
}

impl ScenarioRecord {
    /// The class of its groups (`hall`, `linecard`, ...), `mixed` when they differ, `none`
    /// for no group.
    pub fn class(&self) -> String {
        // A single link is named as a bundle member, `A--B#k`, with no class prefix.
        let mut classes: Vec<&str> = self
            .srgs
            .iter()
            .map(|n| match n.split_once(':') {
                Some((c, _)) => c,
                None if n.contains("--") => "link",
                None => "",
            })
            .collect();
        classes.sort_unstable();
        classes.dedup();
        match classes.as_slice() {
            [] => "none".to_owned(),
            [c] => (*c).to_owned(),
            _ => "mixed".to_owned(),
        }
    }

    /// The pair that keeps least of its routed capacity, and that share (`None` when every
    /// pair keeps all of it); ties go to the first pair in name order.
    pub fn worst_pair(&self) -> Option<(&str, f64)> {
        self.capacity_retained
            .iter()
            .filter(|(_, &x)| x < 1.0 - SAME)
            .min_by(|a, b| a.1.total_cmp(b.1))
            .map(|(k, &x)| (k.as_str(), x))
    }

    /// The tier whose oversubscription grew most, as `tier before->after` (`none up` when
    /// nothing is left above it), with `+N` for the N other tiers that changed; `-` if none.
    pub fn worst_tier(&self) -> String {
        let growth = |t: &TierChange| {
            t.after
                .map_or(f64::INFINITY, |a| a / t.before.max(f64::MIN_POSITIVE))
        };
        let Some(w) = self
            .tiers
            .iter()
            .max_by(|a, b| growth(a).total_cmp(&growth(b)))
        else {
            return "-".into();
        };
        let after = w.after.map_or("none up".to_owned(), |a| format!("{a:.2}"));
        let more = match self.tiers.len() - 1 {
            0 => String::new(),
            n => format!(" +{n}"),
        };
        format!("{} {:.2}->{after}{more}", w.tier, w.before)
    }
}

/// Distribution of the headline over a sweep (weighted by draws).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Distribution {
    /// Smallest.
    pub min: f64,
    /// 1st percentile.
    pub p1: f64,
    /// Median.
    pub p50: f64,
    /// Mean.
    pub mean: f64,
}

impl Distribution {
    /// Of (value, weight) pairs.
    pub fn of(values: &[(f64, u64)]) -> Self {
        let total: u64 = values.iter().map(|v| v.1).sum();
        let mean = values.iter().map(|v| v.0 * v.1 as f64).sum::<f64>() / total.max(1) as f64;
        Distribution {
            min: values.iter().map(|v| v.0).fold(f64::INFINITY, f64::min),
            p1: weighted_percentile(values, 0.01),
            p50: weighted_percentile(values, 0.5),
            mean,
        }
    }
}

/// The worst scenario of one class.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassWorst {
    /// Class prefix (`hall`, `linecard`, ...; `mixed` for multi-class scenarios).
    pub class: String,
    /// Scenarios of the class.
    pub scenarios: usize,
    /// Its worst scenario.
    pub worst: String,
    /// Capacity it leaves.
    pub min_capacity_retained: f64,
}

/// What a sweep adds up to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Sweep description.
    pub sweep: String,
    /// Distinct scenarios evaluated.
    pub scenarios: usize,
    /// Scenarios [`FailureReport::scenarios`] lists: the worst ones, all unless the sweep
    /// kept fewer (`--keep`; a Monte Carlo sweep keeps 1,000 by default).
    pub scenarios_listed: usize,
    /// Draws (Monte Carlo) or scenarios.
    pub draws: u64,
    /// Healthy routed capacity per region pair and site pair, Gb/s per direction.
    pub healthy_gbps: BTreeMap<String, f64>,
    /// Healthy max-flow bound per region pair, Gb/s.
    pub healthy_maxflow_gbps: BTreeMap<String, f64>,
    /// The headline over all scenarios.
    pub capacity_retained: Distribution,
    /// The worst scenario.
    pub worst: Option<String>,
    /// Scenarios that lose any routed capacity.
    pub scenarios_losing_capacity: usize,
    /// Largest number of GPUs cut off by one scenario.
    pub max_gpus_disconnected: u64,
    /// Largest number of GPUs isolated (reaching no other site) by one scenario.
    pub max_gpus_isolated: u64,
    /// Scenarios with blackholes.
    pub scenarios_with_blackholes: usize,
    /// Worst scenario per class.
    pub by_class: Vec<ClassWorst>,
    /// The maintenance state the sweep started from; every figure above is measured from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starting_state: Option<StartingState>,
    /// What explains the figures above when they could mislead (a ranking in which every
    /// scenario keeps all its capacity because there is no pair to lose it); absent when
    /// there is nothing to say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The state a sweep started from (see [`crate::State`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StartingState {
    /// What it is, as the user gave it.
    pub description: String,
    /// Devices out of service.
    pub devices_out: usize,
    /// Links out of service (those of the devices included).
    pub links_out: usize,
    /// GPUs the state itself cuts off (counted here, not again in any scenario).
    pub gpus_cut_off: u64,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FailureReport {
    /// Fabric name.
    pub fabric: String,
    /// Summary.
    pub summary: Summary,
    /// Scenarios, worst first (see [`report`]).
    pub scenarios: Vec<ScenarioRecord>,
}

/// Turn a sweep's records into the report record of each, in the same order.
pub fn records(ev: &Evaluator, catalog: &SrgCatalog, recs: &[Record]) -> Vec<ScenarioRecord> {
    let site_names = ev.site_pair_names();
    let region_names = ev.region_pair_names();
    // In parallel: the sweep's workers are idle while a chunk is folded in, and naming a
    // draw's groups (hundreds of links) is most of what this costs.
    recs.par_iter()
        .map(|r| {
            let o = &r.outcome;
            let mut capacity_retained = BTreeMap::new();
            for (k, n) in region_names.iter().enumerate() {
                capacity_retained.insert(
                    n.clone(),
                    retained(o.region_pair_gbps[k], ev.healthy_region_gbps[k]),
                );
            }
            for (k, n) in site_names.iter().enumerate() {
                let x = retained(o.site_pair_gbps[k], ev.healthy_site_gbps[k]);
                if (x - 1.0).abs() > SAME {
                    capacity_retained.insert(n.clone(), x);
                }
            }
            let maxflow_retained = region_names
                .iter()
                .enumerate()
                .map(|(k, n)| {
                    (
                        n.clone(),
                        retained(o.region_maxflow_gbps[k], ev.healthy_maxflow_gbps[k]),
                    )
                })
                .collect();
            ScenarioRecord {
                scenario: r.scenario.clone(),
                srgs: r
                    .srgs
                    .iter()
                    .map(|&i| catalog.name(ev.fabric(), i))
                    .collect(),
                draws: r.draws,
                min_capacity_retained: impact(ev, o),
                capacity_retained,
                maxflow_retained,
                gpus_disconnected: o.gpus_disconnected,
                gpus_isolated: o.gpus_isolated,
                blackholed_prefixes: 0,
                blackholed_share: 0.0,
                unreachable_live_racks: 0,
                tiers: o.tiers.clone(),
                mitigations: Vec::new(),
            }
        })
        .collect()
}

/// Where a scenario sits in the report: worst first (least capacity left over any site or
/// region pair, then most GPUs isolated, then most live racks unreachable and traffic
/// blackholed, then most GPUs cut off), full ties in scenario order.
#[derive(Clone, Copy, Debug)]
struct Rank {
    min_capacity_retained: f64,
    gpus_isolated: u64,
    unreachable_live_racks: usize,
    blackholed_share: f64,
    gpus_disconnected: u64,
    seq: usize,
}

impl Rank {
    fn of(s: &ScenarioRecord, seq: usize) -> Rank {
        Rank {
            min_capacity_retained: s.min_capacity_retained,
            gpus_isolated: s.gpus_isolated,
            unreachable_live_racks: s.unreachable_live_racks,
            blackholed_share: s.blackholed_share,
            gpus_disconnected: s.gpus_disconnected,
            seq,
        }
    }

    fn cmp(&self, b: &Rank) -> std::cmp::Ordering {
        let a = self;
        a.min_capacity_retained
            .total_cmp(&b.min_capacity_retained)
            .then(b.gpus_isolated.cmp(&a.gpus_isolated))
            .then(b.unreachable_live_racks.cmp(&a.unreachable_live_racks))
            .then(b.blackholed_share.total_cmp(&a.blackholed_share))
            .then(b.gpus_disconnected.cmp(&a.gpus_disconnected))
            .then(a.seq.cmp(&b.seq))
    }
}

/// A report built scenario by scenario, in memory that does not grow with the scenarios
/// listed beyond `keep`: per scenario it holds its headline and draw count (16 bytes, for
/// the exact distribution), and in full only the worst `keep` so far (between `keep` and
/// `2 keep` of them, cut back to `keep` by a sort when the bound is reached). The summary
/// counts every scenario; [`FailureReport::scenarios`] lists the worst `keep`.
pub struct Tally<'a> {
    ev: &'a Evaluator<'a>,
    keep: usize,
    values: Vec<(f64, u64)>,
    classes: Vec<(ClassWorst, Rank)>,
    losing: usize,
    max_disconnected: u64,
    max_isolated: u64,
    with_blackholes: usize,
    kept: Vec<(Rank, ScenarioRecord, Vec<usize>)>,
}

impl<'a> Tally<'a> {
    /// An empty tally listing at most `keep` scenarios in full (`usize::MAX`: all).
    pub fn new(ev: &'a Evaluator<'a>, keep: usize) -> Self {
        Tally {
            ev,
            keep,
            values: Vec::new(),
            classes: Vec::new(),
            losing: 0,
            max_disconnected: 0,
            max_isolated: 0,
            with_blackholes: 0,
            kept: Vec::new(),
        }
    }

    /// Add the next scenario (its index is the number added before), with the catalog
    /// indices of its groups (handed back by [`Tally::finish`] for the scenarios listed).
    pub fn add(&mut self, s: ScenarioRecord, srgs: Vec<usize>) {
        let rank = Rank::of(&s, self.values.len());
        self.values.push((s.min_capacity_retained, s.draws));
        let c = s.class();
        match self.classes.iter_mut().find(|w| w.0.class == c) {
            Some((w, r)) => {
                w.scenarios += 1;
                if rank.cmp(r).is_lt() {
                    w.worst.clone_from(&s.scenario);
                    w.min_capacity_retained = s.min_capacity_retained;
                    *r = rank;
                }
            }
            None => self.classes.push((
                ClassWorst {
                    class: c,
                    scenarios: 1,
                    worst: s.scenario.clone(),
                    min_capacity_retained: s.min_capacity_retained,
                },
                rank,
            )),
        }
        self.losing += usize::from(s.min_capacity_retained < 1.0 - SAME);
        self.max_disconnected = self.max_disconnected.max(s.gpus_disconnected);
        self.max_isolated = self.max_isolated.max(s.gpus_isolated);
        self.with_blackholes += usize::from(s.blackholed_prefixes > 0);
        if self.keep == 0 {
            return;
        }
        self.kept.push((rank, s, srgs));
        if self.kept.len() >= self.keep.saturating_mul(2) {
            self.cut();
        }
    }

    /// `draws` more draws of scenario `index`.
    pub fn again(&mut self, index: usize, draws: u64) {
        self.values[index].1 += draws;
    }

    fn cut(&mut self) {
        self.kept.sort_by(|a, b| a.0.cmp(&b.0));
        self.kept.truncate(self.keep);
    }

    /// The report, scenarios worst first (the worst `keep`), with the group indices of each
    /// scenario listed.
    pub fn finish(mut self, sweep: &str) -> (FailureReport, Vec<Vec<usize>>) {
        self.cut();
        let ev = self.ev;
        let mut healthy_gbps = BTreeMap::new();
        for (n, &g) in ev.region_pair_names().iter().zip(&ev.healthy_region_gbps) {
            healthy_gbps.insert(n.clone(), g);
        }
        for (n, &g) in ev.site_pair_names().iter().zip(&ev.healthy_site_gbps) {
            healthy_gbps.insert(n.clone(), g);
        }
        let healthy_maxflow_gbps = ev
            .region_pair_names()
            .into_iter()
            .zip(ev.healthy_maxflow_gbps.iter().copied())
            .collect();
        let prefix_order = |c: &str| {
            aifabric_model::SrgClass::all()
                .position(|k| k.prefix() == c)
                .unwrap_or(usize::MAX)
        };
        // The worst scenario is the worst of the classes' worst ones.
        self.classes.sort_by(|a, b| a.1.cmp(&b.1));
        let worst = self.classes.first().map(|c| c.0.worst.clone());
        let mut by_class: Vec<ClassWorst> = self.classes.into_iter().map(|c| c.0).collect();
        by_class.sort_by_key(|w| prefix_order(&w.class));
        let mut scenarios = Vec::with_capacity(self.kept.len());
        let mut srgs = Vec::with_capacity(self.kept.len());
        for (rank, mut s, g) in self.kept {
            s.draws = self.values[rank.seq].1;
            scenarios.push(s);
            srgs.push(g);
        }
        let summary = Summary {
            sweep: sweep.to_owned(),
            scenarios: self.values.len(),
            scenarios_listed: scenarios.len(),
            draws: self.values.iter().map(|v| v.1).sum(),
            healthy_gbps,
            healthy_maxflow_gbps,
            capacity_retained: Distribution::of(&self.values),
            worst,
            scenarios_losing_capacity: self.losing,
            max_gpus_disconnected: self.max_disconnected,
            max_gpus_isolated: self.max_isolated,
            scenarios_with_blackholes: self.with_blackholes,
            by_class,
            starting_state: None,
            notes: Vec::new(),
        };
        let rep = FailureReport {
            fabric: ev.fabric().name().to_owned(),
            summary,
            scenarios,
        };
        (rep, srgs)
    }
}

/// Sort worst first (least capacity left over any site or region pair, then most GPUs
/// isolated, then most live racks unreachable and traffic blackholed, then most GPUs cut
/// off; full ties keep scenario order) and summarize: a [`Tally`] of every scenario.
pub fn report(ev: &Evaluator, sweep: &str, scenarios: Vec<ScenarioRecord>) -> FailureReport {
    let mut t = Tally::new(ev, usize::MAX);
    for s in scenarios {
        t.add(s, Vec::new());
    }
    t.finish(sweep).0
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
