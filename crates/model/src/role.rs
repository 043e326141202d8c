//! Device roles, port kinds and optics: the domain's vocabulary.

use serde::{Deserialize, Serialize};

/// What a device does in the network. Names follow Meta's (FBOSS role names; Llama 3 paper
/// section 3.3.1 for the RoCE tiers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Role {
    /// A GPU's scale-out NIC (one per GPU, e.g. 400G).
    Gpu,
    /// Rack switch (ToR) of RoCE zones, NSF pods and fat trees.
    Rtsw,
    /// RoCE cluster switch (deep-buffer spine of an AI zone).
    Ctsw,
    /// RoCE aggregation switch between AI zones.
    Atsw,
    /// DSF interface node at the racks (Jericho3).
    Rdsw,
    /// DSF first-stage fabric node (Ramon3).
    Fdsw,
    /// DSF second-stage fabric node (Ramon3).
    Sdsw,
    /// DSF interface node in the edge pod, facing BAG (Jericho3).
    Edsw,
    /// NSF pod-level fabric switch (one per pod per spine plane).
    Ftsw,
    /// NSF spine switch.
    Stsw,
    /// Backend-aggregation super-spine chassis.
    Bag,
    /// Hub BAG chassis in a hub-and-spoke layout.
    Hub,
}

impl Role {
    /// All roles, in report order.
    pub const ALL: [Role; 12] = [
        Role::Gpu,
        Role::Rtsw,
        Role::Ctsw,
        Role::Atsw,
        Role::Rdsw,
        Role::Fdsw,
        Role::Sdsw,
        Role::Edsw,
        Role::Ftsw,
        Role::Stsw,
        Role::Bag,
        Role::Hub,
    ];

    /// Lower-case name, used in device names and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Gpu => "gpu",
            Role::Rtsw => "rtsw",
            Role::Ctsw => "ctsw",
            Role::Atsw => "atsw",
            Role::Rdsw => "rdsw",
            Role::Fdsw => "fdsw",
            Role::Sdsw => "sdsw",
            Role::Edsw => "edsw",
            Role::Ftsw => "ftsw",
            Role::Stsw => "stsw",
            Role::Bag => "bag",
            Role::Hub => "hub",
        }
    }

    /// True for every role but [`Role::Gpu`].
    pub fn is_switch(self) -> bool {
        self != Role::Gpu
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of a port, and so of the link attached to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum PortKind {
    /// GPU NIC <-> first switch.
    Host,
    /// Ethernet between switches.
    Ethernet,
    /// DSF cell-fabric SerDes link (106.25G), not Ethernet.
    Fabric,
}

impl PortKind {
    /// All kinds, in report order.
    pub const ALL: [PortKind; 3] = [PortKind::Host, PortKind::Ethernet, PortKind::Fabric];

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            PortKind::Host => "host",
            PortKind::Ethernet => "ethernet",
            PortKind::Fabric => "fabric",
        }
    }
}

/// Optic (or cable) class of a link, chosen from its length by [`Optic::for_length`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Optic {
    /// Passive copper, up to 3 m.
    Dac,
    /// Multimode short reach, up to 100 m.
    Sr,
    /// Single-mode parallel, up to 500 m.
    Dr,
    /// Single-mode CWDM, up to 2 km.
    Fr,
    /// Long reach, up to 10 km.
    Lr,
    /// Extended reach, up to 40 km.
    Er,
    /// Coherent (ZR/ZR+), beyond 40 km.
    Zr,
}

impl Optic {
    /// All optics, in report order.
    pub const ALL: [Optic; 7] = [
        Optic::Dac,
        Optic::Sr,
        Optic::Dr,
        Optic::Fr,
        Optic::Lr,
        Optic::Er,
        Optic::Zr,
    ];

    /// The cheapest class that reaches `length_m`. Reach limits are the IEEE 802.3 / MSA nominal
    /// reaches of the 400G/800G families (SR 100 m, DR 500 m, FR 2 km, LR 10 km, ER 40 km).
    pub fn for_length(length_m: f64) -> Optic {
        match length_m {
            l if l <= 3.0 => Optic::Dac,
            l if l <= 100.0 => Optic::Sr,
            l if l <= 500.0 => Optic::Dr,
            l if l <= 2_000.0 => Optic::Fr,
            l if l <= 10_000.0 => Optic::Lr,
            l if l <= 40_000.0 => Optic::Er,
            _ => Optic::Zr,
        }
    }

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Optic::Dac => "dac",
            Optic::Sr => "sr",
            Optic::Dr => "dr",
            Optic::Fr => "fr",
            Optic::Lr => "lr",
            Optic::Er => "er",
            Optic::Zr => "zr",
        }
    }
}

/// What tier of the network a zone is, i.e. which builder made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneKind {
    /// DSF single stage (RDSW / FDSW / EDSW).
    DsfL1,
    /// DSF dual stage (RDSW / FDSW / SDSW / EDSW).
    DsfL2,
    /// NSF (RTSW / FTSW / STSW).
    Nsf,
    /// RoCE AI zones under one ATSW layer (RTSW / CTSW / ATSW).
    Roce,
    /// Generic k-ary fat tree (Al-Fares et al., SIGCOMM 2008): edge = RTSW, aggregation = CTSW,
    /// core = ATSW.
    FatTree,
    /// The BAG layer of a region (or a hub).
    Bag,
}

impl ZoneKind {
    /// Snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ZoneKind::DsfL1 => "dsf_l1",
            ZoneKind::DsfL2 => "dsf_l2",
            ZoneKind::Nsf => "nsf",
            ZoneKind::Roce => "roce",
            ZoneKind::FatTree => "fat_tree",
            ZoneKind::Bag => "bag",
        }
    }
}
