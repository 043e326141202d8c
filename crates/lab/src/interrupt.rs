//! An interrupted [`up`](crate::up): the caller's signal handler calls [`abandon`], which
//! removes what the bring-up made so far, and no step of it runs afterwards.
//!
//! Why a lock and not a flag: `up` makes the lab in steps (a router's namespace, a link's
//! veth pair, the supervisor), each a few `ip` commands. A handler that cleaned up while a
//! step was half done would miss what that step was about to make (a veth pair made in the
//! host namespace just after the cleanup listed the links). So each step holds [`PHASE`]
//! while it runs, and [`abandon`] takes it too: it waits for the running step to end, then
//! removes everything with the lock held and leaves the phase `Abandoned`, so no later step
//! starts (the caller exits the process after [`abandon`] returns).

use crate::teardown::{down, DownReport};
use aifabric::Error;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Where this process's bring-up is.
enum Phase {
    /// No lab is being brought up.
    Idle,
    /// A lab is being brought up in this directory (its state file is written).
    Building(PathBuf),
    /// [`abandon`] ran: nothing more is made.
    Abandoned,
}

static PHASE: Mutex<Phase> = Mutex::new(Phase::Idle);

fn phase() -> MutexGuard<'static, Phase> {
    // A step that panicked leaves the phase as it was; the cleanup must still run.
    PHASE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The error a step returns once the bring-up was abandoned.
fn interrupted() -> Error {
    Error::Runtime {
        message: "interrupted: the lab's bring-up was abandoned and what it made removed".into(),
        source: None,
    }
}

/// Run one step of the bring-up, unless it was abandoned: [`abandon`] waits for it to end.
pub(crate) fn step<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    let g = phase();
    if matches!(*g, Phase::Abandoned) {
        return Err(interrupted());
    }
    f()
}

/// Whether [`abandon`] ran (a long wait between steps polls it).
pub(crate) fn abandoned() -> bool {
    matches!(*phase(), Phase::Abandoned)
}

/// The bring-up of the lab in `dir` from the step that records it: `make` creates the
/// directory and writes the state file; from then on [`abandon`] removes the lab, until
/// [`Building::done`]. A bring-up that fails stays abandonable: a step may fail *because* of
/// the signal (an `ip` command it reached first), and the handler that comes next must still
/// find the half-made lab.
pub(crate) fn begin(
    dir: &Path,
    make: impl FnOnce() -> Result<(), Error>,
) -> Result<Building, Error> {
    let mut g = phase();
    if matches!(*g, Phase::Abandoned) {
        return Err(interrupted());
    }
    make()?;
    *g = Phase::Building(dir.to_owned());
    Ok(Building)
}

/// A bring-up in progress (see [`begin`]).
pub(crate) struct Building;

impl Building {
    /// The lab is complete: an interrupt from now on leaves it (it is recorded for `down`).
    pub(crate) fn done(self) {
        let mut g = phase();
        if matches!(*g, Phase::Building(_)) {
            *g = Phase::Idle;
        }
    }
}

/// Set by [`abandon`] before it waits for the running step.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// A command of a step was killed by SIGINT, SIGTERM or SIGHUP: a signal sent to the whole
/// process group (a terminal's Ctrl-C) reached it in the instant between its fork and its
/// move into its own process group, so this process got it too and its handler is on the
/// way. Wait (at most `within`) until the handler has asked to [`abandon`], so that the step
/// fails only once the main thread's failure can no longer outrun the cleanup.
pub(crate) fn await_abandon(within: Duration) {
    let start = Instant::now();
    while !REQUESTED.load(Ordering::SeqCst) && start.elapsed() < within {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Abandon this process's bring-up, for a signal handler (SIGINT, SIGTERM): wait for the
/// step that runs to end, then stop the supervisor and its daemons, delete the namespaces
/// and veths and remove the lab directory ([`down`]), and let no later step run. `None` when
/// no lab was being brought up; the caller then has nothing of the lab's to report (the
/// caller should exit the process afterwards). Else the lab's directory and what was removed.
pub fn abandon() -> Option<(PathBuf, Result<DownReport, Error>)> {
    REQUESTED.store(true, Ordering::SeqCst);
    let mut g = phase();
    match std::mem::replace(&mut *g, Phase::Abandoned) {
        Phase::Building(dir) => {
            let r = down(&dir);
            Some((dir, r))
        }
        Phase::Idle | Phase::Abandoned => None,
    }
}
