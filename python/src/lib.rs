//! `aifabric._native`: the Rust side of the Python package. Every call is a call of the
//! `aifabric` facade (the one the CLI makes), its result the same JSON contract as text (the
//! Python side turns it into dicts) and per-record tables as Arrow (the C stream interface:
//! pyarrow, pandas and polars take them without copying).
//!
//! Long calls run on a worker thread with the GIL released; the calling thread waits in
//! slices of 50 ms, checks Python's signals and calls the caller's progress callback between
//! them, so Ctrl-C raises `KeyboardInterrupt` at once. Failure sweeps and sweeps then stop
//! within a scenario (their progress callbacks unwind out of the library); the other calls
//! have no such points, finish on their thread, and their result is dropped.

use aifabric::model::{Fabric as Model, Scenario};
use aifabric::stages::spec::SpecError as RustSpecError;
use aifabric::{Error, Setup, Study};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3_arrow::PyTable;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

pyo3::create_exception!(
    aifabric,
    SpecError,
    PyValueError,
    "A spec, scenario, job or trace file that cannot be read: `file`, `line` and `column` \
     (1-based, 0 when unknown) say where, `hint` how to fix it."
);
pyo3::create_exception!(
    aifabric,
    BadRequest,
    PyValueError,
    "A request that cannot be met as asked (too many GPUs, an unknown selector, a bad \
     option): the message says what to change. The CLI exits 2 on these."
);
pyo3::create_exception!(
    aifabric,
    FabricError,
    PyRuntimeError,
    "The fabric cannot carry the request (GPUs cut off by the scenario) or an output cannot \
     be written. The CLI exits 1 on these."
);

/// A spec error as a Python `SpecError` carrying its place and hint.
fn spec_error(py: Python<'_>, e: &RustSpecError) -> PyErr {
    let err = SpecError::new_err(e.to_string());
    let v = err.value(py);
    let _ = v.setattr("file", e.file.clone());
    let _ = v.setattr("line", e.line);
    let _ = v.setattr("column", e.column);
    let _ = v.setattr("hint", e.hint.clone());
    err
}

/// A facade error as `BadRequest` / `FabricError`, or `SpecError` when a spec error is
/// behind it.
fn error(py: Python<'_>, e: Error) -> PyErr {
    if let Some(s) = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<RustSpecError>()) {
        return spec_error(py, s);
    }
    match e {
        Error::BadRequest { message, .. } => BadRequest::new_err(message),
        Error::Runtime { message, .. } => FabricError::new_err(message),
    }
}

/// What a worker produced: a value or the error to raise.
enum Failed {
    Facade(Error),
    Spec(RustSpecError),
    Bad(String),
    Runtime(String),
}

impl From<Error> for Failed {
    fn from(e: Error) -> Self {
        Failed::Facade(e)
    }
}
impl From<RustSpecError> for Failed {
    fn from(e: RustSpecError) -> Self {
        Failed::Spec(e)
    }
}

impl Failed {
    fn raise(self, py: Python<'_>) -> PyErr {
        match self {
            Failed::Facade(e) => error(py, e),
            Failed::Spec(e) => spec_error(py, &e),
            Failed::Bad(m) => BadRequest::new_err(m),
            Failed::Runtime(m) => FabricError::new_err(m),
        }
    }
}

/// What a worker shares with the calling thread: the cancel flag (set when the caller was
/// interrupted) and the progress of long calls (done, total), reported by [`Ctx::tick`].
#[derive(Default)]
struct Ctx {
    cancel: AtomicBool,
    done: AtomicU64,
    total: AtomicU64,
}

/// What a cancelled worker unwinds with (by `resume_unwind`, which runs no panic hook, so
/// nothing is printed).
struct Cancelled;

impl Ctx {
    /// Record progress, and unwind out of the library if the caller was interrupted: what
    /// the progress callbacks of failure sweeps and sweeps call, so an interrupted sweep stops
    /// within one scenario (or task) instead of running on in the background.
    fn tick(&self, done: u64, total: u64) {
        if self.cancel.load(Ordering::Relaxed) {
            std::panic::resume_unwind(Box::new(Cancelled));
        }
        self.total.store(total, Ordering::Relaxed);
        self.done.fetch_max(done, Ordering::Relaxed);
    }
}

/// Run `work` on a worker thread with the GIL released, checking Python's signals every
/// 50 ms (Ctrl-C raises `KeyboardInterrupt` in the caller at once, and sets the cancel flag
/// `work` sees) and calling `progress(done, total)` from the calling thread when the work
/// reported more done.
fn run<T: Send + 'static>(
    py: Python<'_>,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce(&Ctx) -> Result<T, Failed> + Send + 'static,
) -> PyResult<T> {
    let ctx = Arc::new(Ctx::default());
    let shared = Arc::clone(&ctx);
    let work = move || work(&shared);
    let mut reported = 0;
    let report = |reported: &mut u64| -> PyResult<()> {
        let done = ctx.done.load(Ordering::Relaxed);
        if let Some(cb) = progress.filter(|_| done > *reported) {
            *reported = done;
            cb.call1((done, ctx.total.load(Ordering::Relaxed)))?;
        }
        Ok(())
    };
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    // Shared with the GIL-free wait below, which must be `Send`.
    let rx = std::sync::Mutex::new(rx);
    std::thread::Builder::new()
        .name("aifabric".into())
        // Prometheus-sized fabrics recurse deeper than the default 2 MiB of a spawned thread.
        .stack_size(64 << 20)
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            let _ = tx.send(r);
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start a worker thread: {e}")))?;
    loop {
        match py.detach(|| {
            let rx = rx.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            rx.recv_timeout(Duration::from_millis(50))
        }) {
            Ok(Ok(r)) => {
                let r = r.map_err(|f| f.raise(py))?;
                report(&mut reported)?;
                return Ok(r);
            }
            Ok(Err(panic)) => {
                let what = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic");
                return Err(PyRuntimeError::new_err(format!(
                    "internal error in aifabric (please report it): {what}"
                )));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals().and_then(|_| report(&mut reported)) {
                    ctx.cancel.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err("the aifabric worker thread died"))
            }
        }
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String, Failed> {
    serde_json::to_string(&aifabric::versioned(v))
        .map_err(|e| Failed::Runtime(format!("encoding the result: {e}")))
}

fn table(batch: aifabric::tables::arrow_array::RecordBatch) -> PyResult<PyTable> {
    let schema = batch.schema();
    PyTable::try_new(vec![batch], schema)
}

/// A scenario as the Python side passes it: fail, drain and drain-soft selectors and an
/// optional scenario file.
type ScenarioArg = (Vec<String>, Vec<String>, Vec<String>, Option<String>);

/// No scenario: the healthy fabric.
fn healthy() -> ScenarioArg {
    (Vec::new(), Vec::new(), Vec::new(), None)
}

/// The scenario `s` on `f`, and the fabric it runs on: `f`, or a copy of it at the link
/// speeds the scenario file gives (the network as built, `aifabric import`).
fn scenario<'f>(
    f: &'f Model,
    s: &ScenarioArg,
) -> Result<(std::borrow::Cow<'f, Model>, Scenario), Failed> {
    let (fail, drain, soft, file) = s;
    let mut sc =
        Scenario::from_selectors(f, fail, drain, soft).map_err(|e| Failed::Bad(e.to_string()))?;
    let mut on = std::borrow::Cow::Borrowed(f);
    if let Some(path) = file {
        let (file, src) = aifabric::stages::spec::scenario::load_scenario(path)?;
        aifabric::stages::spec::scenario::apply_scenario(f, &file, &src, &mut sc)?;
        if !file.link_speeds.is_empty() {
            aifabric::stages::spec::scenario::apply_link_speeds(on.to_mut(), &file, &src)?;
        }
    }
    Ok((on, sc))
}

/// The scenario as the CLI describes it (`fail A, B; drain C; scenario FILE`).
fn describe(s: &ScenarioArg) -> String {
    let (fail, drain, soft, file) = s;
    let mut parts = Vec::new();
    for (what, list) in [("fail", fail), ("drain", drain), ("drain-soft", soft)] {
        if !list.is_empty() {
            parts.push(format!("{what} {}", list.join(", ")));
        }
    }
    if let Some(path) = file {
        parts.push(format!("scenario {path}"));
    }
    parts.join("; ")
}

fn parse<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, Failed>
where
    T::Err: std::fmt::Display,
{
    v.parse()
        .map_err(|e| Failed::Bad(format!("{key}={v:?}: {e}")))
}

/// A traffic matrix from a file (`tm`) or a generated `pattern` over `gpus` of `size`.
fn traffic_source(
    tm: Option<String>,
    pattern: Option<String>,
    size: &str,
    gpus: Option<u32>,
) -> Result<aifabric::TrafficSource, Failed> {
    Ok(match (tm, pattern) {
        // One source: silently running the file and ignoring the pattern (or the other way
        // round) would answer a question that was not asked.
        (Some(path), Some(p)) => {
            return Err(Failed::Bad(format!(
                "tm={path:?} and pattern={p:?}: give one or the other (a file, or a pattern \
                 over gpus=)"
            )))
        }
        (Some(path), None) => aifabric::TrafficSource::File(path),
        (None, Some(p)) => aifabric::TrafficSource::Pattern {
            pattern: parse("pattern", &p)?,
            gpus: gpus.unwrap_or(1024),
            bytes: aifabric::size::parse_size(size)
                .filter(|&b| b > 0)
                .ok_or_else(|| {
                    Failed::Bad(format!(
                        "size {size:?}: give a size in bytes like 1M, 4KiB, 2G or 4096 (at least 1)"
                    ))
                })?,
        },
        (None, None) => {
            return Err(Failed::Bad(
                "give tm=FILE or pattern=, e.g. pattern=\"permutation\"".into(),
            ))
        }
    })
}

/// The packet engine's configuration for `engine` from its keyword arguments, as strings
/// (Python passes `str(value)`).
fn packet_config(
    m: &HashMap<String, String>,
    engine: aifabric::Engine,
) -> Result<aifabric::packet::Config, Failed> {
    let mut o = aifabric::packet::PacketOptions::default();
    let (mut seed, mut switch_latency_us) = (None, None);
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    for k in keys {
        let v = m[k].clone();
        match k.as_str() {
            "preset" => o.preset = Some(parse(k, &v)?),
            "lb" => o.lb = Some(parse(k, &v)?),
            "cc" => o.cc = Some(parse(k, &v)?),
            "nscc_base_rtt" => o.nscc_base_rtt = Some(parse(k, &v)?),
            "ecn" => o.ecn = Some(parse(k, &v)?),
            "mtu" => o.mtu_bytes = Some(parse(k, &v)?),
            "queue_bytes" => o.queue_bytes = Some(parse(k, &v)?),
            "ack_bytes" => o.ack_bytes = Some(parse(k, &v)?),
            "trim" => {
                o.trim = Some(match v.as_str() {
                    "True" | "true" | "1" => true,
                    "False" | "false" | "0" => false,
                    _ => return Err(Failed::Bad(format!("trim={v:?}: give True or False"))),
                })
            }
            "link_latency_us" => o.link_latency_us = Some(parse(k, &v)?),
            "switch_latency_us" => switch_latency_us = Some(parse(k, &v)?),
            "rto_us" => o.rto_us = Some(parse(k, &v)?),
            "seed" => seed = Some(parse(k, &v)?),
            "end_us" => o.end_us = Some(parse(k, &v)?),
            "pfc" => o.pfc = Some(parse(k, &v)?),
            "pfc_headroom" => o.pfc_headroom = Some(parse(k, &v)?),
            "admission" => o.admission = Some(parse(k, &v)?),
            "dsf_cell_bytes" => o.dsf_cell_bytes = Some(parse(k, &v)?),
            "dsf_credit_bytes" => o.dsf_credit_bytes = Some(parse(k, &v)?),
            "partitions" => o.partitions = Some(parse(k, &v)?),
            "draw_seed" => o.draw_seed = Some(parse(k, &v)?),
            _ => {
                return Err(Failed::Bad(format!(
                    "{k}: not a packet-engine option; they are preset, lb, cc, nscc_base_rtt, mtu, \
                     queue_bytes, ecn, trim, ack_bytes, link_latency_us, switch_latency_us, \
                     rto_us, seed, end_us, pfc, pfc_headroom, admission, dsf_cell_bytes, \
                     dsf_credit_bytes, partitions, draw_seed"
                )))
            }
        }
    }
    o.check_engine(engine)?;
    Ok(o.config(seed, switch_latency_us)?)
}

/// A collective's or a job's engine: `flow` (no packet options), else the packet engine's
/// configuration with it.
fn packet_timing(
    engine: &str,
    packet: &HashMap<String, String>,
) -> Result<Option<(aifabric::packet::Config, aifabric::Engine)>, Failed> {
    let engine: aifabric::Engine = parse("engine", engine)?;
    if engine == aifabric::Engine::Flow {
        return Ok(None);
    }
    Ok(Some((packet_config(packet, engine)?, engine)))
}

fn setup(opts: &HashMap<String, String>) -> Result<Setup, Failed> {
    Ok(Setup::from_options(opts.iter())?)
}

/// A built fabric: the model, shared with worker threads.
#[pyclass(frozen, module = "aifabric._native")]
struct NativeFabric {
    model: Arc<Model>,
}

/// Build a fabric from a built-in spec name or a YAML file path.
#[pyfunction]
fn load(py: Python<'_>, spec: String) -> PyResult<NativeFabric> {
    run(py, None, move |_| Ok(aifabric::stages::spec::load(&spec)?))
        .map(|m| NativeFabric { model: Arc::new(m) })
}

/// Build a fabric from YAML text; `name` names it in errors.
#[pyfunction]
fn from_yaml(py: Python<'_>, name: String, text: String) -> PyResult<NativeFabric> {
    run(py, None, move |_| {
        Ok(aifabric::stages::spec::build_str(&name, &text)?)
    })
    .map(|m| NativeFabric { model: Arc::new(m) })
}

/// The built-in specs: (name, description) pairs.
#[pyfunction]
fn builtin_specs() -> Vec<(String, String)> {
    aifabric::stages::spec::builtin::list()
        .map(|(n, d)| (n.to_owned(), d.to_owned()))
        .collect()
}

impl NativeFabric {
    /// Run `work` on a study of this fabric under `sc` with `opts`.
    fn study<T: Send + 'static>(
        &self,
        py: Python<'_>,
        sc: ScenarioArg,
        opts: HashMap<String, String>,
        progress: Option<&Bound<'_, PyAny>>,
        work: impl FnOnce(&Study<'_>, &ScenarioArg, &Ctx) -> Result<T, Failed> + Send + 'static,
    ) -> PyResult<T> {
        let model = Arc::clone(&self.model);
        run(py, progress, move |ctx| {
            let (on, s) = scenario(&model, &sc)?;
            let study = Study::new(&on, s, setup(&opts)?).described(describe(&sc));
            work(&study, &sc, ctx)
        })
    }
}

#[pymethods]
impl NativeFabric {
    /// The fabric's name.
    #[getter]
    fn name(&self) -> String {
        self.model.name().to_owned()
    }

    /// Devices, links and GPUs: (gpus, switches, links).
    fn counts(&self) -> (u64, u64, u64) {
        use aifabric::model::Role;
        let f = &self.model;
        let gpus = f.devices_with_role(Role::Gpu).count() as u64;
        let devices = f.devices().len() as u64;
        (gpus, devices - gpus, f.links().len() as u64)
    }

    /// Every job's interruptions and effective training time (`aifabric goodput --json`):
    /// a cluster file's path and an optional rates file's path.
    #[pyo3(signature = (jobs, rates=None))]
    fn goodput(
        &self,
        py: Python<'_>,
        jobs: String,
        rates: Option<String>,
    ) -> PyResult<(String, PyTable)> {
        let (json, batch) = self.study(py, healthy(), HashMap::new(), None, move |s, _, _| {
            let f = s.fabric();
            let cluster = aifabric::stages::spec::cluster::load_cluster(f, &jobs)?;
            let rates = match &rates {
                Some(path) => {
                    let names: Vec<&str> = cluster.jobs().iter().map(|j| j.name.as_str()).collect();
                    aifabric::stages::spec::rates::load_rates(f, &names, path)?
                }
                None => aifabric::goodput::Rates::default(),
            };
            let r = s.goodput(&cluster, &rates)?;
            Ok((to_json(&r)?, aifabric::tables::goodput_jobs(&r)))
        })?;
        Ok((json, table(batch)?))
    }

    /// The drift of the network as found (a NetBox export, LLDP tables) from this plan.
    #[pyo3(signature = (netbox, lldp, jobs=None))]
    fn drift(
        &self,
        py: Python<'_>,
        netbox: Option<String>,
        lldp: Vec<String>,
        jobs: Option<String>,
    ) -> PyResult<String> {
        let model = Arc::clone(&self.model);
        self.study(py, healthy(), HashMap::new(), None, move |s, _, _| {
            let lldp: Vec<&std::path::Path> = lldp.iter().map(std::path::Path::new).collect();
            let mut r = aifabric::as_built::as_found(
                s.fabric(),
                netbox.as_deref().map(std::path::Path::new),
                &lldp,
            )?;
            if let Some(jobs) = jobs {
                let c = aifabric::stages::spec::cluster::load_cluster(&model, &jobs)?;
                r.cost_to_jobs(s.fabric(), &c, aifabric::Setup::default())?;
            }
            to_json(&r)
        })
    }

    fn capacity(&self, py: Python<'_>, scenario: ScenarioArg) -> PyResult<String> {
        self.study(py, scenario, HashMap::new(), None, |s, _, _| {
            to_json(&s.capacity())
        })
    }

    #[pyo3(signature = (device, prefix, scenario, opts))]
    fn routes(
        &self,
        py: Python<'_>,
        device: String,
        prefix: Option<String>,
        scenario: ScenarioArg,
        opts: HashMap<String, String>,
    ) -> PyResult<String> {
        self.study(py, scenario, opts, None, move |s, _, _| {
            let routes = s.routes(&device, prefix.as_deref())?;
            to_json(&serde_json::json!({ "routes": routes }))
        })
    }

    fn blackholes(
        &self,
        py: Python<'_>,
        aggregation: String,
        tier: String,
        scenario: ScenarioArg,
        opts: HashMap<String, String>,
    ) -> PyResult<String> {
        self.study(py, scenario, opts, None, move |s, _, _| {
            let r = s.blackholes(parse("aggregation", &aggregation)?, parse("tier", &tier)?)?;
            to_json(&r)
        })
    }

    /// A failure sweep: its JSON report and its scenario table.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (sweep, samples, first_draw, seed, probability, mtbf, top, pod_sites, aggregation, mitigations, scenario, opts, progress=None, keep=None))]
    fn failures(
        &self,
        py: Python<'_>,
        sweep: String,
        samples: u64,
        first_draw: u64,
        seed: u64,
        probability: Vec<String>,
        mtbf: Vec<String>,
        top: usize,
        pod_sites: bool,
        aggregation: Option<(String, String)>,
        mitigations: bool,
        scenario: ScenarioArg,
        opts: HashMap<String, String>,
        progress: Option<Bound<'_, PyAny>>,
        keep: Option<String>,
    ) -> PyResult<(String, PyTable)> {
        let progress = progress.as_ref();
        let (json, batch) = self.study(py, scenario, opts, progress, move |s, sc, ctx| {
            let keep = keep.as_deref().map(aifabric::parse_keep).transpose()?;
            let aggregation = match aggregation {
                Some((a, t)) => Some((parse("aggregation", &a)?, parse("tier", &t)?)),
                None => None,
            };
            let req = aifabric::FailureRequest {
                state: describe(sc),
                sweep,
                samples,
                first_draw,
                seed,
                probability,
                mtbf,
                aggregation,
                mitigations,
                top,
                pod_sites,
                keep,
            };
            let r = s.failures(&req, &|done, total| ctx.tick(done, total))?;
            Ok((to_json(&r)?, aifabric::tables::scenarios(&r)))
        })?;
        Ok((json, table(batch)?))
    }

    #[allow(clippy::too_many_arguments)]
    fn collective(
        &self,
        py: Python<'_>,
        op: String,
        algo: Option<String>,
        proto: Option<String>,
        gpus: u32,
        placement: String,
        sizes: String,
        size_list: Option<Vec<u64>>,
        alpha_us: f64,
        scenario: ScenarioArg,
        opts: HashMap<String, String>,
        engine: String,
        packet: HashMap<String, String>,
    ) -> PyResult<String> {
        self.study(py, scenario, opts, None, move |s, _, _| {
            let timing = packet_timing(&engine, &packet)?;
            if !(alpha_us.is_finite() && alpha_us >= 0.0) {
                return Err(Failed::Bad("alpha_us must be a number >= 0".into()));
            }
            if gpus < 2 {
                return Err(Failed::Bad("gpus must be at least 2".into()));
            }
            let req = aifabric::CollectiveRequest {
                op: aifabric::collective_op(&op).map_err(Failed::Bad)?,
                algo: algo.as_deref().map(|a| parse("algo", a)).transpose()?,
                proto: proto.as_deref().map(|p| parse("proto", p)).transpose()?,
                gpus,
                placement: parse("placement", &placement)?,
                sizes: match size_list {
                    Some(v) if v.is_empty() || v.len() > 64 => {
                        return Err(Failed::Bad("sizes: give 1 to 64 sizes".into()))
                    }
                    Some(v) => v,
                    None => parse::<aifabric::Sizes>("sizes", &sizes)?.0,
                },
                alpha_s: alpha_us * 1e-6,
            };
            match timing {
                Some((cfg, e)) => to_json(&s.collective_packet(&req, &cfg, e)?),
                None => to_json(&s.collective(&req)?),
            }
        })
    }

    /// A job from a file path (`text` None) or from YAML text.
    #[allow(clippy::too_many_arguments)]
    fn job(
        &self,
        py: Python<'_>,
        name: String,
        text: Option<String>,
        placement: Option<String>,
        scenario: ScenarioArg,
        opts: HashMap<String, String>,
        engine: String,
        packet: HashMap<String, String>,
    ) -> PyResult<String> {
        self.study(py, scenario, opts, None, move |s, _, _| {
            let timing = packet_timing(&engine, &packet)?;
            let it = match text {
                Some(t) => aifabric::stages::spec::job::parse(&name, &t)?,
                None => aifabric::stages::spec::job::load(&name)?,
            };
            let p = placement
                .as_deref()
                .map(|p| parse("placement", p))
                .transpose()?;
            match timing {
                Some((cfg, e)) => to_json(&s.job_packet(&it, p, &cfg, e)?),
                None => to_json(&s.job(&it, p)?),
            }
        })
    }

    /// The jobs of a cluster file together (`aifabric cluster --json`); `engine` and
    /// `packet` as for `job`.
    fn cluster(
        &self,
        py: Python<'_>,
        jobs: String,
        scenario: ScenarioArg,
        opts: HashMap<String, String>,
        engine: String,
        packet: HashMap<String, String>,
    ) -> PyResult<(String, PyTable)> {
        let model = Arc::clone(&self.model);
        let (json, batch) = self.study(py, scenario, opts, None, move |s, _, _| {
            let timing = packet_timing(&engine, &packet)?;
            let c = aifabric::stages::spec::cluster::load_cluster(&model, &jobs)?;
            let r = match timing {
                Some((cfg, e)) => s.cluster_packet(&c, &cfg, e, None)?,
                None => s.cluster(&c)?,
            };
            Ok((to_json(&r)?, aifabric::tables::cluster_jobs(&r)))
        })?;
        Ok((json, table(batch)?))
    }

    /// A maintenance plan against a cluster's jobs (`aifabric plan --json`); `engine`
    /// and `packet` as for `job`.
    #[allow(clippy::too_many_arguments)]
    fn plan(
        &self,
        py: Python<'_>,
        jobs: String,
        ops: String,
        opts: HashMap<String, String>,
        engine: String,
        packet: HashMap<String, String>,
    ) -> PyResult<(String, PyTable)> {
        let model = Arc::clone(&self.model);
        let (json, batch) = self.study(py, healthy(), opts, None, move |s, _, _| {
            let timing = packet_timing(&engine, &packet)?;
            let c = aifabric::stages::spec::cluster::load_cluster(&model, &jobs)?;
            let ops = aifabric::stages::spec::ops::load_ops(&model, &ops)?;
            let base = match timing {
                Some((cfg, e)) => s.cluster_baseline_packet(&c, &cfg, e, None)?,
                None => s.cluster_baseline(&c)?,
            };
            let r = s.plan(&base, &ops)?;
            Ok((to_json(&r)?, aifabric::tables::plan_steps(&r)))
        })?;
        Ok((json, table(batch)?))
    }

    /// A single or pairs sweep's scenarios ranked by a cluster's jobs they hurt
    /// (`aifabric failures --jobs --json`).
    #[allow(clippy::too_many_arguments)]
    fn jobs_at_risk(
        &self,
        py: Python<'_>,
        jobs: String,
        sweep: String,
        samples: u64,
        seed: u64,
        probability: Vec<String>,
        simulate: usize,
        opts: HashMap<String, String>,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<(String, PyTable)> {
        let model = Arc::clone(&self.model);
        let progress = progress.as_ref();
        let (json, batch) = self.study(py, healthy(), opts, progress, move |s, _, ctx| {
            let c = aifabric::stages::spec::cluster::load_cluster(&model, &jobs)?;
            let req = aifabric::FailureRequest {
                state: String::new(),
                sweep,
                samples,
                first_draw: 0,
                seed,
                probability,
                mtbf: Vec::new(),
                aggregation: None,
                mitigations: false,
                top: 0,
                pod_sites: false,
                keep: None,
            };
            let base = s.cluster_baseline(&c)?;
            let r = s.failures(&req, &|done, total| ctx.tick(done, total))?;
            let r = s.jobs_at_risk(&base, &r, simulate, usize::MAX)?;
            Ok((to_json(&r)?, aifabric::tables::at_risk(&r)))
        })?;
        Ok((json, table(batch)?))
    }

    /// A traffic matrix (a file, or a pattern over `gpus`): its JSON report and the flow and
    /// link tables.
    #[allow(clippy::too_many_arguments)]
    fn traffic(
        &self,
        py: Python<'_>,
        tm: Option<String>,
        pattern: Option<String>,
        size: String,
        gpus: Option<u32>,
        placement: String,
        scenario: ScenarioArg,
        opts: HashMap<String, String>,
    ) -> PyResult<(String, PyTable, PyTable)> {
        let (json, flows, links) = self.study(py, scenario, opts, None, move |s, _, _| {
            let source = traffic_source(tm, pattern, &size, gpus)?;
            let (r, t) = s.traffic_tables(&source, gpus, parse("placement", &placement)?)?;
            Ok((to_json(&r)?, t.flows, t.links))
        })?;
        Ok((json, table(flows)?, table(links)?))
    }

    /// A traffic matrix on the packet engine (`both`: with the flow engine beside it).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (tm, pattern, size, gpus, placement, engine, packet, scenario, opts))]
    fn traffic_packet(
        &self,
        py: Python<'_>,
        tm: Option<String>,
        pattern: Option<String>,
        size: String,
        gpus: Option<u32>,
        placement: String,
        engine: String,
        packet: HashMap<String, String>,
        scenario: ScenarioArg,
        opts: HashMap<String, String>,
    ) -> PyResult<String> {
        self.study(py, scenario, opts, None, move |s, _, _| {
            let source = traffic_source(tm, pattern, &size, gpus)?;
            let mut packet = packet;
            let cut = packet.remove("cut").is_some_and(|v| v == "true");
            let engine: aifabric::Engine = parse("engine", &engine)?;
            let cfg = packet_config(&packet, engine)?;
            let placement = parse("placement", &placement)?;
            let r = if cut {
                s.traffic_packet_cut(&source, gpus, placement, &cfg, &mut |_| {})?
            } else {
                s.traffic_packet(&source, gpus, placement, &cfg, engine)?
            };
            to_json(&r)
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn replay(
        &self,
        py: Python<'_>,
        trace_dir: String,
        placement: Option<String>,
        peak_tflops: Option<f64>,
        efficiency: Option<f64>,
        alpha_us: Option<f64>,
        window: u32,
        scenario: ScenarioArg,
        opts: HashMap<String, String>,
    ) -> PyResult<String> {
        self.study(py, scenario, opts, None, move |s, _, _| {
            for (v, what) in [(peak_tflops, "peak_tflops"), (efficiency, "efficiency")] {
                if let Some(x) = v.filter(|x| !(x.is_finite() && *x > 0.0)) {
                    return Err(Failed::Bad(format!(
                        "{what} must be a positive number, not {x}"
                    )));
                }
            }
            if let Some(a) = alpha_us.filter(|a| !(a.is_finite() && *a >= 0.0)) {
                return Err(Failed::Bad(format!(
                    "alpha_us must be a number >= 0, not {a}"
                )));
            }
            let set = aifabric::traces::discover(std::path::Path::new(&trace_dir))?;
            let req = aifabric::ReplayRequest {
                placement: placement
                    .as_deref()
                    .map(|p| parse("placement", p))
                    .transpose()?,
                alpha_s: alpha_us.map(|a| a * 1e-6),
                peak_flops_per_s: peak_tflops.map(|p| p * 1e12),
                efficiency,
                window,
            };
            to_json(&s.replay(&set, &req, &|_| {})?)
        })
    }

    /// Write export `format` into `out_dir`; the files written, as JSON.
    fn export(&self, py: Python<'_>, format: String, out_dir: String) -> PyResult<String> {
        let empty = (Vec::new(), Vec::new(), Vec::new(), None);
        self.study(py, empty, HashMap::new(), None, move |s, _, _| {
            let files = s.export_to(parse("format", &format)?, std::path::Path::new(&out_dir))?;
            to_json(&serde_json::json!({ "spec": s.fabric().name(), "files": files }))
        })
    }
}

/// A sweep file's plan: name, fingerprint, designs (their overrides) and tasks.
#[pyfunction]
fn sweep_plan(py: Python<'_>, path: String) -> PyResult<String> {
    run(py, None, move |_| {
        let p = aifabric::sweep::plan(std::path::Path::new(&path))?;
        to_json(&serde_json::json!({
            "name": p.name,
            "fingerprint": p.fingerprint,
            "designs": p.designs,
            "tasks": p.tasks.len(),
        }))
    })
}

/// Run shard `i` of `n` of a sweep file: the shard file's JSON (what `aifabric sweep
/// --shard I/N` writes).
#[pyfunction]
#[pyo3(signature = (path, i, n, progress=None))]
fn sweep_shard(
    py: Python<'_>,
    path: String,
    i: usize,
    n: usize,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    run(py, progress.as_ref(), move |ctx| {
        if n == 0 || i >= n {
            return Err(Failed::Bad(format!(
                "shard ({i}, {n}): give (I, N) with 0 <= I < N"
            )));
        }
        let p = aifabric::sweep::plan(std::path::Path::new(&path))?;
        let shard = p.run_shard(i, n, &|done, total| ctx.tick(done as u64, total as u64))?;
        serde_json::to_string(&shard)
            .map_err(|e| Failed::Runtime(format!("encoding the shard: {e}")))
    })
}

/// Merge shard files' texts into the sweep's results: (JSON, table), and write them to
/// `out` / `table_path` when given (atomically), byte-identical to `aifabric sweep merge`.
#[pyfunction]
#[pyo3(signature = (path, shards, out=None, table_path=None))]
fn sweep_merge(
    py: Python<'_>,
    path: String,
    shards: Vec<String>,
    out: Option<String>,
    table_path: Option<String>,
) -> PyResult<(String, PyTable)> {
    let (json, batch) = run(py, None, move |_| {
        let p = aifabric::sweep::plan(std::path::Path::new(&path))?;
        let shards = shards
            .iter()
            .enumerate()
            .map(|(k, t)| {
                serde_json::from_str::<aifabric::sweep::Shard>(t).map_err(|e| {
                    Failed::Bad(format!("shard {k} is not a shard of a sweep run ({e})"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let r = aifabric::sweep::merge(&p, &shards)?;
        let batch = aifabric::tables::sweep(&r);
        if let Some(t) = &table_path {
            aifabric::tables::write_ipc(std::path::Path::new(t), &batch)?;
        }
        let json = to_json(&r)?;
        if let Some(o) = &out {
            // What the CLI writes with --out: pretty JSON.
            aifabric::write_atomic(std::path::Path::new(o), |w| {
                serde_json::to_writer_pretty(w, &aifabric::versioned(&r))
                    .map_err(std::io::Error::other)
            })
            .map_err(|e| Failed::Runtime(format!("cannot write {o}: {e}")))?;
        }
        Ok((json, batch))
    })?;
    Ok((json, table(batch)?))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<NativeFabric>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(from_yaml, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_specs, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_plan, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_shard, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_merge, m)?)?;
    m.add("SpecError", py.get_type::<SpecError>())?;
    m.add("BadRequest", py.get_type::<BadRequest>())?;
    m.add("FabricError", py.get_type::<FabricError>())?;
    m.add("SCHEMA_VERSION", aifabric::SCHEMA_VERSION)?;
    Ok(())
}
