//! Floodgate's own `robots-crawl-delay` policy: a crawler whose group of the site's robots.txt
//! asks a crawl delay of N seconds gets one request per N seconds (a bucket of one, refilled
//! at 1/N s), by the policy's callers (the crawler's operator when its claim was verified, else
//! its address). The limits are the request's, so they reach the bucket the way an operator's
//! override does, under the policy's override key.

use crate::control::Applied;
use crate::identity::{
    Identified, IdentityChain, IdentityError, IdentityKey, Request, SenderSource, Source,
};
use crate::policy::{Limits, LimitsBy, Policy, Rate, Size};
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
        size: Size::Bucket(Arc::new(limits)),
        expires_at_ms: None,
    }))
}

/// The caller whose bucket the crawl delay of `req` is counted in, by the policy's `chain`:
/// the crawler's operator (the `bot` source) only when its claim was verified, else the next
/// source (its address). A claim nothing checks (curl's, or a crawler that publishes no ranges)
/// is anyone's to make: one bucket for all who make it would let an impostor spend the
/// crawler's delay, and under `*` hold every curl in the world to one request per delay.
pub(super) fn caller<'c>(
    chain: &'c IdentityChain,
    req: &Request<'_>,
    key: &IdentityKey,
) -> Result<Identified<'c>, IdentityError> {
    const BOT: Source = Source::Sender(SenderSource::Bot);
    let verified = req
        .traits()
        .bot
        .as_ref()
        .is_some_and(|claim| claim.verified());
    chain.identified_among(req, key, |spec| verified || !spec.parts().contains(&BOT))
}

/// The crawl delay, in whole seconds, robots.txt asks of `req`'s crawler.
fn delay_of(req: &Request<'_>) -> Option<u32> {
    req.traits()
        .robots
        .as_ref()
        .and_then(|fact| fact.crawl_delay)
        .filter(|&seconds| seconds > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::{BotClaim, Category, Identity, Proof, SourceSpec, Traits, Verification};
    use http::HeaderMap;

    fn claim(claimed: Category, verification: Verification) -> Traits {
        Traits {
            bot: Some(BotClaim {
                name: "Crawler".into(),
                operator: "Operator".into(),
                claimed,
                verification,
            }),
            ..Traits::default()
        }
    }

    /// The caller of a request from `ip` with `traits`, by the policy's chain `bot` → `ip`.
    fn caller_of(traits: &Traits, ip: &str) -> Identity {
        let specs = ["bot", "ip"].map(|word| word.parse::<SourceSpec>().unwrap());
        let chain = IdentityChain::of(specs.to_vec());
        let headers = HeaderMap::new();
        let req = Request::new(&headers, None, ip.parse().ok(), None).with_traits(traits);
        let key = IdentityKey::from_bytes([5; 32]);
        caller(&chain, &req, &key).unwrap().identity
    }

    #[test]
    fn a_verified_crawler_is_paced_by_operator_and_any_other_claim_by_address() {
        let verified = claim(
            Category::SearchEngine,
            Verification::Verified(Proof::ReverseDns),
        );
        assert_eq!(
            caller_of(&verified, "192.0.2.1"),
            caller_of(&verified, "192.0.2.2")
        );
        // Unchecked (curl's: nothing to check it by) names the operator for `bot` elsewhere,
        // but anyone can make it: its delay is its address's.
        for verification in [
            Verification::Unchecked,
            Verification::Unfinished,
            Verification::Failed,
        ] {
            let unverified = claim(Category::Automation, verification);
            assert_ne!(
                caller_of(&unverified, "192.0.2.1"),
                caller_of(&unverified, "192.0.2.2"),
                "{verification:?}"
            );
        }
    }
}
