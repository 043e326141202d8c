//! The `model` section of a job file: a parameter count with layers and hidden size (the
//! original form, sized as before), or an architecture, written out or taken from a model
//! card shipped with the tool (`card: llama3-405b`) with any field overridden.

use super::{d_dtype, one, positive, positive_f, S};
use crate::error::{Source, SpecError};
use aifabric_workload::job::{cards, Architecture, Ffn};
use serde::Deserialize;
use serde_saphyr::Location;

/// Mixture of experts.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Moe {
    /// Experts per MoE layer (0: dense model).
    #[serde(default)]
    pub experts: Option<S<u32>>,
    /// Experts each token goes to.
    #[serde(default)]
    pub top_k: Option<S<u32>>,
    /// Feed-forward width of one expert (an architecture field).
    #[serde(default)]
    pub expert_ffn_hidden: Option<S<u32>>,
}

/// The model.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// A model card shipped with the tool (its fields may be overridden here).
    #[serde(default)]
    pub card: Option<S<String>>,
    /// Parameters (only for a model without an architecture: with one they are computed).
    #[serde(default)]
    pub parameters: Option<S<f64>>,
    /// Transformer layers.
    #[serde(default)]
    pub layers: Option<S<u32>>,
    /// Hidden size.
    #[serde(default)]
    pub hidden: Option<S<u32>>,
    /// Feed-forward width.
    #[serde(default)]
    pub ffn_hidden: Option<S<u32>>,
    /// Attention heads.
    #[serde(default)]
    pub heads: Option<S<u32>>,
    /// Key/value heads (grouped-query attention; default: `heads`).
    #[serde(default)]
    pub kv_heads: Option<S<u32>>,
    /// Vocabulary size.
    #[serde(default)]
    pub vocabulary: Option<S<u32>>,
    /// Feed-forward unit: `gated` (SwiGLU, the default) or `plain` (GELU).
    #[serde(default)]
    pub ffn: Option<S<String>>,
    /// Input and output embeddings share weights (default false).
    #[serde(default)]
    pub tied_embeddings: Option<S<bool>>,
    /// Sequence length, tokens.
    #[serde(default)]
    pub sequence_length: Option<S<u32>>,
    /// Sequences per micro-batch.
    #[serde(default = "one")]
    pub micro_batch: S<u32>,
    /// Sequences per iteration (all replicas).
    pub global_batch: S<u32>,
    /// Bytes per value of activations and gradients (2: bf16).
    #[serde(default = "d_dtype")]
    pub dtype_bytes: S<u32>,
    /// Mixture of experts, if any.
    #[serde(default)]
    pub moe: Moe,
}

/// What the model section resolves to.
pub(super) struct Resolved {
    pub parameters: f64,
    pub layers: u32,
    pub hidden: u32,
    pub sequence_length: u32,
    pub experts: u32,
    pub top_k: u32,
    pub arch: Option<Architecture>,
    /// Where to point at errors about the layer count.
    pub layers_at: Location,
}

fn at<T>(v: &Option<S<T>>) -> Option<Location> {
    v.as_ref().map(|v| v.referenced)
}

/// Largest parameter count a job may give: 1,000 times today's largest models (about 2e12),
/// so gradient and optimizer bytes (16 per parameter) stay far inside the `u64`s of a step.
pub const MAX_PARAMETERS: f64 = 1e15;

const ARCH_HINT: &str = "give the architecture (layers, hidden, ffn_hidden, heads, vocabulary; \
    optionally kv_heads, ffn, tied_embeddings) or a card";

impl Model {
    /// Where the first architecture field sits, if the model has one.
    fn arch_at(&self) -> Option<Location> {
        at(&self.card)
            .or(at(&self.heads))
            .or(at(&self.kv_heads))
            .or(at(&self.ffn_hidden))
            .or(at(&self.vocabulary))
            .or(at(&self.ffn))
            .or(at(&self.tied_embeddings))
            .or(at(&self.moe.expert_ffn_hidden))
    }

    /// Check the model section: a parameter count with layers and hidden size, or an
    /// architecture.
    pub(super) fn resolve(&self, src: &Source) -> Result<Resolved, SpecError> {
        let cards_hint = || format!("model cards: {}", cards::names().join(", "));
        let moe_u = |v: &Option<S<u32>>| v.as_ref().map_or(0, |v| v.value);
        let Some(arch_at) = self.arch_at() else {
            let need = |v: &Option<S<u32>>, what: &str| -> Result<u32, SpecError> {
                match v {
                    Some(v) => positive(src, v, what),
                    None => Err(src.error_whole(
                        format!("{what} is missing"),
                        Some(format!("give {what}, or {ARCH_HINT} ({})", cards_hint())),
                    )),
                }
            };
            let parameters = match &self.parameters {
                Some(p) => {
                    let v = positive_f(src, p, "model.parameters")?;
                    if v > MAX_PARAMETERS {
                        return Err(src.error(
                            p.referenced,
                            format!("model.parameters is {v}, over the largest model of {MAX_PARAMETERS:e}"),
                            Some(format!(
                                "give the parameter count, 1 to {MAX_PARAMETERS:e} (e.g. 70e9 for a 70B model)"
                            )),
                        ));
                    }
                    v
                }
                None => {
                    return Err(src.error_whole(
                        "the model has neither a parameter count nor an architecture",
                        Some(format!(
                            "give model.parameters, layers and hidden, or {ARCH_HINT} ({})",
                            cards_hint()
                        )),
                    ))
                }
            };
            return Ok(Resolved {
                parameters,
                layers: need(&self.layers, "model.layers")?,
                hidden: need(&self.hidden, "model.hidden")?,
                sequence_length: need(&self.sequence_length, "model.sequence_length")?,
                experts: moe_u(&self.moe.experts),
                top_k: moe_u(&self.moe.top_k),
                arch: None,
                layers_at: at(&self.layers).unwrap_or(Location::UNKNOWN),
            });
        };
        if let Some(p) = &self.parameters {
            return Err(src.error(
                p.referenced,
                "model.parameters is computed from the architecture; it cannot be given too",
                Some("remove model.parameters (or the architecture fields and card)".into()),
            ));
        }
        let card = match &self.card {
            None => None,
            Some(c) => Some(cards::find(&c.value).ok_or_else(|| {
                src.error(
                    c.referenced,
                    format!("unknown model card `{}`", c.value),
                    Some(cards_hint()),
                )
            })?),
        };
        let base = card.as_ref().map(|c| &c.arch);
        // A field from the file, else the card's, else `default`, else an error.
        let field = |v: &Option<S<u32>>,
                     from_card: Option<u32>,
                     default: Option<u32>,
                     what: &str|
         -> Result<u32, SpecError> {
            match (v, from_card.or(default)) {
                (Some(v), _) => positive(src, v, what),
                (None, Some(x)) => Ok(x),
                (None, None) => Err(src.error(
                    arch_at,
                    format!("{what} is missing from the architecture"),
                    Some(format!("give {what}, or name a card ({})", cards_hint())),
                )),
            }
        };
        let layers = field(&self.layers, base.map(|a| a.layers), None, "model.layers")?;
        let hidden = field(&self.hidden, base.map(|a| a.hidden), None, "model.hidden")?;
        let ffn_hidden = field(
            &self.ffn_hidden,
            base.map(|a| a.ffn_hidden),
            None,
            "model.ffn_hidden",
        )?;
        let heads = field(&self.heads, base.map(|a| a.heads), None, "model.heads")?;
        let kv_heads = field(
            &self.kv_heads,
            base.map(|a| a.kv_heads),
            Some(heads),
            "model.kv_heads",
        )?;
        let vocabulary = field(
            &self.vocabulary,
            base.map(|a| a.vocabulary),
            None,
            "model.vocabulary",
        )?;
        let sequence_length = field(
            &self.sequence_length,
            card.as_ref().map(|c| c.sequence_length),
            None,
            "model.sequence_length",
        )?;
        let ffn = match &self.ffn {
            Some(f) => Ffn::parse(&f.value).ok_or_else(|| {
                src.error(
                    f.referenced,
                    format!("unknown feed-forward unit `{}`", f.value),
                    Some("use gated (SwiGLU) or plain (GELU)".into()),
                )
            })?,
            None => base.map_or(Ffn::Gated, |a| a.ffn),
        };
        let tied_embeddings = match &self.tied_embeddings {
            Some(t) => t.value,
            None => base.is_some_and(|a| a.tied_embeddings),
        };
        let m = &self.moe;
        let experts = match &m.experts {
            Some(e) => e.value,
            None => base.map_or(0, |a| a.experts),
        };
        let (top_k, expert_ffn_hidden) = if experts == 0 {
            (0, 0)
        } else {
            (
                field(&m.top_k, base.map(|a| a.top_k), None, "model.moe.top_k")?,
                field(
                    &m.expert_ffn_hidden,
                    base.map(|a| a.expert_ffn_hidden).filter(|&x| x > 0),
                    Some(ffn_hidden),
                    "model.moe.expert_ffn_hidden",
                )?,
            )
        };
        let loc = |v: &Option<S<u32>>| at(v).unwrap_or(arch_at);
        if !hidden.is_multiple_of(heads) {
            return Err(src.error(
                loc(&self.heads),
                format!("{heads} heads do not divide the hidden size {hidden}"),
                Some("pick heads dividing hidden (head size = hidden / heads)".into()),
            ));
        }
        if !heads.is_multiple_of(kv_heads) {
            return Err(src.error(
                loc(&self.kv_heads),
                format!("{kv_heads} key/value heads do not divide {heads} heads"),
                Some("grouped-query attention shares each KV head among heads / kv_heads".into()),
            ));
        }
        if top_k > experts {
            return Err(src.error(
                loc(&m.top_k),
                format!("top_k = {top_k} is more than the {experts} experts"),
                Some("pick top_k between 1 and experts".into()),
            ));
        }
        let arch = Architecture {
            layers,
            hidden,
            ffn_hidden,
            heads,
            kv_heads,
            vocabulary,
            ffn,
            tied_embeddings,
            experts,
            top_k,
            expert_ffn_hidden,
        };
        Ok(Resolved {
            parameters: arch.parameters(),
            layers,
            hidden,
            sequence_length,
            experts,
            top_k,
            layers_at: loc(&self.layers),
            arch: Some(arch),
        })
    }
}
