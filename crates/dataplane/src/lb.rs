//! Load balancing: how a flow uses the next hops the control plane gives. One vocabulary for
//! both engines, parsed once ([`Lb::parse`], `FromStr`); each engine says which modes it runs
//! and refuses the others with the list (the flow engine's `aifabric_engine::check_lb`, the
//! packet engine's `TryFrom<Lb>`).

use serde::Serialize;

/// A load-balancing mode. Serializes as its name (`ecmp`, `spray:16`, ...), as it parses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lb {
    /// Per-flow hash, equal members (one path per flow).
    Ecmp,
    /// Per-flow hash over N queue pairs per GPU pair (Meta's E-ECMP; Gangidi et al.,
    /// SIGCOMM 2024).
    Eecmp(u32),
    /// Per-flow hash weighted by UCMP.
    Ucmp,
    /// Per-packet spraying over the next hops weighted by UCMP. The flow engine splits the
    /// fluid exactly (as if over infinitely many paths: `spray`); the packet engine draws one
    /// of N entropy values per packet (`spray:N`; `spray` is N = 128, htsim's `-paths`) and
    /// recycles the values of packets acknowledged unmarked (REPS, per packet).
    Spray(Option<u32>),
    /// As `spray:N`, with htsim's "mixed" feedback: one entropy value recycled per ACK.
    Mixed(u32),
    /// The next hop whose egress queue holds fewest bytes (NSF's adaptive routing).
    Adaptive,
    /// Central traffic engineering over candidate paths.
    Te,
}

/// Entropy values of `spray` and `mixed` without a count (htsim's default `-paths`).
pub const DEFAULT_ENTROPIES: u32 = 128;

/// Most entropy values `spray:N` and `mixed:N` accept.
pub const MAX_ENTROPIES: u32 = 65_536;

impl Lb {
    /// Parse `ecmp`, `eecmp[:N]`, `ucmp`, `spray[:N]`, `mixed[:N]`, `adaptive` or `te`.
    pub fn parse(s: &str) -> Option<Lb> {
        Some(match s {
            "ecmp" => Lb::Ecmp,
            "ucmp" => Lb::Ucmp,
            "spray" => Lb::Spray(None),
            "mixed" => Lb::Mixed(DEFAULT_ENTROPIES),
            "adaptive" => Lb::Adaptive,
            "te" => Lb::Te,
            "eecmp" => Lb::Eecmp(16),
            _ => {
                let (kind, n) = s.split_once(':')?;
                let n: u32 = n.parse().ok()?;
                match kind {
                    "eecmp" if (1..=MAX_QPS).contains(&n) => Lb::Eecmp(n),
                    "spray" if (1..=MAX_ENTROPIES).contains(&n) => Lb::Spray(Some(n)),
                    "mixed" if (1..=MAX_ENTROPIES).contains(&n) => Lb::Mixed(n),
                    _ => return None,
                }
            }
        })
    }

    /// Accepted spellings, for hints.
    pub const HELP: &'static str = "ecmp, eecmp:N (N queue pairs, e.g. eecmp:16), ucmp, \
         spray, spray:N (N entropy values, 1..=65536), mixed:N (spray with htsim's one \
         entropy per ACK; mixed = mixed:128), adaptive or te";

    /// Queue pairs (flows) per GPU pair and channel.
    pub fn qps(self) -> u32 {
        match self {
            Lb::Eecmp(n) => n,
            _ => 1,
        }
    }

    /// Whether traffic is sprayed per packet (`spray`, `mixed`): in the fluid, split over
    /// every next hop by the UCMP weights.
    pub fn is_spray(self) -> bool {
        matches!(self, Lb::Spray(_) | Lb::Mixed(_))
    }

    /// The number of entropy values of a packet-sprayed mode.
    pub fn entropies(self) -> Option<u32> {
        match self {
            Lb::Spray(n) => Some(n.unwrap_or(DEFAULT_ENTROPIES)),
            Lb::Mixed(n) => Some(n),
            _ => None,
        }
    }

    /// The mode a fluid runs for a packet-level mode, to set the two engines side by side:
    /// per-packet spraying and adaptive routing both spread a flow over every next hop,
    /// which the fluid does exactly (`spray`); ECMP stays ECMP.
    pub fn fluid_equivalent(self) -> Lb {
        match self {
            Lb::Spray(_) | Lb::Mixed(_) | Lb::Adaptive => Lb::Spray(None),
            other => other,
        }
    }

    /// The weights a switch splits flows by in this mode, for reports: ECMP modes ignore
    /// BGP's link-bandwidth weights, UCMP and spray follow them, so their results differ
    /// exactly where those weights are unequal (`aifabric routes` shows them per switch).
    pub fn weights(self) -> &'static str {
        match self {
            Lb::Ecmp | Lb::Eecmp(_) => "equal per live link",
            Lb::Ucmp => "hashed by BGP link-bandwidth weights",
            Lb::Spray(_) | Lb::Mixed(_) => "split by BGP link-bandwidth weights",
            Lb::Adaptive => "by queue occupancy",
            Lb::Te => "assigned centrally",
        }
    }

    /// Name as parsed.
    pub fn name(self) -> String {
        match self {
            Lb::Ecmp => "ecmp".into(),
            Lb::Eecmp(n) => format!("eecmp:{n}"),
            Lb::Ucmp => "ucmp".into(),
            Lb::Spray(None) => "spray".into(),
            Lb::Spray(Some(n)) => format!("spray:{n}"),
            Lb::Mixed(n) => format!("mixed:{n}"),
            Lb::Adaptive => "adaptive".into(),
            Lb::Te => "te".into(),
        }
    }
}

impl std::str::FromStr for Lb {
    type Err = String;

    fn from_str(s: &str) -> Result<Lb, String> {
        Lb::parse(s).ok_or_else(|| {
            format!(
                "unknown load balancing `{s}`{}; use {}",
                aifabric_model::did_you_mean_hint(
                    s,
                    &["ecmp", "eecmp", "ucmp", "spray", "mixed", "adaptive", "te"]
                ),
                Lb::HELP
            )
        })
    }
}

impl Serialize for Lb {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl std::fmt::Display for Lb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// Most queue pairs per GPU pair `eecmp:N` accepts (NCCL uses a handful; Meta's E-ECMP 16).
pub const MAX_QPS: u32 = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_mode() {
        for lb in [
            Lb::Ecmp,
            Lb::Eecmp(1),
            Lb::Eecmp(MAX_QPS),
            Lb::Ucmp,
            Lb::Spray(None),
            Lb::Spray(Some(1)),
            Lb::Spray(Some(MAX_ENTROPIES)),
            Lb::Mixed(7),
            Lb::Adaptive,
            Lb::Te,
        ] {
            assert_eq!(Lb::parse(&lb.name()), Some(lb), "{lb}");
        }
        assert_eq!(Lb::parse("eecmp"), Some(Lb::Eecmp(16)));
        assert_eq!(Lb::parse("mixed"), Some(Lb::Mixed(DEFAULT_ENTROPIES)));
        assert_eq!(Lb::Spray(None).entropies(), Some(DEFAULT_ENTROPIES));
        for bad in [
            "",
            "spray:0",
            "mixed:65537",
            "eecmp:0",
            "eecmp:1025",
            "ecmp:2",
            "te:1",
        ] {
            assert_eq!(Lb::parse(bad), None, "{bad}");
        }
    }
}
