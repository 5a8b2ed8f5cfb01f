//! The memory ledger: the control state of one process, kept in `admin.state_file` when set
//! (JSON, written to a temporary file and renamed over the old one, so a crash leaves either
//! the old state or the new, never half of one; loaded at start).

use super::entry::{in_force, Contents, Entry, Kind};
use super::ledger::{ControlError, Ledger, Read};
use super::now_ms;
use crate::identity::Identity;
use async_trait::async_trait;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The state as the file holds it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Book {
    next_id: u64,
    /// The secret of the identity digests the entries name callers by, when the config sets
    /// none: the digests mean nothing under another key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hash_key: Option<String>,
    #[serde(flatten)]
    contents: Contents,
    #[serde(skip)]
    version: u64,
}

/// The control state in this process (and its file).
#[derive(Default)]
pub struct MemoryLedger {
    book: Mutex<Book>,
    file: Option<PathBuf>,
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
        let book = match file {
            Some(path) => load(path)?,
            None => Book::default(),
        };
        Ok(Self {
            book: Mutex::new(book),
            file: file.map(Path::to_owned),
        })
    }

    /// The secret identity digests are made with, kept in the file: the one it holds, else
    /// `fresh`, saved now. `None` without a file (a random key of the process then serves).
    pub fn digest_secret(&self, fresh: String) -> Result<Option<String>, StateFileError> {
        let Some(path) = &self.file else {
            return Ok(None);
        };
        let mut book = self.book.lock();
        if let Some(secret) = &book.hash_key {
            return Ok(Some(secret.clone()));
        }
        let mut next = book.clone();
        next.hash_key = Some(fresh.clone());
        save(path, &next).map_err(|e| StateFileError {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        *book = next;
        Ok(Some(fresh))
    }

    /// Applies `change` to the book and keeps the result, or keeps the book as it was.
    fn change<T>(
        &self,
        change: impl FnOnce(&mut Book, u64) -> Result<T, ControlError>,
    ) -> Result<T, ControlError> {
        let mut book = self.book.lock();
        let mut next = book.clone();
        let now = now_ms();
        next.contents
            .bans
            .retain(|b| in_force(b.expires_at_ms, now));
        next.contents
            .overrides
            .retain(|o| in_force(o.expires_at_ms, now));
        let answer = change(&mut next, now)?;
        next.version += 1;
        if let Some(path) = &self.file {
            save(path, &next).map_err(|e| ControlError::Unavailable(e.to_string()))?;
        }
        *book = next;
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
    ) -> Result<Entry, ControlError> {
        self.change(|book, now| {
            let kind = entry.kind();
            if let Entry::Override(new) = &entry {
                let slot = new.slot();
                book.contents.overrides.retain(|o| o.slot() != slot);
            }
            let held = match kind {
                Kind::Ban => book.contents.bans.len(),
                Kind::Override => book.contents.overrides.len(),
            };
            if held >= max {
                return Err(ControlError::Full { kind, max });
            }
            book.next_id += 1;
            let kept = entry.stamped(book.next_id, now, ttl_ms);
            match &kept {
                Entry::Ban(b) => book.contents.bans.push(b.clone()),
                Entry::Override(o) => book.contents.overrides.push(o.clone()),
            }
            Ok(kept)
        })
    }

    async fn remove(&self, kind: Kind, id: u64) -> Result<bool, ControlError> {
        if !self.holds(kind, id) {
            return Ok(false);
        }
        self.change(|book, _| {
            match kind {
                Kind::Ban => book.contents.bans.retain(|b| b.id != id),
                Kind::Override => book.contents.overrides.retain(|o| o.id != id),
            }
            Ok(true)
        })
    }

    async fn announce_reset(&self, _caller: Identity) -> Result<(), ControlError> {
        // One process: the reset already reached the only store there is.
        Ok(())
    }

    async fn read(&self, known: Option<u64>) -> Result<Read, ControlError> {
        let book = self.book.lock();
        if known == Some(book.version) {
            return Ok(Read::Unchanged);
        }
        Ok(Read::Changed {
            version: book.version,
            contents: book.contents.clone(),
            resets: Vec::new(),
        })
    }
}

impl MemoryLedger {
    /// Whether list `kind` holds entry `id` (expired or not).
    fn holds(&self, kind: Kind, id: u64) -> bool {
        let book = self.book.lock();
        match kind {
            Kind::Ban => book.contents.bans.iter().any(|b| b.id == id),
            Kind::Override => book.contents.overrides.iter().any(|o| o.id == id),
        }
    }
}

fn load(path: &Path) -> Result<Book, StateFileError> {
    let error = |why: String| StateFileError {
        path: path.display().to_string(),
        why,
    };
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| error(e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Book::default()),
        Err(e) => Err(error(e.to_string())),
    }
}

/// Writes `book` to a temporary file beside `path`, then renames it over `path`.
fn save(path: &Path, book: &Book) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(book).map_err(std::io::Error::other)?;
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
    }
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::entry::{Ban, BanTarget, Override};

    fn ban(net: &str) -> Entry {
        Entry::Ban(Ban {
            id: 0,
            target: BanTarget::Cidr {
                value: net.to_owned(),
            },
            reason: "test".into(),
            by: "ops".into(),
            created_at_ms: 0,
            expires_at_ms: None,
        })
    }

    fn override_of(caller: &str, capacity: u64) -> Entry {
        Entry::Override(Override {
            id: 0,
            policy: "per-user".into(),
            source: "header:x-api-key".into(),
            caller: caller.into(),
            capacity,
            rate: "1/s".into(),
            quota: None,
            reason: String::new(),
            by: "ops".into(),
            created_at_ms: 0,
            expires_at_ms: None,
        })
    }

    #[tokio::test]
    async fn the_state_file_keeps_every_change_across_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let ledger = MemoryLedger::open(Some(&path)).unwrap();
        let kept = ledger.add(ban("203.0.113.0/24"), None, 10).await.unwrap();
        ledger.add(ban("198.51.100.7/32"), None, 10).await.unwrap();
        assert!(ledger.remove(Kind::Ban, kept.id()).await.unwrap());
        assert!(!ledger.remove(Kind::Ban, kept.id()).await.unwrap());

        let reopened = MemoryLedger::open(Some(&path)).unwrap();
        let Read::Changed { contents, .. } = reopened.read(None).await.unwrap() else {
            panic!("a fresh ledger has a state to read");
        };
        assert_eq!(contents.bans.len(), 1);
        assert_eq!(
            contents.bans[0].target,
            BanTarget::Cidr {
                value: "198.51.100.7/32".into()
            }
        );
        let next = reopened.add(ban("10.0.0.0/8"), None, 10).await.unwrap();
        assert_eq!(next.id(), 3, "numbers are never given twice");
    }

    #[tokio::test]
    async fn a_full_list_refuses_and_a_new_override_replaces_the_old() {
        let ledger = MemoryLedger::open(None).unwrap();
        ledger.add(override_of("aa", 5), None, 1).await.unwrap();
        let kept = ledger.add(override_of("aa", 50), None, 1).await.unwrap();
        assert_eq!(kept.id(), 2);
        assert_eq!(
            ledger.add(override_of("bb", 5), None, 1).await,
            Err(ControlError::Full {
                kind: Kind::Override,
                max: 1
            })
        );
        let Read::Changed { contents, .. } = ledger.read(None).await.unwrap() else {
            panic!("a state");
        };
        assert_eq!(contents.overrides.len(), 1);
        assert_eq!(contents.overrides[0].capacity, 50);
    }
}
