//! One clap argument struct per command (the commands' flags); the help of each command is
//! its `Command` variant's doc comment in `args.rs`.

use super::{BgpArgs, PacketArgs, ScenarioArgs, SimArgs, StartArgs, SweepCommand};
use crate::args::{parse_op, parse_size_arg};
use aifabric::routing::{Aggregation, AggregationTier};
use aifabric::{Algo, Op, Placement, Proto};

// `aifabric specs` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct SpecsArgs {
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
}

// `aifabric capacity` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct CapacityArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// Machine-readable output (the JSON contract in README.md).
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) scenario: ScenarioArgs,
}

// `aifabric buffers` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct BuffersArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// Lossless priorities (PFC classes) per port.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=8))]
    pub(crate) lossless_priorities: u32,
    /// Largest frame, bytes.
    #[arg(long, default_value_t = 9216, value_parser = clap::value_parser!(u32).range(64..=65536))]
    pub(crate) mtu: u32,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
}

// `aifabric compare-fabrics` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct CompareFabricsArgs {
    /// Smaller flows and fewer GPUs per workload (seconds instead of a minute).
    #[arg(long)]
    pub(crate) quick: bool,
    /// Leave out the BAG-to-BAG links.
    #[arg(long)]
    pub(crate) no_bag: bool,
    /// PFC thresholds on the BAG-to-BAG cases, XOFF:XON in bytes per ingress link
    /// (default 200000:180000; e.g. 8000000:6000000 keeps a 60 km link busy).
    #[arg(long, value_name = "XOFF:XON", value_parser = aifabric::packet::parse_thresholds)]
    pub(crate) bag_pfc: Option<(u64, u64)>,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
}

// `aifabric build` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct BuildArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
    /// Write the whole model (devices, links, bundles) as JSON to this file.
    #[arg(long, value_parser = crate::args::output_file)]
    pub(crate) out: Option<std::path::PathBuf>,
}

// `aifabric routes` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct RoutesArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// The device asking (a switch name; see `aifabric build SPEC --out model.json`).
    #[arg(long)]
    pub(crate) device: String,
    /// A rack prefix `<zone>.rack<N>` (or its rack switch's name); all prefixes if absent.
    #[arg(long)]
    pub(crate) prefix: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) scenario: ScenarioArgs,
    #[command(flatten)]
    pub(crate) bgp: BgpArgs,
}

// `aifabric blackholes` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct BlackholesArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// `unconditional`, `conditional` (all contributors) or `conditional:N`.
    #[arg(long, default_value = "unconditional")]
    pub(crate) aggregation: Aggregation,
    /// Where aggregates are made: `zone` (L2 zone -> BAG) or `region` (BAG -> other
    /// regions).
    #[arg(long, default_value = "zone")]
    pub(crate) tier: AggregationTier,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) scenario: ScenarioArgs,
    #[command(flatten)]
    pub(crate) bgp: BgpArgs,
}

// `aifabric ibm` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct IbmArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// Machine-readable output (every reduced source / cluster pair).
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) scenario: ScenarioArgs,
}

// `aifabric failures` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct FailuresArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// `single` (every group), `single:CLASS`, `pairs:CLASS` or `montecarlo`. Classes:
    /// building, hall, pd, plane, chassis, linecard, conduit, srg, and `switch:ROLE` (each
    /// switch of a role, e.g. `single:switch:atsw`; `switch` every switch).
    #[arg(long, default_value = "single")]
    pub(crate) sweep: String,
    /// Monte Carlo draws.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) samples: u64,
    /// Monte Carlo seed (draw i uses a generator seeded from (seed, i)).
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Monte Carlo failure probability of each group of a class, `CLASS=P` (replaces the
    /// default model for that class; repeat or separate with commas).
    #[arg(long, value_delimiter = ',', value_name = "CLASS=P")]
    pub(crate) probability: Vec<String>,
    /// Monte Carlo probability from reliability figures, `CLASS=MTBF_HOURS/MTTR_HOURS`
    /// (P = MTTR / (MTBF + MTTR)).
    #[arg(long, value_delimiter = ',', value_name = "CLASS=MTBF/MTTR")]
    pub(crate) mtbf: Vec<String>,
    /// Aggregate prefixes (`unconditional`, `conditional`, `conditional:N`) and report the
    /// blackholes each scenario leaves; without it every border carries the specifics.
    #[arg(long)]
    pub(crate) aggregation: Option<Aggregation>,
    /// Aggregation tier: `zone` or `region`.
    #[arg(long, default_value = "zone")]
    pub(crate) tier: AggregationTier,
    /// For the worst `--top` scenarios: drain the affected BAG plane, and conditional
    /// aggregation, with the blackholes and capacity of each (needs `--aggregation`).
    #[arg(long)]
    pub(crate) mitigations: bool,
    /// Run the same sweep on the spec built planar and built spread, and compare.
    #[arg(long)]
    pub(crate) compare_inter_bag: bool,
    /// Make each pod of an NSF zone a site of its own (`ZONE.podN`): routed capacity
    /// between every pair of pods, GPUs isolated per pod. Refused above 4,000 site pairs
    /// (one NSF building of 83 pods is 3,403).
    #[arg(long)]
    pub(crate) pod_sites: bool,
    /// Rows in the table (and scenarios given mitigations).
    #[arg(long, default_value_t = 20)]
    pub(crate) top: usize,
    /// Scenarios the report lists in full, worst first: a number or `all` (default:
    /// every scenario of single/pairs sweeps, the worst 1,000 of a Monte Carlo sweep).
    /// The summary counts every scenario either way.
    #[arg(long, value_name = "N|all")]
    pub(crate) keep: Option<String>,
    /// Machine-readable output: the summary and the scenarios listed (see --keep).
    #[arg(long)]
    pub(crate) json: bool,
    /// Also write the JSON report to this file (atomically).
    #[arg(long, value_parser = crate::args::output_file)]
    pub(crate) out: Option<std::path::PathBuf>,
    /// Rank the scenarios by the running jobs they hurt (a cluster file, see `aifabric
    /// cluster`): jobs interrupted (GPUs cut off), then the GPUs whose traffic crosses what
    /// the scenario takes out; the worst `--simulate` scenarios simulated in full.
    #[arg(long, value_name = "CLUSTER.yaml")]
    pub(crate) jobs: Option<String>,
    /// With --jobs: how many of the worst scenarios to simulate in full (every job's step
    /// together under the scenario).
    #[arg(long, default_value_t = 5, requires = "jobs")]
    pub(crate) simulate: usize,
    /// The maintenance state the sweep starts from (failed and hard-drained elements are
    /// out of service in every scenario; figures are measured from that state).
    #[command(flatten)]
    pub(crate) scenario: StartArgs,
    #[command(flatten)]
    pub(crate) bgp: BgpArgs,
}

// `aifabric collective` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct CollectiveArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// all_reduce, all_gather, reduce_scatter or all_to_all.
    #[arg(long, default_value = "all_reduce", value_parser = parse_op)]
    pub(crate) op: Op,
    /// auto (NCCL's tuner: the fastest applicable for each size, NCCL's protocol latencies
    /// and efficiencies over the bandwidth simulated on the fabric), ring, tree, nvls
    /// (inside one NVLink domain), pat (all_gather/reduce_scatter, one GPU per domain), hd
    /// (halving-doubling), direct or hierarchical (the last three without a protocol).
    #[arg(long, default_value = "auto")]
    pub(crate) algo: Algo,
    /// NCCL protocol: auto (the tuner's choice per size), ll, ll128 or simple.
    #[arg(long, default_value = "auto")]
    pub(crate) proto: Proto,
    /// GPUs taking part.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(2..))]
    pub(crate) gpus: u32,
    /// packed, spread, fragmented[:SEED] or topology-aware (see --help).
    #[arg(long, default_value = "packed", long_help = Placement::DEFINED)]
    pub(crate) placement: Placement,
    /// Sizes, nccl-tests style: MIN:MAX[:FACTOR] (binary K, M, G) or one size.
    #[arg(long, default_value = "1M:1G:4")]
    pub(crate) sizes: aifabric::Sizes,
    /// Per-step software latency on top of NCCL's protocol latencies, microseconds.
    #[arg(long, default_value_t = 0.0)]
    pub(crate) alpha_us: f64,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) packet: PacketArgs,
    #[command(flatten)]
    pub(crate) sim: SimArgs,
    #[command(flatten)]
    pub(crate) scenario: ScenarioArgs,
    #[command(flatten)]
    pub(crate) bgp: BgpArgs,
}

// `aifabric job` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
// `--scale-up` and `--scale-up-gbs` come from the job file here: hidden from the help (and
// refused with a message saying where to set them, `SimArgs::setup_for_jobs`).
#[command(mut_arg("scale_up", |a| a.hide(true)), mut_arg("scale_up_gbs", |a| a.hide(true)))]
pub(crate) struct JobArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// The job file (see examples/jobs/).
    #[arg(long)]
    pub(crate) job: String,
    /// Override the job's placement: packed, spread, fragmented[:SEED] or topology-aware
    /// (see --help).
    #[arg(long, long_help = Placement::DEFINED)]
    pub(crate) placement: Option<Placement>,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) packet: PacketArgs,
    #[command(flatten)]
    pub(crate) sim: SimArgs,
    #[command(flatten)]
    pub(crate) scenario: ScenarioArgs,
    #[command(flatten)]
    pub(crate) bgp: BgpArgs,
}

// `aifabric cluster` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
// `--scale-up` and `--scale-up-gbs` come from the job file here: hidden from the help (and
// refused with a message saying where to set them, `SimArgs::setup_for_jobs`).
#[command(mut_arg("scale_up", |a| a.hide(true)), mut_arg("scale_up_gbs", |a| a.hide(true)))]
pub(crate) struct ClusterArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// The cluster file: the running jobs, each a job file or written out, placed by a
    /// policy (optionally `within` zones or racks) or on explicit hosts (see
    /// examples/clusters/).
    #[arg(long)]
    pub(crate) jobs: String,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) packet: PacketArgs,
    #[command(flatten)]
    pub(crate) sim: SimArgs,
    #[command(flatten)]
    pub(crate) scenario: ScenarioArgs,
    #[command(flatten)]
    pub(crate) bgp: BgpArgs,
}

// `aifabric plan` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
// `--scale-up` and `--scale-up-gbs` come from the job file here: hidden from the help (and
// refused with a message saying where to set them, `SimArgs::setup_for_jobs`).
#[command(mut_arg("scale_up", |a| a.hide(true)), mut_arg("scale_up_gbs", |a| a.hide(true)))]
pub(crate) struct PlanArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// The cluster file: the running jobs (see `aifabric cluster`).
    #[arg(long)]
    pub(crate) jobs: String,
    /// The operations file: `max_concurrent` and `operations:` each with `drain:`, `fail:`
    /// or `drain_soft:` selectors, `hours:` and optional `after:` (see examples/ops/).
    #[arg(long)]
    pub(crate) ops: String,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) packet: PacketArgs,
    #[command(flatten)]
    pub(crate) sim: SimArgs,
    #[command(flatten)]
    pub(crate) bgp: BgpArgs,
}

// `aifabric traffic` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct TrafficArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// Traffic file: htsim's `.cm` format (`Nodes N`, `Connections C`, optional
    /// `Triggers T`; `SRC->DST id I start PS size B`, `trigger K`, `send_done_trigger K`)
    /// or a CSV (`src,dst,bytes,start_us`) when it ends in `.csv`. Node i is the i-th
    /// placed GPU.
    #[arg(long, required_unless_present = "pattern", conflicts_with = "pattern")]
    pub(crate) tm: Option<String>,
    /// Generate instead: permutation, incast:N (N senders to node 0), all-to-all or
    /// random:N (N flows between random pairs), over --gpus GPUs, all starting at 0; or
    /// ring-allreduce (--size per GPU: 2 (N - 1) steps of size / N to the next GPU, each
    /// step starting when the GPU's previous chunk has come in).
    #[arg(long)]
    pub(crate) pattern: Option<aifabric::Pattern>,
    /// Bytes per generated flow (binary K, M, G).
    #[arg(long, default_value = "2M", value_parser = parse_size_arg, allow_hyphen_values = true)]
    pub(crate) size: u64,
    /// GPUs to place (default: the file's node count; 1024 for a pattern).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..))]
    pub(crate) gpus: Option<u32>,
    /// packed, spread, fragmented[:SEED] or topology-aware (see --help).
    #[arg(long, default_value = "packed", long_help = Placement::DEFINED)]
    pub(crate) placement: Placement,
    /// With --engine hybrid under --lb ecmp, every flow starting at 0: run packet by packet
    /// only the critical flows (those the fluid finishes within 10% of the slowest) and
    /// every flow sharing a link with one; the others count at their fluid completion
    /// times (makespan and tail kept, the median a few percent short; see the README).
    #[arg(long)]
    pub(crate) cut: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) packet: Box<PacketArgs>,
    #[command(flatten)]
    pub(crate) sim: SimArgs,
    #[command(flatten)]
    pub(crate) scenario: ScenarioArgs,
    #[command(flatten)]
    pub(crate) bgp: BgpArgs,
}

// `aifabric replay` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct ReplayArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// The trace directory.
    #[arg(long)]
    pub(crate) trace: std::path::PathBuf,
    /// Placement: packed, spread, fragmented[:SEED] or topology-aware (default: the
    /// trace's, else packed; see --help).
    #[arg(long, long_help = Placement::DEFINED)]
    pub(crate) placement: Option<Placement>,
    /// Peak TFLOP/s per GPU for `num_ops` (default: the trace's, else 989, H100).
    #[arg(long)]
    pub(crate) peak_tflops: Option<f64>,
    /// Share of the peak reached (default: the trace's, else 0.4).
    #[arg(long)]
    pub(crate) efficiency: Option<f64>,
    /// Per-step collective latency, microseconds (default: the trace's, else 5).
    #[arg(long)]
    pub(crate) alpha_us: Option<f64>,
    /// Finished nodes remembered per rank (dependencies on older ones are bounded, and
    /// counted), and the most unfinished nodes read ahead per rank.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) window: u32,
    /// Machine-readable output (per-rank times and the whole critical path).
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) sim: SimArgs,
    #[command(flatten)]
    pub(crate) scenario: ScenarioArgs,
    #[command(flatten)]
    pub(crate) bgp: BgpArgs,
}

// `aifabric demo` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct DemoArgs {
    /// Directory for report.html and report.json.
    #[arg(long, value_parser = crate::args::output_dir, default_value = "aifabric-demo")]
    pub(crate) out: std::path::PathBuf,
    /// No progress bars.
    #[arg(long)]
    pub(crate) quiet: bool,
    /// Machine-readable summary instead of the running commentary.
    #[arg(long)]
    pub(crate) json: bool,
    /// A maintenance state the whole demo starts from (capacity, sweep, job, report).
    #[command(flatten)]
    pub(crate) scenario: StartArgs,
}

// `aifabric report` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct ReportArgs {
    /// Built-in spec name or YAML file.
    #[arg(required_unless_present = "compare")]
    pub(crate) spec: Option<String>,
    /// Directory to write report.html and report.json into (created if missing).
    #[arg(long, value_parser = crate::args::output_dir, required_unless_present = "compare")]
    pub(crate) out: Option<std::path::PathBuf>,
    /// Two report.json files (before and after a change): what changed between them,
    /// figure by figure, instead of a new report.
    #[arg(long, num_args = 2, value_names = ["A.json", "B.json"], conflicts_with_all = ["spec", "out", "jobs", "ops", "job", "gpus", "pair_tables", "sweep", "fail", "drain", "scenario"])]
    pub(crate) compare: Vec<std::path::PathBuf>,
    /// Failure classes swept: a class (building, hall, pd, plane, chassis, linecard,
    /// conduit, srg) or `all`.
    #[arg(long, default_value = "plane")]
    pub(crate) sweep: String,
    /// GPUs of the collective benchmark (default 1024, or every GPU of a smaller fabric).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..))]
    pub(crate) gpus: Option<u32>,
    /// One table per site pair (buildings, zones, AI zones) and region pair: the
    /// scenarios that cost it most.
    #[arg(long)]
    pub(crate) pair_tables: bool,
    /// The running jobs (a cluster file): a section with each job's step alone and
    /// together, and what the scenario does to it.
    #[arg(long, value_name = "CLUSTER.yaml")]
    pub(crate) jobs: Option<String>,
    /// A maintenance plan against those jobs (an operations file): its best schedule.
    #[arg(long, value_name = "OPS.yaml", requires = "jobs")]
    pub(crate) ops: Option<String>,
    /// One training job (a job file): its step drawn as compute, bubble and each
    /// collective's exposed time, on the report's state and the healthy fabric's.
    #[arg(long, value_name = "JOB.yaml")]
    pub(crate) job: Option<String>,
    /// Print report.json to stdout as well.
    #[arg(long)]
    pub(crate) json: bool,
    /// The maintenance state the report describes and its failure sweep starts from.
    #[command(flatten)]
    pub(crate) scenario: StartArgs,
}

// `aifabric export` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct ExportArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// netbox, graphml, nodelink, ipplan, dot or frr (FRRouting: per router bgpd.conf and
    /// zebra.conf, and topology.json; follows --asn-plan, --bandwidth and --max-paths).
    #[arg(long)]
    pub(crate) format: aifabric::export::Format,
    /// Directory to write into (created if missing).
    #[arg(long, value_parser = crate::args::replaced_dir)]
    pub(crate) out: std::path::PathBuf,
    /// With `frr`: aggregate each zone at its borders toward BAG (`unconditional` or
    /// `conditional:1`).
    #[arg(long)]
    pub(crate) aggregation: Option<Aggregation>,
    /// Machine-readable summary of the files written.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) bgp: BgpArgs,
    #[command(flatten)]
    pub(crate) speeds: super::SpeedArgs,
}

/// The network as found, against the plan (`drift`, `import`).
#[derive(clap::Args)]
pub(crate) struct InventoryArgs {
    /// The plan: a built-in spec name or YAML file.
    #[arg(long)]
    pub(crate) plan: String,
    /// Directory of a NetBox export: devices.csv, interfaces.csv and cables.csv (NetBox's
    /// CSV field names; `aifabric export --format netbox` writes them), or devices.json,
    /// interfaces.json and cables.json (the bodies of NetBox's API GET /api/dcim/devices/,
    /// interfaces/, cables/: a page, a list of pages or a list of records).
    #[arg(long, value_name = "DIR", required_unless_present = "lldp")]
    pub(crate) netbox: Option<String>,
    /// LLDP neighbour tables: `lldpctl -f json` (or json0) of each device saved as
    /// DEVICE.json, or CSV (`local_device,local_port,remote_device,remote_port`): the cables
    /// as the switches see them, in place of NetBox's (devices and speeds still from
    /// --netbox when given).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub(crate) lldp: Vec<String>,
}

// `aifabric drift` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct DriftArgs {
    #[command(flatten)]
    pub(crate) inventory: InventoryArgs,
    /// A cluster file (as `cluster --jobs` takes): what the drift costs each of its jobs,
    /// their steps on the plan and on the network as built (the flow engine, `cluster`'s
    /// defaults).
    #[arg(long, value_name = "FILE")]
    pub(crate) jobs: Option<String>,
    /// Findings listed per kind in the text output (all of them in the JSON).
    #[arg(long, default_value_t = 10)]
    pub(crate) show: usize,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
}

// `aifabric import` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct ImportArgs {
    #[command(flatten)]
    pub(crate) inventory: InventoryArgs,
    /// The scenario file to write (YAML; replaced atomically).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: std::path::PathBuf,
    /// Machine-readable summary.
    #[arg(long)]
    pub(crate) json: bool,
}

// `aifabric validate` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct ValidateArgs {
    /// Built-in spec name or YAML file.
    pub(crate) spec: String,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
}

// `aifabric validation` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct ValidationArgs {
    /// The table as Markdown (the text of VALIDATION.md).
    #[arg(long, conflicts_with = "json")]
    pub(crate) markdown: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
}

// `aifabric sweep` (its help is the `Command` variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct SweepArgs {
    #[command(subcommand)]
    pub(crate) command: Option<SweepCommand>,
    /// The sweep file (YAML: spec, grid, failures, draws_per_task).
    #[arg(required = true)]
    pub(crate) file: Option<std::path::PathBuf>,
    /// Run only shard I of N (the tasks whose index is I mod N); the output is a shard
    /// file for `sweep merge`.
    #[arg(long)]
    pub(crate) shard: Option<String>,
    /// Write the results (or the shard) to this file as JSON, atomically.
    #[arg(long, value_parser = crate::args::output_file)]
    pub(crate) out: Option<std::path::PathBuf>,
    /// Write one row per design x scenario to this file as an Arrow IPC file (pandas:
    /// `read_feather`, polars: `read_ipc`), atomically; not with --shard.
    #[arg(long, value_parser = crate::args::output_file, value_name = "FILE")]
    pub(crate) table: Option<std::path::PathBuf>,
    /// Write an sbatch job array over the shards, its merge job and submit.sh into DIR,
    /// instead of running anything.
    #[arg(long, value_parser = crate::args::output_dir, value_name = "DIR")]
    pub(crate) emit_slurm: Option<std::path::PathBuf>,
    /// Shards of the Slurm job array (default: one per task, at most 64).
    #[arg(long)]
    pub(crate) shards: Option<usize>,
    /// Machine-readable output.
    #[arg(long)]
    pub(crate) json: bool,
    // Last: its help heading holds for the flags after it.
    #[command(flatten)]
    pub(crate) slurm: SlurmArgs,
}

/// The Slurm options of `sweep --emit-slurm`, written as `#SBATCH` lines of the array and
/// of the merge job (sbatch's `SBATCH_*` variables override them at submit time).
#[derive(clap::Args)]
#[command(next_help_heading = "Slurm (with --emit-slurm)")]
pub(crate) struct SlurmArgs {
    /// Partition of both jobs (a list `a,b`: the first that can run them).
    #[arg(long, requires = "emit_slurm")]
    pub(crate) partition: Option<String>,
    /// Account both jobs are charged to.
    #[arg(long, requires = "emit_slurm")]
    pub(crate) account: Option<String>,
    /// Time limit of each shard and of the merge, as sbatch writes it: minutes (90),
    /// HH:MM:SS, D-HH:MM:SS.
    #[arg(long, requires = "emit_slurm")]
    pub(crate) time: Option<String>,
    /// Memory per shard and for the merge, as sbatch writes it (4G, 500M; no suffix:
    /// megabytes).
    #[arg(long, requires = "emit_slurm")]
    pub(crate) mem: Option<String>,
    /// CPUs per shard; the shard runs that many threads.
    #[arg(long, requires = "emit_slurm", value_name = "N",
          default_value_t = aifabric::sweep::slurm::DEFAULT_CPUS_PER_TASK)]
    pub(crate) cpus_per_task: u32,
    /// A further sbatch option for both jobs, one long option each (repeat the flag):
    /// --sbatch=--qos=high --sbatch=--constraint=a100.
    #[arg(
        long,
        requires = "emit_slurm",
        value_name = "OPTION",
        allow_hyphen_values = true
    )]
    pub(crate) sbatch: Vec<String>,
}
