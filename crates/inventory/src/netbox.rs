//! The inventory of a NetBox bulk export: `devices.csv` (`name`, `role`), `interfaces.csv`
//! (`device`, `name`, `speed` in kb/s) and `cables.csv` (`side_a_device`, `side_a_name`,
//! `side_b_device`, `side_b_name`), columns found by their header names (NetBox's CSV
//! import and export field names), other columns ignored.

use crate::meter::Meter;
use rustc_hash::FxHashMap;
use std::path::Path;

/// A bad inventory file: where, what, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}\n  hint: {hint}")]
pub struct InventoryError {
    /// File.
    pub file: String,
    /// 1-based line (0: the whole file).
    pub line: u64,
    /// 1-based column (0: the whole line).
    pub column: u64,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

/// A device of the inventory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvDevice {
    /// Its name.
    pub name: String,
    /// Its role, as NetBox names it.
    pub role: String,
    /// Line of `devices.csv` (of the API's `devices.json`: its record, from 1).
    pub line: u64,
}

/// A cable of the inventory: (device, interface) at each end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvCable {
    /// Side A.
    pub a: (String, String),
    /// Side B.
    pub b: (String, String),
    /// Line of `cables.csv` (of an LLDP table: its row; of the API's `cables.json`: its
    /// record, from 1).
    pub line: u64,
}

/// What the inventory holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inventory {
    /// Where it was read from.
    pub source: String,
    /// Devices, in file order.
    pub devices: Vec<InvDevice>,
    /// Interface speeds, kb/s, by (device, interface).
    pub speeds_kbps: FxHashMap<(String, String), u64>,
    /// Cables, in file order.
    pub cables: Vec<InvCable>,
    /// Interface addresses (`address/length`), by (device, interface): `ip-addresses.csv`
    /// (or the API's `ip-addresses.json`) when the export has it.
    pub addresses: FxHashMap<(String, String), String>,
}

/// One CSV file with its required columns located.
pub(crate) struct Table {
    file: String,
    reader: csv::Reader<std::fs::File>,
    columns: Vec<usize>,
}

impl Table {
    /// `path`, its header read and `wanted` located in it; `what` says what the file should
    /// be when it cannot be read.
    pub(crate) fn open(path: &Path, wanted: &[&str], what: &str) -> Result<Table, InventoryError> {
        let file = path.display().to_string();
        let err = |line, column, message: String, hint: &str| InventoryError {
            file: file.clone(),
            line,
            column,
            message,
            hint: hint.to_owned(),
        };
        let f = std::fs::File::open(path)
            .map_err(|e| err(0, 0, format!("cannot read it: {e}"), what))?;
        let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(f);
        let headers = reader
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
        let mut columns = Vec::with_capacity(wanted.len());
        for w in wanted {
            match headers.iter().position(|h| h.trim() == *w) {
                Some(i) => columns.push(i),
                None => {
                    return Err(err(
                        1,
                        0,
                        format!(
                            "no column `{w}` (the header has: {})",
                            headers.iter().collect::<Vec<_>>().join(", ")
                        ),
                        &format!("add the column `{w}` to the header (the first line)"),
                    ))
                }
            }
        }
        Ok(Table {
            file,
            reader,
            columns,
        })
    }

    /// Every record: its line and the wanted fields; `meter` told the bytes read.
    pub(crate) fn each(
        mut self,
        meter: &mut Meter<'_>,
        mut f: impl FnMut(u64, &[&str]) -> Result<(), (usize, String, String)>,
    ) -> Result<(), InventoryError> {
        let mut record = csv::StringRecord::new();
        let mut n = 0u64;
        loop {
            let more = self.reader.read_record(&mut record).map_err(|e| {
                let line = e.position().map_or(0, csv::Position::line);
                InventoryError {
                    file: self.file.clone(),
                    line,
                    column: 0,
                    message: format!("not CSV: {e}"),
                    hint: "every line has the header's columns, fields with commas quoted".into(),
                }
            })?;
            if !more {
                meter.file_done(self.reader.position().byte());
                return Ok(());
            }
            n += 1;
            if n.is_multiple_of(crate::meter::EVERY) {
                meter.at(record.position().map_or(0, csv::Position::byte));
            }
            let line = record.position().map_or(0, csv::Position::line);
            let fields: Vec<&str> = self
                .columns
                .iter()
                .map(|&i| record.get(i).unwrap_or("").trim())
                .collect();
            f(line, &fields).map_err(|(k, message, hint)| InventoryError {
                file: self.file.clone(),
                line,
                column: self.columns[k] as u64 + 1,
                message,
                hint,
            })?;
        }
    }
}

/// What a NetBox export directory holds, for a file that cannot be read.
const NETBOX: &str = "give the directory of a NetBox export (devices.csv, interfaces.csv and \
                      cables.csv, as `aifabric export --format netbox` writes them)";

/// Read the inventory of the NetBox export in `dir`: the API's JSON responses when it holds
/// a `devices.json` ([`crate::netbox_json`]), else the CSV export.
pub fn read_dir(dir: &Path) -> Result<Inventory, InventoryError> {
    read_dir_metered(dir, &mut Meter::silent())
}

/// [`read_dir`], telling `meter` how far it is.
pub fn read_dir_metered(dir: &Path, meter: &mut Meter<'_>) -> Result<Inventory, InventoryError> {
    if crate::netbox_json::is_api_dir(dir) {
        return crate::netbox_json::read_api_dir(dir, meter);
    }
    read_csv_dir(dir, meter)
}

/// Read the inventory of the NetBox CSV export in `dir`.
fn read_csv_dir(dir: &Path, meter: &mut Meter<'_>) -> Result<Inventory, InventoryError> {
    let mut inv = Inventory {
        source: dir.display().to_string(),
        ..Inventory::default()
    };
    let nonempty = |k: usize, v: &str, what: &str| {
        if v.is_empty() {
            Err((k, format!("empty {what}"), format!("give the {what}")))
        } else {
            Ok(())
        }
    };
    Table::open(&dir.join("devices.csv"), &["name", "role"], NETBOX)?.each(meter, |line, v| {
        nonempty(0, v[0], "device name")?;
        inv.devices.push(InvDevice {
            name: v[0].to_owned(),
            role: v[1].to_owned(),
            line,
        });
        Ok(())
    })?;
    Table::open(
        &dir.join("interfaces.csv"),
        &["device", "name", "speed"],
        NETBOX,
    )?
    .each(meter, |_, v| {
        nonempty(0, v[0], "device name")?;
        nonempty(1, v[1], "interface name")?;
        if v[2].is_empty() {
            return Ok(());
        }
        let kbps: u64 = v[2].parse().map_err(|_| {
            (
                2,
                format!("speed `{}` is not a whole number of kb/s", v[2]),
                "write the speed in kb/s, as NetBox does: 400000000 for 400G".to_owned(),
            )
        })?;
        inv.speeds_kbps
            .insert((v[0].to_owned(), v[1].to_owned()), kbps);
        Ok(())
    })?;
    let ips = dir.join("ip-addresses.csv");
    if ips.is_file() {
        Table::open(&ips, &["address", "device", "interface"], NETBOX)?.each(meter, |_, v| {
            if !v[1].is_empty() && !v[2].is_empty() && !v[0].is_empty() {
                inv.addresses
                    .insert((v[1].to_owned(), v[2].to_owned()), v[0].to_owned());
            }
            Ok(())
        })?;
    }
    Table::open(
        &dir.join("cables.csv"),
        &[
            "side_a_device",
            "side_a_name",
            "side_b_device",
            "side_b_name",
        ],
        NETBOX,
    )?
    .each(meter, |line, v| {
        for (k, what) in [
            (0, "side A device"),
            (1, "side A interface"),
            (2, "side B device"),
            (3, "side B interface"),
        ] {
            nonempty(k, v[k], what)?;
        }
        inv.cables.push(InvCable {
            a: (v[0].to_owned(), v[1].to_owned()),
            b: (v[2].to_owned(), v[3].to_owned()),
            line,
        });
        Ok(())
    })?;
    Ok(inv)
}
