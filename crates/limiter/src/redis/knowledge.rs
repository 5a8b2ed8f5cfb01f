//! What this instance knows from Redis's answers, on time or late: refusals still standing (the
//! deny cache) and each caller's share of what was left (the local fallback's mirror).

use super::deny_cache::{DenyCache, Lookup, Ticket};
use crate::identity::Identity;
use crate::{Assessment, BucketKey, BucketSpec, LocalShare, Mode, PolicyKey, Take, Terms};
use smallvec::SmallVec;
use std::sync::Arc;

/// Everything Redis's answers teach this instance.
pub(super) struct Knowledge {
    deny_cache: Option<DenyCache>,
    mirror: Option<Arc<LocalShare>>,
}

impl Knowledge {
    pub(super) fn new(deny_cache: Option<DenyCache>, mirror: Option<Arc<LocalShare>>) -> Self {
        Self { deny_cache, mirror }
    }

    /// What the deny cache says of `takes` at `now_us`.
    pub(super) fn lookup(&self, takes: &[Take<'_>], now_us: u64) -> Lookup {
        match &self.deny_cache {
            Some(cache) => cache.lookup(takes, now_us),
            None => Lookup::Unknown,
        }
    }

    /// Gives back the turn `ticket` of a request that asked about `takes`' lapsed refusal.
    pub(super) fn release(&self, takes: &[Take<'_>], ticket: Ticket) {
        if let Some(cache) = &self.deny_cache {
            cache.release(takes, ticket);
        }
    }

    /// Forgets the refusals of `identity` (its buckets were reset).
    pub(super) fn forget(&self, identity: &Identity) {
        if let Some(cache) = &self.deny_cache {
            cache.forget(identity);
        }
    }

    /// Learns Redis's `answers` for `takes`, asked at `asked_at` on the store's clock.
    fn learn(&self, takes: &[Take<'_>], answers: &[Assessment], asked_at: u64) {
        // A lease refused is no refusal of the caller: it asks Redis as before.
        let lease = takes.iter().any(|t| t.mode == Mode::Lease);
        if let Some(cache) = self.deny_cache.as_ref().filter(|_| !lease) {
            if answers.iter().any(|a| !a.is_allowed()) {
                cache.remember(takes, answers, asked_at);
            } else {
                cache.allowed(takes, answers);
            }
            // A refund gives tokens back: the caller's refusals may no longer hold.
            for refund in takes.iter().filter(|t| t.mode.settles() && t.cost < 0.0) {
                cache.forget(&refund.key.identity);
            }
        }
        if let Some(mirror) = &self.mirror {
            mirror.mirror(takes, answers);
        }
    }

    /// Learns Redis's `answers` for takes carried past their request.
    pub(super) fn learn_owned(&self, owned: &[OwnedTake], answers: &[Assessment], asked_at: u64) {
        let takes: SmallVec<[Take<'_>; 4]> = owned.iter().map(OwnedTake::take).collect();
        self.learn(&takes, answers, asked_at);
    }
}

/// A take that outlives the request it came from (queued for a call, or learned late).
pub(super) struct OwnedTake {
    policy: PolicyKey,
    identity: Identity,
    spec: BucketSpec,
    cost: f64,
    mode: Mode,
    terms: Terms,
}

impl From<&Take<'_>> for OwnedTake {
    fn from(take: &Take<'_>) -> Self {
        Self {
            policy: take.key.policy.clone(),
            identity: take.key.identity,
            spec: take.spec,
            cost: take.cost,
            mode: take.mode,
            terms: take.terms,
        }
    }
}

impl OwnedTake {
    /// The caller's digest in hex: the hash tag of its keys.
    pub(super) fn identity_hex(&self) -> String {
        self.identity.hex()
    }

    /// The take, borrowing this.
    pub(super) fn take(&self) -> Take<'_> {
        Take {
            key: BucketKey {
                policy: &self.policy,
                identity: self.identity,
            },
            spec: self.spec,
            cost: self.cost,
            mode: self.mode,
            terms: self.terms,
        }
    }
}
