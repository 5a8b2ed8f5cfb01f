//! Top offenders: the identities most throttled over a recent window, to spot bots at a glance.
//!
//! Counting is Space-Saving (Metwally et al.): at most `capacity` counters per window; a new
//! identity arriving when all are taken replaces the smallest, inheriting its count as a
//! possible overcount (`error`). Heavy hitters are always kept, and memory stays bounded however
//! many identities a flood rotates through. Two windows rotate, so the view always covers
//! between one and two window lengths. Identities are shown only as digests.
//!
//! The sketch is split into shards by identity, each with its own lock and its share of the
//! counters: a throttled request locks one shard and scans a few dozen counters, so a flood
//! does not serialise every worker on one lock. An identity always lands in the same shard,
//! so the heavy hitters of each shard are the heavy hitters overall.

use crate::clock::MonotonicClock;
use crate::identity::{Identity, SourceSpec};
use parking_lot::Mutex;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone)]
struct Counter {
    count: u64,
    error: u64,
    policy: Arc<str>,
    /// The source that named the caller (`None`: anonymous). A digest is made under one
    /// source's tag, so it is the same on each of the caller's requests.
    source: Option<Arc<str>>,
    /// When it was last counted, on the sketch's clock.
    last_us: u64,
    /// The bot score of its last counted request, when one was worked out.
    score: Option<u8>,
}

#[derive(Default)]
struct Window {
    counters: HashMap<Identity, Counter>,
}

impl Window {
    fn record(&mut self, seen: Seen<'_>, capacity: usize, now_us: u64) {
        let Seen {
            identity,
            policy,
            source,
            score,
        } = seen;
        if let Some(c) = self.counters.get_mut(&identity) {
            c.count += 1;
            c.policy = policy.clone();
            c.last_us = now_us;
            c.score = score.or(c.score);
            return;
        }
        let mut inherited = 0;
        if self.counters.len() >= capacity {
            let smallest = self
                .counters
                .iter()
                .min_by_key(|(_, c)| c.count)
                .map(|(id, c)| (*id, c.count));
            if let Some((victim, count)) = smallest {
                self.counters.remove(&victim);
                inherited = count;
            }
        }
        let counter = Counter {
            count: inherited + 1,
            error: inherited,
            policy: policy.clone(),
            source: source.cloned(),
            last_us: now_us,
            score,
        };
        self.counters.insert(identity, counter);
    }
}

/// One throttled request as the sketch counts it.
#[derive(Clone, Copy)]
struct Seen<'a> {
    identity: Identity,
    policy: &'a Arc<str>,
    source: Option<&'a Arc<str>>,
    score: Option<u8>,
}

struct Windows {
    current: Window,
    previous: Window,
    started_us: u64,
}

/// One line of the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Offender {
    /// The first 16 hex digits of the identity's digest.
    pub identity: String,
    /// Throttled requests counted (may overcount by at most `error`).
    pub throttled: u64,
    /// The largest possible overcount.
    pub error: u64,
    /// The policy that throttled it last.
    pub policy: String,
    /// The whole digest, 32 hex digits: how the control API names the caller (`caller`).
    pub caller: String,
    /// Seconds since it was last throttled.
    pub last_seen_s: u64,
    /// The source that named the caller, which the control API names it under with
    /// `caller` (`None`: the anonymous caller, whom no source names).
    pub source: Option<String>,
    /// The bot score of its last throttled request (`None`: not worked out).
    pub score: Option<u8>,
}

/// The most independently locked shards the sketch is split into.
const MAX_SHARDS: usize = 16;
/// The fewest counters a shard keeps: fewer would weaken Space-Saving's guarantee (an
/// identity seen more than 1/k of a shard's requests is always kept) for small sketches.
const MIN_PER_SHARD: usize = 64;

/// The heavy-hitter sketch.
pub struct Offenders {
    shards: Box<[Mutex<Windows>]>,
    window_us: u64,
    per_shard: usize,
    clock: MonotonicClock,
}

impl Offenders {
    /// A sketch over windows of `window`, keeping about `capacity` counters per window
    /// (rounded up to a whole share per shard).
    pub fn new(window: Duration, capacity: usize) -> Self {
        let capacity = capacity.max(1);
        let count = (capacity / MIN_PER_SHARD).clamp(1, MAX_SHARDS);
        let shards = (0..count)
            .map(|_| {
                Mutex::new(Windows {
                    current: Window::default(),
                    previous: Window::default(),
                    started_us: 0,
                })
            })
            .collect();
        Self {
            shards,
            window_us: (window.as_micros() as u64).max(1),
            per_shard: capacity.div_ceil(count),
            clock: MonotonicClock::new(),
        }
    }

    fn shard(&self, identity: &Identity) -> &Mutex<Windows> {
        &self.shards[(identity.prefix_u64() >> 32) as usize % self.shards.len()]
    }

    /// The window length.
    pub fn window(&self) -> Duration {
        Duration::from_micros(self.window_us)
    }

    /// Counts one throttled request of `identity`, named by `source`, under `policy`, now.
    pub fn record(&self, identity: Identity, source: Option<&SourceSpec>, policy: &Arc<str>) {
        let tag = source.map(SourceSpec::shared_tag);
        self.record_scored(identity, tag.as_ref(), policy, None);
    }

    /// Counts one throttled request of `identity`, named by the source tagged `source`, whose
    /// bot score was `score` when it was worked out.
    pub fn record_scored(
        &self,
        identity: Identity,
        source: Option<&Arc<str>>,
        policy: &Arc<str>,
        score: Option<u8>,
    ) {
        let seen = Seen {
            identity,
            policy,
            source,
            score,
        };
        self.record_seen(seen, self.clock.now_us());
    }

    /// Counts one throttled request at `now_us` on the sketch's clock.
    pub fn record_at(
        &self,
        identity: Identity,
        source: Option<&SourceSpec>,
        policy: &Arc<str>,
        now_us: u64,
    ) {
        let tag = source.map(SourceSpec::shared_tag);
        let seen = Seen {
            identity,
            policy,
            source: tag.as_ref(),
            score: None,
        };
        self.record_seen(seen, now_us);
    }

    fn record_seen(&self, seen: Seen<'_>, now_us: u64) {
        let mut w = self.shard(&seen.identity).lock();
        self.rotate(&mut w, now_us);
        w.current.record(seen, self.per_shard, now_us);
    }

    fn rotate(&self, w: &mut Windows, now_us: u64) {
        let elapsed = now_us.saturating_sub(w.started_us);
        if elapsed >= 2 * self.window_us {
            w.previous = Window::default();
            w.current = Window::default();
            w.started_us = now_us;
        } else if elapsed >= self.window_us {
            w.previous = std::mem::take(&mut w.current);
            w.started_us += self.window_us;
        }
    }

    /// The `top` most throttled identities now, most first.
    pub fn top(&self, top: usize) -> Vec<Offender> {
        self.top_at(top, self.clock.now_us())
    }

    /// The `top` most throttled identities at `now_us`.
    pub fn top_at(&self, top: usize, now_us: u64) -> Vec<Offender> {
        let mut merged: HashMap<Identity, Counter> = HashMap::new();
        for shard in self.shards.iter() {
            let mut w = shard.lock();
            self.rotate(&mut w, now_us);
            for (id, c) in w.previous.counters.iter().chain(&w.current.counters) {
                merged
                    .entry(*id)
                    .and_modify(|m| {
                        m.count += c.count;
                        m.error += c.error;
                        m.policy = c.policy.clone();
                        m.last_us = m.last_us.max(c.last_us);
                        m.score = c.score.or(m.score);
                    })
                    .or_insert_with(|| c.clone());
            }
        }
        let mut list: Vec<Offender> = merged
            .into_iter()
            .map(|(id, c)| Offender {
                identity: id.hex()[..16].to_owned(),
                throttled: c.count,
                error: c.error,
                policy: c.policy.to_string(),
                caller: id.hex(),
                last_seen_s: now_us.saturating_sub(c.last_us) / 1_000_000,
                source: c.source.as_deref().map(str::to_owned),
                score: c.score,
            })
            .collect();
        list.sort_by(|a, b| {
            b.throttled
                .cmp(&a.throttled)
                .then_with(|| a.identity.cmp(&b.identity))
        });
        list.truncate(top);
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: u64 = 1_000_000;

    fn id(n: u32) -> Identity {
        Identity::of(
            &crate::identity::IdentityKey::from_bytes([0; 32]),
            "test",
            &n.to_le_bytes(),
        )
    }

    #[test]
    fn a_flooder_is_listed_first_among_a_sweep_of_others() {
        let sketch = Offenders::new(Duration::from_secs(60), 32);
        let policy: Arc<str> = "per-user".into();
        let spec: SourceSpec = "header:user-agent".parse().unwrap();
        for round in 0..200u32 {
            sketch.record_at(id(7), Some(&spec), &policy, SECOND);
            for other in 0..20u32 {
                sketch.record_at(id(1000 + round * 20 + other), None, &policy, SECOND);
            }
        }
        let top = sketch.top_at(3, SECOND);
        assert_eq!(top[0].identity, id(7).hex()[..16]);
        assert!(top[0].throttled >= 200);
        assert_eq!(top[0].policy, "per-user");
        assert_eq!(top[0].caller, id(7).hex());
        assert_eq!(top[0].source.as_deref(), Some("header:user-agent"));
        assert_eq!(top[1].source, None);
        assert_eq!(sketch.top_at(1, 4 * SECOND)[0].last_seen_s, 3);
    }

    #[test]
    fn an_offender_shows_the_score_of_its_last_scored_request() {
        let sketch = Offenders::new(Duration::from_secs(60), 8);
        let policy: Arc<str> = "p".into();
        sketch.record(id(1), None, &policy);
        assert_eq!(sketch.top(1)[0].score, None, "never scored");
        sketch.record_scored(id(1), None, &policy, Some(70));
        sketch.record(id(1), None, &policy);
        let top = sketch.top(1);
        assert_eq!((top[0].throttled, top[0].score), (3, Some(70)));
        let json = serde_json::to_value(&top[0]).unwrap();
        assert_eq!(json["score"], 70);
    }

    #[test]
    fn old_windows_age_out() {
        let sketch = Offenders::new(Duration::from_secs(10), 8);
        let policy: Arc<str> = "p".into();
        sketch.record_at(id(1), None, &policy, 0);
        assert_eq!(
            sketch.top_at(5, 15 * SECOND).len(),
            1,
            "still in the previous window"
        );
        assert!(
            sketch.top_at(5, 25 * SECOND).is_empty(),
            "gone after two windows"
        );
    }

    #[test]
    fn memory_is_bounded_by_the_capacity() {
        let sketch = Offenders::new(Duration::from_secs(60), 16);
        let policy: Arc<str> = "p".into();
        for n in 0..10_000 {
            sketch.record_at(id(n), None, &policy, 0);
        }
        assert!(sketch.top_at(100, 0).len() <= 16);
        let large = Offenders::new(Duration::from_secs(60), 1000);
        for n in 0..100_000 {
            large.record_at(id(n), None, &policy, 0);
        }
        assert!(large.shards.len() > 1);
        assert!(large.top_at(2000, 0).len() <= 1000 + large.shards.len());
    }
}
