//! A phase's repeats chained as a pipelined collective runs them ([`chained`]): each node
//! sends its next repeat once it holds what it received in this one, as a ring's rank
//! forwards the chunk it has just received (NCCL's ring keeps every connection busy that
//! way), so that a packet run of a few repeats measures their pace as the whole collective
//! would, the ranks drifting apart, rather than every repeat started in lockstep.

use super::{Start, TmFlow, TrafficMatrix, TriggerKind};
use rustc_hash::FxHashMap;

/// `tm` (one phase, no triggers) repeated `repeats` times: the flows of repeat r are
/// `tm`'s flows `r * tm.flows.len() ..`, with the same ids (a repeat reuses its
/// connection, so under ECMP its path). Repeat 0 starts as `tm` does. In repeat r > 0 a
/// node's flows start when the node has received every flow it receives in repeat r - 1
/// (a barrier over them, fired when their last bytes are in), or, for a node that receives
/// nothing, when its own flows of repeat r - 1 are done. Trigger `r * nodes + n` is node
/// n's start of repeat r. With a `depth` D, a node that receives also waits for its own
/// flows of repeat r - D to be done (acknowledged): each connection carries at most D
/// repeats at once, as a receiver's bounded buffers hold its sender back (`None`: no bound,
/// htsim's `recv_done_trigger` chains). `None` when `tm` has triggers already, the depth is
/// 0 or the ids would overflow.
pub fn chained(tm: &TrafficMatrix, repeats: u32, depth: Option<u32>) -> Option<TrafficMatrix> {
    let nodes = tm.nodes;
    if !tm.triggers.is_empty()
        || tm.flows.iter().any(|f| {
            f.done_trigger.is_some()
                || f.recv_trigger.is_some()
                || matches!(f.start, Start::Trigger(_))
        })
        || depth == Some(0)
        || u64::from(repeats) * u64::from(nodes) > u64::from(u32::MAX)
    {
        return None;
    }
    let mut received = vec![0u32; nodes as usize];
    let mut sent = vec![0u32; nodes as usize];
    for f in &tm.flows {
        received[f.dst as usize] += 1;
        sent[f.src as usize] += 1;
    }
    let start_of = |r: u32, n: u32| r * nodes + n;
    let mut flows = Vec::with_capacity(tm.flows.len() * repeats as usize);
    let mut triggers = FxHashMap::default();
    for r in 0..repeats {
        let next = r + 1 < repeats;
        for f in &tm.flows {
            flows.push(TmFlow {
                start: if r == 0 {
                    f.start
                } else {
                    Start::Trigger(start_of(r, f.src))
                },
                // The receiver's next repeat, if it sends, waits on its receipts ...
                recv_trigger: (next && sent[f.dst as usize] > 0).then(|| start_of(r + 1, f.dst)),
                // ... and a node receiving nothing on its own sends; with a depth, a node
                // that receives on its own sends that many repeats back too.
                done_trigger: match (received[f.src as usize], depth) {
                    (0, _) => next.then(|| start_of(r + 1, f.src)),
                    (_, Some(d)) => r
                        .checked_add(d)
                        .filter(|&q| q < repeats)
                        .map(|q| start_of(q, f.src)),
                    (_, None) => None,
                },
                ..f.clone()
            });
        }
        if r > 0 {
            for n in 0..nodes {
                if sent[n as usize] > 0 {
                    let waits = match (received[n as usize], depth) {
                        (0, _) => sent[n as usize],
                        (k, Some(d)) if r >= d => k + sent[n as usize],
                        (k, _) => k,
                    };
                    triggers.insert(start_of(r, n), TriggerKind::Barrier(waits));
                }
            }
        }
    }
    Some(TrafficMatrix {
        nodes,
        flows,
        triggers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::Pattern;
    use proptest::prelude::*;

    /// A ring step chained: node i's repeat r starts on what node i - 1 sent it in repeat
    /// r - 1, as the ring all-reduce pattern starts its steps.
    #[test]
    fn a_ring_step_chained_is_the_ring_all_reduce() {
        let n = 5u32;
        let step = TrafficMatrix {
            nodes: n,
            flows: (0..n)
                .map(|i| TmFlow {
                    id: u64::from(i) + 1,
                    src: i,
                    dst: (i + 1) % n,
                    bytes: 100,
                    start: Start::AtPs(0),
                    done_trigger: None,
                    recv_trigger: None,
                })
                .collect(),
            triggers: FxHashMap::default(),
        };
        let steps = 2 * (n - 1);
        let c = chained(&step, steps, None).expect("chained");
        let ring = Pattern::RingAllReduce.generate(n, 500, 1);
        assert_eq!(c.flows.len(), ring.flows.len());
        for (a, b) in c.flows.iter().zip(&ring.flows) {
            assert_eq!((a.src, a.dst, a.bytes), (b.src, b.dst, b.bytes));
            // The same trigger structure: started at 0 or by a trigger, fired on receipt.
            assert_eq!(
                matches!(a.start, Start::AtPs(0)),
                matches!(b.start, Start::AtPs(0))
            );
            assert_eq!(a.recv_trigger.is_some(), b.recv_trigger.is_some());
            assert_eq!(a.done_trigger, None);
        }
        // Flow (r, i) fires the trigger flow (r + 1, i + 1) waits on.
        let m = n as usize;
        for (k, f) in c.flows.iter().enumerate().take(c.flows.len() - m) {
            let (r, i) = (k / m, k % m);
            let next = &c.flows[(r + 1) * m + (i + 1) % m];
            assert_eq!(f.recv_trigger.map(Start::Trigger), Some(next.start));
        }
        assert!(c.triggers.values().all(|&t| t == TriggerKind::Barrier(1)));
        // The ids repeat: a repeat reuses its connection.
        assert_eq!(c.flows[m].id, c.flows[0].id);
    }

    /// A matrix with triggers already is not chained.
    #[test]
    fn a_triggered_matrix_is_not_chained() {
        let ring = Pattern::RingAllReduce.generate(4, 400, 1);
        assert_eq!(chained(&ring, 2, None), None);
        assert_eq!(
            chained(&Pattern::Permutation.generate(4, 400, 1), 2, Some(0)),
            None
        );
        let one = Pattern::Permutation.generate(4, 400, 1);
        assert_eq!(chained(&one, 1, None).expect("one repeat").flows, one.flows);
    }

    proptest! {
        /// Every trigger of a chain fires exactly when its count of activations is met and
        /// every flow of a repeat past the first waits on one: activations counted from the
        /// flows equal each barrier's count, so every flow starts.
        #[test]
        fn every_chained_flow_starts(
            pairs in prop::collection::vec((0u32..6, 1u32..6), 1..20),
            repeats in 1u32..5,
            depth in prop::option::of(1u32..3),
        ) {
            let tm = TrafficMatrix {
                nodes: 6,
                flows: pairs
                    .iter()
                    .enumerate()
                    .map(|(k, &(s, d))| TmFlow {
                        id: k as u64 + 1,
                        src: s,
                        dst: (s + d) % 6,
                        bytes: 10,
                        start: Start::AtPs(0),
                        done_trigger: None,
                        recv_trigger: None,
                    })
                    .collect(),
                triggers: FxHashMap::default(),
            };
            let c = chained(&tm, repeats, depth).expect("chained");
            prop_assert_eq!(c.flows.len(), tm.flows.len() * repeats as usize);
            let mut fired: FxHashMap<u32, u32> = FxHashMap::default();
            for f in &c.flows {
                for t in f.recv_trigger.iter().chain(&f.done_trigger) {
                    *fired.entry(*t).or_default() += 1;
                }
            }
            for (t, kind) in &c.triggers {
                prop_assert_eq!(*kind, TriggerKind::Barrier(fired[t]));
            }
            for f in &c.flows {
                if let Start::Trigger(t) = f.start {
                    prop_assert!(c.triggers.contains_key(&t), "flow waits on trigger {}", t);
                }
            }
            prop_assert_eq!(fired.len(), c.triggers.len());
        }
    }
}
