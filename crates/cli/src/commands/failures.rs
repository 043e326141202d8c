//! `aifabric failures`: the library's sweep with a progress bar.

use crate::Failure;
use aifabric::failures::planar_vs_spread_sweep;
use aifabric::failures::Comparison;
use aifabric::failures::FailureReport;
use aifabric::model::Fabric;
use aifabric::stages::spec::{build_inter_bag, spec::InterBagTopology};
use aifabric::{FailureRequest, Setup, Study};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

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

/// Run the sweep on one fabric.
pub fn sweep(
    f: &Fabric,
    state: aifabric::model::Scenario,
    setup: Setup,
    req: &FailureRequest,
) -> Result<FailureReport, Failure> {
    let bar = progress_bar("scenarios");
    let tick = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let report = Study::new(f, state, setup).failures(req, &tick)?;
    bar.finish_and_clear();
    Ok(report)
}

/// Run the sweep on the planar and the spread build of a spec.
pub fn compare(
    name: &str,
    text: &str,
    setup: &Setup,
    req: &FailureRequest,
) -> Result<Comparison, Failure> {
    let planar =
        build_inter_bag(name, text, InterBagTopology::Planar).map_err(Failure::BadInput)?;
    let spread =
        build_inter_bag(name, text, InterBagTopology::Spread).map_err(Failure::BadInput)?;
    let bar = progress_bar("scenarios (planar, then spread)");
    let tick = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let cmp = planar_vs_spread_sweep(&planar, &spread, setup, req, &tick)?;
    bar.finish_and_clear();
    Ok(cmp)
}
