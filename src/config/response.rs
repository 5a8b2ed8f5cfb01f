//! `[response]`: what a throttled request is answered with, as written and as run, with its
//! default and `--test`'s line.

use super::value::{config_keys, Bounded};
use serde::Deserialize;
use std::fmt;

config_keys! {
    Status = "response.status",
}

/// `[response]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResponseFile {
    status: Option<Bounded<Status, 400, 599>>,
}

/// `[response]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseSettings {
    /// Status of a throttled response.
    pub throttle_status: u16,
}

impl Default for ResponseSettings {
    fn default() -> Self {
        Self {
            throttle_status: 429,
        }
    }
}

impl From<&ResponseFile> for ResponseSettings {
    fn from(file: &ResponseFile) -> Self {
        let default = Self::default();
        Self {
            throttle_status: file
                .status
                .as_ref()
                .map_or(default.throttle_status, |s| s.count() as u16),
        }
    }
}

impl fmt::Display for ResponseSettings {
    /// `--test`'s line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "throttled with  {}", self.throttle_status)
    }
}
