//! The config: a TOML file (`file`), checked (`validate`) into the runtime config (`runtime`):
//! plain settings owned by the modules that use them. Reading a config does no network I/O;
//! names are resolved and stores connected when the server is built.

mod acme;
mod action;
mod admin;
mod bots;
mod challenge;
mod check;
mod conditions;
mod crawl_delay;
mod crowdsec;
mod decisions;
mod describe;
mod error;
mod explain;
mod file;
mod geo;
mod identity;
mod instance_files;
mod overload;
mod policies;
mod policy_table;
mod privacy_pass;
mod quota;
mod response;
mod rls;
mod robots;
mod rules;
mod runtime;
mod score;
mod sender;
mod server;
mod signed;
mod store;
mod telemetry;
mod upstream;
mod validate;
mod value;
mod verify;
mod wants;

pub use error::ConfigError;
pub use runtime::{AdminSettings, Config, ResponseSettings, ServerSettings, TlsFiles, TlsListener};

use std::path::Path;

/// Reads and validates the config file at `path`.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse(&text, path)
}

/// Validates config `text`, naming `path` in errors.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let file: file::FileConfig = toml::from_str(text)
        .map_err(|e| ConfigError::at(path, text, e.span(), e.message().trim().to_owned()))?;
    validate::validate(file, path, text)
}

#[cfg(test)]
mod tests;
