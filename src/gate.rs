//! The limiting step of a request: [`Gate::plan`] finds the policies on its route and, for
//! each, the caller's identity and limits; [`Gate::check`] takes from those buckets in one
//! limiter call, counts the outcome and renders a refusal.
//!
//! Enforcing policies share one all-or-nothing take. Shadow policies are taken separately, so
//! that a shadow bucket running dry never spares the enforcing buckets their tokens.

use crate::identity::{Identity, IdentityChain, IdentityError, Request};
use crate::limiter::{Assessment, Limiter, LimiterError, MemoryStore, Take};
use crate::metrics::{Decision, Metrics, PolicyCounters, StoreMetrics};
use crate::policy::{Limits, Policy, RouteFacts};
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

/// One applicable policy's share of a request: whose bucket, and how big.
pub struct Planned<'g> {
    bound: &'g BoundPolicy,
    identity: Identity,
    limits: &'g Limits,
}

impl Planned<'_> {
    fn take(&self) -> Take<'_> {
        Take {
            policy_id: self.bound.id,
            policy_name: &self.bound.policy.name,
            identity: self.identity,
            spec: self.limits.spec(),
            cost: self.bound.policy.cost as f64,
        }
    }

    fn standing(&self, assessment: Assessment) -> Standing<'_> {
        Standing {
            name: &self.bound.policy.name,
            limits: self.limits,
            cost: self.bound.policy.cost,
            assessment,
        }
    }
}

/// The policies, the store they draw on and the counters they feed.
pub struct Gate {
    policies: Vec<BoundPolicy>,
    identity: IdentityChain,
    limiter: Arc<dyn Limiter>,
    fallback: Fallback,
    store_metrics: StoreMetrics,
    throttle_status: u16,
    last_error_log_s: AtomicU64,
}

impl Gate {
    /// A gate applying `policies` (to callers found by `identity` unless a policy has its own
    /// sources) with buckets in `limiter` (and `fallback` when it fails), refusing with
    /// `throttle_status`.
    pub fn new(
        policies: &[Policy],
        identity: IdentityChain,
        limiter: Arc<dyn Limiter>,
        fallback: Fallback,
        metrics: &Metrics,
        throttle_status: u16,
    ) -> Self {
        let policies = policies
            .iter()
            .map(|p| BoundPolicy {
                id: p.id(),
                policy: p.clone(),
                counters: metrics.policy(&p.name),
            })
            .collect();
        Self {
            policies,
            identity,
            limiter,
            fallback,
            store_metrics: metrics.store.clone(),
            throttle_status,
            last_error_log_s: AtomicU64::new(0),
        }
    }

    /// The policies on `route`, each with its caller and limits. Fails when a bearer token is
    /// presented that does not verify (and the chain rejects such tokens).
    pub fn plan<'g>(
        &'g self,
        req: &Request<'_>,
        route: &RouteFacts<'_>,
    ) -> Result<Vec<Planned<'g>>, IdentityError> {
        let mut caller = None;
        let mut planned = Vec::with_capacity(self.policies.len());
        for bound in self
            .policies
            .iter()
            .filter(|b| b.policy.route.matches(route))
        {
            let identity = match &bound.policy.sources {
                Some(chain) => chain.identify(req)?,
                None => match caller {
                    Some(identity) => identity,
                    None => *caller.insert(self.identity.identify(req)?),
                },
            };
            planned.push(Planned {
                bound,
                identity,
                limits: bound.policy.limits_for(req),
            });
        }
        Ok(planned)
    }

    /// Takes from the planned buckets and says what to do with the request.
    pub async fn check(&self, planned: &[Planned<'_>]) -> Verdict {
        let (shadow, enforcing): (Vec<&Planned<'_>>, Vec<&Planned<'_>>) =
            planned.iter().partition(|p| p.bound.policy.shadow);
        self.check_shadow(&shadow).await;
        if enforcing.is_empty() {
            return Verdict::Pass(None);
        }
        let takes: Vec<Take<'_>> = enforcing.iter().map(|p| p.take()).collect();
        let assessments = match self.limiter.acquire(&takes).await {
            Ok(assessments) => assessments,
            Err(e) => match self.on_store_error(&e, &enforcing, &takes) {
                Ok(assessments) => assessments,
                Err(verdict) => return verdict,
            },
        };
        let passed = assessments.iter().all(|a| a.allowed);
        let standings: Vec<Standing<'_>> = enforcing
            .iter()
            .zip(&assessments)
            .map(|(p, a)| {
                p.bound.counters.count(match (passed, a.allowed) {
                    (true, _) => Decision::Allowed,
                    (false, false) => Decision::Throttled,
                    (false, true) => Decision::ThrottledByOther,
                });
                p.standing(*a)
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
        enforcing: &[&Planned<'_>],
        takes: &[Take<'_>],
    ) -> Result<Vec<Assessment>, Verdict> {
        self.log_store_error(e);
        match &self.fallback {
            Fallback::Local(memory) => {
                self.store_metrics.fallbacks.inc();
                Ok(memory.acquire_now(takes))
            }
            Fallback::Allow => {
                enforcing
                    .iter()
                    .for_each(|p| p.bound.counters.count(Decision::Error));
                Err(Verdict::Pass(None))
            }
            Fallback::Deny => {
                enforcing
                    .iter()
                    .for_each(|p| p.bound.counters.count(Decision::Error));
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
    async fn check_shadow(&self, shadow: &[&Planned<'_>]) {
        for p in shadow {
            let decision = match self.limiter.acquire(&[p.take()]).await {
                Ok(a) if a.iter().all(|a| a.allowed) => Decision::Allowed,
                Ok(_) => Decision::ShadowThrottled,
                Err(_) => Decision::Error,
            };
            p.bound.counters.count(decision);
        }
    }
}
