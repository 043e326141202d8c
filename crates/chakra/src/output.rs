//! Outputs written so that nothing is ever half-written or destroyed: a file through a
//! temporary file renamed over it ([`write_atomic`]), a set of files through a directory
//! renamed into place ([`replace_dir`], [`Staging`]); an interrupt removes what is still being
//! written ([`abandon_outputs`]). An output only ever replaces a regular file (or a directory
//! of its own files): a device node, a FIFO, a socket or a symbolic link at the output's path
//! is refused ([`check_output_file`], [`check_output_dir`]), so `--out /dev/null` never turns
//! `/dev/null` into a file.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Temporary outputs being written (files and staging directories), so that an interrupt can
/// remove them ([`abandon_outputs`]); its lock is also held while outputs are renamed into
/// place, so an interrupt never lands between two renames of one output.
static IN_FLIGHT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Set once outputs are abandoned: nothing is renamed into place after that.
static ABANDONED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn in_flight() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner())
}

/// A temporary path registered in [`IN_FLIGHT`] while it lives.
struct Pending(PathBuf);

impl Pending {
    /// Create a temporary output with `create` (which returns it and its path) and register
    /// it, both under the lock: an interrupt removes it, or it is never created (once outputs
    /// are abandoned, nothing new is).
    fn create<T>(
        create: impl FnOnce() -> std::io::Result<(T, PathBuf)>,
    ) -> std::io::Result<(T, Pending)> {
        let mut v = in_flight();
        if ABANDONED.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "interrupted",
            ));
        }
        let (t, path) = create()?;
        v.push(path.clone());
        Ok((t, Pending(path)))
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let mut v = in_flight();
        if let Some(i) = v.iter().rposition(|p| *p == self.0) {
            v.swap_remove(i);
        }
    }
}

/// Run `commit` (the renames that put outputs in place) unless outputs were abandoned; an
/// interrupt that comes meanwhile waits for it to finish.
fn commit<T>(commit: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    let _held = in_flight();
    if ABANDONED.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "interrupted",
        ));
    }
    commit()
}

/// Remove every temporary output being written (temporary files of [`write_atomic`], staging
/// directories of trace writers) and keep anything from being renamed into place afterwards:
/// what an interrupt handler calls before it exits, so that an interrupted run leaves neither
/// partial files nor a partial trace. Returns how many were removed. The process is expected
/// to exit right after: writers that are still running block at their next output.
pub fn abandon_outputs() -> usize {
    let mut v = in_flight();
    ABANDONED.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut removed = 0;
    for p in v.drain(..) {
        let gone = if p.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        removed += usize::from(gone.is_ok());
    }
    // Held until the process exits: no writer registers, renames or unregisters anything
    // after this.
    std::mem::forget(v);
    removed
}

/// A staging directory inside `dir` (hidden, removed on drop and on [`abandon_outputs`]):
/// writers fill it and then [`Staging::commit`] moves its files into `dir`.
pub struct Staging {
    dir: tempfile::TempDir,
    target: PathBuf,
    _pending: Pending,
}

impl Staging {
    /// A new staging directory in `target` (which must exist).
    pub fn new(target: &Path) -> std::io::Result<Staging> {
        let (dir, pending) = Pending::create(|| {
            remove_stale_partials(target);
            let dir = tempfile::Builder::new()
                .prefix(&partial_prefix())
                .tempdir_in(target)?;
            let path = dir.path().to_owned();
            Ok((dir, path))
        })?;
        Ok(Staging {
            dir,
            target: target.to_owned(),
            _pending: pending,
        })
    }

    /// Where to write.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Move every file of the staging directory into the target, `last` (if there) after the
    /// others, as one step an interrupt cannot split; then remove the staging directory.
    pub fn commit(self, last: &str) -> std::io::Result<()> {
        commit(|| {
            let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(self.dir.path())?
                .map(|e| e.map(|e| e.file_name()))
                .collect::<std::io::Result<_>>()?;
            names.sort_by_key(|n| n.to_str() == Some(last));
            for n in names {
                std::fs::rename(self.dir.path().join(&n), self.target.join(&n))?;
            }
            Ok(())
        })
    }
}

/// The prefix of every temporary output of this process in a directory: hidden, and naming
/// the process and the boot of the machine it runs on (`.aifabric-partial-<pid>.<boot>-`), so
/// a later run on the same machine can tell what a killed run left, and a run on another
/// machine sharing the directory (Slurm array tasks writing to one network file system)
/// never takes a live process's output for a dead one's.
fn partial_prefix() -> String {
    format!("{PARTIAL}{}.{}-", std::process::id(), boot_id())
}

/// The start of every temporary output's name.
const PARTIAL: &str = ".aifabric-partial-";

/// This boot of this machine: the first 8 hex digits of the kernel's random boot id (Linux),
/// or `0` where there is none (no stale partial is then ever removed, see
/// [`remove_stale_partials`]).
fn boot_id() -> String {
    static BOOT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BOOT.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()
            .map(|s| {
                s.trim()
                    .chars()
                    .filter(char::is_ascii_hexdigit)
                    .take(8)
                    .collect()
            })
            .filter(|s: &String| s.len() == 8)
            .unwrap_or_else(|| "0".to_owned())
    })
    .clone()
}

/// The user id of this process, from `/proc/self/status` (Linux), if known.
fn own_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Remove what killed runs left in `dir`: temporary outputs (files or directories named
/// `.aifabric-partial-<pid>.<boot>-*`) of processes of this user, on this machine and boot,
/// that no longer run. A SIGKILL gives a process no chance to clean up; the next run that
/// writes into the same directory does it. An entry of another machine or boot, or of
/// another user (whose processes `/proc` may hide), is left alone. Only where `/proc` tells
/// which processes run (Linux); elsewhere nothing is removed. Returns how many were removed.
pub fn remove_stale_partials(dir: &Path) -> usize {
    let boot = boot_id();
    let Some(uid) = own_uid() else {
        return 0;
    };
    if boot == "0" {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PARTIAL)) else {
            continue;
        };
        let Some((pid, rest)) = rest.split_once('.') else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if rest.split('-').next() != Some(boot.as_str()) {
            continue;
        }
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        // Not followed: a symbolic link of that name is judged, and removed, itself.
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        #[cfg(unix)]
        if std::os::unix::fs::MetadataExt::uid(&meta) != uid {
            continue;
        }
        let p = e.path();
        let gone = if meta.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        removed += usize::from(gone.is_ok());
    }
    removed
}

/// What is at an output's path, in words, when it is not something an output may replace.
fn special_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_symlink() {
        return Some("a symbolic link");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    None
}

fn refuse(path: &Path, kind: &str, want: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "{} is {kind}; an output only replaces {want}: give another path",
            path.display()
        ),
    )
}

/// Check that an output file may be written at `path`: nothing is there, or a regular file.
/// A directory, a symbolic link, a device node, a FIFO or a socket is refused with an error
/// (kind [`std::io::ErrorKind::InvalidInput`]) naming what is there, so a caller can refuse it
/// before any work starts; [`write_atomic`] checks it again when it writes.
pub fn check_output_file(path: &Path) -> std::io::Result<()> {
    check_kind(path, false)
}

/// Check that an output directory may be written at `path`: nothing is there, or a
/// directory (not a symbolic link to one, which [`replace_dir`] would replace by a directory).
pub fn check_output_dir(path: &Path) -> std::io::Result<()> {
    check_kind(path, true)
}

/// What is at `path` (not followed) must be a directory (`dir`) or a regular file, if
/// anything. Nothing there, or nothing that can be looked at (a parent that is a file, no
/// permission), passes: the write reports that, as an output that cannot be written.
fn check_kind(path: &Path, dir: bool) -> std::io::Result<()> {
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let (want, fits, other) = if dir {
        (
            "a directory",
            m.is_dir(),
            m.is_file().then_some("a regular file"),
        )
    } else {
        (
            "a regular file",
            m.is_file(),
            m.is_dir().then_some("a directory"),
        )
    };
    if fits {
        return Ok(());
    }
    let kind = other.or_else(|| special_kind(&m)).unwrap_or(if dir {
        "not a directory"
    } else {
        "not a regular file"
    });
    Err(refuse(path, kind, want))
}

/// Check that outputs may be written into directory `path` (files renamed into it, or a
/// staging directory moved into it): nothing there, a directory, or a symbolic link to one
/// (the writes go through the link; the link itself is never replaced). Anything else is
/// refused as [`check_output_dir`] refuses it. A directory that [`replace_dir`] replaces as a
/// whole is checked with [`check_output_dir`] instead, which refuses a link.
pub fn check_output_dir_into(path: &Path) -> std::io::Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    check_output_dir(path)
}

/// Write `path` through `fill`, atomically: a temporary file next to it (`tempfile`, removed
/// if anything fails and by [`abandon_outputs`]), synced, then renamed over `path`, so an
/// interrupted run never leaves a half-written file.
pub fn write_atomic(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if path.file_name().is_none() {
        return Err(std::io::Error::other("the output path has no file name"));
    }
    check_output_file(path)?;
    remove_stale_partials(dir);
    let prefix = partial_prefix();
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    // A temporary file is private (0600); an output file is not: 0644, as a plain create
    // under the usual umask gives.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let (tmp, pending) = Pending::create(|| {
        let tmp = builder.tempfile_in(dir)?;
        let path = tmp.path().to_owned();
        Ok((tmp, path))
    })?;
    let mut w = BufWriter::with_capacity(1 << 16, tmp.reopen()?);
    fill(&mut w)?;
    w.flush()?;
    w.get_ref().sync_all()?;
    drop(w);
    commit(|| tmp.persist(path).map_err(|e| e.error))?;
    drop(pending);
    Ok(())
}

/// Why [`replace_dir`] did not replace a directory.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    /// The directory holds an entry that is not a file of an earlier set (`name`): it is left
    /// as it is rather than deleted.
    #[error("{} holds `{name}`, which is not one of the files written there", dir.display())]
    Foreign {
        /// The directory.
        dir: PathBuf,
        /// The entry's name.
        name: String,
    },
    /// The path names no directory that can be renamed (`.`, `..`, `/`).
    #[error("{} is not a directory name that can be replaced", dir.display())]
    Unnamed {
        /// The path.
        dir: PathBuf,
    },
    /// Creating, reading or renaming failed.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The path it failed on.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// What [`replace_dir`] does with a file already in the directory, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OldFile {
    /// A file of the earlier set: gone once the new set is in.
    Replaced,
    /// A file that stays (another set sharing the directory): carried into the new directory.
    Kept,
    /// Not a file of any set: the directory is not replaced.
    Foreign,
}

/// Write a set of files as one: `fill` writes them into a new temporary directory next to
/// `dir`, which then takes the place of `dir`, so `dir` holds the whole old set or the whole
/// new one, never a mix (if the process is killed midway, the old set stays and a hidden
/// `.aifabric-partial-<pid>-<name>.new-*` directory is left beside it, which the next run
/// writing there removes). Each file already in `dir` is judged by
/// `old` on its name: the earlier set is replaced, files of other sets are kept (hard-linked,
/// else copied, into the new directory before `fill` runs), and anything else (or a
/// subdirectory) stops the replacement. The old directory is renamed away, the new one
/// renamed in, and the old one deleted: two renames, as atomic as the file system makes
/// `rename(2)`. If `fill` fails, its directory is removed and `dir` is untouched.
pub fn replace_dir<T, E: From<DirError>>(
    dir: &Path,
    old: impl Fn(&str) -> OldFile,
    fill: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<T, E> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| DirError::Io { path, source }
    };
    check_output_dir(dir).map_err(io(dir))?;
    let Some(name) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Err(DirError::Unnamed {
            dir: dir.to_owned(),
        }
        .into());
    };
    let mut kept = Vec::new();
    let existed = match std::fs::read_dir(dir) {
        Ok(entries) => {
            for e in entries {
                let e = e.map_err(io(dir))?;
                let n = e.file_name().to_string_lossy().into_owned();
                let file = e.file_type().map_err(io(&e.path()))?.is_file();
                match old(&n) {
                    OldFile::Replaced if file => {}
                    OldFile::Kept if file => kept.push(e.file_name()),
                    _ => {
                        return Err(DirError::Foreign {
                            dir: dir.to_owned(),
                            name: n,
                        }
                        .into())
                    }
                }
            }
            true
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(io(dir)(e).into()),
    };
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    remove_stale_partials(parent);
    let new = tempfile::Builder::new()
        .prefix(&format!("{}{name}.new-", partial_prefix()))
        .tempdir_in(parent)
        .map_err(io(parent))?;
    // A temporary directory is private (0700); an output directory is not: 0755, as a plain
    // create under the usual umask gives.
    #[cfg(unix)]
    std::fs::set_permissions(
        new.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .map_err(io(new.path()))?;
    for n in &kept {
        let (from, to) = (dir.join(n), new.path().join(n));
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).map_err(io(&to))?;
        }
    }
    let v = fill(new.path())?;
    // The new entries are on disk before the directory is renamed into place.
    if let Ok(d) = std::fs::File::open(new.path()) {
        let _ = d.sync_all();
    }
    if existed {
        let old = tempfile::Builder::new()
            .prefix(&format!(".{name}.old-"))
            .tempdir_in(parent)
            .map_err(io(parent))?
            .keep();
        // Renaming onto an empty directory replaces it (rename(2)).
        if let Err(e) = std::fs::rename(dir, &old) {
            let _ = std::fs::remove_dir(&old);
            return Err(io(dir)(e).into());
        }
        if let Err(e) = std::fs::rename(new.path(), dir) {
            let _ = std::fs::rename(&old, dir);
            return Err(io(dir)(e).into());
        }
        let _ = std::fs::remove_dir_all(&old);
    } else {
        std::fs::rename(new.path(), dir).map_err(io(dir))?;
    }
    // Its path is `dir` now: nothing left to clean up.
    let _ = new.keep();
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_killed_run_left_is_removed_by_the_next() {
        let d = tempfile::tempdir().unwrap();
        // A process that has exited: its pid names no running process (a reuse within the
        // test is possible but unlikely; the assertion would then fail, not pass wrongly).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale_dir = d.path().join(format!("{PARTIAL}{dead}.{}-abc", boot_id()));
        std::fs::create_dir(&stale_dir).unwrap();
        std::fs::write(stale_dir.join("rank.0.et"), b"x").unwrap();
        let stale_file = d.path().join(format!("{PARTIAL}{dead}.{}-def", boot_id()));
        // The same dead pid on another machine (or boot): not ours to judge.
        let elsewhere = d.path().join(format!("{PARTIAL}{dead}.deadbeef-x"));
        std::fs::write(&elsewhere, b"x").unwrap();
        std::fs::write(&stale_file, b"x").unwrap();
        let ours = d.path().join(format!("{}ghi", partial_prefix()));
        std::fs::write(&ours, b"x").unwrap();
        let foreign = d.path().join(".aifabric-partial-notapid");
        std::fs::write(&foreign, b"x").unwrap();
        write_atomic(&d.path().join("out.json"), |w| w.write_all(b"{}")).unwrap();
        if boot_id() != "0" {
            assert!(!stale_dir.exists() && !stale_file.exists());
        }
        assert!(
            ours.exists() && foreign.exists(),
            "only a dead run's are removed"
        );
        assert_eq!(std::fs::read(d.path().join("out.json")).unwrap(), b"{}");
    }

    #[test]
    fn special_files_are_refused_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("t");
        std::fs::write(&target, b"keep").unwrap();
        let link = d.path().join("l");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = write_atomic(&link, |w| w.write_all(b"new")).unwrap_err();
        assert!(e.to_string().contains("a symbolic link"), "{e}");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        let e = replace_dir(&link, |_| OldFile::Replaced, |_| Ok::<_, DirError>(())).unwrap_err();
        assert!(e.to_string().contains("a symbolic link"), "{e}");
        assert!(check_output_file(&d.path().join("new")).is_ok());
        assert!(check_output_file(&target).is_ok());
        assert!(check_output_dir(d.path()).is_ok());
        assert!(check_output_dir(&target).is_err());
    }
}
