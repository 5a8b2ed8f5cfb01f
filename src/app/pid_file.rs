//! `server.pid_file`: the process id, written once the listeners are this process's and
//! removed at a clean exit, so `kill -QUIT $(cat FILE)` finds the running instance.
//!
//! An upgrading process writes it only after the old one has handed its listeners over:
//! until then the file still names the old process, which the upgrade's `kill -QUIT` is
//! meant for. The old process, exiting afterwards, finds the new pid there and leaves the file.
//! The file is written beside itself and renamed into place, so a reader never sees it half
//! written and a symbolic link planted at its path (the default is in `/tmp`) is replaced,
//! never followed. Mode 0644, as nginx and HAProxy write theirs: a pid is no secret (`ps`
//! shows it) and tools running as other users (monitoring, log rotation) read it.
//!
//! A start (not an upgrade) refuses a pid file that names another running process: that is
//! another instance's file, and overwriting it would send the next upgrade's `kill -QUIT` to
//! the wrong process. A file naming a process that is gone is replaced.

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The pid file's mode: the owner writes, everyone reads.
const MODE: u32 = 0o644;

/// Why the pid file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PidFileError {
    /// It cannot be written there.
    #[error("cannot write `server.pid_file` {path}: {source}; set `server.pid_file` to a path this user may write")]
    Unwritable {
        /// The pid file.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// It names another process that is running.
    #[error("`server.pid_file` {path} names process {pid}, which is running: another instance uses this pid file. Stop it, take its listeners over with `--upgrade`, or give this config its own `server.pid_file` and `server.upgrade_sock`")]
    Taken {
        /// The pid file.
        path: String,
        /// The process it names.
        pid: i32,
    },
}

impl PidFileError {
    fn new(path: &Path, source: io::Error) -> Self {
        Self::Unwritable {
            path: path.display().to_string(),
            source,
        }
    }
}

/// A written pid file, removed when dropped if it still holds this process's id.
#[derive(Debug)]
pub struct PidFile {
    path: PathBuf,
    pid: u32,
}

impl PidFile {
    /// Writes this process's id to `path`.
    pub fn write(path: &Path) -> Result<Self, PidFileError> {
        Self::write_pid(path, std::process::id())
    }

    /// Checks, before anything listens, that `path`'s directory exists.
    pub fn check(path: &Path) -> Result<(), PidFileError> {
        match missing_directory(path) {
            Some(dir) => {
                let message = format!("the directory {} does not exist", dir.display());
                let e = io::Error::new(io::ErrorKind::NotFound, message);
                Err(PidFileError::new(path, e))
            }
            None => Ok(()),
        }
    }

    /// Checks, before a start (not an upgrade) listens, that the file at `path`, if there,
    /// names no other running process.
    pub fn check_free(path: &Path) -> Result<(), PidFileError> {
        match running_other(path) {
            Some(pid) => Err(PidFileError::Taken {
                path: path.display().to_string(),
                pid,
            }),
            None => Ok(()),
        }
    }

    /// What `--test` says of `path` when its directory is not there now: a start would fail
    /// unless something makes it first (systemd's `RuntimeDirectory=` as the unit starts).
    pub fn note(path: &Path) -> Option<String> {
        let dir = missing_directory(path)?;
        Some(format!(
            "`server.pid_file` {}: the directory {} does not exist now; a start fails unless it \
             is made first (systemd's `RuntimeDirectory=` makes it as the unit starts)",
            path.display(),
            dir.display()
        ))
    }

    fn write_pid(path: &Path, pid: u32) -> Result<Self, PidFileError> {
        let fail = |e| PidFileError::new(path, e);
        let name = path.file_name().ok_or_else(|| {
            fail(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a file name",
            ))
        })?;
        let staged = path.with_file_name(format!(".{}.{pid}.tmp", name.to_string_lossy()));
        stage(&staged, pid).map_err(fail)?;
        fs::rename(&staged, path).map_err(|e| {
            let _ = fs::remove_file(&staged);
            fail(e)
        })?;
        Ok(Self {
            path: path.to_owned(),
            pid,
        })
    }
}

/// The directory of `path`, when it is not there.
fn missing_directory(path: &Path) -> Option<&Path> {
    let dir = path.parent()?;
    (!dir.as_os_str().is_empty() && !dir.is_dir()).then_some(dir)
}

/// The process the file at `path` names, when it is another one and running.
fn running_other(path: &Path) -> Option<i32> {
    let pid: i32 = fs::read_to_string(path).ok()?.trim().parse().ok()?;
    let other = pid > 0 && u32::try_from(pid).ok() != Some(std::process::id());
    // Signal 0 checks the process exists; EPERM: it does, run by another user.
    let running = matches!(kill(Pid::from_raw(pid), None), Ok(()) | Err(Errno::EPERM));
    (other && running).then_some(pid)
}

/// Writes `pid` to a new file at `staged` (one left by an earlier process of the same id
/// is replaced).
fn stage(staged: &Path, pid: u32) -> io::Result<()> {
    match fs::remove_file(staged) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(MODE)
        .open(staged)?;
    // The umask may have taken bits off; the mode is the same on every machine.
    file.set_permissions(fs::Permissions::from_mode(MODE))?;
    file.write_all(format!("{pid}\n").as_bytes())?;
    file.sync_all()
}

impl Drop for PidFile {
    fn drop(&mut self) {
        // After an upgrade the file names the new process: it is not this one's to remove.
        let ours =
            fs::read_to_string(&self.path).is_ok_and(|text| text.trim() == self.pid.to_string());
        if ours {
            if let Err(e) = fs::remove_file(&self.path) {
                log::warn!("cannot remove the pid file {}: {e}", self.path.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pid_is_written_0644_and_removed_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("floodgate.pid");
        let pid_file = PidFile::write(&path).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("{}\n", std::process::id()));
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no staged file left"
        );
        drop(pid_file);
        assert!(!path.exists());
    }

    #[test]
    fn a_pid_file_rewritten_by_an_upgrade_is_left_to_the_new_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("floodgate.pid");
        let old = PidFile::write_pid(&path, 100).unwrap();
        let new = PidFile::write_pid(&path, 200).unwrap();
        drop(old);
        assert_eq!(fs::read_to_string(&path).unwrap(), "200\n");
        drop(new);
        assert!(!path.exists());
    }

    #[test]
    fn a_link_planted_at_the_path_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        fs::write(&target, "keep me").unwrap();
        let path = dir.path().join("floodgate.pid");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let _pid_file = PidFile::write_pid(&path, 300).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep me");
        assert!(!fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(fs::read_to_string(&path).unwrap(), "300\n");
    }

    #[test]
    fn a_directory_that_is_not_there_is_named_with_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nowhere/floodgate.pid");
        let shown = path.display().to_string();
        for e in [
            PidFile::write(&path),
            PidFile::check(&path).map(|_| unreachable!()),
        ] {
            let e = e.unwrap_err().to_string();
            assert!(e.contains("`server.pid_file`") && e.contains(&shown), "{e}");
        }
        assert!(PidFile::check(&dir.path().join("floodgate.pid")).is_ok());
        let note = PidFile::note(&path).unwrap();
        assert!(
            note.contains("RuntimeDirectory=") && note.contains(&shown),
            "{note}"
        );
        assert_eq!(PidFile::note(&dir.path().join("floodgate.pid")), None);
    }

    #[test]
    fn a_file_naming_another_running_process_is_refused_and_one_naming_none_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("floodgate.pid");
        // Process 1 always runs; no process has an id above the kernel's `pid_max` (2^22).
        fs::write(&path, "1\n").unwrap();
        let e = PidFile::check_free(&path).unwrap_err().to_string();
        assert!(e.contains("names process 1, which is running"), "{e}");
        fs::write(&path, format!("{}\n", i32::MAX)).unwrap();
        assert!(PidFile::check_free(&path).is_ok(), "a process that is gone");
        fs::write(&path, format!("{}\n", std::process::id())).unwrap();
        assert!(PidFile::check_free(&path).is_ok(), "this process's own");
        fs::write(&path, "not a pid\n").unwrap();
        assert!(PidFile::check_free(&path).is_ok());
        assert!(PidFile::check_free(&dir.path().join("none.pid")).is_ok());
    }
}
