//! What is known of each allow-listed agent's key directory: its keys (fresh until its
//! `Cache-Control: max-age` ends, then still used for a day while refreshes are tried), and
//! whether a fetch is under way or due. Pure logic: the time is an argument; the fetches
//! themselves happen elsewhere, never on a request's path.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use web_bot_auth::keyring::KeyRing;

/// How long keys stay in use past their freshness while refreshes fail.
pub const STALE_LIMIT: Duration = Duration::from_secs(24 * 60 * 60);
/// How long after a failed fetch the next is tried.
pub const RETRY_AFTER: Duration = Duration::from_secs(60);
/// The least time between two fetches asked for by an unknown key id.
pub const MIN_REFRESH: Duration = Duration::from_secs(60);

/// The directories known, by agent authority.
#[derive(Debug, Default)]
pub(crate) struct Directories {
    entries: HashMap<Arc<str>, Entry>,
}

#[derive(Debug)]
struct Entry {
    keys: Option<Arc<KeyRing>>,
    /// When a fetch is next due.
    due: Instant,
    /// Until when `keys` may be used.
    usable_until: Instant,
    /// When the last fetch ended.
    settled: Option<Instant>,
    fetching: bool,
}

/// What a request for an agent's keys found.
#[derive(Debug)]
pub(crate) struct Found {
    /// The agent's keys, if known and usable.
    pub(crate) keys: Option<Arc<KeyRing>>,
    /// Whether the caller must start a fetch (nobody else has).
    pub(crate) fetch: bool,
}

impl Directories {
    /// `agent`'s keys at `now`, and whether a fetch is to start.
    pub(crate) fn find(&mut self, agent: &Arc<str>, now: Instant) -> Found {
        let entry = self.entries.entry(agent.clone()).or_insert(Entry {
            keys: None,
            due: now,
            usable_until: now,
            settled: None,
            fetching: false,
        });
        let fetch = !entry.fetching && now >= entry.due;
        entry.fetching |= fetch;
        Found {
            keys: entry.keys.clone().filter(|_| now < entry.usable_until),
            fetch,
        }
    }

    /// Whether a fetch is to start because a signature named a key id `agent`'s keys lack
    /// (the agent may have rotated its keys): at most once per [`MIN_REFRESH`].
    pub(crate) fn refresh(&mut self, agent: &Arc<str>, now: Instant) -> bool {
        let Some(entry) = self.entries.get_mut(agent) else {
            return false;
        };
        let recent = entry
            .settled
            .is_some_and(|at| now.saturating_duration_since(at) < MIN_REFRESH);
        let fetch = !entry.fetching && !recent;
        entry.fetching |= fetch;
        fetch
    }

    /// Keeps what `agent`'s fetch, ended at `now`, brought: its keys, fresh for `max_age`;
    /// or nothing (the old keys stay while usable, the next fetch after [`RETRY_AFTER`]).
    pub(crate) fn settle(
        &mut self,
        agent: &Arc<str>,
        fetched: Option<(KeyRing, Duration)>,
        now: Instant,
    ) {
        let Some(entry) = self.entries.get_mut(agent) else {
            return;
        };
        entry.fetching = false;
        entry.settled = Some(now);
        match fetched {
            Some((keys, max_age)) => {
                entry.keys = Some(Arc::new(keys));
                entry.due = now + max_age;
                entry.usable_until = now + max_age + STALE_LIMIT;
            }
            None => entry.due = now + RETRY_AFTER,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use web_bot_auth::keyring::Algorithm;

    fn ring() -> KeyRing {
        let mut ring = KeyRing::default();
        ring.import_raw("k".into(), Algorithm::Ed25519, vec![0; 32]);
        ring
    }

    #[test]
    fn the_first_request_starts_the_fetch_and_others_do_not_wait() {
        let (mut dirs, now, agent) = (Directories::default(), Instant::now(), "a.example".into());
        let first = dirs.find(&agent, now);
        assert!(first.keys.is_none() && first.fetch);
        let second = dirs.find(&agent, now);
        assert!(
            second.keys.is_none() && !second.fetch,
            "one fetch at a time"
        );
        dirs.settle(&agent, Some((ring(), Duration::from_secs(3600))), now);
        let known = dirs.find(&agent, now);
        assert!(known.keys.is_some() && !known.fetch);
    }

    #[test]
    fn keys_are_refreshed_after_max_age_and_used_meanwhile() {
        let (mut dirs, now, agent) = (Directories::default(), Instant::now(), "a.example".into());
        let _ = dirs.find(&agent, now);
        dirs.settle(&agent, Some((ring(), Duration::from_secs(60))), now);
        let later = dirs.find(&agent, now + Duration::from_secs(61));
        assert!(
            later.keys.is_some() && later.fetch,
            "stale keys serve while refreshed"
        );
        dirs.settle(&agent, None, now + Duration::from_secs(62));
        let retry = dirs.find(&agent, now + Duration::from_secs(63));
        assert!(
            retry.keys.is_some() && !retry.fetch,
            "a failure is retried later"
        );
        let gone = dirs.find(&agent, now + Duration::from_secs(60) + STALE_LIMIT);
        assert!(gone.keys.is_none() && gone.fetch, "stale keys end");
    }

    #[test]
    fn a_failed_first_fetch_is_retried_after_a_while() {
        let (mut dirs, now, agent) = (Directories::default(), Instant::now(), "a.example".into());
        let _ = dirs.find(&agent, now);
        dirs.settle(&agent, None, now);
        assert!(!dirs.find(&agent, now + RETRY_AFTER / 2).fetch);
        assert!(dirs.find(&agent, now + RETRY_AFTER).fetch);
    }

    #[test]
    fn an_unknown_key_id_refreshes_at_most_once_a_minute() {
        let (mut dirs, now, agent) = (Directories::default(), Instant::now(), "a.example".into());
        assert!(
            !dirs.refresh(&agent, now),
            "an agent never asked for is not fetched"
        );
        let _ = dirs.find(&agent, now);
        dirs.settle(&agent, Some((ring(), Duration::from_secs(3600))), now);
        assert!(!dirs.refresh(&agent, now + MIN_REFRESH / 2));
        assert!(dirs.refresh(&agent, now + MIN_REFRESH));
        assert!(!dirs.refresh(&agent, now + MIN_REFRESH), "under way");
    }
}
