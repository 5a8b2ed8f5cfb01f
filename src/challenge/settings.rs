//! The `[challenge]` table: what every challenge page and pass shares.

use crate::privacy_pass::PrivacyPassSettings;
use std::time::Duration;

/// How challenges are answered, passes kept and solutions received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChallengeSettings {
    /// The challenge page's status (`403`: it is not a success).
    pub status: u16,
    /// How long a pass is good.
    pub pass_ttl: Duration,
    /// How long a challenge page's nonce may be redeemed (and is remembered as used).
    pub nonce_ttl: Duration,
    /// How long a `refresh` page waits before it reloads itself; a solution sooner is
    /// refused.
    pub refresh_wait: Duration,
    /// Where solutions come back (a path the proxy answers itself, never the backend).
    pub path: String,
    /// The pass cookie's name.
    pub cookie: String,
    /// Paths never shown a challenge page (`*` at the start or the end): they get the
    /// policy's ordinary answer.
    pub never_paths: Vec<String>,
    /// `[challenge.privacy_pass]`: the issuers whose tokens answer the challenge (`None`: no
    /// token is asked for or taken).
    pub privacy_pass: Option<PrivacyPassSettings>,
}

impl ChallengeSettings {
    /// `challenge.path` when not given.
    pub const PATH: &'static str = "/.floodgate/challenge";
    /// `challenge.cookie` when not given.
    pub const COOKIE: &'static str = "floodgate_pass";
}

impl Default for ChallengeSettings {
    fn default() -> Self {
        Self {
            status: 403,
            pass_ttl: Duration::from_secs(7 * 24 * 3600),
            nonce_ttl: Duration::from_secs(300),
            refresh_wait: Duration::from_secs(2),
            path: Self::PATH.to_owned(),
            cookie: Self::COOKIE.to_owned(),
            never_paths: super::DEFAULT_NEVER_PATHS
                .iter()
                .map(|p| (*p).to_owned())
                .collect(),
            privacy_pass: None,
        }
    }
}
