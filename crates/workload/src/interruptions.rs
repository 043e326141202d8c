//! What interrupts a training job and what checkpointing recovers: failure rates per
//! component class, and the checkpoint interval that loses least to them.
//!
//! A synchronous training job stops whenever one of its GPUs, their servers, or a network
//! element that is one of its GPUs' only way out fails ("a single GPU failure may require a
//! restart of the entire job", Llama 3 paper, section 3.3.4). The default rates are the
//! Llama 3 405B run's unexpected interruptions ("The Llama 3 Herd of Models", Meta, 2024,
//! table 5: 419 in a 54-day snapshot of a 16,384-GPU job), spread over what could cause them:
//!
//! - **host-side classes** (GPU, HBM3, software, host maintenance, NIC, CPU, ...): per GPU per
//!   day, `count / (54 days x 16,384 GPUs)`; a job of `n` GPUs sees `n` times that;
//! - **network switch and cable** (35): per element per day, `35 / (54 days x E)`, where `E`
//!   ([`LLAMA3_SINGLE_POINT_ELEMENTS`]) is the number of network elements whose single failure
//!   stops that job on `llama3-24k` (a RoCE cluster like the paper's): its 16,384 host links
//!   and 1,024 rack switches. This is the one calibration of the switch and cable rate; the
//!   facade's tests derive `E` from the fabric again.
//!
//! Consequence: a 16,384-GPU job packed on `llama3-24k` gets the paper's 419 interruptions in
//! 54 days back (a mean time between interruptions of 54 x 24 / 419 = 3.09 h) by construction,
//! a consistency check of the calibration, not an independent prediction.
//!
//! Checkpointing follows the first-order model of Young (1974): with a checkpoint taking `C`,
//! a restart `R` and a mean time between interruptions `M`, checkpointing every `T` loses
//! `C / T` to writing and, per interruption, on average `T / 2` of recomputed work plus `R`;
//! the effective fraction is `1 - C / T - (T / 2 + R) / M`, best at `T = sqrt(2 C M)`.

/// A host-side cause of interruptions: one row of the Llama 3 paper's table 5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostClass {
    /// Name in rates files and reports.
    pub key: &'static str,
    /// The paper's row.
    pub paper: &'static str,
    /// Unexpected interruptions in the 54-day snapshot.
    pub count: u32,
}

const fn host(key: &'static str, paper: &'static str, count: u32) -> HostClass {
    HostClass { key, paper, count }
}

/// Every host-side row of table 5 of "The Llama 3 Herd of Models" (Meta, 2024), in the
/// paper's order (all but "Network Switch/Cable"). With the 35 switch and cable interruptions
/// they sum to the 419 unexpected interruptions.
pub const LLAMA3_HOST_CLASSES: [HostClass; 17] = [
    host("gpu", "Faulty GPU", 148),
    host("hbm3", "GPU HBM3 Memory", 72),
    host("software", "Software Bug", 54),
    host("host_maintenance", "Host Maintenance", 32),
    host("gpu_sram", "GPU SRAM Memory", 19),
    host("gpu_system_processor", "GPU System Processor", 17),
    host("nic", "NIC", 7),
    host("nccl_watchdog", "NCCL Watchdog Timeouts", 7),
    host("silent_data_corruption", "Silent Data Corruption", 6),
    host("gpu_thermal", "GPU Thermal Interface + Sensor", 6),
    host("ssd", "SSD", 3),
    host("power_supply", "Power Supply", 3),
    host("server_chassis", "Server Chassis", 2),
    host("io_expansion_board", "IO Expansion Board", 2),
    host("dependency", "Dependency", 2),
    host("cpu", "CPU", 2),
    host("system_memory", "System Memory", 2),
];

/// Length of the paper's snapshot, days (table 5).
pub const LLAMA3_DAYS: f64 = 54.0;
/// GPUs of the job the snapshot counts.
pub const LLAMA3_GPUS: u32 = 16_384;
/// Unexpected interruptions in the snapshot.
pub const LLAMA3_UNEXPECTED: u32 = 419;
/// "Network Switch/Cable" interruptions in the snapshot.
pub const LLAMA3_SWITCH_CABLE: u32 = 35;
/// Network elements whose single failure stops the 16,384-GPU job packed on `llama3-24k`:
/// 16,384 host links and the 1,024 rack switches above them (16 GPUs per rack). The divisor
/// of the switch and cable calibration; `aifabric::goodput`'s tests derive it again.
pub const LLAMA3_SINGLE_POINT_ELEMENTS: u32 = 16_384 + 1_024;

/// Class names of the network elements in rates files and reports.
pub const SWITCH: &str = "switch";
/// See [`SWITCH`].
pub const LINK: &str = "link";

/// Per GPU per day, a host-side class's default rate.
pub fn llama3_per_gpu_per_day(c: &HostClass) -> f64 {
    f64::from(c.count) / (LLAMA3_DAYS * f64::from(LLAMA3_GPUS))
}

/// Per element per day, the default rate of a switch or a link: the paper's switch and cable
/// interruptions over the elements that could have caused them.
pub fn llama3_per_element_per_day() -> f64 {
    f64::from(LLAMA3_SWITCH_CABLE) / (LLAMA3_DAYS * f64::from(LLAMA3_SINGLE_POINT_ELEMENTS))
}

/// What a checkpoint costs and what a restart costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Checkpointing {
    /// Time the job stops to write a checkpoint, seconds.
    pub write_s: f64,
    /// Time from an interruption to training again (detection, rescheduling, reloading the
    /// checkpoint), seconds.
    pub restart_s: f64,
}

impl Default for Checkpointing {
    /// Assumptions, not published figures: the Llama 3 paper gives neither for its run. One
    /// minute to write (a 405B model's BF16 weights and optimiser state, about 5 TB, sharded
    /// over thousands of writers) and ten minutes to restart.
    fn default() -> Self {
        Checkpointing {
            write_s: 60.0,
            restart_s: 600.0,
        }
    }
}

/// Failure rates and checkpointing for a cluster's jobs.
#[derive(Clone, Debug, PartialEq)]
pub struct Rates {
    /// Host-side classes, per GPU per day, in [`LLAMA3_HOST_CLASSES`]' order.
    pub per_gpu_per_day: Vec<(String, f64)>,
    /// A switch whose failure isolates GPUs, per switch per day.
    pub switch_per_day: f64,
    /// A link whose failure isolates a GPU, per link per day.
    pub link_per_day: f64,
    /// The spec's named shared-risk groups with a rate, per group per day, by name.
    pub srg_per_day: Vec<(String, f64)>,
    /// Checkpointing of every job without its own.
    pub checkpoint: Checkpointing,
    /// Jobs' own checkpointing, by job name.
    pub jobs: Vec<(String, Checkpointing)>,
    /// Where the rates come from (`defaults` or the rates file).
    pub source: String,
}

impl Default for Rates {
    /// The Llama 3 rates (see the module's documentation) and [`Checkpointing::default`].
    fn default() -> Self {
        Rates {
            per_gpu_per_day: LLAMA3_HOST_CLASSES
                .iter()
                .map(|c| (c.key.to_owned(), llama3_per_gpu_per_day(c)))
                .collect(),
            switch_per_day: llama3_per_element_per_day(),
            link_per_day: llama3_per_element_per_day(),
            srg_per_day: Vec::new(),
            checkpoint: Checkpointing::default(),
            jobs: Vec::new(),
            source: "defaults".into(),
        }
    }
}

impl Rates {
    /// The checkpointing of job `name`: its own, else the default.
    pub fn checkpointing(&self, name: &str) -> Checkpointing {
        self.jobs
            .iter()
            .find(|(n, _)| n == name)
            .map_or(self.checkpoint, |(_, c)| *c)
    }

    /// True when the switch and link rates are the Llama 3 calibration's.
    pub fn network_calibrated(&self) -> bool {
        let d = llama3_per_element_per_day();
        self.switch_per_day == d && self.link_per_day == d
    }
}

/// Young's optimum checkpoint interval, seconds: `sqrt(2 C M)` for a checkpoint of `write_s`
/// and a mean time between interruptions of `mtbi_s` (J. W. Young, "A first order
/// approximation to the optimum checkpoint interval", Communications of the ACM 17(9), 1974).
pub fn young_interval_s(write_s: f64, mtbi_s: f64) -> f64 {
    (2.0 * write_s * mtbi_s).sqrt()
}

/// Daly's higher-order optimum, seconds (J. T. Daly, "A higher order estimate of the optimum
/// checkpoint interval for restart dumps", Future Generation Computer Systems 22(3), 2006):
/// `sqrt(2 C M) (1 + sqrt(C / 2M) / 3 + C / 18M) - C` while `C < 2M`, else `M`.
pub fn daly_interval_s(write_s: f64, mtbi_s: f64) -> f64 {
    if write_s >= 2.0 * mtbi_s {
        return mtbi_s;
    }
    let x = write_s / (2.0 * mtbi_s);
    young_interval_s(write_s, mtbi_s) * (1.0 + x.sqrt() / 3.0 + x / 9.0) - write_s
}

/// Share of wall-clock time spent on training that is kept, checkpointing every
/// `interval_s`: `1 - C / T - (T / 2 + R) / M` (Young 1974's first-order waste: writing, on
/// average half an interval recomputed per interruption, and the restart), at least 0.
/// An infinite `mtbi_s` (nothing interrupts the job) loses only the writing.
pub fn effective_fraction(c: Checkpointing, interval_s: f64, mtbi_s: f64) -> f64 {
    let lost = c.write_s / interval_s + (interval_s / 2.0 + c.restart_s) / mtbi_s;
    (1.0 - lost).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_5_sums_to_the_unexpected_interruptions() {
        let host: u32 = LLAMA3_HOST_CLASSES.iter().map(|c| c.count).sum();
        assert_eq!(host + LLAMA3_SWITCH_CABLE, LLAMA3_UNEXPECTED);
    }

    #[test]
    fn young_and_daly_agree_when_checkpoints_are_cheap() {
        let (c, m) = (60.0, 3.0 * 3600.0);
        let y = young_interval_s(c, m);
        assert!((y - (2.0f64 * 60.0 * 10_800.0).sqrt()).abs() < 1e-9);
        let d = daly_interval_s(c, m);
        assert!((d - y).abs() / y < 0.06, "{d} vs {y}");
        assert_eq!(daly_interval_s(10.0, 4.0), 4.0);
    }

    #[test]
    fn young_interval_is_the_optimum_of_the_first_order_waste() {
        let c = Checkpointing {
            write_s: 60.0,
            restart_s: 600.0,
        };
        let m = 11_000.0;
        let t = young_interval_s(c.write_s, m);
        let at = effective_fraction(c, t, m);
        assert!(at > effective_fraction(c, t * 1.1, m));
        assert!(at > effective_fraction(c, t * 0.9, m));
        assert_eq!(effective_fraction(c, 1e9, f64::INFINITY), 1.0 - 60.0 / 1e9);
    }
}
