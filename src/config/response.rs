//! `[response]` → what a throttled request is answered with.

use super::check::Checker;
use super::error::ConfigError;
use super::runtime::ResponseSettings;
use serde::Deserialize;
use toml::Spanned;

/// `[response]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResponseFile {
    pub(crate) status: Option<Spanned<i64>>,
}

/// `response.status`: 400 to 599, 429 by default.
pub(crate) fn response(
    check: &Checker<'_>,
    file: &ResponseFile,
) -> Result<ResponseSettings, ConfigError> {
    Ok(ResponseSettings {
        throttle_status: match &file.status {
            Some(status) => check.integer(status, "response.status", 400..=599)? as u16,
            None => 429,
        },
    })
}
