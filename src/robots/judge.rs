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
    if bot.is_none() && claims_browser(user_agent) {
        return None;
    }
    let token = served.agents().token(user_agent);
    let crawler: Arc<str> = match (bot, token) {
        (Some(claim), _) => claim.name.clone(),
        (None, Some(token)) => Arc::from(token),
        (None, None) => return None,
    };
    let verdict = match served.txt().verdict(token, path_and_query) {
        Verdict::Allowed => RobotsVerdict::Allowed,
        Verdict::Disallowed => RobotsVerdict::Disallowed,
    };
    let delay = served.txt().crawl_delay(token);
    let held = token.is_some() || !bot.is_some_and(verified_search_engine);
    Some(RobotsFact {
        crawler,
        verdict,
        crawl_delay: delay.filter(|_| held).map(|d| d.secs()),
    })
}

/// Whether `claim` is a search engine's, verified.
pub(super) fn verified_search_engine(claim: &BotClaim) -> bool {
    claim.claimed == Category::SearchEngine && claim.verified()
}
