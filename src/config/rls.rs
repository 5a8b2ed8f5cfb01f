//! `[rls]` → Envoy's rate limit service: its listener, and envoyproxy/ratelimit's YAML rules
//! read from `config_dir` now (a reload reads them again; an error in them refuses the config,
//! located in the YAML file).

use super::check::Checker;
use super::error::ConfigError;
use super::file::RlsFile;
use crate::rls::{RlsRules, RlsSettings};
use std::path::Path;
use std::sync::Arc;

/// Where the service listens when `rls.listen` is not given.
const LISTEN: &str = "127.0.0.1:8081";

/// The checked `[rls]` table, its rules loaded.
pub(crate) fn rls(check: &Checker<'_>, file: &RlsFile) -> Result<RlsSettings, ConfigError> {
    let listen = match &file.listen {
        Some(listen) => check.address(listen, "rls.listen")?,
        None => LISTEN.parse().expect("a valid default address"),
    };
    let dir = Path::new(file.config_dir.get_ref());
    let dir = match dir.is_relative() {
        // Relative to the config file, as a user reads it.
        true => check.path.parent().unwrap_or(Path::new(".")).join(dir),
        false => dir.to_owned(),
    };
    if !dir.is_dir() {
        let message = format!("`rls.config_dir`: `{}` is not a directory", dir.display());
        return Err(check.error(&file.config_dir, message));
    }
    let rules = RlsRules::load_dir(&dir).map_err(|e| ConfigError::Invalid {
        path: e.file,
        line: e.line.max(1),
        column: e.column.max(1),
        message: e.message,
    })?;
    Ok(RlsSettings {
        listen,
        config_dir: dir,
        rules: Arc::new(rules),
    })
}
