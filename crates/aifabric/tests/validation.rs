//! Published figures as predictions (`aifabric::validation::collective_checks`), each with the
//! tolerance stated in its row. A row within its tolerance must stay within it; a known miss
//! stays in the table with its error, and its test pins that error (within 2 points) so
//! that a change of the model shows up here and in `VALIDATION.md` rather than silently.

use aifabric::validation::{collective_checks, job_checks, Check, Role};
use aifabric_workload::job::cards::H100_EFFICIENCY;

fn rows() -> Vec<Check> {
    collective_checks().expect("the validation setups run")
}

fn row<'a>(rows: &'a [Check], figure: &str) -> &'a Check {
    rows.iter()
        .find(|r| r.figure.contains(figure))
        .unwrap_or_else(|| panic!("no row `{figure}`"))
}

#[test]
fn collective_predictions_against_published_figures() {
    let rows = rows();
    assert_eq!(rows.len(), 4);
    for r in &rows {
        eprintln!(
            "{} | {:.3} {} vs {} | error {:+.1}%",
            r.figure,
            r.predicted,
            r.unit,
            r.published,
            r.error * 100.0
        );
    }
    for r in &rows {
        assert!(
            (r.error - (r.predicted / r.published - 1.0)).abs() < 1e-12,
            "{r:?}"
        );
        assert_eq!(r.holds(), r.error.abs() <= r.tolerance, "{r:?}");
        assert!(r.predicted.is_finite() && r.predicted > 0.0, "{r:?}");
    }
    // nccl-tests, large all-reduce per 400G NIC: 46-48 GB/s, within 5%.
    let nic = row(&rows, "per 400G NIC");
    assert!(nic.holds(), "{nic:?}");
    // The NIC's line rate (50 GB/s) bounds it.
    assert!(nic.predicted <= 50.0, "{nic:?}");

    // Known misses: NVLink inside one server. NVLS is predicted about 17% above 476 GB/s
    // (NCCL's own model: nvlsEfficiency 0.85 of 450 GB/s, no further loss); the ring
    // about 21% above 370 GB/s (the fluid ring reaches the 450 GB/s NVLink rate: no
    // copy-engine or SM limit is modelled).
    let nvls = row(&rows, "NVLS");
    assert!(
        !nvls.holds() && (nvls.error - 0.17).abs() < 0.02,
        "{nvls:?}"
    );
    let ring = row(&rows, "ring plateau");
    assert!(
        !ring.holds() && (ring.error - 0.21).abs() < 0.02,
        "{ring:?}"
    );
    assert!(
        nvls.predicted > ring.predicted,
        "NVLS beats the ring at large sizes"
    );

    // Known miss: E-ECMP's gain over ECMP is predicted far above Meta's "up to 40%": one
    // flow per ring hop hashed alone collides on the rack uplinks far more in the model than
    // in production (where ECMP already had mitigations); the gain is at least positive.
    let gain = row(&rows, "E-ECMP");
    assert!(gain.predicted > 1.0, "{gain:?}");
    assert!(!gain.holds(), "{gain:?}");
}

#[test]
fn auto_bus_bandwidth_rises_with_size_at_scale() {
    // 1,024 GPUs of llama3-24k, every power of two from 1 KiB to 16 GiB: NCCL's tuner picks
    // tree/LL for small sizes (latency), the ring at the largest; the bus bandwidth never
    // falls as the size grows (the choice is the minimum of candidates whose time per byte
    // only falls), and mid sizes lose to latency.
    use aifabric::{CollectiveRequest, Proto, Setup, Study};
    let f = aifabric::stages::spec::load("llama3-24k").unwrap();
    let r = Study::healthy(&f, Setup::default())
        .collective(&CollectiveRequest {
            gpus: 1024,
            sizes: (10..=34).map(|k| 1u64 << k).collect(),
            ..CollectiveRequest::default()
        })
        .unwrap();
    let mut prev = 0.0;
    for row in &r.rows {
        assert!(
            row.bus_bw_gbytes_per_s >= prev * (1.0 - 1e-12),
            "{} B: {} after {prev}",
            row.bytes,
            row.bus_bw_gbytes_per_s
        );
        prev = row.bus_bw_gbytes_per_s;
    }
    let first = &r.rows[0];
    assert_eq!(
        (first.algo, first.proto),
        (aifabric::Algo::Tree, Some(Proto::Ll))
    );
    let last = r.rows.last().unwrap();
    assert_eq!(last.algo, aifabric::Algo::Ring);
    // 1 MiB at this scale is latency-bound: under a tenth of the largest size's bus bandwidth.
    let mib = r.rows.iter().find(|x| x.bytes == 1 << 20).unwrap();
    assert!(mib.bus_bw_gbytes_per_s < 0.1 * last.bus_bw_gbytes_per_s);
}
#[test]
fn llama3_runs_the_h100_card_and_its_calibration() {
    let (checks, derived) = job_checks().unwrap();
    for c in &checks {
        eprintln!(
            "{:?} {}: published {} predicted {:.1} error {:+.1}%",
            c.role,
            c.figure,
            c.published,
            c.predicted,
            100.0 * c.error
        );
    }
    // The card stores the efficiency its calibration run derives, to 3 digits: when the
    // model changes, the card is derived again (`aifabric validate` prints the value).
    assert!(
        (derived - H100_EFFICIENCY).abs() <= 5e-4,
        "the H100 card's efficiency {H100_EFFICIENCY} is no longer what its calibration run \
         derives ({derived:.4}): store the new value in aifabric_workload::job::cards"
    );
    assert_eq!(
        checks
            .iter()
            .filter(|c| c.role == Role::Calibration)
            .count(),
        1
    );
    for c in checks.iter().filter(|c| c.role == Role::Prediction) {
        assert!(
            c.holds(),
            "{}: predicted {:.1}, published {}, error {:+.1}% beyond the stated {:.0}%",
            c.figure,
            c.predicted,
            c.published,
            100.0 * c.error,
            100.0 * c.tolerance
        );
    }
}

#[test]
fn validation_md_is_what_the_command_generates() {
    let (v, _) = aifabric::validation::all().unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../VALIDATION.md");
    let file = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        file == v.markdown(),
        "VALIDATION.md is out of date: run `aifabric validation --markdown > VALIDATION.md`"
    );
    // At least six published figures, one of them the calibration point.
    assert!(v.checks.len() >= 7, "{}", v.checks.len());
}
