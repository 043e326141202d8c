//! Time: integer picoseconds, and conversions from and to seconds.

use std::ops::{Add, AddAssign, Mul};

/// A time or a duration in integer picoseconds: sums are exact and order-independent, so a
/// replay's times do not depend on the order ranks are read in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ps(u64);

impl Ps {
    /// Zero.
    pub const ZERO: Ps = Ps(0);

    /// `v` picoseconds.
    pub const fn new(v: u64) -> Ps {
        Ps(v)
    }

    /// In picoseconds.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// `self - earlier`, or zero if `earlier` is later.
    pub fn since(self, earlier: Ps) -> Ps {
        Ps(self.0.saturating_sub(earlier.0))
    }
}

impl Add for Ps {
    type Output = Ps;

    fn add(self, d: Ps) -> Ps {
        Ps(self.0 + d.0)
    }
}

impl AddAssign for Ps {
    fn add_assign(&mut self, d: Ps) {
        self.0 += d.0;
    }
}

/// A duration `k` times over.
impl Mul<Ps> for u64 {
    type Output = Ps;

    fn mul(self, d: Ps) -> Ps {
        Ps(self * d.0)
    }
}

/// Seconds to picoseconds, rounded (negative seconds give zero).
pub fn ps(seconds: f64) -> Ps {
    Ps((seconds * 1e12).round().max(0.0) as u64)
}

/// Picoseconds to seconds.
pub fn secs(t: Ps) -> f64 {
    t.0 as f64 * 1e-12
}
