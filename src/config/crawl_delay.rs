//! Floodgate's own `robots-crawl-delay` policy, added when `[robots]` is configured and its
//! robots.txt may ask a delay (the backend's file; a managed one with a `crawl_delay`): a crawler
//! whose group of the site's robots.txt asks `Crawl-delay: N` gets one request per N seconds,
//! by its operator when its claim was verified (the `bot` source), else by its address,
//! refused as any throttled request is (`[response]`'s status, `Retry-After`).

use super::check::Checker;
use super::error::ConfigError;
use super::policy_table::PolicyFile;
use crate::identity::{IdentityChain, SourceSpec};
use crate::limiter::PolicyKey;
use crate::policy::{
    Action, Conditions, Enforcement, Limit, Limits, LimitsBy, OverloadClass, Policy, Rate, Route,
};
use crate::robots::{RobotsSettings, Source};
use std::time::Duration;

/// The policy's name, in headers, logs and metric labels.
pub(crate) const CRAWL_DELAY_POLICY: &str = "robots-crawl-delay";

/// `policies` (read from `files`), with the crawl-delay policy last when `[robots]` is
/// configured; a policy of the config may not take its name.
pub(crate) fn with_crawl_delay(
    check: &Checker<'_>,
    mut policies: Vec<Policy>,
    files: &[PolicyFile],
    robots: Option<&RobotsSettings>,
    global: &IdentityChain,
    shadow: bool,
) -> Result<Vec<Policy>, ConfigError> {
    let Some(robots) = robots else {
        return Ok(policies);
    };
    if let Some(file) = files
        .iter()
        .find(|f| f.name.get_ref() == CRAWL_DELAY_POLICY)
    {
        let message = format!(
            "`policy.name`: `{CRAWL_DELAY_POLICY}` is Floodgate's own policy while [robots] is configured"
        );
        return Err(check.error(&file.name, message));
    }
    if may_ask_a_delay(robots) {
        policies.push(crawl_delay_policy(global, shadow));
    }
    Ok(policies)
}

/// Whether the site's robots.txt may ask a crawl delay: the backend's file may say anything; a
/// managed one only what its groups say (a policy that can never apply is not added, so no
/// request pays for looking at it).
fn may_ask_a_delay(robots: &RobotsSettings) -> bool {
    match robots.source {
        Source::Backend => true,
        Source::Managed => robots.groups.iter().any(|g| g.crawl_delay.is_some()),
    }
}

/// The crawl-delay policy, by the identity settings of `global`, enforcing unless `shadow`.
fn crawl_delay_policy(global: &IdentityChain, shadow: bool) -> Policy {
    let sources = ["bot", "ip"]
        .into_iter()
        .filter_map(|word| word.parse::<SourceSpec>().ok())
        .collect();
    let mut limit = Limit::of(placeholder());
    limit.sources = Some(IdentityChain {
        sources,
        ..global.clone()
    });
    limit.limits_by = LimitsBy::CrawlDelay;
    Policy {
        key: PolicyKey::new(CRAWL_DELAY_POLICY),
        enforcement: Enforcement::shadow_if(shadow),
        route: Route::default(),
        conditions: Conditions::default(),
        unless: None,
        action: Action::Limit(Box::new(limit)),
        overload: OverloadClass::default(),
    }
}

/// The limits listed for the policy (one a second): each request's own come from its crawl
/// delay.
fn placeholder() -> Limits {
    let one_a_second = Rate::new(1.0, Duration::from_secs(1)).expect("a positive rate");
    Limits::new(1, one_a_second).expect("a bucket of one at one a second")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_names_callers_by_operator_then_address() {
        let policy = crawl_delay_policy(&IdentityChain::of(Vec::new()), false);
        let limit = policy.limit().expect("a limit policy");
        let chain = limit.sources.as_ref().expect("its own sources");
        let words: Vec<String> = chain.sources.iter().map(|s| s.to_string()).collect();
        assert_eq!(words, ["bot", "ip"]);
        assert_eq!(limit.limits_by, LimitsBy::CrawlDelay);
        assert_eq!(&**policy.name(), CRAWL_DELAY_POLICY);
    }
}
