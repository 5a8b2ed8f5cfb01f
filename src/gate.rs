//! The limiting step of a request: its caller's buckets under every applicable policy are
//! taken from in one limiter call, the outcome is counted, and a refusal is rendered.
//!
//! Enforcing policies share one all-or-nothing take. Shadow policies are taken separately, so
//! that a shadow bucket running dry never spares the enforcing buckets their tokens.

use crate::identity::Identity;
use crate::limiter::{Limiter, Take};
use crate::metrics::{Decision, Metrics, PolicyCounters};
use crate::policy::Policy;
use crate::respond::{self, Standing};
use bytes::Bytes;
use pingora::http::ResponseHeader;
use std::sync::Arc;

/// What to do with a request.
pub enum Verdict {
    /// Forward it, adding these `RateLimit-Policy` and `RateLimit` values to the response.
    Pass(Option<RateLimitHeaders>),
    /// Answer it with this refusal.
    Refuse(Box<ResponseHeader>, Bytes),
}

/// The `RateLimit-Policy` and `RateLimit` values for an allowed response.
pub struct RateLimitHeaders {
    /// `RateLimit-Policy`.
    pub policy: String,
    /// `RateLimit`.
    pub ratelimit: String,
}

struct BoundPolicy {
    id: u64,
    policy: Policy,
    counters: PolicyCounters,
}

impl BoundPolicy {
    fn take(&self, identity: Identity) -> Take<'_> {
        Take {
            policy_id: self.id,
            policy_name: &self.policy.name,
            identity,
            spec: self.policy.spec(),
            cost: self.policy.cost as f64,
        }
    }
}

/// The policies, the store they draw on and the counters they feed.
pub struct Gate {
    enforcing: Vec<BoundPolicy>,
    shadow: Vec<BoundPolicy>,
    limiter: Arc<dyn Limiter>,
    throttle_status: u16,
}

impl Gate {
    /// A gate applying `policies` with buckets in `limiter`, refusing with `throttle_status`.
    pub fn new(
        policies: &[Policy],
        limiter: Arc<dyn Limiter>,
        metrics: &Metrics,
        throttle_status: u16,
    ) -> Self {
        let (shadow, enforcing) = policies
            .iter()
            .map(|p| BoundPolicy {
                id: p.id(),
                policy: p.clone(),
                counters: metrics.policy(&p.name),
            })
            .partition(|b| b.policy.shadow);
        Self {
            enforcing,
            shadow,
            limiter,
            throttle_status,
        }
    }

    /// Takes from `identity`'s buckets and says what to do with the request.
    pub async fn check(&self, identity: Identity) -> Verdict {
        self.check_shadow(identity).await;
        if self.enforcing.is_empty() {
            return Verdict::Pass(None);
        }
        let takes: Vec<Take<'_>> = self.enforcing.iter().map(|b| b.take(identity)).collect();
        let assessments = match self.limiter.acquire(&takes).await {
            Ok(assessments) => assessments,
            Err(e) => {
                log::warn!("limiter failed, letting the request through: {e}");
                self.enforcing
                    .iter()
                    .for_each(|b| b.counters.count(Decision::Error));
                return Verdict::Pass(None);
            }
        };
        let passed = assessments.iter().all(|a| a.allowed);
        let standings: Vec<Standing<'_>> = self
            .enforcing
            .iter()
            .zip(&assessments)
            .map(|(b, a)| {
                b.counters.count(match (passed, a.allowed) {
                    (true, _) => Decision::Allowed,
                    (false, false) => Decision::Throttled,
                    (false, true) => Decision::ThrottledByOther,
                });
                Standing {
                    policy: &b.policy,
                    assessment: *a,
                }
            })
            .collect();
        let Some(standing) = respond::most_restrictive(&standings) else {
            return Verdict::Pass(None);
        };
        if passed {
            return Verdict::Pass(Some(RateLimitHeaders {
                policy: standing.policy_header(),
                ratelimit: standing.ratelimit_header(),
            }));
        }
        match respond::throttled(self.throttle_status, &standing) {
            Ok((header, body)) => Verdict::Refuse(Box::new(header), body),
            Err(e) => {
                log::error!("could not build a refusal, letting the request through: {e}");
                Verdict::Pass(None)
            }
        }
    }

    /// Takes from each shadow bucket on its own and counts what it would have throttled.
    async fn check_shadow(&self, identity: Identity) {
        for b in &self.shadow {
            let decision = match self.limiter.acquire(&[b.take(identity)]).await {
                Ok(a) if a.iter().all(|a| a.allowed) => Decision::Allowed,
                Ok(_) => Decision::ShadowThrottled,
                Err(_) => Decision::Error,
            };
            b.counters.count(decision);
        }
    }
}
