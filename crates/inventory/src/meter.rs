//! How far reading an inventory is, for a progress bar: bytes read of all the files to read.

use std::path::Path;

/// Bytes read so far of `total`, reported to a callback as records are read.
pub struct Meter<'a> {
    total: u64,
    base: u64,
    report: &'a dyn Fn(u64, u64),
}

/// Records between two reports (a report is cheap; this keeps it off the hot loop).
pub(crate) const EVERY: u64 = 1 << 14;

impl<'a> Meter<'a> {
    /// A meter of `total` bytes calling `report(read, total)`.
    pub fn new(total: u64, report: &'a dyn Fn(u64, u64)) -> Meter<'a> {
        Meter {
            total,
            base: 0,
            report,
        }
    }

    /// A meter that reports nothing.
    pub fn silent() -> Meter<'static> {
        Meter {
            total: 0,
            base: 0,
            report: &|_, _| {},
        }
    }

    /// `pos` bytes read of the current file.
    pub(crate) fn at(&self, pos: u64) {
        (self.report)((self.base + pos).min(self.total), self.total);
    }

    /// The current file, of `size` bytes, read.
    pub(crate) fn file_done(&mut self, size: u64) {
        self.base += size;
        self.at(0);
    }
}

/// A file's size in bytes (0 if it cannot be read: its reader says why).
pub(crate) fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The bytes an inventory of the NetBox export in `netbox` and the LLDP tables `lldp` is
/// read from (the total of a [`Meter`]).
pub fn bytes_to_read(netbox: Option<&Path>, lldp: &[&Path]) -> u64 {
    let dir = netbox.map_or(0, |d| {
        let names: [&str; 4] = if crate::netbox_json::is_api_dir(d) {
            [
                "devices.json",
                "interfaces.json",
                "ip-addresses.json",
                "cables.json",
            ]
        } else {
            [
                "devices.csv",
                "interfaces.csv",
                "ip-addresses.csv",
                "cables.csv",
            ]
        };
        names.iter().map(|n| size(&d.join(n))).sum()
    });
    dir + lldp.iter().map(|p| size(p)).sum::<u64>()
}
