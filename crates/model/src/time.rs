//! Time: integer picoseconds, and conversions from and to seconds. The one time type of
//! the engines: every simulated time is a count of picoseconds, seconds appear only where
//! results are printed (`secs`) or read from seconds-valued inputs (`ps`).

use std::ops::{Add, AddAssign, Mul};

/// A time or a duration in integer picoseconds: sums are exact and order-independent, so a
/// result does not depend on the order its parts are added in (a replay's ranks, a packet
/// engine's events). Arithmetic saturates at
/// [`Ps::MAX`] (about 213 days) rather than wrap; a caller that can reach it
/// (a replay) refuses a result that did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ps(u64);

impl Ps {
    /// Zero.
    pub const ZERO: Ps = Ps(0);

    /// The largest time (2^64 - 1 ps, about 213 days): what a sum past it saturates to.
    pub const MAX: Ps = Ps(u64::MAX);

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
        Ps(self.0.saturating_add(d.0))
    }
}

impl AddAssign for Ps {
    fn add_assign(&mut self, d: Ps) {
        *self = *self + d;
    }
}

/// A duration `k` times over.
impl Mul<Ps> for u64 {
    type Output = Ps;

    fn mul(self, d: Ps) -> Ps {
        Ps(self.saturating_mul(d.0))
    }
}

/// The longest time an input may give (a flow's start, a latency): 10^18 ps, about 11.6
/// days. A run adds its own durations to it, and 18 times that is still under [`Ps::MAX`],
/// so no clock that starts from an input saturates, let alone wraps.
pub const MAX_INPUT_PS: u64 = 1_000_000_000_000_000_000;

/// Seconds to picoseconds for an input: `None` unless finite, at least 0 and at most
/// [`MAX_INPUT_PS`] (the caller refuses it with the valid range, rather than let [`ps`]
/// clamp it to a wrong time).
pub fn checked_ps(seconds: f64) -> Option<Ps> {
    let v = (seconds * 1e12).round();
    (v.is_finite() && (0.0..=MAX_INPUT_PS as f64).contains(&v)).then_some(Ps(v as u64))
}

/// Seconds to picoseconds, rounded (negative seconds give zero, beyond [`Ps::MAX`] gives it).
pub fn ps(seconds: f64) -> Ps {
    Ps((seconds * 1e12).round().max(0.0) as u64)
}

/// Picoseconds to seconds.
pub fn secs(t: Ps) -> f64 {
    t.0 as f64 * 1e-12
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_conversions_refuse_what_would_clamp() {
        assert_eq!(checked_ps(1e-6), Some(Ps::new(1_000_000)));
        assert_eq!(checked_ps(0.0), Some(Ps::ZERO));
        assert_eq!(checked_ps(1e6), Some(Ps::new(MAX_INPUT_PS)));
        for bad in [-1e-6, 1e300, f64::NAN, f64::INFINITY, 1e6 * 1.01] {
            assert_eq!(checked_ps(bad), None, "{bad}");
        }
    }
}
