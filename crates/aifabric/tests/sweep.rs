//! Design-space sweeps: a grid of spec overrides x a failure study, cut into tasks; shards
//! merged give the whole run byte for byte, and a design's Monte Carlo draws cut into tasks
//! give the same scenarios and draws as one uncut failure sweep.

use aifabric::sweep::{merge, plan, Plan};
use aifabric::{FailureRequest, Setup, Study};

const SPEC: &str = aifabric_fixtures::specs::TWO_REGIONS_NSF_2_PODS_PLANAR;

fn write_plan(sweep: &str) -> (tempfile::TempDir, Result<Plan, aifabric::Error>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.yaml"), SPEC).unwrap();
    let path = dir.path().join("sweep.yaml");
    std::fs::write(&path, sweep).unwrap();
    let p = plan(&path);
    (dir, p)
}

const SWEEP: &str = r#"
spec: two.yaml
grid:
  inter_bag[0].topology: [planar, spread]
  regions[a].buildings[b].zones[n].nsf.stsw_uplinks: [1, 2]
failures:
  sweep: montecarlo
  samples: 40
  seed: 5
  probability: [link=0.01, pd=0.02]
draws_per_task: 15
"#;

#[test]
fn shards_merge_into_the_whole_run_byte_for_byte() {
    let (_dir, p) = write_plan(SWEEP);
    let p = p.unwrap();
    // 2 x 2 designs, each 40 draws in tasks of 15, 15 and 10.
    assert_eq!(p.designs.len(), 4);
    assert_eq!(p.tasks.len(), 12);
    assert_eq!(
        p.describe(1),
        "inter_bag[0].topology=\"planar\", regions[a].buildings[b].zones[n].nsf.stsw_uplinks=2"
    );
    let whole = p.run_shard(0, 1, &|_, _| {}).unwrap();
    let whole = serde_json::to_string(&merge(&p, &[whole]).unwrap()).unwrap();
    let shards: Vec<_> = (0..3)
        .rev()
        .map(|i| p.run_shard(i, 3, &|_, _| {}).unwrap())
        .collect();
    let merged = serde_json::to_string(&merge(&p, &shards).unwrap()).unwrap();
    assert_eq!(whole, merged);
    // A shard missing, or given twice, is refused.
    let e = merge(&p, &shards[..2]).unwrap_err().to_string();
    assert!(e.contains("tasks missing"), "{e}");
    let twice = [
        shards[0].clone(),
        shards[0].clone(),
        shards[1].clone(),
        shards[2].clone(),
    ];
    let e = merge(&p, &twice).unwrap_err().to_string();
    assert!(e.contains("in two shards"), "{e}");
}

#[test]
fn a_design_cut_into_tasks_draws_what_one_failure_sweep_draws() {
    let (_dir, p) = write_plan(SWEEP);
    let p = p.unwrap();
    let all = p.run_shard(0, 1, &|_, _| {}).unwrap();
    let r = merge(&p, &[all]).unwrap();
    for (d, design) in r.designs.iter().enumerate() {
        assert_eq!(design.draws, 40);
        let f = aifabric_spec::build_str("d", &p.design_text(d).unwrap()).unwrap();
        let req = FailureRequest {
            sweep: "montecarlo".into(),
            samples: 40,
            seed: 5,
            probability: vec!["link=0.01".into(), "pd=0.02".into()],
            ..FailureRequest::default()
        };
        let one = Study::healthy(&f, Setup::default())
            .failures(&req, &|_, _| {})
            .unwrap();
        let mut want: Vec<(String, u64, u64)> = one
            .scenarios
            .iter()
            .map(|s| {
                (
                    s.srgs.join(" + "),
                    s.draws,
                    s.min_capacity_retained.to_bits(),
                )
            })
            .collect();
        let mut got: Vec<(String, u64, u64)> = design
            .scenarios
            .iter()
            .map(|s| (s.srgs.clone(), s.draws, s.min_capacity_retained.to_bits()))
            .collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "design d{d}");
    }
    // The designs differ: spread and planar wiring, 1 or 2 uplinks per STSW.
    assert_ne!(p.design_text(0).unwrap(), p.design_text(3).unwrap());
}

#[test]
fn bad_sweep_files_name_the_path_and_the_fix() {
    for (sweep, want) in [
        (
            "spec: two.yaml\ngrid:\n  regions[z].bag.planes: [4]\nfailures: {}\n",
            "no element named `z`; names are a, c",
        ),
        (
            "spec: two.yaml\ngrid:\n  regions[a].bag.planes: []\nfailures: {}\n",
            "has no values",
        ),
        (
            "spec: two.yaml\ngrid:\n  regions[a].bag.planes: [0]\nfailures: {}\n",
            "design d0 (regions[a].bag.planes=0) does not build",
        ),
        ("spec: two.yaml\nfailures: {}\nbogus: 1\n", "unknown field"),
    ] {
        let (_dir, p) = write_plan(sweep);
        let e = p.unwrap_err().to_string();
        assert!(e.contains(want), "{sweep}: {e}");
    }
}

/// Shard files carry every f64 exactly: the merge of shards read back from JSON must equal
/// the in-process merge to the bit (serde_json's default float parser can be off by an ulp;
/// the workspace enables `float_roundtrip`). These values came out one ulp off before.
#[test]
fn shard_files_read_back_the_exact_floats() {
    use aifabric::sweep::{Row, Shard, TaskResult};
    let rows: Vec<Row> = [
        0.9169921874999999,
        0.9279296874999995,
        0.9370312499999991,
        0.9749999999999995,
        1.0 / 3.0,
    ]
    .iter()
    .map(|&x| Row {
        scenario: "s".into(),
        srgs: format!("{x}"),
        draws: 1,
        min_capacity_retained: x,
        gpus_isolated: 0,
    })
    .collect();
    let shard = Shard {
        fingerprint: "f".into(),
        tasks: 1,
        shard: [0, 1],
        results: vec![TaskResult {
            task: 0,
            design: 0,
            rows,
            workload: None,
        }],
    };
    let back: Shard = serde_json::from_str(&serde_json::to_string(&shard).unwrap()).unwrap();
    for (a, b) in shard.results[0].rows.iter().zip(&back.results[0].rows) {
        assert_eq!(
            a.min_capacity_retained.to_bits(),
            b.min_capacity_retained.to_bits()
        );
    }
}

const WORKLOADS: &str = r#"
spec: two.yaml
grid:
  inter_bag[0].links_per_plane: [1, 4]
workloads:
  - name: ar
    collective: {gpus: 16, size: 64M, placement: spread}
    options: {scale_up: 4}
  - collective: {op: all_to_all, gpus: 8, size: 8M, placement: spread}
    options: {lb: spray, seed: 3, scale_up: 4}
scenarios:
  - {name: plane0-down, fail: [a.bag.plane0]}
  - {name: rack-link, fail: [a.b.n.rtsw0--a.b.n.ftsw0]}
"#;

/// Workloads run on every design, healthy and under each scenario, one task each; each row
/// equals the same request made of a study directly (the sweep adds nothing of its own),
/// shards merge into the whole run, and the table has a row per design x scenario x workload.
#[test]
fn workloads_run_on_every_design_under_every_scenario() {
    use aifabric::{CollectiveRequest, Placement, Setup, Study};
    let (_dir, p) = write_plan(WORKLOADS);
    let p = p.unwrap();
    // 2 designs x 2 workloads x (healthy + 2 scenarios), no failure study.
    assert_eq!(p.tasks.len(), 12);
    let whole = merge(&p, &[p.run_shard(0, 1, &|_, _| {}).unwrap()]).unwrap();
    let shards: Vec<_> = (0..5)
        .map(|i| p.run_shard(i, 5, &|_, _| {}).unwrap())
        .collect();
    assert_eq!(
        serde_json::to_string(&whole).unwrap(),
        serde_json::to_string(&merge(&p, &shards).unwrap()).unwrap()
    );
    for (d, design) in whole.designs.iter().enumerate() {
        assert!(design.capacity_retained.is_none() && design.scenarios.is_empty());
        let names: Vec<(&str, &str)> = design
            .workloads
            .iter()
            .map(|w| (w.workload.as_str(), w.scenario.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("ar", "healthy"),
                ("ar", "plane0-down"),
                ("ar", "rack-link"),
                ("w1", "healthy"),
                ("w1", "plane0-down"),
                ("w1", "rack-link"),
            ]
        );
        // The plane-down row is the collective asked of a study of that design directly.
        let f = p.design(d).unwrap();
        let sc =
            aifabric_model::Scenario::from_selectors(&f, &["a.bag.plane0".to_string()], &[], &[])
                .unwrap();
        let mut setup = Setup::default();
        setup.net.scale_up_gpus = 4;
        let direct = Study::new(&f, sc, setup)
            .collective(&CollectiveRequest {
                gpus: 16,
                sizes: vec![64 << 20],
                placement: Placement::Spread,
                ..CollectiveRequest::default()
            })
            .unwrap();
        let row = &design.workloads[1];
        assert_eq!(row.time_us, Some(direct.rows[0].time_us));
        assert_eq!(row.slowdown, direct.rows[0].slowdown);
        // Under `auto` (tree/ll128 here) the slowdown is not bounded by 1: ECMP hashes the
        // tree's flows afresh once a plane is down, and on one design they collide less
        // than on the healthy fabric (2.78 ms vs 3.21 ms).
        assert!(row.slowdown.unwrap() > 0.0);
        assert!(
            design.workloads[0].slowdown.is_none(),
            "healthy: no slowdown"
        );
    }
    // One link fewer per plane between the regions: the plane-down all-reduce is slower on
    // the 1-link design (d0) than on the 4-link one (d1), or equal.
    let t = |d: usize| whole.designs[d].workloads[1].time_us.unwrap();
    assert!(t(0) >= t(1), "{} vs {}", t(0), t(1));
    let table = aifabric::tables::sweep(&whole);
    assert_eq!(table.num_rows(), 12);
    let names: Vec<String> = table
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        [
            "design",
            "inter_bag[0].links_per_plane",
            "scenario",
            "workload",
            "time_us",
            "bus_bw_gbytes_per_s",
            "slowdown",
            "error"
        ]
    );
}

#[test]
fn bad_workloads_and_scenarios_name_the_fix() {
    let cases = [
        (
            "spec: two.yaml\nworkloads: [{collective: {gpus: 16}, job: x.yaml}]\n",
            "give one of",
        ),
        (
            "spec: two.yaml\nworkloads: [{collective: {gpus: 16, op: broadcast}}]\n",
            "unknown operation",
        ),
        (
            "spec: two.yaml\nworkloads: [{collective: {gpus: 16}, options: {lbb: 1}}]\n",
            "unknown option `lbb`",
        ),
        (
            "spec: two.yaml\nworkloads: [{job: nope.yaml}]\n",
            "cannot read job file",
        ),
        (
            "spec: two.yaml\nworkloads: [{collective: {gpus: 16}}]\nscenarios: [{name: x, fail: [no.such]}]\n",
            "scenario `x` on design d0",
        ),
        (
            "spec: two.yaml\nworkloads: [{collective: {gpus: 16}}]\nscenarios: [{name: healthy}]\n",
            "is taken",
        ),
        ("spec: two.yaml\n", "nothing to run"),
    ];
    for (text, want) in cases {
        let (_dir, p) = write_plan(text);
        let e = p.unwrap_err().to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
}
