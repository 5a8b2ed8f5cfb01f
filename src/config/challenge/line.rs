//! `--test`'s line for `[challenge]`: where solutions go, how long nonces and passes last; and
//! whose Privacy Pass tokens answer it.

use crate::challenge::ChallengeSettings;
use std::fmt;

/// `--test`'s line for the challenge pages, said when a policy or CrowdSec challenges.
pub(crate) struct ChallengeLine<'a> {
    /// The `[challenge]` settings.
    pub(crate) settings: &'a ChallengeSettings,
    /// Whether a policy asks for a `refresh` challenge (its wait is then said).
    pub(crate) refresh: bool,
}

impl fmt::Display for ChallengeLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.settings;
        let wait = match self.refresh {
            true => format!(
                " (a refresh page reloads after {})",
                humantime::format_duration(c.refresh_wait)
            ),
            false => String::new(),
        };
        writeln!(
            f,
            "challenge       pages answered {}{wait}; solutions at {}, nonces good {}s; \
             passes in cookie `{}` for {}s; never on {}",
            c.status,
            c.path,
            c.nonce_ttl.as_secs(),
            c.cookie,
            c.pass_ttl.as_secs(),
            c.never_paths.join(" ")
        )?;
        if let Some(privacy_pass) = &c.privacy_pass {
            let issuers: Vec<String> = privacy_pass.issuers.iter().map(|i| i.to_string()).collect();
            writeln!(
                f,
                "privacy pass    tokens (type 2) of {} answer the challenge",
                issuers.join("; ")
            )?;
        }
        Ok(())
    }
}
