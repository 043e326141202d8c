//! Neighbour tables as switches report them over LLDP, in the plain CSV form
//! `local_device,local_port,remote_device,remote_port` (header named so): each row one
//! port's neighbour. A cable seen from both ends is one cable; a row whose ends contradict
//! another's (A says B, B says C) gives both, which the drift reports.

use crate::netbox::{InvCable, InvDevice, Inventory, InventoryError};
use rustc_hash::FxHashSet;
use std::path::Path;

/// The cables of the neighbour tables in `files`, deduplicated (a cable seen from both of
/// its ends once, at its first row), in file order.
pub fn read_csv(files: &[&Path]) -> Result<Vec<InvCable>, InventoryError> {
    let mut seen: FxHashSet<[(String, String); 2]> = FxHashSet::default();
    let mut cables = Vec::new();
    for path in files {
        let file = path.display().to_string();
        let err = |line, column, message: String, hint: &str| InventoryError {
            file: file.clone(),
            line,
            column,
            message,
            hint: hint.to_owned(),
        };
        let f = std::fs::File::open(path).map_err(|e| {
            err(
                0,
                0,
                format!("cannot read it: {e}"),
                "give a CSV of LLDP neighbours",
            )
        })?;
        let mut r = csv::ReaderBuilder::new().from_reader(f);
        let wanted = ["local_device", "local_port", "remote_device", "remote_port"];
        let headers = r
            .headers()
            .map_err(|e| {
                err(
                    1,
                    0,
                    format!("unreadable header: {e}"),
                    "the first line names the columns",
                )
            })?
            .clone();
        let mut cols = [0usize; 4];
        for (k, w) in wanted.iter().enumerate() {
            cols[k] = headers.iter().position(|h| h.trim() == *w).ok_or_else(|| {
                err(
                    1,
                    0,
                    format!("no column `{w}`"),
                    "the header is local_device,local_port,remote_device,remote_port",
                )
            })?;
        }
        let mut rec = csv::StringRecord::new();
        while r.read_record(&mut rec).map_err(|e| {
            err(
                e.position().map_or(0, csv::Position::line),
                0,
                format!("not CSV: {e}"),
                "every line has the header's columns",
            )
        })? {
            let line = rec.position().map_or(0, csv::Position::line);
            let v: Vec<String> = cols
                .iter()
                .map(|&i| rec.get(i).unwrap_or("").trim().to_owned())
                .collect();
            if let Some(k) = v.iter().position(String::is_empty) {
                return Err(err(
                    line,
                    cols[k] as u64 + 1,
                    format!("empty `{}`", wanted[k]),
                    "every row names both ends: device and port",
                ));
            }
            let a = (v[0].clone(), v[1].clone());
            let b = (v[2].clone(), v[3].clone());
            let key = if a <= b {
                [a.clone(), b.clone()]
            } else {
                [b.clone(), a.clone()]
            };
            if seen.insert(key) {
                cables.push(InvCable { a, b, line });
            }
        }
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
