//! Issue target: build + capacity of builtin `prometheus` within 1 s (release, 2 cores).
//! Run: `cargo bench -p aifabric-capacity --bench prometheus`.
#![allow(missing_docs)] // criterion_main! defines an undocumented `main`

use aifabric_capacity::capacity_report;
use aifabric_model::FailureMask;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn prometheus(c: &mut Criterion) {
    let mut g = c.benchmark_group("prometheus");
    g.sample_size(10);
    g.bench_function("build", |b| {
        b.iter(|| black_box(aifabric_spec::load("prometheus").unwrap()))
    });
    let f = aifabric_spec::load("prometheus").unwrap();
    let mask = FailureMask::none(&f);
    g.bench_function("capacity", |b| {
        b.iter(|| black_box(capacity_report(&f, &mask)))
    });
    g.bench_function("build+capacity", |b| {
        b.iter(|| {
            let f = aifabric_spec::load("prometheus").unwrap();
            black_box(capacity_report(&f, &FailureMask::none(&f)))
        })
    });
    g.finish();
}

criterion_group!(benches, prometheus);
criterion_main!(benches);
