//! Converge the whole forwarding state of a spec and apply one link failure; prints timings.
//! For peak memory: `/usr/bin/time -v cargo run --release -p aifabric-routing --example
//! converge -- prometheus`.

use aifabric_model::{LinkId, PortKind, Role, Scenario};
use aifabric_routing::bgp::*;
use std::time::Instant;

fn main() {
    let spec = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "prometheus".to_owned());
    let f = aifabric_spec::load(&spec).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let g = BgpGraph::new(&f, AsnPlan::Rfc7938);
    let cfg = BgpConfig::default();
    let t = Instant::now();
    let mut state = converge_all(&f, &g, session_states(&f, &g, &Scenario::healthy(&f)), &cfg)
        .expect("converges");
    println!(
        "{spec}: {} speakers, {} sessions, {} origins converged in {:.3} s",
        g.speakers.len(),
        g.sessions.len(),
        state.origins.len(),
        t.elapsed().as_secs_f64()
    );
    let link = (0..f.links().len() as u32)
        .map(LinkId::new)
        .find(|&l| f.link(l).kind == PortKind::Ethernet && f.device(f.link(l).a).role == Role::Rtsw)
        .expect("an NSF or RoCE rack uplink");
    // A whole rack uplink bundle: the session goes down (timed with the state scan).
    let mut s = Scenario::healthy(&f);
    s.failed.fail_bundle(&f, f.link(link).bundle);
    let t = Instant::now();
    let n = state
        .update(&g, session_states(&f, &g, &s))
        .expect("converges");
    println!(
        "session down ({} uplink bundle): {n} origins updated in {:.1} ms",
        f.device_name(f.link(link).a),
        t.elapsed().as_secs_f64() * 1e3
    );
}
