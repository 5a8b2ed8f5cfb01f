//! The limiting step of a request: its caller's buckets under every applicable policy are
//! taken from in one limiter call, the outcome is counted, and a refusal is rendered.
//!
//! Enforcing policies share one all-or-nothing take. Shadow policies are taken separately, so
//! that a shadow bucket running dry never spares the enforcing buckets their tokens.

use crate::identity::Identity;
use crate::limiter::{Assessment, Limiter, LimiterError, MemoryStore, Take};
use crate::metrics::{Decision, Metrics, PolicyCounters, StoreMetrics};
use crate::policy::Policy;
use crate::respond::{self, Standing};
use bytes::Bytes;
use pingora::http::ResponseHeader;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// What to do when the store cannot decide (`store.on_error`).
pub enum Fallback {
    /// Let the request through, counted as `error`.
    Allow,
    /// Refuse it with 503.
    Deny,
    /// Decide it with these in-memory buckets of the same policies.
    Local(MemoryStore),
}

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
    fallback: Fallback,
    store_metrics: StoreMetrics,
    throttle_status: u16,
    last_error_log_s: AtomicU64,
}

impl Gate {
    /// A gate applying `policies` with buckets in `limiter` (and `fallback` when it fails),
    /// refusing with `throttle_status`.
    pub fn new(
        policies: &[Policy],
        limiter: Arc<dyn Limiter>,
        fallback: Fallback,
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
            fallback,
            store_metrics: metrics.store.clone(),
            throttle_status,
            last_error_log_s: AtomicU64::new(0),
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
            Err(e) => match self.on_store_error(&e, &takes) {
                Ok(assessments) => assessments,
                Err(verdict) => return verdict,
            },
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

    /// Applies `store.on_error`: local buckets decide, or the request passes or is refused
    /// without a decision.
    fn on_store_error(
        &self,
        e: &LimiterError,
        takes: &[Take<'_>],
    ) -> Result<Vec<Assessment>, Verdict> {
        self.log_store_error(e);
        match &self.fallback {
            Fallback::Local(memory) => {
                self.store_metrics.fallbacks.inc();
                Ok(memory.acquire_now(takes))
            }
            Fallback::Allow => {
                self.enforcing
                    .iter()
                    .for_each(|b| b.counters.count(Decision::Error));
                Err(Verdict::Pass(None))
            }
            Fallback::Deny => {
                self.enforcing
                    .iter()
                    .for_each(|b| b.counters.count(Decision::Error));
                Err(match respond::store_unavailable() {
                    Ok((header, body)) => Verdict::Refuse(Box::new(header), body),
                    Err(_) => Verdict::Pass(None),
                })
            }
        }
    }

    /// Logs a store error at most once a second: an outage must not flood the log.
    fn log_store_error(&self, e: &LimiterError) {
        let now_s = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if self.last_error_log_s.swap(now_s, Ordering::Relaxed) != now_s {
            log::warn!("store cannot decide ({e}); applying on_error");
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
