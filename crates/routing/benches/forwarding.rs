//! Issue 3 targets (release, 2 cores): the whole converged forwarding state of builtin
//! `prometheus` within 5 s; one link failure applied incrementally within 50 ms (timed with
//! the session-state scan it needs).
//! Run: `cargo bench -p aifabric-routing --bench forwarding`.
#![allow(missing_docs)] // criterion_main! defines an undocumented `main`

use aifabric_model::{Fabric, LinkId, PortKind, Role, Scenario};
use aifabric_routing::bgp::*;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::hint::black_box;

/// A scenario failing an NSF rack's whole uplink bundle (`whole`) or one link of it.
fn rack_uplink_failure(f: &Fabric, whole: bool) -> Scenario {
    let l = (0..f.links().len() as u32)
        .map(LinkId::new)
        .find(|&l| f.link(l).kind == PortKind::Ethernet && f.device(f.link(l).a).role == Role::Rtsw)
        .expect("prometheus has NSF racks");
    let mut s = Scenario::healthy(f);
    if whole {
        s.failed.fail_bundle(f, f.link(l).bundle);
    } else {
        s.failed.fail_link(l);
    }
    s
}

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
    for (name, whole) in [
        ("session_down_incremental", true),
        ("one_lane_down_incremental", false),
    ] {
        let scenario = rack_uplink_failure(&f, whole);
        grp.bench_function(name, |b| {
            b.iter_batched(
                || state.clone(),
                |mut s| {
                    let states = session_states(&f, &g, &scenario);
                    let n = s.update(&g, states).unwrap();
                    // Returned, so that freeing the state is not timed.
                    (s, n)
                },
                BatchSize::LargeInput,
            )
        });
    }
    grp.finish();
}

criterion_group!(benches, forwarding);
criterion_main!(benches);
