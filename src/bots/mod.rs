//! Knowing the bot: which crawler a request claims to be (the catalogue), whether the claim
//! holds (published ranges, reverse DNS confirmed forward), and the network and country of
//! its address (MaxMind-format databases). What this room learns becomes the request's
//! [`Traits`](crate::identity::Traits), which the gate's conditions and identity sources read;
//! the gate never depends on this room.

// Verification of crawlers' claims: published ranges and reverse DNS.
pub mod dns;
mod ranges;
pub use dns::{DnsError, ReverseDns};
pub use ranges::{Ranges, RangesError};

use std::net::SocketAddr;
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
