//! The deny cache: when the store says an identity's request cannot pass before T, refuse
//! that identity's requests under the same policies locally until T, without asking again.
//!
//! Nothing but the store adds tokens, so a refusal the store computed stays true until its
//! retry-after has passed: answering locally until then refuses nothing the store would have
//! allowed. A refund (a settlement that gives tokens back) is the one exception: when this
//! instance learns of one, the caller's refusals are forgotten. Memory is bounded: expired
//! refusals are swept, and a full cache stores no more (it is only a shortcut).

use crate::identity::Identity;
use crate::limiter::{Assessment, Assessments, Penalty, Take};
use parking_lot::Mutex;
use smallvec::SmallVec;
use std::collections::HashMap;

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
}

/// How long after a refusal lapses it still lines the caller's requests up one at a time.
const LAPSED_FOR_US: u64 = 1_000_000;

/// What the cache says of a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// Refused until its retry-after: these are the store's answers, waits brought up to date.
    Refused(Assessments),
    /// Refused recently, but the refusal has lapsed: ask the store again (one request at a
    /// time, since a flood is likely).
    Lapsed,
    /// Nothing known.
    Unknown,
}

/// One caller's refusals, by policy set (usually one).
type Denials = SmallVec<[(u64, Denial); 1]>;

/// Recent refusals, keyed by identity and policy set.
pub struct DenyCache {
    shards: Box<[Mutex<HashMap<Identity, Denials>>]>,
    per_shard_cap: usize,
}

impl DenyCache {
    /// A cache of at most about `max_entries` refusals.
    pub fn new(max_entries: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            per_shard_cap: max_entries.div_ceil(SHARDS).max(1),
        }
    }

    fn shard(&self, identity: &Identity) -> &Mutex<HashMap<Identity, Denials>> {
        &self.shards[identity.prefix_u64() as usize % SHARDS]
    }

    /// What is known of these takes at `now_us`: a refusal still standing (its waits brought
    /// up to date), one that lapsed, or nothing.
    pub fn lookup(&self, takes: &[Take<'_>], now_us: u64) -> Lookup {
        let Some(key) = DenyKey::of(takes) else {
            return Lookup::Unknown;
        };
        let shard = self.shard(&key.identity).lock();
        let found = shard
            .get(&key.identity)
            .and_then(|d| d.iter().find(|(policies, _)| *policies == key.policies));
        let Some((_, denial)) = found else {
            return Lookup::Unknown;
        };
        if now_us >= denial.until_us.saturating_add(LAPSED_FOR_US) {
            // Long lapsed: the flood that made one request at a time worth it is over.
            return Lookup::Unknown;
        }
        if now_us >= denial.until_us {
            return Lookup::Lapsed;
        }
        let waited = now_us.saturating_sub(denial.refused_at_us);
        Lookup::Refused(
            denial
                .assessments
                .iter()
                .map(|a| Assessment {
                    retry_after_us: match a.allowed {
                        true => 0,
                        false => a.retry_after_us.saturating_sub(waited).max(1),
                    },
                    full_in_us: a.full_in_us.saturating_sub(waited),
                    // The block was started by the refusal remembered; it only stands now.
                    penalty: match a.penalty {
                        Penalty::Started => Penalty::Standing,
                        other => other,
                    },
                    ..*a
                })
                .collect(),
        )
    }

    /// Remembers the store's refusal of `takes` (answered `assessments`) at `now_us`.
    pub fn remember(&self, takes: &[Take<'_>], assessments: &[Assessment], now_us: u64) {
        let Some(key) = DenyKey::of(takes) else {
            return;
        };
        let Some(wait) = assessments
            .iter()
            .filter(|a| !a.allowed)
            .map(|a| a.retry_after_us)
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
            until_us: now_us.saturating_add(wait),
            assessments: assessments.iter().copied().collect(),
        };
        let denials = shard.entry(key.identity).or_default();
        denials.retain(|(policies, _)| *policies != key.policies);
        denials.push((key.policies, denial));
    }

    /// Forgets the refusal of these takes: the store has just allowed them, so callers of that
    /// set are no longer lined up one at a time.
    pub fn clear(&self, takes: &[Take<'_>]) {
        let Some(key) = DenyKey::of(takes) else {
            return;
        };
        let mut shard = self.shard(&key.identity).lock();
        if let Some(denials) = shard.get_mut(&key.identity) {
            denials.retain(|(policies, _)| *policies != key.policies);
            if denials.is_empty() {
                shard.remove(&key.identity);
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::{BucketKey, BucketSpec, Mode, PolicyKey, Terms};
    use std::sync::LazyLock;

    static POLICIES: LazyLock<[PolicyKey; 3]> =
        LazyLock::new(|| ["p0", "p1", "p2"].map(PolicyKey::new));

    fn take(who: &str, policy: usize) -> Take<'static> {
        Take {
            key: BucketKey {
                policy: &POLICIES[policy],
                identity: Identity::of(
                    &crate::identity::IdentityKey::from_bytes([0; 32]),
                    "t",
                    who.as_bytes(),
                ),
            },
            spec: BucketSpec::new(1.0, 1.0).unwrap(),
            cost: 1.0,
            mode: Mode::Enforce,
            terms: Terms::default(),
        }
    }

    fn refused(retry_after_us: u64) -> Assessment {
        Assessment {
            allowed: false,
            remaining: 0.0,
            retry_after_us,
            full_in_us: retry_after_us,
            penalty: Penalty::None,
        }
    }

    #[test]
    fn a_refusal_stands_until_its_retry_after() {
        let cache = DenyCache::new(100);
        let takes = [take("a", 1)];
        cache.remember(&takes, &[refused(1000)], 10);
        let Lookup::Refused(refusal) = cache.lookup(&takes, 510) else {
            panic!("refused until T");
        };
        assert_eq!(refusal[0].retry_after_us, 500);
        assert_eq!(
            cache.lookup(&takes, 1010),
            Lookup::Lapsed,
            "the store decides again at T"
        );
        assert_eq!(
            cache.lookup(&[take("b", 1)], 510),
            Lookup::Unknown,
            "other callers are not refused"
        );
        assert_eq!(
            cache.lookup(&[take("a", 2)], 510),
            Lookup::Unknown,
            "other policy sets are not refused"
        );
    }

    #[test]
    fn allowed_answers_are_not_remembered() {
        let cache = DenyCache::new(100);
        let takes = [take("a", 1)];
        let allowed = Assessment {
            allowed: true,
            remaining: 0.0,
            retry_after_us: 0,
            full_in_us: 5,
            penalty: Penalty::None,
        };
        cache.remember(&takes, &[allowed], 0);
        assert!(cache.is_empty());
    }

    #[test]
    fn the_cache_is_bounded() {
        let cache = DenyCache::new(SHARDS * 2);
        for i in 0..1000 {
            cache.remember(&[take(&i.to_string(), 1)], &[refused(1_000_000)], 0);
        }
        assert!(cache.len() <= SHARDS * 2);
        // Once they expired, new refusals find room again.
        cache.remember(&[take("late", 1)], &[refused(5)], 2_000_000);
        assert!(matches!(
            cache.lookup(&[take("late", 1)], 2_000_001),
            Lookup::Refused(_)
        ));
    }

    #[test]
    fn a_refusal_at_one_cost_says_nothing_of_another() {
        let cache = DenyCache::new(100);
        let costly = Take {
            cost: 4.0,
            ..take("a", 1)
        };
        cache.remember(&[costly], &[refused(1000)], 0);
        assert!(matches!(cache.lookup(&[costly], 1), Lookup::Refused(_)));
        assert_eq!(cache.lookup(&[take("a", 1)], 1), Lookup::Unknown);
    }

    #[test]
    fn a_refund_forgets_the_callers_refusals() {
        let cache = DenyCache::new(100);
        cache.remember(&[take("a", 1)], &[refused(1000)], 0);
        cache.remember(&[take("a", 2)], &[refused(1000)], 0);
        cache.remember(&[take("b", 1)], &[refused(1000)], 0);
        assert_eq!(cache.len(), 2, "two callers");
        cache.forget(&take("a", 1).key.identity);
        assert_eq!(cache.lookup(&[take("a", 2)], 1), Lookup::Unknown);
        assert!(matches!(
            cache.lookup(&[take("b", 1)], 1),
            Lookup::Refused(_)
        ));
    }

    #[test]
    fn an_allowed_answer_clears_the_refusal_and_a_long_lapsed_one_is_forgotten() {
        let cache = DenyCache::new(100);
        let takes = [take("a", 1)];
        cache.remember(&takes, &[refused(1000)], 0);
        assert_eq!(cache.lookup(&takes, 1000), Lookup::Lapsed);
        assert_eq!(
            cache.lookup(&takes, 1000 + LAPSED_FOR_US),
            Lookup::Unknown,
            "a refusal lapsed long ago no longer lines the caller up"
        );
        cache.clear(&takes);
        assert_eq!(cache.lookup(&takes, 1000), Lookup::Unknown, "cleared");
        assert!(cache.is_empty());
    }
}
