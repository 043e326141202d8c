//! One way to say what failed or is drained, shared by every command.
//!
//! A selector is text:
//! - a name prefix on dot boundaries: `east` (a region), `east.dc1` (a building),
//!   `east.dc1.l2` (a zone), `east.bag.plane3` (a BAG plane), `east.dc1.l2.rdsw17` (a device),
//!   `east.dc1.l2.rack5` (a rack's GPUs);
//! - an AI zone of a RoCE zone, as the capacity report names its tier scope:
//!   `east.dc1.llama.ai_zone3` (its GPUs, rack switches and cluster switches), or a pod of
//!   an NSF zone, as pod-level failure sweeps name it: `east.dc1.nsf.pod7`;
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
                    match did_you_mean(name, names.iter().copied()) {
                        _ if names.is_empty() => {
                            "the spec defines no shared-risk groups (`srgs:`)".to_owned()
                        }
                        Some(g) => format!("no such shared-risk group; did you mean `srg:{g}`?"),
                        None => {
                            format!("no such shared-risk group; defined: {}", names.join(", "))
                        }
                    },
                )
            })?;
            return Ok(Selection::Group {
                devices: srg.devices.clone(),
                links: srg.links.clone(),
            });
        }
        if let Some((prefix, name)) = s.split_once(':') {
            if prefix == "switch" {
                // One switch by its full name (what a `single:switch` sweep prints).
                return match self.find_device(name) {
                    Some(d) if self.devices[d.idx()].role != crate::Role::Gpu => {
                        Ok(Selection::Devices(vec![d]))
                    }
                    Some(_) => Err(sel_err(selector, format!("{name} is a GPU, not a switch"))),
                    None => Err(self.unknown(selector, name)),
                };
            }
            if let Some(class) = crate::domains::DomainClass::from_prefix(prefix) {
                return self.select_domain(class, name).ok_or_else(|| {
                    let known = self.failure_domains(class);
                    if let Some(g) = did_you_mean(name, known.iter().map(String::as_str)) {
                        return sel_err(
                            selector,
                            format!(
                                "no {prefix} of that name; did you mean `{prefix}:{g}`? ({} in all)",
                                known.len()
                            ),
                        );
                    }
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
            if !prefix.contains('.') && !prefix.contains('-') {
                // `CLASS:NAME` with an unknown class.
                let classes: Vec<&str> = crate::domains::DomainClass::ALL
                    .iter()
                    .map(|c| c.prefix())
                    .chain(["srg", "switch"])
                    .collect();
                let hint = match did_you_mean(prefix, classes.iter().copied()) {
                    Some(c) => format!("did you mean `{c}:{name}`?"),
                    None => format!("classes are {}", classes.join(", ")),
                };
                return Err(sel_err(
                    selector,
                    format!("`{prefix}:` is not a failure-domain class; {hint}"),
                ));
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
        if let Some(devs) = self.ai_zone(s) {
            return Ok(Selection::Devices(devs));
        }
        let devs = self.devices_by_prefix(s);
        if devs.is_empty() {
            return Err(self.unknown(selector, s));
        }
        Ok(Selection::Devices(devs))
    }

    /// `ZONE.ai_zoneN` of a RoCE zone, or `ZONE.podN` of an NSF zone: the devices of its AI
    /// zone or pod `N` (racks, their GPUs, and the pod's fabric switches).
    fn ai_zone(&self, name: &str) -> Option<Vec<DeviceId>> {
        let (zone, n, kind) = match name.rsplit_once(".ai_zone") {
            Some((zone, n)) => (zone, n, crate::ZoneKind::Roce),
            None => {
                let (zone, n) = name.rsplit_once(".pod")?;
                (zone, n, crate::ZoneKind::Nsf)
            }
        };
        let n: u32 = n.parse().ok()?;
        let z = self.zones.iter().position(|z| z.name == zone)?;
        if self.zones[z].kind != kind {
            return None;
        }
        let devs: Vec<DeviceId> = self
            .zone_devices(crate::ZoneId::from_idx(z))
            .map(DeviceId::new)
            .filter(|&d| self.devices[d.idx()].pod() == Some(n))
            .collect();
        (!devs.is_empty()).then_some(devs)
    }

    /// The valid name closest to `name`: its zone (the longest zone name it starts with, or
    /// the closest zone name over as many components), then the closest first component
    /// under that zone (`rdsw17`, `rack5`, `ai_zone3`), the rest kept as written.
    pub fn suggest_name(&self, name: &str) -> Option<String> {
        let zone = self
            .zones
            .iter()
            .enumerate()
            .filter(|(_, z)| name == z.name || name.starts_with(&format!("{}.", z.name)))
            .max_by_key(|(_, z)| z.name.len())
            .map(|(i, _)| i);
        let Some(z) = zone else {
            // The zone part is misspelt: compare as many components as each zone name has.
            let best = did_you_mean_by(self.zones.iter().map(|z| {
                let k = z.name.split('.').count();
                let head: Vec<&str> = name.splitn(k + 1, '.').take(k).collect();
                (
                    strsim::jaro_winkler(&head.join("."), &z.name),
                    z.name.as_str(),
                    k,
                )
            }))?;
            let rest: Vec<&str> = name.splitn(best.2 + 1, '.').skip(best.2).collect();
            let fixed = if rest.is_empty() {
                best.1.to_owned()
            } else {
                format!("{}.{}", best.1, rest.join("."))
            };
            // Fix the part under the zone too, when that is also wrong.
            return Some(
                self.suggest_name(&fixed)
                    .filter(|_| self.select(&fixed).is_err())
                    .unwrap_or(fixed),
            );
        };
        let zname = &self.zones[z].name;
        let rest = name.get(zname.len() + 1..)?;
        let (first, tail) = match rest.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (rest, None),
        };
        // First components of the zone's names, and its AI zones.
        let mut heads: Vec<String> = Vec::new();
        let zid = crate::ZoneId::from_idx(z);
        let prefix_len = zname.len() + 1;
        for d in self.zone_devices(zid).map(DeviceId::new) {
            let n = self.device_name(d);
            let head = n[prefix_len..].split('.').next().unwrap_or("").to_owned();
            if heads.last() != Some(&head) {
                heads.push(head);
            }
            let group = match self.zones[z].kind {
                crate::ZoneKind::Roce => Some("ai_zone"),
                crate::ZoneKind::Nsf => Some("pod"),
                _ => None,
            };
            if let Some(group) = group {
                if let Some(p) = self.devices[d.idx()].pod() {
                    let a = format!("{group}{p}");
                    if !heads.contains(&a) {
                        heads.push(a);
                    }
                }
            }
        }
        heads.sort();
        heads.dedup();
        let best = did_you_mean_by(
            heads
                .iter()
                .map(|h| (strsim::jaro_winkler(first, h), h.as_str(), 0)),
        )?;
        Some(match tail {
            Some(t) => format!("{zname}.{}.{t}", best.1),
            None => format!("{zname}.{}", best.1),
        })
    }

    /// The device names closest to `name` (at most `max`, closest first), for "did you mean":
    /// the name [`Fabric::suggest_name`] fixes, if it is a device; else the devices whose
    /// name ends with `name`'s last component (`rdsw0`, `east.dc1.rdsw0` ->
    /// `east.dc1.l2.rdsw0`), closest to `name` first; else the closest whole names
    /// (Jaro-Winkler similarity above 0.8). Only the closest are kept: several when they are
    /// equally close. Empty when nothing is close.
    pub fn closest_devices(&self, name: &str, max: usize) -> Vec<String> {
        if let Some(g) = self
            .suggest_name(name)
            .filter(|g| g != name && self.find_device(g).is_some())
        {
            return vec![g];
        }
        let (prefix, last) = name.rsplit_once('.').unwrap_or(("", name));
        let tail = format!(".{last}");
        let score = |n: &str| strsim::jaro_winkler(name, n);
        // Names ending like the user's are told apart by what comes before that ending
        // only: a bare `ftsw0` fits every zone's `ftsw0` equally (a full-name score would
        // prefer the shortest path and name one arbitrarily).
        let ending_score = |n: &str| {
            let theirs = n.strip_suffix(tail.as_str()).unwrap_or(n);
            if prefix.is_empty() {
                1.0
            } else {
                strsim::jaro_winkler(prefix, theirs)
            }
        };
        let mut ending: Vec<(f64, String)> = Vec::new();
        let mut close: Vec<(f64, String)> = Vec::new();
        for d in 0..self.devices.len() {
            let n = self.device_name(DeviceId::from_idx(d));
            if n == name {
                continue;
            }
            if n.ends_with(&tail) {
                ending.push((ending_score(&n), n));
            } else {
                let sc = score(&n);
                if sc > 0.8 {
                    close.push((sc, n));
                }
            }
        }
        let mut best = if ending.is_empty() { close } else { ending };
        // Closest first, ties in name order (deterministic); only those as close as the
        // closest (several when the name fits many equally: `rdsw0` in every zone).
        best.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let top = best.first().map_or(0.0, |b| b.0);
        best.retain(|b| b.0 >= top - 1e-12);
        best.truncate(max);
        best.into_iter().map(|x| x.1).collect()
    }

    /// `did you mean `A`?` (or `one of `A`, `B`?`) for a device name that matches none, or
    /// `None` when no name is close.
    pub fn did_you_mean_device(&self, name: &str) -> Option<String> {
        let near = self.closest_devices(name, 3);
        match near.as_slice() {
            [] => None,
            [one] => Some(format!("did you mean `{one}`?")),
            many => Some(format!(
                "did you mean one of {}?",
                many.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
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
        let guesses = match self
            .suggest_name(name)
            .filter(|g| g != name)
            .filter(|g| self.select(g).is_ok())
        {
            Some(g) => vec![g],
            None => self.closest_devices(name, 3),
        };
        let quoted = |g: &String| format!("`{}`", selector.replacen(name, g, 1).trim());
        match guesses.as_slice() {
            [g] => sel_err(
                selector,
                format!(
                    "matches no device of this fabric; did you mean {}?",
                    quoted(g)
                ),
            ),
            [_, ..] => sel_err(
                selector,
                format!(
                    "matches no device of this fabric; did you mean one of {}?",
                    guesses.iter().map(quoted).collect::<Vec<_>>().join(", ")
                ),
            ),
            [] => sel_err(
                selector,
                format!(
                    "matches no device of this fabric; names start with a zone, e.g. {} \
                     (`aifabric build SPEC --out model.json` lists every name)",
                    hint.join(", ")
                ),
            ),
        }
    }
}

/// The candidate with the best score above 0.8 (Jaro-Winkler similarity, as the spec
/// reader's "did you mean" uses), ties to the first.
fn did_you_mean_by<'a>(
    scored: impl Iterator<Item = (f64, &'a str, usize)>,
) -> Option<(f64, &'a str, usize)> {
    scored
        .filter(|c| c.0 > 0.8)
        .fold(None, |best: Option<(f64, &str, usize)>, c| match best {
            Some(b) if b.0 >= c.0 => Some(b),
            _ => Some(c),
        })
}

/// The candidate closest to `word` (Jaro-Winkler similarity above 0.8), if any: the "did you
/// mean" of every name the user types (selectors, spec keys, classes).
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    did_you_mean_by(
        candidates
            .into_iter()
            .map(|c| (strsim::jaro_winkler(word, c), c, 0)),
    )
    .map(|c| c.1)
}

/// ` (did you mean `X`?)` when `word` is close to one of `names` (an option's spellings
/// without their parameters: `fragmented` for `fragmented[:SEED]`), else nothing: the hint
/// every option parser adds to its "unknown ..." error. A parameter written after a `:` is
/// kept in the suggestion (`fragmentd:3` -> `fragmented:3`).
pub fn did_you_mean_hint(word: &str, names: &[&str]) -> String {
    let lower = word.to_ascii_lowercase();
    let (head, param) = match lower.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (lower.as_str(), None),
    };
    let near = did_you_mean(head, names.iter().copied())
        .or_else(|| did_you_mean(&lower, names.iter().copied()));
    match near {
        Some(n) => {
            let fixed = match param {
                Some(p) if n == head => format!("{n}:{p}"),
                Some(p) if !n.contains(':') => format!("{n}:{p}"),
                _ => n.to_owned(),
            };
            if fixed == word {
                String::new()
            } else {
                format!(" (did you mean `{fixed}`?)")
            }
        }
        None => String::new(),
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
