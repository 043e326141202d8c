//! The one place that runs a prediction on the scenario's fabric and, when the scenario
//! damages anything, on the healthy fabric too.

use crate::report::Crossing;
use crate::{Error, Study};
use aifabric_dataplane::{Net, NetParams};
use aifabric_model::{LinkId, Scenario};
use fixedbitset::FixedBitSet;

/// A value on the scenario's fabric and, if the scenario damages anything, on the healthy one.
pub(crate) struct Both<T> {
    pub now: T,
    pub healthy: Option<T>,
}

impl<'f> Both<Net<'f>> {
    /// The network under the study's scenario, and the healthy one when they differ.
    pub fn nets(study: &Study<'f>, params: NetParams) -> Self {
        let (f, s) = (study.fabric, &study.setup);
        Both {
            now: Net::new(f, &study.scenario, s.plan, s.bgp, params),
            healthy: study
                .damaged()
                .then(|| Net::new(f, &Scenario::healthy(f), s.plan, s.bgp, params)),
        }
    }
}

impl<T> Both<T> {
    /// `f` on each side.
    pub fn map<U>(&self, mut f: impl FnMut(&T) -> U) -> Both<U> {
        Both {
            now: f(&self.now),
            healthy: self.healthy.as_ref().map(f),
        }
    }

    /// `f` on each side, the scenario's first; the first error stops.
    pub fn try_map<U, E: Into<Error>>(
        &self,
        mut f: impl FnMut(&T) -> Result<U, E>,
    ) -> Result<Both<U>, Error> {
        let now = f(&self.now).map_err(Into::into)?;
        let healthy = match &self.healthy {
            Some(h) => Some(f(h).map_err(Into::into)?),
            None => None,
        };
        Ok(Both { now, healthy })
    }
}

impl<T> Both<T> {
    /// `f` on each side with the same side of `with`, the scenario's first; the first error
    /// stops.
    pub fn try_map_with<U, V, E: Into<Error>>(
        &self,
        with: &mut Both<U>,
        mut f: impl FnMut(&T, &mut U) -> Result<V, E>,
    ) -> Result<Both<V>, Error> {
        let now = f(&self.now, &mut with.now).map_err(Into::into)?;
        let healthy = match (&self.healthy, with.healthy.as_mut()) {
            (Some(h), Some(w)) => Some(f(h, w).map_err(Into::into)?),
            _ => None,
        };
        Ok(Both { now, healthy })
    }
}

/// With a damaging scenario, what of it the healthy runs' traffic (`used`: links that carried
/// traffic) crosses; `None` on a healthy study.
pub(crate) fn crossing<'a>(
    study: &Study<'_>,
    used: impl IntoIterator<Item = &'a FixedBitSet>,
) -> Option<Crossing> {
    if !study.damaged() {
        return None;
    }
    let f = study.fabric;
    let mut out = study.scenario.unusable();
    out.union_with(&study.scenario.drained_soft);
    let mut all = FixedBitSet::with_capacity(f.links().len());
    for u in used {
        all.union_with(u);
    }
    let (mut links_out, mut crossed, mut examples) = (0, 0, Vec::new());
    for i in 0..f.links().len() {
        let l = LinkId::from_idx(i);
        if f.link_up(l, &out) {
            continue;
        }
        links_out += 1;
        if all.contains(i) {
            crossed += 1;
            if examples.len() < 3 {
                let link = f.link(l);
                examples.push(format!(
                    "{}--{}",
                    f.device_name(link.a),
                    f.device_name(link.b)
                ));
            }
        }
    }
    Some(Crossing {
        links_out,
        crossed,
        examples,
    })
}
