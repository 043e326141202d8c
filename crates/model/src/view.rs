//! A serializable view of the whole model (for `aifabric build --out`), streamed without
//! materializing per-device objects: names are derived while writing.

use crate::fabric::Fabric;
use crate::ids::DeviceId;
use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

/// Serializes a [`Fabric`] as `{name, regions, buildings, zones, power_domains, hardware,
/// devices: [...], links: [...], bundles: [...]}`.
pub struct FabricView<'a>(pub &'a Fabric);

struct Devices<'a>(&'a Fabric);
struct Links<'a>(&'a Fabric);

impl Serialize for Devices<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct D<'b> {
            id: u32,
            name: String,
            role: crate::Role,
            model: &'b str,
            zone: u32,
            plane: Option<u16>,
            hall: Option<u16>,
            pod: Option<u32>,
            rack: Option<u32>,
            power_domain: u32,
        }
        let f = self.0;
        let mut seq = s.serialize_seq(Some(f.devices().len()))?;
        for (i, d) in f.devices().iter().enumerate() {
            seq.serialize_element(&D {
                id: i as u32,
                name: f.device_name(DeviceId::from_idx(i)),
                role: d.role,
                model: &f.catalog.get(d.hw).name,
                zone: d.zone.get(),
                plane: d.plane(),
                hall: d.hall(),
                pod: d.pod(),
                rack: d.rack(),
                power_domain: d.power_domain.get(),
            })?;
        }
        seq.end()
    }
}

impl Serialize for Links<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct L {
            id: u32,
            a: u32,
            a_port: u16,
            b: u32,
            b_port: u16,
            kind: crate::PortKind,
            capacity_gbps: f64,
            length_m: f64,
            optic: crate::Optic,
            macsec: bool,
            bundle: u32,
        }
        let mut seq = s.serialize_seq(Some(self.0.links().len()))?;
        for (i, l) in self.0.links().iter().enumerate() {
            seq.serialize_element(&L {
                id: i as u32,
                a: l.a.get(),
                a_port: l.a_port,
                b: l.b.get(),
                b_port: l.b_port,
                kind: l.kind,
                capacity_gbps: f64::from(l.capacity_mbps) / 1_000.0,
                length_m: l.length_m(),
                optic: l.optic,
                macsec: l.flags & crate::LINK_MACSEC != 0,
                bundle: l.bundle.get(),
            })?;
        }
        seq.end()
    }
}

impl Serialize for FabricView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.0;
        let mut st = s.serialize_struct("Fabric", 10)?;
        st.serialize_field("name", &f.name)?;
        st.serialize_field("regions", &f.regions)?;
        st.serialize_field("buildings", &f.buildings)?;
        st.serialize_field("zones", &f.zones)?;
        st.serialize_field("power_domains", &f.power_domains)?;
        st.serialize_field("srgs", &f.srgs)?;
        st.serialize_field("hardware", f.catalog.models())?;
        st.serialize_field("devices", &Devices(f))?;
        st.serialize_field("links", &Links(f))?;
        st.serialize_field("bundles", f.bundles())?;
        st.end()
    }
}
