//! The trap sprung: a request for the path robots.txt keeps from every crawler. The caller it
//! catches is one who read the rules and did the opposite: its address fetched `/robots.txt`
//! within `trap_window` and its User-Agent is not a browser's; it is banned fleet-wide for
//! `trap_ban` (its proven identity when it carried one, else its address). Everyone else is
//! spared: a search engine (verified, or its check unfinished), a browser (an `<img>` on
//! another site can point at the trap), an address that never read the file, or one whose
//! reading cannot be checked now (a check that cannot finish never bans).

use super::judge::verified_search_engine;
use super::trap::{TrapTarget, Traps};
use crate::bots::score::claims_browser;
use crate::identity::{BotClaim, Category, Identity, Trapped, Verification};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

/// Why a request for the trap was let go (answered 404).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spared {
    /// A search engine's claim, verified or still being checked.
    SearchEngine,
    /// A browser's User-Agent.
    Browser,
    /// Its address did not fetch `/robots.txt` within the window (or it has none).
    NeverRead,
    /// Whether it read the file could not be told (the fleet's store did not answer).
    Unsure,
}

/// What a request for the trap came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sprung {
    /// Caught: banned until then.
    Caught(Trapped),
    /// Let go.
    Spared(Spared),
}

/// Who sent a request for the trap.
pub struct Visitor<'r> {
    /// The client address.
    pub ip: Option<IpAddr>,
    /// Its User-Agent.
    pub user_agent: Option<&'r [u8]>,
    /// The crawler it claims to be.
    pub bot: Option<&'r BotClaim>,
    /// Its proven credential: the source (as written) and the value's digest.
    pub proven: Option<(Arc<str>, Identity)>,
}

/// Springs the trap on `visitor` at `now_ms`: banned in `traps` for `ban` when it read
/// robots.txt within `window`.
pub async fn spring(
    traps: &Traps,
    visitor: Visitor<'_>,
    window: Duration,
    ban: Duration,
    now_ms: u64,
) -> Sprung {
    if let Some(spared) = spared_by_who(&visitor) {
        return Sprung::Spared(spared);
    }
    let Some(ip) = visitor.ip else {
        return Sprung::Spared(Spared::NeverRead);
    };
    match traps.has_read(ip, window, now_ms).await {
        Ok(true) => {}
        Ok(false) => return Sprung::Spared(Spared::NeverRead),
        Err(e) => {
            log::debug!("the trap cannot tell whether a caller read robots.txt: {e}");
            return Sprung::Spared(Spared::Unsure);
        }
    }
    let target = match visitor.proven {
        Some((source, identity)) => TrapTarget::Identity {
            source: source.to_string(),
            identity,
        },
        None => TrapTarget::Address(ip),
    };
    // A ban the fleet's store refuses is still held here.
    if let Err(e) = traps.ban(target, ban, now_ms).await {
        log::warn!("a trap ban is held on this instance only: {e}");
    }
    let until_ms = now_ms.saturating_add(u64::try_from(ban.as_millis()).unwrap_or(u64::MAX));
    Sprung::Caught(Trapped { until_ms })
}

/// Why `visitor` is spared whatever it read: a search engine's claim that held or may yet
/// hold, or a browser: a browser's User-Agent with no crawler's claim, or a headless browser's
/// (an `automation` claim in a browser's User-Agent, as `HeadlessChrome`), which fetches an
/// `<img>` pointing at the trap as any browser does.
fn spared_by_who(visitor: &Visitor<'_>) -> Option<Spared> {
    let browser = visitor.user_agent.is_some_and(claims_browser);
    let Some(claim) = visitor.bot else {
        return browser.then_some(Spared::Browser);
    };
    let checking =
        claim.claimed == Category::SearchEngine && claim.verification == Verification::Unfinished;
    if verified_search_engine(claim) || checking {
        return Some(Spared::SearchEngine);
    }
    let headless = claim.claimed == Category::Automation && browser;
    headless.then_some(Spared::Browser)
}

#[cfg(test)]
mod tests;
