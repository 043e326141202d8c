//! Flows that can never start: each waits on a trigger that only flows which never start
//! (or too few flows) fire, e.g. two flows each waiting on the other's completion. An engine
//! given such a matrix runs the others and reports the stalled flows as never started; the
//! facade refuses it up front instead, naming who waits on what.

use super::{Start, TrafficMatrix, TriggerKind};
use rustc_hash::FxHashMap;

/// Flows of a matrix that can never start, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stall {
    /// Flows in the matrix.
    pub flows: usize,
    /// Each stalled flow's id and the trigger it waits on, in file order.
    pub waiting: Vec<(u64, u32)>,
    /// Per trigger a stalled flow waits on: the ids of the flows that fire it (none of which
    /// completes, or too few for a barrier or a multishot) and how it fires.
    pub fired_by: Vec<(u32, TriggerKind, Vec<u64>)>,
}

/// Stalled flows listed in full; more are counted.
const SHOWN: usize = 8;

impl std::fmt::Display for Stall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "deadlock: {} of the {} flows can never start, each waiting on a trigger that only \
             flows which never complete fire:",
            self.waiting.len(),
            self.flows
        )?;
        for &(id, k) in self.waiting.iter().take(SHOWN) {
            let (kind, by) = self
                .fired_by
                .iter()
                .find(|(t, ..)| *t == k)
                .map(|(_, kind, by)| (*kind, by.as_slice()))
                .unwrap_or((TriggerKind::Oneshot, &[]));
            let by: Vec<String> = by.iter().take(SHOWN).map(u64::to_string).collect();
            let kind = match kind {
                TriggerKind::Oneshot => "oneshot".to_string(),
                TriggerKind::Multishot => "multishot".to_string(),
                TriggerKind::Barrier(n) => format!("barrier of {n}"),
            };
            write!(
                f,
                "\n  flow {id} waits on trigger {k} ({kind}), fired by flow(s) {}",
                by.join(", ")
            )?;
        }
        if self.waiting.len() > SHOWN {
            write!(f, "\n  ... and {} more", self.waiting.len() - SHOWN)?;
        }
        write!(
            f,
            "\n  hint: break the cycle: start one of these flows at a time (`start T`) instead \
             of on a trigger, or fire the trigger from a flow that starts"
        )
    }
}

/// The flows of `tm` that can never start, if any: the triggers are played out without
/// time (a started flow completes and activates its `send_done_trigger` and
/// `recv_done_trigger`; a oneshot starts all its waiters at its first activation, a barrier
/// of n at its n-th, a multishot its next waiter at each), as both engines run them.
pub fn stalled(tm: &TrafficMatrix) -> Option<Stall> {
    let n = tm.flows.len();
    // Waiters per trigger, in file order (a multishot starts them in that order).
    let mut waiters: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    let mut started = vec![false; n];
    let mut ready: Vec<usize> = Vec::new();
    for (i, f) in tm.flows.iter().enumerate() {
        match f.start {
            Start::AtPs(_) => {
                started[i] = true;
                ready.push(i);
            }
            Start::Trigger(k) => waiters.entry(k).or_default().push(i),
        }
    }
    if waiters.is_empty() {
        return None;
    }
    let mut activations: FxHashMap<u32, u32> = FxHashMap::default();
    let mut next_waiter: FxHashMap<u32, usize> = FxHashMap::default();
    while let Some(i) = ready.pop() {
        let f = &tm.flows[i];
        for k in [f.done_trigger, f.recv_trigger].into_iter().flatten() {
            let a = activations.entry(k).or_default();
            *a = a.saturating_add(1);
            let Some(ws) = waiters.get(&k) else { continue };
            let kind = tm.triggers.get(&k).copied().unwrap_or(TriggerKind::Oneshot);
            let wake: &[usize] = match kind {
                TriggerKind::Oneshot if *a == 1 => ws,
                TriggerKind::Barrier(b) if *a == b => ws,
                TriggerKind::Multishot => {
                    let next = next_waiter.entry(k).or_default();
                    let one = ws.get(*next..(*next + 1).min(ws.len())).unwrap_or(&[]);
                    *next += 1;
                    one
                }
                _ => &[],
            };
            for &w in wake {
                if !std::mem::replace(&mut started[w], true) {
                    ready.push(w);
                }
            }
        }
    }
    let waiting: Vec<(u64, u32)> = tm
        .flows
        .iter()
        .zip(&started)
        .filter(|(_, &s)| !s)
        .filter_map(|(f, _)| match f.start {
            Start::Trigger(k) => Some((f.id, k)),
            Start::AtPs(_) => None,
        })
        .collect();
    if waiting.is_empty() {
        return None;
    }
    let mut keys: Vec<u32> = waiting.iter().map(|&(_, k)| k).collect();
    keys.sort_unstable();
    keys.dedup();
    let fired_by = keys
        .into_iter()
        .map(|k| {
            let by = tm
                .flows
                .iter()
                .filter(|f| f.done_trigger == Some(k) || f.recv_trigger == Some(k))
                .map(|f| f.id)
                .collect();
            let kind = tm.triggers.get(&k).copied().unwrap_or(TriggerKind::Oneshot);
            (k, kind, by)
        })
        .collect();
    Some(Stall {
        flows: n,
        waiting,
        fired_by,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::parse_htsim;

    fn parse(body: &str) -> TrafficMatrix {
        parse_htsim("t.cm", &format!("Nodes 8\n{body}")).unwrap()
    }

    #[test]
    fn a_cycle_of_triggers_is_a_stall_naming_both_flows() {
        let tm = parse(
            "0->1 id 1 trigger 2 size 10 send_done_trigger 1\n\
             1->2 id 2 trigger 1 size 10 send_done_trigger 2\n\
             2->3 id 3 start 0 size 10\n",
        );
        let s = stalled(&tm).expect("a deadlock");
        assert_eq!(s.waiting, vec![(1, 2), (2, 1)]);
        let text = s.to_string();
        assert!(
            text.contains("flow 1 waits on trigger 2 (oneshot), fired by flow(s) 2"),
            "{text}"
        );
        assert!(text.contains("2 of the 3 flows"), "{text}");
    }

    #[test]
    fn chains_barriers_and_multishots_that_fire_enough_do_not_stall() {
        let tm = parse(
            "0->1 id 1 start 0 size 10 send_done_trigger 1\n\
             1->2 id 2 trigger 1 size 10 recv_done_trigger 2\n\
             2->3 id 3 start 5 size 10 send_done_trigger 2\n\
             3->4 id 4 trigger 2 size 10\n\
             trigger id 2 barrier count 2\n",
        );
        assert_eq!(stalled(&tm), None);
        let ring = crate::traffic::Pattern::RingAllReduce.generate(6, 1 << 20, 1);
        assert_eq!(stalled(&ring), None);
    }

    #[test]
    fn a_barrier_counting_more_than_its_firers_stalls() {
        let tm = parse(
            "0->1 id 1 start 0 size 10 send_done_trigger 1\n\
             1->2 id 2 trigger 1 size 10\n\
             trigger id 1 barrier count 2\n",
        );
        assert_eq!(stalled(&tm).map(|s| s.waiting), Some(vec![(2, 1)]));
    }

    #[test]
    fn a_multishot_starts_one_waiter_per_activation() {
        let tm = parse(
            "0->1 id 1 start 0 size 10 send_done_trigger 1\n\
             1->2 id 2 trigger 1 size 10\n\
             2->3 id 3 trigger 1 size 10\n\
             trigger id 1 multishot\n",
        );
        assert_eq!(stalled(&tm).map(|s| s.waiting), Some(vec![(3, 1)]));
    }
}
