//! Packet-engine benchmarks: htsim's 1,024-node permutation of 2 MiB flows on a k = 16 fat
//! tree of 100 Gb/s links, sprayed over 128 entropy values (the `uec-htsim` preset, htsim's
//! `mixed` entropy feedback, and `spray`, REPS per packet), and the 128-node one. Events per
//! second are printed once per case. The `hybrid` group: a 128-node permutation of 64 MiB
//! flows (k = 8, the preset), the packet engine against the hybrid (fast-forwarding steady
//! states) on the same request. `mixed128_2parts`: the same run cut into two parts run side
//! by side (`Config::partitions`).
//! Run: `cargo bench -p aifabric-packet --bench packet` (`-- hybrid` for that group only).
#![allow(missing_docs)] // criterion_main! defines an undocumented `main`

use aifabric_dataplane::{Net, NetParams};
use aifabric_model::{Role, Scenario};
use aifabric_packet::{run, Config, FastForward, PacketLb};
use aifabric_routing::bgp::{AsnPlan, BgpConfig};
use aifabric_workload::traffic::Pattern;
use criterion::{criterion_group, criterion_main, Criterion};

fn fat_tree(k: u32) -> aifabric_model::Fabric {
    let yaml = format!(
        "name: ft{k}\nregions:\n  - name: r\n    buildings:\n      - name: b\n        zones:\n          - name: z\n            fat_tree: {{k: {k}, link_speed_gbps: 100, gpu_model: nic-100g, switch_model: tomahawk3-100g}}\n"
    );
    aifabric_spec::build_str("ft.yaml", &yaml).expect("the fat tree builds")
}

/// The healthy fabric's network, routed as the CLI routes it by default.
fn healthy(f: &aifabric_model::Fabric) -> Net<'_> {
    Net::new(
        f,
        &Scenario::healthy(f),
        AsnPlan::Rfc7938,
        BgpConfig::default(),
        NetParams::default(),
    )
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("packet");
    g.sample_size(10);
    for (k, file) in [(8, "perm_128n_2MiB.cm"), (16, "perm_1024n_2MiB.cm")] {
        let f = fat_tree(k);
        let net = healthy(&f);
        let gpus: Vec<_> = f.devices_with_role(Role::Gpu).collect();
        let path = format!("{}/scenarios/htsim-uec/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).expect("the scenario file");
        let tm = aifabric_workload::traffic::parse_htsim(file, &text).expect("it parses");
        // `mixed:128` and `spray:128` on one engine, and `mixed:128` cut into 2 parts (on
        // the pool's threads: the machine's cores unless RAYON_NUM_THREADS says otherwise).
        for (lb, partitions) in [
            (PacketLb::Mixed(128), 1),
            (PacketLb::Spray(128), 1),
            (PacketLb::Mixed(128), 2),
        ] {
            let cfg = Config {
                lb,
                partitions,
                ..Config::uec_htsim()
            };
            let name = match partitions {
                1 => lb.name().replace(':', ""),
                n => format!("{}_{n}parts", lb.name().replace(':', "")),
            };
            let t = std::time::Instant::now();
            let r = run(&net, &tm, &gpus, &cfg).expect("it runs");
            let s = t.elapsed().as_secs_f64();
            eprintln!(
                "{file} {name}: {} events in {s:.3} s, {:.2} M events/s; FCT P50 {:.1} us, max {:.1} us",
                r.events,
                r.events as f64 / s / 1e6,
                r.fct.p50_s * 1e6,
                r.fct.max_s * 1e6
            );
            g.bench_function(format!("{file}_{name}"), |b| {
                b.iter(|| run(&net, &tm, &gpus, &cfg).expect("it runs"))
            });
        }
    }
    g.finish();
}

fn hybrid(c: &mut Criterion) {
    let mut g = c.benchmark_group("hybrid");
    g.sample_size(10);
    let f = fat_tree(8);
    let net = healthy(&f);
    let gpus: Vec<_> = f.devices_with_role(Role::Gpu).collect();
    let tm = Pattern::Permutation.generate(128, 64 << 20, 13);
    let packet = Config::uec_htsim();
    let hybrid = Config {
        fast_forward: Some(FastForward::default()),
        ..packet.clone()
    };
    for (name, cfg) in [("packet", &packet), ("hybrid", &hybrid)] {
        let r = run(&net, &tm, &gpus, cfg).expect("it runs");
        eprintln!(
            "perm 128 x 64 MiB {name}: {} events; makespan {:.1} us, FCT P50 {:.1} us, P99 {:.1} us",
            r.events,
            r.makespan_s * 1e6,
            r.fct.p50_s * 1e6,
            r.fct.p99_s * 1e6
        );
        g.bench_function(format!("perm_128n_64MiB_{name}"), |b| {
            b.iter(|| run(&net, &tm, &gpus, cfg).expect("it runs"))
        });
    }
    g.finish();
}

criterion_group!(benches, bench, hybrid);
criterion_main!(benches);
