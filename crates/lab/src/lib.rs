//! `aifabric lab`: the fabric's FRR export run by FRRouting in Linux network namespaces, and
//! every router's kernel FIB compared with what aifabric computes.
//!
//! - [`up`] writes the export (`export --format frr`) into the lab directory, records the lab
//!   in its state file (`lab.json`) before making anything, so that [`down`] can undo a lab
//!   that failed half-way, then makes one namespace per router (IPv6 forwarding on, and
//!   `keep_addr_on_down`, so a link taken down and up again keeps its address and its BGP
//!   session comes back), a veth pair per link with the export's interface names and
//!   addresses, and the rack's /64 on an in-namespace veth pair (no `dummy` module is needed).
//!   The daemons are started by one supervisor process ([`supervise`], the caller's
//!   `aifabric lab supervise`): it runs `zebra` and `bgpd` of each router in the foreground as
//!   its own children, so it reaps them (a container's PID 1 may not), starts each bgpd only
//!   once every zebra reports its interfaces up with their addresses, and stops them when
//!   [`down`] asks. An interrupted `up` is undone by [`abandon`] (the caller's SIGINT/SIGTERM
//!   handler); the leftovers of a killed one by [`down`] or [`clear_leftovers`].
//! - [`check`] applies a scenario live: a failed or hard-drained link or device has its links
//!   set down (in both namespaces); a soft-drained session sends the drained twin of its
//!   outbound route-map (the export's `-DRAIN` maps: the graceful-shutdown community of RFC
//!   8326 from both ends, which every router's inbound map turns into LOCAL_PREF 0, or, with
//!   `--soft-drain prepend:N`, the draining end's ASN prepended N times). It then waits until
//!   every router agrees with aifabric's routes under that scenario, or a time limit passes,
//!   and reports each disagreement: the router, the prefix, both sides and the share gap. A
//!   route agrees when it has the same next-hop neighbours in the kernel FIB, the same
//!   number of live links to each, each neighbour's share equal to aifabric's weight within
//!   FRR 8.x's rounding (zebra programs `floor(100 x bandwidth / total)` per link, so a
//!   share may be off by 1% per link), and bgpd's best path has the same LOCAL_PREF and an
//!   AS path of the same length ([`disagreement`]).
//! - [`status`] says what a lab is now (each router's namespace and daemons by their pid
//!   files, the supervisor, an `up` still building), and [`exec`] runs a command inside one
//!   router's namespace, `vtysh` pointed at that router's daemons.
//! - [`down`] stops the supervisor (or, after a crash, kills what is left in the lab's
//!   namespaces), deletes the namespaces, any veth pair a killed `up` left in the host
//!   namespace, and the lab directory, and names what it removed ([`DownReport`]).
//!
//! Needs root, `ip netns` (iproute2) and FRR's daemons (Debian's `frr`); [`environment`] says
//! which is missing. DSF fabrics are refused (a DSF zone is one BGP speaker over many
//! switches), and so are fabrics above a router budget.
//!
//! Its own crate, beside the `aifabric` facade it calls for routes, the FRR export and
//! [`Setup`](aifabric::Setup): the CLI links it, the Python package does not (the lab makes
//! processes and namespaces, which a library embedded in Python has no business doing).

mod check;
mod compare;
mod interrupt;
mod netns;
mod state;
mod status;
mod supervisor;
mod teardown;

pub use check::{check, AggregateCheck, AggregateView, Hop, LabCheck, Mismatch, Side};
pub use compare::disagreement;
pub use interrupt::abandon;
pub use netns::{environment, frr_version, up, weight_steps, UpOptions};
pub use state::{LabEnd, LabLink, LabRouter, LabState};
pub use status::{exec, status, LabStatus, RouterStatus};
pub use supervisor::alive;
pub use supervisor::supervise;
pub use teardown::{clear_leftovers, down, DownReport};

use aifabric::Error;
use std::process::{Command, Stdio};

/// The lab's state file, in the lab directory.
pub const STATE_FILE: &str = "lab.json";
/// The daemons' process ids, written by the supervisor.
const DAEMONS_FILE: &str = "daemons.json";
/// Asks the supervisor to stop the daemons and exit.
const STOP_FILE: &str = "stop";
/// Where FRR's daemons are (Debian's package).
pub const FRR_DAEMONS: &str = "/usr/lib/frr";
/// Most routers `up` builds unless told otherwise (each is two daemons and a namespace).
pub const DEFAULT_MAX_ROUTERS: usize = 100;

/// A bad request told by `message` alone.
fn bad_request(message: String) -> Error {
    Error::BadRequest {
        message,
        source: None,
    }
}

/// A runtime failure caused by `e`, told as `context: e`.
fn runtime_in(context: &str, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Runtime {
        message: format!("{context}: {e}"),
        source: Some(Box::new(e)),
    }
}

/// Run a command; its stderr is the error. It runs in its own process group: a Ctrl-C at
/// the terminal interrupts `aifabric`, whose handler finishes the step at hand and cleans up
/// ([`abandon`]), instead of killing the `ip` command mid-step.
fn run(program: &str, args: &[&str]) -> Result<String, Error> {
    use std::os::unix::process::CommandExt;
    let out = Command::new(program)
        .args(args)
        .process_group(0)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| runtime_in(&format!("cannot run {program}"), e))?;
    if !out.status.success() {
        use std::os::unix::process::ExitStatusExt;
        // SIGHUP, SIGINT, SIGTERM: see `await_abandon`.
        if matches!(out.status.signal(), Some(1 | 2 | 15)) {
            interrupt::await_abandon(std::time::Duration::from_secs(2));
        }
        return Err(Error::Runtime {
            message: format!(
                "{program} {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            source: None,
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
