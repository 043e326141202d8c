//! Typed `u32` indices into the model's tables.
//!
//! Every entity in a [`crate::Fabric`] lives in a `Vec` and is named by its position there. The
//! newtypes keep a device index from being used as a link index by mistake; they cost nothing at
//! run time.

/// A typed `u32` index (`Clone`, `Copy`, ordered, hashed, serialized as the number) with
/// `idx()` for indexing; other crates name their own tables' ids with it.
#[macro_export]
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash,
            serde::Serialize, serde::Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The index as a `usize`, for indexing the table it points into.
            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A device: a GPU NIC or a switch.
    DeviceId
);
id_type!(
    /// One physical link (one lane group between two ports).
    LinkId
);
id_type!(
    /// A bundle of parallel links between the same two devices (or a hyperport).
    BundleId
);
id_type!(
    /// A region (a BAG layer and the buildings under it).
    RegionId
);
id_type!(
    /// A data-center building.
    BuildingId
);
id_type!(
    /// A zone: an L2 fabric (DSF, NSF, RoCE) or the BAG layer of a region.
    ZoneId
);
id_type!(
    /// A hardware model in the [`crate::Catalog`].
    HwId
);
id_type!(
    /// A power-distribution domain: devices that lose power together.
    PowerDomainId
);

/// Sentinel for "not applicable" in compact `u16` fields (plane, data hall).
pub const NONE_U16: u16 = u16::MAX;
