//! `admin.state_file`: the memory ledger's state as an append-only log of JSON lines. A change
//! appends its lines (one `write` each, so an answered change has reached the system's cache);
//! the file is flushed to disk at most once a second, as Redis's `appendfsync everysec` does.
//! When the log holds twice the live entries (plus a margin) it is compacted: the live state
//! written to a new file, synced and renamed over the old one, so a crash leaves one or the
//! other whole. A change costs O(1) amortised; the file is created 0600 (it holds the identity
//! digest key). The single-document JSON of earlier versions is read and rewritten as a log.

use super::book::Book;
use crate::control::change::Change;
use crate::control::entry::{Ban, Contents, Entry, Override};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often appended lines are flushed to disk at most.
const SYNC_EVERY: Duration = Duration::from_secs(1);
/// Lines past twice the live entries before the log is compacted.
const SLACK: usize = 1024;

/// One line of the log.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Line {
    /// The first line: the last id given, and the identity digest secret.
    State {
        next_id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hash_key: Option<String>,
    },
    /// A ban held.
    Ban(Ban),
    /// An override held.
    Override(Override),
    /// An entry gone.
    Gone(u64),
}

/// The state file as written by versions before the log.
#[derive(Deserialize)]
struct Legacy {
    next_id: u64,
    #[serde(default)]
    hash_key: Option<String>,
    #[serde(flatten)]
    contents: Contents,
}

/// The open state file.
pub(super) struct Journal {
    path: PathBuf,
    file: File,
    hash_key: Option<String>,
    /// Lines appended since the last compaction.
    appended: usize,
    synced_at: Instant,
    unsynced: bool,
}

impl Journal {
    /// Opens the file at `path` (a missing file is an empty state), reads what it holds and
    /// rewrites it compacted; the journal and the state.
    pub(super) fn open(path: &Path) -> std::io::Result<(Self, Book)> {
        let (book, hash_key) = match std::fs::read_to_string(path) {
            Ok(text) => read(&text)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Book::default(), None),
            Err(e) => return Err(e),
        };
        let file = compact(path, &book, hash_key.as_deref())?;
        let journal = Self {
            path: path.to_owned(),
            file,
            hash_key,
            appended: 0,
            synced_at: Instant::now(),
            unsynced: false,
        };
        Ok((journal, book))
    }

    /// Reads the file at `path` as `open` would, writing nothing (a missing file is fine).
    pub(super) fn check(path: &Path) -> std::io::Result<()> {
        match std::fs::read_to_string(path) {
            Ok(text) => read(&text).map(drop),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The identity digest secret the file holds.
    pub(super) fn hash_key(&self) -> Option<&str> {
        self.hash_key.as_deref()
    }

    /// Keeps `secret` as the identity digest secret (the file is rewritten at once).
    pub(super) fn set_hash_key(&mut self, secret: String, book: &Book) -> std::io::Result<()> {
        self.hash_key = Some(secret);
        self.compact(book)
    }

    /// Appends `change`, already applied to `book`; compacts when the log has grown enough.
    pub(super) fn append(&mut self, change: &Change, book: &Book) -> std::io::Result<()> {
        let mut text = String::new();
        for id in &change.gone {
            push_line(&mut text, &Line::Gone(*id))?;
        }
        for entry in &change.added {
            let line = match entry.clone() {
                Entry::Ban(b) => Line::Ban(b),
                Entry::Override(o) => Line::Override(o),
            };
            push_line(&mut text, &line)?;
        }
        if text.is_empty() {
            return Ok(());
        }
        self.file.write_all(text.as_bytes())?;
        self.appended += change.gone.len() + change.added.len();
        self.unsynced = true;
        if self.appended > 2 * book.len() + SLACK {
            return self.compact(book);
        }
        self.sync_if_due(Instant::now())
    }

    /// Flushes appended lines to disk when the last flush is a second old.
    pub(super) fn sync_if_due(&mut self, now: Instant) -> std::io::Result<()> {
        if self.unsynced && now.duration_since(self.synced_at) >= SYNC_EVERY {
            self.file.sync_data()?;
            self.synced_at = now;
            self.unsynced = false;
        }
        Ok(())
    }

    fn compact(&mut self, book: &Book) -> std::io::Result<()> {
        self.file = compact(&self.path, book, self.hash_key.as_deref())?;
        self.appended = 0;
        self.synced_at = Instant::now();
        self.unsynced = false;
        Ok(())
    }
}

/// The state a file's text holds: a log, or the single document of earlier versions.
fn read(text: &str) -> std::io::Result<(Book, Option<String>)> {
    if let Ok(legacy) = serde_json::from_str::<Legacy>(text) {
        let book = Book::of(Contents::entries(legacy.contents), legacy.next_id);
        return Ok((book, legacy.hash_key));
    }
    let mut book = Book::default();
    let mut hash_key = None;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    for (at, raw) in lines.iter().enumerate() {
        let line = match serde_json::from_str::<Line>(raw) {
            Ok(line) => line,
            // A crash in the middle of an append leaves the last line cut short; the first
            // line was written whole (synced before the rename), so it never is.
            Err(e) if at > 0 && at + 1 == lines.len() => {
                log::warn!("the state file's last line is cut short ({e}); it is skipped");
                break;
            }
            Err(e) => {
                let why = format!("line {}: {e}", at + 1);
                return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, why));
            }
        };
        match line {
            Line::State {
                next_id,
                hash_key: key,
            } => {
                book.next_id = book.next_id.max(next_id);
                hash_key = key.or(hash_key);
            }
            Line::Ban(b) => load(&mut book, Entry::Ban(b)),
            Line::Override(o) => load(&mut book, Entry::Override(o)),
            Line::Gone(id) => {
                book.next_id = book.next_id.max(id);
                book.take(id);
            }
        }
    }
    Ok((book, hash_key))
}

fn load(book: &mut Book, entry: Entry) {
    book.next_id = book.next_id.max(entry.id());
    book.insert(entry);
}

fn push_line(text: &mut String, line: &Line) -> std::io::Result<()> {
    text.push_str(&serde_json::to_string(line).map_err(std::io::Error::other)?);
    text.push('\n');
    Ok(())
}

/// Writes `book` to a new file beside `path` (0600), syncs it and renames it over `path`;
/// the new file, open for appending.
fn compact(path: &Path, book: &Book, hash_key: Option<&str>) -> std::io::Result<File> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    let mut text = String::new();
    let state = Line::State {
        next_id: book.next_id,
        hash_key: hash_key.map(str::to_owned),
    };
    push_line(&mut text, &state)?;
    for entry in book.entries() {
        let line = match entry {
            Entry::Ban(b) => Line::Ban(b),
            Entry::Override(o) => Line::Override(o),
        };
        push_line(&mut text, &line)?;
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temporary)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)?;
    OpenOptions::new().append(true).open(path)
}
