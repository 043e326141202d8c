//! `aifabric slurm-import`'s flags, in their own file (its help is the `Command` variant's doc
//! comment).

/// `aifabric slurm-import`.
#[derive(clap::Args)]
pub(crate) struct SlurmImportArgs {
    /// Built-in spec name or YAML file: the fabric the Slurm nodes are hosts of.
    pub(crate) spec: String,
    /// Read the jobs from this file (the output of `squeue --json` or `scontrol show job
    /// --json`) instead of running `squeue --json`.
    #[arg(long, value_name = "FILE")]
    pub(crate) squeue_json: Option<std::path::PathBuf>,
    /// A CSV file of `slurm_node,host` rows, for nodes not named as hosts (rule 2).
    #[arg(long, value_name = "CSV")]
    pub(crate) node_map: Option<std::path::PathBuf>,
    /// Node `P<digits>` is host number `digits - N` in fabric order (rule 3, after the node
    /// map).
    #[arg(long, value_name = "P")]
    pub(crate) node_prefix: Option<String>,
    /// The number of the fabric's first host for --node-prefix.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "node_prefix")]
    pub(crate) first: u64,
    /// The job file of a Slurm job named NAME without an `aifabric:PATH` comment is
    /// `DIR/NAME.yaml`.
    #[arg(long, value_name = "DIR")]
    pub(crate) job_dir: Option<std::path::PathBuf>,
    /// Write the cluster file (YAML) here, atomically.
    #[arg(long, value_parser = crate::args::output_file, value_name = "FILE.yaml")]
    pub(crate) out: std::path::PathBuf,
    /// Machine-readable summary.
    #[arg(long)]
    pub(crate) json: bool,
}
