//! Built-in specs: the YAML files under `crates/spec/specs/`, embedded at compile time.

/// (name, one-line description, YAML text).
const SPECS: &[(&str, &str, &str)] = &[
    (
        "prometheus",
        "Prometheus-like: 2 regions x (5 DSF L2 buildings + 1 NSF building) under BAG",
        include_str!("../specs/prometheus.yaml"),
    ),
    (
        "dsf-l2-zone",
        "One DSF dual-stage L2 zone (18,432 GPUs) under a 16-plane BAG: 4.50:1",
        include_str!("../specs/dsf-l2-zone.yaml"),
    ),
    (
        "dsf-l1-zone",
        "One DSF single-stage zone (128 RDSW / 40 FDSW / 16 EDSW, 4,608 GPUs)",
        include_str!("../specs/dsf-l1-zone.yaml"),
    ),
    (
        "nsf-l2",
        "NSF L2 example under BAG: 15,936 GPUs, 4.98:1 to BAG",
        include_str!("../specs/nsf-l2.yaml"),
    ),
    (
        "llama3-24k",
        "Llama 3 RoCE cluster: 8 AI zones x 3,072 GPUs, RTSW/CTSW/ATSW",
        include_str!("../specs/llama3-24k.yaml"),
    ),
    (
        "htsim-k8",
        "htsim's k = 8 fat tree: 128 hosts, 100 Gb/s (packet engine, --preset uec-htsim)",
        include_str!("../specs/htsim-k8.yaml"),
    ),
    (
        "htsim-k16",
        "htsim's k = 16 fat tree: 1,024 hosts, 100 Gb/s (packet engine, --preset uec-htsim)",
        include_str!("../specs/htsim-k16.yaml"),
    ),
    (
        "htsim-k32",
        "htsim's k = 32 fat tree: 8,192 hosts, 100 Gb/s (packet engine, --preset uec-htsim)",
        include_str!("../specs/htsim-k32.yaml"),
    ),
];

/// The built-in spec called `name`.
pub fn get(name: &str) -> Option<&'static str> {
    SPECS.iter().find(|s| s.0 == name).map(|s| s.2)
}

/// Names of the built-in specs.
pub fn names() -> impl Iterator<Item = &'static str> {
    SPECS.iter().map(|s| s.0)
}

/// (name, description) of each built-in spec.
pub fn list() -> impl Iterator<Item = (&'static str, &'static str)> {
    SPECS.iter().map(|s| (s.0, s.1))
}
