//! The one place that runs a prediction on the scenario's fabric and, when the scenario
//! damages anything, on the healthy fabric too.

use crate::{Error, Study};
use aifabric_engine::{Net, NetParams};
use aifabric_model::Scenario;

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
