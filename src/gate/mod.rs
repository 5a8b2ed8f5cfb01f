//! The gate: what happens to a request, decided without HTTP. [`Gate::decide`], the one entry
//! of the HTTP front doors, checks the access lists, finds the policies on the request's route
//! with each one's caller, limits and cost (`bound`, `cost`), takes concurrency slots
//! (`concurrency`), sends their buckets through the [`Pipeline`] every front door shares (one
//! store call, `on_error`, the judgement: `pipeline`, `store_call`, `judge`, `verdict`), holds
//! a request that prepaid (`hold`) and returns a [`Decision`]: a typed [`Outcome`], carrying
//! the [`Aftercare`] the response phases owe (settlements, slots), the request's class, and
//! the [`Trail`] of the policies checked. Its [`reply`] is the same at every front door
//! ([`Decider`]).
//!
//! Enforcing policies share one all-or-nothing take; shadow policies ride in the same call but
//! are decided on their own, so a shadow bucket running dry never spares the enforcing buckets
//! their tokens.

mod aftercare;
mod bound;
mod challenges;
mod check;
mod classify;
mod concurrency;
mod cost;
mod credentials;
mod decider;
mod decision;
#[cfg(test)]
mod expiry_tests;
mod hold;
mod http_facts;
mod judge;
mod outcome;
mod paced;
mod pipeline;
mod reads;
pub mod reply;
mod ruling;
mod standing;
mod store_call;
#[cfg(test)]
mod tests;
mod trail;
mod verdict;

pub use aftercare::Aftercare;
pub use bound::Planned;
pub use challenges::{asked, challenges, CROWDSEC, CROWDSEC_ID};
pub use cost::BadCost;
pub use decider::{Callers, Decider, InForce};
pub use decision::Decision;
pub use http_facts::{HttpFacts, Seen};
pub use judge::Draw;
pub use outcome::{Busy, Challenged, Decided, Outcome, OutcomeKind, Ticket, Unpayable};
pub use pipeline::{Drawn, Judged, Pipeline};
pub use standing::{most_restrictive, HeaderQuota, LevelId, LimitsOf, Standing};
pub use store_call::{timing_store, StoreTimes};
pub use trail::{Checked, Trail};

use crate::clock::Clock;
use crate::control::{BanHit, Block, Control, ControlView};
use crate::identity::{Access, AccessRules, IdentityChain, IdentityError, IdentityKey, Request};
use crate::limiter::{Fallback, InFlight, Limiter};
use crate::policy::{Class, Limits, LimitsBy, Policy, RouteFacts, RouteIndex, UserAgentIndex};
use crate::telemetry::{AccessList, ByLabel, Metrics};
use bound::BoundPolicy;
use prometheus::{IntCounter, IntCounterVec};
use smallvec::SmallVec;
use std::sync::Arc;

/// Most requests meet few policies: up to this many are planned without allocating.
type Few<T> = SmallVec<[T; 4]>;

/// The series the gate feeds, resolved once.
struct GateCounters {
    access: ByLabel<AccessList>,
    banned: IntCounter,
    blocked: IntCounterVec,
    invalid_tokens: IntCounter,
}

/// The lists, the policies, the store they draw on and what decides when it cannot.
pub struct Gate {
    access: AccessRules,
    policies: Vec<BoundPolicy>,
    /// The policies' routes, for finding those a request is on.
    routes: RouteIndex,
    /// The policies' User-Agent rules, matched at once.
    user_agents: UserAgentIndex,
    identity: IdentityChain,
    key: IdentityKey,
    control: Arc<Control>,
    /// The one store call of each decision, and `on_error`: the pipeline every front door's
    /// buckets go through.
    pipeline: Pipeline,
    in_flight: Arc<dyn InFlight>,
    counters: GateCounters,
    needs_host: bool,
    /// Whether any policy reads the bot score (`min_score`, `max_score`).
    needs_score: bool,
    /// Whether any policy names a priority or `on_overload` (else every class is the default).
    classifies: bool,
    /// What a CrowdSec `captcha` decision asks.
    captcha: challenges::Captcha,
    /// What bans, overrides and blocklist entries are in force by.
    clock: Clock,
}

/// What the gate's decisions are made by: the bucket store, the concurrency slots, and what
/// decides when they fail.
pub struct Deciders {
    /// Where buckets live.
    pub limiter: Arc<dyn Limiter>,
    /// Where concurrency slots live.
    pub in_flight: Arc<dyn InFlight>,
    /// What decides when the store cannot.
    pub fallback: Fallback,
    /// The operators' bans and overrides.
    pub control: Arc<Control>,
    /// What bans, overrides and blocklist entries are in force by (the system's, or a
    /// test's).
    pub clock: Clock,
}

impl Gate {
    /// A gate applying `access` lists, then `policies` (to callers found by `identity` unless
    /// a policy has its own sources, their digests made with `key`), decided by `deciders`.
    pub fn new(
        access: AccessRules,
        policies: &[Policy],
        identity: IdentityChain,
        key: IdentityKey,
        deciders: Deciders,
        metrics: &Metrics,
    ) -> Self {
        let Deciders {
            limiter,
            in_flight,
            fallback,
            control,
            clock,
        } = deciders;
        let needs_host = identity.uses_host() || policies.iter().any(reads::host);
        let user_agents = UserAgentIndex::new(policies.iter().map(|p| &p.conditions));
        Self {
            access,
            routes: RouteIndex::filing_elsewhere(
                policies.iter().map(|p| p.route.clone()).collect(),
                |i| user_agents.files(i),
            ),
            user_agents,
            policies: policies
                .iter()
                .enumerate()
                .map(|(i, p)| BoundPolicy::new(i, p, metrics.policy(p.name())))
                .collect(),
            identity,
            key,
            control,
            pipeline: Pipeline::new(limiter, fallback, metrics),
            in_flight,
            counters: GateCounters {
                access: metrics.access.clone(),
                banned: metrics.banned.clone(),
                blocked: metrics.blocked.clone(),
                invalid_tokens: metrics.invalid_tokens.clone(),
            },
            needs_host,
            needs_score: policies.iter().any(reads::score),
            classifies: policies.iter().any(|p| !p.overload.is_empty()),
            captcha: challenges::Captcha::default(),
            clock,
        }
    }

    /// Whether any route or source looks at the host (so the proxy need not work it out
    /// otherwise).
    pub fn needs_host(&self) -> bool {
        self.needs_host
    }

    /// Whether any policy reads the bot score (so it is worked out for every request).
    pub fn needs_score(&self) -> bool {
        self.needs_score
    }

    /// What bans, overrides, blocklist entries and quota periods are in force by.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The policies, in config order.
    pub fn policies(&self) -> impl Iterator<Item = &Policy> {
        self.policies.iter().map(|b| &b.policy)
    }

    /// The chain that identifies `policy`'s callers: its own, or `[identity] sources`.
    pub fn chain_of<'a>(&'a self, policy: &'a Policy) -> &'a IdentityChain {
        let own = policy.limit().and_then(|limit| limit.sources.as_ref());
        own.unwrap_or(&self.identity)
    }

    /// The global chain (`[identity] sources`).
    pub fn identity(&self) -> &IdentityChain {
        &self.identity
    }

    /// The key of identity digests.
    pub fn digest_key(&self) -> &IdentityKey {
        &self.key
    }

    /// Every level of every policy: its id, the policy's name, the limits and its
    /// `max_in_flight`.
    pub fn levels(&self) -> impl Iterator<Item = (LevelId, &Arc<str>, &Limits, Option<u32>)> {
        self.policies.iter().flat_map(|b| {
            let name = b.policy.name();
            let in_flight = b.policy.limit().and_then(|l| l.rules.max_in_flight);
            b.levels()
                .map(move |(id, limits)| (id, name, limits, in_flight))
        })
    }

    /// What happens to `req`, whose route facts are `route`, its class and why: the one entry
    /// of every HTTP front door.
    pub async fn decide<'g>(&'g self, req: &Request<'_>, route: &RouteFacts<'_>) -> Decision<'g> {
        let mut class = Class::default();
        let mut trail = Trail::default();
        let outcome = self.outcome(req, route, &mut class, &mut trail).await;
        Decision {
            outcome,
            class,
            trail,
        }
    }

    /// What happens to `req`, noting its class in `class` once its policies are known and
    /// each policy met on `trail`.
    async fn outcome<'g>(
        &'g self,
        req: &Request<'_>,
        route: &RouteFacts<'_>,
        class: &mut Class,
        trail: &mut Trail<'g>,
    ) -> Outcome<'g> {
        // One read of the operators' bans and overrides for the whole decision; the clock is
        // read only while there are any.
        if let Some(trapped) = req.trapped() {
            return Outcome::Trapped(trapped);
        }
        let control = self.control.view();
        let now = (!control.is_empty()).then(|| self.clock.now_ms());
        if let Some(ban) = now.and_then(|now| self.ban_for(&control, req, now)) {
            self.counters.banned.inc();
            return Outcome::Banned(ban);
        }
        if let Some(outcome) = self.blocked(req).and_then(|b| self.blocked_outcome(req, b)) {
            return outcome;
        }
        if let Some(outcome) = credentials::refusal(req) {
            return outcome;
        }
        match self.access.check(req) {
            Access::Denied => return self.listed(AccessList::Deny),
            Access::Allowed => {
                *class = self.class_of(&self.matching(req, route));
                return self.listed(AccessList::Allow);
            }
            Access::Limited => {}
        }
        let matched = self.matching(req, route);
        *class = self.class_of(&matched);
        let awaiting = match ruling::rule(&matched, req, trail) {
            ruling::Ruling::Decided(outcome) => return outcome,
            ruling::Ruling::Limits(awaiting) => awaiting,
        };
        match self.plan(req, &matched, &control, now) {
            Ok(planned) => {
                let outcome = self.check(&planned, trail).await;
                self.challenge_after(req, outcome, awaiting, trail)
            }
            Err(PlanError::Identity(e)) => {
                self.counters.invalid_tokens.inc();
                log::debug!("refusing a request: {e}");
                Outcome::InvalidToken
            }
            Err(PlanError::Cost(bad)) => Outcome::BadCost(bad),
        }
    }

    /// The operators' ban refusing `req` at `now` (Unix ms), if any (bans beat the
    /// allow-list).
    fn ban_for(&self, control: &ControlView, req: &Request<'_>, now: u64) -> Option<BanHit> {
        match control.has_bans() {
            true => control.ban_for(req, &self.identity.ip, &self.key, now),
            false => None,
        }
    }

    /// The blocklist's entry refusing `req`'s client address, if any (also before the
    /// allow-list: it is a ban from another source).
    fn blocked(&self, req: &Request<'_>) -> Option<Block> {
        let list = self.control.blocklist();
        if list.is_empty() {
            return None;
        }
        let block = list.find(req.client_ip?, self.clock.now_ms())?.clone();
        let remedy = block.remedy.word();
        self.counters.blocked.with_label_values(&[remedy]).inc();
        Some(block)
    }

    fn listed<'g>(&self, list: AccessList) -> Outcome<'g> {
        self.counters.access.inc(list);
        Outcome::Listed(list)
    }

    /// The policies whose route `route` is on (found by the index), whose conditions `req`
    /// shows and whose `unless` it does not (checked on those candidates only), in config order.
    fn matching<'g>(&'g self, req: &Request<'_>, route: &RouteFacts<'_>) -> Few<&'g BoundPolicy> {
        let user_agent = self.user_agents.seen(req.headers);
        self.routes
            .matching_with(route, user_agent.candidates())
            .into_iter()
            .filter(|&i| {
                let policy = &self.policies[i].policy;
                policy
                    .conditions
                    .hold_given(req, |ua| user_agent.matches(i, ua))
                    && !policy.exempts(route, req)
                    && paced::applies(policy, req)
            })
            .map(|i| &self.policies[i])
            .collect()
    }

    /// The `limit` policies of `matched`, each with its caller, limits (an override of `control` in
    /// force at `now`, Unix ms, when there is one) and cost. Fails when a bearer token is
    /// presented that does not verify (and the chain rejects such tokens), or when a cost
    /// header is not a cost.
    fn plan<'g>(
        &'g self,
        req: &Request<'_>,
        matched: &[&'g BoundPolicy],
        control: &ControlView,
        now: Option<u64>,
    ) -> Result<Few<Planned<'g>>, PlanError> {
        let mut caller = None;
        let mut planned = Few::new();
        let limits = matched.iter().filter_map(|&b| Some((b, b.policy.limit()?)));
        for (bound, limit) in limits {
            let found = match &limit.sources {
                Some(chain) if limit.limits_by == LimitsBy::CrawlDelay => {
                    paced::caller(chain, req, &self.key)?
                }
                Some(chain) => chain.identified(req, &self.key)?,
                None => match caller {
                    Some(found) => found,
                    None => *caller.insert(self.identity.identified(req, &self.key)?),
                },
            };
            let overridden = match limit.limits_by {
                LimitsBy::CrawlDelay => paced::crawl_delay(req),
                LimitsBy::Policy => now.and_then(|now| {
                    control
                        .override_for(bound.policy.key.id(), found.identity, now)
                        .cloned()
                }),
            };
            planned.push(
                bound
                    .plan(limit, req, found, overridden)
                    .map_err(PlanError::Cost)?,
            );
        }
        Ok(planned)
    }
}

/// Why a request could not be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A bearer token was presented that does not verify.
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// A cost header is not a whole number from 1 to the capacity.
    #[error("`{}` is not a cost from 1 to {}", .0.header, .0.capacity)]
    Cost(BadCost),
}
