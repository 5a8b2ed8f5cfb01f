//! The start-time checks that read files, made before anything listens and by `--test` alike,
//! so a config `--test` calls valid also starts: the control API's token file is read whole;
//! the memory store's `admin.state_file` must sit in a directory that exists, be readable and
//! writable by its owner only (it holds the identity digest key) and hold a state that loads;
//! the TLS listener's certificate and key must parse, and the access log's directory exists.
//! (The pid file's directory may be made by the service manager as the unit starts: a start
//! checks it, `--test` only notes it; see `pid_file`.)
//! An admin listener open beyond this host without a token file is warned about.

use super::BuildError;
use crate::admin::Tokens;
use crate::config::Config;
use crate::control::MemoryLedger;
use crate::limiter::StoreSettings;
use std::path::Path;

/// Why the state file may not be used.
#[derive(Debug, thiserror::Error)]
pub enum StateFileCheck {
    /// Its directory does not exist (the file is written there at start).
    #[error("`admin.state_file` {0}: the directory {1} does not exist; create it or choose another path")]
    NoDirectory(String, String),
    /// It is not a regular file.
    #[error("`admin.state_file` {0} is not a regular file")]
    NotAFile(String),
    /// Others than its owner may read or write it.
    #[error("`admin.state_file` {0} can be read or written by its group or by everyone (mode {1:03o}); it holds the identity digest key: run `chmod 600 {0}`")]
    Readable(String, u32),
    /// Its metadata cannot be read.
    #[error("`admin.state_file` {0}: {1}")]
    Unreadable(String, std::io::Error),
}

/// Every start-time check of `config` that reads files.
pub fn preflight(config: &Config) -> Result<(), BuildError> {
    Tokens::load(config.admin.token_file.as_deref())
        .map_err(|e| BuildError::Tokens(e.to_string()))?;
    if let (Some(path), StoreSettings::Memory { .. }) = (&config.admin.state_file, &config.store) {
        state_file(path)?;
        MemoryLedger::check(path)?;
    }
    if let Some(files) = config
        .server
        .tls
        .as_ref()
        .and_then(|tls| tls.files.as_ref())
    {
        super::tls_files::check(&files.cert_file, &files.key_file).map_err(BuildError::Tls)?;
    }
    if let Some(file) = config
        .server
        .access_log
        .as_ref()
        .and_then(|a| a.file.as_ref())
    {
        access_log_directory(file)?;
    }
    warn_open_admin(config);
    Ok(())
}

/// The access log's directory, which must exist (the file is created at start).
fn access_log_directory(file: &Path) -> Result<(), BuildError> {
    match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            Err(BuildError::AccessLog(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "{}: the directory {} does not exist",
                    file.display(),
                    dir.display()
                ),
            )))
        }
        _ => Ok(()),
    }
}

/// A warning when the admin listener is reachable beyond this host while the control API is
/// off: `/metrics` and `/offenders` are then open to whoever reaches it.
fn warn_open_admin(config: &Config) {
    let admin = &config.admin;
    if admin.listen.ip().is_loopback() || admin.token_file.is_some() {
        return;
    }
    log::warn!(
        "the admin listener {} is reachable beyond this host and admin.token_file is not set: \
         /metrics and /offenders are open to anyone who reaches it; listen on 127.0.0.1 or set \
         admin.token_file and admin.protect_metrics",
        admin.listen
    );
}

/// The state file at `path`, checked: in a directory that exists, and when it exists a
/// regular file only its owner may read or write.
fn state_file(path: &Path) -> Result<(), StateFileCheck> {
    let shown = path.display().to_string();
    let directory = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !directory.is_dir() {
        return Err(StateFileCheck::NoDirectory(
            shown,
            directory.display().to_string(),
        ));
    }
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(StateFileCheck::Unreadable(shown, e)),
    };
    if !metadata.is_file() {
        return Err(StateFileCheck::NotAFile(shown));
    }
    let mode = std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o777;
    match mode & 0o066 {
        0 => Ok(()),
        _ => Err(StateFileCheck::Readable(shown, mode)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_state_file_others_may_read_is_refused_naming_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        assert!(state_file(&path).is_ok(), "not there yet: written at start");
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = state_file(&path).unwrap_err().to_string();
        assert!(
            e.contains("mode 644") && e.contains(&format!("chmod 600 {}", path.display())),
            "{e}"
        );
        for others in [0o640, 0o620, 0o602] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(others)).unwrap();
            assert!(state_file(&path).is_err(), "{others:o}");
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(state_file(&path).is_ok());
        let missing = dir.path().join("nowhere/state.json");
        assert!(state_file(&missing)
            .unwrap_err()
            .to_string()
            .contains("does not exist"));
        assert!(state_file(dir.path())
            .unwrap_err()
            .to_string()
            .contains("not a regular file"));
    }
}
