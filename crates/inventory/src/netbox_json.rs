//! The inventory as NetBox's REST API returns it: `devices.json`, `interfaces.json` and
//! `cables.json`, each the body of `GET /api/dcim/devices/` (and `interfaces/`, `cables/`)
//! — one page (`{"count": ..., "results": [...]}`), a list of pages as a paging script
//! saves them, or a plain list of records. Only the fields the drift reads are read:
//! a device's `name` and `role` (`device_role` before NetBox 3.6), an interface's `device`,
//! `name` and `speed` (kb/s, may be null), an IP address's `address` and `assigned_object`
//! (its device and interface; `ip-addresses.json`, `GET /api/ipam/ip-addresses/`, when
//! saved), a cable's `a_terminations` and `b_terminations`
//! (NetBox 3.3 on; interfaces paired in order when a side has several), or
//! `termination_a` and `termination_b` before.

use crate::meter::Meter;
use crate::netbox::{InvCable, InvDevice, Inventory, InventoryError};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::path::Path;

/// Something NetBox nests by name (`{"id": 1, "name": "rtsw0", ...}`).
#[derive(Deserialize)]
struct Named {
    name: Option<String>,
}

#[derive(Deserialize)]
struct Device {
    name: Option<String>,
    role: Option<Named>,
    device_role: Option<Named>,
}

#[derive(Deserialize)]
struct Interface {
    device: Named,
    name: String,
    speed: Option<u64>,
}

/// An interface at a cable's end, as a termination's `object` nests it.
#[derive(Deserialize)]
struct TermObject {
    device: Option<Named>,
    name: Option<String>,
}

#[derive(Deserialize)]
struct Termination {
    #[serde(default)]
    object_type: String,
    object: Option<TermObject>,
}

#[derive(Deserialize)]
struct Cable {
    #[serde(default)]
    a_terminations: Vec<Termination>,
    #[serde(default)]
    b_terminations: Vec<Termination>,
    termination_a: Option<TermObject>,
    termination_b: Option<TermObject>,
}

#[derive(Deserialize)]
struct IpAddress {
    address: String,
    #[serde(default)]
    assigned_object_type: Option<String>,
    assigned_object: Option<TermObject>,
}

#[derive(Deserialize)]
struct Page<T> {
    results: Vec<T>,
}

/// What a NetBox API directory holds, for a file that cannot be read.
const API: &str = "give the directory of NetBox API responses (devices.json, interfaces.json \
                   and cables.json: the bodies of GET /api/dcim/devices/, interfaces/ and \
                   cables/, one page, a list of pages or a list of records)";

/// Whether `dir` holds NetBox API responses (its `devices.json`) rather than a CSV export.
pub fn is_api_dir(dir: &Path) -> bool {
    dir.join("devices.json").is_file()
}

/// The records of the response in `path`: one page, a list of pages, or a list of records
/// (read streaming, again as records when a list's first element is no page).
fn records<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, InventoryError> {
    let file = path.display().to_string();
    let open = || {
        std::fs::File::open(path)
            .map(std::io::BufReader::new)
            .map_err(|e| InventoryError {
                file: file.clone(),
                line: 0,
                column: 0,
                message: format!("cannot read it: {e}"),
                hint: API.into(),
            })
    };
    let located = |e: serde_json::Error| InventoryError {
        file: file.clone(),
        line: e.line() as u64,
        column: e.column() as u64,
        message: if e.is_data() {
            format!("not a NetBox API response: {e}")
        } else {
            format!("not JSON: {e}")
        },
        hint: API.into(),
    };
    let mut first = [0u8; 1];
    let mut r = open()?;
    loop {
        use std::io::Read;
        if r.read(&mut first)
            .map_err(|e| located(serde_json::Error::io(e)))?
            == 0
        {
            return Ok(Vec::new());
        }
        if !first[0].is_ascii_whitespace() {
            break;
        }
    }
    if first[0] == b'{' {
        let page: Page<T> = serde_json::from_reader(open()?).map_err(located)?;
        return Ok(page.results);
    }
    match serde_json::from_reader::<_, Vec<Page<T>>>(open()?) {
        Ok(pages) => Ok(pages.into_iter().flat_map(|p| p.results).collect()),
        Err(e) if e.is_data() => serde_json::from_reader(open()?).map_err(located),
        Err(e) => Err(located(e)),
    }
}

/// An error at record `k` of `path` (its JSON path `results[k]...`).
fn at(path: &Path, k: usize, field: &str, message: String, hint: &str) -> InventoryError {
    InventoryError {
        file: format!("{} (results[{k}].{field})", path.display()),
        line: 0,
        column: 0,
        message,
        hint: hint.into(),
    }
}

/// Read the inventory of the NetBox API responses in `dir`.
pub(crate) fn read_api_dir(dir: &Path, meter: &mut Meter<'_>) -> Result<Inventory, InventoryError> {
    let mut inv = Inventory {
        source: dir.display().to_string(),
        ..Inventory::default()
    };
    let path = dir.join("devices.json");
    for (k, d) in records::<Device>(&path)?.into_iter().enumerate() {
        let name = d.name.filter(|n| !n.is_empty()).ok_or_else(|| {
            at(
                &path,
                k,
                "name",
                "a device without a name".into(),
                "name every device of the fabric in NetBox",
            )
        })?;
        let role = d.role.or(d.device_role).and_then(|r| r.name);
        inv.devices.push(InvDevice {
            name,
            role: role.unwrap_or_default(),
            line: k as u64 + 1,
        });
    }
    meter.file_done(crate::meter::size(&path));
    let path = dir.join("interfaces.json");
    for (k, i) in records::<Interface>(&path)?.into_iter().enumerate() {
        let device = i.device.name.ok_or_else(|| {
            at(
                &path,
                k,
                "device.name",
                "an interface of a device without a name".into(),
                "name every device of the fabric in NetBox",
            )
        })?;
        if let Some(kbps) = i.speed {
            inv.speeds_kbps.insert((device, i.name), kbps);
        }
    }
    meter.file_done(crate::meter::size(&path));
    let path = dir.join("ip-addresses.json");
    if path.is_file() {
        for a in records::<IpAddress>(&path)? {
            let on_interface = a
                .assigned_object_type
                .as_deref()
                .is_none_or(|t| t == "dcim.interface");
            if let (
                true,
                Some(TermObject {
                    device: Some(Named { name: Some(d) }),
                    name: Some(n),
                }),
            ) = (on_interface, a.assigned_object)
            {
                inv.addresses.insert((d, n), a.address);
            }
        }
        meter.file_done(crate::meter::size(&path));
    }
    let path = dir.join("cables.json");
    for (k, c) in records::<Cable>(&path)?.into_iter().enumerate() {
        let end = |t: TermObject, side: &str| match (t.device.and_then(|d| d.name), t.name) {
            (Some(d), Some(n)) => Ok((d, n)),
            _ => Err(at(
                &path,
                k,
                side,
                "a cable end without its device's name or its interface's".into(),
                "save the cables as the API returns them (with each termination's object)",
            )),
        };
        let interfaces = |ts: Vec<Termination>| -> Vec<TermObject> {
            ts.into_iter()
                .filter(|t| t.object_type.is_empty() || t.object_type == "dcim.interface")
                .filter_map(|t| t.object)
                .collect()
        };
        let (a, b) = if c.a_terminations.is_empty() && c.b_terminations.is_empty() {
            (
                c.termination_a.into_iter().collect(),
                c.termination_b.into_iter().collect(),
            )
        } else {
            (interfaces(c.a_terminations), interfaces(c.b_terminations))
        };
        // A cable to a front port, a circuit or a power port joins no two interfaces.
        for (ta, tb) in a.into_iter().zip(b) {
            inv.cables.push(InvCable {
                a: end(ta, "a_terminations")?,
                b: end(tb, "b_terminations")?,
                line: k as u64 + 1,
            });
        }
    }
    meter.file_done(crate::meter::size(&path));
    Ok(inv)
}
