//! Neighbour tables as switches report them over LLDP, in the plain CSV form
//! `local_device,local_port,remote_device,remote_port` (header named so): each row one
//! port's neighbour. A cable seen from both ends is one cable; a row whose ends contradict
//! another's (A says B, B says C) gives both, which the drift reports.

use crate::netbox::{InvCable, InvDevice, Inventory, InventoryError, Table};
use rustc_hash::FxHashSet;
use std::path::Path;

/// The cables of the neighbour tables in `files`, deduplicated (a cable seen from both of
/// its ends once, at its first row), in file order.
pub fn read_csv(files: &[&Path]) -> Result<Vec<InvCable>, InventoryError> {
    let mut seen: FxHashSet<[(String, String); 2]> = FxHashSet::default();
    let mut cables = Vec::new();
    const WANTED: [&str; 4] = ["local_device", "local_port", "remote_device", "remote_port"];
    for path in files {
        Table::open(
            path,
            &WANTED,
            "give a CSV of LLDP neighbours (local_device,local_port,remote_device,remote_port)",
        )?
        .each(|line, v| {
            if let Some(k) = v.iter().position(|x| x.is_empty()) {
                return Err((
                    k,
                    format!("empty `{}`", WANTED[k]),
                    "every row names both ends: device and port".to_owned(),
                ));
            }
            let a = (v[0].to_owned(), v[1].to_owned());
            let b = (v[2].to_owned(), v[3].to_owned());
            let key = if a <= b {
                [a.clone(), b.clone()]
            } else {
                [b.clone(), a.clone()]
            };
            if seen.insert(key) {
                cables.push(InvCable { a, b, line });
            }
            Ok(())
        })?;
    }
    Ok(cables)
}

impl Inventory {
    /// Its cables replaced by `cables` (what LLDP sees plugged in); with no devices listed,
    /// the devices are those the cables name (LLDP knows no other).
    pub fn with_cables(mut self, cables: Vec<InvCable>, source: &str) -> Inventory {
        if self.devices.is_empty() {
            let mut names: Vec<&String> = cables.iter().flat_map(|c| [&c.a.0, &c.b.0]).collect();
            names.sort_unstable();
            names.dedup();
            self.devices = names
                .into_iter()
                .map(|n| InvDevice {
                    name: n.clone(),
                    role: String::new(),
                    line: 0,
                })
                .collect();
        }
        self.source = if self.source.is_empty() {
            source.to_owned()
        } else {
            format!("{} + {source}", self.source)
        };
        self.cables = cables;
        self
    }
}
