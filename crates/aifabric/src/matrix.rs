//! A traffic matrix from its source (a file or a generator), checked before any engine runs:
//! sizes within range, no flows that can never start (a deadlocked trigger cycle), and the
//! GPUs it needs placed, with the file's line named when the fabric has too few.

use crate::{Error, Study, TrafficSource};
use aifabric_model::DeviceId;
use aifabric_workload::traffic::{self, Pattern, TrafficMatrix, MAX_FLOW_BYTES, MAX_MATRIX_BYTES};
use aifabric_workload::Placement;

/// The matrix of `source` and how to name it; a matrix whose triggers deadlock (flows that
/// can never start) is a runtime failure naming who waits on what, in either engine.
pub(crate) fn matrix(source: &TrafficSource, seed: u64) -> Result<(TrafficMatrix, String), Error> {
    let (tm, name) = match source {
        TrafficSource::File(path) => (
            traffic::load(path).map_err(Error::bad_request_from)?,
            path.clone(),
        ),
        TrafficSource::Pattern {
            pattern,
            gpus,
            bytes,
        } => {
            if *gpus < pattern.min_nodes() {
                return Err(Error::bad_request(format!(
                    "--pattern needs at least {} GPUs; raise --gpus",
                    pattern.min_nodes()
                )));
            }
            let n = pattern.flow_count(*gpus);
            if n > traffic::MAX_FLOWS as u64 {
                return Err(Error::bad_request(format!(
                    "the pattern makes {n} flows, over the limit of {}; use fewer GPUs",
                    traffic::MAX_FLOWS
                )));
            }
            if *bytes > MAX_FLOW_BYTES || n.saturating_mul(*bytes) > MAX_MATRIX_BYTES {
                return Err(Error::bad_request(format!(
                    "--size {bytes}: flows of at most {MAX_FLOW_BYTES} bytes (1 TiB), and at \
                     most {MAX_MATRIX_BYTES} bytes (1 EiB) in all ({n} flows); give a smaller \
                     size, like 1M"
                )));
            }
            (
                pattern.generate(*gpus, *bytes, seed),
                pattern_name(*pattern, *bytes),
            )
        }
    };
    if let Some(stall) = traffic::stalled(&tm) {
        return Err(Error::Runtime {
            message: format!("{name}: {stall}"),
            source: None,
        });
    }
    Ok((tm, name))
}

fn pattern_name(p: Pattern, bytes: u64) -> String {
    let kind = match p {
        Pattern::Permutation => "permutation".to_string(),
        Pattern::Incast(n) => format!("incast:{n}"),
        Pattern::AllToAll => "all-to-all".to_string(),
        Pattern::Random(n) => format!("random:{n}"),
        Pattern::RingAllReduce => return format!("ring-allreduce, {bytes} B per GPU"),
    };
    format!("{kind}, {bytes} B per flow")
}

impl Study<'_> {
    /// Place the `n` GPUs of matrix `tm` (read from `source`); when the fabric cannot hold
    /// them and the matrix came from a file, the refusal names the file's line that asks
    /// for too many: the first flow naming its highest node, or the `Nodes` line when the
    /// flows alone would fit.
    pub(crate) fn place_matrix(
        &self,
        source: &TrafficSource,
        tm: &TrafficMatrix,
        n: u32,
        policy: Placement,
        scale_up: u32,
    ) -> Result<Vec<DeviceId>, Error> {
        self.place(n, policy, scale_up).map_err(|e| match source {
            // Only when the count is the trouble: a fabric that places no GPUs at all (no
            // rack holds a scale-up domain) is not the file's fault.
            TrafficSource::File(path)
                if n == tm.nodes && self.place(n.min(2), policy, scale_up).is_ok() =>
            {
                let highest = tm.flows.iter().map(|f| f.src.max(f.dst)).max().unwrap_or(0);
                let flows_fit =
                    highest + 1 < n && self.place(highest + 1, policy, scale_up).is_ok();
                // A node no flow names: the `Nodes` line.
                let node = if flows_fit { u32::MAX } else { highest };
                match traffic::node_line(path, node) {
                    Some((line, what)) => e.prefixed(&format!(
                        "{path}:{line}: {what} is beyond the fabric (node numbers are GPU \
                         indices in placement order, 0 to GPUs - 1: renumber the flows, or \
                         use a larger fabric): "
                    )),
                    None => e.prefixed(&format!("{path}: ")),
                }
            }
            _ => e,
        })
    }
}
