//! Unequal-cost multipath from the BGP link-bandwidth extended community
//! (draft-ietf-idr-link-bandwidth).
//!
//! A receiver weights each multipath next hop by the bandwidth it advertises over the sum of
//! all of them. Hardware cannot program real numbers: it replicates next hops in a group of
//! at most M entries. Weights whose smallest integer ratio fits in M entries are programmed
//! exactly: equal weights give each next hop one entry (an ECMP group, as switches program
//! equal-cost multipath), 4:3 gives 4 and 3 entries. Only weights that do not fit are
//! quantized into M entries (largest remainder: 50/25/25 in 16 slots -> 8/4/4), as WCMP
//! reduces weights to a table size (Zhou et al., "WCMP: Weighted Cost Multipathing for
//! Improved Fairness in Data Centers", EuroSys 2014).

use serde::Serialize;

/// What to do when some multipaths carry no link-bandwidth community (FRR's
/// `bgp bestpath bandwidth` options).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingBandwidth {
    /// FRR's default: if any path lacks it, fall back to plain ECMP over all of them.
    EcmpFallback,
    /// Use only the paths that carry it (the others get weight 0), unless none does.
    SkipMissing,
    /// Give paths without it this bandwidth (bytes/s in the wire format; any unit here).
    DefaultWeight(u64),
}

/// Ideal UCMP weights (summing to 1) for next hops advertising `bandwidths` (`None` = no
/// community). All-zero or all-missing input gives equal weights (ECMP).
pub fn weights(bandwidths: &[Option<u64>], missing: MissingBandwidth) -> Vec<f64> {
    let mut out = Vec::with_capacity(bandwidths.len());
    weights_into(bandwidths, missing, &mut out);
    out
}

/// [`weights`] into a reused buffer (hot loops: flow propagation over every speaker).
pub fn weights_into(bandwidths: &[Option<u64>], missing: MissingBandwidth, out: &mut Vec<f64>) {
    out.clear();
    let n = bandwidths.len();
    if n == 0 {
        return;
    }
    let any_missing = bandwidths.iter().any(Option::is_none);
    let all_missing = bandwidths.iter().all(Option::is_none);
    let bw = |b: Option<u64>| -> u64 {
        match missing {
            MissingBandwidth::EcmpFallback if any_missing => 1,
            MissingBandwidth::SkipMissing if all_missing => 1,
            MissingBandwidth::SkipMissing | MissingBandwidth::EcmpFallback => b.unwrap_or(0),
            MissingBandwidth::DefaultWeight(d) => b.unwrap_or(d),
        }
    };
    let total: u128 = bandwidths.iter().map(|&b| u128::from(bw(b))).sum();
    if total == 0 {
        out.resize(n, 1.0 / n as f64);
        return;
    }
    let total = total as f64;
    out.extend(bandwidths.iter().map(|&b| bw(b) as f64 / total));
}

/// The integers whose ratios are [`weights`]: the bandwidth each next hop counts for under
/// `missing` (all 1 where the split falls back to equal weights). What [`split`] programs.
pub fn integer_weights(bandwidths: &[Option<u64>], missing: MissingBandwidth) -> Vec<u64> {
    let any_missing = bandwidths.iter().any(Option::is_none);
    let all_missing = bandwidths.iter().all(Option::is_none);
    let v: Vec<u64> = bandwidths
        .iter()
        .map(|&b| match missing {
            MissingBandwidth::EcmpFallback if any_missing => 1,
            MissingBandwidth::SkipMissing if all_missing => 1,
            MissingBandwidth::SkipMissing | MissingBandwidth::EcmpFallback => b.unwrap_or(0),
            MissingBandwidth::DefaultWeight(d) => b.unwrap_or(d),
        })
        .collect();
    if v.iter().all(|&x| x == 0) {
        return vec![1; v.len()];
    }
    v
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The weights reduced to their smallest integer ratio (4000:3000 -> 4:3; zeros stay 0),
/// if its entries add up to at most `max`: the group that programs them exactly.
pub fn exact(bandwidths: &[u64], max: u32) -> Option<Vec<u32>> {
    let g = bandwidths.iter().fold(0, |g, &b| gcd(g, b));
    if g == 0 {
        return None;
    }
    let mut sum = 0u64;
    let mut out = Vec::with_capacity(bandwidths.len());
    for &b in bandwidths {
        let r = b / g;
        sum += r;
        if sum > u64::from(max) {
            return None;
        }
        out.push(r as u32);
    }
    Some(out)
}

/// Integer slots per next hop in a group of `slots` entries, by largest remainder (Hamilton):
/// floor each exact share, then give the leftover slots to the largest fractional parts, ties
/// to the lower index. Exact in integers: share_i = slots * bw_i / sum(bw).
pub fn quantize(bandwidths: &[u64], slots: u32) -> Vec<u32> {
    let total: u128 = bandwidths.iter().map(|&b| u128::from(b)).sum();
    if bandwidths.is_empty() || slots == 0 {
        return vec![0; bandwidths.len()];
    }
    if total == 0 {
        return quantize(&vec![1; bandwidths.len()], slots);
    }
    let m = u128::from(slots);
    let mut q: Vec<u32> = Vec::with_capacity(bandwidths.len());
    let mut rem: Vec<(u128, usize)> = Vec::with_capacity(bandwidths.len());
    for (i, &b) in bandwidths.iter().enumerate() {
        let exact = m * u128::from(b);
        q.push((exact / total) as u32);
        rem.push((exact % total, i));
    }
    let left = slots - q.iter().sum::<u32>();
    // Largest remainder first; ties to the lower index (stable, deterministic).
    rem.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in rem.iter().take(left as usize) {
        q[i] += 1;
    }
    q
}

/// A next-hop group as hardware programs it, next to the ideal split.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuantizedSplit {
    /// Ideal shares (sum 1).
    pub ideal: Vec<f64>,
    /// Slots per next hop (sum = [`QuantizedSplit::entries`]).
    pub slots: Vec<u32>,
    /// Entries the group uses: the smallest integer ratio's sum when it fits in the group
    /// size (exact), else the group size (quantized).
    pub entries: u32,
    /// Largest ratio of programmed to ideal share over the next hops: how much more than its
    /// due the most over-served next hop gets (1.0 = exact).
    pub max_overload: f64,
    /// Half the L1 distance between programmed and ideal shares: the fraction of traffic
    /// that goes to the "wrong" next hop.
    pub misrouted_fraction: f64,
}

/// Program `bandwidths` into a group of at most `group_size` entries and measure the loss:
/// exactly when their smallest integer ratio fits ([`exact`]; equal weights take one entry
/// each), else quantized into `group_size` entries ([`quantize`]).
pub fn split(bandwidths: &[u64], group_size: u32) -> QuantizedSplit {
    let ideal = weights(
        &bandwidths.iter().map(|&b| Some(b)).collect::<Vec<_>>(),
        MissingBandwidth::EcmpFallback,
    );
    let slots = exact(bandwidths, group_size).unwrap_or_else(|| quantize(bandwidths, group_size));
    let entries: u32 = slots.iter().sum();
    let m = f64::from(entries.max(1));
    let mut max_overload: f64 = 1.0;
    let mut l1 = 0.0;
    for (w, &s) in ideal.iter().zip(&slots) {
        let p = f64::from(s) / m;
        l1 += (p - w).abs();
        if *w > 0.0 {
            max_overload = max_overload.max(p / w);
        }
    }
    QuantizedSplit {
        ideal,
        slots,
        entries,
        max_overload,
        misrouted_fraction: l1 / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reference_example_50_25_25_in_16_slots() {
        // Weights 50/25/25 in 16 slots by largest remainder: 8/4/4.
        assert_eq!(quantize(&[50, 25, 25], 16), vec![8, 4, 4]);
        // Programmed exactly as 2:1:1 in 4 entries.
        let s = split(&[50, 25, 25], 16);
        assert_eq!((s.slots.clone(), s.entries), (vec![2, 1, 1], 4));
        assert_eq!(s.ideal, vec![0.5, 0.25, 0.25]);
        assert_eq!(s.max_overload, 1.0);
        assert_eq!(s.misrouted_fraction, 0.0);
    }

    #[test]
    fn losing_one_of_four_parallel_links_gives_3_to_4() {
        // Two next hops, 4 x 100G and 3 x 100G behind them: weights 4/7 and 3/7.
        let w = weights(&[Some(400), Some(300)], MissingBandwidth::EcmpFallback);
        assert!((w[0] - 4.0 / 7.0).abs() < 1e-12 && (w[1] - 3.0 / 7.0).abs() < 1e-12);
        // 4:3 fits a group of 7 entries: exact.
        let s = split(&[400, 300], 16);
        assert_eq!((s.slots.clone(), s.entries), (vec![4, 3], 7));
        assert_eq!(s.max_overload, 1.0);
        // 400:299 does not fit in 16: 16 * 400/699 = 9.16, 16 * 299/699 = 6.84 -> 9 and 7.
        let s = split(&[400, 299], 16);
        assert_eq!((s.slots.clone(), s.entries), (vec![9, 7], 16));
        assert!((s.max_overload - (7.0 / 16.0) / (299.0 / 699.0)).abs() < 1e-12);
    }

    #[test]
    fn equal_next_hops_stay_equal() {
        // 18 equal next hops in a 64-entry group: one entry each, not 4/64 vs 3/64.
        let s = split(&[1_600_000; 18], 64);
        assert_eq!(s.slots, vec![1; 18]);
        assert_eq!(
            (s.entries, s.max_overload, s.misrouted_fraction),
            (18, 1.0, 0.0)
        );
        // More equal next hops than entries: quantized, the best a group of 64 can do.
        let s = split(&[1; 80], 64);
        assert_eq!(s.entries, 64);
    }

    #[test]
    fn frr_behaviour_for_missing_communities() {
        let bw = [Some(300), None, Some(100)];
        assert_eq!(
            weights(&bw, MissingBandwidth::EcmpFallback),
            vec![1.0 / 3.0; 3]
        );
        assert_eq!(
            weights(&bw, MissingBandwidth::SkipMissing),
            vec![0.75, 0.0, 0.25]
        );
        assert_eq!(
            weights(&bw, MissingBandwidth::DefaultWeight(100)),
            vec![0.6, 0.2, 0.2]
        );
        assert_eq!(
            weights(&[None, None], MissingBandwidth::SkipMissing),
            vec![0.5, 0.5]
        );
    }

    #[test]
    fn ties_go_to_the_lower_index() {
        assert_eq!(quantize(&[1, 1, 1], 16), vec![6, 5, 5]);
        assert_eq!(quantize(&[0, 0], 4), vec![2, 2]);
    }

    proptest! {
        #[test]
        fn quantization_fills_the_group_within_one_slot(
            bw in proptest::collection::vec(0u64..1_000_000, 1..12),
            m in 1u32..512,
        ) {
            let q = quantize(&bw, m);
            prop_assert_eq!(q.iter().sum::<u32>(), m);
            let total: u64 = bw.iter().sum();
            if total > 0 {
                for (&b, &s) in bw.iter().zip(&q) {
                    let exact = f64::from(m) * b as f64 / total as f64;
                    prop_assert!((f64::from(s) - exact).abs() < 1.0 + 1e-9);
                }
            }
        }
    }
}
