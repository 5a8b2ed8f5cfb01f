//! How often a backend's robots.txt is read, and how long one fetch may take.

use crate::clock::Clock;
use std::time::Duration;

/// The refreshers' settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Time between two fetches of a host's file (`[robots] refresh`; any from 1 s).
    pub refresh: Duration,
    /// Time one fetch may take, connecting, redirects and body included.
    pub timeout: Duration,
    /// The wall clock copies are dated by (the system's, or one a test moves).
    pub clock: Clock,
}

impl Default for Settings {
    /// Every hour, 10 s for each fetch, the system's clock.
    fn default() -> Self {
        Self {
            refresh: Duration::from_secs(60 * 60),
            timeout: Duration::from_secs(10),
            clock: Clock::System,
        }
    }
}
