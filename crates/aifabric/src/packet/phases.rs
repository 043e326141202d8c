//! Collectives and jobs at packet level: every distinct phase of their schedules (one step
//! of every group at once) run by the packet engine, memoized, and composed as the flow
//! engine composes its own phases ([`aifabric_engine::sim::PhaseTimer`]).
//!
//! A ring all-reduce is one phase repeated 2(n - 1) times, a training step the same
//! collectives layer after layer: each distinct phase is simulated packet by packet once,
//! all its flows started together, and its bandwidth term (the makespan beyond the longest
//! base round trip: the time its bytes took through the queues) is reused wherever it comes
//! again. Wormhole (NSDI 2026) memoizes repeated states of a packet simulation the same
//! way; here the repeated unit is the collective's own step, known before the run.

use crate::packet::budget;
use aifabric_dataplane::Net;
use aifabric_engine::sim::{NetTransfer, PhaseTimer, SimError};
use aifabric_model::limits::{self, human_bytes};
use aifabric_model::{thousands, DeviceId};
use aifabric_packet::{Config, PacketError, PacketLb, PacketResult};
use aifabric_workload::traffic::{Start, TmFlow, TrafficMatrix};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What the packet engine ran for a collective or a job: distinct phases simulated, the
/// phases that reused them, and how their bandwidth terms compare with the fluid's.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PacketPhases {
    /// `packet` or `hybrid` (the packet engine fast-forwarding steady states).
    pub engine: crate::Engine,
    /// Distinct phases the packet engine simulated (a phase asked for once and, elsewhere,
    /// repeated counts twice: its runs differ, one of them chained).
    pub phases_simulated: u64,
    /// Of them, repeated phases also run as a chain of their first [`CHAIN_REPEATS`]
    /// repeats (not under `ecmp`): each repeat's pace is taken from it.
    pub phases_chained: u64,
    /// Phases whose time was asked for (each phase of each simulated schedule once; its
    /// repetitions are its `repeat`); those not simulated reused a simulated one.
    pub phases_timed: u64,
    /// Flows the packet runs simulated, each phase's once (a chain runs them once per
    /// repeat).
    pub flows: u64,
    /// Hybrid: flows of the simulated phases left to the fluid (under `ecmp`, those that
    /// share no link with a flow the fluid finishes within a tenth of its phase's slowest;
    /// see the README's hybrid section).
    pub flows_left_fluid: u64,
    /// Hybrid: of the flows simulated, the critical ones (those the fluid finishes within
    /// a tenth of their phase's slowest); the others share a link with one.
    pub flows_critical: u64,
    /// Hybrid: of the flows simulated, those run as samples of their fluid levels with
    /// their links' flows (4 per level holding 2% of a phase's flows and 16 or more): the left
    /// out flows' completion times are taken from them (`fct`).
    pub flows_sampled: u64,
    /// Hybrid: critical flows left to the fluid (counted in `flows_left_fluid`): beyond
    /// each phase's slowest few in the fluid, which stand for them (an even phase's flows
    /// all end together in the fluid; see the README's hybrid section).
    pub flows_critical_fluid: u64,
    /// Data packets the packet runs simulated, chains included (sent for the first time;
    /// those the hybrid fast-forwarded are not counted).
    pub packets: u64,
    /// Events the packet runs processed, chains included.
    pub events: u64,
    /// Simulated time of the packet runs, chains included, seconds (real clock).
    pub simulated_s: f64,
    /// Of which fast-forwarded over steady states (hybrid), seconds.
    pub skipped_s: f64,
    /// Hybrid: why a phase was simulated whole, packet by packet (the first such phase's
    /// reason), when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_skipped: Option<String>,
    /// The simulated phases' bandwidth terms at packet level, summed, seconds.
    pub packet_bandwidth_s: f64,
    /// The same phases' bandwidth terms in the fluid, summed, seconds.
    pub fluid_bandwidth_s: f64,
    /// Flow completion times over the flows of every phase timed, each phase's flows
    /// counted as many times as its schedule repeats it: a collective's at its last (the
    /// largest) size, a job's collectives each once, not per their count in the step
    /// (`None`: no phase ran). Flows the hybrid's cut left to the fluid count at their
    /// fluid times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct: Option<PhaseFcts>,
}

/// Flow completion times of the phases a collective or a job ran at packet level, each
/// from its phase's start (all its flows start together).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PhaseFcts {
    /// Flows counted (each phase's flows times its repeats).
    pub flows: u64,
    /// Of which left to the fluid by the hybrid's cut.
    pub flows_fluid: u64,
    /// Median, seconds.
    pub p50_s: f64,
    /// 99th percentile, seconds.
    pub p99_s: f64,
    /// Slowest, seconds.
    pub max_s: f64,
}

impl PhaseFcts {
    /// The percentiles of `runs`: per run, its flows' completion times (ascending), how
    /// many of them the fluid timed, how many times it counts and how many repeats of its
    /// phase its flows are (each flow weighing `count / repeats`); the first flow at or
    /// past `q` of the weight for quantile `q`, as the packet engine ranks a run's own
    /// (the `ceil(q n)`-th flow when every weight is 1).
    fn of(runs: &[Fcts<'_>]) -> Option<PhaseFcts> {
        let mut all: Vec<(f64, f64)> = runs
            .iter()
            .filter(|r| r.count > 0 && r.repeats > 0)
            .flat_map(|r| {
                let w = r.count as f64 / r.repeats as f64;
                r.fct_s.iter().map(move |&t| (t, w))
            })
            .collect();
        let weight = |r: &Fcts<'_>, n: u64| (n * r.count).checked_div(r.repeats).unwrap_or(0);
        let flows: u64 = runs.iter().map(|r| weight(r, r.fct_s.len() as u64)).sum();
        if flows == 0 || all.is_empty() {
            return None;
        }
        all.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let total: f64 = all.iter().map(|x| x.1).sum();
        let rank = |q: f64| {
            // The rank in flows, at least the first; a hair under it counts (sums of
            // fractional weights).
            let r = (q * total).ceil().max(1.0).min(total) * (1.0 - 1e-12);
            let mut seen = 0.0;
            all.iter()
                .find(|x| {
                    seen += x.1;
                    seen >= r
                })
                .map_or(0.0, |x| x.0)
        };
        Some(PhaseFcts {
            flows,
            flows_fluid: runs.iter().map(|r| weight(r, r.fluid)).sum(),
            p50_s: rank(0.5),
            p99_s: rank(0.99),
            max_s: all.last().map_or(0.0, |x| x.0),
        })
    }
}

/// One simulated phase's flows for [`PhaseFcts::of`].
struct Fcts<'a> {
    /// Completion times, seconds.
    fct_s: &'a [f64],
    /// Of which the fluid timed.
    fluid: u64,
    /// How many times the phase counts.
    count: u64,
    /// How many repeats of the phase `fct_s` holds.
    repeats: u64,
}

impl PacketPhases {
    /// Packet over fluid bandwidth terms of the simulated phases (1: they agree).
    pub fn packet_over_fluid(&self) -> Option<f64> {
        (self.fluid_bandwidth_s > 0.0).then(|| self.packet_bandwidth_s / self.fluid_bandwidth_s)
    }
}

/// How far the packet runs of a collective or a job are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseProgress {
    /// Distinct phases simulated so far.
    pub phases_done: u64,
    /// The running phase's flows completed.
    pub flows_done: u64,
    /// The running phase's flows.
    pub flows: u64,
    /// The running phase's simulated time, picoseconds (real clock).
    pub now_ps: u64,
    /// The running phase's events so far.
    pub events: u64,
}

/// A progress callback, called from the threads that run phases.
pub type PhaseProgressFn = Arc<dyn Fn(&PhaseProgress) + Send + Sync>;

/// How a collective or a job runs at packet level.
#[derive(Clone)]
pub struct Timing<'a> {
    /// The packet engine's configuration.
    pub cfg: &'a Config,
    /// `packet`, or `hybrid` (fast-forwarding each phase's steady states).
    pub engine: crate::Engine,
    /// Called as the runs go.
    pub progress: Option<PhaseProgressFn>,
}

/// One simulated phase.
#[derive(Clone, Debug)]
struct Timed {
    not_skipped: Option<String>,
    /// Repeats simulated, chained ([`CHAIN_REPEATS`]).
    chained: u32,
    /// Their bandwidth terms, summed, seconds.
    chain_s: f64,
    /// The pace of the repeats after the first: each one's bandwidth term, seconds.
    steady_s: f64,
    fluid_s: f64,
    flows: u64,
    left_fluid: u64,
    critical: u64,
    sampled: u64,
    critical_fluid: u64,
    packets: u64,
    events: u64,
    simulated_s: f64,
    skipped_s: f64,
    /// Every flow's completion time, ascending, seconds (those left to the fluid at their
    /// fluid times).
    fct_s: Vec<f64>,
    /// Flows of `fct_s` the fluid timed.
    fct_fluid: u64,
    /// Repeats of the phase `fct_s` holds (those after the first of a chain).
    fct_repeats: u64,
    /// How many times the schedules asked for this phase, repeats counted.
    weight: u64,
}

impl Timed {
    /// The phase's bandwidth term per repeat when the schedule runs it `repeat` times (at
    /// least those simulated): the chain's terms and the steady pace for the rest.
    fn term_s(&self, repeat: u32) -> f64 {
        if self.chained <= 1 {
            return self.chain_s;
        }
        let rest = f64::from(repeat.saturating_sub(self.chained));
        (self.chain_s + rest * self.steady_s) / f64::from(repeat.max(self.chained))
    }
}

/// Repeats of a repeated phase simulated, chained as the collective pipelines them
/// ([`aifabric_workload::traffic::chained`]: a rank sends its next repeat once it holds
/// what it received): enough to see the ranks drift apart after a cold, synchronized
/// start, and the pace of a repeat after the first.
pub const CHAIN_REPEATS: u32 = 3;

/// A phase as its memo knows it: the repeats chained, each transfer's GPUs (device
/// indices) and bytes, in order.
type Key = (u32, Vec<(u32, u32, u64)>);

/// The packet engine as a [`PhaseTimer`], one per network (its memo holds times on that
/// network only).
pub(crate) struct PacketTimer {
    cfg: Config,
    engine: crate::Engine,
    progress: Option<PhaseProgressFn>,
    memo: Mutex<FxHashMap<Key, Timed>>,
    timed: AtomicU64,
    /// Most repeats of a phase simulated, chained, whatever the load balancing (tests);
    /// `None`: [`CHAIN_REPEATS`] but under `ecmp` ([`PacketTimer::chain`]).
    chain: Option<u32>,
    /// Most repeats of a connection in flight in a chain (tests; `None`: no bound).
    depth: Option<u32>,
    /// Every run takes its turn, as one too big to run beside another (tests).
    #[cfg(test)]
    alone: bool,
}

/// Held by a packet run too big to run beside another one within the memory limit: such
/// runs take turns. Only a run on threads of its own ([`on_threads_of_its_own`]) ever
/// waits for it or holds it: a thread of the shared pool waiting inside a parallel call
/// takes up other tasks, among them other phases' runs, and one that waited for the turn
/// there could wait for itself, or for a run that needs the very thread it blocks.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Where a packet run fits in the memory left.
enum Room {
    /// Beside as many others as there are threads.
    Beside,
    /// Only alone: it takes its turn ([`ONE_AT_A_TIME`]).
    Alone,
    /// Not at all: why, for the user.
    Over(String),
}

/// Run `f` on a thread pool of its own (as many threads as the caller's), the caller
/// blocked until it is done: what `f` runs in parallel stays on those threads, and they run
/// nothing else (no other phase's run, which could wait for the turn `f` holds). The caller
/// waits on a plain thread's join, not in the pool's: a pool thread waiting for another
/// pool takes up its own pool's tasks meanwhile (more phases' runs, each with its pool and
/// its memory, queueing for the turn).
fn on_threads_of_its_own<R: Send>(f: impl FnOnce() -> R + Send) -> Result<R, SimError> {
    let failed = |e: &dyn std::fmt::Display| {
        SimError::Invalid(format!(
            "could not start the threads of a packet run ({e}); run with fewer threads \
             (RAYON_NUM_THREADS=1)"
        ))
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(rayon::current_num_threads())
        .thread_name(|i| format!("aifabric-alone-{i}"))
        .build()
        .map_err(|e| failed(&e))?;
    std::thread::scope(|s| {
        let run = std::thread::Builder::new()
            .name("aifabric-alone".to_owned())
            .spawn_scoped(s, || pool.install(f))
            .map_err(|e| failed(&e))?;
        Ok(run
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}

impl PacketTimer {
    /// A timer running `t.cfg` (with fast-forwarding for `hybrid`).
    pub(crate) fn new(t: &Timing<'_>) -> PacketTimer {
        let (cfg, engine) = (t.cfg, t.engine);
        let cfg = if engine == crate::Engine::Hybrid {
            Config {
                fast_forward: Some(cfg.fast_forward.unwrap_or_default()),
                ..cfg.clone()
            }
        } else {
            cfg.clone()
        };
        PacketTimer {
            cfg,
            engine,
            progress: t.progress.clone(),
            memo: Mutex::default(),
            timed: AtomicU64::new(0),
            chain: None,
            depth: None,
            #[cfg(test)]
            alone: false,
        }
    }

    /// The timer running each phase as one too big to run beside another.
    #[cfg(test)]
    pub(crate) fn each_alone(self) -> PacketTimer {
        PacketTimer {
            alone: true,
            ..self
        }
    }

    /// The timer chaining up to `repeats` repeats of a phase whatever the load balancing
    /// (`u32::MAX`: every repeat, the whole collective packet by packet).
    #[cfg(test)]
    pub(crate) fn chaining(self, repeats: u32, depth: Option<u32>) -> PacketTimer {
        PacketTimer {
            chain: Some(repeats.max(1)),
            depth,
            ..self
        }
    }

    /// Repeats of a phase the schedule runs `repeat` times to simulate, chained: up to
    /// [`CHAIN_REPEATS`], but one under `ecmp`. There a connection keeps its path from
    /// repeat to repeat, and a connection that shares a link with others (hash collisions)
    /// receives its next repeats from its faster upstream before it is done with this one:
    /// they pile up on its links without bound, as nothing models the flow control between
    /// ranks (NCCL's bounded buffers) that would hold them back. How long the whole
    /// collective takes then depends on that flow control: 17.2, 17.5 and 20.8 ms for one
    /// case with the next repeat held until one, two or no earlier repeat of the connection
    /// is done (the README's pipelining section). Under `ecmp` a phase runs in lockstep, all
    /// its flows started together, 0.8-6.4% above the two-deep chain on 7 cases; so does the
    /// hybrid's cut, which needs the paths of one repeat.
    fn chain(&self, repeat: u32) -> u32 {
        match self.chain {
            Some(k) => repeat.clamp(1, k),
            None if self.cfg.lb == PacketLb::Ecmp => 1,
            None => repeat.clamp(1, CHAIN_REPEATS),
        }
    }

    /// A packet's payload, bytes.
    fn payload_bytes(&self) -> f64 {
        f64::from(
            self.cfg
                .mtu_bytes
                .saturating_sub(self.cfg.header_bytes)
                .max(1),
        )
    }

    /// Whether the hybrid cuts phases to their critical flows: under `ecmp`, whose paths
    /// are known before the run.
    fn cuts(&self) -> bool {
        self.engine == crate::Engine::Hybrid && self.cfg.lb == PacketLb::Ecmp
    }

    /// From now on, count only the phases asked for from here in the flows' completion
    /// times (`PacketPhases::fct`): a collective of several sizes gives its last size's.
    pub(crate) fn count_from_here(&self) {
        for t in self
            .memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values_mut()
        {
            t.weight = 0;
        }
    }

    /// What it ran so far.
    pub(crate) fn stats(&self) -> PacketPhases {
        let memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        // Summed in a fixed order: the same bytes whichever thread simulated what first.
        let mut runs: Vec<(&Key, &Timed)> = memo.iter().collect();
        runs.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut s = PacketPhases {
            engine: self.engine,
            phases_simulated: runs.len() as u64,
            phases_timed: self.timed.load(Ordering::Relaxed),
            ..PacketPhases::default()
        };
        for (_, t) in runs {
            s.phases_chained += u64::from(t.chained > 1);
            s.flows += t.flows;
            s.flows_left_fluid += t.left_fluid;
            s.flows_critical += t.critical;
            s.flows_sampled += t.sampled;
            s.flows_critical_fluid += t.critical_fluid;
            s.packets += t.packets;
            s.events += t.events;
            s.simulated_s += t.simulated_s;
            s.skipped_s += t.skipped_s;
            // Per repeat of the repeats simulated (a chain's mean).
            s.packet_bandwidth_s += t.chain_s / f64::from(t.chained.max(1));
            s.fluid_bandwidth_s += t.fluid_s;
            if s.not_skipped.is_none() {
                s.not_skipped.clone_from(&t.not_skipped);
            }
        }
        s.fct = PhaseFcts::of(
            &memo
                .values()
                .map(|t| Fcts {
                    fct_s: &t.fct_s,
                    fluid: t.fct_fluid,
                    count: t.weight,
                    repeats: t.fct_repeats,
                })
                .collect::<Vec<_>>(),
        );
        s
    }

    /// Where a packet run of `flows` over `gpus` (named `of` for the user) fits in the memory
    /// left; `built`: the network (its forwarding tables) is built already, and counted in
    /// what the process holds.
    fn room(
        &self,
        net: &Net<'_>,
        flows: &mut dyn Iterator<Item = &TmFlow>,
        gpus: &[DeviceId],
        of: &str,
        built: bool,
    ) -> Result<Room, String> {
        let mut e = budget::estimate_flows(net.f, flows, gpus, &self.cfg);
        if built {
            e = e.on_built_network();
        }
        let (limit, from) = limits::memory_limit()?;
        let free = limit.saturating_sub(limits::resident_bytes());
        if e.bytes > free {
            return Ok(Room::Over(format!(
                "{of} is {} flows over {} GPUs ({} packets, up to {} in flight): the packet \
                 engine would need about {}, over the {} left of {} and at least {} s; narrow \
                 it (fewer GPUs, a smaller size) or use the flow engine (--engine flow)",
                thousands(e.flows),
                thousands(e.hosts),
                thousands(e.packets),
                thousands(e.in_flight),
                human_bytes(e.bytes),
                human_bytes(free),
                limits::describe_limit(limit, from),
                e.seconds,
            )));
        }
        #[cfg(test)]
        let free = if self.alone { 0 } else { free };
        let threads = rayon::current_num_threads() as u64;
        Ok(if e.bytes.saturating_mul(threads) > free {
            Room::Alone
        } else {
            Room::Beside
        })
    }

    /// Simulate the phase `transfers` (`fluid_s` its fluid time): once, and for a phase
    /// repeated (`chain` > 1) its first `chain` repeats chained too, from which a repeat's
    /// pace ([`Timed::term_s`]).
    fn run(
        &self,
        net: &Net<'_>,
        transfers: &[NetTransfer],
        fluid_s: f64,
        chain: u32,
    ) -> Result<Timed, SimError> {
        let mut gpus: Vec<DeviceId> = Vec::new();
        let mut node: FxHashMap<DeviceId, u32> = FxHashMap::default();
        let mut id = |g: DeviceId| {
            *node.entry(g).or_insert_with(|| {
                gpus.push(g);
                gpus.len() as u32 - 1
            })
        };
        let flows: Vec<TmFlow> = transfers
            .iter()
            .enumerate()
            .map(|(k, t)| TmFlow {
                id: k as u64,
                src: id(t.src),
                dst: id(t.dst),
                bytes: t.bytes.ceil() as u64,
                start: Start::AtPs(0),
                done_trigger: None,
                recv_trigger: None,
            })
            .collect();
        let tm = TrafficMatrix {
            nodes: gpus.len() as u32,
            flows,
            triggers: FxHashMap::default(),
        };
        let chain = chain.max(1);
        // The hybrid under `ecmp` simulates the flows that make the phase's time and their
        // links' other flows (`critical`); otherwise every flow runs.
        let cuts = self.cuts();
        let of = if chain > 1 {
            format!("{chain} repeats of one phase of this collective, chained,")
        } else {
            "one phase of this collective".to_string()
        };
        // The chain is the larger of the runs (one after the other): its flows are counted,
        // `chain` times each. Up front the whole phase: a cut keeps part of it, and is
        // weighed again once known (its network built then, and counted in what the
        // process holds).
        let n = tm.flows.len() * chain as usize;
        let whole = self
            .room(net, &mut tm.flows.iter().cycle().take(n), &gpus, &of, false)
            .map_err(SimError::Invalid)?;
        if let (Room::Over(why), false) = (&whole, cuts) {
            return Err(SimError::Invalid(why.clone()));
        }
        let phases_done = self.memo.lock().unwrap_or_else(|e| e.into_inner()).len() as u64;
        let (mut critical, mut sampled, mut critical_fluid) = (0, 0, 0);
        let mut the_cut: Option<crate::packet::critical::Cut> = None;
        let bytes: Vec<u64> = tm.flows.iter().map(|f| f.bytes).collect();
        let repeats: &[u32] = if chain > 1 { &[1, chain] } else { &[1] };
        // A run that may have to run alone takes its turn (`ONE_AT_A_TIME`); `may_wait`:
        // this run is on threads of its own, where it may wait for its turn.
        let mut simulate = |may_wait: bool| {
            let mut turn = None;
            if !cuts && matches!(whole, Room::Alone) {
                turn = Some(ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()));
            }
            let mut progress = |p: &aifabric_packet::Progress| {
                if let Some(f) = &self.progress {
                    f(&PhaseProgress {
                        phases_done,
                        flows_done: p.flows_done,
                        flows: p.flows,
                        now_ps: p.now_ps,
                        events: p.events,
                    });
                }
            };
            let mut choose = |paths: &aifabric_packet::FlowPaths| {
                let c = crate::packet::critical::cut(paths, &bytes);
                (critical, sampled, critical_fluid) = (c.critical, c.sampled, c.critical_fluid);
                the_cut = Some(c.clone());
                let n = c.keep.iter().filter(|&&k| k).count() * chain as usize;
                let mut kept = tm
                    .flows
                    .iter()
                    .zip(&c.keep)
                    .filter(|(_, &k)| k)
                    .map(|f| f.0)
                    .cycle()
                    .take(n);
                let of = format!("the critical part of {of}");
                match self
                    .room(net, &mut kept, &gpus, &of, true)
                    .map_err(PacketError::Invalid)?
                {
                    Room::Over(why) => return Err(PacketError::Invalid(why)),
                    Room::Alone if may_wait => {
                        turn = Some(ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()));
                    }
                    // Where it may not wait, the whole phase (more than its cut) fitted
                    // beside another up front.
                    Room::Alone | Room::Beside => {}
                }
                Ok(Some(c.keep))
            };
            aifabric_packet::run_part_repeats(
                net,
                &tm,
                &gpus,
                &self.cfg,
                aifabric_packet::Chains {
                    repeats,
                    depth: self.depth,
                },
                cuts.then_some(&mut choose as &mut aifabric_packet::Choose<'_>),
                &mut progress,
            )
            .map_err(|e| SimError::Invalid(e.to_string()))
        };
        let runs = match whole {
            Room::Beside => simulate(false)?,
            Room::Alone | Room::Over(_) => on_threads_of_its_own(|| simulate(true))??,
        };
        let kept = runs.kept;
        let left_fluid = tm.flows.len() as u64 - kept;
        for r in &runs.results {
            if r.unfinished > 0 || r.never_started > 0 {
                return Err(SimError::Invalid(format!(
                    "{} of the {} flows of one phase did not finish by the end of the packet \
                     run ({} us): raise --end-us or leave it out",
                    r.unfinished + r.never_started,
                    r.flows,
                    self.cfg.end_ps as f64 * 1e-6,
                )));
            }
        }
        // Each run's bandwidth term: its makespan less its base round trip and, a chain's,
        // less its paths' delays for each repeat after the first (the chains charge path
        // latency: a ring's chain crosses each of its links in turn, so their mean).
        let term = |r: &PacketResult, k: u32| {
            (r.makespan_s - r.max_base_latency_s - f64::from(k - 1) * r.mean_path_delay_s).max(0.0)
        };
        let one_s = term(&runs.results[0], 1);
        let r = runs.results.last().expect("a run");
        let chain_s = term(r, chain);
        // The pace of a repeat beyond the chain: what the chain's repeats after the first
        // added, each; never below the fluid's time for the phase (its bytes through the
        // fair shares), nor the one run's when that is lower.
        let steady_s = if chain > 1 {
            ((chain_s - one_s) / f64::from(chain - 1)).max(fluid_s.min(one_s))
        } else {
            one_s
        };
        // The simulated flows, repeat by repeat: a chain's first repeat starts cold and in
        // lockstep, so its flows' times are those of the repeats after it.
        let per = kept as usize;
        let from = usize::from(chain > 1);
        let mut fct_s = Vec::new();
        for k in from..chain as usize {
            let simulated = &r.fct_by_flow_s[k * per..(k + 1) * per];
            // The flows the cut leaves to the fluid: their fluid times, as the simulated
            // flows at their fluid level fared at packet level.
            if let Some(c) = &the_cut {
                fct_s.extend(crate::packet::critical::left_out_fct_s(c, simulated));
            }
            fct_s.extend(simulated.iter().flatten());
        }
        fct_s.sort_unstable_by(f64::total_cmp);
        let sum = |f: fn(&PacketResult) -> f64| runs.results.iter().map(f).sum::<f64>();
        Ok(Timed {
            fct_s,
            fct_fluid: left_fluid * (u64::from(chain) - from as u64),
            fct_repeats: u64::from(chain) - from as u64,
            weight: 0,
            not_skipped: runs
                .results
                .iter()
                .find_map(|r| r.hybrid.as_ref().and_then(|h| h.not_skipped.clone())),
            chained: chain,
            chain_s,
            steady_s,
            fluid_s,
            flows: kept,
            left_fluid,
            critical,
            sampled,
            critical_fluid,
            packets: runs.results.iter().map(|r| r.counters.data_new).sum(),
            events: runs.results.iter().map(|r| r.events).sum(),
            simulated_s: sum(|r| r.makespan_s),
            skipped_s: sum(|r| r.hybrid.as_ref().map_or(0.0, |h| h.skipped_s)),
        })
    }
}

/// Packets the distinct phases of one collective may send at most, summed: the packet
/// engine's own limit on one run ([`aifabric_packet::MAX_PACKETS`], about six hours at
/// [`budget::US_PER_PACKET`]).
pub const MAX_SCHEDULE_PACKETS: u64 = aifabric_packet::MAX_PACKETS;

/// Most transfers the distinct phases of one collective may have under the hybrid's cut
/// (every transfer's two paths, about 200 bytes, and its place in the fluid: a few GB).
pub const MAX_CUT_TRANSFERS: u64 = aifabric_engine::traffic::MAX_SUBFLOWS;

impl PhaseTimer for PacketTimer {
    fn check_work(&self, transfers: u64, bytes: f64) -> Result<(), SimError> {
        if self.cuts() {
            // The hybrid's cut keeps a phase's critical flows only, known once its paths
            // are: each part run refuses its own packets over the limit. Up front, the
            // paths and the fluid that cut the phases must fit.
            if transfers <= MAX_CUT_TRANSFERS {
                return Ok(());
            }
            return Err(SimError::Invalid(format!(
                "the hybrid cuts each distinct phase to its critical flows from every \
                 transfer's path: this collective's phases, each once, are {} transfers, over \
                 the limit of {}; use the flow engine (--engine flow) or fewer GPUs",
                thousands(transfers),
                thousands(MAX_CUT_TRANSFERS),
            )));
        }
        let payload = self.payload_bytes();
        // Each transfer's last packet may be short: one more packet per transfer at most.
        let packets = (bytes / payload).ceil() + transfers as f64;
        if packets <= MAX_SCHEDULE_PACKETS as f64 {
            return Ok(());
        }
        Err(SimError::Invalid(format!(
            "at packet level this collective's distinct phases, each run once, are {} \
             transfers and about {} packets, over the limit of {} (about {} h at {} us a \
             packet); use the flow engine (--engine flow), fewer GPUs or a smaller size",
            thousands(transfers),
            thousands(packets as u64),
            thousands(MAX_SCHEDULE_PACKETS),
            (packets * budget::US_PER_PACKET as f64 / 3.6e9).round(),
            budget::US_PER_PACKET,
        )))
    }

    fn bandwidth_s(
        &self,
        net: &Net<'_>,
        transfers: &[NetTransfer],
        fluid_s: f64,
        repeat: u32,
    ) -> Result<f64, SimError> {
        self.timed.fetch_add(1, Ordering::Relaxed);
        let payload = self.payload_bytes();
        // A chain the packet engine could not run (over its packet limit) is left out: the
        // phase runs once, in lockstep.
        let packets: f64 = transfers.iter().map(|t| (t.bytes / payload).ceil()).sum();
        let chain = match self.chain(repeat) {
            k if packets * f64::from(k) > aifabric_packet::MAX_PACKETS as f64 => 1,
            k => k,
        };
        let key: Key = (
            chain,
            transfers
                .iter()
                .map(|t| (t.src.get(), t.dst.get(), t.bytes.to_bits()))
                .collect(),
        );
        if let Some(t) = self
            .memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(&key)
        {
            t.weight += u64::from(repeat);
            return Ok(t.term_s(repeat));
        }
        // Two threads may simulate the same phase at once; both get the same time.
        let t = self.run(net, transfers, fluid_s, chain)?;
        let term = t.term_s(repeat);
        self.memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_insert(t)
            .weight += u64::from(repeat);
        Ok(term)
    }
}

#[cfg(test)]
mod tests;
