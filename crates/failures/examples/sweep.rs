//! One-shot timing of a single-SRG sweep, for `/usr/bin/time -v` (peak memory) and profilers:
//! `cargo run --release -p aifabric-failures --example sweep -- [SPEC] [CLASS]`.

use aifabric_failures::sweep::{impact, run, Sweep};
use aifabric_failures::Evaluator;
use aifabric_model::SrgClass;
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let spec = args.next().unwrap_or_else(|| "prometheus".to_owned());
    let class = args.next().map(|c| {
        SrgClass::from_prefix(&c).unwrap_or_else(|| {
            eprintln!("unknown class `{c}`");
            std::process::exit(2)
        })
    });
    let f = aifabric_spec::load(&spec).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let catalog = f.srg_catalog();
    let t = Instant::now();
    let ev = Evaluator::new(&f, AsnPlan::Rfc7938, BgpConfig::default()).expect("converges");
    let built = t.elapsed();
    let recs = run(&ev, &catalog, &Sweep::Single(class), &|_, _| {}).expect("converges");
    let worst = recs
        .iter()
        .map(|r| (impact(&ev, &r.outcome), &r.scenario))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    println!(
        "{spec}: evaluator {built:?}, {} scenarios in {:?} in all; worst {worst:?}",
        recs.len(),
        t.elapsed()
    );
}
