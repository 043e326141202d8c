//! Neighbour tables as switches report them over LLDP: `lldpctl -f json` (or `-f json0`)
//! saved per device, the file named after the device that reported it (`rtsw0.json`), or
//! the plain CSV form `local_device,local_port,remote_device,remote_port` (header named
//! so), each row one port's neighbour. A cable seen from both ends is one cable; a row whose
//! ends contradict another's (A says B, B says C) gives both, which the drift reports.

use crate::meter::Meter;
use crate::netbox::{InvCable, InvDevice, Inventory, InventoryError, Table};
use rustc_hash::FxHashSet;
use serde_json::Value;
use std::path::Path;

/// The cables of the neighbour tables in `files`, each `lldpctl` JSON (a `.json` file) or
/// CSV, deduplicated (a cable seen from both of its ends once, at its first row), in file
/// order.
pub fn read(files: &[&Path]) -> Result<Vec<InvCable>, InventoryError> {
    read_metered(files, &mut Meter::silent())
}

/// [`read`], telling `meter` how far it is.
pub fn read_metered(
    files: &[&Path],
    meter: &mut Meter<'_>,
) -> Result<Vec<InvCable>, InventoryError> {
    let mut cables = Vec::new();
    for path in files {
        if path.extension().is_some_and(|e| e == "json") {
            cables.extend(read_lldpctl(path)?);
            meter.file_done(crate::meter::size(path));
        } else {
            cables.extend(csv_rows(path, meter)?);
        }
    }
    dedup(cables)
}

/// What an `lldpctl` file should be, for one that cannot be read.
const LLDPCTL: &str = "save `lldpctl -f json` (or `-f json0`) of each device as DEVICE.json, \
                       the file named after the device that reported it";

/// The neighbours in one `lldpctl -f json` (or `json0`) file, the local device named by the
/// file's stem. `json` collapses one-element lists (one interface, one neighbour) and keys
/// interfaces and chassis by name; `json0` lists everything and names them in `name`: both
/// are read.
pub fn read_lldpctl(path: &Path) -> Result<Vec<InvCable>, InventoryError> {
    let file = path.display().to_string();
    let err = |json_path: &str, line: u64, column: u64, message: String| InventoryError {
        file: if json_path.is_empty() {
            file.clone()
        } else {
            format!("{file} ({json_path})")
        },
        line,
        column,
        message,
        hint: LLDPCTL.into(),
    };
    let local = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| err("", 0, 0, "no file name to name the device by".into()))?;
    let text =
        std::fs::read_to_string(path).map_err(|e| err("", 0, 0, format!("cannot read it: {e}")))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        err(
            "",
            e.line() as u64,
            e.column() as u64,
            format!("not JSON: {e}"),
        )
    })?;
    let lldp = one(doc
        .get("lldp")
        .ok_or_else(|| err("", 1, 1, "no `lldp` object".into()))?);
    let mut out = Vec::new();
    let Some(ifaces) = lldp.get("interface") else {
        return Ok(out); // no neighbour
    };
    for (k, (port, entry)) in named(ifaces).into_iter().enumerate() {
        let here = format!("lldp.interface[{k}]");
        let port = port.ok_or_else(|| err(&here, 0, 0, "an interface without its name".into()))?;
        let chassis = entry
            .get("chassis")
            .ok_or_else(|| err(&here, 0, 0, format!("{port}: no `chassis` (the neighbour)")))?;
        let (remote, _) = named(chassis)
            .into_iter()
            .next()
            .unwrap_or((None, &Value::Null));
        let remote = remote.ok_or_else(|| {
            err(
                &format!("{here}.chassis"),
                0,
                0,
                format!("{port}: the neighbour sends no system name"),
            )
        })?;
        let remote_port = entry
            .get("port")
            .map(one)
            .and_then(|p| {
                let id = p.get("id").map(one);
                let kind = id.and_then(|i| i.get("type")).and_then(text_of);
                let value = id.and_then(|i| i.get("value")).and_then(text_of);
                match kind.as_deref() {
                    Some("ifname") | Some("local") => value,
                    // A MAC address names no port: the description does, when sent.
                    _ => p.get("descr").and_then(text_of).or(value),
                }
            })
            .ok_or_else(|| {
                err(
                    &format!("{here}.port"),
                    0,
                    0,
                    format!("{port}: the neighbour names no port (`port.id`)"),
                )
            })?;
        out.push(InvCable {
            a: (local.clone(), port),
            b: (remote, remote_port),
            line: k as u64 + 1,
        });
    }
    Ok(out)
}

/// Keys of an `lldpctl` record itself: an object with one of them is a record, not a map
/// from names to records.
const FIELDS: [&str; 8] = [
    "id",
    "descr",
    "mgmt-ip",
    "capability",
    "ttl",
    "via",
    "chassis",
    "port",
];

/// A one-element list's element (`json0` lists everything), else the value.
fn one(v: &Value) -> &Value {
    match v {
        Value::Array(a) if a.len() == 1 => &a[0],
        _ => v,
    }
}

/// A string, or `{"value": s}` / `[{"value": s}]` (`json0`).
fn text_of(v: &Value) -> Option<String> {
    match one(v) {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("value").and_then(text_of),
        _ => None,
    }
}

/// Named entries: `{name: {...}}` (json, one or several keys), a list of such one-key
/// objects, or a list of objects with a `name` (json0).
fn named(v: &Value) -> Vec<(Option<String>, &Value)> {
    let items: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    let mut out = Vec::new();
    for item in items {
        let Value::Object(o) = item else { continue };
        if let Some(name) = o
            .get("name")
            .filter(|n| !n.is_object() || n.get("value").is_some())
        {
            out.push((text_of(name), item));
        } else if !o.keys().any(|k| FIELDS.contains(&k.as_str())) {
            for (k, v) in o {
                out.push((Some(k.clone()), one(v)));
            }
        } else {
            out.push((None, item));
        }
    }
    out
}

/// The cables of the CSV neighbour tables in `files`, deduplicated (a cable seen from both
/// of its ends once, at its first row), in file order.
pub fn read_csv(files: &[&Path]) -> Result<Vec<InvCable>, InventoryError> {
    let mut meter = Meter::silent();
    let mut out = Vec::new();
    for path in files {
        out.extend(csv_rows(path, &mut meter)?);
    }
    dedup(out)
}

/// `cables` with each cable once (at its first row).
fn dedup(cables: Vec<InvCable>) -> Result<Vec<InvCable>, InventoryError> {
    let mut seen: FxHashSet<[(String, String); 2]> = FxHashSet::default();
    Ok(cables
        .into_iter()
        .filter(|c| {
            seen.insert(if c.a <= c.b {
                [c.a.clone(), c.b.clone()]
            } else {
                [c.b.clone(), c.a.clone()]
            })
        })
        .collect())
}

/// The rows of one CSV neighbour table, as cables.
fn csv_rows(path: &Path, meter: &mut Meter<'_>) -> Result<Vec<InvCable>, InventoryError> {
    const WANTED: [&str; 4] = ["local_device", "local_port", "remote_device", "remote_port"];
    let mut cables = Vec::new();
    Table::open(
        path,
        &WANTED,
        "give a CSV of LLDP neighbours (local_device,local_port,remote_device,remote_port)",
    )?
    .each(meter, |line, v| {
        if let Some(k) = v.iter().position(|x| x.is_empty()) {
            return Err((
                k,
                format!("empty `{}`", WANTED[k]),
                "every row names both ends: device and port".to_owned(),
            ));
        }
        cables.push(InvCable {
            a: (v[0].to_owned(), v[1].to_owned()),
            b: (v[2].to_owned(), v[3].to_owned()),
            line,
        });
        Ok(())
    })?;
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
