//! Issue 3 targets (release, 2 cores): the whole converged forwarding state of builtin
//! `prometheus` within 5 s; one link failure applied incrementally within 50 ms.
//! Run: `cargo bench -p aifabric-routing --bench forwarding`.

use aifabric_model::{LinkId, PortKind, Scenario};
use aifabric_routing::bgp::*;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::hint::black_box;

fn forwarding(c: &mut Criterion) {
    let f = aifabric_spec::load("prometheus").unwrap();
    let g = BgpGraph::new(&f, AsnPlan::Rfc7938);
    let cfg = BgpConfig::default();
    let healthy = session_states(&f, &g, &Scenario::healthy(&f));
    let mut grp = c.benchmark_group("prometheus_forwarding");
    grp.sample_size(10);
    grp.bench_function("converge_all", |b| {
        b.iter(|| black_box(converge_all(&f, &g, healthy.clone(), &cfg).unwrap()))
    });
    let state = converge_all(&f, &g, healthy.clone(), &cfg).unwrap();
    // One NSF rack uplink: it sits in the routes toward every other origin.
    let link = (0..f.links().len() as u32)
        .map(LinkId)
        .find(|&l| {
            let k = f.link(l);
            k.kind == PortKind::Ethernet && f.device(k.a).role == aifabric_model::Role::Rtsw
        })
        .unwrap();
    let mut failed = Scenario::healthy(&f);
    failed.failed.fail_link(link);
    let after = session_states(&f, &g, &failed);
    grp.bench_function("one_link_failure_incremental", |b| {
        b.iter_batched(
            || state.clone(),
            |mut s| black_box(s.update(&g, after.clone()).unwrap()),
            BatchSize::LargeInput,
        )
    });
    grp.finish();
}

criterion_group!(benches, forwarding);
criterion_main!(benches);
