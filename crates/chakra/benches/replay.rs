//! Replay throughput: a trace synthesized from a dense job (TP 8, PP 4; ~10,350 nodes per
//! rank), replayed on llama3-24k. Target: 4,096 ranks within 30 s.
//!
//! `cargo bench -p aifabric-chakra --bench replay` (the 4,096-rank trace is 42M nodes, 377 MB
//! gzip; writing it takes about half a minute, once).
#![allow(missing_docs)] // criterion_main! defines an undocumented `main`

use aifabric_chakra::fabric::{replay_healthy, FabricOptions};
use aifabric_chakra::{synth, TraceSet};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

fn job(gpus: u32) -> String {
    format!(
        "name: bench-{gpus}
gpus: {gpus}
parallelism: {{ tp: 8, pp: 4, dp: {dp} }}
model:
  parameters: 175.0e9
  layers: 160
  hidden: 8192
  sequence_length: 4096
  micro_batch: 1
  global_batch: {batch}
compute: {{ peak_tflops: 989, efficiency: 0.4 }}
communication: {{ dp: reduce_scatter_all_gather, dp_overlap: 0.5 }}
",
        dp = gpus / 32,
        batch = gpus
    )
}

fn bench(c: &mut Criterion) {
    let f = aifabric_spec::load("llama3-24k").unwrap();
    let opts = FabricOptions::default();
    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    for gpus in [512u32, 4096] {
        let it = aifabric_spec::job::parse("bench.yaml", &job(gpus)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        synth::write(&it, dir.path(), "trace", true, &|_| {}).unwrap();
        let set = TraceSet::discover(dir.path()).unwrap();
        g.measurement_time(Duration::from_secs(if gpus > 1024 { 240 } else { 30 }));
        g.bench_function(format!("{gpus} ranks x 10k nodes"), |b| {
            b.iter(|| replay_healthy(&f, &set, &opts, &|_| {}).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
