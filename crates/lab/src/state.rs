//! The state file (`lab.json`): what [`up`](crate::up) made, written before it is made, so
//! that [`check`](crate::check) and [`down`](crate::down) (also after a crash) know it.

use crate::{bad_request, runtime_in, STATE_FILE};
use aifabric::{Error, Setup};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A router of the lab.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LabRouter {
    /// Device name.
    pub name: String,
    /// Its network namespace.
    pub namespace: String,
    /// Its role (`rtsw`, `stsw`, `bag`, ...).
    pub role: String,
    /// Its ASN.
    pub asn: u32,
    /// Prefixes it originates (its rack's /64).
    pub originates: Vec<String>,
}

/// One end of a lab link.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LabEnd {
    /// Router name.
    pub router: String,
    /// Namespace.
    pub namespace: String,
    /// Interface name inside it.
    pub interface: String,
    /// Its address on the link's /127 (the peer's BGP neighbour address).
    pub address: String,
}

/// A link of the lab: a veth pair.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LabLink {
    /// `A--B#k`, the `--fail` selector of the link.
    pub name: String,
    /// Its ends.
    pub ends: [LabEnd; 2],
    /// Capacity, Gb/s (its outbound route-map is `LB-<Gb/s>`).
    pub capacity_gbps: u64,
}

/// `lab.json`: what [`up`](crate::up) made, so that [`check`](crate::check) and
/// [`down`](crate::down) (also after a crash) know it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LabState {
    /// The contract's version.
    pub schema_version: u32,
    /// The spec as given to `up` (a built-in name, or a file made absolute).
    pub spec: String,
    /// The fabric's name.
    pub fabric: String,
    /// Control-plane options by the CLI's flag names (see [`Setup::from_options`]).
    pub options: BTreeMap<String, String>,
    /// FRR's daemon directory.
    pub frr: String,
    /// FRR's version (`bgpd --version`, or as given).
    pub frr_version: String,
    /// The steps FRR scales a next hop's link-bandwidth share into (see
    /// [`weight_steps`](crate::weight_steps)): shares agree within one step per link.
    pub weight_steps: u32,
    /// Routers.
    pub routers: Vec<LabRouter>,
    /// Links.
    pub links: Vec<LabLink>,
    /// The supervisor's process id, once started.
    pub supervisor: Option<u32>,
    /// Zone aggregation configured (`unconditional`), or none.
    #[serde(default)]
    pub aggregation: Option<String>,
    /// Link ends whose session now sends the drained route-map (`<link>:<0|1>`), as the
    /// last `check` set them.
    #[serde(default)]
    pub drained: Vec<String>,
    /// The `lab up` process while it brings the lab up (none once it is complete): a lab
    /// that names a process no longer running is the leftovers of a killed `up`.
    #[serde(default)]
    pub builder: Option<u32>,
}

impl LabState {
    /// The lab recorded in directory `dir`.
    pub fn read(dir: &Path) -> Result<LabState, Error> {
        let path = dir.join(STATE_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            bad_request(format!(
                "no lab in {}: cannot read {} ({e}); start one with `aifabric lab up SPEC --dir {}`",
                dir.display(),
                path.display(),
                dir.display()
            ))
        })?;
        serde_json::from_str(&text).map_err(|e| {
            bad_request(format!(
                "{}: not a lab state file ({e}); remove the directory by hand",
                path.display()
            ))
        })
    }

    pub(crate) fn write(&self, dir: &Path) -> Result<(), Error> {
        let text = serde_json::to_string_pretty(self).expect("the state serializes");
        write_atomic(&dir.join(STATE_FILE), text.as_bytes())
    }

    /// The control-plane setup the lab's configuration was written with.
    pub fn setup(&self) -> Result<Setup, Error> {
        Setup::from_options(&self.options)
    }
}

/// Write `bytes` to `path` through a temporary file and a rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| runtime_in(&format!("cannot write {}", path.display()), e))
}
