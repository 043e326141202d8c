//! `Study::goodput`: interruptions per job from failure rates and the fabric's blast radius.

use aifabric::goodput::{Cluster, ClusterJob, Rates, LLAMA3_SINGLE_POINT_ELEMENTS};
use aifabric::model::Fabric;
use aifabric::stages::model::{
    Catalog, Device, FabricBuilder, HardwareModel, NonMaxU16, NonMaxU32, PortGroup, PortKind,
    PortMode, Role, ZoneKind,
};
use aifabric::stages::spec::cluster::{parse_cluster, resolve_cluster};
use aifabric::stages::spec::rates::{parse_rates, resolve_rates};
use aifabric::{Setup, Study};
use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/clusters")
}

fn cluster(f: &Fabric, text: &str) -> Cluster {
    let (file, src) = parse_cluster("test.yaml", text).unwrap();
    resolve_cluster(f, &file, &src, &examples()).unwrap()
}

fn rates(f: &Fabric, jobs: &[&str], text: &str) -> Rates {
    let (file, src) = parse_rates("rates.yaml", text).unwrap();
    resolve_rates(f, jobs, &file, &src).unwrap()
}

/// The Llama 3 16k job packed, then a job of half its GPUs on the rest of `llama3-24k`.
const LLAMA3_16K_AND_8K: &str = "
jobs:
  - file: ../jobs/llama3-405b-16k.yaml
    placement: packed
  - name: half
    job:
      name: half
      gpus: 8192
      parallelism: { tp: 8, pp: 16, dp: 64 }
      scale_up: { gpus: 8, gbs_per_direction: 450 }
      model: { card: llama3-405b, sequence_length: 8192, micro_batch: 1, global_batch: 1024 }
      compute: { gpu: h100-sxm }
    placement: packed
";

#[test]
fn llama3_16k_job_calibrates_to_the_papers_interruptions_and_half_the_gpus_twice_the_mtbi() {
    let f = aifabric_spec::load("llama3-24k").unwrap();
    let c = cluster(&f, LLAMA3_16K_AND_8K);
    let r = Study::healthy(&f, Setup::default())
        .goodput(&c, &Rates::default())
        .unwrap();
    let (big, half) = (&r.jobs[0], &r.jobs[1]);
    // The calibration's divisor, derived from the fabric again: the 16k job's host links
    // and rack switches.
    assert_eq!(big.single_point_links, 16_384);
    assert_eq!(big.single_point_switches, 1_024);
    assert_eq!(
        big.single_point_links + big.single_point_switches,
        u64::from(LLAMA3_SINGLE_POINT_ELEMENTS)
    );
    // So the paper's 419 interruptions in 54 days come back: a consistency check of the
    // calibration, not an independent prediction.
    let mtbi = big.mtbi_h.unwrap();
    assert!((mtbi - 54.0 * 24.0 / 419.0).abs() < 1e-9, "{mtbi}");
    assert!((big.interruptions_per_day * 54.0 - 419.0).abs() < 1e-9);
    let top = &big.classes[0];
    assert_eq!((top.class.as_str(), top.count), ("gpu", 16_384));
    // Half the GPUs (and half the racks): twice the time between interruptions.
    let ratio = half.mtbi_h.unwrap() / mtbi;
    assert!((ratio - 2.0).abs() < 0.01, "{ratio}");
    // Young's interval and the effective fraction at it, from the figures in the report.
    let m = mtbi * 3600.0;
    let t = big.young_interval_s.unwrap();
    assert!((t - (2.0 * big.checkpoint_write_s * m).sqrt()).abs() < 1e-6);
    let eff = 1.0 - big.checkpoint_write_s / t - (t / 2.0 + big.restart_s) / m;
    assert!((big.effective_training_fraction - eff).abs() < 1e-12);
    assert!(half.effective_training_fraction > big.effective_training_fraction);
    assert!(r.notes.iter().any(|n| n.contains("consistency check")));
}

#[test]
fn the_example_cluster_is_the_calibration_job() {
    let f = aifabric_spec::load("llama3-24k").unwrap();
    let path = examples().join("llama3-24k-16k.yaml");
    let c = aifabric_spec::cluster::load_cluster(&f, path.to_str().unwrap()).unwrap();
    let r = Study::healthy(&f, Setup::default())
        .goodput(&c, &Rates::default())
        .unwrap();
    assert!((r.jobs[0].mtbi_h.unwrap() - 3.093_078_758_949_88).abs() < 1e-6);
}

#[test]
fn prometheus_cluster_is_quick() {
    // 216k GPUs and 2.3M links: single points per GPU, no routing per element.
    let f = aifabric_spec::load("prometheus").unwrap();
    let c = cluster(
        &f,
        "jobs:\n  - file: ../jobs/llama3-405b-131k.yaml\n  - file: ../jobs/llama3-405b-16k.yaml\n",
    );
    let t = std::time::Instant::now();
    let r = Study::healthy(&f, Setup::default())
        .goodput(&c, &Rates::default())
        .unwrap();
    assert!(t.elapsed().as_secs_f64() < 10.0, "{:?}", t.elapsed());
    assert_eq!(r.jobs.len(), 2);
    assert!(r.jobs[0].mtbi_h.unwrap() < r.jobs[1].mtbi_h.unwrap());
}

/// Eight GPUs, each with a host link to each of two rack switches, under one spine.
fn dual_homed() -> Fabric {
    let mut cat = Catalog::builtin();
    let nic = cat.insert(HardwareModel {
        name: "gpu-2x200g".into(),
        description: "a GPU with two 200G NIC ports, for tests".into(),
        ports: vec![PortGroup {
            kind: PortKind::Host,
            modes: vec![PortMode {
                count: 2,
                speed_mbps: 200_000,
            }],
        }],
        hbm_bytes: 0,
        sram_bytes: 0,
        gpu_memory_bytes: 80 << 30,
        power_w: 1_000.0,
        line_cards: 0,
        pfc_response_ns: 1_000,
    });
    let mut b = FabricBuilder::new("dual", cat);
    let r = b.add_region("r");
    let bl = b.add_building("b", r, 1);
    let z = b.add_zone("r.b.z", ZoneKind::Roce, r, Some(bl));
    let pd = b.add_power_domain("pd", Some(bl));
    let tor = b.catalog().find("minipack2").unwrap();
    let dev = |role, hw, index, rack| Device {
        role,
        hw,
        zone: z,
        index,
        plane: None,
        hall: NonMaxU16::new(0),
        pod: NonMaxU32::new(0),
        rack,
        power_domain: pd,
    };
    let spine = b.add_device(dev(Role::Ctsw, tor, 0, None));
    let t0 = b.add_device(dev(Role::Rtsw, tor, 0, NonMaxU32::new(0)));
    let t1 = b.add_device(dev(Role::Rtsw, tor, 1, NonMaxU32::new(0)));
    for g in 0..8 {
        let gid = b.add_device(dev(Role::Gpu, nic, g, NonMaxU32::new(0)));
        for t in [t0, t1] {
            b.add_bundle(gid, t, 1, PortKind::Host, 200_000, 3.0, 0, false)
                .unwrap();
        }
    }
    for t in [t0, t1] {
        b.add_bundle(t, spine, 2, PortKind::Ethernet, 400_000, 30.0, 0, false)
            .unwrap();
    }
    b.finish()
}

#[test]
fn gpus_without_single_points_only_get_gpu_side_rates() {
    let f = dual_homed();
    let it = aifabric_spec::job::parse("small-8.yaml", aifabric_fixtures::jobs::SMALL_8).unwrap();
    let gpus = f.devices_with_role(Role::Gpu).collect();
    let c = Cluster::new(
        &f,
        vec![ClusterJob {
            name: "small-8".into(),
            iteration: it,
            gpus,
            placed_by: "hosts".into(),
        }],
    )
    .unwrap();
    let rates = Rates::default();
    let r = Study::healthy(&f, Setup::default())
        .goodput(&c, &rates)
        .unwrap();
    let j = &r.jobs[0];
    assert_eq!((j.single_point_links, j.single_point_switches), (0, 0));
    let gpu_side: f64 = rates.per_gpu_per_day.iter().map(|(_, r)| r * 8.0).sum();
    assert!((j.interruptions_per_day - gpu_side).abs() < 1e-15);
    assert!(j
        .classes
        .iter()
        .filter(|c| c.per != "gpu")
        .all(|c| c.interruptions_per_day == 0.0));
}

/// A k = 4 fat tree (two GPUs per edge switch) with one named SRG per edge switch's
/// uplinks: a conduit whose cut confines the rack's GPUs to each other.
fn fat_tree_with_conduits() -> Fabric {
    let text = format!(
        "{}srgs:\n  - name: rack0-up\n    members: [r.b.z.rtsw0--r.b.z.ctsw0, \
         r.b.z.rtsw0--r.b.z.ctsw1]\n  - name: rack1-up\n    members: \
         [r.b.z.rtsw1--r.b.z.ctsw0, r.b.z.rtsw1--r.b.z.ctsw1]\n",
        aifabric_fixtures::specs::FAT_TREE_K4
    );
    aifabric_spec::build_str("ft4-srgs.yaml", &text).unwrap()
}

/// A two-GPU job packed on the first rack, then an eight-GPU job on the next four.
const TWO_AND_EIGHT: &str = "
jobs:
  - name: two
    job:
      name: two
      gpus: 2
      parallelism: { tp: 2 }
      scale_up: { gpus: 2 }
      model: { parameters: 1.0e9, layers: 4, hidden: 2048, sequence_length: 2048,
               micro_batch: 1, global_batch: 1 }
      compute: { peak_tflops: 989, efficiency: 0.4 }
    placement: packed
  - file: ../../crates/fixtures/jobs/small-8.yaml
    placement: packed
";

#[test]
fn named_srgs_stop_the_jobs_they_cut_and_count_with_their_rate() {
    let f = fat_tree_with_conduits();
    let c = cluster(&f, TWO_AND_EIGHT);
    let study = Study::healthy(&f, Setup::default());
    let r = study.goodput(&c, &Rates::default()).unwrap();
    // rack0's conduit confines `two` to its own rack: it keeps training; rack1's cuts
    // small-8's GPUs there off from its others.
    assert_eq!(r.jobs[0].srgs, Vec::<String>::new());
    assert_eq!(r.jobs[1].srgs, vec!["rack1-up".to_string()]);
    assert!(
        r.notes.iter().any(|n| n.contains("rack1-up")),
        "{:?}",
        r.notes
    );
    let without = r.jobs[1].interruptions_per_day;
    let rated = rates(&f, &[], "srgs_per_day: { rack1-up: 0.25, rack0-up: 1 }\n");
    let r = study.goodput(&c, &rated).unwrap();
    assert!((r.jobs[1].interruptions_per_day - without - 0.25).abs() < 1e-12);
    assert_eq!(r.jobs[0].interruptions_per_day, {
        let r0 = study.goodput(&c, &Rates::default()).unwrap();
        r0.jobs[0].interruptions_per_day
    });
    assert!(r.jobs[1].classes.iter().any(|c| c.class == "srg:rack1-up"));
}

#[test]
fn rates_files_override_and_their_errors_are_located() {
    let f = fat_tree_with_conduits();
    let r = rates(
        &f,
        &["two"],
        "per_gpu_per_day: { gpu: 0.001 }\nper_element_per_day: { link: 0 }\n\
         checkpoint: { write_s: 30 }\njobs:\n  two: { restart_s: 60 }\n",
    );
    assert_eq!(r.per_gpu_per_day[0], ("gpu".to_string(), 0.001));
    assert_eq!(r.link_per_day, 0.0);
    assert!(!r.network_calibrated());
    assert_eq!(r.checkpointing("two").write_s, 30.0);
    assert_eq!(r.checkpointing("two").restart_s, 60.0);
    assert_eq!(r.checkpointing("other").restart_s, 600.0);

    let err = |text: &str| {
        let (file, src) = match parse_rates("rates.yaml", text) {
            Ok(v) => v,
            Err(e) => return e,
        };
        resolve_rates(&f, &["two", "small-8"], &file, &src).unwrap_err()
    };
    let e = err("per_gpu_per_day:\n  gpu: 1e-4\n  hbm: 1e-4\n");
    assert_eq!((e.file.as_str(), e.line), ("rates.yaml", 3));
    assert!(e.message.contains("unknown host-side class `hbm`"), "{e}");
    assert_eq!(e.hint.as_deref(), Some("did you mean `hbm3`?"));
    let e = err("per_gpu_per_day:\n  switch: 1e-4\n");
    assert_eq!(e.line, 2);
    assert!(e.hint.unwrap().contains("per_element_per_day"));
    let e = err("per_element_per_day:\n  link: -1\n");
    assert_eq!(e.line, 2);
    assert!(e.message.contains("0 or more"), "{e}");
    let e = err("srgs_per_day:\n  rack9-up: 1\n");
    assert_eq!(e.line, 2);
    assert!(e.message.contains("unknown shared-risk group `rack9-up`"));
    let e = err("checkpoint:\n  write_s: 0\n");
    assert_eq!(e.line, 2);
    let e = err("jobs:\n  twoo: { write_s: 10 }\n");
    assert_eq!(e.line, 2);
    assert_eq!(e.hint.as_deref(), Some("did you mean `two`?"));
    let e = err("checkpoint: { write_s: 10, restrt_s: 5 }\n");
    assert_eq!(e.line, 1);
    assert!(e.column > 1);
    let e = err("per_gpu_per_day: { gpu: lots }\n");
    assert_eq!(e.line, 1);
}

#[test]
fn goodput_refuses_a_damaged_study() {
    let f = fat_tree_with_conduits();
    let c = cluster(&f, TWO_AND_EIGHT);
    let scenario = f.select("r.b.z.ctsw0").unwrap();
    let mut s = aifabric::model::Scenario::healthy(&f);
    scenario.apply_to(&mut s.failed);
    let e = Study::new(&f, s, Setup::default())
        .goodput(&c, &Rates::default())
        .unwrap_err();
    assert!(e.message().contains("healthy fabric"));
}
