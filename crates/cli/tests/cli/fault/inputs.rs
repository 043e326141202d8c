//! Inputs without end: `/dev/zero` wherever a file is read is refused at a size limit.

use super::common::refused;
use std::time::Duration;

/// A sweep file of the examples (a shard is checked against it).
const SWEEP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/sweeps/prometheus-drains.yaml"
);

#[test]
fn endless_inputs_are_refused_at_the_limit() {
    for args in [
        &["build", "/dev/zero"][..],
        &["traffic", "htsim-k8", "--tm", "/dev/zero"],
        &["failures", "htsim-k8", "--scenario", "/dev/zero"],
        &["job", "htsim-k8", "--job", "/dev/zero"],
        &["sweep", "/dev/zero"],
        &["sweep", "merge", SWEEP, "/dev/zero"],
    ] {
        refused(args, Duration::from_secs(20), &["input limit"]);
    }
}
