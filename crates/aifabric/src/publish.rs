//! What leaves a study for people and other tools: the HTML report's data and page, and the
//! exports (NetBox CSV, GraphML, node-link JSON, IP plan, DOT).

use crate::{Error, Study};
use aifabric_report::data::{build, ReportData, ReportOptions};
use aifabric_report::export::{write, Format};

impl Study<'_> {
    /// The report's data (capacity, failure sweep, planar vs spread when `opts.spec_text` is
    /// given, collective benchmarks) and its self-contained HTML page. From the healthy
    /// fabric: a report of a damaged start is refused, as for failure sweeps.
    /// `progress` gets (step, steps, what).
    pub fn report(
        &self,
        opts: &ReportOptions,
        progress: &dyn Fn(u64, u64, &str),
    ) -> Result<(ReportData, String), Error> {
        let mut opts = opts.clone();
        if opts.state.is_none() {
            opts.state = crate::failures::starting_state(&self.scenario, "")?;
        }
        let data = build(self.fabric, &opts, progress).map_err(Error::runtime_from)?;
        let html = aifabric_report::html::render(&data)
            .map_err(|e| Error::runtime_in("rendering the report", e))?;
        Ok((data, html))
    }

    /// Write file `name` of export `format` (one of [`Format::files`]) into `w`.
    pub fn export(
        &self,
        format: Format,
        name: &str,
        w: &mut dyn std::io::Write,
    ) -> Result<(), Error> {
        write(self.fabric, format, name, w).map_err(Error::runtime_from)
    }
}
