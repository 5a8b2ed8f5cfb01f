//! What lives as long as the process, across reloads: each verified source's [`Book`] and, on
//! the Redis store, the [`Fleet`] they share. A change learned here is written to the fleet
//! off the request's path (one write per change of state, or per half `remember` of a proof);
//! changes made elsewhere are read by [`Keeper::refresh`] (every [`READ_EVERY`]); a value
//! missing here while the book has pushed values out is asked of the fleet in batches.

use super::book::{Book, Change};
use super::fleet::{Fleet, Read, Told};
use crate::clock::Clock;
use crate::identity::Identity;
use crate::limiter::LimiterError;
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use super::fleet::READ_EVERY;

/// Writes to the fleet in flight at most; past it a change is kept here only, and told again
/// by the value's next proving answer.
const MAX_WRITES: usize = 64;

/// Values asked of the fleet at most per round, and waiting at most.
const MAX_ASKED: usize = 256;

/// A source's book and how long its proofs last.
#[derive(Clone)]
pub struct SourceBook {
    /// The book.
    pub book: Arc<Book>,
    /// How long a proof (or a revocation) lasts.
    pub remember: Duration,
}

/// The books and the fleet.
pub struct Keeper {
    books: Mutex<HashMap<Arc<str>, SourceBook>>,
    fleet: Option<Arc<Fleet>>,
    /// The last change read from the fleet ("0": none yet).
    last: tokio::sync::Mutex<String>,
    /// Values missing here to ask the fleet of (its answer names their sources).
    asked: Mutex<HashSet<Identity>>,
    writes: Arc<AtomicUsize>,
    clock: Clock,
}

impl Keeper {
    /// A keeper sharing its proofs through `fleet` (none: this process only), on `clock`.
    pub fn new(fleet: Option<Fleet>, clock: Clock) -> Self {
        Self {
            books: Mutex::new(HashMap::new()),
            fleet: fleet.map(Arc::new),
            last: tokio::sync::Mutex::new("0".to_owned()),
            asked: Mutex::new(HashSet::new()),
            writes: Arc::new(AtomicUsize::new(0)),
            clock,
        }
    }

    /// The clock proofs are kept by.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Whether the proofs are the fleet's.
    pub fn is_shared(&self) -> bool {
        self.fleet.is_some()
    }

    /// The book of `source`, keeping at most `keep` values whose proofs last `remember` (made,
    /// or resized, now).
    pub fn book(&self, source: &str, keep: usize, remember: Duration) -> Arc<Book> {
        let mut books = self.books.lock();
        match books.get_mut(source) {
            Some(kept) => {
                kept.book.resize(keep);
                kept.remember = remember;
                kept.book.clone()
            }
            None => {
                let book = Arc::new(Book::new(keep));
                let kept = SourceBook {
                    book: book.clone(),
                    remember,
                };
                books.insert(Arc::from(source), kept);
                book
            }
        }
    }

    /// The book of `source` and how long its proofs last, if it has one.
    pub fn kept(&self, source: &str) -> Option<SourceBook> {
        self.books.lock().get(source).cloned()
    }

    fn known_book(&self, source: &str) -> Option<Arc<Book>> {
        self.books.lock().get(source).map(|kept| kept.book.clone())
    }

    /// Tells the fleet of `change` to a value of `source`, off the caller's path.
    pub fn tell(&self, change: Change, source: &Arc<str>) {
        let Some(fleet) = self.fleet.clone() else {
            return;
        };
        if self.writes.fetch_add(1, Ordering::Relaxed) >= MAX_WRITES {
            self.writes.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        let (writes, source, now) = (self.writes.clone(), source.clone(), self.clock.now_ms());
        tokio::spawn(async move {
            if let Err(e) = fleet.tell(&change, &source, now).await {
                log::debug!("a proof of {source} could not be told to the fleet: {e}");
            }
            writes.fetch_sub(1, Ordering::Relaxed);
        });
    }

    /// Notes that a value is missing here, to be asked of the fleet.
    pub fn ask(&self, identity: Identity) {
        if self.fleet.is_none() {
            return;
        }
        let mut asked = self.asked.lock();
        if asked.len() < MAX_ASKED {
            asked.insert(identity);
        }
    }

    /// Makes `change` to a value of `source` here and, on Redis, for the fleet (an operator's
    /// revocation), waiting for the fleet's answer.
    pub async fn change(&self, source: &str, change: Change) -> Result<(), LimiterError> {
        let now = self.clock.now_ms();
        if let Some(fleet) = &self.fleet {
            fleet.tell(&change, source, now).await?;
        }
        if let Some(book) = self.known_book(source) {
            book.apply(change, now);
        }
        Ok(())
    }

    /// Forgets a value of `source` here and fleet-wide: whether it was known.
    pub async fn forget(&self, source: &str, identity: &Identity) -> Result<bool, LimiterError> {
        let here = self.known_book(source).is_some_and(|book| {
            let known = book.get(identity, self.clock.now_ms()).is_some();
            book.forget(identity);
            known
        });
        match &self.fleet {
            Some(fleet) => Ok(fleet.forget(identity, source).await? || here),
            None => Ok(here),
        }
    }

    /// Reads the changes made elsewhere and the values asked for (nothing without a fleet).
    pub async fn refresh(&self) -> Result<(), LimiterError> {
        let Some(fleet) = &self.fleet else {
            return Ok(());
        };
        let mut last = self.last.lock().await;
        loop {
            match fleet.read(&last).await? {
                Read::Whole(from) => {
                    self.apply(&fleet.whole().await?);
                    *last = from;
                }
                Read::Delta(to, told) => {
                    let more = told.len() >= 500;
                    self.apply(&told);
                    *last = to;
                    if !more {
                        break;
                    }
                }
            }
        }
        drop(last);
        self.answer_asked(fleet).await
    }

    async fn answer_asked(&self, fleet: &Fleet) -> Result<(), LimiterError> {
        let asked: Vec<Identity> = std::mem::take(&mut *self.asked.lock())
            .into_iter()
            .collect();
        if asked.is_empty() {
            return Ok(());
        }
        let told = fleet.get(&asked).await?;
        self.apply(&told);
        Ok(())
    }

    fn apply(&self, told: &[Told]) {
        let now = self.clock.now_ms();
        for one in told {
            let Some(book) = self.known_book(&one.source) else {
                continue;
            };
            match one.change() {
                Some(change) => book.apply(change, now),
                None => book.forget(&one.identity),
            }
        }
    }
}
