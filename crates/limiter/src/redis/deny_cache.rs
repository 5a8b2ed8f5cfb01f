//! The deny cache: when the store says an identity's request cannot pass before T, refuse
//! that identity's requests under the same policies locally until T, without asking again.
//!
//! Nothing but the store adds tokens, so a refusal the store computed stays true until its
//! retry-after has passed: answering locally until then refuses nothing the store would have
//! allowed. A refund (a settlement that gives tokens back) and an operator's reset are the
//! exceptions: when this instance learns of one (a reset reaches every instance through the
//! control ledger), the caller's refusals are forgotten. A refund settled by another instance
//! is not learnt here, so no refusal is reused longer than a second. Memory is bounded: expired
//! refusals are swept, and a full cache stores no more (it is only a shortcut).
//!
//! When a refusal lapses under a flood, one request at a time asks the store (it holds the
//! refusal's [`Ticket`]) and the caller's other requests are refused at once from the lapsed
//! refusal instead of waiting for that call: about one token can have accrued since, and the
//! asking request is there to take it. What the call brings back decides what follows: a
//! refusal stands in the cache again; an allowance that left room for another take at the same
//! cost forgets the refusal (the caller's requests ask the store freely, concurrently and
//! exactly); one that left none keeps the refusal lapsed, so the next request asks alone. A
//! caller is so asked about at most once per round trip while its bucket is empty, and no
//! token is lost: a bucket below capacity keeps what it gains until someone asks.

use crate::identity::Identity;
use crate::{Allowed, Assessment, Assessments, Penalty, Refused, Take};
use parking_lot::Mutex;
use smallvec::SmallVec;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

const SHARDS: usize = 16;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct DenyKey {
    identity: Identity,
    policies: u64,
}

impl DenyKey {
    /// The key of a call, if its refusal may be reused: the exact same caller under the same
    /// policies at the same costs and overdrafts (a cost from a header may differ from one
    /// request to the next), all enforcing (a shadow bucket must still be asked on every
    /// request).
    fn of(takes: &[Take<'_>]) -> Option<Self> {
        let first = takes.first()?;
        let policies = takes.iter().fold(0u64, |acc, t| {
            let terms = t.cost.to_bits() ^ t.terms.overdraft.to_bits().rotate_left(29);
            acc.rotate_left(17) ^ t.key.policy.id() ^ terms.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        });
        takes
            .iter()
            .all(|t| t.key.identity == first.key.identity && t.enforces())
            .then_some(DenyKey {
                identity: first.key.identity,
                policies,
            })
    }
}

struct Denial {
    refused_at_us: u64,
    until_us: u64,
    assessments: Assessments,
    /// The ticket of the request asking the store since the refusal lapsed (0: none is).
    asking: u64,
}

/// How long after a refusal lapses it still has the caller's requests ask one at a time.
const LAPSED_FOR_US: u64 = 1_000_000;

/// The longest a refusal is answered locally, whatever its wait (a quota refused until
/// midnight, a block of days): a refund settled by another instance reaches this one's callers
/// within it, for the price of one store call a second per refused caller.
const REUSED_FOR_US: u64 = 1_000_000;

/// The turn of the one request asking the store about a lapsed refusal; given back with
/// [`DenyCache::release`] when its call ends, however it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

/// What the cache says of a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// Refused until its retry-after: these are the store's answers, waits brought up to date.
    Refused(Assessments),
    /// Refused recently, but the refusal has lapsed and no request of the caller is asking:
    /// this one asks the store, holding the ticket until its call ends.
    Ask(Ticket),
    /// The refusal has lapsed and another request of the caller is asking the store: refused
    /// at once from the lapsed refusal (its wait at least 1 µs, a block that ended gone).
    Behind(Assessments),
    /// Nothing known.
    Unknown,
}

/// One caller's refusals, by policy set (usually one).
type Denials = SmallVec<[(u64, Denial); 1]>;

/// Recent refusals, keyed by identity and policy set.
pub struct DenyCache {
    shards: Box<[Mutex<HashMap<Identity, Denials>>]>,
    per_shard_cap: usize,
    tickets: AtomicU64,
}

impl DenyCache {
    /// A cache of at most about `max_entries` refusals.
    pub fn new(max_entries: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            per_shard_cap: max_entries.div_ceil(SHARDS).max(1),
            tickets: AtomicU64::new(1),
        }
    }

    fn shard(&self, identity: &Identity) -> &Mutex<HashMap<Identity, Denials>> {
        &self.shards[identity.prefix_u64() as usize % SHARDS]
    }

    /// What is known of these takes at `now_us`: a refusal still standing (its waits brought
    /// up to date), one that lapsed (this request asks, or another already does), or nothing.
    pub fn lookup(&self, takes: &[Take<'_>], now_us: u64) -> Lookup {
        let Some(key) = DenyKey::of(takes) else {
            return Lookup::Unknown;
        };
        let mut shard = self.shard(&key.identity).lock();
        let found = shard
            .get_mut(&key.identity)
            .and_then(|d| d.iter_mut().find(|(policies, _)| *policies == key.policies));
        let Some((_, denial)) = found else {
            return Lookup::Unknown;
        };
        if now_us >= denial.until_us.saturating_add(LAPSED_FOR_US) {
            // Long lapsed: the flood that made one request at a time worth it is over.
            return Lookup::Unknown;
        }
        let waited = now_us.saturating_sub(denial.refused_at_us);
        if now_us < denial.until_us {
            return Lookup::Refused(denial.assessments.iter().map(|a| aged(a, waited)).collect());
        }
        if denial.asking != 0 {
            return Lookup::Behind(
                denial
                    .assessments
                    .iter()
                    .map(|a| behind(a, waited))
                    .collect(),
            );
        }
        denial.asking = self.tickets.fetch_add(1, Ordering::Relaxed);
        Lookup::Ask(Ticket(denial.asking))
    }

    /// Gives `ticket` back: its request's call about these takes has ended (answered, failed
    /// or abandoned), so the next request may ask.
    pub fn release(&self, takes: &[Take<'_>], ticket: Ticket) {
        let Some(key) = DenyKey::of(takes) else {
            return;
        };
        let mut shard = self.shard(&key.identity).lock();
        let found = shard
            .get_mut(&key.identity)
            .and_then(|d| d.iter_mut().find(|(policies, _)| *policies == key.policies));
        if let Some((_, denial)) = found.filter(|(_, d)| d.asking == ticket.0) {
            denial.asking = 0;
        }
    }

    /// Remembers the store's refusal of `takes` (answered `assessments`) at `now_us`.
    pub fn remember(&self, takes: &[Take<'_>], assessments: &[Assessment], now_us: u64) {
        let Some(key) = DenyKey::of(takes) else {
            return;
        };
        let Some(wait) = assessments
            .iter()
            .filter_map(|a| a.refusal().map(|r| r.retry_after_us))
            .max()
        else {
            return;
        };
        let mut shard = self.shard(&key.identity).lock();
        if shard.len() >= self.per_shard_cap && !shard.contains_key(&key.identity) {
            shard.retain(|_, denials| {
                denials.retain(|(_, d)| d.until_us > now_us);
                !denials.is_empty()
            });
            if shard.len() >= self.per_shard_cap {
                return;
            }
        }
        let denial = Denial {
            refused_at_us: now_us,
            until_us: now_us.saturating_add(wait.min(REUSED_FOR_US)),
            assessments: assessments.iter().copied().collect(),
            asking: 0,
        };
        let denials = shard.entry(key.identity).or_default();
        denials.retain(|(policies, _)| *policies != key.policies);
        denials.push((key.policies, denial));
    }

    /// Learns that the store allowed `takes`, answering `assessments`: if each bucket has room
    /// for another take at the same cost, the refusal is forgotten and the caller's requests
    /// ask freely again; otherwise a lapsed refusal stays lapsed, its turn free for the next
    /// request (a standing one stands: the bucket holds even less than it said).
    pub fn allowed(&self, takes: &[Take<'_>], assessments: &[Assessment]) {
        let Some(key) = DenyKey::of(takes) else {
            return;
        };
        let room = takes
            .iter()
            .zip(assessments)
            .all(|(t, a)| a.remaining() + t.terms.overdraft >= t.cost);
        let mut shard = self.shard(&key.identity).lock();
        let Some(denials) = shard.get_mut(&key.identity) else {
            return;
        };
        if room {
            denials.retain(|(policies, _)| *policies != key.policies);
            if denials.is_empty() {
                shard.remove(&key.identity);
            }
        } else if let Some((_, denial)) = denials.iter_mut().find(|(p, _)| *p == key.policies) {
            denial.asking = 0;
        }
    }

    /// Forgets every refusal of `identity`: tokens were given back, so they may be stale.
    pub fn forget(&self, identity: &Identity) {
        self.shard(identity).lock().remove(identity);
    }

    /// How many callers have refusals held (expired ones not yet swept included).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }

    /// Whether no refusal is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A lapsed refusal's answer `waited` microseconds after it was given, for a request behind
/// the one asking the store: aged, and without a block once the wait has passed.
fn behind(answer: &Assessment, waited: u64) -> Assessment {
    match (aged(answer, waited), answer) {
        (Assessment::Refused(refused), Assessment::Refused(given))
            if given.retry_after_us <= waited =>
        {
            Assessment::Refused(Refused {
                penalty: Penalty::None,
                ..refused
            })
        }
        (aged, _) => aged,
    }
}

/// A remembered answer `waited` microseconds later: the waits shortened by as much (a refusal
/// still waits at least 1 µs), and a block the refusal started only standing now.
fn aged(answer: &Assessment, waited: u64) -> Assessment {
    match *answer {
        Assessment::Allowed(allowed) => Assessment::Allowed(Allowed {
            wait_us: 0,
            full_in_us: allowed.full_in_us.saturating_sub(waited),
            ..allowed
        }),
        Assessment::Refused(refused) => Assessment::Refused(Refused {
            retry_after_us: refused.retry_after_us.saturating_sub(waited).max(1),
            full_in_us: refused.full_in_us.saturating_sub(waited),
            penalty: match refused.penalty {
                Penalty::Started => Penalty::Standing,
                other => other,
            },
            ..refused
        }),
    }
}

#[cfg(test)]
mod tests;
