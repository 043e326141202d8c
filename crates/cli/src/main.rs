//! `aifabric`: the command line. Thin by design: parse arguments, call the libraries, render.
//!
//! Exit codes, one rule: 0 ok, 1 an output that cannot be written or a runtime failure, 2 bad
//! input (a spec, scenario, job, traffic or trace file, a flag, a request that cannot be met),
//! 130 interrupted (Ctrl-C, SIGTERM or SIGHUP; no partial output is left, and an interrupted
//! `lab up` removes what it made). Standard output is written only through [`print`] (the lints below
//! forbid `print!` and `eprint!`, which panic when the stream is gone): a reader that stops
//! early (`aifabric routes ... | head`) ends the run quietly with 0, as filters do; an output
//! that cannot be written (a full disk) is a runtime failure.
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod commands;
mod output;
mod progress;
mod render;

use aifabric::stages::spec;
use args::Cli;
use clap::Parser;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// A failure with its exit code.
pub(crate) enum Failure {
    BadInput(spec::SpecError),
    BadArgument(String),
    Runtime(String),
    /// Standard output was closed by its reader (a broken pipe): stop quietly, with 0.
    StdoutClosed,
    /// A command run for the user (`lab exec`) ended with this code, which is ours; it has
    /// said why itself.
    Exit(i32),
}

/// A library error as the CLI reports it: a bad request exits 2, anything else 1.
impl From<aifabric::Error> for Failure {
    fn from(e: aifabric::Error) -> Self {
        match e {
            aifabric::Error::BadRequest { message, .. } => Failure::BadArgument(message),
            aifabric::Error::Runtime { message, .. } => Failure::Runtime(message),
        }
    }
}

/// Exit code after an interrupt: 128 + SIGINT, what a shell reports for a process Ctrl-C
/// ended.
const INTERRUPTED: i32 = 130;

/// Set first thing by the interrupt handler. The handler exits the process once it has
/// cleaned up; a main thread that finishes meanwhile (`lab up` refusing its next step once
/// the lab was abandoned, or completing just before) must wait for that instead of exiting
/// with its own code and message and cutting the cleanup short.
static INTERRUPT_SEEN: AtomicBool = AtomicBool::new(false);

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Ctrl-C, SIGTERM, SIGHUP (ctrlc's `termination` feature): remove what is still being
    // written (temporary files, a trace's staging directory) and what an interrupted `lab up`
    // made (its daemons, namespaces, veths and directory), say so, and exit; outputs already
    // in place are complete. Further signals wait: the cleanup is not cut short.
    let _ = ctrlc::set_handler(|| {
        INTERRUPT_SEEN.store(true, Ordering::SeqCst);
        // The lab first: it waits for `lab up`'s running step, which may be writing the
        // FRR export; `abandon_outputs` blocks every writer for good, so called first it
        // would leave that step, and the lab's cleanup behind it, waiting forever.
        let said = commands::lab::on_interrupt();
        aifabric::abandon_outputs();
        let _ = std::io::Write::write_all(&mut std::io::stderr(), said.as_bytes());
        std::process::exit(INTERRUPTED);
    });
    // Long runs say how far they are, on a terminal or in a log (not the lab's daemon
    // supervisor, which runs for the lab's life).
    let words: Vec<String> = std::env::args().skip(1).take(2).collect();
    if words.get(1).map(String::as_str) != Some("supervise") {
        progress::start_heartbeat(words.first().cloned().unwrap_or_default());
    }
    let result = commands::run(cli);
    if INTERRUPT_SEEN.load(Ordering::SeqCst) {
        // The handler runs and will exit the process with 130.
        loop {
            std::thread::park();
        }
    }
    // Errors go to stderr as well as it can be written; if it cannot, the exit code still
    // tells. Locked only now: the interrupt handler and progress bars write to it during
    // the run.
    let mut err = std::io::stderr().lock();
    match result {
        Ok(()) | Err(Failure::StdoutClosed) => ExitCode::SUCCESS,
        Err(Failure::Exit(code)) => ExitCode::from(u8::try_from(code.clamp(1, 255)).unwrap_or(1)),
        Err(Failure::BadInput(e)) => {
            let _ = writeln!(err, "error: {e}");
            if err.is_terminal() && e.line > 0 {
                let _ = writeln!(err, "{:?}", miette::Report::new(e));
            }
            ExitCode::from(2)
        }
        Err(Failure::BadArgument(msg)) => {
            let _ = writeln!(err, "error: {msg}");
            ExitCode::from(2)
        }
        Err(Failure::Runtime(msg)) => {
            let _ = writeln!(err, "error: {msg}");
            ExitCode::from(1)
        }
    }
}

/// Write `text` to standard output and flush it: the one way the CLI prints. A closed
/// reader (`EPIPE`: the process ignores `SIGPIPE`, as every Rust program does) is
/// [`Failure::StdoutClosed`]; any other error (`ENOSPC` on `/dev/full`) is a runtime failure.
pub(crate) fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => Failure::StdoutClosed,
            _ => Failure::Runtime(format!("cannot write to standard output: {e}")),
        })
}

/// [`print`] `line` and a newline.
pub(crate) fn print_line(line: &str) -> Result<(), Failure> {
    print(&format!("{line}\n"))
}

pub(crate) fn load(spec: &str) -> Result<aifabric::model::Fabric, Failure> {
    spec::load(spec).map_err(Failure::BadInput)
}

/// Print `v` as JSON with `--json`, else as the human table `human` makes of it.
pub(crate) fn emit<T: serde::Serialize>(
    json: bool,
    v: &T,
    human: impl FnOnce(&T) -> String,
) -> Result<(), Failure> {
    if json {
        print_json(v)
    } else {
        print(&human(v))
    }
}

/// [`emit`] with the JSON contract's version in front (see [`aifabric::Versioned`]).
pub(crate) fn emit_versioned<T: serde::Serialize>(
    json: bool,
    v: &T,
    human: impl FnOnce(&T) -> String,
) -> Result<(), Failure> {
    if json {
        print_json(&aifabric::versioned(v))
    } else {
        print(&human(v))
    }
}

/// Write `v` as JSON to `path`, atomically.
pub(crate) fn write_json<T: serde::Serialize>(
    path: &std::path::Path,
    v: &T,
) -> Result<(), Failure> {
    output::write_atomic(path, |w| {
        serde_json::to_writer_pretty(w, v).map_err(std::io::Error::other)
    })
    .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))
}

/// [`print`] `v` as pretty JSON and a newline.
pub(crate) fn print_json<T: serde::Serialize>(v: &T) -> Result<(), Failure> {
    let s = serde_json::to_string_pretty(v).map_err(|e| Failure::Runtime(e.to_string()))?;
    print_line(&s)
}
