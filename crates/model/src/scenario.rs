//! One way to say what failed or is drained, shared by every command.
//!
//! A selector is text:
//! - a name prefix on dot boundaries: `east` (a region), `east.dc1` (a building),
//!   `east.dc1.l2` (a zone), `east.bag.plane3` (a BAG plane), `east.dc1.l2.rdsw17` (a device),
//!   `east.dc1.l2.rack5` (a rack's GPUs);
//! - a link bundle `A--B` (every link between devices A and B), or one member `A--B#2`;
//! - a generated failure domain `building:`, `hall:`, `pd:`, `plane:`, `chassis:`,
//!   `linecard:` or `conduit:` + NAME (see [`crate::DomainClass`]);
//! - a shared-risk group defined in the spec, `srg:NAME`.
//!
//! A [`Scenario`] holds three masks: failed, hard-drained (removed from service, so for
//! capacity the same as failed) and soft-drained (still usable, but only when nothing else is
//! left: graceful shutdown, RFC 8326).

use crate::fabric::Fabric;
use crate::ids::{DeviceId, LinkId};
use crate::mask::FailureMask;

/// What a selector matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// Devices (and so all their links).
    Devices(Vec<DeviceId>),
    /// Individual links.
    Links(Vec<LinkId>),
    /// Devices and links (a shared-risk group).
    Group {
        /// Member devices.
        devices: Vec<DeviceId>,
        /// Member links.
        links: Vec<LinkId>,
    },
}

impl Selection {
    /// Mark everything selected in `mask`.
    pub fn apply_to(self, mask: &mut FailureMask) {
        let (devices, links) = match self {
            Selection::Devices(d) => (d, Vec::new()),
            Selection::Links(l) => (Vec::new(), l),
            Selection::Group { devices, links } => (devices, links),
        };
        devices.into_iter().for_each(|d| mask.fail_device(d));
        links.into_iter().for_each(|l| mask.fail_link(l));
    }
}

/// A selector that matched nothing or is malformed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{selector}`: {problem}")]
pub struct SelectorError {
    /// The selector text.
    pub selector: String,
    /// What is wrong, with a hint.
    pub problem: String,
}

fn sel_err(selector: &str, problem: impl Into<String>) -> SelectorError {
    SelectorError {
        selector: selector.to_owned(),
        problem: problem.into(),
    }
}

impl Fabric {
    /// Resolve a selector (see the module docs).
    pub fn select(&self, selector: &str) -> Result<Selection, SelectorError> {
        let s = selector.trim();
        if s.is_empty() {
            return Err(sel_err(selector, "empty selector"));
        }
        if let Some(name) = s.strip_prefix("srg:") {
            let srg = self.srgs.iter().find(|g| g.name == name).ok_or_else(|| {
                let names: Vec<&str> = self.srgs.iter().map(|g| g.name.as_str()).collect();
                sel_err(
                    selector,
                    if names.is_empty() {
                        "the spec defines no shared-risk groups (`srgs:`)".to_owned()
                    } else {
                        format!("no such shared-risk group; defined: {}", names.join(", "))
                    },
                )
            })?;
            return Ok(Selection::Group {
                devices: srg.devices.clone(),
                links: srg.links.clone(),
            });
        }
        if let Some((prefix, name)) = s.split_once(':') {
            if let Some(class) = crate::domains::DomainClass::from_prefix(prefix) {
                return self.select_domain(class, name).ok_or_else(|| {
                    let known = self.failure_domains(class);
                    let sample: Vec<&str> = known.iter().take(4).map(String::as_str).collect();
                    sel_err(
                        selector,
                        format!(
                            "no {prefix} of that name; e.g. {} ({} in all)",
                            sample.join(", "),
                            known.len()
                        ),
                    )
                });
            }
        }
        if let Some((a, rest)) = s.split_once("--") {
            let (b, member) = match rest.split_once('#') {
                Some((b, m)) => {
                    let m: u32 = m
                        .parse()
                        .map_err(|_| sel_err(selector, "the member after `#` is a number"))?;
                    (b, Some(m))
                }
                None => (rest, None),
            };
            let da = self
                .find_device(a)
                .ok_or_else(|| self.unknown(selector, a))?;
            let db = self
                .find_device(b)
                .ok_or_else(|| self.unknown(selector, b))?;
            let links: Vec<LinkId> = self
                .incident(da)
                .iter()
                .copied()
                .filter(|&l| self.links[l.idx()].other(da) == db)
                .collect();
            if links.is_empty() {
                return Err(sel_err(selector, format!("{a} and {b} are not linked")));
            }
            return match member {
                None => Ok(Selection::Links(links)),
                Some(m) => links
                    .get(m as usize)
                    .map(|&l| Selection::Links(vec![l]))
                    .ok_or_else(|| {
                        sel_err(
                            selector,
                            format!(
                                "the bundle has {} links (#0..#{})",
                                links.len(),
                                links.len() - 1
                            ),
                        )
                    }),
            };
        }
        let devs = self.devices_by_prefix(s);
        if devs.is_empty() {
            return Err(self.unknown(selector, s));
        }
        Ok(Selection::Devices(devs))
    }

    /// Devices whose name equals `prefix` or starts with `prefix.`.
    fn devices_by_prefix(&self, prefix: &str) -> Vec<DeviceId> {
        let dotted = format!("{prefix}.");
        let mut out = Vec::new();
        for (z, zone) in self.zones.iter().enumerate() {
            let zid = crate::ZoneId::from_idx(z);
            if zone.name == prefix || zone.name.starts_with(&dotted) {
                out.extend(self.zone_devices(zid).map(DeviceId::new));
            } else if prefix.starts_with(&format!("{}.", zone.name)) {
                out.extend(self.zone_devices(zid).map(DeviceId::new).filter(|&d| {
                    let n = self.device_name(d);
                    n == prefix || n.starts_with(&dotted)
                }));
            }
        }
        out
    }

    fn unknown(&self, selector: &str, name: &str) -> SelectorError {
        let zones: Vec<&str> = self.zones.iter().map(|z| z.name.as_str()).collect();
        let hint = zones
            .iter()
            .filter(|z| name.starts_with(*z) || z.starts_with(name.split('.').next().unwrap_or("")))
            .take(4)
            .copied()
            .collect::<Vec<_>>();
        let hint = if hint.is_empty() {
            zones.iter().take(6).copied().collect::<Vec<_>>()
        } else {
            hint
        };
        sel_err(
            selector,
            format!(
                "matches no device of this fabric; names start with a zone, e.g. {} \
                 (`aifabric build SPEC --out model.json` lists every name)",
                hint.join(", ")
            ),
        )
    }
}

/// What is failed, hard-drained and soft-drained.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Broken: carries nothing.
    pub failed: FailureMask,
    /// Taken out of service on purpose: carries nothing.
    pub drained_hard: FailureMask,
    /// Graceful shutdown: carries traffic only when no other path is left.
    pub drained_soft: FailureMask,
}

impl Scenario {
    /// Nothing failed or drained.
    pub fn healthy(f: &Fabric) -> Self {
        Scenario {
            failed: FailureMask::none(f),
            drained_hard: FailureMask::none(f),
            drained_soft: FailureMask::none(f),
        }
    }

    /// Build from selector lists.
    pub fn from_selectors(
        f: &Fabric,
        fail: &[String],
        drain_hard: &[String],
        drain_soft: &[String],
    ) -> Result<Self, SelectorError> {
        let mut s = Scenario::healthy(f);
        for (list, mask) in [
            (fail, &mut s.failed),
            (drain_hard, &mut s.drained_hard),
            (drain_soft, &mut s.drained_soft),
        ] {
            for sel in list {
                f.select(sel)?.apply_to(mask);
            }
        }
        Ok(s)
    }

    /// What cannot carry traffic at all: failed or hard-drained.
    pub fn unusable(&self) -> FailureMask {
        let mut m = self.failed.clone();
        m.union_with(&self.drained_hard);
        m
    }
}
