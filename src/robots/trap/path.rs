//! The trap's path when the config names none: `/.well-known/floodgate-trap/<22 random
//! url-safe characters>/` (128 bits), so no crawler can skip it by name. The fleet keeps one
//! in Redis (`lua/traps.lua`: the first instance stores it, every instance reads it back);
//! the memory store keeps one in a file when given one (created 0600 like
//! `admin.state_file`; its first line is the path), else draws one per process.

use super::error::TrapError;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// What every random trap path starts with.
pub const TRAP_PREFIX: &str = "/.well-known/floodgate-trap/";

/// A fresh random trap path.
pub fn random_trap_path() -> Result<String, TrapError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| TrapError::NoRandomness(e.to_string()))?;
    Ok(format!("{TRAP_PREFIX}{}/", URL_SAFE_NO_PAD.encode(bytes)))
}

/// Whether `text` can serve as a trap path: it starts with `/` and holds no space or control
/// character (what an operator might have stored in Redis instead).
pub(super) fn is_path(text: &str) -> bool {
    text.starts_with('/') && text.chars().all(|c| c.is_ascii_graphic())
}

/// The path kept in `file`: the one it holds, else a fresh one written now (0600).
pub(super) fn kept_in(file: &Path) -> Result<String, TrapError> {
    let failed = |why: String| TrapError::PathFile {
        path: file.display().to_string(),
        why,
    };
    if let Some(path) = read(file).map_err(|e| failed(e.to_string()))? {
        return Ok(path);
    }
    let fresh = random_trap_path()?;
    let created = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file);
    match created {
        Ok(mut out) => {
            let written = out
                .write_all(format!("{fresh}\n").as_bytes())
                .and_then(|()| out.sync_all());
            written.map_err(|e| failed(e.to_string()))?;
            Ok(fresh)
        }
        // Another process wrote it first: its path is the one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read(file)
            .map_err(|e| failed(e.to_string()))?
            .ok_or_else(|| failed("it holds no path".into())),
        Err(e) => Err(failed(e.to_string())),
    }
}

/// The path `file` holds; `None` when it does not exist. A file holding something else is an
/// error (never overwritten: the operator may have meant it).
fn read(file: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(file) {
        Ok(text) => {
            let first = text.lines().next().unwrap_or_default().trim();
            match is_path(first) {
                true => Ok(Some(first.to_owned())),
                false => Err(std::io::Error::other(format!(
                    "its first line is not a path: {first:?}"
                ))),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_random_path_has_22_url_safe_characters() {
        let path = random_trap_path().unwrap();
        let token = path
            .strip_prefix(TRAP_PREFIX)
            .and_then(|t| t.strip_suffix('/'))
            .unwrap();
        assert_eq!(token.len(), 22);
        assert!(token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert_ne!(path, random_trap_path().unwrap());
        assert!(is_path(&path));
    }

    #[test]
    fn a_kept_path_survives_and_its_file_is_0600() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("trap-path");
        let first = kept_in(&file).unwrap();
        assert!(first.starts_with(TRAP_PREFIX));
        assert_eq!(kept_in(&file).unwrap(), first);
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_file_holding_something_else_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("trap-path");
        std::fs::write(&file, "not a path\n").unwrap();
        let err = kept_in(&file).unwrap_err().to_string();
        assert!(err.contains("not a path"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a path\n");
        assert!(!is_path("/a b") && !is_path("a/") && is_path("/trap/"));
    }
}
