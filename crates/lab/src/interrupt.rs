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
use std::sync::{Mutex, MutexGuard, PoisonError};

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
/// directory and writes the state file; from then on [`abandon`] removes the lab. The guard
/// marks the bring-up finished when dropped (done, or failed with the half-made lab left for
/// `lab down`, as the error says).
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

impl Drop for Building {
    fn drop(&mut self) {
        let mut g = phase();
        if matches!(*g, Phase::Building(_)) {
            *g = Phase::Idle;
        }
    }
}

/// Abandon this process's bring-up, for a signal handler (SIGINT, SIGTERM): wait for the
/// step that runs to end, then stop the supervisor and its daemons, delete the namespaces
/// and veths and remove the lab directory ([`down`]), and let no later step run. `None` when
/// no lab was being brought up; the caller then has nothing of the lab's to report (the
/// caller should exit the process afterwards). Else the lab's directory and what was removed.
pub fn abandon() -> Option<(PathBuf, Result<DownReport, Error>)> {
    let mut g = phase();
    match std::mem::replace(&mut *g, Phase::Abandoned) {
        Phase::Building(dir) => {
            let r = down(&dir);
            Some((dir, r))
        }
        Phase::Idle | Phase::Abandoned => None,
    }
}
