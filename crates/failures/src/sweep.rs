//! Sweeps: which scenarios to run, running them in parallel, and what they add up to.
//!
//! - **single**: every shared-risk group alone (optionally one class);
//! - **pairs**: every pair of groups of one class;
//! - **Monte Carlo**: each group of a class fails with a probability (given, or
//!   `MTTR / (MTBF + MTTR)`, the share of time it is down), in one of its weighted failure
//!   modes (a BAG chassis fails whole or loses one line card). Draw `i` uses its own random
//!   generator seeded from `(seed, i)`, so a draw does not depend on the others, on the chunk
//!   it ran in or on the thread count. Identical failure patterns (the same set of groups)
//!   are evaluated once and counted `draws` times.
//!
//! Scenarios are evaluated in chunks: generate, deduplicate, evaluate the new patterns in
//! parallel, hand them on in order ([`run_each`]). Memory holds one chunk of records and a
//! 16-byte fingerprint per distinct pattern, never one record per draw. In single and pairs sweeps, scenarios that take down the same devices and links (a
//! BAG chassis and the power domain that feeds only it) are evaluated once and share the
//! outcome under their own names.

use crate::eval::{Evaluator, Outcome, Workspace};
use aifabric_model::{DomainClass, Fabric, Optic, Role, SrgCatalog, SrgClass};
use aifabric_routing::bgp::NotConverged;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// How a component of a class fails in a Monte Carlo draw.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureMode {
    /// The whole group fails.
    Whole,
    /// One of its BAG line cards, chosen uniformly (BAG chassis only).
    OneLineCard,
}

/// The failure model of one class for Monte Carlo.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassModel {
    /// The class.
    pub class: SrgClass,
    /// Probability that a given group of the class is failed in a draw.
    pub probability: f64,
    /// Failure modes with relative weights.
    pub modes: Vec<(FailureMode, f64)>,
    /// For the `switch` class: only switches of this role (`None`: every switch).
    pub role: Option<Role>,
}

/// Single links failing independently in Monte Carlo: every link (or every link of one optic
/// reach class) down with a probability. A fabric has millions of links, so they are drawn
/// by geometric skips (the gap to the next failed link is geometric), which costs the
/// number of links drawn, not the number of links.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkModel {
    /// Only links of this optic class (`None`: every link).
    pub optic: Option<Optic>,
    /// Probability that a given link is down in a draw.
    pub probability: f64,
}

/// Probability that a component is down at a random instant: `MTTR / (MTBF + MTTR)`.
pub fn unavailability(mtbf_hours: f64, mttr_hours: f64) -> f64 {
    mttr_hours / (mtbf_hours + mttr_hours)
}

/// How a group of `class` fails in a draw: a BAG chassis fails whole (weight 0.2) or loses
/// one line card (0.8); anything else fails whole. Illustrative weights, like the rates
/// below.
pub fn default_modes(class: SrgClass) -> Vec<(FailureMode, f64)> {
    match class {
        SrgClass::Domain(DomainClass::BagChassis) => {
            vec![(FailureMode::Whole, 0.2), (FailureMode::OneLineCard, 0.8)]
        }
        _ => vec![(FailureMode::Whole, 1.0)],
    }
}

/// The default Monte Carlo model. The MTBF and MTTR figures are illustrative assumptions,
/// not published data (the sources give none); pass your own with `--probability` or
/// `--mtbf`.
pub fn default_model() -> Vec<ClassModel> {
    let c = |d: DomainClass, mtbf: f64, mttr: f64| ClassModel {
        class: SrgClass::Domain(d),
        probability: unavailability(mtbf, mttr),
        modes: default_modes(SrgClass::Domain(d)),
        role: None,
    };
    vec![
        c(DomainClass::Building, 1_000_000.0, 24.0),
        c(DomainClass::Hall, 500_000.0, 8.0),
        c(DomainClass::PowerDomain, 50_000.0, 4.0),
        c(DomainClass::BagChassis, 50_000.0, 4.0),
        c(DomainClass::Conduit, 17_520.0, 12.0),
    ]
}

/// Which scenarios a sweep runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Sweep {
    /// Every group alone, or every group of one class.
    Single(Option<SrgClass>),
    /// Every pair of groups of one class.
    Pairs(SrgClass),
    /// Random draws.
    MonteCarlo {
        /// Number of draws.
        samples: u64,
        /// Index of the first draw: draws `first..first + samples` (0 for a whole sweep; a
        /// shard of a larger one starts further on, and draw `i` is the same either way).
        first: u64,
        /// Seed of the whole sweep.
        seed: u64,
        /// Per-class failure model (classes not listed never fail).
        model: Vec<ClassModel>,
        /// Single links failing on their own (none: links fail only with their groups).
        links: Vec<LinkModel>,
    },
    /// Named scenarios: each a list of group selectors failed together.
    Named(Vec<(String, Vec<usize>)>),
}

/// Most scenarios a `single`, `pairs` or named sweep evaluates. One scenario on `prometheus`
/// (2.35M links, the largest built-in spec) takes about 4 ms on a 2-core machine (its whole
/// `single` sweep, 4,837 groups, runs in 20 s), so 100,000 finish in about seven minutes.
/// Beyond that a sweep is sampled (Monte Carlo) or narrowed to a class.
pub const MAX_SCENARIOS: u64 = 100_000;

/// Most Monte Carlo draws. 100,000 draws on `prometheus` take a minute on a 2-core machine
/// (drawing over its 4,837 groups, plus 6,979 distinct patterns evaluated), so a million take
/// about ten; more draws only refine probabilities that the failure model itself (assumed
/// MTBF / MTTR figures) does not know to that precision.
pub const MAX_DRAWS: u64 = 1_000_000;

/// A sweep beyond [`MAX_SCENARIOS`] or [`MAX_DRAWS`]: what it asked, the limit, and how to
/// narrow it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TooLarge {
    /// The size, the limit and the narrower sweeps to run instead.
    pub message: String,
}

pub use aifabric_model::thousands;

impl Sweep {
    /// Scenarios it evaluates at most on `catalog` (Monte Carlo: draws).
    pub fn size(&self, catalog: &SrgCatalog) -> u64 {
        match self {
            Sweep::Single(None) => catalog.len() as u64,
            Sweep::Single(Some(c)) => catalog.of_class(*c).len() as u64,
            Sweep::Pairs(c) => {
                let n = catalog.of_class(*c).len() as u64;
                n * n.saturating_sub(1) / 2
            }
            Sweep::MonteCarlo { samples, .. } => *samples,
            Sweep::Named(list) => list.len() as u64,
        }
    }

    /// Refuse a sweep that cannot finish in minutes: more than [`MAX_SCENARIOS`] scenarios or
    /// [`MAX_DRAWS`] draws. The error says the size, the limit and what to run instead.
    pub fn check_budget(&self, catalog: &SrgCatalog) -> Result<(), TooLarge> {
        let size = self.size(catalog);
        match self {
            Sweep::MonteCarlo { .. } if size > MAX_DRAWS => Err(TooLarge {
                message: format!(
                    "--samples {}: above the limit of {} Monte Carlo draws (about ten minutes \
                     on the largest built-in fabric on 2 cores); draw at most {}, or raise a \
                     rare class's probability (--probability CLASS=P) to see its failures \
                     more often",
                    thousands(size),
                    thousands(MAX_DRAWS),
                    thousands(MAX_DRAWS)
                ),
            }),
            Sweep::MonteCarlo { .. } => Ok(()),
            _ if size > MAX_SCENARIOS => {
                let what = match self {
                    Sweep::Pairs(c) => format!(
                        "--sweep pairs:{}: {} groups of the class make {} pairs",
                        c.prefix(),
                        thousands(catalog.of_class(*c).len() as u64),
                        thousands(size)
                    ),
                    Sweep::Single(_) => format!("--sweep single: {} groups", thousands(size)),
                    _ => format!("{} named scenarios", thousands(size)),
                };
                // Narrower sweeps that fit: pairs of smaller classes, this class alone.
                let mut fits: Vec<String> = Vec::new();
                let mut classes: Vec<SrgClass> = catalog.classes.clone();
                classes.sort();
                classes.dedup();
                for c in &classes {
                    let n = catalog.of_class(*c).len() as u64;
                    let pairs = n * n.saturating_sub(1) / 2;
                    if n > 1 && pairs <= MAX_SCENARIOS && Some(*c) != self.pairs_class() {
                        fits.push(format!("pairs:{} ({})", c.prefix(), thousands(pairs)));
                    }
                }
                if let Sweep::Pairs(c) = self {
                    fits.push(format!(
                        "single:{} ({})",
                        c.prefix(),
                        thousands(catalog.of_class(*c).len() as u64)
                    ));
                } else {
                    for c in &classes {
                        fits.push(format!(
                            "single:{} ({})",
                            c.prefix(),
                            thousands(catalog.of_class(*c).len() as u64)
                        ));
                    }
                }
                Err(TooLarge {
                    message: format!(
                        "{what}, above the limit of {} scenarios (a scenario of the largest \
                         built-in fabric takes about 4 ms on 2 cores: the limit is about seven \
                         minutes); sweep {}, or sample combinations with --sweep montecarlo \
                         --samples N",
                        thousands(MAX_SCENARIOS),
                        fits.join(", ")
                    ),
                })
            }
            _ => Ok(()),
        }
    }

    fn pairs_class(&self) -> Option<SrgClass> {
        match self {
            Sweep::Pairs(c) => Some(*c),
            _ => None,
        }
    }
}

/// One evaluated scenario.
#[derive(Clone, Debug)]
pub struct Record {
    /// Its name: the groups joined with ` + ` (`none` for the empty pattern).
    pub scenario: String,
    /// Catalog indices of the groups failed.
    pub srgs: Vec<usize>,
    /// How many draws produced it (1 outside Monte Carlo).
    pub draws: u64,
    /// Its metrics.
    pub outcome: Outcome,
}

/// The random generator of draw `index` of a sweep seeded `seed`.
pub fn draw_rng(seed: u64, index: u64) -> Xoshiro256PlusPlus {
    // Mix (seed, index) into one 64-bit seed with the SplitMix64 finalizer (Steele, Lea and
    // Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014); the generator
    // expands it further.
    let mut z = seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    Xoshiro256PlusPlus::seed_from_u64(z ^ (z >> 31))
}

/// A Monte Carlo sampler over a catalog.
struct Sampler {
    /// (group, probability, modes) of every group that can fail.
    components: Vec<(usize, f64, usize)>,
    /// Per link model: the catalog ids of its links (ascending) and `ln(1 - p)`.
    links: Vec<(Vec<usize>, f64)>,
    /// Mode tables: cumulative weights.
    modes: Vec<Vec<(FailureMode, f64)>>,
    /// Line cards of each chassis group.
    line_cards: FxHashMap<usize, Vec<usize>>,
}

impl Sampler {
    fn new(f: &Fabric, catalog: &SrgCatalog, model: &[ClassModel], links: &[LinkModel]) -> Self {
        let mut modes = Vec::new();
        let mut components = Vec::new();
        for m in model {
            let total: f64 = m.modes.iter().map(|x| x.1).sum();
            let mut acc = 0.0;
            let cum: Vec<(FailureMode, f64)> = m
                .modes
                .iter()
                .map(|&(mode, w)| {
                    acc += w / total;
                    (mode, acc)
                })
                .collect();
            modes.push(cum);
            for i in catalog.of_class(m.class) {
                let role_ok = m.role.is_none_or(|r| {
                    catalog
                        .members(i)
                        .0
                        .first()
                        .is_some_and(|&d| f.device(d).role == r)
                });
                if m.probability > 0.0 && role_ok {
                    components.push((i, m.probability, modes.len() - 1));
                }
            }
        }
        components.sort_by_key(|c| c.0);
        let mut line_cards: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
        let chassis: FxHashMap<&str, usize> = catalog
            .of_class(SrgClass::Domain(DomainClass::BagChassis))
            .into_iter()
            .map(|i| (&catalog.names[i]["chassis:".len()..], i))
            .collect();
        for i in catalog.of_class(SrgClass::Domain(DomainClass::LineCard)) {
            let name = &catalog.names[i]["linecard:".len()..];
            if let Some((parent, _)) = name.rsplit_once('.') {
                if let Some(&c) = chassis.get(parent) {
                    line_cards.entry(c).or_default().push(i);
                }
            }
        }
        let links = links
            .iter()
            .filter(|m| m.probability > 0.0)
            .map(|m| {
                let ids: Vec<usize> = f
                    .links()
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| m.optic.is_none_or(|o| l.optic == o))
                    .map(|(i, _)| catalog.link_id(aifabric_model::LinkId::from_idx(i)))
                    .collect();
                (ids, (1.0 - m.probability.min(1.0)).ln())
            })
            .collect();
        Sampler {
            components,
            links,
            modes,
            line_cards,
        }
    }

    /// The failure pattern of draw `index`: sorted, unique group indices.
    fn draw(&self, seed: u64, index: u64) -> Vec<usize> {
        let mut rng = draw_rng(seed, index);
        let mut out = Vec::new();
        for &(i, p, m) in &self.components {
            if rng.random::<f64>() >= p {
                continue;
            }
            let u: f64 = rng.random();
            let mode = self.modes[m]
                .iter()
                .find(|x| u < x.1)
                .or(self.modes[m].last())
                .map_or(FailureMode::Whole, |x| x.0);
            match (mode, self.line_cards.get(&i)) {
                (FailureMode::OneLineCard, Some(cards)) if !cards.is_empty() => {
                    out.push(cards[rng.random_range(0..cards.len())]);
                }
                _ => out.push(i),
            }
        }
        // Links: the gap before the next failed link is geometric, floor(ln U / ln(1 - p))
        // (Devroye, "Non-Uniform Random Variate Generation", 1986, ch. X.2).
        // 1 - U is in (0, 1], so the skip is finite and not negative (0 when p = 1, where
        // ln(1 - p) is -inf).
        for (ids, ln_q) in &self.links {
            let mut at = 0usize;
            loop {
                let skip = ((1.0 - rng.random::<f64>()).ln() / ln_q).floor();
                if skip >= (ids.len() - at) as f64 {
                    break;
                }
                at += skip as usize;
                out.push(ids[at]);
                at += 1;
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Workspaces handed to rayon jobs and given back when a job ends: a sweep makes about one
/// per thread instead of one per job (each holds a few MB of per-fabric buffers).
#[derive(Default)]
struct Pool(std::sync::Mutex<Vec<Workspace>>);

/// A workspace on loan from a [`Pool`].
struct Loan<'p> {
    ws: Option<Workspace>,
    pool: &'p Pool,
}

impl Pool {
    fn take(&self, ev: &Evaluator) -> Loan<'_> {
        let ws = self.0.lock().ok().and_then(|mut v| v.pop());
        Loan {
            ws: Some(ws.unwrap_or_else(|| ev.workspace())),
            pool: self,
        }
    }
}

impl Loan<'_> {
    fn get(&mut self) -> &mut Workspace {
        self.ws
            .as_mut()
            .expect("a loan holds its workspace until dropped")
    }
}

impl Drop for Loan<'_> {
    fn drop(&mut self) {
        if let (Some(ws), Ok(mut v)) = (self.ws.take(), self.pool.0.lock()) {
            v.push(ws);
        }
    }
}

/// Progress callback: called with (done, total) after each chunk.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// Draws per chunk: enough to keep two cores busy, small enough to report progress often.
const CHUNK: u64 = 256;

/// Most single links a scenario's name lists one by one; beyond, it says how many and a
/// short fingerprint of the set (the record's `srgs` list every selector).
const NAMED_LINKS: usize = 3;

/// A scenario's name: its groups' selectors joined by ` + `, then its single links (a
/// Monte Carlo draw can fail hundreds): each link's selector up to [`NAMED_LINKS`], else
/// `N links (set XXXXXX)` with 24 bits of a hash of the set, so that two draws with
/// different links read differently.
fn scenario_name(f: &Fabric, catalog: &SrgCatalog, srgs: &[usize]) -> String {
    if srgs.is_empty() {
        return "none".to_owned();
    }
    let (links, groups): (Vec<usize>, Vec<usize>) =
        srgs.iter().partition(|&&i| catalog.as_link(i).is_some());
    let mut parts: Vec<String> = groups.iter().map(|&i| catalog.name(f, i)).collect();
    if links.len() <= NAMED_LINKS {
        parts.extend(links.iter().map(|&i| catalog.name(f, i)));
    } else {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        links.hash(&mut h);
        parts.push(format!(
            "{} links (set {:06x})",
            links.len(),
            h.finish() & 0xff_ffff
        ));
    }
    parts.join(" + ")
}

/// What one chunk of a sweep adds: the scenarios seen for the first time, in order, and
/// more draws of scenarios an earlier chunk brought (Monte Carlo only).
#[derive(Debug, Default)]
pub struct Chunk {
    /// New scenarios; the `k`-th new scenario of the whole sweep has index `k`.
    pub new: Vec<Record>,
    /// (index of an earlier scenario, further draws that produced it).
    pub again: Vec<(usize, u64)>,
}

/// Run a sweep, collecting every record. Records come in scenario order (for Monte Carlo:
/// order of first appearance); the result does not depend on the thread count.
pub fn run(
    ev: &Evaluator,
    catalog: &SrgCatalog,
    sweep: &Sweep,
    progress: Progress,
) -> Result<Vec<Record>, NotConverged> {
    let mut records: Vec<Record> = Vec::new();
    run_each(ev, catalog, sweep, progress, &mut |c: Chunk| {
        for (r, n) in c.again {
            records[r].draws += n;
        }
        records.extend(c.new);
        Ok(())
    })?;
    Ok(records)
}

/// Run a sweep chunk by chunk, handing each chunk to `sink` as soon as it is evaluated:
/// memory holds one chunk of records, plus (Monte Carlo) a 16-byte fingerprint of every
/// distinct pattern drawn so far. Chunks come in scenario order and do not depend on the
/// thread count.
pub fn run_each(
    ev: &Evaluator,
    catalog: &SrgCatalog,
    sweep: &Sweep,
    progress: Progress,
    sink: &mut dyn FnMut(Chunk) -> Result<(), NotConverged>,
) -> Result<(), NotConverged> {
    let name = |srgs: &[usize]| scenario_name(ev.fabric(), catalog, srgs);
    let fixed: Vec<(String, Vec<usize>)> = match sweep {
        Sweep::Single(class) => (0..catalog.len())
            .filter(|&i| class.is_none_or(|c| catalog.classes[i] == c))
            .map(|i| (catalog.names[i].clone(), vec![i]))
            .collect(),
        Sweep::Pairs(class) => {
            let members = catalog.of_class(*class);
            let mut v = Vec::new();
            for (k, &a) in members.iter().enumerate() {
                for &b in &members[k + 1..] {
                    v.push((name(&[a, b]), vec![a, b]));
                }
            }
            v
        }
        Sweep::Named(list) => list.clone(),
        Sweep::MonteCarlo {
            samples,
            first,
            seed,
            model,
            links,
        } => {
            let sampler = Sampler::new(ev.fabric(), catalog, model, links);
            let draws = *first..first.saturating_add(*samples);
            return run_monte_carlo(ev, catalog, draws, *seed, &sampler, &name, progress, sink);
        }
    };
    let total = fixed.len() as u64;
    let pool = Pool::default();
    // Scenarios with the same members fail the same things: evaluate the first, copy it.
    // The outcome of each distinct pattern is kept for that (a single or pairs sweep is at
    // most MAX_SCENARIOS).
    let mut seen: FxHashMap<u128, usize> = FxHashMap::default();
    let mut stored: Vec<Outcome> = Vec::new();
    let mut done = 0u64;
    for chunk in fixed.chunks(CHUNK as usize) {
        let keys: Vec<u128> = chunk
            .par_iter()
            .map(|(_, srgs)| pattern_key(catalog, srgs))
            .collect();
        let base = stored.len();
        let mut source: Vec<Option<usize>> = Vec::with_capacity(chunk.len());
        let mut todo: Vec<usize> = Vec::new();
        for (j, key) in keys.into_iter().enumerate() {
            match seen.get(&key) {
                Some(&r) => source.push(Some(r)),
                None => {
                    seen.insert(key, base + todo.len());
                    source.push(None);
                    todo.push(j);
                }
            }
        }
        let mut outcomes = todo
            .par_iter()
            .map_init(
                || pool.take(ev),
                |ws, &j| ev.evaluate(&ev.down_of(catalog, &chunk[j].1), ws.get()),
            )
            .collect::<Result<Vec<_>, _>>()?
            .into_iter();
        let mut new = Vec::with_capacity(chunk.len());
        for ((scenario, srgs), src) in chunk.iter().zip(source) {
            let outcome = match src {
                Some(r) => stored[r].clone(),
                None => {
                    let o = outcomes.next().expect("one outcome per new pattern");
                    stored.push(o.clone());
                    o
                }
            };
            new.push(Record {
                scenario: scenario.clone(),
                srgs: srgs.clone(),
                draws: 1,
                outcome,
            });
        }
        sink(Chunk {
            new,
            again: Vec::new(),
        })?;
        done += chunk.len() as u64;
        progress(done, total);
    }
    Ok(())
}

/// A 128-bit fingerprint of the devices and links a set of groups takes down (two passes of
/// std's hasher, which has fixed keys, over the sorted member lists, each after a salt).
/// Groups with the same members (a BAG chassis and the power domain that holds only it)
/// collide on purpose; different member sets collide with probability ~2^-128.
fn pattern_key(catalog: &SrgCatalog, srgs: &[usize]) -> u128 {
    use std::hash::{Hash, Hasher};
    let (mut devices, mut links) = (Vec::new(), Vec::new());
    for &i in srgs {
        let (d, l) = catalog.members(i);
        devices.extend_from_slice(d);
        links.extend_from_slice(l);
    }
    devices.sort_unstable();
    devices.dedup();
    links.sort_unstable();
    links.dedup();
    let half = |salt: u64| {
        let mut h = std::hash::DefaultHasher::new();
        h.write_u64(salt);
        devices.hash(&mut h);
        links.hash(&mut h);
        h.finish()
    };
    (u128::from(half(0x6169_6661_6272_6963)) << 64) | u128::from(half(0x7372_6773_7765_6570))
}

/// A 128-bit fingerprint of a draw's sorted group list (two salted passes of std's
/// fixed-key hasher): distinct patterns collide with probability ~2^-128, so the sweep keeps
/// 16 bytes per distinct pattern instead of the pattern.
fn draw_key(srgs: &[usize]) -> u128 {
    use std::hash::{Hash, Hasher};
    let half = |salt: u64| {
        let mut h = std::hash::DefaultHasher::new();
        h.write_u64(salt);
        srgs.hash(&mut h);
        h.finish()
    };
    (u128::from(half(0x6472_6177_6b65_7931)) << 64) | u128::from(half(0x6472_6177_6b65_7932))
}

#[allow(clippy::too_many_arguments)]
fn run_monte_carlo(
    ev: &Evaluator,
    catalog: &SrgCatalog,
    draws: std::ops::Range<u64>,
    seed: u64,
    sampler: &Sampler,
    name: &(dyn Fn(&[usize]) -> String + Sync),
    progress: Progress,
    sink: &mut dyn FnMut(Chunk) -> Result<(), NotConverged>,
) -> Result<(), NotConverged> {
    let pool = Pool::default();
    let mut seen: FxHashMap<u128, usize> = FxHashMap::default();
    let samples = draws.end - draws.start;
    let mut start = draws.start;
    while start < draws.end {
        let end = (start + CHUNK).min(draws.end);
        let patterns: Vec<(u128, Vec<usize>)> = (start..end)
            .into_par_iter()
            .map(|i| {
                let p = sampler.draw(seed, i);
                (draw_key(&p), p)
            })
            .collect();
        // Patterns not seen before, in order of first appearance, with their counts; and
        // the counts of patterns an earlier chunk brought.
        let mut distinct: Vec<(Vec<usize>, u64)> = Vec::new();
        let mut again: Vec<(usize, u64)> = Vec::new();
        let mut in_chunk: FxHashMap<u128, usize> = FxHashMap::default();
        for (key, p) in patterns {
            if let Some(&r) = seen.get(&key) {
                match again.iter_mut().find(|a| a.0 == r) {
                    Some(a) => a.1 += 1,
                    None => again.push((r, 1)),
                }
            } else if let Some(&k) = in_chunk.get(&key) {
                distinct[k].1 += 1;
            } else {
                in_chunk.insert(key, distinct.len());
                distinct.push((p, 1));
            }
        }
        let outcomes = distinct
            .par_iter()
            .map_init(
                || pool.take(ev),
                |ws, (srgs, _)| ev.evaluate(&ev.down_of(catalog, srgs), ws.get()),
            )
            .collect::<Result<Vec<_>, _>>()?;
        let names: Vec<String> = distinct.par_iter().map(|(srgs, _)| name(srgs)).collect();
        let mut new = Vec::with_capacity(distinct.len());
        for (((srgs, n), outcome), scenario) in distinct.into_iter().zip(outcomes).zip(names) {
            seen.insert(draw_key(&srgs), seen.len());
            new.push(Record {
                scenario,
                srgs,
                draws: n,
                outcome,
            });
        }
        sink(Chunk { new, again })?;
        start = end;
        progress(start - draws.start, samples);
    }
    Ok(())
}

/// How much of the healthy figure is left, per pair: 1 when the healthy figure is 0.
pub fn retained(now: f64, healthy: f64) -> f64 {
    if healthy > 0.0 {
        now / healthy
    } else {
        1.0
    }
}

/// The headline of a scenario: the smallest share of routed capacity left over every site
/// pair (buildings, zones, AI zones: see [`Evaluator::sites`]) and every region pair. A
/// building cut off from the others reads 0 even when the region pairs barely notice, and
/// so does a building that is down (its pairs carry nothing): adding failures never raises
/// it. Sites without GPUs by design (a hub) are not sites, so no pair of theirs counts.
pub fn impact(ev: &Evaluator, o: &Outcome) -> f64 {
    o.site_pair_gbps
        .iter()
        .zip(&ev.healthy_site_gbps)
        .chain(o.region_pair_gbps.iter().zip(&ev.healthy_region_gbps))
        .map(|(&n, &h)| retained(n, h))
        .fold(1.0, f64::min)
}

/// Weighted percentile (`q` in 0..=1) of values with weights, by the lower nearest rank on
/// the cumulative weight.
pub fn weighted_percentile(values: &[(f64, u64)], q: f64) -> f64 {
    let mut v: Vec<(f64, u64)> = values.to_vec();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: u64 = v.iter().map(|x| x.1).sum();
    if total == 0 {
        return f64::NAN;
    }
    let rank = ((q * total as f64).ceil() as u64).max(1);
    let mut acc = 0;
    for (x, w) in &v {
        acc += w;
        if acc >= rank {
            return *x;
        }
    }
    v.last().map_or(f64::NAN, |x| x.0)
}
