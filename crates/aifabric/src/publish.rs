//! What leaves a study for people and other tools: the HTML report's data and page, and the
//! exports (NetBox CSV, GraphML, node-link JSON, IP plan, DOT).

use crate::{Error, Study};
use aifabric_engine::sim::SimError;
use aifabric_report::data::{build, ReportData, ReportError, ReportOptions};
use aifabric_report::export::{write, ExportError, Format};

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
        // The spec (its spread build), the benchmark's GPUs or its collective are the
        // request's fault; BGP not settling is not.
        let data = build(self.fabric, &opts, progress).map_err(|e| match e {
            ReportError::Spec(_)
            | ReportError::Placement(_)
            | ReportError::Sim(SimError::Schedule(_) | SimError::Invalid(_)) => {
                Error::bad_request_from(e)
            }
            ReportError::Routing(_) | ReportError::Sim(_) => Error::runtime_from(e),
        })?;
        let html = aifabric_report::html::render(&data)
            .map_err(|e| Error::runtime_in("rendering the report", e))?;
        Ok((data, html))
    }

    /// Write file `name` of export `format` (one of [`Format::files`]) into `w`. A fabric
    /// the IPv6 plan cannot number is a bad request (change the spec); a writer that fails
    /// is a runtime failure.
    pub fn export(
        &self,
        format: Format,
        name: &str,
        w: &mut dyn std::io::Write,
    ) -> Result<(), Error> {
        write(self.fabric, format, name, w).map_err(|e| match e {
            ExportError::Plan(_) => Error::bad_request_from(e),
            ExportError::Io(_) | ExportError::NoFile(_) => Error::runtime_from(e),
        })
    }
}
