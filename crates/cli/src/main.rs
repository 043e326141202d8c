//! `aifabric`: the command line. Thin by design: parse arguments, call the libraries, render.
//!
//! Exit codes: 0 ok, 1 runtime failure (e.g. an output file cannot be written), 2 bad input
//! (spec or arguments).
#![forbid(unsafe_code)]

mod demo;
mod failures;
mod output;
mod render;
mod routes;
mod simulate;
mod trace;
mod traffic;

use aifabric_engine::{Lb, NetParams};
use aifabric_model::{Fabric, FabricView, Scenario};
use aifabric_routing::aggregation::{Aggregation, AggregationTier};
use aifabric_routing::bgp::{AsnPlan, BandwidthMode, BgpConfig, SoftDrain};
use aifabric_routing::ucmp::MissingBandwidth;
use aifabric_workload::{Algo, Op, Placement};
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::process::ExitCode;

/// aifabric: design, verify and predict gigawatt-scale AI training networks.
#[derive(Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the built-in specs (usable wherever SPEC is asked for).
    Specs {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Capacity report: oversubscription per tier, inter-region capacity, inventory, power,
    /// bisection by max-flow.
    Capacity {
        /// Built-in spec name or YAML file.
        spec: String,
        /// Machine-readable output (the JSON contract in README.md).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        scenario: ScenarioArgs,
    },
    /// Build the model and print its inventory; `--out` writes the whole model as JSON.
    Build {
        /// Built-in spec name or YAML file.
        spec: String,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Write the whole model (devices, links, bundles) as JSON to this file.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// What a device forwards toward one prefix (or every prefix): BGP next hops with ideal and
    /// quantized UCMP weights, under failures and drains.
    Routes {
        /// Built-in spec name or YAML file.
        spec: String,
        /// The device asking (a switch name; see `aifabric build SPEC --out model.json`).
        #[arg(long)]
        device: String,
        /// A rack prefix `<zone>.rack<N>` (or its rack switch's name); all prefixes if absent.
        #[arg(long)]
        prefix: Option<String>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        scenario: ScenarioArgs,
        #[command(flatten)]
        bgp: BgpArgs,
    },
    /// Aggregation at the L2 -> BAG border and the blackholes it leaves under failures:
    /// borders that advertise a zone aggregate but cannot reach some of its racks.
    Blackholes {
        /// Built-in spec name or YAML file.
        spec: String,
        /// `unconditional`, `conditional` (all contributors) or `conditional:N`.
        #[arg(long, default_value = "unconditional", value_parser = parse_aggregation)]
        aggregation: Aggregation,
        /// Where aggregates are made: `zone` (L2 zone -> BAG) or `region` (BAG -> other
        /// regions).
        #[arg(long, value_enum, default_value_t = TierArg::Zone)]
        tier: TierArg,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        scenario: ScenarioArgs,
        #[command(flatten)]
        bgp: BgpArgs,
    },
    /// DSF Input Balanced Mode: what each interface node keeps toward each destination
    /// cluster once remote failures have propagated.
    Ibm {
        /// Built-in spec name or YAML file.
        spec: String,
        /// Machine-readable output (every reduced source / cluster pair).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        scenario: ScenarioArgs,
    },
    /// Failure-domain sweep: what the fabric loses when each shared-risk group fails (or
    /// pairs of them, or random draws): routed capacity under BGP/UCMP, the max-flow bound,
    /// GPUs cut off, blackholes, tier oversubscription. Worst first.
    Failures {
        /// Built-in spec name or YAML file.
        spec: String,
        /// `single` (every group), `single:CLASS`, `pairs:CLASS` or `montecarlo`. Classes:
        /// building, hall, pd, plane, chassis, linecard, conduit, srg.
        #[arg(long, default_value = "single")]
        sweep: String,
        /// Monte Carlo draws.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
        samples: u64,
        /// Monte Carlo seed (draw i uses a generator seeded from (seed, i)).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Monte Carlo failure probability of each group of a class, `CLASS=P` (replaces the
        /// default model for that class; repeat or separate with commas).
        #[arg(long, value_delimiter = ',', value_name = "CLASS=P")]
        probability: Vec<String>,
        /// Monte Carlo probability from reliability figures, `CLASS=MTBF_HOURS/MTTR_HOURS`
        /// (P = MTTR / (MTBF + MTTR)).
        #[arg(long, value_delimiter = ',', value_name = "CLASS=MTBF/MTTR")]
        mtbf: Vec<String>,
        /// Aggregate prefixes (`unconditional`, `conditional`, `conditional:N`) and report the
        /// blackholes each scenario leaves; without it every border carries the specifics.
        #[arg(long, value_parser = parse_aggregation)]
        aggregation: Option<Aggregation>,
        /// Aggregation tier: `zone` or `region`.
        #[arg(long, value_enum, default_value_t = TierArg::Zone)]
        tier: TierArg,
        /// For the worst `--top` scenarios: drain the affected BAG plane, and conditional
        /// aggregation, with the blackholes and capacity of each (needs `--aggregation`).
        #[arg(long)]
        mitigations: bool,
        /// Run the same sweep on the spec built planar and built spread, and compare.
        #[arg(long)]
        compare_inter_bag: bool,
        /// Rows in the table (and scenarios given mitigations).
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// Machine-readable output: every scenario and the summary.
        #[arg(long)]
        json: bool,
        /// Also write the JSON report to this file (atomically).
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        #[command(flatten)]
        bgp: BgpArgs,
    },
    /// Simulate one collective on the fabric for a range of sizes: an nccl-tests-like table
    /// (size, time, algBW, busBW), link utilization per tier and the busiest links; with a
    /// scenario, the slowdown against the healthy fabric.
    Collective {
        /// Built-in spec name or YAML file.
        spec: String,
        /// all_reduce, all_gather, reduce_scatter or all_to_all.
        #[arg(long, default_value = "all_reduce", value_parser = parse_op)]
        op: Op,
        /// auto (the fastest applicable for each size, by latency + bandwidth terms calibrated
        /// on the fabric), ring, tree, hd (halving-doubling), direct or hierarchical; ring
        /// (direct for all_to_all) if absent, as nccl-tests runs one algorithm.
        #[arg(long)]
        algo: Option<Algo>,
        /// GPUs taking part.
        #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(2..))]
        gpus: u32,
        /// packed, spread, fragmented[:SEED] or topology-aware.
        #[arg(long, default_value = "packed")]
        placement: Placement,
        /// Sizes, nccl-tests style: MIN:MAX[:FACTOR] (binary K, M, G) or one size.
        #[arg(long, default_value = "1M:1G:4")]
        sizes: aifabric::Sizes,
        /// Per-step software latency, microseconds.
        #[arg(long, default_value_t = 5.0)]
        alpha_us: f64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sim: SimArgs,
        #[command(flatten)]
        scenario: ScenarioArgs,
        #[command(flatten)]
        bgp: BgpArgs,
    },
    /// Simulate one training iteration of a job (a YAML file): step time, its breakdown
    /// (compute, bubble, exposed communication per collective) and, with a scenario, the
    /// slowdown against the healthy fabric.
    Job {
        /// Built-in spec name or YAML file.
        spec: String,
        /// The job file (see examples/jobs/).
        #[arg(long)]
        job: String,
        /// Override the job's placement: packed, spread, fragmented[:SEED], topology-aware.
        #[arg(long)]
        placement: Option<Placement>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sim: SimArgs,
        #[command(flatten)]
        scenario: ScenarioArgs,
        #[command(flatten)]
        bgp: BgpArgs,
    },
    /// Simulate a traffic matrix event by event: flows with sizes and start times between
    /// GPUs (htsim's connection-matrix file, a CSV, or a generated pattern) arrive and leave,
    /// rates max-min fair between events. Prints flow completion times (min, P50, P99, max,
    /// the slowest flows), link utilization per tier and, with a scenario, the slowdown.
    Traffic {
        /// Built-in spec name or YAML file.
        spec: String,
        /// Traffic file: htsim's `.cm` format (`Nodes N`, `Connections C`, optional
        /// `Triggers T`; `SRC->DST id I start PS size B`, `trigger K`, `send_done_trigger K`)
        /// or a CSV (`src,dst,bytes,start_us`) when it ends in `.csv`. Node i is the i-th
        /// placed GPU.
        #[arg(long, required_unless_present = "pattern", conflicts_with = "pattern")]
        tm: Option<String>,
        /// Generate instead: permutation, incast:N (N senders to node 0), all-to-all or
        /// random:N (N flows between random pairs), over --gpus GPUs, all starting at 0.
        #[arg(long)]
        pattern: Option<aifabric_workload::traffic::Pattern>,
        /// Bytes per generated flow (binary K, M, G).
        #[arg(long, default_value = "2M", value_parser = parse_size_arg)]
        size: u64,
        /// GPUs to place (default: the file's node count; 1024 for a pattern).
        #[arg(long, value_parser = clap::value_parser!(u32).range(2..))]
        gpus: Option<u32>,
        /// packed, spread, fragmented[:SEED] or topology-aware.
        #[arg(long, default_value = "packed")]
        placement: Placement,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sim: SimArgs,
        #[command(flatten)]
        scenario: ScenarioArgs,
        #[command(flatten)]
        bgp: BgpArgs,
    },
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
    Replay {
        /// Built-in spec name or YAML file.
        spec: String,
        /// The trace directory.
        #[arg(long)]
        trace: std::path::PathBuf,
        /// Placement: packed, spread, fragmented[:SEED], topology-aware (default: the
        /// trace's, else packed).
        #[arg(long)]
        placement: Option<Placement>,
        /// Peak TFLOP/s per GPU for `num_ops` (default: the trace's, else 989, H100).
        #[arg(long)]
        peak_tflops: Option<f64>,
        /// Share of the peak reached (default: the trace's, else 0.4).
        #[arg(long)]
        efficiency: Option<f64>,
        /// Per-step collective latency, microseconds (default: the trace's, else 5).
        #[arg(long)]
        alpha_us: Option<f64>,
        /// Finished nodes remembered per rank (dependencies on older ones are bounded, and
        /// counted), and the most unfinished nodes read ahead per rank.
        #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
        window: u32,
        /// Machine-readable output (per-rank times and the whole critical path).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sim: SimArgs,
        #[command(flatten)]
        scenario: ScenarioArgs,
        #[command(flatten)]
        bgp: BgpArgs,
    },
    /// The main job, end to end on the built-in `prometheus`: build it, print the capacity
    /// summary, run the single-SRG failure sweep, simulate a reference training job healthy
    /// and under the worst failure it survives, write the HTML report, say where it is.
    Demo {
        /// Directory for report.html and report.json.
        #[arg(long, default_value = "aifabric-demo")]
        out: std::path::PathBuf,
        /// No progress bars.
        #[arg(long)]
        quiet: bool,
        /// Machine-readable summary instead of the running commentary.
        #[arg(long)]
        json: bool,
    },
    /// One self-contained HTML report (inline SVG, opens from disk) and report.json with the
    /// same data: fabric summary and hierarchy, oversubscription per tier, inter-BAG capacity,
    /// a failure sweep (capacity-retained CDF, worst scenarios), collective busBW vs message
    /// size per load-balancing mode, link-utilization histogram.
    Report {
        /// Built-in spec name or YAML file.
        spec: String,
        /// Directory to write report.html and report.json into (created if missing).
        #[arg(long)]
        out: std::path::PathBuf,
        /// Failure classes swept: a class (building, hall, pd, plane, chassis, linecard,
        /// conduit, srg) or `all`.
        #[arg(long, default_value = "plane")]
        sweep: String,
        /// GPUs of the collective benchmark.
        #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(2..))]
        gpus: u32,
        /// Print report.json to stdout as well.
        #[arg(long)]
        json: bool,
    },
    /// Export the fabric for other tools: NetBox bulk-import CSVs (devices, interfaces,
    /// cables with lengths, IP addresses, ASNs), GraphML and node-link JSON for NetworkX, the
    /// IP plan as CSV, or a DOT overview at zone / BAG-plane level. Files are written
    /// atomically into DIR.
    Export {
        /// Built-in spec name or YAML file.
        spec: String,
        /// netbox, graphml, nodelink, ipplan or dot.
        #[arg(long, value_parser = parse_format)]
        format: aifabric_report::export::Format,
        /// Directory to write into (created if missing).
        #[arg(long)]
        out: std::path::PathBuf,
        /// Machine-readable summary of the files written.
        #[arg(long)]
        json: bool,
    },
    /// Check a spec; prints nothing but a summary when it is valid.
    Validate {
        /// Built-in spec name or YAML file.
        spec: String,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

/// `aifabric chakra ...`.
#[derive(Subcommand)]
enum ChakraCommand {
    /// Write the trace of one iteration of a job file: one file per rank (the job model's
    /// critical path as a DAG) and comm_group.json. Replaying it gives the job's step time.
    Synth {
        /// The job file (see examples/jobs/).
        #[arg(long)]
        job: String,
        /// Directory to write into (created if missing).
        #[arg(long)]
        out: std::path::PathBuf,
        /// File name prefix: `<prefix>.<rank>.et.gz`.
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
        #[arg(long)]
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
struct SimArgs {
    /// ecmp, eecmp:N (N queue pairs per GPU pair), ucmp, spray or te.
    #[arg(long, default_value = "ecmp")]
    lb: Lb,
    /// Seed of the switches' ECMP hashes (and of fragmented placement draws).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Channels per collective, each an equal share on its own connections; 0 = automatic:
    /// for rings one per GPU of the scale-up domain (rail-aligned, as NCCL on 8-GPU servers),
    /// else 1.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=64))]
    channels: u32,
    /// GPUs per scale-up (NVLink) domain (`collective`; a job file sets its own).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    scale_up: u32,
    /// Scale-up bandwidth per GPU and direction, GB/s (`collective`).
    #[arg(long, default_value_t = 450.0)]
    scale_up_gbs: f64,
    /// Forwarding latency per switch, microseconds.
    #[arg(long, default_value_t = 1.0)]
    switch_latency_us: f64,
}

impl SimArgs {
    fn setup(&self, bgp: &BgpArgs) -> Result<aifabric::Setup, Failure> {
        if !(self.scale_up_gbs.is_finite() && self.scale_up_gbs > 0.0) {
            return Err(Failure::BadArgument(
                "--scale-up-gbs must be a positive number".into(),
            ));
        }
        if !(self.switch_latency_us.is_finite() && self.switch_latency_us >= 0.0) {
            return Err(Failure::BadArgument(
                "--switch-latency-us must be a number >= 0".into(),
            ));
        }
        Ok(aifabric::Setup {
            lb: self.lb,
            seed: self.seed,
            channels: self.channels,
            plan: bgp.plan(),
            bgp: bgp.config(),
            net: NetParams {
                scale_up_gpus: self.scale_up,
                scale_up_bytes_per_s: self.scale_up_gbs * 1e9,
                switch_latency_s: self.switch_latency_us * 1e-6,
                ..NetParams::default()
            },
        })
    }
}

/// What failed or is drained; the same flags on every command that takes a scenario.
/// Selectors: a name prefix (`east.bag.plane3`, `east.dc1`, a device name), a bundle
/// `A--B` or one member `A--B#2`, or `pd:NAME`. Repeat a flag or separate with commas.
#[derive(clap::Args, Debug, Default)]
struct ScenarioArgs {
    /// Failed devices or links.
    #[arg(long, value_delimiter = ',', value_name = "SELECTOR")]
    fail: Vec<String>,
    /// Hard-drained (removed from service).
    #[arg(long, value_delimiter = ',', value_name = "SELECTOR")]
    drain: Vec<String>,
    /// Soft-drained (graceful shutdown: used only when nothing else is left).
    #[arg(long = "drain-soft", value_delimiter = ',', value_name = "SELECTOR")]
    drain_soft: Vec<String>,
    /// A YAML file with `fail`, `drain` and `drain_soft` lists of selectors (added to the flags).
    #[arg(long, value_name = "FILE")]
    scenario: Option<String>,
}

impl ScenarioArgs {
    fn resolve(&self, f: &Fabric) -> Result<Scenario, Failure> {
        let mut s = Scenario::from_selectors(f, &self.fail, &self.drain, &self.drain_soft)
            .map_err(|e| Failure::BadArgument(e.to_string()))?;
        if let Some(path) = &self.scenario {
            let (file, src) =
                aifabric_spec::scenario::load_scenario(path).map_err(Failure::BadInput)?;
            aifabric_spec::scenario::apply_scenario(f, &file, &src, &mut s)
                .map_err(Failure::BadInput)?;
        }
        Ok(s)
    }
}

/// Control-plane settings.
#[derive(clap::Args, Debug)]
struct BgpArgs {
    /// ASN plan: `rfc7938` (tiers share ASNs, valleys rejected), `per-plane` (spines and BAG
    /// share per plane) or `unique`.
    #[arg(long, value_enum, default_value_t = AsnPlanArg::Rfc7938)]
    asn_plan: AsnPlanArg,
    /// Link-bandwidth community: `cumulative`, `multipaths` (path counts) or `none` (ECMP).
    #[arg(long, value_enum, default_value_t = BandwidthArg::Cumulative)]
    bandwidth: BandwidthArg,
    /// Hardware next-hop group size for quantized weights.
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
    #[arg(long, default_value = "ecmp", value_parser = parse_missing)]
    missing_bandwidth: MissingBandwidth,
    /// How soft drains are signalled: `gshut` (graceful shutdown, LOCAL_PREF 0) or
    /// `prepend:N` (the drained side prepends its ASN N times).
    #[arg(long, default_value = "gshut", value_parser = parse_soft_drain)]
    soft_drain: SoftDrain,
}

fn parse_missing(s: &str) -> Result<MissingBandwidth, String> {
    match s {
        "ecmp" => Ok(MissingBandwidth::EcmpFallback),
        "skip" => Ok(MissingBandwidth::SkipMissing),
        _ => match s.strip_prefix("default:").map(str::parse::<u64>) {
            Some(Ok(n)) => Ok(MissingBandwidth::DefaultWeight(n)),
            _ => Err("use `ecmp`, `skip` or `default:N`".to_owned()),
        },
    }
}

fn parse_soft_drain(s: &str) -> Result<SoftDrain, String> {
    match s {
        "gshut" => Ok(SoftDrain::GracefulShutdown),
        _ => match s.strip_prefix("prepend:").map(str::parse::<u32>) {
            Some(Ok(n)) if (1..=32).contains(&n) => Ok(SoftDrain::Prepend(n)),
            _ => Err("use `gshut` or `prepend:N` with N from 1 to 32".to_owned()),
        },
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum TierArg {
    Zone,
    Region,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum AsnPlanArg {
    Rfc7938,
    PerPlane,
    Unique,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum BandwidthArg {
    Cumulative,
    Multipaths,
    None,
}

impl BgpArgs {
    fn plan(&self) -> AsnPlan {
        match self.asn_plan {
            AsnPlanArg::Rfc7938 => AsnPlan::Rfc7938,
            AsnPlanArg::PerPlane => AsnPlan::PerPlane,
            AsnPlanArg::Unique => AsnPlan::Unique,
        }
    }

    fn config(&self) -> BgpConfig {
        BgpConfig {
            bandwidth: match self.bandwidth {
                BandwidthArg::Cumulative => BandwidthMode::Cumulative,
                BandwidthArg::Multipaths => BandwidthMode::NumMultipaths,
                BandwidthArg::None => BandwidthMode::None,
            },
            max_paths: self.max_paths,
            group_size: self.group_size,
            nsf_pruning: self.nsf_pruning,
            soft_drain: self.soft_drain,
            missing: self.missing_bandwidth,
        }
    }
}

fn parse_format(s: &str) -> Result<aifabric_report::export::Format, String> {
    aifabric_report::export::Format::parse(s).ok_or_else(|| {
        format!(
            "unknown format `{s}`; use {}",
            aifabric_report::export::Format::HELP
        )
    })
}

fn parse_aggregation(s: &str) -> Result<Aggregation, String> {
    match s {
        "unconditional" => Ok(Aggregation::Unconditional),
        "conditional" => Ok(Aggregation::Conditional { min: None }),
        _ => match s.strip_prefix("conditional:").map(str::parse::<u32>) {
            Some(Ok(n)) if n > 0 => Ok(Aggregation::Conditional { min: Some(n) }),
            _ => Err("use `unconditional`, `conditional` or `conditional:N` (N >= 1)".to_owned()),
        },
    }
}

/// A failure with its exit code.
enum Failure {
    BadInput(aifabric_spec::SpecError),
    BadArgument(String),
    Runtime(String),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BadInput(e)) => {
            eprintln!("error: {e}");
            if std::io::stderr().is_terminal() && e.line > 0 {
                eprintln!("{:?}", miette::Report::new(e));
            }
            ExitCode::from(2)
        }
        Err(Failure::BadArgument(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
        Err(Failure::Runtime(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
    }
}

fn load(spec: &str) -> Result<aifabric_model::Fabric, Failure> {
    aifabric_spec::load(spec).map_err(Failure::BadInput)
}

/// The operations `collective` runs (the library also knows broadcast and reduce, for traces).
fn parse_op(s: &str) -> Result<Op, String> {
    match s.parse::<Op>() {
        Ok(op @ (Op::AllReduce | Op::AllGather | Op::ReduceScatter | Op::AllToAll)) => Ok(op),
        _ => Err(format!(
            "unknown operation `{s}`; use all_reduce, all_gather, reduce_scatter or all_to_all"
        )),
    }
}

fn parse_size_arg(s: &str) -> Result<u64, String> {
    aifabric::size::parse_size(s)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("bad size `{s}`; use bytes like 4096, 256K, 2M or 1G"))
}

/// Print `v` as JSON with `--json`, else as the human table `human` makes of it.
fn emit<T: serde::Serialize>(
    json: bool,
    v: &T,
    human: impl FnOnce(&T) -> String,
) -> Result<(), Failure> {
    if json {
        print_json(v)
    } else {
        print!("{}", human(v));
        Ok(())
    }
}

/// Write `v` as JSON to `path`, atomically.
fn write_json<T: serde::Serialize>(path: &std::path::Path, v: &T) -> Result<(), Failure> {
    output::write_atomic(path, |w| {
        serde_json::to_writer_pretty(w, v).map_err(std::io::Error::other)
    })
    .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))
}

fn print_json<T: serde::Serialize>(v: &T) -> Result<(), Failure> {
    let s = serde_json::to_string_pretty(v).map_err(|e| Failure::Runtime(e.to_string()))?;
    println!("{s}");
    Ok(())
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Failures {
            spec,
            sweep,
            samples,
            seed,
            probability,
            mtbf,
            aggregation,
            tier,
            mitigations,
            compare_inter_bag,
            top,
            json,
            out,
            bgp,
        } => {
            let args = failures::Args {
                sweep,
                samples,
                seed,
                probability,
                mtbf,
                aggregation: aggregation.map(|a| aifabric_failures::mitigate::AggregationSetup {
                    aggregation: a,
                    tier: match tier {
                        TierArg::Zone => AggregationTier::Zone,
                        TierArg::Region => AggregationTier::Region,
                    },
                    cfg: bgp.config(),
                }),
                mitigations,
                top,
                plan: bgp.plan(),
                cfg: bgp.config(),
            };
            if compare_inter_bag {
                let (name, text) = aifabric_spec::read(&spec).map_err(Failure::BadInput)?;
                let cmp = failures::compare(&name, &text, &args)?;
                if let Some(path) = &out {
                    write_json(path, &cmp)?;
                }
                emit(json, &cmp, render::comparison)?;
            } else {
                let f = load(&spec)?;
                let report = failures::sweep(&f, &args)?;
                if let Some(path) = &out {
                    write_json(path, &report)?;
                }
                emit(json, &report, |r| render::failures(r, top))?;
            }
        }
        Command::Specs { json } => {
            let list: Vec<_> = aifabric_spec::builtin::list()
                .map(|(name, description)| serde_json::json!({"name": name, "description": description}))
                .collect();
            if json {
                print_json(&list)?;
            } else {
                for (name, d) in aifabric_spec::builtin::list() {
                    println!("{name:<14} {d}");
                }
            }
        }
        Command::Capacity {
            spec,
            json,
            scenario,
        } => {
            let f = load(&spec)?;
            // Capacity counts what can carry traffic: soft-drained links still can.
            let mask = scenario.resolve(&f)?.unusable();
            let report = aifabric_capacity::capacity_report(&f, &mask);
            emit(json, &report, render::capacity)?;
        }
        Command::Build { spec, json, out } => {
            let f = load(&spec)?;
            let inv = render::Inventory::of(&f);
            if let Some(path) = &out {
                output::write_atomic(path, |w| {
                    serde_json::to_writer(w, &FabricView(&f)).map_err(std::io::Error::other)
                })
                .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))?;
            }
            if json {
                print_json(&inv)?;
            } else {
                print!("{}", render::inventory(&inv));
                if let Some(path) = &out {
                    println!("model written to {}", path.display());
                }
            }
        }
        Command::Routes {
            spec,
            device,
            prefix,
            json,
            scenario,
            bgp,
        } => {
            let f = load(&spec)?;
            let scenario = scenario.resolve(&f)?;
            let views = routes::compute(
                &f,
                &scenario,
                &bgp.plan(),
                &bgp.config(),
                &device,
                prefix.as_deref(),
            )?;
            emit(json, &views, |v| render::routes(v))?;
        }
        Command::Blackholes {
            spec,
            aggregation,
            tier,
            json,
            scenario,
            bgp,
        } => {
            let f = load(&spec)?;
            let scenario = scenario.resolve(&f)?;
            let g = aifabric_routing::bgp::BgpGraph::new(&f, bgp.plan());
            let states = aifabric_routing::bgp::session_states(&f, &g, &scenario);
            let report = aifabric_routing::aggregation::blackholes(
                &f,
                &g,
                &states,
                &scenario,
                &bgp.config(),
                aggregation,
                match tier {
                    TierArg::Zone => AggregationTier::Zone,
                    TierArg::Region => AggregationTier::Region,
                },
            )
            .map_err(|e| Failure::Runtime(e.to_string()))?;
            emit(json, &report, render::blackholes)?;
        }
        Command::Ibm {
            spec,
            json,
            scenario,
        } => {
            let f = load(&spec)?;
            let mask = scenario.resolve(&f)?.unusable();
            let zones = aifabric_routing::ibm::input_balanced(&f, &mask);
            emit(json, &zones, |v| render::ibm(v))?;
        }
        Command::Collective {
            spec,
            op,
            algo,
            gpus,
            placement,
            sizes,
            alpha_us,
            json,
            sim,
            scenario,
            bgp,
        } => {
            if !(alpha_us.is_finite() && alpha_us >= 0.0) {
                return Err(Failure::BadArgument("--alpha-us must be >= 0".into()));
            }
            let setup = sim.setup(&bgp)?;
            let f = load(&spec)?;
            let study = aifabric::Study::new(&f, scenario.resolve(&f)?, setup);
            let report = study
                .collective(&aifabric::CollectiveRequest {
                    op,
                    algo,
                    gpus,
                    placement,
                    sizes: sizes.0,
                    alpha_s: alpha_us * 1e-6,
                })
                .map_err(simulate::failure)?;
            emit(json, &report, simulate::render_collective)?;
        }
        Command::Traffic {
            spec,
            tm,
            pattern,
            size,
            gpus,
            placement,
            json,
            sim,
            scenario,
            bgp,
        } => {
            let setup = sim.setup(&bgp)?;
            let source = match (tm, pattern) {
                (Some(path), _) => aifabric::TrafficSource::File(path),
                (None, Some(pattern)) => aifabric::TrafficSource::Pattern {
                    pattern,
                    gpus: gpus.unwrap_or(1024),
                    bytes: size,
                },
                (None, None) => {
                    return Err(Failure::BadArgument(
                        "give --tm FILE or --pattern; e.g. --pattern permutation".into(),
                    ))
                }
            };
            let f = load(&spec)?;
            let study = aifabric::Study::new(&f, scenario.resolve(&f)?, setup);
            let report = study
                .traffic(&source, gpus, placement)
                .map_err(simulate::failure)?;
            emit(json, &report, traffic::render)?;
        }
        Command::Job {
            spec,
            job,
            placement,
            json,
            sim,
            scenario,
            bgp,
        } => {
            let setup = sim.setup(&bgp)?;
            let it = aifabric_workload::job::load(&job).map_err(Failure::BadInput)?;
            let f = load(&spec)?;
            let study = aifabric::Study::new(&f, scenario.resolve(&f)?, setup);
            let report = study.job(&it, placement).map_err(simulate::failure)?;
            emit(json, &report, simulate::render_job)?;
        }
        Command::Chakra { command } => match command {
            ChakraCommand::Synth {
                job,
                out,
                prefix,
                plain,
                json,
            } => {
                let w = trace::synth(&job, &out, &prefix, !plain)?;
                emit(json, &w, |w| trace::render_written(w, &out))?;
            }
            ChakraCommand::Scale {
                input,
                ranks,
                out,
                dp_groups,
                json,
            } => {
                let s = trace::rescale(&input, ranks, &out, &dp_groups)?;
                emit(json, &s, |s| trace::render_scaled(s, &out))?;
            }
        },
        Command::Replay {
            spec,
            trace: dir,
            placement,
            peak_tflops,
            efficiency,
            alpha_us,
            window,
            json,
            sim,
            scenario,
            bgp,
        } => {
            let setup = sim.setup(&bgp)?;
            let positive = |v: Option<f64>, what: &str| match v {
                Some(x) if !(x.is_finite() && x > 0.0) => Err(Failure::BadArgument(format!(
                    "{what} must be a positive number, not {x}"
                ))),
                _ => Ok(v),
            };
            let peak = positive(peak_tflops, "--peak-tflops")?;
            let eff = positive(efficiency, "--efficiency")?;
            if let Some(a) = alpha_us.filter(|a| !(a.is_finite() && *a >= 0.0)) {
                return Err(Failure::BadArgument(format!(
                    "--alpha-us must be a number >= 0, not {a}"
                )));
            }
            let f = load(&spec)?;
            let scenario = scenario.resolve(&f)?;
            let opts = aifabric_chakra::fabric::FabricOptions {
                placement,
                lb: setup.lb,
                seed: setup.seed,
                channels: setup.channels,
                plan: setup.plan,
                bgp: setup.bgp,
                params: setup.net,
                scale_up_fixed: false,
                alpha_s: alpha_us.map(|a| a * 1e-6),
                peak_flops_per_s: peak.map(|p| p * 1e12),
                efficiency: eff,
                window,
            };
            let r = trace::replay(&f, &scenario, &dir, &opts)?;
            emit(json, &r, trace::render_replay)?;
        }
        Command::Demo { out, quiet, json } => {
            let summary = demo::run(&out, quiet, json)?;
            if json {
                print_json(&summary)?;
            }
        }
        Command::Report {
            spec,
            out,
            sweep,
            gpus,
            json,
        } => {
            let sweep = match sweep.as_str() {
                "all" => None,
                c => Some(failures::class(c, "--sweep")?),
            };
            let (name, text) = aifabric_spec::read(&spec).map_err(Failure::BadInput)?;
            let f = aifabric_spec::build_str(&name, &text).map_err(Failure::BadInput)?;
            let opts = aifabric_report::data::ReportOptions {
                sweep,
                gpus,
                spec_text: Some((name, text)),
                ..Default::default()
            };
            let bar = failures::progress_bar("report");
            let data = aifabric_report::data::build(&f, &opts, &|i, n, what| {
                bar.set_length(n);
                bar.set_position(i);
                bar.set_message(what.to_owned());
            })
            .map_err(|e| Failure::Runtime(e.to_string()))?;
            bar.finish_and_clear();
            let html = aifabric_report::html::render(&data)
                .map_err(|e| Failure::Runtime(format!("rendering the report: {e}")))?;
            std::fs::create_dir_all(&out)
                .map_err(|e| Failure::Runtime(format!("cannot create {}: {e}", out.display())))?;
            write_json(&out.join("report.json"), &data)?;
            let page = out.join("report.html");
            output::write_atomic(&page, |w| std::io::Write::write_all(w, html.as_bytes()))
                .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", page.display())))?;
            if json {
                print_json(&data)?;
            } else {
                println!("report: {}", page.display());
            }
        }
        Command::Export {
            spec,
            format,
            out,
            json,
        } => {
            let f = load(&spec)?;
            std::fs::create_dir_all(&out)
                .map_err(|e| Failure::Runtime(format!("cannot create {}: {e}", out.display())))?;
            let mut files = Vec::new();
            for name in format.files() {
                let path = out.join(name);
                output::write_atomic(&path, |w| {
                    aifabric_report::export::write(&f, format, name, w)
                        .map_err(std::io::Error::other)
                })
                .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))?;
                let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                files.push(serde_json::json!({"file": name, "path": path, "bytes": bytes}));
            }
            if json {
                print_json(&serde_json::json!({"spec": f.name, "files": files}))?;
            } else {
                for x in &files {
                    println!(
                        "{} ({} bytes)",
                        x["path"].as_str().unwrap_or(""),
                        x["bytes"]
                    );
                }
            }
        }
        Command::Validate { spec, json } => {
            let f = load(&spec)?;
            let inv = render::Inventory::of(&f);
            if json {
                print_json(&serde_json::json!({"valid": true, "inventory": inv}))?;
            } else {
                println!(
                    "{spec}: valid ({} GPUs, {} switches, {} links)",
                    inv.gpus, inv.switches, inv.links
                );
            }
        }
    }
    Ok(())
}
