//! # aifabric-failures
//!
//! Failure-domain analysis: what a fabric loses when a shared-risk group fails,
//! for every group, every pair within a class, or thousands of Monte Carlo draws.
//!
//! - [`eval`]: one scenario's metrics (routed capacity under BGP/UCMP, max-flow bound, GPUs
//!   cut off, tier oversubscription), paying only for what the scenario breaks.
//! - [`sweep`]: single, pairs and Monte Carlo sweeps, run in parallel and deterministic.
//! - [`report`]: records sorted by impact and the summary (the JSON contract).
//! - [`mitigate`]: blackholes under aggregation; draining the affected BAG plane and
//!   conditional aggregation, with what each costs.
//! - [`compare`]: planar vs spread inter-BAG wiring on the same failure set.
//!
//! Architecture invariant: a scenario is a mask over the one shared model, never a copy;
//! results are collected in scenario order, so they do not depend on the thread count; no
//! I/O.
//!
//! ```
//! use aifabric_failures::{analyze, sweep::Sweep, Options};
//! use aifabric_model::{DomainClass, SrgClass};
//! use aifabric_routing::bgp::{AsnPlan, BgpConfig};
//!
//! // One DSF L2 zone under a 16-plane BAG: fail each BAG plane alone.
//! let f = aifabric_spec::load("dsf-l2-zone").unwrap();
//! let opts = Options {
//!     sweep: Sweep::Single(Some(SrgClass::Domain(DomainClass::BagPlane))),
//!     label: "single:plane".into(),
//!     aggregation: None,
//!     mitigations: false,
//!     top: 0,
//!     plan: AsnPlan::Rfc7938,
//!     cfg: BgpConfig::default(),
//!     state: None,
//!     pod_sites: false,
//!     keep: None,
//! };
//! let rep = analyze(&f, &f.srg_catalog(), &opts, &|_, _| {}).unwrap();
//! assert_eq!(rep.scenarios.len(), 16);
//! for s in &rep.scenarios {
//!     assert!((0.0..=1.0).contains(&s.min_capacity_retained));
//!     // The zone keeps 15 of its 16 uplink planes: oversubscription to BAG grows by 16/15.
//!     let t = s.tiers.iter().find(|t| t.tier == "l2_to_bag").unwrap();
//!     assert!((t.after.unwrap() / t.before - 16.0 / 15.0).abs() < 1e-9);
//! }
//! ```

pub mod compare;
pub mod eval;
pub mod mitigate;
pub mod report;
pub mod sweep;

pub use eval::{Down, Evaluator, Outcome, Workspace};

use aifabric_model::{Fabric, SrgCatalog};
use aifabric_routing::bgp::{AsnPlan, BgpConfig, NotConverged};
use rayon::prelude::*;

/// What to run and report.
#[derive(Clone, Debug)]
pub struct Options {
    /// The scenarios.
    pub sweep: sweep::Sweep,
    /// How the sweep is described in the summary (e.g. `single`, `pairs:plane`).
    pub label: String,
    /// Aggregation, for blackholes (none: every border carries the specifics).
    pub aggregation: Option<mitigate::AggregationSetup>,
    /// Apply the mitigations to the `top` worst scenarios (needs `aggregation`).
    pub mitigations: bool,
    /// How many of the worst scenarios get mitigations.
    pub top: usize,
    /// ASN plan.
    pub plan: AsnPlan,
    /// BGP settings.
    pub cfg: BgpConfig,
    /// The starting state (e.g. a drained plane) every scenario adds to; `None`: the healthy
    /// fabric.
    pub state: Option<State>,
    /// Each pod of an NSF zone a site of its own (`ZONE.podN`), besides buildings, zones and
    /// AI zones.
    pub pod_sites: bool,
    /// Most scenarios the report lists in full, worst first (`None`: all); the summary
    /// counts them all either way.
    pub keep: Option<usize>,
}

/// A maintenance state a sweep starts from.
#[derive(Clone, Debug)]
pub struct State {
    /// What it is, as the user gave it (selectors, a scenario file).
    pub description: String,
    /// What it takes out of service (failed and hard-drained).
    pub down: Down,
}

/// Run a sweep on `f` and build its report: evaluate every scenario, add blackholes (with
/// aggregation) and mitigations (for the worst `top`), sort by impact, summarize.
pub fn analyze(
    f: &Fabric,
    catalog: &SrgCatalog,
    opts: &Options,
    progress: sweep::Progress,
) -> Result<report::FailureReport, NotConverged> {
    analyze_with(&evaluator(f, opts)?, catalog, opts, progress)
}

/// The evaluator `analyze` builds for `opts` (starting state, ASN plan, BGP settings, pod
/// sites): build it once to run several sweeps of one fabric with [`analyze_with`].
pub fn evaluator<'f>(f: &'f Fabric, opts: &Options) -> Result<Evaluator<'f>, NotConverged> {
    let base = opts
        .state
        .as_ref()
        .map_or_else(|| Down::none(f), |s| s.down.clone());
    Evaluator::with_sites(f, opts.plan, opts.cfg, base, opts.pod_sites)
}

/// Why every scenario reads 1.0000, when the fabric has no pair of sites or regions for
/// routed capacity to be measured between (one building, one zone): the ranking then rests
/// on GPUs isolated, blackholes and GPUs cut off, and NSF pods can be made sites.
fn no_pairs_note(ev: &Evaluator, opts: &Options, rep: &report::FailureReport) -> Option<String> {
    let sm = &rep.summary;
    if !sm.healthy_gbps.is_empty() || sm.scenarios == 0 {
        return None;
    }
    let f = ev.fabric();
    let sites = &ev.sites;
    let nsf = f
        .zones()
        .iter()
        .any(|z| z.kind == aifabric_model::ZoneKind::Nsf);
    let fix = if nsf && !opts.pod_sites {
        "; NSF pods become sites with --pod-sites (pod_sites in Python), which measures routed \
         capacity between every pair of pods"
    } else {
        ""
    };
    Some(format!(
        "every scenario keeps 1.0000 of its routed capacity because {} has {} and no region \
         pair: there is no pair of sites to measure capacity between, so the scenarios rank by \
         GPUs isolated, live racks unreachable and traffic blackholed, then GPUs cut off{fix}",
        f.name(),
        match sites.as_slice() {
            [] => "no site".to_owned(),
            [one] => format!("one site ({one})"),
            many => format!("{} sites that share no capacity", many.len()),
        }
    ))
}

/// [`analyze`] with an evaluator built by [`evaluator`] for the same options. Scenarios are
/// evaluated chunk by chunk and folded into a [`report::Tally`]: memory holds one chunk in
/// full, the worst `opts.keep` scenarios and 16 bytes per other distinct scenario (a
/// Monte Carlo sweep; a `single`, `pairs` or named sweep, at most `MAX_SCENARIOS`, also keeps
/// each distinct pattern's outcome to share it with scenarios that fail the same things).
pub fn analyze_with(
    ev: &Evaluator,
    catalog: &SrgCatalog,
    opts: &Options,
    progress: sweep::Progress,
) -> Result<report::FailureReport, NotConverged> {
    let f = ev.fabric();
    let mut tally = report::Tally::new(ev, opts.keep.unwrap_or(usize::MAX));
    sweep::run_each(ev, catalog, &opts.sweep, progress, &mut |chunk| {
        // With aggregation, each new scenario is also checked for blackholes.
        let figures = match &opts.aggregation {
            Some(setup) => chunk
                .new
                .par_iter()
                .map(|r| {
                    mitigate::blackholes_of(ev, &ev.down_of(catalog, &r.srgs), setup).map(Some)
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => vec![None; chunk.new.len()],
        };
        for (r, n) in chunk.again {
            tally.again(r, n);
        }
        let records = report::records(ev, catalog, &chunk.new);
        for ((mut rec, r), b) in records.into_iter().zip(chunk.new).zip(figures) {
            if let Some(b) = b {
                rec.blackholed_prefixes = b.blackholed_prefixes;
                rec.blackholed_share = b.blackholed_share;
                rec.unreachable_live_racks = b.unreachable_live_racks;
            }
            tally.add(rec, r.srgs);
        }
        Ok(())
    })?;
    let (mut rep, srgs) = tally.finish(&opts.label);
    rep.summary.starting_state = opts.state.as_ref().map(|s| report::StartingState {
        description: s.description.clone(),
        devices_out: s.down.devices.len(),
        links_out: s.down.down_links(f).len(),
        gpus_cut_off: ev.state_gpus_cut_off,
    });
    rep.summary.notes.extend(no_pairs_note(ev, opts, &rep));
    if let (true, Some(setup)) = (opts.mitigations, &opts.aggregation) {
        let n = opts.top.min(rep.scenarios.len());
        let results = srgs[..n]
            .par_iter()
            .map(|g| mitigate::mitigations(ev, catalog, &ev.down_of(catalog, g), setup))
            .collect::<Result<Vec<_>, _>>()?;
        for (s, m) in rep.scenarios.iter_mut().zip(results) {
            s.mitigations = m;
        }
    }
    Ok(rep)
}
