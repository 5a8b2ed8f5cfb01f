//! Floodgate's own `robots-crawl-delay` policy: a crawler whose group of the site's robots.txt
//! asks a crawl delay of N seconds gets one request per N seconds (a bucket of one, refilled
//! at 1/N s), by the policy's callers (the crawler's operator when its claim holds, else its
//! address). The limits are the request's, so they reach the bucket the way an operator's
//! override does, under the policy's override key.

use crate::control::Applied;
use crate::identity::Request;
use crate::policy::{Limits, LimitsBy, Policy, Rate};
use std::sync::Arc;
use std::time::Duration;

/// Whether `policy` applies to `req` as far as its limits go: a crawl-delay policy only to a
/// request with a crawl delay.
pub(super) fn applies(policy: &Policy, req: &Request<'_>) -> bool {
    match policy.limit().map(|l| l.limits_by) {
        Some(LimitsBy::CrawlDelay) => delay_of(req).is_some(),
        _ => true,
    }
}

/// The limits the crawl delay of `req` asks (one request per delay), as an override the
/// bucket applies; none without a delay.
pub(super) fn crawl_delay(req: &Request<'_>) -> Option<Arc<Applied>> {
    let seconds = delay_of(req)?;
    let rate = Rate::new(1.0, Duration::from_secs(u64::from(seconds))).ok()?;
    let limits = Limits::new(1, rate).ok()?;
    Some(Arc::new(Applied {
        id: 0,
        limits,
        expires_at_ms: None,
    }))
}

/// The crawl delay, in whole seconds, robots.txt asks of `req`'s crawler.
fn delay_of(req: &Request<'_>) -> Option<u32> {
    req.traits()
        .robots
        .as_ref()
        .and_then(|fact| fact.crawl_delay)
        .filter(|&seconds| seconds > 0)
}
