//! The memory ledger: the control state of one process ([`Book`]), kept in `admin.state_file`
//! when set ([`Journal`]: an append-only log, compacted as it grows; loaded at start).

mod book;
mod journal;

use super::change::Change;
use super::entry::{Entry, Kind};
use super::ledger::{Added, ControlError, Ledger, Read};
use crate::clock::Clock;
use crate::identity::Identity;
use async_trait::async_trait;
use book::Book;
use journal::Journal;
use parking_lot::Mutex;
use std::path::Path;
use std::time::Instant;

/// The control state in this process (and its file).
#[derive(Default)]
pub struct MemoryLedger {
    state: Mutex<State>,
    /// What entries are made and expire by.
    clock: Clock,
}

#[derive(Default)]
struct State {
    book: Book,
    journal: Option<Journal>,
}

/// Why the state file could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("cannot load the control state from {path}: {why}")]
pub struct StateFileError {
    path: String,
    why: String,
}

impl MemoryLedger {
    /// A ledger kept in `file` when given, loading what it holds (a missing file is an empty
    /// state).
    pub fn open(file: Option<&Path>) -> Result<Self, StateFileError> {
        let state = match file {
            Some(path) => {
                let (journal, book) = Journal::open(path).map_err(|e| StateFileError {
                    path: path.display().to_string(),
                    why: e.to_string(),
                })?;
                State {
                    book,
                    journal: Some(journal),
                }
            }
            None => State::default(),
        };
        Ok(Self {
            state: Mutex::new(state),
            clock: Clock::System,
        })
    }

    /// The same ledger, making and expiring entries by `clock`.
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    /// Whether the state file at `file` can be loaded, read as `open` reads it but writing
    /// nothing (what `--test` asks).
    pub fn check(file: &Path) -> Result<(), StateFileError> {
        Journal::check(file).map_err(|e| StateFileError {
            path: file.display().to_string(),
            why: e.to_string(),
        })
    }

    /// The secret identity digests are made with, kept in the file: the one it holds, else
    /// `fresh`, saved now. `None` without a file (a random key of the process then serves).
    pub fn digest_secret(&self, fresh: String) -> Result<Option<String>, StateFileError> {
        let mut state = self.state.lock();
        let State { book, journal } = &mut *state;
        let Some(journal) = journal else {
            return Ok(None);
        };
        if let Some(secret) = journal.hash_key() {
            return Ok(Some(secret.to_owned()));
        }
        journal
            .set_hash_key(fresh.clone(), book)
            .map_err(|e| StateFileError {
                path: "admin.state_file".into(),
                why: e.to_string(),
            })?;
        Ok(Some(fresh))
    }

    /// Runs `change` on the state after dropping what expired, and appends what it changed
    /// to the file.
    fn change<T>(
        &self,
        change: impl FnOnce(&mut Book, u64) -> Result<(T, Option<Change>), ControlError>,
    ) -> Result<T, ControlError> {
        let mut state = self.state.lock();
        let State { book, journal } = &mut *state;
        let now = self.clock.now_ms();
        let expired = book.expire(now);
        let (answer, made) = change(book, now)?;
        if let Some(journal) = journal {
            for change in expired.iter().chain(made.iter()) {
                // The change is made in this process: a file that cannot take it is logged,
                // not answered as a change that was not made.
                if let Err(e) = journal.append(change, book) {
                    log::error!(
                        "the control state changed but admin.state_file could not be written: {e}"
                    );
                }
            }
        }
        Ok(answer)
    }
}

#[async_trait]
impl Ledger for MemoryLedger {
    async fn add(
        &self,
        entry: Entry,
        ttl_ms: Option<u64>,
        max: usize,
        key: Option<&str>,
    ) -> Result<Added, ControlError> {
        self.change(|book, now| book.add(entry, (now, ttl_ms), max, key))
    }

    async fn remove(&self, kind: Kind, id: u64, key: Option<&str>) -> Result<bool, ControlError> {
        self.change(|book, now| Ok(book.remove(kind, id, (now, key))))
    }

    async fn announce_reset(&self, _caller: Identity) -> Result<(), ControlError> {
        // One process: the reset already reached the only store there is.
        Ok(())
    }

    async fn made_under(&self, key: &str) -> Result<Option<u64>, ControlError> {
        Ok(self.state.lock().book.made_under(key))
    }

    async fn read(&self, known: Option<u64>) -> Result<Read, ControlError> {
        let mut state = self.state.lock();
        let State { book, journal } = &mut *state;
        let expired = book.expire(self.clock.now_ms());
        if let Some(journal) = journal {
            let written = match &expired {
                Some(change) => journal.append(change, book),
                None => Ok(()),
            };
            if let Err(e) = written.and_then(|()| journal.sync_if_due(Instant::now())) {
                log::error!("admin.state_file could not be written: {e}");
            }
        }
        Ok(book.read(known))
    }
}

#[cfg(test)]
mod tests;
