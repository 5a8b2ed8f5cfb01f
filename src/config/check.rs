//! Checks of single values against the text they came from, so errors can say where.

use super::error::ConfigError;
use crate::identity::{Network, Source, SourceSpec};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

/// Locates errors in one config file.
pub(crate) struct Checker<'a> {
    pub(crate) path: &'a Path,
    pub(crate) text: &'a str,
    /// Whether `[identity.jwt]` is configured, so `jwt:` sources can be used.
    pub(crate) jwt_configured: bool,
}

impl Checker<'_> {
    pub(crate) fn error<T>(&self, value: &Spanned<T>, message: String) -> ConfigError {
        ConfigError::at(self.path, self.text, Some(value.span()), message)
    }

    pub(crate) fn integer(
        &self,
        value: &Spanned<i64>,
        key: &str,
        range: RangeInclusive<i64>,
    ) -> Result<i64, ConfigError> {
        let n = *value.get_ref();
        if range.contains(&n) {
            Ok(n)
        } else {
            let (lo, hi) = (range.start(), range.end());
            Err(self.error(
                value,
                format!("`{key}` must be between {lo} and {hi}, not {n}"),
            ))
        }
    }

    /// A `redis://` or `rediss://` URL in a list, parsed only (the store connects when the
    /// server is built).
    pub(crate) fn redis_url(
        &self,
        url: &Spanned<String>,
        key: &str,
    ) -> Result<String, ConfigError> {
        super::value::redis_url(url.get_ref(), key).map_err(|message| self.error(url, message))
    }

    pub(crate) fn duration(
        &self,
        value: Option<&Spanned<String>>,
        key: &str,
        default: Duration,
    ) -> Result<Duration, ConfigError> {
        let Some(value) = value else {
            return Ok(default);
        };
        humantime::parse_duration(value.get_ref()).map_err(|e| {
            self.error(
                value,
                format!("`{key}` must be a duration like 500ms or 30s: {e}"),
            )
        })
    }

    /// Warns, located, when network `text` (the value of `key` at `value`) sets host bits
    /// below its prefix: it is read as the network it stands for, which the warning names.
    pub(crate) fn host_bits(&self, value: &Spanned<String>, text: &str, key: &str) {
        let Some(network) = Network::read(text).filter(|n| n.host_bits) else {
            return;
        };
        let message = format!(
            "`{key}`: `{}` sets host bits below its prefix and is read as {}; write that",
            text.trim(),
            network.net
        );
        log::warn!("{}", self.error(value, message));
    }

    /// Warns, located, when network `text` (in list `key`) is every address of its family
    /// (`0.0.0.0/0`, `::/0`): on the deny-list every such caller gets 403, on the allow-list
    /// none is limited.
    pub(crate) fn everyone(&self, value: &Spanned<String>, text: &str, key: &str) {
        if Network::read(text).is_some_and(|n| n.is_everyone()) {
            let message = format!(
                "`{key}`: `{}` lists every address of its family",
                text.trim()
            );
            log::warn!("{}", self.error(value, message));
        }
    }

    /// A path named in the config: a relative one is relative to the config file's directory
    /// (as its reader expects, whatever the working directory); an absolute one is kept.
    pub(crate) fn resolve(&self, path: &str) -> PathBuf {
        match self.path.parent() {
            Some(dir) => dir.join(path),
            None => PathBuf::from(path),
        }
    }

    /// A file path that can be read, resolved as [`Checker::resolve`] says.
    pub(crate) fn readable(
        &self,
        path: &Spanned<String>,
        key: &str,
    ) -> Result<String, ConfigError> {
        let resolved = self.resolve(path.get_ref());
        match std::fs::metadata(&resolved) {
            Ok(_) => Ok(resolved.to_string_lossy().into_owned()),
            Err(e) => Err(self.error(
                path,
                format!("`{key}`: cannot read `{}`: {e}", resolved.display()),
            )),
        }
    }

    /// A source spec (`header:x+ip`), refusing `jwt:` sources when no JWT keys are configured.
    pub(crate) fn source_spec(
        &self,
        value: &Spanned<String>,
        key: &str,
    ) -> Result<SourceSpec, ConfigError> {
        let spec: SourceSpec = value
            .get_ref()
            .parse()
            .map_err(|e| self.error(value, format!("`{key}`: {e}")))?;
        if spec.uses_jwt() {
            self.jwt_allowed(value, key)?;
        }
        Ok(spec)
    }

    /// A single source (`jwt:plan`), with the same check.
    pub(crate) fn source(&self, value: &Spanned<String>, key: &str) -> Result<Source, ConfigError> {
        let source: Source = value
            .get_ref()
            .parse()
            .map_err(|e| self.error(value, format!("`{key}`: {e}")))?;
        if matches!(source, Source::Jwt(_)) {
            self.jwt_allowed(value, key)?;
        }
        Ok(source)
    }

    pub(crate) fn jwt_allowed(
        &self,
        value: &Spanned<String>,
        key: &str,
    ) -> Result<(), ConfigError> {
        if self.jwt_configured {
            return Ok(());
        }
        let message = format!(
            "`{key}`: `jwt:` sources need an [identity.jwt] table with the keys that verify tokens"
        );
        Err(self.error(value, message))
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use std::path::{Path, PathBuf};

    #[test]
    fn relative_paths_are_read_beside_the_config_and_absolute_ones_as_written() {
        let text =
            "[server]\nlisten = \"127.0.0.1:8080\"\naccess_log_file = \"logs/access.log\"\n\n\
                    [admin]\nstate_file = \"/var/lib/floodgate/state\"\n\n\
                    [upstream]\nbackends = [\"127.0.0.1:8000\"]\n";
        let config = parse(text, Path::new("/etc/floodgate/floodgate.toml")).unwrap();
        let log = config.server.access_log.unwrap().file;
        assert_eq!(log, Some(PathBuf::from("/etc/floodgate/logs/access.log")));
        let state = config.admin.state_file;
        assert_eq!(state, Some(PathBuf::from("/var/lib/floodgate/state")));
        // A config named without a directory: its paths are the working directory's.
        let config = parse(text, Path::new("floodgate.toml")).unwrap();
        let log = config.server.access_log.unwrap().file;
        assert_eq!(log, Some(PathBuf::from("logs/access.log")));
    }
}
