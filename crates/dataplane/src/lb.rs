//! Load balancing: how a flow uses the next hops the control plane gives.

use serde::Serialize;

/// Load balancing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lb {
    /// Per-flow hash, equal members.
    Ecmp,
    /// Per-flow hash over N queue pairs per GPU pair.
    Eecmp(u32),
    /// Per-flow hash weighted by UCMP.
    Ucmp,
    /// Fluid split by UCMP weights.
    Spray,
    /// Central traffic engineering over candidate paths.
    Te,
}

impl Lb {
    /// Parse `ecmp`, `eecmp:N`, `ucmp`, `spray`, `te`.
    pub fn parse(s: &str) -> Option<Lb> {
        Some(match s {
            "ecmp" => Lb::Ecmp,
            "ucmp" => Lb::Ucmp,
            "spray" => Lb::Spray,
            "te" => Lb::Te,
            "eecmp" => Lb::Eecmp(16),
            _ => {
                let n: u32 = s.strip_prefix("eecmp:")?.parse().ok()?;
                if n == 0 || n > MAX_QPS {
                    return None;
                }
                Lb::Eecmp(n)
            }
        })
    }

    /// Accepted spellings, for hints.
    pub const HELP: &'static str =
        "ecmp, eecmp:N (N queue pairs, e.g. eecmp:16), ucmp, spray or te";

    /// Queue pairs (flows) per GPU pair and channel.
    pub fn qps(self) -> u32 {
        match self {
            Lb::Eecmp(n) => n,
            _ => 1,
        }
    }

    /// The weights a switch splits flows by in this mode, for reports: ECMP modes ignore
    /// BGP's link-bandwidth weights, UCMP and spray follow them, so their results differ
    /// exactly where those weights are unequal (`aifabric routes` shows them per switch).
    pub fn weights(self) -> &'static str {
        match self {
            Lb::Ecmp | Lb::Eecmp(_) => "equal per live link",
            Lb::Ucmp => "hashed by BGP link-bandwidth weights",
            Lb::Spray => "split by BGP link-bandwidth weights",
            Lb::Te => "assigned centrally",
        }
    }

    /// Name as parsed.
    pub fn name(self) -> String {
        match self {
            Lb::Ecmp => "ecmp".into(),
            Lb::Eecmp(n) => format!("eecmp:{n}"),
            Lb::Ucmp => "ucmp".into(),
            Lb::Spray => "spray".into(),
            Lb::Te => "te".into(),
        }
    }
}

impl std::str::FromStr for Lb {
    type Err = String;

    fn from_str(s: &str) -> Result<Lb, String> {
        Lb::parse(s).ok_or_else(|| format!("unknown load balancing `{s}`; use {}", Lb::HELP))
    }
}

impl std::fmt::Display for Lb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// Most queue pairs per GPU pair `eecmp:N` accepts (NCCL uses a handful; Meta's E-ECMP 16).
pub const MAX_QPS: u32 = 1024;
