//! `[rls]` → Envoy's rate limit service: its listener, and envoyproxy/ratelimit's YAML rules
//! read from `config_dir` now (a reload reads them again; an error in them refuses the config,
//! located in the YAML file).

use super::check::Checker;
use super::error::ConfigError;
use super::runtime::TlsListener;
use super::value::{config_keys, Address, Bounded, Period};
use crate::rls::{RlsRules, RlsSettings, RlsTls, MAX_CONCURRENT_STREAMS, TIMEOUT};
use serde::Deserialize;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use toml::Spanned;

config_keys! {
    Listen = "rls.listen",
    Timeout = "rls.timeout",
    MaxConcurrentStreams = "rls.max_concurrent_streams",
}

/// `[rls]`: Envoy's rate limit service.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RlsFile {
    pub(crate) listen: Option<Address<Listen>>,
    pub(crate) config_dir: Spanned<String>,
    pub(crate) tls: Option<Spanned<bool>>,
    pub(crate) timeout: Option<Spanned<Period<Timeout>>>,
    pub(crate) max_concurrent_streams: Option<Bounded<MaxConcurrentStreams, 1, 100_000>>,
}

/// Where the service listens when `rls.listen` is not given.
const LISTEN: &str = "127.0.0.1:8081";

/// The checked `[rls]` table, its rules loaded.
pub(crate) fn rls(
    check: &Checker<'_>,
    file: &RlsFile,
    server_tls: Option<&TlsListener>,
) -> Result<RlsSettings, ConfigError> {
    let listen = match &file.listen {
        Some(listen) => listen.get(),
        None => LISTEN.parse().expect("a valid default address"),
    };
    let dir = check.resolve(file.config_dir.get_ref());
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
    let tls = match &file.tls {
        Some(on) if *on.get_ref() => match server_tls.and_then(|tls| tls.files.as_ref()) {
            Some(files) => Some(RlsTls {
                cert_file: files.cert_file.clone().into(),
                key_file: files.key_file.clone().into(),
            }),
            None => {
                let message = "`rls.tls` uses the server's certificate: set `server.tls_listen`, \
                               `tls_cert_file` and `tls_key_file`"
                    .to_owned();
                return Err(check.error(on, message));
            }
        },
        _ => None,
    };
    let max_concurrent_streams = match &file.max_concurrent_streams {
        Some(n) => n.count() as u32,
        None => MAX_CONCURRENT_STREAMS,
    };
    Ok(RlsSettings {
        listen,
        config_dir: dir,
        rules: Arc::new(rules),
        tls,
        timeout: timeout(check, file)?,
        max_concurrent_streams,
    })
}

/// `rls.timeout`: from 1 ms to 10 s.
fn timeout(check: &Checker<'_>, file: &RlsFile) -> Result<Duration, ConfigError> {
    let Some(at) = &file.timeout else {
        return Ok(TIMEOUT);
    };
    let timeout = at.get_ref().get();
    let range = Duration::from_millis(1)..=Duration::from_secs(10);
    if !range.contains(&timeout) {
        let message = format!("`rls.timeout` must be from 1ms to 10s, not {timeout:?}");
        return Err(check.error(at, message));
    }
    Ok(timeout)
}

/// `--test`'s line for the rate limit service.
pub(crate) struct RlsLine<'a>(pub(crate) &'a RlsSettings);

impl fmt::Display for RlsLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rls = self.0;
        let rules: usize = rls.rules.domains.len();
        writeln!(
            f,
            "rate limit svc  {}{} for Envoy, {rules} domain(s) from {}, store budget {:?}",
            rls.listen,
            if rls.tls.is_some() { " (TLS)" } else { "" },
            rls.config_dir.display(),
            rls.timeout
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use std::path::Path;

    const BASE: &str =
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n";

    #[test]
    fn the_rls_table_loads_the_rules_and_locates_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let yaml = "domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: second, requests_per_unit: 5 }\n";
        std::fs::write(dir.path().join("d.yaml"), yaml).unwrap();
        let table = format!("[rls]\nconfig_dir = \"{}\"\n", dir.path().display());
        let config = parse(&format!("{BASE}{table}"), Path::new("t.toml")).unwrap();
        let rls = config.rls.unwrap();
        assert_eq!(rls.listen.to_string(), "127.0.0.1:8081");
        assert!(rls.rules.domains.contains_key("d") && rls.tls.is_none());
        assert_eq!(rls.timeout, std::time::Duration::from_millis(10));
        let e = parse(
            &format!("{BASE}{table}timeout = \"0s\"\n"),
            Path::new("t.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("`rls.timeout` must be from 1ms"), "{e}");

        let e = parse(&format!("{BASE}{table}tls = true\n"), Path::new("t.toml")).unwrap_err();
        assert!(e.to_string().contains("`rls.tls`"), "{e}");
        let missing = format!("{BASE}[rls]\nconfig_dir = \"/nonexistent/rules\"\n");
        let e = parse(&missing, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.toml:") && e.contains("not a directory"),
            "{e}"
        );
        std::fs::write(
            dir.path().join("e.yaml"),
            "domain: e\ndescriptors:\n  - kee: k\n",
        )
        .unwrap();
        let e = parse(&format!("{BASE}{table}"), Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("e.yaml:3:"), "located in the YAML file: {e}");
    }
}
