//! The sentences that explain a result's numbers ([`Note`]s), computed from the results: what
//! the CLI prints beside a table, and what JSON and Python users read in `notes`.

use crate::fabrics::BagRun;
use crate::report::{About, Crossing, Note};
use aifabric_chakra::replay::Replay;
use aifabric_dataplane::WeightDifferences;
use aifabric_engine::job::StepResult;
use aifabric_engine::traffic::TrafficResult;
use aifabric_model::thousands;
use aifabric_packet::{PacketResult, PfcResult};

/// A flow-engine traffic run: flows that load balancing cannot move, flows never started.
pub(crate) fn traffic(x: &TrafficResult) -> Vec<Note> {
    let mut v = Vec::new();
    if x.flows > 0 && x.lb_free_flows == x.flows {
        v.push(Note::new(
            About::Lb,
            "every flow stays inside one scale-up domain, rack switch or DSF zone (whose cells \
             are sprayed whatever the mode): --lb cannot change these results; place GPUs \
             across zones or buildings (more --gpus, --placement spread) to compare modes"
                .to_owned(),
        ));
    }
    if x.never_started > 0 {
        v.push(Note::new(
            About::Run,
            format!(
                "{} flows never completed (waiting on a trigger that never fired)",
                x.never_started
            ),
        ));
    }
    v.extend(coalesced(x));
    v
}

/// A flow-engine traffic run whose starts and finishes were coalesced (the fluid's
/// tolerance): how many, and what it costs in accuracy.
pub(crate) fn coalesced(x: &TrafficResult) -> Option<Note> {
    let eps = aifabric_engine::traffic::FLUID_TOLERANCE * 100.0;
    (x.coalesced_events > 0).then(|| {
        Note::new(
            About::Run,
            format!(
                "fluid: {} starts and finishes closer than {eps}% of the elapsed time to a \
                 neighbour shared its re-solve; completion times are within about {eps}% of \
                 re-solving at every one",
                x.coalesced_events
            ),
        )
    })
}

/// A packet run: the retransmission timer raised for long paths, flows cut off or never
/// started, timeouts that were not losses, PFC's hidden causes. `ratios`: whether the flow engine ran beside it (`both`).
pub(crate) fn packet(x: &PacketResult, ratios: bool) -> Vec<Note> {
    let c = &x.config;
    let mut v = Vec::new();
    if let Some(h) = &x.hybrid {
        v.push(Note::new(About::Hybrid, hybrid(h, x.makespan_s)));
    }
    if let Some(d) = x.dsf.as_ref().filter(|_| c.dsf_whole_packets()) {
        v.push(Note::new(
            About::Hybrid,
            format!(
                "hybrid: {} packets crossed a DSF fabric whole, one cell each (the packet \
                 engine cuts {} B cells), each holding its fabric link for all its bytes and \
                 across a hop when its cells would be; fabric queue peaks count whole packets",
                aifabric_model::thousands(d.cells_sent),
                d.settings.cell_bytes
            ),
        ));
    }
    if let Some(p) = &x.partitions {
        v.push(Note::new(About::Partitions, partitions(p, c.partitions)));
    }
    if x.max_rto_s * 1e12 > c.rto_ps as f64 + 0.5 {
        v.push(Note::new(
            About::Rto,
            format!(
                "at least twice each flow's base round trip: up to {:.3} us",
                x.max_rto_s * 1e6
            ),
        ));
    }
    if x.never_started > 0 || x.unfinished > 0 {
        v.push(Note::new(
            About::Run,
            format!(
                "{} flows never started (waiting on a trigger that never fired), {} unfinished when the run stopped at {:.3} us (--end-us); the times below are of the flows that completed{}",
                x.never_started,
                x.unfinished,
                c.end_ps as f64 * 1e-12 * 1e6,
                if ratios { ", and no ratios are given" } else { "" }
            ),
        ));
    }
    // A timeout is a presumed loss: more of them than packets lost means the timer fired
    // on packets still waiting (a DSF VOQ, a deep or paused queue); said when it is more
    // than 1% of the packets.
    let k = &x.counters;
    if k.timeouts > k.dropped && (k.timeouts - k.dropped) * 100 > k.data_new {
        v.push(Note::new(
            About::Packets,
            format!(
                "{} of the {} timeouts fired for packets that were not lost ({} dropped): the retransmission timer ({:.3} us at the least) is shorter than packets wait here (DSF VOQs, deep or paused queues), and each resend adds load; raise --rto-us{}",
                k.timeouts - k.dropped,
                k.timeouts,
                k.dropped,
                c.rto_ps as f64 * 1e-6,
                if x.dsf.is_some() {
                    " (DSF zones hold an incast in their VOQs by design: e.g. --cc line-rate --rto-us 10000)"
                } else {
                    ""
                }
            ),
        ));
    }
    if let Some(p) = &x.pfc {
        let xon = c.pfc.map_or(0, |c| c.xon_bytes);
        v.extend(pfc(p, xon).into_iter().map(|t| Note::new(About::Pfc, t)));
    }
    v
}

/// How a partitioned run went, and why it took fewer parts than `asked` or one window.
fn partitions(p: &aifabric_packet::PartitionStats, asked: u32) -> String {
    if p.parts == 1 {
        return format!(
            "not cut ({asked} parts asked): the traffic's hosts hang off one rack switch (or \
             one DSF zone), and a part takes at least one; it ran as one part (as --partitions 1 would)"
        );
    }
    let per: Vec<String> = p.events_per_part.iter().map(|&e| thousands(e)).collect();
    let fewer = if p.parts < asked {
        format!(
            " ({asked} asked: the traffic's hosts hang off {} rack switches or DSF zones, a \
             part takes at least one)",
            p.parts
        )
    } else {
        String::new()
    };
    let windows = match p.lookahead_s {
        Some(l) => format!(
            "in {} windows of {:.3} us (the shortest link between parts), {} packets and PFC \
             frames between them",
            p.windows,
            l * 1e6,
            p.messages
        ),
        None => "in one window: no link of the traffic joins two parts".to_owned(),
    };
    format!(
        "cut into {} parts{fewer} run side by side on the cores {windows}, events per part {}: \
         the same result at any thread count; a sample of the model as valid as one part's, \
         not the same one (each part draws its own random numbers); the run ends with the \
         window in which its last flow completes",
        p.parts,
        per.join(" / ")
    )
}

/// What a PFC run's numbers mean when they hide a cause: links without the headroom a
/// PAUSE needs (and the drops they caused), and paused ports whose XON (`xon`) is below
/// their link's round trip.
fn pfc(p: &PfcResult, xon: u64) -> Vec<String> {
    let mut v = Vec::new();
    let short = (p.ports_short_of_headroom > 0).then(|| {
        format!(
            "{} links hold less headroom than a PAUSE needs on them (the least {:.0}%, at {})",
            p.ports_short_of_headroom,
            p.min_headroom_share * 100.0,
            p.min_headroom_switch.as_deref().unwrap_or("?")
        )
    });
    if p.headroom_drops > 0 {
        v.push(format!(
            "{} data packets found their link's headroom full and were dropped, each resent after the retransmission timer{}: give each link its need (`--pfc-headroom auto`), or use deeper buffers or shorter cables (see `aifabric buffers`)",
            p.headroom_drops,
            short.map_or(String::new(), |s| format!("; {s}"))
        ));
    } else {
        if let Some(s) = short {
            v.push(format!(
                "{s}; nothing was dropped in this run, a heavier one may drop"
            ));
        }
        if p.paused_ports_xon_below_round_trip > 0 {
            v.push(format!(
                "{} paused ports have XON ({xon} B) below what their link carries in a PAUSE round trip (up to {:.1} MB): after a RESUME the data held downstream may drain before new data arrives; where nothing else feeds that egress (one long link into a receiver) it idles, and an XON near the round trip (`--pfc XOFF:XON`, within the buffer) keeps it busy",
                p.paused_ports_xon_below_round_trip,
                p.max_round_trip_bytes as f64 / 1e6
            ));
        }
    }
    v
}

/// What of the scenario a prediction's (`what`: `collective`, `job`, `replay`) traffic
/// crosses; when nothing, that the scenario cannot change it.
pub(crate) fn crossing(c: &Crossing, what: &str) -> Note {
    Note::new(
        About::Crossing,
        if c.crossed == 0 {
            format!(
                "the scenario takes out {} links and this {what}'s traffic crosses none of them \
                 (on the healthy fabric): it cannot change this {what}",
                c.links_out
            )
        } else {
            format!(
                "the scenario takes out {} links; this {what}'s traffic crosses {} of them (e.g. {})",
                c.links_out,
                c.crossed,
                c.examples.join(", ")
            )
        },
    )
}

/// Why a slowdown of 1 is one: said when the scenario takes out links the traffic used (or
/// nothing says what it crosses), so that a failure changing nothing is not silent.
fn unchanged(slowdown: Option<f64>, crossing: Option<&Crossing>) -> bool {
    slowdown.is_some_and(|x| (x - 1.0).abs() < 1e-9) && crossing.is_none_or(|c| c.crossed > 0)
}

/// A job's step: no collective got slower although the scenario crosses its traffic.
pub(crate) fn job(
    s: &StepResult,
    slowdown: Option<f64>,
    crossing: Option<&Crossing>,
) -> Option<Note> {
    if !unchanged(slowdown, crossing) {
        return None;
    }
    let mut tiers: Vec<&str> = s
        .comms
        .iter()
        .filter_map(|c| c.detail.bottlenecks.first().map(|b| b.tier.as_str()))
        .collect();
    tiers.sort_unstable();
    tiers.dedup();
    Some(Note::new(
        About::Slowdown,
        format!(
            "no collective got slower: the scenario may move paths, but each collective's \
             busiest links ({}) carry the same load as on the healthy fabric",
            tiers.join(", ")
        ),
    ))
}

/// A replay: nothing it times got slower; node starts bounded by its window.
pub(crate) fn replay(r: &Replay, slowdown: Option<f64>, crossing: Option<&Crossing>) -> Vec<Note> {
    let mut v = Vec::new();
    if unchanged(slowdown, crossing) {
        v.push(Note::new(
            About::Slowdown,
            "nothing the trace times got slower: its collectives and transfers keep the load \
             of their busiest links"
                .to_owned(),
        ));
    }
    if r.window_bound > 0 {
        v.push(Note::new(
            About::Run,
            format!(
                "{} node starts were bounded by the replay window (dependencies on nodes it \
                 forgot); raise --window for exact times",
                r.window_bound
            ),
        ));
    }
    v
}

/// Where `ecmp` and `ucmp` can differ on the routes a collective used.
pub(crate) fn weights(w: &WeightDifferences) -> Note {
    let n = w.switches_with_choice;
    let text = if n == 0 {
        "no switch has a choice of next-hop links toward these GPUs' racks, so ecmp and ucmp \
         take the same links"
            .to_owned()
    } else {
        let choice = if n == 1 {
            "1 switch".to_owned()
        } else {
            format!("{n} switches")
        };
        match w.switches_unequal {
            0 => format!(
                "BGP's link-bandwidth weights are equal per live link at all {choice} with a \
                 choice of next hops toward these GPUs' racks: ecmp and ucmp split alike here"
            ),
            u => format!(
                "BGP's link-bandwidth weights (ucmp, spray) are not equal per live link (ecmp, \
                 eecmp) at {u} of the {choice} with a choice of next hops toward these GPUs' \
                 racks{} (`aifabric routes` shows them); ecmp and ucmp can differ only where \
                 the traffic passes those",
                w.example
                    .as_deref()
                    .map_or(String::new(), |e| format!(", e.g. {e}"))
            ),
        }
    };
    Note::new(About::Weights, text)
}

/// Notes under the BAG table: which rows agree and why, and where throughput is lost
/// without a drop.
pub(crate) fn bag(bag: &[BagRun]) -> Vec<Note> {
    let mut v = Vec::new();
    let (mut alike, mut alike_short) = (Vec::new(), Vec::new());
    for (i, a) in bag.iter().enumerate() {
        for b in &bag[i + 1..] {
            if a.km == b.km && a.buffer != b.buffer && a.result.makespan_s == b.result.makespan_s {
                let held = |r: &BagRun| {
                    r.result
                        .pfc
                        .as_ref()
                        .is_none_or(|p| p.ports_short_of_headroom == 0)
                };
                let dropped =
                    |r: &BagRun| r.result.pfc.as_ref().is_some_and(|p| p.headroom_drops > 0);
                if held(a) && held(b) {
                    alike.push(a.km.to_string());
                } else if !dropped(a) && !dropped(b) {
                    alike_short.push(a.km.to_string());
                }
            }
        }
    }
    if !alike.is_empty() {
        v.push(format!(
            "at {} km deep and shallow are alike: both buffers hold every port's headroom, so PFC acts the same; the buffer's depth matters only once the headroom outgrows it",
            alike.join(" and ")
        ));
    }
    if !alike_short.is_empty() {
        v.push(format!(
            "at {} km deep and shallow are alike although a link holds less headroom than a PAUSE needs: nothing was dropped, so what these runs put above XOFF fit in what it holds",
            alike_short.join(" and ")
        ));
    }
    // Cases short of headroom, those with the same cause and count on one line.
    let mut short: Vec<(String, Vec<String>)> = Vec::new();
    for b in bag {
        if let Some(p) = b.result.pfc.as_ref().filter(|p| p.headroom_drops > 0) {
            let why = format!(
                "{}% of the headroom a PAUSE needs at {} (the least), so {} packets that arrived after a PAUSE were dropped, each waiting out the retransmission timer",
                (p.min_headroom_share * 100.0).round(),
                p.min_headroom_switch.as_deref().unwrap_or("?"),
                p.headroom_drops
            );
            let case = format!("{} km {}", b.km, b.buffer);
            match short.iter_mut().find(|s| s.0 == why) {
                Some(s) => s.1.push(case),
                None => short.push((why, vec![case])),
            }
        }
    }
    for (why, cases) in short {
        v.push(format!("{}: {why}", cases.join(", ")));
    }
    let lost: Vec<&BagRun> = bag
        .iter()
        .filter(|b| {
            b.throughput_kept < 0.95
                && b.result.pfc.as_ref().is_some_and(|p| {
                    p.headroom_drops == 0 && p.paused_ports_xon_below_round_trip > 0
                })
        })
        .collect();
    if let Some(first) = lost.first() {
        let round_trip = lost
            .iter()
            .filter_map(|b| b.result.pfc.as_ref())
            .map(|p| p.max_round_trip_bytes)
            .max()
            .unwrap_or(0);
        v.push(format!(
            "throughput lost without a drop ({}): XON ({} B) is below what a paused link carries in a PAUSE round trip (up to {:.1} MB), and all of the receiver's data crosses those links, so each RESUME can leave its queue dry until data comes back; thresholds near the round trip (`--bag-pfc XOFF:XON`, within the buffer) recover it",
            lost.iter()
                .map(|b| format!("{} km {}", b.km, b.buffer))
                .collect::<Vec<_>>()
                .join(", "),
            first.result.config.pfc.map_or(0, |c| c.xon_bytes),
            round_trip as f64 / 1e6
        ));
    }
    v.into_iter().map(|t| Note::new(About::Bag, t)).collect()
}

/// What the hybrid engine skipped, in words.
fn hybrid(h: &aifabric_packet::HybridStats, makespan_s: f64) -> String {
    match &h.not_skipped {
        Some(why) => format!(
            "hybrid: every packet simulated ({why}; monitor window {:.3} us)",
            h.window_s * 1e6
        ),
        None => {
            let all = (h.skipped_packets + h.simulated_packets).max(1);
            format!(
                "hybrid: {} fast-forwarded, {:.3} us of the {:.3} us makespan \
                 ({:.0}%); {} of {} data packets counted at their flow's measured rate, not \
                 simulated ({:.0}%; monitor window {:.3} us)",
                match h.skips {
                    1 => "1 steady state".to_owned(),
                    n => format!("{n} steady states"),
                },
                h.skipped_s * 1e6,
                makespan_s * 1e6,
                100.0 * h.skipped_s / makespan_s.max(f64::MIN_POSITIVE),
                h.skipped_packets,
                all,
                100.0 * h.skipped_packets as f64 / all as f64,
                h.window_s * 1e6
            )
        }
    }
}

/// The hybrid's cut of a traffic matrix: what ran packet by packet, what the fluid timed.
pub(crate) fn traffic_cut(c: &crate::packet::TrafficCut) -> Note {
    let alike = if c.flows_critical_fluid > 0 {
        format!(
            " ({} more critical flows, all ending together in the fluid, left to it: the {} \
             simulated stand for them)",
            aifabric_model::thousands(c.flows_critical_fluid),
            crate::packet::critical::MAX_SEEDS
        )
    } else {
        String::new()
    };
    Note::new(
        About::Hybrid,
        format!(
            "hybrid cut: {} flows ran packet by packet, the {} critical ones (the fluid \
             finishes them within {:.0}% of the slowest){alike}, {} samples of the fluid's \
             levels and every flow sharing a link with one; {} flows left to the fluid, each \
             at its fluid completion time (its bytes at the fluid's fair shares, then its \
             path's base round trip) times what the packet engine made of the samples at its \
             level, in the completion times and the makespan below; the slowest flows listed \
             and the queue, link and packet figures are the simulated part's",
            aifabric_model::thousands(c.flows_simulated),
            aifabric_model::thousands(c.flows_critical),
            100.0 * crate::packet::critical::WITHIN,
            aifabric_model::thousands(c.flows_sampled),
            aifabric_model::thousands(c.flows_fluid),
        ),
    )
}

/// A collective or a job at packet level: what was simulated, what reused, and how the
/// packet engine's bandwidth terms compare with the fluid's.
pub(crate) fn packet_phases(p: &crate::packet::PacketPhases) -> Note {
    let reused = p.phases_timed.saturating_sub(p.phases_simulated);
    let ratio = p.packet_over_fluid().map_or_else(String::new, |r| {
        format!(
            "; their bandwidth terms are {:.3}x the flow engine's ({:.3} us against {:.3} us)",
            r,
            p.packet_bandwidth_s * 1e6,
            p.fluid_bandwidth_s * 1e6
        )
    });
    let skipped = match (p.engine, &p.not_skipped) {
        (crate::Engine::Hybrid, Some(why)) if p.skipped_s == 0.0 => {
            format!(", none of it fast-forwarded: {why}")
        }
        (crate::Engine::Hybrid, _) => format!(
            ", {:.3} us of them fast-forwarded over steady states ({:.0}%)",
            p.skipped_s * 1e6,
            100.0 * p.skipped_s / p.simulated_s.max(f64::MIN_POSITIVE)
        ),
        _ => String::new(),
    };
    let alike = format!(
        "critical (the fluid finishes them within {:.0}% of their phase's slowest, all at \
         once: {} of each phase stand for them)",
        100.0 * crate::packet::critical::WITHIN,
        crate::packet::critical::MAX_SEEDS,
    );
    let cut = if p.flows_critical_fluid > 0 && p.flows_critical_fluid == p.flows_left_fluid {
        format!(
            "; {} flows left to the fluid, all {alike}; the {} critical flows simulated ran \
             packet by packet with every flow on their links",
            aifabric_model::thousands(p.flows_left_fluid),
            aifabric_model::thousands(p.flows_critical),
        )
    } else if p.flows_critical_fluid > 0 {
        format!(
            "; {} flows left to the fluid: {} {alike} and {} sharing no link with the {} \
             critical flows simulated, which ran packet by packet with every flow on their \
             links",
            aifabric_model::thousands(p.flows_left_fluid),
            aifabric_model::thousands(p.flows_critical_fluid),
            aifabric_model::thousands(p.flows_left_fluid - p.flows_critical_fluid),
            aifabric_model::thousands(p.flows_critical),
        )
    } else if p.flows_left_fluid > 0 {
        format!(
            "; {} flows left to the fluid: they share no link with the {} critical flows \
             (those the fluid finishes within {:.0}% of their phase's slowest) nor with the \
             {} samples of the fluid's levels, which ran packet by packet with every flow on \
             their links; each left-out flow's completion time is its fluid time times what \
             the packet engine made of the samples at its level",
            aifabric_model::thousands(p.flows_left_fluid),
            aifabric_model::thousands(p.flows_critical),
            100.0 * crate::packet::critical::WITHIN,
            aifabric_model::thousands(p.flows_sampled),
        )
    } else if p.engine == crate::Engine::Hybrid && p.flows_critical > 0 {
        format!(
            "; every flow ran packet by packet: each shares a link with one of the {} \
             critical flows",
            aifabric_model::thousands(p.flows_critical)
        )
    } else if p.engine == crate::Engine::Hybrid {
        "; every flow ran packet by packet: under this load balancing each packet's path is \
         chosen as it runs, and the fluid cuts a phase to its critical flows under ecmp only"
            .to_string()
    } else {
        String::new()
    };
    let fcts = p.fct.as_ref().map_or_else(String::new, |f| {
        format!(
            "; flow completion times, each phase's flows from its start and counted per \
             repeat (a collective's at its last size; {} flows{}): P50 {:.3} us, P99 {:.3} \
             us, slowest {:.3} us",
            aifabric_model::thousands(f.flows),
            if f.flows_fluid > 0 {
                format!(
                    ", {} of them the fluid's",
                    aifabric_model::thousands(f.flows_fluid)
                )
            } else {
                String::new()
            },
            f.p50_s * 1e6,
            f.p99_s * 1e6,
            f.max_s * 1e6
        )
    });
    let repeats = if p.phases_chained > 0 {
        format!(
            "{} repeated phase{} also run as a chain of {} first repeats, up to {} (each rank \
             sending the next repeat once it holds what it received, as a pipelined ring \
             does): the chain's time counts for those repeats, and what it added beyond the \
             one run, per repeat, for each later one; the flows' times are the chain's after \
             its first repeat",
            p.phases_chained,
            if p.phases_chained == 1 { "" } else { "s" },
            if p.phases_chained == 1 {
                "its"
            } else {
                "their"
            },
            crate::packet::CHAIN_REPEATS,
        )
    } else {
        "each phase's repeats counted from its one run".to_string()
    };
    Note::new(
        About::PacketPhases,
        format!(
            "{}: {} distinct phase{} simulated packet by packet ({} flows, {} events, {:.3} us \
             simulated{skipped}{cut}), {} phase{} reusing them, {repeats}{ratio}; steps compose \
             as in the flow engine (repeats, per-step and path latencies), NVLink transfers \
             stay fluid{fcts}",
            p.engine,
            p.phases_simulated,
            if p.phases_simulated == 1 { "" } else { "s" },
            aifabric_model::thousands(p.flows),
            aifabric_model::thousands(p.events),
            p.simulated_s * 1e6,
            reused,
            if reused == 1 { "" } else { "s" },
        ),
    )
}
