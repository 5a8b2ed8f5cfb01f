//! The site's robots.txt as one config runs it: the copy served and enforced for each host
//! (the managed file, or the backend's as last read), the trap and its fleet-wide tables. The
//! proxy asks it, per request, what to serve, what the file says of a crawler, and whether
//! the sender is trapped.

use super::spring::{spring, Sprung, Visitor};
use super::trap::Traps;
use super::{judge, Followed, Served};
use crate::clock::Clock;
use crate::identity::{BotClaim, Identity, RobotsFact, Trapped};
use crate::telemetry::{RobotsCounters, TrapResult};
use bytes::Bytes;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

/// The path answered from Floodgate's copy.
pub const ROBOTS_TXT: &str = "/robots.txt";

/// Where each host's copy comes from.
pub(super) enum Copies {
    /// The file written from `groups`, the same for every host.
    Managed(Arc<Served>),
    /// The backend's file, read in the background for each host (the first host also
    /// answers for hosts the config does not name).
    Backend(Vec<(String, Arc<Followed>)>),
}

/// robots.txt under one config.
pub struct SiteRobots {
    pub(super) copies: Copies,
    /// The trap's path (ending in `/`), when armed.
    pub(super) trap: Option<Arc<str>>,
    /// How long after reading robots.txt a request for the trap is caught.
    pub(super) window: Duration,
    /// How long a caught caller is banned.
    pub(super) ban: Duration,
    pub(super) traps: Arc<Traps>,
    pub(super) counters: RobotsCounters,
    pub(super) clock: Clock,
}

impl SiteRobots {
    /// Whether `path` (in its normal form) is `/robots.txt`.
    pub fn is_robots_txt(&self, path: &str) -> bool {
        path == ROBOTS_TXT
    }

    /// Whether the copy served and enforced depends on the request's host: backend copies of
    /// more than one host (else the request's host need not be worked out).
    pub fn needs_host(&self) -> bool {
        matches!(&self.copies, Copies::Backend(hosts) if hosts.len() > 1)
    }

    /// The body answered to `/robots.txt` on `host`.
    pub fn body(&self, host: Option<&str>) -> Bytes {
        self.served(host).body()
    }

    /// Notes that `ip` read robots.txt (what arms the trap for it).
    pub async fn read_by(&self, ip: Option<IpAddr>) {
        let Some(ip) = ip else { return };
        if let Err(e) = self.traps.read_robots(ip, self.clock.now_ms()).await {
            log::debug!("a reader of robots.txt could not be noted in the fleet: {e}");
        }
    }

    /// What the file of `host` says of a request with `user_agent`, claiming `bot`, for
    /// `path_and_query`, counted; `None` when it is not a crawler's.
    pub fn judge(
        &self,
        host: Option<&str>,
        user_agent: Option<&[u8]>,
        bot: Option<&BotClaim>,
        path_and_query: &str,
    ) -> Option<RobotsFact> {
        let served = self.served(host);
        let fact = judge::judge(&served, user_agent, bot, path_and_query)?;
        self.counters.request(&fact.crawler, fact.verdict);
        Some(fact)
    }

    /// Whether `path` (in its normal form) is the trap or below it.
    pub fn is_trap(&self, path: &str) -> bool {
        self.trap
            .as_deref()
            .is_some_and(|trap| is_below(path, trap))
    }

    /// The trap ban in force for a sender at `ip` with the `proven` credential, if any.
    pub fn trapped(
        &self,
        ip: Option<IpAddr>,
        proven: Option<(&str, &Identity)>,
    ) -> Option<Trapped> {
        // Every request asks: no clock read while no one is banned.
        if self.traps.bans_held() == 0 {
            return None;
        }
        let ban = self.traps.banned(ip, proven, self.clock.now_ms())?;
        Some(Trapped {
            until_ms: ban.until_ms,
        })
    }

    /// Springs the trap on `visitor`, counted.
    pub async fn spring(&self, visitor: Visitor<'_>) -> Sprung {
        let now = self.clock.now_ms();
        let sprung = spring(&self.traps, visitor, self.window, self.ban, now).await;
        self.counters.trap(match sprung {
            Sprung::Caught(_) => TrapResult::Banned,
            Sprung::Spared(_) => TrapResult::Spared,
        });
        sprung
    }

    /// The copy served and enforced for `host`.
    fn served(&self, host: Option<&str>) -> Arc<Served> {
        match &self.copies {
            Copies::Managed(served) => served.clone(),
            Copies::Backend(hosts) => {
                let named = host.and_then(|h| hosts.iter().find(|(name, _)| name == h));
                match named.or(hosts.first()) {
                    Some((_, followed)) => followed.served(),
                    None => Arc::default(),
                }
            }
        }
    }
}

/// Whether `path` is `trap` or below it, and so disallowed by its `Disallow: <trap>` line (a
/// prefix): `/trap/` does not cover `/trap`, which a crawler obeying the file may fetch.
fn is_below(path: &str, trap: &str) -> bool {
    path.strip_prefix(trap)
        .is_some_and(|rest| trap.ends_with('/') || rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::is_below;

    #[test]
    fn the_trap_covers_only_what_its_disallow_line_covers() {
        let trap = "/.well-known/floodgate-trap/";
        for path in [
            trap,
            "/.well-known/floodgate-trap/x",
            "/.well-known/floodgate-trap/x/",
        ] {
            assert!(is_below(path, trap), "{path}");
        }
        for path in [
            "/.well-known/floodgate-trap",
            "/.well-known/floodgate-trapdoor",
            "/",
        ] {
            assert!(!is_below(path, trap), "{path}");
        }
        // A trap written without its slash: itself and below, not a path that merely begins
        // like it.
        assert!(is_below("/trap", "/trap") && is_below("/trap/x", "/trap"));
        assert!(!is_below("/trapdoor", "/trap"));
    }
}
