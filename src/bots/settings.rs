//! What `[bots]` sets: the crawlers known and how their reverse-DNS claims are checked.

use super::{Crawlers, SignedSettings};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How long a reverse-DNS check may hold a request, unless `bots.dns_timeout` says.
pub const DNS_TIMEOUT: Duration = Duration::from_millis(200);

/// How crawlers' reverse-DNS claims are checked (`[bots] dns_timeout`, `resolver`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsSettings {
    /// The longest a request waits for a lookup; the lookup goes on for the cache.
    pub timeout: Duration,
    /// The DNS server asked; `None` is the system's (`/etc/resolv.conf`).
    pub resolver: Option<SocketAddr>,
}

impl Default for DnsSettings {
    fn default() -> Self {
        Self {
            timeout: DNS_TIMEOUT,
            resolver: None,
        }
    }
}

/// The checked `[bots]` table.
#[derive(Debug, Clone)]
pub struct BotsSettings {
    /// The catalogue and the crawlers' published ranges.
    pub crawlers: Arc<Crawlers>,
    /// How reverse-DNS claims are checked.
    pub dns: DnsSettings,
    /// How signed agents are verified (`[bots.signed]`).
    pub signed: SignedSettings,
    /// How requests are scored (`[bots.score]`).
    pub score: super::ScoreSettings,
}
