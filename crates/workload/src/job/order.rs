//! The rank order: how the ranks of a job are numbered over its parallelism dimensions, and
//! the groups of each dimension that follow from it.
//!
//! An order lists the dimensions fastest first: with `[tp, cp, dp, pp]` (Megatron-LM's
//! layout, the default) `rank = t + tp (c + cp (d + dp p))`, so a TP group is `tp`
//! consecutive ranks. "The Llama 3 Herd of Models" (Meta, 2024, section 3.3.2) orders its
//! ranks `[TP, CP, PP, DP]`, so that the dimension with the least traffic, DP, is the one
//! that crosses the network's upper tiers. Expert parallelism stays inside data parallelism:
//! an EP group is `ep` consecutive data-parallel coordinates.

use super::Dim;
use serde::Serialize;

/// The four rank-numbering dimensions, fastest first. Every one appears exactly once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RankOrder([Dim; 4]);

/// Megatron-LM's order (tp, cp, dp, pp): the default, today's layout.
pub const MEGATRON: RankOrder = RankOrder([Dim::Tp, Dim::Cp, Dim::Dp, Dim::Pp]);

impl Default for RankOrder {
    fn default() -> Self {
        MEGATRON
    }
}

impl RankOrder {
    /// An order from a list of dimensions fastest first: each of tp, cp, pp, dp at most once
    /// (ep is not a rank dimension of its own); the ones left out are appended in Megatron's
    /// order (they matter only when their degree is above 1, which the caller checks).
    /// `None` if the list repeats a dimension or names ep.
    pub fn new(dims: &[Dim]) -> Option<RankOrder> {
        let mut out = Vec::with_capacity(4);
        for &d in dims {
            if d == Dim::Ep || out.contains(&d) {
                return None;
            }
            out.push(d);
        }
        for d in MEGATRON.0 {
            if !out.contains(&d) {
                out.push(d);
            }
        }
        Some(RankOrder([out[0], out[1], out[2], out[3]]))
    }

    /// The dimensions, fastest first.
    pub fn dims(&self) -> [Dim; 4] {
        self.0
    }

    /// As the job file writes it, e.g. `[tp, cp, dp, pp]`.
    pub fn label(&self) -> String {
        let names: Vec<&str> = self.0.iter().map(|d| d.name()).collect();
        format!("[{}]", names.join(", "))
    }
}

/// The rank numbering of a job: sizes per dimension and the order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    order: RankOrder,
    /// Degree of each dimension, indexed by [`slot`].
    size: [u32; 4],
    /// Stride of each dimension in the rank number, indexed by [`slot`].
    stride: [u32; 4],
}

/// Index of a rank dimension in [`Layout`]'s arrays.
fn slot(d: Dim) -> usize {
    match d {
        Dim::Tp => 0,
        Dim::Cp => 1,
        Dim::Dp => 2,
        Dim::Pp => 3,
        Dim::Ep => unreachable!("ep is not a rank dimension"),
    }
}

impl Layout {
    /// The layout of `tp x cp x dp x pp` ranks in `order`.
    pub(crate) fn new(order: RankOrder, tp: u32, cp: u32, dp: u32, pp: u32) -> Layout {
        let size = [tp, cp, dp, pp];
        let mut stride = [0; 4];
        let mut s = 1;
        for d in order.0 {
            stride[slot(d)] = s;
            s *= size[slot(d)];
        }
        Layout {
            order,
            size,
            stride,
        }
    }

    fn rank(&self, coord: &[u32; 4]) -> u32 {
        (0..4).map(|i| coord[i] * self.stride[i]).sum()
    }

    /// Every coordinate of the dimensions `outer`, the first one slowest (odometer order).
    fn coords(&self, outer: &[Dim]) -> Vec<[u32; 4]> {
        let mut out = vec![[0u32; 4]];
        for &d in outer {
            let i = slot(d);
            out = out
                .into_iter()
                .flat_map(|c| {
                    (0..self.size[i]).map(move |x| {
                        let mut c = c;
                        c[i] = x;
                        c
                    })
                })
                .collect();
        }
        out
    }

    /// The dimensions other than `skip`, slowest first: the nesting of the group loops, so
    /// that in Megatron's order groups come out as they always have.
    fn others(&self, skip: &[Dim]) -> Vec<Dim> {
        self.order
            .0
            .iter()
            .rev()
            .copied()
            .filter(|d| !skip.contains(d))
            .collect()
    }

    /// The groups of `dim`: for TP and CP the ranks that differ in that coordinate only; for
    /// DP the ranks that differ in the data and context coordinates (every context-parallel
    /// rank holds the same weights, so gradients are reduced over both, as Megatron-LM does),
    /// data-major; for EP `ep` consecutive data coordinates; for PP the pairs (stage s, stage
    /// s + 1), `pairs` of them per pipeline (the last one wrapping to stage 0 when the
    /// stages form a ring).
    pub(crate) fn groups(&self, dim: Dim, ep: u32, pairs: u32) -> Vec<Vec<u32>> {
        let (cp, dp, pp) = (Dim::Cp, Dim::Dp, Dim::Pp);
        match dim {
            Dim::Tp | Dim::Cp => {
                let i = slot(dim);
                self.coords(&self.others(&[dim]))
                    .into_iter()
                    .map(|mut c| {
                        (0..self.size[i])
                            .map(|x| {
                                c[i] = x;
                                self.rank(&c)
                            })
                            .collect()
                    })
                    .collect()
            }
            Dim::Dp => self
                .coords(&self.others(&[dp, cp]))
                .into_iter()
                .map(|c| {
                    let inner = self.coords(&[dp, cp]);
                    inner
                        .into_iter()
                        .map(|x| {
                            let mut c = c;
                            c[slot(dp)] = x[slot(dp)];
                            c[slot(cp)] = x[slot(cp)];
                            self.rank(&c)
                        })
                        .collect()
                })
                .collect(),
            Dim::Ep => {
                let mut out = Vec::new();
                for c in self.coords(&self.others(&[dp])) {
                    for e in 0..self.size[slot(dp)] / ep {
                        out.push(
                            (0..ep)
                                .map(|k| {
                                    let mut c = c;
                                    c[slot(dp)] = e * ep + k;
                                    self.rank(&c)
                                })
                                .collect(),
                        );
                    }
                }
                out
            }
            Dim::Pp => {
                let mut out = Vec::new();
                let stages = self.size[slot(pp)];
                for s in 0..pairs {
                    for c in self.coords(&self.others(&[pp])) {
                        let (mut a, mut b) = (c, c);
                        a[slot(pp)] = s;
                        b[slot(pp)] = (s + 1) % stages;
                        out.push(vec![self.rank(&a), self.rank(&b)]);
                    }
                }
                out
            }
        }
    }
}
