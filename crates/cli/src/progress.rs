//! Progress on standard error, on a terminal or not: a bar (indicatif) on a terminal; when
//! standard error is a log file or a pipe (or under `CI`), a line every few seconds instead,
//! so a long run in a batch job or behind `2>log` is never silent.
//!
//! A heartbeat thread ([`start_heartbeat`]) writes those lines: the current bar's message and
//! position when one is running, else that the command is still running. Its first line comes
//! after [`FIRST_LINE`], then one every [`interval`]; a run shorter than that prints nothing.
//! Bars only record their state (atomics), so a hot loop that reports progress pays no clock.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When the first line comes: runs shorter than this print nothing.
pub(crate) const FIRST_LINE: Duration = Duration::from_secs(5);

/// The environment variable that sets the seconds between lines (default 10).
pub(crate) const INTERVAL_ENV: &str = "AIFABRIC_PROGRESS_SECS";

/// Seconds between lines: [`INTERVAL_ENV`] if set to a number, kept within 0.1 s and a day
/// (no busy loop, no overflow), else 10.
fn interval() -> Duration {
    std::env::var(INTERVAL_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite())
        .map_or(Duration::from_secs(10), |s| {
            Duration::from_secs_f64(s.clamp(0.1, 86_400.0))
        })
}

/// Whether bars are drawn (standard error is a terminal and not under CI); else lines.
fn drawn() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

/// What the running bar reports, for the heartbeat's lines.
struct State {
    what: Mutex<String>,
    pos: AtomicU64,
    len: AtomicU64,
    /// Drawn on the terminal by indicatif: the heartbeat stays silent meanwhile.
    visible: bool,
    /// When the bar began, from the heartbeat's start (what the command did before, such as
    /// building the network, is not the bar's rate).
    since: Duration,
}

/// A line gives the time left once the bar is at least `1 / ETA_FROM_SHARE` of the way.
const ETA_FROM_SHARE: u64 = 20;

/// When the heartbeat started (the command's start): bars measure their rate from theirs.
static STARTED: Mutex<Option<Instant>> = Mutex::new(None);

/// The bar currently running (the last one made and not yet finished).
static CURRENT: Mutex<Option<Arc<State>>> = Mutex::new(None);

/// Set by `--quiet` runs: no bar, no line.
static QUIET: AtomicBool = AtomicBool::new(false);

/// No progress at all from now on (a command's `--quiet` or `--json` demo).
pub(crate) fn quiet() {
    QUIET.store(true, Ordering::SeqCst);
}

/// Start the heartbeat for `command` (its name in the lines). Lines go to standard error, as
/// every diagnostic; a write that fails is ignored (progress never fails a run).
pub(crate) fn start_heartbeat(command: String) {
    let step = interval();
    let start = Instant::now();
    *STARTED.lock().unwrap_or_else(|e| e.into_inner()) = Some(start);
    let spawned = std::thread::Builder::new()
        .name("progress".into())
        .spawn(move || {
            std::thread::sleep(FIRST_LINE.min(step));
            loop {
                if !QUIET.load(Ordering::SeqCst) {
                    let current = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    if let Some(line) = line(&command, current.as_deref(), start.elapsed()) {
                        let _ = writeln!(std::io::stderr(), "{line}");
                    }
                }
                std::thread::sleep(step);
            }
        });
    // Without a thread the run goes on silently, as before.
    drop(spawned);
}

/// The heartbeat's line, or none while a bar is drawn on the terminal (which says more).
fn line(command: &str, s: Option<&State>, elapsed: Duration) -> Option<String> {
    let secs = elapsed.as_secs();
    let Some(s) = s else {
        return Some(format!("aifabric {command}: running, {secs} s"));
    };
    if s.visible {
        return None;
    }
    let what = s.what.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let (pos, len) = (s.pos.load(Ordering::Relaxed), s.len.load(Ordering::Relaxed));
    let done = if len > 0 {
        // The time left at the rate so far since the bar began, once it is a twentieth of
        // the way: before, a slow start (a packet run's first ACKs, which come late) would
        // extrapolate to minutes for a run of seconds.
        let left = if pos * ETA_FROM_SHARE >= len && pos < len {
            let since = elapsed.saturating_sub(s.since).as_secs_f64();
            let rest = since * (len - pos) as f64 / pos as f64;
            format!(", about {:.0} s left", rest.ceil())
        } else {
            String::new()
        };
        format!(
            "{pos}/{len} ({:.0}%){left}",
            100.0 * pos as f64 / len as f64
        )
    } else {
        format!("{pos}")
    };
    Some(format!("aifabric {command}: {what}: {done}, {secs} s"))
}

/// A progress bar: drawn on a terminal, else reported by the heartbeat's lines.
pub(crate) struct Progress {
    bar: ProgressBar,
    state: Arc<State>,
}

impl Progress {
    /// A bar of `what` (`pos/len` and the time left).
    pub(crate) fn bar(what: &str) -> Progress {
        Progress::new(what, "{msg} {bar:40} {pos}/{len} ({eta})")
    }

    /// A bar of `what` in bytes (`read/total` and the time left).
    pub(crate) fn bytes(what: &str) -> Progress {
        Progress::new(
            what,
            "{msg} {bar:40} {binary_bytes}/{binary_total_bytes} ({eta})",
        )
    }

    /// A counter of `what` without a known end (`pos` and the time so far).
    pub(crate) fn counter(what: &str) -> Progress {
        Progress::new(what, "{msg} {pos} ({elapsed})")
    }

    fn new(what: &str, template: &str) -> Progress {
        let visible = drawn() && !QUIET.load(Ordering::SeqCst);
        let bar = ProgressBar::with_draw_target(
            Some(0),
            if visible {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            },
        );
        bar.set_style(
            ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(what.to_owned());
        let since = STARTED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map_or(Duration::ZERO, |t| t.elapsed());
        let state = Arc::new(State {
            what: Mutex::new(what.to_owned()),
            pos: AtomicU64::new(0),
            len: AtomicU64::new(0),
            visible,
            since,
        });
        *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(state.clone());
        Progress { bar, state }
    }

    /// The total.
    pub(crate) fn set_length(&self, n: u64) {
        self.state.len.store(n, Ordering::Relaxed);
        self.bar.set_length(n);
    }

    /// Done so far.
    pub(crate) fn set_position(&self, n: u64) {
        self.state.pos.store(n, Ordering::Relaxed);
        self.bar.set_position(n);
    }

    /// `n` more done.
    pub(crate) fn inc(&self, n: u64) {
        self.state.pos.fetch_add(n, Ordering::Relaxed);
        self.bar.inc(n);
    }

    /// What is being done.
    pub(crate) fn set_message(&self, what: String) {
        what.clone_into(&mut self.state.what.lock().unwrap_or_else(|e| e.into_inner()));
        self.bar.set_message(what);
    }

    /// Done: the bar is cleared and the heartbeat goes back to "running".
    pub(crate) fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
        let mut current = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
        if current
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(c, &self.state))
        {
            *current = None;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_what_how_far_and_how_long() {
        let s = State {
            what: Mutex::new("scenarios".into()),
            pos: AtomicU64::new(250),
            len: AtomicU64::new(1000),
            visible: false,
            since: Duration::from_secs(2),
        };
        // 250 of 1000 in the 8 s since the bar began: 24 s left.
        let l = line("failures", Some(&s), Duration::from_secs(10)).unwrap();
        assert_eq!(
            l,
            "aifabric failures: scenarios: 250/1000 (25%), about 24 s left, 10 s"
        );
        // Under a twentieth of the way: no time left is guessed.
        s.pos.store(40, Ordering::Relaxed);
        let l = line("failures", Some(&s), Duration::from_secs(10)).unwrap();
        assert_eq!(l, "aifabric failures: scenarios: 40/1000 (4%), 10 s");
        s.pos.store(250, Ordering::Relaxed);
        s.len.store(0, Ordering::Relaxed);
        let l = line("replay", Some(&s), Duration::from_secs(7)).unwrap();
        assert_eq!(l, "aifabric replay: scenarios: 250, 7 s");
        let drawn_bar = State { visible: true, ..s };
        assert_eq!(line("x", Some(&drawn_bar), Duration::ZERO), None);
    }
}
