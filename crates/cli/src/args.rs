//! The command line as clap sees it: every command and its flags. Options are library types
//! that parse with `FromStr` (load balancing, placement, algorithms, BGP settings, formats).

use crate::Failure;
use aifabric::model::{Fabric, Scenario};
use aifabric::routing::Aggregation;
use aifabric::routing::MissingBandwidth;
use aifabric::routing::{AsnPlan, BandwidthMode, BgpConfig, SoftDrain};
use aifabric::stages::spec;
use aifabric::Op;
use aifabric::{Lb, NetParams};
use clap::{Parser, Subcommand};

mod commands;
mod packet;
mod slurm;
pub(crate) use commands::*;
pub(crate) use packet::*;
pub(crate) use slurm::*;

/// aifabric: design, verify and predict gigawatt-scale AI training networks.
#[derive(Parser)]
#[command(version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// List the built-in specs (usable wherever SPEC is asked for).
    Specs(SpecsArgs),
    /// Capacity report: oversubscription per tier, inter-region capacity, inventory, power,
    /// bisection by max-flow.
    Capacity(CapacityArgs),
    /// PFC headroom at design time: per port class the headroom a lossless priority needs
    /// (rate x (2 x cable x 5 ns/m + the switch's response time) + 2 MTU), its sum per switch
    /// against the model's HBM + SRAM, the longest lossless cable per model and speed, and
    /// every switch that cannot hold its headroom with the fix.
    Buffers(BuffersArgs),
    /// The same traffic (an incast, an all-to-all, a ring all-reduce) packet by packet on a
    /// DSF, an NSF and a RoCE zone of 288 GPUs each, with the endpoints each design implies,
    /// side by side (completion times, pauses, drops, peak queues per tier); and a
    /// BAG-to-BAG link at 1, 10 and 60 km with a deep-buffer and a shallow-buffer BAG under a
    /// lossless incast (throughput kept or lost).
    CompareFabrics(CompareFabricsArgs),
    /// Build the model and print its inventory; `--out` writes the whole model as JSON.
    Build(BuildArgs),
    /// What a device forwards toward one prefix (or every prefix): BGP next hops with ideal and
    /// quantized UCMP weights, under failures and drains.
    Routes(RoutesArgs),
    /// Aggregation at the L2 -> BAG border and the blackholes it leaves under failures:
    /// borders that advertise a zone aggregate but cannot reach some of its racks.
    Blackholes(BlackholesArgs),
    /// DSF Input Balanced Mode: what each interface node keeps toward each destination
    /// cluster once remote failures have propagated.
    Ibm(IbmArgs),
    /// Failure-domain sweep: what the fabric loses when each shared-risk group fails (or
    /// pairs of them, or random draws): routed capacity under BGP/UCMP, the max-flow bound,
    /// GPUs isolated, blackholes, tier oversubscription. Worst first.
    Failures(FailuresArgs),
    /// Simulate one collective on the fabric for a range of sizes: an nccl-tests-like table
    /// (size, time, algBW, busBW), link utilization per tier and the busiest links; with a
    /// scenario, the slowdown against the healthy fabric.
    Collective(CollectiveArgs),
    /// Simulate one training iteration of a job (a YAML file): step time, its breakdown
    /// (compute, bubble, exposed communication per collective) and, with a scenario, the
    /// slowdown against the healthy fabric.
    Job(JobArgs),
    /// Many jobs on one fabric (a cluster file: the running jobs and where they run): each
    /// job's step alone and together with the others, who slows whom on which links, and
    /// with a scenario each job's slowdown, interruption (lost GPUs) or "untouched", with
    /// why.
    Cluster(ClusterArgs),
    /// A maintenance plan against the running jobs: operations (drain or take down elements
    /// for some hours, some after others, at most N at once) ordered and batched to cost the
    /// jobs the fewest GPU-hours (interrupted jobs lose all their GPUs, slowed ones the
    /// share their slowdown takes), each batch's impact per job, and the naive order's cost
    /// beside it.
    Plan(PlanArgs),
    /// Simulate a traffic matrix event by event: flows with sizes and start times between
    /// GPUs (htsim's connection-matrix file, a CSV, or a generated pattern) arrive and leave,
    /// rates max-min fair between events. Prints flow completion times (min, P50, P99, max,
    /// the slowest flows), link utilization per tier and, with a scenario, the slowdown.
    Traffic(TrafficArgs),
    /// Design-space sweep: a sweep file names a base spec, a grid of overrides (dotted paths
    /// into the spec) and a failure study; every design x its tasks runs here, or one shard of
    /// them (`--shard I/N`), or as a Slurm job array (`--emit-slurm DIR`); `sweep merge`
    /// combines shards into the output of one run, byte for byte; `sweep status DIR` and
    /// `sweep rerun-failed DIR` find and resubmit the shards of an array that failed.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Sweep(SweepArgs),
    /// MLCommons Chakra execution traces: synthesize one from a job file, or rescale one to
    /// more ranks.
    Chakra {
        #[command(subcommand)]
        command: ChakraCommand,
    },
    /// Replay a Chakra trace (a directory of `<prefix>.<rank>.et[.gz]` files) on the fabric:
    /// ranks placed on GPUs, compute from durations or the roofline, collectives and
    /// transfers on the flow-level engine. Prints the iteration time, per-rank compute and
    /// exposed communication, the critical path and, with a scenario, the slowdown.
    Replay(ReplayArgs),
    /// The main job, end to end on the built-in `prometheus`: build it, print the capacity
    /// summary, run the single-SRG failure sweep, simulate a reference training job healthy
    /// and under the failure that slows it most of the worst few it survives, and what
    /// helps there (its packets sprayed), write the HTML report with the job in it, say where
    /// it is.
    Demo(DemoArgs),
    /// One self-contained HTML report (inline SVG, opens from disk) and report.json with the
    /// same data: fabric summary and hierarchy, oversubscription per tier, inter-BAG capacity,
    /// a failure sweep (capacity-retained CDF, worst scenarios), collective busBW vs message
    /// size per load-balancing mode, link-utilization histogram. The sweep falls back to every
    /// group when the spec has none of the class; the collective runs where the modes can
    /// differ (spread over the buildings when packed GPUs share one DSF zone), or says why
    /// they cannot. `--compare A.json B.json`: what changed between two reports.
    Report(ReportArgs),
    /// Export the fabric for other tools: NetBox bulk-import CSVs (devices, interfaces,
    /// cables with lengths, IP addresses, ASNs), GraphML and node-link JSON for NetworkX, the
    /// IP plan as CSV, or a DOT overview at zone / BAG-plane level. Files are written
    /// atomically into DIR.
    Export(ExportArgs),
    /// The fabric run by FRRouting in Linux network namespaces (one zebra + bgpd per router,
    /// a veth pair per link, from `export --format frr`), and every kernel FIB compared with
    /// aifabric's routes. Needs root, `ip netns` and FRR (Debian's `frr`).
    Lab {
        #[command(subcommand)]
        command: LabCommand,
    },
    /// Import the jobs running on a Slurm cluster (`squeue --json`, or a file of it) as a
    /// cluster file: each RUNNING job's job file (its comment `aifabric:PATH`, or
    /// `--job-dir DIR/NAME.yaml`) and its nodes mapped to the fabric's hosts (a node named as
    /// a host; else a `--node-map` row; else `--node-prefix`), in rank order.
    SlurmImport(SlurmImportArgs),
    /// The network as built against the plan: a NetBox export's cables missing, extra,
    /// miswired (wrong port, wrong plane, wrong peer) or at the wrong speed, devices missing
    /// or unexpected, by site and hall, with the planned capacity each tier and group loses.
    /// Exit 1 when anything differs (a gate for a change pipeline), 0 when the inventory is
    /// the plan.
    Drift(DriftArgs),
    /// The network as built, imported once: its drift from the plan written as a scenario
    /// file (planned links missing or miswired failed, links at another speed at the speed
    /// found) that every command takes as `--scenario FILE`, instead of reading the
    /// inventory again (`--as-built`).
    Import(ImportArgs),
    /// Check a spec; prints nothing but a summary when it is valid.
    Validate(ValidateArgs),
    /// Published figures against aifabric's predictions (nccl-tests bandwidths, Meta's
    /// E-ECMP gain, Llama 3 405B's training runs): each row's setup, prediction, error and
    /// stated tolerance, and the one calibration point; `--markdown` prints VALIDATION.md.
    Validation(ValidationArgs),
    /// Interruptions per job of a cluster and effective training time: failure rates per
    /// component class (defaults from the Llama 3 run's interruption table), blast radius
    /// from the fabric (single points of failure, named SRGs), checkpointing at Young's
    /// optimum interval.
    Goodput(crate::commands::goodput::GoodputArgs),
}

/// `aifabric lab ...`.
#[derive(Subcommand)]
pub(crate) enum LabCommand {
    /// Bring the lab up: namespaces, veths, and a supervisor that runs the daemons.
    Up {
        /// Built-in spec name or YAML file (RoCE, NSF, fat tree; not DSF).
        spec: String,
        /// The lab's directory: configuration, daemon state and logs, and its state file.
        #[arg(long, default_value = "/tmp/aifabric-lab")]
        dir: std::path::PathBuf,
        /// FRR's daemon directory.
        #[arg(long, default_value = aifabric_lab::FRR_DAEMONS)]
        frr: std::path::PathBuf,
        /// Refuse fabrics with more routers than this (two daemons and a namespace each).
        #[arg(long, default_value_t = aifabric_lab::DEFAULT_MAX_ROUTERS)]
        max_routers: usize,
        /// FRR's version, for how finely it programs link-bandwidth weights (8.x: 1-100,
        /// later: 1-255); `auto` asks `bgpd --version`.
        #[arg(long, default_value = "auto")]
        frr_version: String,
        /// Aggregate each zone at its borders toward BAG (`unconditional`: FRR's
        /// aggregate-address; `conditional:1`: its conditional advertisement; the zone's
        /// specifics kept inside); `check` then compares who advertises, withdraws and
        /// blackholes with `blackholes --tier zone`.
        #[arg(long)]
        aggregation: Option<Aggregation>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        bgp: BgpArgs,
        #[command(flatten)]
        speeds: SpeedArgs,
    },
    /// Set the links as the scenario says (healthy without one), wait until the FIBs agree
    /// with aifabric's routes or --timeout passes, and print the disagreements (exit 1).
    Check {
        /// The spec the lab runs (checked against it).
        spec: String,
        /// The lab's directory.
        #[arg(long, default_value = "/tmp/aifabric-lab")]
        dir: std::path::PathBuf,
        /// Seconds to wait for the FIBs to agree.
        #[arg(long, default_value_t = 60.0)]
        timeout: f64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        scenario: ScenarioArgs,
    },
    /// Stop the daemons and remove the namespaces and the lab's directory (also after a
    /// crash: from the state file).
    Down {
        /// The lab's directory.
        #[arg(long, default_value = "/tmp/aifabric-lab")]
        dir: std::path::PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// What the lab is now: each router's namespace and daemons, the supervisor, drained
    /// links (exit 1 when a daemon or namespace is missing).
    Status {
        /// The lab's directory.
        #[arg(long, default_value = "/tmp/aifabric-lab")]
        dir: std::path::PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Run a command inside one router's namespace, e.g. `aifabric lab exec
    /// east.dc1.roce.rtsw0 -- vtysh -c 'show bgp summary'` (vtysh is pointed at that router's
    /// daemons); exits with the command's code.
    Exec {
        /// The router (device name, as `lab status` lists them).
        router: String,
        /// The lab's directory.
        #[arg(long, default_value = "/tmp/aifabric-lab")]
        dir: std::path::PathBuf,
        /// The command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Run the lab's daemons and reap them (started by `lab up`).
    #[command(hide = true)]
    Supervise {
        /// The lab's directory.
        #[arg(long)]
        dir: std::path::PathBuf,
    },
}

/// `aifabric chakra ...`.
#[derive(Subcommand)]
pub(crate) enum SweepCommand {
    /// Combine shard files of one sweep into its results (every task exactly once).
    Merge {
        /// The sweep file the shards ran.
        file: std::path::PathBuf,
        /// The shard files.
        #[arg(required = true)]
        shards: Vec<std::path::PathBuf>,
        /// Write the results to this file as JSON, atomically.
        #[arg(long, value_parser = crate::args::output_file)]
        out: Option<std::path::PathBuf>,
        /// Write one row per design x scenario to this file as an Arrow IPC file (pandas:
        /// `read_feather`, polars: `read_ipc`), atomically.
        #[arg(long, value_parser = crate::args::output_file, value_name = "FILE")]
        table: Option<std::path::PathBuf>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Which shards of a Slurm array (the directory `--emit-slurm` wrote) have their
    /// result, and why each other has none (with its log's last line); exits 1 while any
    /// has none. The merge job runs it first.
    Status {
        /// The directory `sweep FILE --emit-slurm DIR` wrote.
        dir: std::path::PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Resubmit the shards of a Slurm array that have no valid result (a new array with
    /// their indices, through DIR/submit.sh) and a merge after them; refused while the
    /// array is still queued or running.
    RerunFailed {
        /// The directory `sweep FILE --emit-slurm DIR` wrote.
        dir: std::path::PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub(crate) enum ChakraCommand {
    /// Write the trace of one iteration of a job file: one file per rank (the job model's
    /// critical path as a DAG) and comm_group.json. Replaying it gives the job's step time.
    Synth {
        /// The job file (see examples/jobs/).
        #[arg(long)]
        job: String,
        /// Directory to write into (created if missing).
        #[arg(long, value_parser = crate::args::output_dir)]
        out: std::path::PathBuf,
        /// File name prefix: `<prefix>.<rank>.et.gz` inside `--out` (a plain name, no `/`).
        #[arg(long, default_value = "trace")]
        prefix: String,
        /// Plain files (`.et`) instead of gzip.
        #[arg(long)]
        plain: bool,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Rescale a trace of R ranks to N = f x R ranks: rank r + iR runs rank r's nodes,
    /// data-parallel groups grow across the f replicas, other groups are copied per replica.
    Scale {
        /// The trace directory.
        #[arg(long = "in")]
        input: std::path::PathBuf,
        /// Ranks of the new trace (a multiple of the trace's).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        ranks: u32,
        /// Directory to write into (created if missing).
        #[arg(long, value_parser = crate::args::output_dir)]
        out: std::path::PathBuf,
        /// Data-parallel groups: `auto` (names starting with `dp`, and groups of all ranks)
        /// or a comma-separated list of pg_names.
        #[arg(long, default_value = "auto")]
        dp_groups: String,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

/// Load balancing and the engine's parameters.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Simulation")]
pub(crate) struct SimArgs {
    /// ecmp (default), eecmp:N (N queue pairs per GPU pair), ucmp, spray or te; with
    /// `traffic --engine packet`: ecmp, spray:N (N entropy values per flow, REPS with
    /// per-packet feedback), mixed:N (htsim's one entropy per ACK) or adaptive.
    #[arg(long)]
    lb: Option<String>,
    /// Seed of the switches' ECMP hashes (and of fragmented placement draws, generated
    /// traffic, and the packet engine's random choices); default 1 (13 with --preset
    /// uec-htsim, as htsim's runs).
    #[arg(long)]
    seed: Option<u64>,
    /// Channels per collective, each an equal share on its own connections; 0 = automatic:
    /// for rings one per GPU of the scale-up domain (rail-aligned, as NCCL on 8-GPU servers),
    /// else 1.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=64))]
    channels: u32,
    /// GPUs per scale-up (NVLink) domain (default 8): ranks are placed in whole domains of a
    /// rack (a rack's GPUs that fill none are left out), and the GPUs of one domain talk over
    /// NVLink, not the network. Read by `collective` and `traffic` (flow engine; the packet
    /// engine sends every GPU's traffic through the network), and by `replay` for a trace
    /// that records no domain size; `job`, `cluster` and `plan` take it from the job file
    /// (`scale_up.gpus`) and refuse the flag.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    scale_up: Option<u32>,
    /// Scale-up (NVLink) bandwidth per GPU and direction, GB/s (default 450): read where
    /// --scale-up is (a job file's `scale_up.gbs_per_direction` otherwise).
    #[arg(long)]
    scale_up_gbs: Option<f64>,
    /// Forwarding latency per switch, microseconds (default 1; 0 with --preset uec-htsim).
    #[arg(long)]
    switch_latency_us: Option<f64>,
}

impl SimArgs {
    /// The packet engine's configuration from these flags and `p`'s.
    pub(crate) fn packet_config(
        &self,
        p: &PacketArgs,
    ) -> Result<aifabric::packet::Config, Failure> {
        let options = aifabric::packet::PacketOptions {
            preset: p.preset,
            lb: self.lb()?,
            cc: p.cc,
            nscc_base_rtt: p.nscc_base_rtt,
            mtu_bytes: p.mtu,
            queue_bytes: p.queue_bytes,
            ecn: p.ecn,
            trim: match (p.trim, p.drop_tail) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            ack_bytes: p.ack_bytes,
            link_latency_us: p.link_latency_us,
            rto_us: p.rto_us,
            end_us: p.end_us,
            pfc: p.pfc,
            pfc_headroom: p.pfc_headroom,
            admission: p.admission,
            dsf_cell_bytes: p.dsf_cell_bytes,
            dsf_credit_bytes: p.dsf_credit_bytes,
            partitions: p.partitions,
            draw_seed: p.draw_seed,
        };
        options.check_engine(p.engine)?;
        Ok(options.config(self.seed, self.switch_latency_us)?)
    }

    /// `--lb`, parsed: the one load-balancing vocabulary of both engines.
    pub(crate) fn lb(&self) -> Result<Option<Lb>, Failure> {
        self.lb
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(Failure::BadArgument)
    }

    /// The setup of a flow-engine run: `--lb` must be a mode the flow engine runs.
    pub(crate) fn setup(&self, bgp: &BgpArgs) -> Result<aifabric::Setup, Failure> {
        let lb = match self.lb()? {
            None => Lb::Ecmp,
            Some(lb) => aifabric::check_flow_lb(lb).map_err(Failure::BadArgument)?,
        };
        self.setup_with_lb(bgp, lb)
    }

    /// [`SimArgs::setup`] for a command whose job files set the scale-up domain (`job`,
    /// `cluster`, `plan`): `--scale-up` and `--scale-up-gbs` would be ignored there, so
    /// they are refused.
    pub(crate) fn setup_for_jobs(
        &self,
        bgp: &BgpArgs,
        command: &str,
    ) -> Result<aifabric::Setup, Failure> {
        if self.scale_up.is_some() || self.scale_up_gbs.is_some() {
            return Err(Failure::BadArgument(format!(
                "`{command}` takes the scale-up domain from the job file (`scale_up: {{gpus: \
                 N, gbs_per_direction: B}}`), not from --scale-up or --scale-up-gbs: set it \
                 there"
            )));
        }
        self.setup(bgp)
    }

    /// The setup with the flow engine's mode `lb` (a packet run's fluid equivalent).
    pub(crate) fn setup_with_lb(&self, bgp: &BgpArgs, lb: Lb) -> Result<aifabric::Setup, Failure> {
        let scale_up_gbs = self.scale_up_gbs.unwrap_or(450.0);
        if !(scale_up_gbs.is_finite() && scale_up_gbs > 0.0) {
            return Err(Failure::BadArgument(
                "--scale-up-gbs must be a positive number".into(),
            ));
        }
        let switch_latency_us = self.switch_latency_us.unwrap_or(1.0);
        let max = aifabric::packet::MAX_LATENCY_US;
        if !(0.0..=max).contains(&switch_latency_us) {
            return Err(Failure::BadArgument(format!(
                "--switch-latency-us {}: give microseconds from 0 to {max:e} (a switch \
                 forwards in about 1)",
                aifabric::size::short_number(switch_latency_us)
            )));
        }
        Ok(aifabric::Setup {
            lb,
            seed: self.seed.unwrap_or(1),
            channels: self.channels,
            plan: bgp.plan(),
            bgp: bgp.config(),
            net: NetParams {
                scale_up_gpus: self.scale_up.unwrap_or(NetParams::default().scale_up_gpus),
                scale_up_bytes_per_s: scale_up_gbs * 1e9,
                switch_latency_s: switch_latency_us * 1e-6,
                ..NetParams::default()
            },
        })
    }
}

/// What failed or is drained; the same flags on every command that takes a scenario.
/// The maintenance state a failure sweep, a report or the demo starts from: failed and
/// hard-drained elements only (a sweep cannot start from a soft drain, which still carries
/// traffic when nothing else is left, so the flag is not offered). Selectors as for
/// [`ScenarioArgs`].
#[derive(clap::Args, Debug, Default)]
#[command(next_help_heading = "Starting state (selectors, as for every scenario)")]
pub(crate) struct StartArgs {
    /// Failed devices or links.
    #[arg(long, value_delimiter = ',', value_name = "SELECTOR")]
    fail: Vec<String>,
    /// Hard-drained (removed from service).
    #[arg(long, value_delimiter = ',', value_name = "SELECTOR")]
    drain: Vec<String>,
    /// A YAML file with `fail` and `drain` lists of selectors (added to the flags).
    #[arg(long, value_name = "FILE")]
    scenario: Option<String>,
    /// Not offered (hidden from the help), but parsed so that it is refused with the reason
    /// rather than as an unknown flag.
    #[arg(long = "drain-soft", value_delimiter = ',', hide = true)]
    drain_soft: Vec<String>,
}

impl From<StartArgs> for ScenarioArgs {
    fn from(a: StartArgs) -> ScenarioArgs {
        ScenarioArgs {
            fail: a.fail,
            drain: a.drain,
            drain_soft: a.drain_soft,
            scenario: a.scenario,
            as_built: Vec::new(),
        }
    }
}

/// What `lab up` and `export` configure: the plan, or the network as built at the link
/// speeds a scenario file or an inventory gives.
#[derive(clap::Args, Debug, Default)]
#[command(next_help_heading = "The network as built")]
pub(crate) struct SpeedArgs {
    /// A scenario file whose `link_speeds` the links run at (what `aifabric import`
    /// writes); its failures and drains are not configured (`lab check` applies them).
    #[arg(long, value_name = "FILE")]
    scenario: Option<String>,
    /// The network as built (as every command takes it): its links at the speeds found;
    /// its missing and miswired links are not configured away (`lab check --as-built`
    /// takes them down).
    #[arg(long, value_name = "DIR|FILE", num_args = 1..)]
    as_built: Vec<String>,
}

impl SpeedArgs {
    /// The flags as given (for a hint naming the next command), empty without any.
    pub(crate) fn flags(&self) -> Vec<&str> {
        let mut v = Vec::new();
        if let Some(s) = &self.scenario {
            v.extend(["--scenario", s.as_str()]);
        }
        if !self.as_built.is_empty() {
            v.push("--as-built");
            v.extend(self.as_built.iter().map(String::as_str));
        }
        v
    }

    /// Set `f`'s links to the speeds given; returns whether the scenario also fails or
    /// drains something (applied by `lab check`, not here).
    pub(crate) fn apply(&self, f: &mut Fabric) -> Result<bool, Failure> {
        let s = ScenarioArgs {
            scenario: self.scenario.clone(),
            as_built: self.as_built.clone(),
            ..ScenarioArgs::default()
        }
        .resolve(f)?;
        Ok(!s.unusable().is_empty() || !s.drained_soft.is_empty())
    }
}

/// Selectors: a name prefix (`east.bag.plane3`, `east.dc1`, a device name), a bundle
/// `A--B` or one member `A--B#2`, or `pd:NAME`. Repeat a flag or separate with commas.
#[derive(clap::Args, Debug, Default)]
#[command(next_help_heading = "Scenario (what failed or is drained)")]
pub(crate) struct ScenarioArgs {
    /// Failed devices or links.
    #[arg(long, value_delimiter = ',', value_name = "SELECTOR")]
    fail: Vec<String>,
    /// Hard-drained (removed from service).
    #[arg(long, value_delimiter = ',', value_name = "SELECTOR")]
    drain: Vec<String>,
    /// Soft-drained (graceful shutdown: used only when nothing else is left).
    #[arg(long = "drain-soft", value_delimiter = ',', value_name = "SELECTOR")]
    drain_soft: Vec<String>,
    /// A YAML file with `fail`, `drain` and `drain_soft` lists of selectors (added to the
    /// flags), and `link_speeds` (links at another speed: what `aifabric import` writes).
    #[arg(long, value_name = "FILE")]
    scenario: Option<String>,
    /// The network as built, its drift from the plan failed on top of the rest (every
    /// planned link missing or miswired; see `aifabric drift`) and links at the speed found:
    /// a directory is a NetBox export (devices.csv, interfaces.csv, cables.csv, or the
    /// API's JSON), a file an LLDP neighbour table (`lldpctl -f json` as DEVICE.json, or
    /// CSV), whose cables replace NetBox's. `aifabric import` reads it once into a scenario
    /// file.
    #[arg(long, value_name = "DIR|FILE", num_args = 1..)]
    as_built: Vec<String>,
}

impl ScenarioArgs {
    /// The scenario as the user gave it: `fail A, B; drain C; scenario FILE` (empty: none).
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (what, list) in [
            ("fail", &self.fail),
            ("drain", &self.drain),
            ("drain-soft", &self.drain_soft),
        ] {
            if !list.is_empty() {
                parts.push(format!("{what} {}", list.join(", ")));
            }
        }
        if let Some(path) = &self.scenario {
            parts.push(format!("scenario {path}"));
        }
        if !self.as_built.is_empty() {
            parts.push(format!("as built {}", self.as_built.join(", ")));
        }
        parts.join("; ")
    }

    pub(crate) fn resolve(&self, f: &mut Fabric) -> Result<Scenario, Failure> {
        let mut s = Scenario::from_selectors(f, &self.fail, &self.drain, &self.drain_soft)
            .map_err(|e| Failure::BadArgument(e.to_string()))?;
        // The scenario file is read first (its errors before the inventory's), its speeds set
        // last: the drift of `--as-built` is taken against the plan.
        let file = match &self.scenario {
            Some(path) => {
                let (file, src) = spec::scenario::load_scenario(path).map_err(Failure::BadInput)?;
                spec::scenario::apply_scenario(f, &file, &src, &mut s)
                    .map_err(Failure::BadInput)?;
                Some((file, src))
            }
            None => None,
        };
        if !self.as_built.is_empty() {
            let (dirs, files): (Vec<&String>, Vec<&String>) = self
                .as_built
                .iter()
                .partition(|p| std::path::Path::new(p).is_dir());
            if dirs.len() > 1 {
                return Err(Failure::BadArgument(format!(
                    "--as-built: one NetBox export at most (directories {}); give LLDP tables \
                     as files",
                    dirs.iter()
                        .map(|d| d.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            let netbox = dirs.first().map(std::path::Path::new);
            let lldp: Vec<&std::path::Path> = files.iter().map(std::path::Path::new).collect();
            let r = aifabric::as_built::lay_over(f, netbox, &lldp, &mut s)?;
            if !r.clean() {
                // Said beside the output (on stderr, as progress is): the JSON keeps its
                // contract, and the scenario's failed links count them.
                let given = self.as_built.join(" ");
                let _ = std::io::Write::write_all(
                    &mut std::io::stderr(),
                    format!(
                        "as built ({given}): {} planned link(s) missing or miswired, failed on \
                         top of the plan, {} at another speed, at the speed found (`aifabric \
                         drift --plan ...` lists them)\n",
                        r.lost_links.len(),
                        r.link_speeds.len()
                    )
                    .as_bytes(),
                );
            }
        }
        if let Some((file, src)) = &file {
            spec::scenario::apply_link_speeds(f, file, src).map_err(Failure::BadInput)?;
        }
        Ok(s)
    }
}

/// Control-plane settings.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Control plane (BGP)")]
pub(crate) struct BgpArgs {
    /// ASN plan: `rfc7938` (tiers share ASNs, valleys rejected), `per-plane` (spines and BAG
    /// share per plane) or `unique`.
    #[arg(long, default_value = "rfc7938")]
    asn_plan: AsnPlan,
    /// Link-bandwidth community: `cumulative`, `multipaths` (path counts) or `none` (ECMP).
    #[arg(long, default_value = "cumulative")]
    bandwidth: BandwidthMode,
    /// Largest hardware next-hop group: weights whose smallest integer ratio fits are programmed
    /// exactly (equal ones one entry each), others are quantized into this many entries.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=65536))]
    group_size: u32,
    /// Maximum multipaths.
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u32).range(1..))]
    max_paths: u32,
    /// NSF capacity-aware pruning: weight a rack switch's planes by the links left usable
    /// toward the destination rack.
    #[arg(long)]
    nsf_pruning: bool,
    /// What receivers do when a multipath lacks the link-bandwidth community (FRR):
    /// `ecmp` (fall back to equal weights), `skip` (ignore such paths) or `default:N` (weight
    /// them as N).
    #[arg(long, default_value = "ecmp")]
    missing_bandwidth: MissingBandwidth,
    /// How soft drains are signalled: `gshut` (graceful shutdown, LOCAL_PREF 0) or
    /// `prepend:N` (the drained side prepends its ASN N times).
    #[arg(long, default_value = "gshut")]
    soft_drain: SoftDrain,
}

impl BgpArgs {
    /// The library setup these flags give, engine options at their defaults.
    pub(crate) fn setup(&self) -> aifabric::Setup {
        aifabric::Setup {
            plan: self.plan(),
            bgp: self.config(),
            ..aifabric::Setup::default()
        }
    }

    pub(crate) fn plan(&self) -> AsnPlan {
        self.asn_plan
    }

    pub(crate) fn config(&self) -> BgpConfig {
        BgpConfig {
            bandwidth: self.bandwidth,
            max_paths: self.max_paths,
            group_size: self.group_size,
            nsf_pruning: self.nsf_pruning,
            soft_drain: self.soft_drain,
            missing: self.missing_bandwidth,
        }
    }
}

/// `--engine`: clap's possible values (listed in `--help` and errors), parsed into the
/// library's [`aifabric::Engine`].
fn engine_parser() -> impl clap::builder::TypedValueParser<Value = aifabric::Engine> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(aifabric::Engine::ALL.map(|e| e.name()))
        .try_map(|s| s.parse::<aifabric::Engine>())
}

/// The operations `collective` runs (the library also knows broadcast and reduce, for traces).
/// An output file's path: refused at once (exit 2, naming what is there) when something other
/// than a regular file is at it (a device node, a FIFO, a symbolic link, a directory), so no
/// run ends by destroying `/dev/null` or by failing after its work.
pub(crate) fn output_file(s: &str) -> Result<std::path::PathBuf, String> {
    checked_path(s, aifabric::check_output_file)
}

/// A directory outputs are written into: as [`output_file`], for a directory (a symbolic link
/// to a directory is fine: the files go through it).
pub(crate) fn output_dir(s: &str) -> Result<std::path::PathBuf, String> {
    checked_path(s, aifabric::check_output_dir_into)
}

/// A directory replaced as a whole (an export's set of files): as [`output_dir`], but a
/// symbolic link is refused too (replacing the directory would replace the link).
pub(crate) fn replaced_dir(s: &str) -> Result<std::path::PathBuf, String> {
    checked_path(s, aifabric::check_output_dir)
}

fn checked_path(
    s: &str,
    check: fn(&std::path::Path) -> std::io::Result<()>,
) -> Result<std::path::PathBuf, String> {
    let p = std::path::PathBuf::from(s);
    check(&p).map_err(|e| e.to_string())?;
    Ok(p)
}

pub(crate) fn parse_op(s: &str) -> Result<Op, String> {
    aifabric::collective_op(s)
}

/// A size flag (`--size`): a positive byte count. Its flag takes hyphen values, so `-1` comes
/// here (rather than clap's tip to write `-- -1`) and is told what a size is.
pub(crate) fn parse_size_arg(s: &str) -> Result<u64, String> {
    aifabric::size::parse_size(s)
        .filter(|&b| b > 0)
        .ok_or_else(|| {
            format!(
                "`{s}` is not a size: give a size in bytes like 1M, 4KiB, 2G or 4096 \
             (binary multiples; at least 1 byte, never negative)"
            )
        })
}
