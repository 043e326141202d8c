//! Hashes every engine seeds its choices with.

use aifabric_model::DeviceId;

/// SplitMix64's finalizer (Steele, Lea and Flood, OOPSLA 2014): a cheap, well-mixed hash.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The hash of a flow: its endpoints and queue pair (what an RoCE 5-tuple varies by: the
/// UDP source port follows the QP).
pub fn flow_hash(src: DeviceId, dst: DeviceId, qp: u32) -> u64 {
    mix((u64::from(src.get()) << 32 | u64::from(dst.get())) ^ mix(u64::from(qp)))
}
