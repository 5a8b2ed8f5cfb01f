//! What is known of addresses and what is being asked: answers kept per address until their
//! lifetime ends (bounded in number, least recently used out first), and the lookups under
//! way, each shared by every request for its address and bounded in number. Pure logic: the
//! time is an argument.

use super::answer::Answer;
use lru::LruCache;
use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How many addresses' answers are kept.
pub const CAPACITY: usize = 100_000;
/// How many addresses may be looked up at once; past that a request is not held.
pub const MAX_LOOKUPS: usize = 256;

/// Where a request for an address's answer goes.
#[derive(Debug)]
pub(crate) enum Ask {
    /// The answer is known.
    Known(Arc<Answer>),
    /// A lookup is under way (`start`: this request must start it); the answer comes here.
    Wait {
        /// Receives the answer when the lookup ends.
        answer: oneshot::Receiver<Arc<Answer>>,
        /// Whether the caller must start the lookup (nobody else has).
        start: bool,
    },
    /// Too many lookups are under way.
    Busy,
}

/// Answers per address and the lookups under way.
#[derive(Debug)]
pub(crate) struct Cache {
    known: LruCache<IpAddr, Kept>,
    waiting: HashMap<IpAddr, Vec<oneshot::Sender<Arc<Answer>>>>,
    max_lookups: usize,
}

#[derive(Debug)]
struct Kept {
    answer: Arc<Answer>,
    until: Instant,
}

impl Cache {
    /// A cache of `capacity` addresses allowing `max_lookups` lookups at once.
    pub(crate) fn new(capacity: NonZeroUsize, max_lookups: usize) -> Self {
        Self {
            known: LruCache::new(capacity),
            waiting: HashMap::new(),
            max_lookups,
        }
    }

    /// What a request for `ip`'s answer does at `now`.
    pub(crate) fn ask(&mut self, ip: IpAddr, now: Instant) -> Ask {
        if let Some(answer) = self.known_at(ip, now) {
            return Ask::Known(answer);
        }
        let (tx, rx) = oneshot::channel();
        if let Some(waiters) = self.waiting.get_mut(&ip) {
            // Requests that gave up waiting left closed senders; drop them as we go.
            waiters.retain(|w| !w.is_closed());
            waiters.push(tx);
            return Ask::Wait {
                answer: rx,
                start: false,
            };
        }
        if self.waiting.len() >= self.max_lookups {
            return Ask::Busy;
        }
        self.waiting.insert(ip, vec![tx]);
        Ask::Wait {
            answer: rx,
            start: true,
        }
    }

    /// Keeps the answer of `ip`'s lookup, ended at `now` (with the DNS TTL it rests on), and
    /// hands it to every request waiting for it.
    pub(crate) fn settle(
        &mut self,
        ip: IpAddr,
        answer: Answer,
        ttl: Option<Duration>,
        now: Instant,
    ) {
        let until = now + answer.lifetime(ttl);
        let answer = Arc::new(answer);
        self.known.put(
            ip,
            Kept {
                answer: answer.clone(),
                until,
            },
        );
        for waiter in self.waiting.remove(&ip).unwrap_or_default() {
            // A request that stopped waiting has dropped its receiver; nothing to do.
            let _ = waiter.send(answer.clone());
        }
    }

    /// How many addresses are being looked up.
    #[cfg(test)]
    pub(crate) fn lookups(&self) -> usize {
        self.waiting.len()
    }

    /// How many addresses' answers are kept (some may have expired).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.known.len()
    }

    fn known_at(&mut self, ip: IpAddr, now: Instant) -> Option<Arc<Answer>> {
        let kept = self.known.get(&ip)?;
        if now < kept.until {
            return Some(kept.answer.clone());
        }
        self.known.pop(&ip);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bots::dns::answer::{FAILURE_LIFETIME, NEGATIVE_LIFETIME};

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    fn cache(capacity: usize, lookups: usize) -> Cache {
        Cache::new(NonZeroUsize::new(capacity).unwrap(), lookups)
    }

    fn confirmed(name: &str) -> Answer {
        Answer::Names {
            confirmed: vec![name.into()],
            unsettled: vec![],
        }
    }

    fn known(ask: Ask) -> Option<Arc<Answer>> {
        match ask {
            Ask::Known(answer) => Some(answer),
            _ => None,
        }
    }

    #[test]
    fn requests_for_one_address_share_one_lookup() {
        let (mut cache, now) = (cache(10, 10), Instant::now());
        let Ask::Wait {
            answer: mut first,
            start: true,
        } = cache.ask(ip(5), now)
        else {
            panic!("the first request starts the lookup")
        };
        let Ask::Wait {
            answer: mut second,
            start: false,
        } = cache.ask(ip(5), now)
        else {
            panic!("the second request waits for the first's lookup")
        };
        assert_eq!(cache.lookups(), 1);
        let answer = confirmed("crawl-5.googlebot.com");
        cache.settle(ip(5), answer.clone(), Some(Duration::from_secs(300)), now);
        assert_eq!(*first.try_recv().unwrap(), answer);
        assert_eq!(*second.try_recv().unwrap(), answer);
        assert_eq!(cache.lookups(), 0);
        assert_eq!(known(cache.ask(ip(5), now)).as_deref(), Some(&answer));
    }

    #[test]
    fn answers_expire_with_their_lifetime() {
        let (mut cache, now) = (cache(10, 10), Instant::now());
        let ttl = Some(Duration::from_secs(300));
        let _ = cache.ask(ip(5), now);
        cache.settle(ip(5), confirmed("crawl-5.googlebot.com"), ttl, now);
        let later = |secs| now + Duration::from_secs(secs);
        assert!(known(cache.ask(ip(5), later(299))).is_some());
        assert!(known(cache.ask(ip(5), later(300))).is_none(), "expired");
        assert_eq!(cache.lookups(), 1, "the expired answer is looked up again");

        let _ = cache.ask(ip(6), now);
        cache.settle(ip(6), Answer::nothing(), Some(Duration::from_secs(1)), now);
        let negative = NEGATIVE_LIFETIME.0;
        assert!(known(cache.ask(ip(6), now + negative - Duration::from_millis(1))).is_some());
        assert!(known(cache.ask(ip(6), now + negative)).is_none());

        let _ = cache.ask(ip(7), now);
        cache.settle(ip(7), Answer::Failed, None, now);
        assert!(
            known(cache.ask(ip(7), now + FAILURE_LIFETIME - Duration::from_millis(1))).is_some()
        );
        assert!(known(cache.ask(ip(7), now + FAILURE_LIFETIME)).is_none());
    }

    #[test]
    fn the_number_of_addresses_kept_is_bounded() {
        let (mut cache, now) = (cache(3, 10), Instant::now());
        for last in 1..=5 {
            let _ = cache.ask(ip(last), now);
            cache.settle(ip(last), Answer::nothing(), None, now);
        }
        assert_eq!(cache.len(), 3);
        assert!(
            known(cache.ask(ip(1), now)).is_none(),
            "the oldest went first"
        );
        assert!(known(cache.ask(ip(5), now)).is_some());
    }

    #[test]
    fn past_the_lookup_bound_a_request_is_not_held() {
        let (mut cache, now) = (cache(10, 2), Instant::now());
        assert!(matches!(
            cache.ask(ip(1), now),
            Ask::Wait { start: true, .. }
        ));
        assert!(matches!(
            cache.ask(ip(2), now),
            Ask::Wait { start: true, .. }
        ));
        assert!(matches!(cache.ask(ip(3), now), Ask::Busy));
        assert!(
            matches!(cache.ask(ip(1), now), Ask::Wait { start: false, .. }),
            "joining a lookup under way costs no new lookup"
        );
        cache.settle(ip(1), Answer::Failed, None, now);
        assert!(matches!(
            cache.ask(ip(3), now),
            Ask::Wait { start: true, .. }
        ));
    }

    #[test]
    fn a_request_that_gave_up_does_not_stop_the_answer() {
        let (mut cache, now) = (cache(10, 10), Instant::now());
        let Ask::Wait { answer, .. } = cache.ask(ip(5), now) else {
            panic!("waits")
        };
        drop(answer);
        cache.settle(ip(5), confirmed("crawl-5.googlebot.com"), None, now);
        assert!(known(cache.ask(ip(5), now)).is_some());
    }
}
