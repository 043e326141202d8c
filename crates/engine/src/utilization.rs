//! Link utilization of a collective: per tier, the busiest resources, and a histogram.

use crate::sim::{Bottleneck, TierUtil};
use aifabric_dataplane::{Net, ResourceId};
use rustc_hash::FxHashMap;

pub(crate) fn utilization(
    net: &Net<'_>,
    carried: impl Iterator<Item = (u32, f64)>,
    xfer_s: f64,
) -> (Vec<TierUtil>, Vec<Bottleneck>, Vec<u64>) {
    let mut hist = vec![0u64; 20];
    if xfer_s <= 0.0 {
        return (Vec::new(), Vec::new(), hist);
    }
    let mut per: Vec<(u32, f64)> = carried
        .filter(|&(_, b)| b > 0.0)
        .map(|(r, b)| {
            let cap = net.capacity_bps(ResourceId::new(r));
            (r, if cap > 0.0 { b / (cap * xfer_s) } else { 0.0 })
        })
        .collect();
    per.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for &(_, u) in &per {
        hist[((u * 20.0) as usize).min(19)] += 1;
    }
    let mut tiers: FxHashMap<String, Vec<f64>> = FxHashMap::default();
    for &(r, u) in &per {
        tiers
            .entry(net.resource_tier(ResourceId::new(r)))
            .or_default()
            .push(u);
    }
    let mut out: Vec<TierUtil> = tiers
        .into_iter()
        .map(|(tier, v)| {
            // v is sorted high to low.
            let k = ((v.len() as f64) * 0.01).floor() as usize;
            TierUtil {
                resources: v.len() as u64,
                max: v[0],
                p99: v[k.min(v.len() - 1)],
                mean: v.iter().sum::<f64>() / v.len() as f64,
                tier,
            }
        })
        .collect();
    out.sort_by(|a, b| a.tier.cmp(&b.tier));
    let bottlenecks = per
        .iter()
        .take(5)
        .map(|&(r, u)| Bottleneck {
            resource: net.resource_name(ResourceId::new(r)),
            tier: net.resource_tier(ResourceId::new(r)),
            utilization: u,
        })
        .collect();
    (out, bottlenecks, hist)
}
