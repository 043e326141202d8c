//! Time: integer picoseconds, and conversions from and to seconds.

/// Picoseconds.
pub type Ps = u64;

/// Seconds to picoseconds, rounded.
pub fn ps(seconds: f64) -> Ps {
    (seconds * 1e12).round().max(0.0) as Ps
}

/// Picoseconds to seconds.
pub fn secs(t: Ps) -> f64 {
    t as f64 * 1e-12
}
