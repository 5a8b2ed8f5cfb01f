//! The limiting step of a request: [`Gate::plan`] finds the policies on its route and, for
//! each, the caller's identity and limits; [`Gate::check`] takes from those buckets in one
//! limiter call, counts the outcome and renders a refusal.
//!
//! Enforcing policies share one all-or-nothing take. Shadow policies are taken separately, so
//! that a shadow bucket running dry never spares the enforcing buckets their tokens.

mod bound;
mod fallback;
mod verdict;

pub use bound::Planned;
pub use fallback::Fallback;
pub use verdict::{Action, RateLimitHeaders, Verdict};

use crate::identity::{IdentityChain, IdentityError, Request};
use crate::limiter::{Limiter, Take};
use crate::metrics::{Decision, Metrics, StoreMetrics};
use crate::policy::{Policy, RouteFacts};
use crate::respond::{self, Standing};
use bound::BoundPolicy;
use smallvec::SmallVec;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// Most requests meet few policies: up to this many are planned without allocating.
type Few<T> = SmallVec<[T; 4]>;

/// The policies, the store they draw on and the counters they feed.
pub struct Gate {
    policies: Vec<BoundPolicy>,
    identity: IdentityChain,
    limiter: Arc<dyn Limiter>,
    fallback: Fallback,
    store_metrics: StoreMetrics,
    throttle_status: u16,
    last_error_log_s: AtomicU64,
    needs_host: bool,
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
        Self {
            policies: policies
                .iter()
                .map(|p| BoundPolicy::new(p, metrics.policy(&p.name)))
                .collect(),
            identity,
            limiter,
            fallback,
            store_metrics: metrics.store.clone(),
            throttle_status,
            last_error_log_s: AtomicU64::new(0),
            needs_host: policies.iter().any(|p| p.route.host.is_some()),
        }
    }

    /// Whether any route looks at the host (so the proxy need not work it out otherwise).
    pub fn needs_host(&self) -> bool {
        self.needs_host
    }

    /// The policies on `route`, each with its caller and limits. Fails when a bearer token is
    /// presented that does not verify (and the chain rejects such tokens).
    pub fn plan<'g>(
        &'g self,
        req: &Request<'_>,
        route: &RouteFacts<'_>,
    ) -> Result<Few<Planned<'g>>, IdentityError> {
        let mut caller = None;
        let mut planned = Few::new();
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
                level: bound.level_for(req),
            });
        }
        Ok(planned)
    }

    /// Takes from the planned buckets and says what to do with the request.
    pub async fn check(&self, planned: &[Planned<'_>]) -> Verdict {
        let (shadow, enforcing): (Few<&Planned<'_>>, Few<&Planned<'_>>) =
            planned.iter().partition(|p| p.is_shadow());
        self.check_shadow(&shadow).await;
        if enforcing.is_empty() {
            return Verdict::pass("unlimited");
        }
        let takes: Few<Take<'_>> = enforcing.iter().map(|p| p.take()).collect();
        let assessments = match self.limiter.acquire(&takes).await {
            Ok(assessments) => assessments,
            Err(e) => match self.on_store_error(&e, &enforcing, &takes) {
                Ok(assessments) => assessments,
                Err(verdict) => return *verdict,
            },
        };
        let passed = assessments.iter().all(|a| a.allowed);
        let standings: Few<Standing<'_>> = enforcing
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
        let Some(index) = respond::most_restrictive(&standings) else {
            return Verdict::pass("unlimited");
        };
        let (standing, name) = (&standings[index], &enforcing[index].bound.policy.name);
        let identity = enforcing[index].identity();
        if passed {
            let headers = RateLimitHeaders {
                policy: enforcing[index].level.policy_header.clone(),
                ratelimit: standing.ratelimit_value(),
            };
            let pass = Verdict {
                action: Action::Pass(Some(headers)),
                decision: "allowed",
                policy: None,
                identity: None,
            };
            return pass.by(name, identity);
        }
        Verdict::refuse(
            respond::throttled(self.throttle_status, standing),
            "throttled",
        )
        .by(name, identity)
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
