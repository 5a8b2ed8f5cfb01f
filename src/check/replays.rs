//! `check.dedupe_header`: an internal redirect in nginx (`try_files`, `error_page`) runs
//! `auth_request` again for the same client request. When the asking proxy sets a request id
//! itself (overwriting whatever the client sent), a decision asked again within
//! [`REPLAY_WINDOW`] for the same id, caller address, method, host, target and callers (the
//! digests of the identities the check resolved: a client-set id with another key never gets
//! the first key's answer) gets the first answer and takes nothing. Bounded: past [`MAX_REPLAYS`] answers, old ones are dropped.

use bytes::Bytes;
use http::{HeaderName, HeaderValue};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long an answer is given again for the same request.
pub const REPLAY_WINDOW: Duration = Duration::from_secs(5);
/// The most answers kept.
pub const MAX_REPLAYS: usize = 100_000;

/// An answer to a check request, kept whole.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Its status.
    pub status: u16,
    /// Its headers.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Its body.
    pub body: Bytes,
}

/// What identifies one client request across its repeated checks.
pub type ReplayKey = [u8; 32];

/// The key of a check whose id header says `id`, about `facts` (method, host, target, caller
/// address, identity digests, each as text).
pub fn replay_key(id: &[u8], facts: &[&str]) -> ReplayKey {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&(id.len() as u64).to_le_bytes());
    hasher.update(id);
    for fact in facts {
        hasher.update(&(fact.len() as u64).to_le_bytes());
        hasher.update(fact.as_bytes());
    }
    *hasher.finalize().as_bytes()
}

/// Recent answers by request.
#[derive(Default)]
pub struct Replays {
    answers: Mutex<HashMap<ReplayKey, (Instant, Arc<Answer>)>>,
}

impl Replays {
    /// The answer given to `key` within the window before `now`, if any.
    pub fn get(&self, key: &ReplayKey, now: Instant) -> Option<Arc<Answer>> {
        let answers = self.answers.lock();
        let (at, answer) = answers.get(key)?;
        (now.saturating_duration_since(*at) < REPLAY_WINDOW).then(|| answer.clone())
    }

    /// Keeps `answer` for `key`, given at `now`.
    pub fn put(&self, key: ReplayKey, answer: Arc<Answer>, now: Instant) {
        let mut answers = self.answers.lock();
        if answers.len() >= MAX_REPLAYS {
            answers.retain(|_, (at, _)| now.saturating_duration_since(*at) < REPLAY_WINDOW);
            if answers.len() >= MAX_REPLAYS {
                answers.clear();
            }
        }
        answers.insert(key, (now, answer));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_given_again_within_the_window_for_the_same_request_only() {
        let replays = Replays::default();
        let now = Instant::now();
        let key = replay_key(b"id-1", &["GET", "shop", "/a", "10.0.0.1"]);
        let answer = Arc::new(Answer {
            status: 200,
            headers: vec![],
            body: Bytes::new(),
        });
        replays.put(key, answer, now);
        assert!(replays.get(&key, now + Duration::from_secs(4)).is_some());
        assert!(replays.get(&key, now + REPLAY_WINDOW).is_none());
        let other = replay_key(b"id-1", &["GET", "shop", "/a", "10.0.0.2"]);
        assert!(replays.get(&other, now).is_none(), "another caller");
        assert_ne!(replay_key(b"ab", &["c"]), replay_key(b"a", &["bc"]));
    }
}
