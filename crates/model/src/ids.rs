//! Typed `u32` indices into the model's tables.
//!
//! Every entity in a [`crate::Fabric`] lives in a `Vec` and is named by its position there. The
//! newtypes keep a device index from being used as a link index by mistake; they cost nothing at
//! run time.

/// A typed `u32` index with a private inner value (`Clone`, `Copy`, ordered, hashed, serialized
/// as the number), for the model's tables and for other crates' own tables.
///
/// The value `u32::MAX` is reserved, so `Option<Id>` is as small as `Id` (4 bytes): "none" is
/// `None`, never a sentinel. Build one with `new(u32)` or `from_idx(usize)` (both panic on a
/// value that does not fit, which only a table of 2^32 - 1 entries could produce), read it with
/// `get()` or `idx()`.
#[macro_export]
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name($crate::__private::NonMaxU32);

        impl $name {
            /// The id with this value; panics on `u32::MAX`, which is reserved.
            #[inline]
            #[track_caller]
            pub const fn new(v: u32) -> Self {
                match $crate::__private::NonMaxU32::new(v) {
                    Some(v) => Self(v),
                    None => panic!(concat!(stringify!($name), ": u32::MAX is reserved")),
                }
            }

            /// The id of table position `i`; panics if `i` does not fit below `u32::MAX`.
            #[inline]
            #[track_caller]
            pub const fn from_idx(i: usize) -> Self {
                assert!(i < u32::MAX as usize, concat!(stringify!($name), ": index too large"));
                Self::new(i as u32)
            }

            /// The value.
            #[inline]
            pub const fn get(self) -> u32 {
                self.0.get()
            }

            /// The index as a `usize`, for indexing the table it points into.
            #[inline]
            pub const fn idx(self) -> usize {
                self.0.get() as usize
            }
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self.get())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_u32(self.get())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = <u32 as serde::Deserialize>::deserialize(d)?;
                $crate::__private::NonMaxU32::new(v).map(Self).ok_or_else(|| {
                    <D::Error as serde::de::Error>::custom(concat!(
                        stringify!($name),
                        ": u32::MAX is reserved"
                    ))
                })
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

id_type!(
    /// A named shared-risk group in [`crate::Fabric::srgs`].
    SrgId
);
