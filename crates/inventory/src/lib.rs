//! The network as built, against the plan.
//!
//! An operator's network differs from the plan its spec generates: cables not yet laid,
//! links plugged into the wrong port or plane, a device left out or one nobody planned.
//! This crate reads the inventory as NetBox holds it ([`netbox`]: the `devices.csv`,
//! `interfaces.csv` and `cables.csv` of a NetBox bulk export, as `aifabric export --format
//! netbox` writes them; [`netbox_json`]: the same as NetBox's REST API returns them) and
//! the cables switches see over LLDP ([`lldp`]: `lldpctl -f json` per device, or a plain
//! CSV), and compares it with the plan ([`mod@drift`]): every cable missing,
//! extra, miswired or at the wrong speed, every device missing or unexpected, grouped by
//! site and hall with the capacity each group loses.
//!
//! **Invariants.** Reading is streaming and every error names the file, line and column
//! and how to fix it. The drift of a plan's own export is empty. Each cable of the
//! inventory is judged once (matched, miswired or extra), each planned link once (found,
//! miswired or missing), so the findings name exactly what differs.

pub mod by_switch;
pub mod drift;
pub mod lldp;
pub mod meter;
pub mod netbox;
pub mod netbox_json;

pub use by_switch::SwitchDrift;
pub use drift::{drift, drift_with_addresses, DriftReport, End, Finding, GroupDrift, TierLoss};
pub use meter::{bytes_to_read, Meter};
pub use netbox::{read_dir, read_dir_metered, Inventory, InventoryError};
