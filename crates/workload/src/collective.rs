//! Collective operations in closed form: the nccl-tests bandwidth definitions (nccl-tests,
//! doc/PERFORMANCE.md) and the alpha-beta lower bounds on a non-blocking fabric, and the
//! balls-into-bins statistics of ECMP hashing. The flow engine is checked against these;
//! they are also the analytic answer when no fabric is involved.
//!
//! Units are explicit: bytes, seconds, bytes per second, and GB/s with GB = 10^9 bytes.

/// A collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// All-reduce.
    AllReduce,
    /// Reduce-scatter (size: the whole input, recvcount x n x dtype).
    ReduceScatter,
    /// All-gather (size: the whole output, sendcount x n x dtype).
    AllGather,
    /// All-to-all (size: the per-rank send buffer).
    AllToAll,
    /// Broadcast.
    Broadcast,
    /// Reduce.
    Reduce,
}

impl Op {
    /// The operations, in CLI order.
    pub const ALL: [Op; 6] = [
        Op::AllReduce,
        Op::AllGather,
        Op::ReduceScatter,
        Op::AllToAll,
        Op::Broadcast,
        Op::Reduce,
    ];

    /// snake_case name, as on the command line and in Chakra-style traces.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::AllReduce => "all_reduce",
            Op::AllGather => "all_gather",
            Op::ReduceScatter => "reduce_scatter",
            Op::AllToAll => "all_to_all",
            Op::Broadcast => "broadcast",
            Op::Reduce => "reduce",
        }
    }

    /// Parse [`Op::as_str`] (dashes accepted for underscores).
    pub fn parse(s: &str) -> Option<Op> {
        let s = s.replace('-', "_");
        Op::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// nccl-tests' bus-bandwidth factor for `n` ranks (`doc/PERFORMANCE.md`): busBW = algBW x
    /// factor, so that busBW compares with the hardware's link speed whatever `n` is.
    pub fn bus_factor(self, n: u32) -> f64 {
        let n = f64::from(n.max(1));
        match self {
            Op::AllReduce => 2.0 * (n - 1.0) / n,
            Op::ReduceScatter | Op::AllGather | Op::AllToAll => (n - 1.0) / n,
            Op::Broadcast | Op::Reduce => 1.0,
        }
    }
}

impl std::str::FromStr for Op {
    type Err = String;

    fn from_str(s: &str) -> Result<Op, String> {
        Op::parse(s).ok_or_else(|| {
            format!(
                "unknown operation `{s}`{}; use {}",
                aifabric_model::did_you_mean_hint(s, &Op::ALL.map(Op::as_str)),
                Op::ALL.map(Op::as_str).join(", ")
            )
        })
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Algorithm bandwidth in GB/s (10^9 B): size over time.
pub fn alg_bw_gbytes_per_s(bytes: f64, seconds: f64) -> f64 {
    bytes / seconds / 1e9
}

/// Bus bandwidth in GB/s: [`alg_bw_gbytes_per_s`] x [`Op::bus_factor`].
pub fn bus_bw_gbytes_per_s(op: Op, n: u32, bytes: f64, seconds: f64) -> f64 {
    alg_bw_gbytes_per_s(bytes, seconds) * op.bus_factor(n)
}

/// How a collective is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Ring: n - 1 steps per phase.
    Ring,
    /// Recursive halving-doubling (all-reduce; n a power of two).
    HalvingDoubling,
    /// Direct (all-to-all): every rank sends to every other at once.
    Direct,
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Algorithm::Ring => "ring",
            Algorithm::HalvingDoubling => "halving-doubling",
            Algorithm::Direct => "direct",
        })
    }
}

/// An operation / algorithm pair with no closed form here, or a bad rank count.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NoClosedForm(pub String);

/// The alpha-beta time, seconds, of `op` by `algo` over `n` ranks on a non-blocking fabric:
/// `bytes` as nccl-tests counts them, per-step latency `alpha_s`, per-rank injection
/// bandwidth `bytes_per_s`.
pub fn alpha_beta_seconds(
    op: Op,
    algo: Algorithm,
    n: u32,
    bytes: f64,
    alpha_s: f64,
    bytes_per_s: f64,
) -> Result<f64, NoClosedForm> {
    if n == 0 {
        return Err(NoClosedForm(
            "a collective needs at least one rank".to_owned(),
        ));
    }
    let nf = f64::from(n);
    let wire = (nf - 1.0) / nf * bytes / bytes_per_s;
    let steps = nf - 1.0;
    match (op, algo) {
        (Op::AllReduce, Algorithm::Ring) => Ok(2.0 * steps * alpha_s + 2.0 * wire),
        (Op::AllReduce, Algorithm::HalvingDoubling) if n.is_power_of_two() => {
            Ok(2.0 * nf.log2() * alpha_s + 2.0 * wire)
        }
        (Op::AllReduce, Algorithm::HalvingDoubling) => Err(NoClosedForm(format!(
            "recursive halving-doubling needs a power-of-two rank count, not {n}"
        ))),
        (Op::ReduceScatter | Op::AllGather, Algorithm::Ring)
        | (Op::AllToAll, Algorithm::Direct) => Ok(steps * alpha_s + wire),
        _ => Err(NoClosedForm(format!("no closed form for {op} by {algo}"))),
    }
}

/// One level of a hierarchy: per-step latency and per-rank bandwidth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Level {
    /// Per-step latency, seconds.
    pub alpha_s: f64,
    /// Per-rank bandwidth, bytes per second.
    pub bytes_per_s: f64,
}

/// Hierarchical all-reduce over `domains` scale-up domains of `g` GPUs: ring reduce-scatter
/// inside each domain, ring all-reduce of `bytes / g` across domains on the NICs, ring
/// all-gather inside the domain. Seconds.
pub fn hierarchical_all_reduce_seconds(
    domains: u32,
    g: u32,
    bytes: f64,
    inside: Level,
    across: Level,
) -> Result<f64, NoClosedForm> {
    if g == 0 || domains == 0 {
        return Err(NoClosedForm(
            "a hierarchy needs at least one domain of one GPU".to_owned(),
        ));
    }
    let rs = |op| {
        alpha_beta_seconds(
            op,
            Algorithm::Ring,
            g,
            bytes,
            inside.alpha_s,
            inside.bytes_per_s,
        )
    };
    let ar = alpha_beta_seconds(
        Op::AllReduce,
        Algorithm::Ring,
        domains,
        bytes / f64::from(g),
        across.alpha_s,
        across.bytes_per_s,
    )?;
    Ok(rs(Op::ReduceScatter)? + ar + rs(Op::AllGather)?)
}

/// Distribution of the busiest of `n` equal paths when `m` flows hash onto them uniformly
/// and independently (balls into bins): `P[max load < k]` for k = 1..=m+1, computed exactly.
///
/// `P[every path gets < k] = m! [x^m] (sum_{j<k} x^j / (j! n^j))^n`, evaluated by convolving
/// one path at a time.
fn max_load_below(m: u32, n: u32, k: u32) -> f64 {
    let m = m as usize;
    let n_f = f64::from(n);
    // Terms x^j / (j! n^j), j < k, up to degree m.
    let mut term = vec![0.0f64; m + 1];
    let mut t = 1.0;
    for (j, slot) in term.iter_mut().enumerate().take((k as usize).min(m + 1)) {
        if j > 0 {
            t /= j as f64 * n_f;
        }
        *slot = t;
    }
    let mut poly = vec![0.0f64; m + 1];
    poly[0] = 1.0;
    for _ in 0..n {
        let mut next = vec![0.0f64; m + 1];
        for (a, &pa) in poly.iter().enumerate() {
            if pa == 0.0 {
                continue;
            }
            for (b, &tb) in term.iter().enumerate().take(m + 1 - a) {
                next[a + b] += pa * tb;
            }
        }
        poly = next;
    }
    // m! x coefficient.
    (1..=m).fold(poly[m], |acc, i| acc * i as f64)
}

/// Probability that the busiest of `n` paths carries exactly `load` of `m` hashed flows.
pub fn ecmp_max_load_probability(m: u32, n: u32, load: u32) -> f64 {
    max_load_below(m, n, load + 1) - max_load_below(m, n, load)
}

/// Expected flows on the busiest of `n` equal paths when `m` flows hash onto them uniformly
/// (exact): what stretches a ring step under per-flow ECMP.
pub fn ecmp_expected_max_load(m: u32, n: u32) -> f64 {
    if m == 0 || n == 0 {
        return 0.0;
    }
    // E[max] = sum over k >= 1 of P[max >= k] = sum (1 - P[max < k]).
    (1..=m).map(|k| 1.0 - max_load_below(m, n, k)).sum()
}

/// Expected idle paths: `n (1 - 1/n)^m`.
pub fn ecmp_expected_idle_paths(m: u32, n: u32) -> f64 {
    let n = f64::from(n);
    n * (1.0 - 1.0 / n).powi(m as i32)
}
