//! Failure-domain sweeps on a study: what the fabric loses when each shared-risk group fails
//! (or pairs of them, or Monte Carlo draws), and planar vs spread inter-BAG wiring.

use crate::{Error, Setup, Study};
use aifabric_failures::compare::planar_vs_spread;
pub use aifabric_failures::compare::Comparison;
use aifabric_failures::mitigate::AggregationSetup;
pub use aifabric_failures::report::FailureReport;
use aifabric_failures::sweep::{
    default_model, default_modes, unavailability, ClassModel, LinkModel, Sweep,
};
use aifabric_failures::{Options, State};
use aifabric_model::{Down, Fabric, Scenario, SrgCatalog, SrgClass};
use aifabric_routing::aggregation::{Aggregation, AggregationTier};

/// What to sweep, as the command line says it.
#[derive(Clone, Debug)]
pub struct FailureRequest {
    /// `single`, `single:CLASS`, `pairs:CLASS` or `montecarlo`; CLASS `switch:ROLE` is each
    /// switch of one role (`single:switch:atsw`), `switch` each switch.
    pub sweep: String,
    /// Monte Carlo draws.
    pub samples: u64,
    /// Index of the first Monte Carlo draw (a shard of a larger sweep; 0 otherwise).
    pub first_draw: u64,
    /// Monte Carlo seed.
    pub seed: u64,
    /// Per-class failure probabilities, `CLASS=P`.
    pub probability: Vec<String>,
    /// Per-class MTBF/MTTR in hours, `CLASS=MTBF/MTTR`.
    pub mtbf: Vec<String>,
    /// Aggregation to check for blackholes, and at which tier.
    pub aggregation: Option<(Aggregation, AggregationTier)>,
    /// Compare the BAG design's mitigations (needs `aggregation`).
    pub mitigations: bool,
    /// Worst scenarios kept in the report.
    pub top: usize,
    /// How the study's scenario, the state the sweep starts from, is described in the report
    /// (e.g. the selectors given); unused on the healthy fabric.
    pub state: String,
    /// Each NSF pod a site of its own (`ZONE.podN`), refused above [`MAX_SITE_PAIRS`].
    pub pod_sites: bool,
    /// Most scenarios the report lists in full, worst first (`Some(usize::MAX)`: all; see
    /// [`parse_keep`]); `None`: every scenario of a `single`, `pairs` or named sweep, the
    /// worst [`DEFAULT_KEEP`] of a Monte Carlo sweep. The summary counts every scenario.
    pub keep: Option<usize>,
}

/// Scenarios a Monte Carlo report lists in full by default, worst first. The summary and its
/// distribution count every draw; listing every distinct draw would cost ~50 kB of memory
/// and ~25 kB of JSON each (10,000 link draws on `prometheus`: 0.5 GB and 245 MB), for
/// records no one reads past the worst.
pub const DEFAULT_KEEP: usize = 1000;

/// `--keep`: a number of scenarios, or `all`.
pub fn parse_keep(s: &str) -> Result<usize, Error> {
    match s.trim() {
        "all" => Ok(usize::MAX),
        n => n.parse::<usize>().map_err(|_| {
            Error::bad_request(format!(
                "--keep {n}: give a number of scenarios to list (e.g. 1000) or `all`"
            ))
        }),
    }
}

/// Most site pairs a sweep with `pod_sites` measures. `nsf-l2`'s one NSF building of 83
/// pods has 3,403 pod pairs and its whole `single` sweep takes a few seconds on a 2-core
/// machine; `prometheus`'s two NSF buildings (6,806 pairs besides the DSF buildings) ran
/// past 10 minutes.
pub const MAX_SITE_PAIRS: usize = 4_000;

impl Default for FailureRequest {
    fn default() -> Self {
        FailureRequest {
            sweep: "single".into(),
            samples: 1000,
            first_draw: 0,
            seed: 1,
            probability: Vec::new(),
            mtbf: Vec::new(),
            aggregation: None,
            mitigations: false,
            top: 10,
            state: String::new(),
            pod_sites: false,
            keep: None,
        }
    }
}

fn classes() -> String {
    SrgClass::all()
        .map(|c| c.prefix())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A failure class by its prefix (`building`, `hall`, `pd`, `plane`, ...); `flag` names where
/// it was given, for the error.
pub fn class(s: &str, flag: &str) -> Result<SrgClass, Error> {
    SrgClass::from_prefix(s).ok_or_else(|| {
        let names: Vec<&str> = SrgClass::all().map(|c| c.prefix()).collect();
        Error::bad_request(format!(
            "{flag}: unknown class `{s}`{}; classes are {}",
            aifabric_model::did_you_mean_hint(s, &names),
            classes()
        ))
    })
}

/// A switch role by name (`atsw`, `rdsw`, ...), for `switch:ROLE`; `what` names where it
/// was given, for the error.
fn switch_role(r: &str, what: &str) -> Result<aifabric_model::Role, Error> {
    use aifabric_model::Role;
    Role::ALL
        .into_iter()
        .find(|x| x.as_str() == r && *x != Role::Gpu)
        .ok_or_else(|| {
            let roles: Vec<&str> = Role::ALL
                .iter()
                .filter(|x| **x != Role::Gpu)
                .map(|x| x.as_str())
                .collect();
            Error::bad_request(format!(
                "{what}: unknown switch role `{r}`; roles are {}",
                roles.join(", ")
            ))
        })
}

/// What a Monte Carlo model entry is about: a class of groups (with a switch role for
/// `switch:ROLE`), or single links (all, or of one optic class for `link:OPTIC`).
enum Target {
    Class(SrgClass, Option<aifabric_model::Role>),
    Links(Option<aifabric_model::Optic>),
}

fn target(c: &str, flag: &str) -> Result<Target, Error> {
    use aifabric_model::Optic;
    if c == "link" {
        return Ok(Target::Links(None));
    }
    if let Some(o) = c.strip_prefix("link:") {
        let optic = Optic::ALL
            .into_iter()
            .find(|x| x.as_str() == o)
            .ok_or_else(|| {
                let all: Vec<&str> = Optic::ALL.iter().map(|x| x.as_str()).collect();
                Error::bad_request(format!(
                    "{flag}: unknown optic class `{o}` in `{c}`; optic classes are {}",
                    all.join(", ")
                ))
            })?;
        return Ok(Target::Links(Some(optic)));
    }
    if let Some(r) = c.strip_prefix("switch:") {
        return Ok(Target::Class(
            SrgClass::Switch,
            Some(switch_role(r, &format!("{flag} `{c}`"))?),
        ));
    }
    Ok(Target::Class(class(c, flag)?, None))
}

/// The Monte Carlo model: the default classes, then `--probability` and `--mtbf` entries
/// (classes, `switch:ROLE`, `link`, `link:OPTIC`), a later entry for the same target
/// replacing an earlier one.
fn model(args: &FailureRequest) -> Result<(Vec<ClassModel>, Vec<LinkModel>), Error> {
    let mut m = default_model();
    let mut links: Vec<LinkModel> = Vec::new();
    let mut set = |t: Target, p: f64| match t {
        Target::Class(c, role) => {
            m.retain(|x| !(x.class == c && x.role == role));
            m.push(ClassModel {
                class: c,
                probability: p,
                modes: default_modes(c),
                role,
            });
        }
        Target::Links(optic) => {
            links.retain(|x| x.optic != optic);
            links.push(LinkModel {
                optic,
                probability: p,
            });
        }
    };
    for item in &args.probability {
        let bad = || {
            Error::bad_request(format!(
                "--probability `{item}`: write CLASS=P with P between 0 and 1, e.g. pd=0.001, \
                 switch:atsw=1e-4 or link=1e-4"
            ))
        };
        let (c, p) = item.split_once('=').ok_or_else(bad)?;
        let p: f64 = p.trim().parse().map_err(|_| bad())?;
        if !(0.0..=1.0).contains(&p) {
            return Err(bad());
        }
        set(target(c.trim(), "--probability")?, p);
    }
    for item in &args.mtbf {
        let bad = || {
            Error::bad_request(format!(
                "--mtbf `{item}`: write CLASS=MTBF_HOURS/MTTR_HOURS with positive hours, \
                 e.g. pd=50000/4"
            ))
        };
        let (c, v) = item.split_once('=').ok_or_else(bad)?;
        let (a, b) = v.split_once('/').ok_or_else(bad)?;
        let (a, b): (f64, f64) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if !(a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()) {
            return Err(bad());
        }
        set(target(c.trim(), "--mtbf")?, unavailability(a, b));
    }
    // Catalog order of classes, whatever the order of the flags; links by optic class.
    m.sort_by_key(|x| (SrgClass::all().position(|c| c == x.class), x.role));
    links.sort_by_key(|x| x.optic);
    Ok((m, links))
}

/// The sweep `args` asks for, refused up front when it is beyond the budgets
/// ([`aifabric_failures::sweep::MAX_SCENARIOS`], [`aifabric_failures::sweep::MAX_DRAWS`]).
fn parse_sweep(catalog: &SrgCatalog, args: &FailureRequest) -> Result<Sweep, Error> {
    let sweep = parse_sweep_text(args)?;
    sweep
        .check_budget(catalog)
        .map_err(Error::bad_request_from)?;
    Ok(sweep)
}

/// The shared-risk groups a request sweeps: the fabric's, plus one per switch (of one role)
/// when it asks for `switch` or `switch:ROLE`.
pub fn catalog(f: &Fabric, args: &FailureRequest) -> Result<aifabric_model::SrgCatalog, Error> {
    let cat = f.srg_catalog();
    // Monte Carlo draws single switches too when the model gives them a probability.
    let modeled = args.probability.iter().chain(&args.mtbf).any(|x| {
        let x = x.trim_start();
        x.starts_with("switch=") || x.starts_with("switch:")
    });
    let asked = args
        .sweep
        .trim()
        .split_once(':')
        .map(|x| x.1)
        .filter(|a| *a == "switch" || a.starts_with("switch:"));
    let arg = match (asked, modeled) {
        (Some(a), _) => a,
        (None, true) => "switch",
        (None, false) => return Ok(cat),
    };
    // A Monte Carlo model with per-role entries draws from every switch; each entry keeps
    // only its role's (see `Sampler`).
    let role = match arg.strip_prefix("switch:") {
        None => None,
        Some(r) => Some(switch_role(r, &format!("--sweep `{}`", args.sweep.trim()))?),
    };
    let cat = cat.with_switches(f, role);
    if cat.of_class(SrgClass::Switch).is_empty() {
        return Err(Error::bad_request(format!(
            "--sweep `{}`: {} has no {} switch",
            args.sweep.trim(),
            f.name(),
            role.map_or("", |r| r.as_str())
        )));
    }
    Ok(cat)
}

fn parse_sweep_text(args: &FailureRequest) -> Result<Sweep, Error> {
    let s = args.sweep.trim();
    let (kind, arg) = match s.split_once(':') {
        Some((k, a)) => (k, Some(a)),
        None => (s, None),
    };
    // `switch:ROLE`: the class is `switch`, the role picks its groups (see `catalog`).
    let arg = arg.map(|a| {
        if a.starts_with("switch:") {
            "switch"
        } else {
            a
        }
    });
    match (kind, arg) {
        ("single", None) => Ok(Sweep::Single(None)),
        ("single", Some(c)) => Ok(Sweep::Single(Some(class(c, "--sweep single")?))),
        ("pairs", Some(c)) => Ok(Sweep::Pairs(class(c, "--sweep pairs")?)),
        ("pairs", None) => Err(Error::bad_request(format!(
            "--sweep pairs needs a class, e.g. pairs:plane; classes are {}",
            classes()
        ))),
        ("montecarlo", None) => {
            let (model, links) = model(args)?;
            Ok(Sweep::MonteCarlo {
                samples: args.samples,
                first: args.first_draw,
                seed: args.seed,
                model,
                links,
            })
        }
        _ => Err(Error::bad_request(format!(
            "--sweep `{s}`: use single, single:CLASS, pairs:CLASS or montecarlo"
        ))),
    }
}

/// The study's scenario as the state a sweep starts from: what is failed or hard-drained.
/// Soft drains are refused: a sweep counts what is out of service, and a soft-drained element
/// still carries traffic when nothing else is left.
pub fn starting_state(scenario: &Scenario, description: &str) -> Result<Option<State>, Error> {
    if !scenario.drained_soft.is_empty() {
        return Err(Error::bad_request(
            "a failure sweep cannot start from a soft drain (a soft-drained element still \
             carries traffic when nothing else is left); drain it hard (--drain) to sweep from \
             the state where it is out of service"
                .to_owned(),
        ));
    }
    let out = scenario.unusable();
    if out.is_empty() {
        return Ok(None);
    }
    let description = if description.trim().is_empty() {
        let (d, l) = out.counts();
        format!("{d} device(s) and {l} link(s) out of service")
    } else {
        description.trim().to_owned()
    };
    Ok(Some(State {
        description,
        down: Down::of_mask(&out),
    }))
}

/// The sweep's options; `catalog` is [`catalog`]`(f, args)`, built once by the caller.
fn options(
    f: &Fabric,
    args: &FailureRequest,
    setup: &Setup,
    catalog: &SrgCatalog,
) -> Result<Options, Error> {
    if args.mitigations && args.aggregation.is_none() {
        return Err(Error::bad_request(
            "--mitigations compares blackholes, which need --aggregation \
             (e.g. --aggregation unconditional)"
                .to_owned(),
        ));
    }
    if args.pod_sites {
        let n = aifabric_failures::eval::site_names(f, true).len();
        let pairs = n * n.saturating_sub(1) / 2;
        if pairs > MAX_SITE_PAIRS {
            return Err(Error::bad_request(format!(
                "--pod-sites makes {n} sites of {}, {} pairs, over the limit of {} (one NSF \
                 building of 83 pods is 3,403 and takes seconds); sweep a spec with one NSF \
                 building, or drop --pod-sites",
                f.name(),
                aifabric_model::thousands(pairs as u64),
                aifabric_model::thousands(MAX_SITE_PAIRS as u64)
            )));
        }
    }
    let sweep = parse_sweep(catalog, args)?;
    let label = match &sweep {
        Sweep::MonteCarlo { samples, seed, .. } => {
            format!("montecarlo ({samples} draws, seed {seed})")
        }
        _ => args.sweep.trim().to_owned(),
    };
    let keep = match (args.keep, &sweep) {
        (Some(k), _) => (k != usize::MAX).then_some(k),
        (None, Sweep::MonteCarlo { .. }) => Some(DEFAULT_KEEP),
        (None, _) => None,
    };
    Ok(Options {
        sweep,
        label,
        aggregation: args
            .aggregation
            .map(|(aggregation, tier)| AggregationSetup {
                aggregation,
                tier,
                cfg: setup.bgp,
            }),
        mitigations: args.mitigations,
        top: args.top,
        plan: setup.plan,
        cfg: setup.bgp,
        state: None,
        pod_sites: args.pod_sites,
        keep,
    })
}

/// A failure sweep prepared once (options, shared-risk groups, evaluator) to run over
/// several ranges of Monte Carlo draws: the tasks of one design in `aifabric sweep`.
pub struct PreparedFailures<'f> {
    catalog: aifabric_model::SrgCatalog,
    opts: Options,
    ev: aifabric_failures::Evaluator<'f>,
}

impl<'f> PreparedFailures<'f> {
    /// `opts` over `catalog` of `f`, its evaluator built (the starting state's control plane).
    pub(crate) fn new(f: &'f Fabric, catalog: SrgCatalog, opts: Options) -> Result<Self, Error> {
        let ev = aifabric_failures::evaluator(f, &opts).map_err(Error::runtime_from)?;
        Ok(PreparedFailures { catalog, opts, ev })
    }

    /// Run draws `first..first + samples` of the prepared Monte Carlo sweep (a sweep of
    /// another kind ignores both and runs whole).
    pub fn run(
        &self,
        first: u64,
        samples: u64,
        progress: &(dyn Fn(u64, u64) + Sync),
    ) -> Result<FailureReport, Error> {
        let mut opts = self.opts.clone();
        if let Sweep::MonteCarlo {
            first: f,
            samples: n,
            ..
        } = &mut opts.sweep
        {
            (*f, *n) = (first, samples);
        }
        aifabric_failures::analyze_with(&self.ev, &self.catalog, &opts, progress)
            .map_err(Error::runtime_from)
    }
}

impl<'f> Study<'f> {
    /// [`Study::failures`], prepared to run several draw ranges on one evaluator.
    pub fn prepare_failures(&self, req: &FailureRequest) -> Result<PreparedFailures<'f>, Error> {
        let catalog = catalog(self.fabric, req)?;
        let mut opts = options(self.fabric, req, &self.setup, &catalog)?;
        opts.state = starting_state(&self.scenario, &req.state)?;
        PreparedFailures::new(self.fabric, catalog, opts)
    }
}

impl Study<'_> {
    /// Sweep the fabric's shared-risk groups as `req` says, on top of the study's scenario (a
    /// maintenance state: what it fails or hard-drains is out of service in every scenario,
    /// and every figure is measured from it; soft drains are refused).
    /// `progress` gets (scenarios done, total).
    pub fn failures(
        &self,
        req: &FailureRequest,
        progress: &(dyn Fn(u64, u64) + Sync),
    ) -> Result<FailureReport, Error> {
        self.prepare_failures(req)?
            .run(req.first_draw, req.samples, progress)
    }
}

/// The same sweep on the planar and the spread build of one spec (same shared-risk groups,
/// only the inter-BAG wiring differs; `aifabric_spec::build_inter_bag` builds both).
pub fn planar_vs_spread_sweep(
    planar: &Fabric,
    spread: &Fabric,
    setup: &Setup,
    req: &FailureRequest,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Comparison, Error> {
    let opts = options(planar, req, setup, &catalog(planar, req)?)?;
    planar_vs_spread(
        planar,
        spread,
        opts.plan,
        opts.cfg,
        &opts.sweep,
        req.top,
        progress,
    )
    .map_err(Error::runtime_from)
}
