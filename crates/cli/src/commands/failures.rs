//! `aifabric failures`: turn the flags into a sweep, run it with a progress bar.

use crate::Failure;
use aifabric_failures::compare::{planar_vs_spread, Comparison};
use aifabric_failures::mitigate::AggregationSetup;
use aifabric_failures::report::FailureReport;
use aifabric_failures::sweep::{default_model, default_modes, unavailability, ClassModel, Sweep};
use aifabric_failures::{analyze, Options};
use aifabric_model::{Fabric, SrgClass};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_spec::build_inter_bag;
use aifabric_spec::spec::InterBagTopology;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// The flags of the command.
pub struct Args {
    pub sweep: String,
    pub samples: u64,
    pub seed: u64,
    pub probability: Vec<String>,
    pub mtbf: Vec<String>,
    pub aggregation: Option<AggregationSetup>,
    pub mitigations: bool,
    pub top: usize,
    pub plan: AsnPlan,
    pub cfg: BgpConfig,
}

/// Pairs sweeps beyond this many scenarios are refused (use Monte Carlo instead).
const MAX_PAIRS: usize = 2_000_000;

fn classes() -> String {
    SrgClass::all()
        .map(|c| c.prefix())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn class(s: &str, flag: &str) -> Result<SrgClass, Failure> {
    SrgClass::from_prefix(s).ok_or_else(|| {
        Failure::BadArgument(format!(
            "{flag}: unknown class `{s}`; classes are {}",
            classes()
        ))
    })
}

fn model(args: &Args) -> Result<Vec<ClassModel>, Failure> {
    let mut m = default_model();
    let mut set = |c: SrgClass, p: f64| {
        m.retain(|x| x.class != c);
        m.push(ClassModel {
            class: c,
            probability: p,
            modes: default_modes(c),
        });
    };
    for item in &args.probability {
        let bad = || {
            Failure::BadArgument(format!(
                "--probability `{item}`: write CLASS=P with P between 0 and 1, e.g. pd=0.001"
            ))
        };
        let (c, p) = item.split_once('=').ok_or_else(bad)?;
        let p: f64 = p.trim().parse().map_err(|_| bad())?;
        if !(0.0..=1.0).contains(&p) {
            return Err(bad());
        }
        set(class(c.trim(), "--probability")?, p);
    }
    for item in &args.mtbf {
        let bad = || {
            Failure::BadArgument(format!(
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
        set(class(c.trim(), "--mtbf")?, unavailability(a, b));
    }
    // Catalog order of classes, whatever the order of the flags.
    m.sort_by_key(|x| SrgClass::all().position(|c| c == x.class));
    Ok(m)
}

fn parse_sweep(f: &Fabric, args: &Args) -> Result<Sweep, Failure> {
    let s = args.sweep.trim();
    let (kind, arg) = match s.split_once(':') {
        Some((k, a)) => (k, Some(a)),
        None => (s, None),
    };
    match (kind, arg) {
        ("single", None) => Ok(Sweep::Single(None)),
        ("single", Some(c)) => Ok(Sweep::Single(Some(class(c, "--sweep single")?))),
        ("pairs", Some(c)) => {
            let c = class(c, "--sweep pairs")?;
            let n = f.srg_catalog().of_class(c).len();
            if n * n.saturating_sub(1) / 2 > MAX_PAIRS {
                return Err(Failure::BadArgument(format!(
                    "--sweep pairs:{}: {n} groups make {} pairs; sweep a smaller class, or \
                     sample combinations with --sweep montecarlo",
                    c.prefix(),
                    n * (n - 1) / 2
                )));
            }
            Ok(Sweep::Pairs(c))
        }
        ("pairs", None) => Err(Failure::BadArgument(format!(
            "--sweep pairs needs a class, e.g. pairs:plane; classes are {}",
            classes()
        ))),
        ("montecarlo", None) => Ok(Sweep::MonteCarlo {
            samples: args.samples,
            seed: args.seed,
            model: model(args)?,
        }),
        _ => Err(Failure::BadArgument(format!(
            "--sweep `{s}`: use single, single:CLASS, pairs:CLASS or montecarlo"
        ))),
    }
}

fn options(f: &Fabric, args: &Args) -> Result<Options, Failure> {
    if args.mitigations && args.aggregation.is_none() {
        return Err(Failure::BadArgument(
            "--mitigations compares blackholes, which need --aggregation \
             (e.g. --aggregation unconditional)"
                .to_owned(),
        ));
    }
    let sweep = parse_sweep(f, args)?;
    let label = match &sweep {
        Sweep::MonteCarlo { samples, seed, .. } => {
            format!("montecarlo ({samples} draws, seed {seed})")
        }
        _ => args.sweep.trim().to_owned(),
    };
    Ok(Options {
        sweep,
        label,
        aggregation: args.aggregation,
        mitigations: args.mitigations,
        top: args.top,
        plan: args.plan,
        cfg: args.cfg,
    })
}

/// A progress bar on stderr, hidden when stderr is not a terminal or under CI.
pub(crate) fn progress_bar(what: &str) -> ProgressBar {
    let hidden = !std::io::stderr().is_terminal() || std::env::var_os("CI").is_some();
    let bar = ProgressBar::with_draw_target(
        Some(0),
        if hidden {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(what.to_owned());
    bar
}

fn runtime(e: impl std::fmt::Display) -> Failure {
    Failure::Runtime(e.to_string())
}

/// Run the sweep on one fabric.
pub fn sweep(f: &Fabric, args: &Args) -> Result<FailureReport, Failure> {
    let opts = options(f, args)?;
    let bar = progress_bar("scenarios");
    let tick = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let report = analyze(f, &f.srg_catalog(), &opts, &tick).map_err(runtime)?;
    bar.finish_and_clear();
    Ok(report)
}

/// Run the sweep on the planar and the spread build of a spec.
pub fn compare(name: &str, text: &str, args: &Args) -> Result<Comparison, Failure> {
    let planar =
        build_inter_bag(name, text, InterBagTopology::Planar).map_err(Failure::BadInput)?;
    let spread =
        build_inter_bag(name, text, InterBagTopology::Spread).map_err(Failure::BadInput)?;
    let opts = options(&planar, args)?;
    let bar = progress_bar("scenarios (planar, then spread)");
    let tick = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let cmp = planar_vs_spread(
        &planar,
        &spread,
        opts.plan,
        opts.cfg,
        &opts.sweep,
        args.top,
        &tick,
    )
    .map_err(runtime)?;
    bar.finish_and_clear();
    Ok(cmp)
}
