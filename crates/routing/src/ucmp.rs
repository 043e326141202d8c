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

/// One multipath as its receiver sees it: the link-bandwidth value heard over the session
/// (summed over its live links; `None`: no community) and its live links. eBGP runs per link
/// (RFC 7938 section 5.2.1), so each live link is a path of its own: where the weights fall
/// back to equal shares (no community, the `ecmp` fallback) or to a default value
/// (`default:N`), they are equal per *link*, as FRR and the kernel install them.
pub type Path = (Option<u64>, u32);

/// The bandwidth each multipath counts for under `missing` (per link where the value is a
/// fallback), or `None` when all come to 0 (then equal shares per link).
fn units(paths: &[Path], missing: MissingBandwidth) -> impl Iterator<Item = u64> + '_ {
    let any_missing = paths.iter().any(|p| p.0.is_none());
    let all_missing = paths.iter().all(|p| p.0.is_none());
    paths.iter().map(move |&(b, links)| {
        let links = u64::from(links);
        match missing {
            MissingBandwidth::EcmpFallback if any_missing => links,
            MissingBandwidth::SkipMissing if all_missing => links,
            MissingBandwidth::SkipMissing | MissingBandwidth::EcmpFallback => b.unwrap_or(0),
            MissingBandwidth::DefaultWeight(d) => b.unwrap_or_else(|| d.saturating_mul(links)),
        }
    })
}

/// Ideal UCMP weights (summing to 1) for multipaths `paths`. All-zero input gives equal
/// shares per live link (ECMP), and equal shares per multipath if no link is live.
pub fn weights(paths: &[Path], missing: MissingBandwidth) -> Vec<f64> {
    let mut out = Vec::with_capacity(paths.len());
    weights_into(paths, missing, &mut out);
    out
}

/// [`weights`] into a reused buffer (hot loops: flow propagation over every speaker).
pub fn weights_into(paths: &[Path], missing: MissingBandwidth, out: &mut Vec<f64>) {
    out.clear();
    let n = paths.len();
    if n == 0 {
        return;
    }
    let total: u128 = units(paths, missing).map(u128::from).sum();
    if total == 0 {
        let links: u64 = paths.iter().map(|p| u64::from(p.1)).sum();
        if links == 0 {
            out.resize(n, 1.0 / n as f64);
        } else {
            out.extend(paths.iter().map(|p| f64::from(p.1) / links as f64));
        }
        return;
    }
    let total = total as f64;
    out.extend(units(paths, missing).map(|u| u as f64 / total));
}

/// The integers whose ratios are [`weights`]: the bandwidth each multipath counts for under
/// `missing` (its live links where the split falls back to equal shares per link). What
/// [`split`] programs.
pub fn integer_weights(paths: &[Path], missing: MissingBandwidth) -> Vec<u64> {
    let v: Vec<u64> = units(paths, missing).collect();
    if v.iter().all(|&x| x == 0) {
        let links: Vec<u64> = paths.iter().map(|p| u64::from(p.1)).collect();
        if links.iter().all(|&x| x == 0) {
            return vec![1; v.len()];
        }
        return links;
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
        &bandwidths.iter().map(|&b| (Some(b), 1)).collect::<Vec<_>>(),
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
        let w = weights(
            &[(Some(400), 4), (Some(300), 3)],
            MissingBandwidth::EcmpFallback,
        );
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
        let bw = [(Some(300), 1), (None, 1), (Some(100), 1)];
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
            weights(&[(None, 1), (None, 1)], MissingBandwidth::SkipMissing),
            vec![0.5, 0.5]
        );
    }

    /// Every fallback is per live link, as FRR installs one path per eBGP session and a
    /// session per link: 2 links and 1 link split 2/3 and 1/3 (measured with FRR 8.4).
    #[test]
    fn fallbacks_are_per_live_link() {
        let two_and_one = [(None, 2), (None, 1)];
        for m in [
            MissingBandwidth::EcmpFallback,
            MissingBandwidth::SkipMissing,
        ] {
            assert_eq!(weights(&two_and_one, m), vec![2.0 / 3.0, 1.0 / 3.0]);
            assert_eq!(integer_weights(&two_and_one, m), vec![2, 1]);
        }
        // ECMP fallback over a mix: per link, whatever the values heard.
        let mixed = [(Some(800), 2), (None, 1)];
        assert_eq!(
            weights(&mixed, MissingBandwidth::EcmpFallback),
            vec![2.0 / 3.0, 1.0 / 3.0]
        );
        // default:N counts N per link of a path without the community.
        assert_eq!(
            integer_weights(
                &[(Some(800), 2), (None, 3)],
                MissingBandwidth::DefaultWeight(100)
            ),
            vec![800, 300]
        );
        // Zeros: equal per link.
        assert_eq!(
            weights(&[(Some(0), 3), (Some(0), 1)], MissingBandwidth::SkipMissing),
            vec![0.75, 0.25]
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
