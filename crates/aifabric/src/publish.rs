//! What leaves a study for people and other tools: the HTML report's data and page, and the
//! exports (NetBox CSV, GraphML, node-link JSON, IP plan, DOT).

use crate::gather::ReportOptions;
use crate::{Error, Study};
use aifabric_chakra::io::{replace_dir, write_atomic, DirError, OldFile};
use aifabric_report::data::{build, ReportData};
use aifabric_report::export::{write, ExportError, Format};
use aifabric_report::frr;
use std::path::{Path, PathBuf};

impl Study<'_> {
    /// The report's data (capacity, failure sweep, planar vs spread when `opts.spec_text` is
    /// given, collective benchmarks) and its self-contained HTML page. From the healthy
    /// fabric: a report of a damaged start is refused, as for failure sweeps. The runs are
    /// the facade's (`gather.rs`); the report crate only lays them out. A section whose run
    /// fails (a failure sweep, planar vs spread, the collectives, the jobs) does not stop
    /// the others: it is `None` in the data and listed in `failed_sections` with its error,
    /// and the page shows it failed ([`ReportData::is_complete`] says whether any did).
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
        let data = build(self.fabric, self.report_inputs(&opts, progress)?);
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
        if format == Format::Frr {
            return write_frr(&self.frr_topology()?, name, w);
        }
        write(self.fabric, format, name, w).map_err(|e| match e {
            ExportError::Plan(_) => Error::bad_request_from(e),
            ExportError::Io(_) | ExportError::NoFile(_) => Error::runtime_from(e),
        })
    }

    /// The routers and links of the FRR export under the study's control-plane options (ASN
    /// plan, link-bandwidth mode, maximum paths); a DSF fabric, or one the IPv6 plan cannot
    /// number, is a bad request.
    pub fn frr_topology(&self) -> Result<frr::Topology, Error> {
        self.frr_topology_aggregated(None)
    }

    /// [`Study::frr_topology`] with zones aggregated at their borders toward BAG
    /// (`unconditional`; conditional aggregation cannot be configured in FRR and is a bad
    /// request saying why).
    pub fn frr_topology_aggregated(
        &self,
        aggregation: Option<aifabric_routing::aggregation::Aggregation>,
    ) -> Result<frr::Topology, Error> {
        let opts = frr::FrrOptions {
            aggregation,
            plan: self.setup.plan,
            bandwidth: self.setup.bgp.bandwidth,
            max_paths: self.setup.bgp.max_paths,
            soft_drain: self.setup.bgp.soft_drain,
        };
        frr::topology(self.fabric, &opts).map_err(frr_error)
    }

    /// Write every file of export `format` into directory `out`: the whole set is written
    /// beside `out` and then takes its place, so `out` holds the old export or the new one,
    /// never a mix. Files of another format's earlier export stay; anything else in `out`
    /// stops it (a bad request: give a new or empty directory).
    pub fn export_to(&self, format: Format, out: &Path) -> Result<Vec<ExportedFile>, Error> {
        self.export_set(format, out, None, &mut |_, _, _| {})
    }

    /// [`Study::export_to`] (with `aggregation` for the FRR export, as
    /// [`Study::export_frr_to`]), calling `on_file(k, n, name)` before writing the k-th of
    /// its n files: a big export (`prometheus`'s NetBox CSVs are about 520 MB) says how far
    /// it is.
    pub fn export_to_with_progress(
        &self,
        format: Format,
        out: &Path,
        aggregation: Option<aifabric_routing::aggregation::Aggregation>,
        on_file: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<Vec<ExportedFile>, Error> {
        if aggregation.is_some() && format != Format::Frr {
            return Err(Error::bad_request(
                "--aggregation applies to --format frr only".to_owned(),
            ));
        }
        self.export_set(format, out, aggregation, on_file)
    }

    /// [`Study::export_to`] of the FRR export with zones aggregated at their borders toward
    /// BAG ([`Study::frr_topology_aggregated`]).
    pub fn export_frr_to(
        &self,
        out: &Path,
        aggregation: Option<aifabric_routing::aggregation::Aggregation>,
    ) -> Result<Vec<ExportedFile>, Error> {
        self.export_set(Format::Frr, out, aggregation, &mut |_, _, _| {})
    }

    fn export_set(
        &self,
        format: Format,
        out: &Path,
        aggregation: Option<aifabric_routing::aggregation::Aggregation>,
        on_file: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<Vec<ExportedFile>, Error> {
        let (names, topology) = if format == Format::Frr {
            let t = self.frr_topology_aggregated(aggregation)?;
            (frr::file_names(&t), Some(t))
        } else {
            (
                format.files().iter().map(|n| (*n).to_owned()).collect(),
                None,
            )
        };
        let export = |name: &str, w: &mut dyn std::io::Write| match &topology {
            Some(t) => write_frr(t, name, w),
            None => self.export(format, name, w),
        };
        // An earlier FRR export's files are those its topology.json lists (so a user's own
        // `*.bgpd.conf` in the folder is never taken for one and deleted).
        let old_frr: Vec<String> =
            aifabric_model::input::read_text(&out.join("topology.json"), 64 << 20)
                .ok()
                .and_then(|t| frr::files_of(&t))
                .unwrap_or_default();
        let sizes = replace_dir(
            out,
            |n| old_export_file(format, n, &old_frr),
            |dir| {
                let mut sizes = Vec::new();
                for (k, name) in names.iter().enumerate() {
                    on_file(k, names.len(), name);
                    let path = dir.join(name);
                    // The export's own error, kept: a fabric the plan cannot number is bad
                    // input; only a failed write is "cannot write".
                    let mut export_error = None;
                    write_atomic(&path, |w| {
                        export(name, w).map_err(|e| {
                            let io = std::io::Error::other(e.message().to_owned());
                            export_error = Some(e);
                            io
                        })
                    })
                    .map_err(|e| match export_error.take() {
                        Some(bad @ Error::BadRequest { .. }) => bad,
                        _ => Error::runtime_from(CannotWrite {
                            path: out.join(name),
                            source: e,
                        }),
                    })?;
                    sizes.push(std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0));
                }
                Ok::<_, Error>(sizes)
            },
        )?;
        Ok(names
            .iter()
            .zip(sizes)
            .map(|(name, bytes)| ExportedFile {
                file: name.clone(),
                path: out.join(name),
                bytes,
            })
            .collect())
    }
}

/// One file an export wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ExportedFile {
    /// Its name in the format's set (`devices.csv`).
    pub file: String,
    /// Where it was written.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
struct CannotWrite {
    path: PathBuf,
    source: std::io::Error,
}

/// What changed from report A to report B (`report.json` files, as `aifabric report`
/// writes them; [`aifabric_report::compare`]). A file that cannot be read, is not JSON or
/// is not a report is a bad request naming it.
pub fn compare_reports(a: &Path, b: &Path) -> Result<aifabric_report::compare::Comparison, Error> {
    let read = |p: &Path| -> Result<serde_json::Value, Error> {
        let text = std::fs::read_to_string(p).map_err(|e| {
            Error::bad_request(format!(
                "cannot read {}: {e}; give two report.json files that `aifabric report` wrote",
                p.display()
            ))
        })?;
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            Error::bad_request(format!(
                "{}:{}:{}: not JSON ({e}); give a report.json that `aifabric report` wrote",
                p.display(),
                e.line(),
                e.column()
            ))
        })?;
        if !(v["fabric"].is_string() && v["tiers"].is_array()) {
            return Err(Error::bad_request(format!(
                "{}: not a report (no `fabric` or `tiers`); give a report.json that \
                 `aifabric report` wrote",
                p.display()
            )));
        }
        Ok(v)
    };
    Ok(aifabric_report::compare::compare(&read(a)?, &read(b)?))
}

/// A directory of outputs not replaced: one holding other files is the request's fault (give
/// another); one that cannot be written, a runtime failure.
impl From<DirError> for Error {
    fn from(e: DirError) -> Self {
        match e {
            DirError::Foreign { .. } | DirError::Unnamed { .. } => Error::bad_request(format!(
                "{e}; give a new or empty directory, or one holding only earlier exports \
                 (their files are replaced or kept, nothing else is)"
            )),
            DirError::Io { .. } => Error::runtime_from(e),
        }
    }
}

/// What an export into a directory does with a file already there: one of this format's
/// earlier export is replaced, one of another format's stays beside it, anything else is not
/// an export's and stops it.
fn old_export_file(format: Format, name: &str, old_frr: &[String]) -> OldFile {
    let owns = |f: Format| match f {
        Format::Frr => old_frr.iter().any(|n| n == name),
        _ => f.files().contains(&name),
    };
    if owns(format) {
        OldFile::Replaced
    } else if Format::ALL.into_iter().chain([Format::Frr]).any(owns) {
        OldFile::Kept
    } else {
        OldFile::Foreign
    }
}

fn frr_error(e: frr::FrrError) -> Error {
    match e {
        frr::FrrError::Plan(_) | frr::FrrError::Dsf(_) | frr::FrrError::Conditional(_) => {
            Error::bad_request_from(e)
        }
        frr::FrrError::Io(_) | frr::FrrError::NoFile(_) => Error::runtime_from(e),
    }
}

fn write_frr(t: &frr::Topology, name: &str, w: &mut dyn std::io::Write) -> Result<(), Error> {
    frr::write(t, name, w).map_err(frr_error)
}
