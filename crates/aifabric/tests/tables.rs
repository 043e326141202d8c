//! Per-record tables: each row is a record of the JSON contract (same values, same order),
//! the per-link table adds up to the per-tier summary the engine computes apart, and an
//! Arrow IPC file reads back as the batch written.

use aifabric::tables;
use aifabric::{FailureRequest, Pattern, Placement, Setup, Study, TrafficSource};
use arrow_array::{Array, Float64Array, RecordBatch, StringArray, UInt64Array};

fn col<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> &'a T {
    b.column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap_or_else(|| panic!("{name} has another type"))
}

#[test]
fn the_scenario_table_is_the_reports_records() {
    let f = aifabric_spec::build_str(
        "two",
        aifabric_fixtures::specs::TWO_REGIONS_NSF_2_PODS_PLANAR,
    )
    .unwrap();
    let req = FailureRequest {
        sweep: "montecarlo".into(),
        samples: 200,
        seed: 3,
        probability: vec!["link=0.01".into()],
        ..FailureRequest::default()
    };
    let r = Study::healthy(&f, Setup::default())
        .failures(&req, &|_, _| {})
        .unwrap();
    let t = tables::scenarios(&r);
    assert_eq!(t.num_rows(), r.scenarios.len());
    assert!(r.scenarios.len() > 10, "link draws give many patterns");
    let pairs = r.summary.healthy_gbps.len() + r.summary.healthy_maxflow_gbps.len();
    assert_eq!(t.num_columns(), 9 + pairs);
    let names = col::<StringArray>(&t, "scenario");
    let min = col::<Float64Array>(&t, "min_capacity_retained");
    let draws = col::<UInt64Array>(&t, "draws");
    for (i, s) in r.scenarios.iter().enumerate() {
        assert_eq!(names.value(i), s.scenario);
        assert_eq!(min.value(i).to_bits(), s.min_capacity_retained.to_bits());
        assert_eq!(draws.value(i), s.draws);
        for (p, v) in &s.capacity_retained {
            let c = col::<Float64Array>(&t, &format!("capacity_retained[{p}]"));
            assert_eq!(c.value(i).to_bits(), v.to_bits());
        }
        for (p, v) in &s.maxflow_retained {
            let c = col::<Float64Array>(&t, &format!("maxflow_retained[{p}]"));
            assert_eq!(c.value(i).to_bits(), v.to_bits());
        }
    }
    // Draws add up to the sweep's.
    assert_eq!(draws.values().iter().sum::<u64>(), 200);
}

#[test]
fn the_flow_and_link_tables_agree_with_the_summary() {
    let f = aifabric_spec::load("llama3-24k").unwrap();
    let study = Study::healthy(&f, Setup::default());
    let src = TrafficSource::Pattern {
        pattern: Pattern::Permutation,
        gpus: 256,
        bytes: 8 << 20,
    };
    let (report, t) = study.traffic_tables(&src, None, Placement::Spread).unwrap();
    let plain = study.traffic(&src, None, Placement::Spread).unwrap();
    assert_eq!(
        serde_json::to_string(&report).unwrap(),
        serde_json::to_string(&plain).unwrap(),
        "the tables change nothing in the report"
    );
    let r = &report.run.result;
    assert_eq!(t.flows.num_rows() as u64, r.flows);
    let bytes = col::<UInt64Array>(&t.flows, "bytes");
    assert_eq!(bytes.values().iter().sum::<u64>() as f64, r.bytes);
    let fct = col::<Float64Array>(&t.flows, "fct_s");
    let max = fct.values().iter().copied().fold(0.0, f64::max);
    assert_eq!(max.to_bits(), r.fct.max_s.to_bits());
    let start = col::<Float64Array>(&t.flows, "start_s");
    assert_eq!(start.null_count(), 0, "every flow starts");
    // A permutation: every node sends once and receives once.
    let src_gpu = col::<StringArray>(&t.flows, "src_gpu");
    let mut seen: Vec<&str> = (0..src_gpu.len()).map(|i| src_gpu.value(i)).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 256);

    // Links: per tier, count and max equal the engine's tier summary; busiest first.
    let tier = col::<StringArray>(&t.links, "tier");
    let util = col::<Float64Array>(&t.links, "utilization");
    for w in util.values().windows(2) {
        assert!(w[0] >= w[1]);
    }
    for tu in &r.tiers {
        let rows: Vec<f64> = (0..tier.len())
            .filter(|&i| tier.value(i) == tu.tier)
            .map(|i| util.value(i))
            .collect();
        assert_eq!(rows.len() as u64, tu.resources, "tier {}", tu.tier);
        assert_eq!(rows[0].to_bits(), tu.max.to_bits(), "tier {}", tu.tier);
    }
    let first = col::<StringArray>(&t.links, "resource").value(0);
    assert_eq!(first, r.bottlenecks[0].resource);
}

#[test]
fn an_ipc_file_reads_back_as_written() {
    let f = aifabric_spec::build_str(
        "two",
        aifabric_fixtures::specs::TWO_REGIONS_NSF_2_PODS_PLANAR,
    )
    .unwrap();
    let r = Study::healthy(&f, Setup::default())
        .failures(&FailureRequest::default(), &|_, _| {})
        .unwrap();
    let t = tables::scenarios(&r);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.arrow");
    tables::write_ipc(&path, &t).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let reader = arrow_ipc::reader::FileReader::try_new(file, None).unwrap();
    let back: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    assert_eq!(back, vec![t]);
    // Same inputs, same bytes.
    let again = dir.path().join("again.arrow");
    tables::write_ipc(&again, &tables::scenarios(&r)).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        std::fs::read(&again).unwrap()
    );
}
