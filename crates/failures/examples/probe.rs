use aifabric_failures::*;
use std::time::Instant;
fn main() {
    let f = aifabric_spec::load(&std::env::args().nth(1).unwrap_or("prometheus".into())).unwrap();
    let t = Instant::now();
    let ev = Evaluator::new(
        &f,
        aifabric_routing::bgp::AsnPlan::Rfc7938,
        Default::default(),
    )
    .unwrap();
    eprintln!("evaluator {:?}", t.elapsed());
    eprintln!("sites {:?}", ev.sites);
    eprintln!(
        "healthy site {:?}",
        &ev.healthy_site_gbps[..ev.healthy_site_gbps.len().min(12)]
    );
    eprintln!(
        "healthy region {:?} maxflow {:?}",
        ev.healthy_region_gbps, ev.healthy_maxflow_gbps
    );
    let cat = f.srg_catalog();
    let mut ws = ev.workspace();
    let t = Instant::now();
    let mut worst = (f64::INFINITY, String::new());
    let only = std::env::args().nth(2);
    for i in 0..cat.len() {
        if let Some(o) = &only {
            if !cat.names[i].starts_with(o.as_str()) {
                continue;
            }
        }
        let d = Down::of_srgs(&f, &cat, &[i]);
        let o = ev.evaluate(&d, &mut ws).unwrap();
        let r = o.region_pair_gbps.first().copied().unwrap_or(0.0)
            / ev.healthy_region_gbps.first().copied().unwrap_or(1.0);
        if i % 500 == 0 || cat.classes[i] != cat.classes[i.saturating_sub(1)] {
            eprintln!(
                "{} {:?} region {:.4} mf {:?} gpus {} tiers {} t={:?}",
                cat.names[i],
                o.region_pair_gbps,
                r,
                o.region_maxflow_gbps,
                o.gpus_disconnected,
                o.tiers.len(),
                t.elapsed()
            );
        }
        if r < worst.0 {
            worst = (r, cat.names[i].clone());
        }
    }
    eprintln!("all {} in {:?}; worst {:?}", cat.len(), t.elapsed(), worst);
}
