//! The HTML report and report.json, as `Study::report` runs and lays them out (the runs are
//! the facade's, the layout the report crate's).

mod chromium;
mod report;

/// The report's data for `f`, as `aifabric report` gathers it.
fn data(
    f: &aifabric_model::Fabric,
    opts: &aifabric::ReportOptions,
) -> aifabric_report::data::ReportData {
    let d = aifabric::Study::healthy(f, aifabric::Setup::default())
        .report(opts, &|_, _, _| {})
        .unwrap()
        .0;
    assert!(d.is_complete(), "{:?}", d.failed_sections);
    d
}
