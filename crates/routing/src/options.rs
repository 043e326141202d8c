//! The control-plane options as text: `FromStr` reads what `Display` prints, so a command line
//! or a notebook takes them as they are.

use crate::aggregation::{Aggregation, AggregationTier};
use crate::bgp::{AsnPlan, BandwidthMode, SoftDrain};
use crate::ucmp::MissingBandwidth;
use std::fmt;
use std::str::FromStr;

impl FromStr for AsnPlan {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "rfc7938" => Ok(AsnPlan::Rfc7938),
            "per-plane" | "per_plane" => Ok(AsnPlan::PerPlane),
            "unique" => Ok(AsnPlan::Unique),
            _ => Err(format!(
                "unknown ASN plan `{s}`{}; use rfc7938, per-plane or unique",
                aifabric_model::did_you_mean_hint(s, &["rfc7938", "per-plane", "unique"])
            )),
        }
    }
}

impl fmt::Display for AsnPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AsnPlan::Rfc7938 => "rfc7938",
            AsnPlan::PerPlane => "per-plane",
            AsnPlan::Unique => "unique",
        })
    }
}

impl FromStr for BandwidthMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "cumulative" => Ok(BandwidthMode::Cumulative),
            "multipaths" => Ok(BandwidthMode::NumMultipaths),
            "none" => Ok(BandwidthMode::None),
            _ => Err(format!(
                "unknown link-bandwidth mode `{s}`{}; use cumulative, multipaths or none",
                aifabric_model::did_you_mean_hint(s, &["cumulative", "multipaths", "none"])
            )),
        }
    }
}

impl fmt::Display for BandwidthMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BandwidthMode::Cumulative => "cumulative",
            BandwidthMode::NumMultipaths => "multipaths",
            BandwidthMode::None => "none",
        })
    }
}

impl FromStr for MissingBandwidth {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ecmp" => Ok(MissingBandwidth::EcmpFallback),
            "skip" => Ok(MissingBandwidth::SkipMissing),
            _ => match s.strip_prefix("default:").map(str::parse::<u64>) {
                Some(Ok(n)) => Ok(MissingBandwidth::DefaultWeight(n)),
                _ => Err(format!(
                    "`{s}`{}: use `ecmp`, `skip` or `default:N`",
                    aifabric_model::did_you_mean_hint(s, &["ecmp", "skip", "default"])
                )),
            },
        }
    }
}

impl fmt::Display for MissingBandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MissingBandwidth::EcmpFallback => f.write_str("ecmp"),
            MissingBandwidth::SkipMissing => f.write_str("skip"),
            MissingBandwidth::DefaultWeight(n) => write!(f, "default:{n}"),
        }
    }
}

impl FromStr for SoftDrain {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "gshut" => Ok(SoftDrain::GracefulShutdown),
            _ => match s.strip_prefix("prepend:").map(str::parse::<u32>) {
                Some(Ok(n)) if (1..=32).contains(&n) => Ok(SoftDrain::Prepend(n)),
                _ => Err(format!(
                    "`{s}`{}: use `gshut` or `prepend:N` with N from 1 to 32",
                    aifabric_model::did_you_mean_hint(s, &["gshut", "prepend"])
                )),
            },
        }
    }
}

impl fmt::Display for SoftDrain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SoftDrain::GracefulShutdown => f.write_str("gshut"),
            SoftDrain::Prepend(n) => write!(f, "prepend:{n}"),
        }
    }
}

impl FromStr for Aggregation {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "unconditional" => Ok(Aggregation::Unconditional),
            "conditional" => Ok(Aggregation::Conditional { min: None }),
            _ => match s.strip_prefix("conditional:").map(str::parse::<u32>) {
                Some(Ok(n)) if n > 0 => Ok(Aggregation::Conditional { min: Some(n) }),
                _ => Err(format!(
                    "`{s}`{}: use `unconditional`, `conditional` or `conditional:N` (N >= 1)",
                    aifabric_model::did_you_mean_hint(s, &["unconditional", "conditional"])
                )),
            },
        }
    }
}

impl fmt::Display for Aggregation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Aggregation::Unconditional => f.write_str("unconditional"),
            Aggregation::Conditional { min: None } => f.write_str("conditional"),
            Aggregation::Conditional { min: Some(n) } => write!(f, "conditional:{n}"),
        }
    }
}

impl FromStr for AggregationTier {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "zone" => Ok(AggregationTier::Zone),
            "region" => Ok(AggregationTier::Region),
            _ => Err(format!(
                "unknown aggregation tier `{s}`{}; use zone or region",
                aifabric_model::did_you_mean_hint(s, &["zone", "region"])
            )),
        }
    }
}

impl fmt::Display for AggregationTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AggregationTier::Zone => "zone",
            AggregationTier::Region => "region",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: FromStr<Err = String> + fmt::Display>(spellings: &[&str]) {
        for s in spellings {
            let v: T = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(v.to_string(), *s);
        }
    }

    #[test]
    fn options_read_back_what_they_print() {
        round_trip::<AsnPlan>(&["rfc7938", "per-plane", "unique"]);
        round_trip::<BandwidthMode>(&["cumulative", "multipaths", "none"]);
        round_trip::<MissingBandwidth>(&["ecmp", "skip", "default:100"]);
        round_trip::<SoftDrain>(&["gshut", "prepend:3"]);
        round_trip::<Aggregation>(&["unconditional", "conditional", "conditional:2"]);
        round_trip::<AggregationTier>(&["zone", "region"]);
        for bad in ["prepend:0", "prepend:33", "drain"] {
            assert!(bad.parse::<SoftDrain>().is_err(), "{bad}");
        }
        assert!("conditional:0".parse::<Aggregation>().is_err());
        assert!("default:x".parse::<MissingBandwidth>().is_err());
    }
}
