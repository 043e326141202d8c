//! What a trace says about the machine it ran on, in its [`GlobalMetadata`] attributes.
//!
//! Chakra leaves the metadata attributes open; aifabric writes these (and reads them back as
//! the replay's defaults): `peak_tflops`, `efficiency` (the roofline of `num_ops`),
//! `alpha_us` (per-step collective latency), `scale_up_gpus` and `scale_up_gbs` (the NVLink
//! domain), `placement`, `job` and `tokens` (tokens per iteration). Other producers' traces
//! simply lack them and the replay's flags fill in.

use crate::proto::{attr, AttributeProto, GlobalMetadata};
use serde::Serialize;

/// Schema version written.
pub const VERSION: &str = "0.0.4";

/// What the metadata says (all optional).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TraceInfo {
    /// Peak FLOP/s per GPU.
    pub peak_flops_per_s: Option<f64>,
    /// Share of the peak reached.
    pub efficiency: Option<f64>,
    /// Per-step software latency of a collective, seconds.
    pub alpha_s: Option<f64>,
    /// GPUs per scale-up domain.
    pub scale_up_gpus: Option<u32>,
    /// Scale-up bandwidth per GPU and direction, bytes/s.
    pub scale_up_bytes_per_s: Option<f64>,
    /// Placement policy of the job.
    pub placement: Option<String>,
    /// Job name.
    pub job: Option<String>,
    /// Tokens per iteration (whole job).
    pub tokens: Option<f64>,
}

impl TraceInfo {
    /// Read what `meta` has.
    pub fn from_metadata(meta: &GlobalMetadata) -> TraceInfo {
        let num = |k: &str| attr(&meta.attr, k).and_then(AttributeProto::as_f64);
        let text = |k: &str| attr(&meta.attr, k).and_then(AttributeProto::as_text);
        TraceInfo {
            peak_flops_per_s: num("peak_tflops").map(|v| v * 1e12),
            efficiency: num("efficiency"),
            alpha_s: num("alpha_us").map(|v| v * 1e-6),
            scale_up_gpus: attr(&meta.attr, "scale_up_gpus")
                .and_then(AttributeProto::as_u64)
                .and_then(|v| u32::try_from(v).ok()),
            scale_up_bytes_per_s: num("scale_up_gbs").map(|v| v * 1e9),
            placement: text("placement"),
            job: text("job"),
            tokens: num("tokens"),
        }
    }

    /// Values a replay cannot use, with the fix.
    pub fn check(&self) -> Result<(), String> {
        let positive = |v: Option<f64>, what: &str| match v {
            Some(x) if !(x.is_finite() && x > 0.0) => Err(format!(
                "`{what}` is {x}; it must be a positive number (or override it with the flag)"
            )),
            _ => Ok(()),
        };
        positive(self.peak_flops_per_s, "peak_tflops")?;
        positive(self.efficiency, "efficiency")?;
        if let Some(e) = self.efficiency.filter(|&e| e > 1.0) {
            return Err(format!(
                "`efficiency` is {e}; it is the share of the peak reached, above 0 and at most 1 \
                 (or override it with the flag)"
            ));
        }
        positive(self.scale_up_bytes_per_s, "scale_up_gbs")?;
        if let Some(a) = self.alpha_s.filter(|a| !(a.is_finite() && *a >= 0.0)) {
            return Err(format!("`alpha_us` is {}; it must be >= 0", a * 1e6));
        }
        if self.scale_up_gpus == Some(0) {
            return Err("`scale_up_gpus` is 0; it must be at least 1".into());
        }
        Ok(())
    }

    /// The metadata carrying it.
    pub fn to_metadata(&self) -> GlobalMetadata {
        let mut a = Vec::new();
        if let Some(v) = &self.job {
            a.push(AttributeProto::string("job", v));
        }
        if let Some(v) = self.peak_flops_per_s {
            a.push(AttributeProto::double("peak_tflops", v / 1e12));
        }
        if let Some(v) = self.efficiency {
            a.push(AttributeProto::double("efficiency", v));
        }
        if let Some(v) = self.alpha_s {
            a.push(AttributeProto::double("alpha_us", v * 1e6));
        }
        if let Some(v) = self.scale_up_gpus {
            a.push(AttributeProto::uint("scale_up_gpus", u64::from(v)));
        }
        if let Some(v) = self.scale_up_bytes_per_s {
            a.push(AttributeProto::double("scale_up_gbs", v / 1e9));
        }
        if let Some(v) = &self.placement {
            a.push(AttributeProto::string("placement", v));
        }
        if let Some(v) = self.tokens {
            a.push(AttributeProto::double("tokens", v));
        }
        GlobalMetadata {
            version: VERSION.into(),
            attr: a,
        }
    }
}
