//! What the site's robots.txt says of one request: whether it comes from a crawler at all (a
//! catalogue crawler's claim, or a group's token named as a whole word; never a plain
//! browser's User-Agent), the verdict of its group on the path, and the crawl delay it is held
//! to (a verified search engine only by a group naming it: Google ignores `Crawl-delay`).

use super::{Served, Verdict};
use crate::bots::score::claims_browser;
use crate::identity::{BotClaim, Category, RobotsFact, RobotsVerdict};
use std::sync::Arc;

/// What `served` says of a request with `user_agent`, claiming `bot`, for `path_and_query`;
/// `None` when it is not a crawler's.
pub fn judge(
    served: &Served,
    user_agent: Option<&[u8]>,
    bot: Option<&BotClaim>,
    path_and_query: &str,
) -> Option<RobotsFact> {
    let user_agent = user_agent.unwrap_or_default();
    let found = served.agents().find(user_agent);
    // A claim-less User-Agent naming no group is no crawler's: no need to ask whether it is
    // a browser's (most requests are browsers').
    if bot.is_none() && (found.is_none() || claims_browser(user_agent)) {
        return None;
    }
    let crawler: Arc<str> = match (bot, found) {
        (Some(claim), _) => claim.name.clone(),
        (None, Some(found)) => served.agents().tokens()[found].clone(),
        (None, None) => return None,
    };
    let obeyed = served.obeyed(found);
    let verdict = match obeyed.verdict(path_and_query) {
        Verdict::Allowed => RobotsVerdict::Allowed,
        Verdict::Disallowed => RobotsVerdict::Disallowed,
    };
    let held = found.is_some() || !bot.is_some_and(verified_search_engine);
    Some(RobotsFact {
        crawler,
        verdict,
        crawl_delay: obeyed.crawl_delay().filter(|_| held).map(|d| d.secs()),
    })
}

/// Whether `claim` is a search engine's, verified.
pub(super) fn verified_search_engine(claim: &BotClaim) -> bool {
    claim.claimed == Category::SearchEngine && claim.verified()
}
