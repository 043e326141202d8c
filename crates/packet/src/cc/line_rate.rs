//! No congestion control: the NIC sends at line rate whatever the network does.

use super::Law;

/// A line-rate sender: every default of [`Law`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LineRate;

impl Law for LineRate {}
