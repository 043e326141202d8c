//! The raw spec: exactly what the YAML says, with source locations on every value that
//! validation may need to point at. Defaults follow the published figures (FBOSS counts for
//! DSF and NSF, Llama 3 paper section 3.3.1 for RoCE zones).
//!
//! Nothing here is trusted yet: [`crate::lower`] validates it while building the model.

use serde::Deserialize;
use serde_saphyr::{Location, Spanned};

/// A value with the place in the spec it came from (unknown for defaults).
pub type S<T> = Spanned<T>;

fn sp<T>(v: T) -> S<T> {
    Spanned::new(v, Location::UNKNOWN, Location::UNKNOWN)
}

macro_rules! defaults {
    ($($f:ident: $t:ty = $v:expr;)*) => {
        $(fn $f() -> S<$t> { sp($v) })*
    };
}

defaults! {
    d_gpu_model: String = "gpu-400g".into();
    d_j3: String = "meru800bia".into();
    d_r3: String = "meru800bfa".into();
    d_mp3n: String = "minipack3n".into();
    d_mp2: String = "minipack2".into();
    d_modular: String = "deep-buffer-modular".into();
    d_bag_model: String = "bag-j3-chassis".into();
    d_4: u32 = 4;
    d_1: u32 = 1;
    d_16: u32 = 16;
    d_36: u32 = 36;
    d_40: u32 = 40;
    d_128: u32 = 128;
    d_800: u32 = 800;
    d_400: u32 = 400;
    d_halls: u32 = 4;
    d_pd: u32 = 4;
    d_nsf_pods: u32 = 83;
    d_6: u32 = 6;
    d_32: u32 = 32;
    d_8: u32 = 8;
    d_25: u32 = 25;
    d_roce_racks: u32 = 192;
    d_roce_ctsw: u32 = 16;
    d_roce_atsw: u32 = 9;
    d_roce_atsw_uplinks: u32 = 192;
    d_3: u32 = 3;
    d_bag_m: f64 = 500.0;
    d_zero: f64 = 0.0;
    d_host_m: f64 = 3.0;
    d_rack_m: f64 = 40.0;
    d_spine_m: f64 = 120.0;
}

/// The whole spec file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecFile {
    /// Name of the fabric.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: String,
    /// Cable lengths used when a link class has none of its own.
    #[serde(default)]
    pub lengths: Lengths,
    /// Hardware models added to (or replacing entries of) the built-in catalog.
    #[serde(default)]
    pub hardware: Vec<HardwareSpec>,
    /// Regions, each with an optional BAG layer and its buildings.
    pub regions: Vec<RegionSpec>,
    /// Links between the BAG layers of two regions.
    #[serde(default)]
    pub inter_bag: Vec<InterBagSpec>,
    /// Named shared-risk groups: things that fail together (a conduit, a row of racks).
    #[serde(default)]
    pub srgs: Vec<SrgSpec>,
}

/// A named shared-risk group: the union of what its member selectors select (name prefixes,
/// bundles `A--B[#n]`, `pd:NAME`, or `srg:NAME` of a group defined above it).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SrgSpec {
    /// Group name.
    pub name: S<String>,
    /// Member selectors.
    pub members: Vec<S<String>>,
}

/// Default cable lengths in metres per link class.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lengths {
    /// GPU NIC to its rack switch.
    #[serde(default = "d_host_m")]
    pub host_m: S<f64>,
    /// Rack switch (RDSW/RTSW/EDSW) to first fabric tier (FDSW/FTSW/CTSW).
    #[serde(default = "d_rack_m")]
    pub rack_to_fabric_m: S<f64>,
    /// First to second fabric tier (FDSW-SDSW, FTSW-STSW, CTSW-ATSW).
    #[serde(default = "d_spine_m")]
    pub fabric_to_spine_m: S<f64>,
}

impl Default for Lengths {
    fn default() -> Self {
        Lengths {
            host_m: d_host_m(),
            rack_to_fabric_m: d_rack_m(),
            fabric_to_spine_m: d_spine_m(),
        }
    }
}

/// A hardware model defined in the spec.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardwareSpec {
    /// Catalog key.
    pub name: S<String>,
    /// Free text.
    #[serde(default)]
    pub description: String,
    /// Ethernet port modes, e.g. `[{count: 128, speed_gbps: 400}]`.
    #[serde(default)]
    pub ethernet: Vec<PortModeSpec>,
    /// DSF fabric port modes.
    #[serde(default)]
    pub fabric: Vec<PortModeSpec>,
    /// NIC (host) port modes, for GPU models.
    #[serde(default)]
    pub host: Vec<PortModeSpec>,
    /// HBM buffer in bytes.
    #[serde(default)]
    pub hbm_bytes: u64,
    /// On-chip buffer in bytes.
    #[serde(default)]
    pub sram_bytes: u64,
    /// A GPU's own memory (HBM) in bytes, what a job's weights, optimizer state and
    /// activations must fit in (0: not a GPU, or unknown: jobs are not checked).
    #[serde(default)]
    pub gpu_memory_bytes: u64,
    /// Typical power in watts.
    #[serde(default = "d_zero")]
    pub power_w: S<f64>,
}

/// `count` ports at `speed_gbps`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortModeSpec {
    /// Number of ports.
    pub count: S<u32>,
    /// Speed per port in Gb/s (fractions allowed, e.g. 106.25).
    pub speed_gbps: S<f64>,
}

/// A region.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionSpec {
    /// Region name.
    pub name: S<String>,
    /// The region's BAG layer, if any.
    #[serde(default)]
    pub bag: Option<BagSpec>,
    /// Buildings in the region.
    #[serde(default)]
    pub buildings: Vec<BuildingSpec>,
}

/// A BAG layer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BagSpec {
    /// Name (prefix of its devices' names); default `<region>.bag`.
    #[serde(default)]
    pub name: Option<S<String>>,
    /// Number of BAG planes.
    pub planes: S<u32>,
    /// Chassis per plane.
    #[serde(default = "d_1")]
    pub chassis_per_plane: S<u32>,
    /// Chassis hardware model.
    #[serde(default = "d_bag_model")]
    pub model: S<String>,
    /// A hub BAG (hub-and-spoke): its chassis get role `hub`.
    #[serde(default)]
    pub hub: bool,
}

/// A building.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildingSpec {
    /// Building name.
    pub name: S<String>,
    /// Number of data halls.
    #[serde(default = "d_halls")]
    pub data_halls: S<u32>,
    /// Racks (or fabric switches) per power-distribution domain.
    #[serde(default = "d_pd")]
    pub power_domain_size: S<u32>,
    /// Cable length from this building's L2 edge to its region's BAG, metres.
    #[serde(default = "d_bag_m")]
    pub distance_to_bag_m: S<f64>,
    /// The L2 zones of the building.
    pub zones: Vec<ZoneSpec>,
}

/// An L2 zone: exactly one of the fabric kinds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZoneSpec {
    /// Zone name.
    pub name: S<String>,
    /// DSF single stage.
    #[serde(default)]
    pub dsf_l1: Option<DsfL1Spec>,
    /// DSF dual stage.
    #[serde(default)]
    pub dsf_l2: Option<DsfL2Spec>,
    /// NSF.
    #[serde(default)]
    pub nsf: Option<NsfSpec>,
    /// RoCE AI zones (RTSW / CTSW / ATSW).
    #[serde(default)]
    pub roce: Option<RoceSpec>,
    /// Generic k-ary fat tree.
    #[serde(default)]
    pub fat_tree: Option<FatTreeSpec>,
}

/// A k-ary fat tree (Al-Fares et al. 2008): k pods of k/2 edge and k/2 aggregation switches,
/// (k/2)^2 core switches, k^3/4 hosts; every switch has k ports.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeSpec {
    /// Switch radix k (even).
    pub k: S<u32>,
    /// Link speed, Gb/s (hosts and switches).
    #[serde(default = "d_400")]
    pub link_speed_gbps: S<u32>,
    /// GPU model.
    #[serde(default = "d_gpu_model")]
    pub gpu_model: S<String>,
    /// Switch model (needs k ports at the link speed).
    #[serde(default = "d_mp3n")]
    pub switch_model: S<String>,
    /// Uplinks of each edge (ToR) switch, 1..=k/2 (default k/2, non-blocking): also the
    /// aggregation switches per pod, as each edge switch links to every one of its pod's.
    /// Fewer oversubscribe the edge tier (k/2 hosts over this many uplinks).
    #[serde(default)]
    pub tor_uplinks: Option<S<u32>>,
    /// Uplinks of each aggregation switch to the cores, 1..=k/2 (default k/2). Fewer
    /// oversubscribe the aggregation tier (k/2 edge switches over this many uplinks).
    #[serde(default)]
    pub agg_uplinks: Option<S<u32>>,
}

/// DSF single stage (FBOSS: 128 RDSW / 40 FDSW / 16 EDSW).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DsfL1Spec {
    /// Interface nodes at the racks.
    #[serde(default = "d_128")]
    pub rdsw: S<u32>,
    /// Fabric nodes.
    #[serde(default = "d_40")]
    pub fdsw: S<u32>,
    /// Edge interface nodes toward BAG.
    #[serde(default = "d_16")]
    pub edsw: S<u32>,
    /// Parallel links from each RDSW/EDSW to each FDSW.
    #[serde(default = "d_4")]
    pub links_per_fdsw: S<u32>,
    /// GPUs per RDSW (one 400G port each).
    #[serde(default = "d_36")]
    pub gpus_per_rdsw: S<u32>,
    /// Uplinks from each EDSW to BAG.
    #[serde(default = "d_16")]
    pub edsw_uplinks: S<u32>,
    /// Speed of the EDSW uplinks, Gb/s.
    #[serde(default = "d_800")]
    pub uplink_speed_gbps: S<u32>,
    /// Bundle each group of 4 uplinks to the same BAG chassis into one hyperport.
    #[serde(default)]
    pub hyperports: bool,
    /// Hardware models.
    #[serde(default)]
    pub models: DsfModels,
}

/// DSF dual stage (FBOSS: 4 x 128 RDSW + 128 EDSW, 5 x 40 FDSW, 128 SDSW).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DsfL2Spec {
    /// RDSW clusters.
    #[serde(default = "d_4")]
    pub clusters: S<u32>,
    /// RDSWs per cluster.
    #[serde(default = "d_128")]
    pub rdsw_per_cluster: S<u32>,
    /// EDSWs in the edge-pod cluster.
    #[serde(default = "d_128")]
    pub edsw: S<u32>,
    /// FDSWs per cluster (edge pod included).
    #[serde(default = "d_40")]
    pub fdsw_per_cluster: S<u32>,
    /// Second-stage fabric nodes.
    #[serde(default = "d_128")]
    pub sdsw: S<u32>,
    /// Parallel links from each RDSW/EDSW to each FDSW of its cluster.
    #[serde(default = "d_4")]
    pub links_per_fdsw: S<u32>,
    /// Parallel links from each FDSW to each SDSW.
    #[serde(default = "d_4")]
    pub links_per_sdsw: S<u32>,
    /// GPUs per RDSW.
    #[serde(default = "d_36")]
    pub gpus_per_rdsw: S<u32>,
    /// Uplinks from each EDSW to BAG.
    #[serde(default = "d_16")]
    pub edsw_uplinks: S<u32>,
    /// Speed of the EDSW uplinks, Gb/s.
    #[serde(default = "d_800")]
    pub uplink_speed_gbps: S<u32>,
    /// Bundle each group of 4 uplinks to the same BAG chassis into one hyperport.
    #[serde(default)]
    pub hyperports: bool,
    /// Hardware models.
    #[serde(default)]
    pub models: DsfModels,
}

/// Hardware models of a DSF zone.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DsfModels {
    /// GPU.
    #[serde(default = "d_gpu_model")]
    pub gpu: S<String>,
    /// RDSW and EDSW.
    #[serde(default = "d_j3")]
    pub interface_node: S<String>,
    /// FDSW and SDSW.
    #[serde(default = "d_r3")]
    pub fabric_node: S<String>,
}

impl Default for DsfModels {
    fn default() -> Self {
        DsfModels {
            gpu: d_gpu_model(),
            interface_node: d_j3(),
            fabric_node: d_r3(),
        }
    }
}

/// NSF: pods of racks, parallel rack links per spine plane, STSW i of every plane to BAG plane i.
/// Defaults give the 4.98:1 GPU-to-BAG example (see `crates/spec/specs/nsf-l2.yaml`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NsfSpec {
    /// Pods.
    #[serde(default = "d_nsf_pods")]
    pub pods: S<u32>,
    /// Racks per pod (R; FBOSS default 6).
    #[serde(default = "d_6")]
    pub racks_per_pod: S<u32>,
    /// GPUs per rack.
    #[serde(default = "d_32")]
    pub gpus_per_rack: S<u32>,
    /// Spine planes (S).
    #[serde(default = "d_8")]
    pub spine_planes: S<u32>,
    /// Parallel links from each rack switch to its pod's FTSW of each plane (P). FBOSS's
    /// pruning default is 6; we default to 4 so that 8 planes x 4 x 400G up matches 32 x 400G
    /// GPUs down: a non-blocking rack, as NSF racks are built.
    #[serde(default = "d_4")]
    pub rack_links_per_plane: S<u32>,
    /// STSWs per spine plane (must equal the BAG plane count when under a BAG).
    #[serde(default = "d_16")]
    pub stsw_per_plane: S<u32>,
    /// Parallel links from each FTSW to each STSW of its plane.
    #[serde(default = "d_1")]
    pub ftsw_links_per_stsw: S<u32>,
    /// Uplinks from each STSW to its BAG plane.
    #[serde(default = "d_25")]
    pub stsw_uplinks: S<u32>,
    /// Speed of all switch-to-switch links, Gb/s.
    #[serde(default = "d_400")]
    pub link_speed_gbps: S<u32>,
    /// GPU model.
    #[serde(default = "d_gpu_model")]
    pub gpu_model: S<String>,
    /// Switch model (RTSW, FTSW, STSW).
    #[serde(default = "d_mp3n")]
    pub switch_model: S<String>,
}

/// RoCE AI zones joined by an ATSW layer (Llama 3: 8 x 192 racks x 16 GPUs).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoceSpec {
    /// AI zones (pods).
    #[serde(default = "d_8")]
    pub ai_zones: S<u32>,
    /// Racks per AI zone.
    #[serde(default = "d_roce_racks")]
    pub racks_per_zone: S<u32>,
    /// GPUs per rack.
    #[serde(default = "d_16")]
    pub gpus_per_rack: S<u32>,
    /// CTSWs per AI zone.
    #[serde(default = "d_roce_ctsw")]
    pub ctsw_per_zone: S<u32>,
    /// Parallel links from each RTSW to each CTSW of its zone.
    #[serde(default = "d_1")]
    pub rtsw_links_per_ctsw: S<u32>,
    /// ATSWs.
    #[serde(default = "d_roce_atsw")]
    pub atsw: S<u32>,
    /// Parallel links from each CTSW to each ATSW.
    #[serde(default = "d_3")]
    pub ctsw_links_per_atsw: S<u32>,
    /// Uplinks from each ATSW to its region's BAG, at `link_speed_gbps`, spread evenly over
    /// the BAG planes (a multiple of `bag.planes`) as EDSW uplinks are; unused without a BAG.
    /// Meta's RoCE zones reach BAG through their aggregation tier, but no count is published:
    /// the default is an assumption, 192 = what the default ATSW (576 x 400G) has left after
    /// its 8 x 16 x 3 = 384 CTSW links, so the default zone goes up as wide as its ATSW ports
    /// allow (9 x 192 x 400G = 691.2 Tb/s for 9,830.4 Tb/s of GPUs, 14.2:1; Meta's typical
    /// L2-to-BAG 4.5:1 is out of reach behind the 7.11:1 AI zone -> ATSW tier). 192 divides
    /// evenly over 1, 2, 3, 4, 6, 8, 12 and 16 planes.
    #[serde(default = "d_roce_atsw_uplinks")]
    pub atsw_uplinks: S<u32>,
    /// Speed of all switch-to-switch links, Gb/s.
    #[serde(default = "d_400")]
    pub link_speed_gbps: S<u32>,
    /// GPU model.
    #[serde(default = "d_gpu_model")]
    pub gpu_model: S<String>,
    /// RTSW model.
    #[serde(default = "d_mp2")]
    pub rtsw_model: S<String>,
    /// CTSW and ATSW model.
    #[serde(default = "d_modular")]
    pub spine_model: S<String>,
}

/// How the planes of two BAG layers are wired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InterBagTopology {
    /// Plane i to plane i only.
    Planar,
    /// Each plane's links spread evenly over every plane of the other side.
    Spread,
}

/// Links between two regions' BAG layers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterBagSpec {
    /// The two regions.
    pub between: S<Vec<S<String>>>,
    /// Planar or spread.
    pub topology: InterBagTopology,
    /// Links leaving each plane of the first region toward the second.
    pub links_per_plane: S<u32>,
    /// Link speed, Gb/s.
    #[serde(default = "d_800")]
    pub speed_gbps: S<u32>,
    /// Cable length, metres.
    pub length_m: S<f64>,
}
