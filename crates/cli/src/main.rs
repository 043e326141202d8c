//! `aifabric`: the command line. Thin by design: parse arguments, call the libraries, render.
//!
//! Exit codes: 0 ok, 1 runtime failure (e.g. an output file cannot be written), 2 bad input
//! (spec or arguments), 130 interrupted (Ctrl-C; no partial output is left).

mod args;
mod commands;
mod output;
mod render;

use args::Cli;
use clap::Parser;
use std::io::IsTerminal;
use std::process::ExitCode;

/// A failure with its exit code.
pub(crate) enum Failure {
    BadInput(aifabric::stages::spec::SpecError),
    BadArgument(String),
    Runtime(String),
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Ctrl-C: remove what is still being written (temporary files, a trace's staging
    // directory) and exit; outputs already in place are complete.
    let _ = ctrlc::set_handler(|| {
        aifabric::abandon_outputs();
        eprintln!("\ninterrupted: no partial output left");
        std::process::exit(INTERRUPTED);
    });
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BadInput(e)) => {
            eprintln!("error: {e}");
            if std::io::stderr().is_terminal() && e.line > 0 {
                eprintln!("{:?}", miette::Report::new(e));
            }
            ExitCode::from(2)
        }
        Err(Failure::BadArgument(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
        Err(Failure::Runtime(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
    }
}

pub(crate) fn load(spec: &str) -> Result<aifabric::stages::model::Fabric, Failure> {
    aifabric::stages::spec::load(spec).map_err(Failure::BadInput)
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
        out(&human(v));
        Ok(())
    }
}

/// Write `v` as JSON to `path`, atomically.
/// [`emit`] with the JSON contract's version in front (see [`aifabric::Versioned`]).
pub(crate) fn emit_versioned<T: serde::Serialize>(
    json: bool,
    v: &T,
    human: impl FnOnce(&T) -> String,
) -> Result<(), Failure> {
    if json {
        print_json(&aifabric::versioned(v))
    } else {
        out(&human(v));
        Ok(())
    }
}

pub(crate) fn write_json<T: serde::Serialize>(
    path: &std::path::Path,
    v: &T,
) -> Result<(), Failure> {
    output::write_atomic(path, |w| {
        serde_json::to_writer_pretty(w, v).map_err(std::io::Error::other)
    })
    .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))
}

/// Write `text` to stdout. A reader that went away (`aifabric ... | head`) ends the run
/// quietly, as for other command-line tools, instead of a panic.
pub(crate) fn out(text: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write the output: {e}");
        std::process::exit(1);
    }
}

pub(crate) fn print_json<T: serde::Serialize>(v: &T) -> Result<(), Failure> {
    let s = serde_json::to_string_pretty(v).map_err(|e| Failure::Runtime(e.to_string()))?;
    out(&format!("{s}\n"));
    Ok(())
}
