//! The hardware catalog: what a device model offers (ports, buffers, power).
//!
//! Built-in entries carry published figures, each description naming its source (FBOSS, the
//! OCP Summit 2025 post, Meta's "Building Prometheus ..." post); power draws are typical-load
//! estimates (marked so in their description) so that reports can total megawatts.
//! A spec can add models of its own (see `aifabric-spec`).

use crate::role::PortKind;
use serde::{Deserialize, Serialize};

/// One way to use a group of ports: `count` ports at `speed_mbps` each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortMode {
    /// Number of ports in this mode.
    pub count: u32,
    /// Speed of each port in Mb/s (106.25G = 106_250).
    pub speed_mbps: u32,
}

/// A group of ports sharing one bandwidth budget, usable in several modes (e.g. Jericho3:
/// 18 x 800G *or* 36 x 400G Ethernet). Links of any listed speed may be mixed as long as their
/// total stays within the budget.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortGroup {
    /// Host (a NIC), Ethernet (switch ports, including GPU-facing ones) or Fabric (DSF SerDes).
    pub kind: PortKind,
    /// Alternative configurations; the first one is the native one used in reports.
    pub modes: Vec<PortMode>,
}

impl PortGroup {
    /// Total bandwidth of the group in Mb/s (the largest over its modes).
    pub fn budget_mbps(&self) -> u64 {
        self.modes
            .iter()
            .map(|m| u64::from(m.count) * u64::from(m.speed_mbps))
            .max()
            .unwrap_or(0)
    }

    /// Whether a link of `speed_mbps` can attach to this group.
    pub fn supports(&self, speed_mbps: u32) -> bool {
        self.modes.iter().any(|m| m.speed_mbps == speed_mbps)
    }

    /// Number of ports available at `speed_mbps` (0 if that speed is not offered).
    pub fn ports_at(&self, speed_mbps: u32) -> u32 {
        self.modes
            .iter()
            .find(|m| m.speed_mbps == speed_mbps)
            .map_or(0, |m| m.count)
    }
}

/// A device model: ports, buffer, power.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HardwareModel {
    /// Catalog key, e.g. `meru800bia`.
    pub name: String,
    /// Human description, with the source of its figures.
    pub description: String,
    /// Port groups, at most one per [`PortKind`].
    pub ports: Vec<PortGroup>,
    /// Off-chip packet buffer (HBM) in bytes: a switch's.
    pub hbm_bytes: u64,
    /// On-chip packet buffer in bytes.
    pub sram_bytes: u64,
    /// A GPU's own memory (its HBM) in bytes: what a training job's weights, gradients,
    /// optimizer state and activations must fit in. 0 for a switch, or a GPU whose memory
    /// is not known (jobs on it are not checked). Not [`HardwareModel::hbm_bytes`], which
    /// is a switch's packet buffer.
    #[serde(default)]
    pub gpu_memory_bytes: u64,
    /// Typical power draw in watts.
    pub power_w: f64,
    /// Line cards of a modular chassis (its Ethernet ports split evenly over them); 0 for
    /// fixed switches.
    #[serde(default)]
    pub line_cards: u32,
    /// How long the switch takes to stop sending after a PFC pause arrives (its response
    /// time), nanoseconds: the `t_response` of the PFC headroom formula.
    #[serde(default = "default_pfc_response_ns")]
    pub pfc_response_ns: u32,
}

/// PFC response time of the built-in models, nanoseconds: an assumption (vendors publish
/// none for these switches), of the order of a few pause-frame times plus the time to finish
/// the packet on the wire.
pub const DEFAULT_PFC_RESPONSE_NS: u32 = 1_000;

fn default_pfc_response_ns() -> u32 {
    DEFAULT_PFC_RESPONSE_NS
}

impl HardwareModel {
    /// The port group of `kind`, if the model has one.
    pub fn group(&self, kind: PortKind) -> Option<&PortGroup> {
        self.ports.iter().find(|g| g.kind == kind)
    }
}

/// The set of known hardware models, indexed by [`crate::HwId`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Catalog {
    models: Vec<HardwareModel>,
}

const GBPS: u32 = 1_000;

fn group(kind: PortKind, modes: &[(u32, u32)]) -> PortGroup {
    PortGroup {
        kind,
        modes: modes
            .iter()
            .map(|&(count, speed_mbps)| PortMode { count, speed_mbps })
            .collect(),
    }
}

fn model(
    name: &str,
    description: &str,
    ports: Vec<PortGroup>,
    hbm_bytes: u64,
    sram_bytes: u64,
    power_w: f64,
) -> HardwareModel {
    HardwareModel {
        name: name.to_owned(),
        description: description.to_owned(),
        ports,
        hbm_bytes,
        sram_bytes,
        gpu_memory_bytes: 0,
        power_w,
        line_cards: 0,
        pfc_response_ns: DEFAULT_PFC_RESPONSE_NS,
    }
}

/// A GPU: `model` with `gpu_memory_bytes` of its own memory.
fn gpu(m: HardwareModel, gpu_memory_bytes: u64) -> HardwareModel {
    HardwareModel {
        gpu_memory_bytes,
        ..m
    }
}

/// H100 SXM5: 80 GB of HBM3 (NVIDIA H100 Tensor Core GPU datasheet), binary gigabytes as
/// memory capacities are counted (nvidia-smi reports 81,559 MiB of them usable).
pub const H100_MEMORY_BYTES: u64 = 80 << 30;

/// GB200: 13.4 TB of HBM3e over the 72 GPUs of an NVL72 rack (NVIDIA GB200 NVL72
/// specifications), 186 GB each.
pub const GB200_MEMORY_BYTES: u64 = 186 << 30;

/// A modular chassis: `model` with `line_cards` line cards.
fn chassis(m: HardwareModel, line_cards: u32) -> HardwareModel {
    HardwareModel { line_cards, ..m }
}

/// DSF fabric SerDes lane rate: 106.25 Gb/s raw (FBOSS, Meru800BIA fabric ports).
pub const FABRIC_LANE_MBPS: u32 = 106_250;

impl Catalog {
    /// The built-in catalog.
    pub fn builtin() -> Catalog {
        use PortKind::{Ethernet, Fabric, Host};
        const MB: u64 = 1_000_000;
        const GB: u64 = 1_000_000_000;
        let models = vec![
            gpu(
                model(
                    "gpu-400g",
                    "GPU with one 400G scale-out NIC (H100/B200 class), memory an H100 SXM5's \
                     80 GB (NVIDIA datasheet); power is the GPU plus its share of the host, an \
                     estimate",
                    vec![group(Host, &[(1, 400 * GBPS)])],
                    0,
                    0,
                    1_400.0,
                ),
                H100_MEMORY_BYTES,
            ),
            gpu(
                model(
                    "gpu-800g",
                    "GPU with one 800G scale-out NIC (GB200/GB300 class), memory a GB200's 186 \
                     GB (NVL72: 13.4 TB over 72 GPUs); power is an estimate",
                    vec![group(Host, &[(1, 800 * GBPS)])],
                    0,
                    0,
                    1_800.0,
                ),
                GB200_MEMORY_BYTES,
            ),
            model(
                "nic-100g",
                "Host with one 100G NIC, the endpoint of htsim's regression fat trees \
                 (Ultra Ethernet Consortium htsim); power is an estimate",
                vec![group(Host, &[(1, 100 * GBPS)])],
                0,
                0,
                300.0,
            ),
            model(
                "meru800bia",
                "Jericho3 DSF interface node (RDSW/EDSW): 18x800G or 36x400G Ethernet, 160 \
                 fabric links at 106.25G, 12 GB usable HBM + 128 MB SRAM (FBOSS); power estimated",
                vec![
                    group(Ethernet, &[(18, 800 * GBPS), (36, 400 * GBPS)]),
                    group(Fabric, &[(160, FABRIC_LANE_MBPS)]),
                ],
                12 * GB,
                128 * MB,
                1_100.0,
            ),
            model(
                "meru800bfa",
                "DSF fabric node (FDSW/SDSW): 2 x Ramon3, 1,024 fabric links at 106.25G (FBOSS); \
                 power estimated",
                vec![group(Fabric, &[(1_024, FABRIC_LANE_MBPS)])],
                0,
                0,
                1_900.0,
            ),
            model(
                "minipack3n",
                "NSF switch, Spectrum-4: 128x400G or 64x800G, 150 MB buffer (OCP 2025); power \
                 estimated",
                vec![group(Ethernet, &[(128, 400 * GBPS), (64, 800 * GBPS)])],
                0,
                150 * MB,
                1_400.0,
            ),
            model(
                "tomahawk3-100g",
                "Tomahawk3-class switch: 128x100G or 32x400G (12.8 Tb/s), 64 MB shared buffer \
                 (Broadcom BCM56980 product brief); the switch of 100 Gb/s fat trees such as \
                 htsim's; power estimated",
                vec![group(Ethernet, &[(128, 100 * GBPS), (32, 400 * GBPS)])],
                0,
                64 * MB,
                400.0,
            ),
            model(
                "minipack2",
                "RoCE-era rack switch (RTSW), Tomahawk4: 64x400G or 128x200G, ~113 MB buffer; \
                 power estimated",
                vec![group(Ethernet, &[(64, 400 * GBPS), (128, 200 * GBPS)])],
                0,
                113 * MB,
                1_000.0,
            ),
            model(
                "deep-buffer-modular",
                "Deep-buffer modular chassis for CTSW/ATSW (Jericho-class line cards): 576x400G, \
                 ~32 GB HBM across line cards; figures are an example configuration",
                vec![group(Ethernet, &[(576, 400 * GBPS)])],
                32 * GB,
                0,
                16_000.0,
            ),
            chassis(model(
                "bag-j3-chassis",
                "BAG modular chassis of Jericho3 line cards: 432x800G (12 line cards x 36x800G, \
                 Prometheus post) or 864x400G; HBM 24 x 12 GB; power estimated",
                vec![group(Ethernet, &[(432, 800 * GBPS), (864, 400 * GBPS)])],
                288 * GB,
                24 * 128 * MB,
                30_000.0,
            ), 12),
            chassis(model(
                "bag-j3-hub-chassis",
                "Larger hub BAG chassis (16 line cards x 36x800G = 576x800G) for many spokes and \
                 long links; an example configuration, power estimated",
                vec![group(Ethernet, &[(576, 800 * GBPS), (1_152, 400 * GBPS)])],
                384 * GB,
                32 * 128 * MB,
                40_000.0,
            ), 16),
        ];
        Catalog { models }
    }

    /// Add a model; returns its id. A model with the same name replaces the old one.
    pub fn insert(&mut self, m: HardwareModel) -> crate::HwId {
        if let Some(id) = self.find(&m.name) {
            self.models[id.idx()] = m;
            return id;
        }
        self.models.push(m);
        crate::HwId::new(self.models.len() as u32 - 1)
    }

    /// Look a model up by name.
    pub fn find(&self, name: &str) -> Option<crate::HwId> {
        self.models
            .iter()
            .position(|m| m.name == name)
            .map(|i| crate::HwId::from_idx(i))
    }

    /// The model with id `id`.
    pub fn get(&self, id: crate::HwId) -> &HardwareModel {
        &self.models[id.idx()]
    }

    /// All models in id order.
    pub fn models(&self) -> &[HardwareModel] {
        &self.models
    }

    /// All model names, for "did you mean" hints.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.models.iter().map(|m| m.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jericho3_budgets_match_facts() {
        let c = Catalog::builtin();
        let j3 = c.get(c.find("meru800bia").unwrap());
        // 18 x 800G = 36 x 400G = 14.4 Tb/s Ethernet; 160 x 106.25G = 17 Tb/s fabric (FBOSS).
        assert_eq!(
            j3.group(PortKind::Ethernet).unwrap().budget_mbps(),
            14_400_000
        );
        assert_eq!(
            j3.group(PortKind::Fabric).unwrap().budget_mbps(),
            17_000_000
        );
        let bag = c.get(c.find("bag-j3-chassis").unwrap());
        assert_eq!(
            bag.group(PortKind::Ethernet).unwrap().ports_at(800_000),
            432
        );
    }
}
