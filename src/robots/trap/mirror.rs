//! The fleet's bans mirrored here: [`Mirror::refresh`] reads the changes made since the last
//! one it knows (every [`READ_EVERY`](super::READ_EVERY)), and the whole table at start or
//! when the changes it missed are gone, so the hot path reads bans from memory only.
//!
//! A whole read replaces the table, so a ban made here while it runs may be missing until the
//! next refresh (its change comes after the id the whole read resumes from, so that refresh
//! brings it back): one refresh interval, at start or after falling behind.

use super::bans::BanTable;
use super::error::TrapError;
use super::fleet::{Read, Told, TrapFleet, READ_CHANGES};

/// The most reads of changes one refresh makes (a reader further behind reads on at the next
/// refresh).
const MAX_PAGES: usize = 20;

/// The fleet and the last change read from it.
pub(super) struct Mirror {
    pub(super) fleet: TrapFleet,
    /// The last change read ("0": none yet, so the first refresh reads the whole table).
    last: tokio::sync::Mutex<String>,
}

impl Mirror {
    /// A mirror of `fleet`'s bans, empty until the first refresh.
    pub(super) fn new(fleet: TrapFleet) -> Self {
        Self {
            fleet,
            last: tokio::sync::Mutex::new("0".to_owned()),
        }
    }

    /// Brings `bans` up to the fleet's changes (one refresh at a time).
    pub(super) async fn refresh(&self, bans: &BanTable) -> Result<(), TrapError> {
        let mut last = self.last.lock().await;
        for _ in 0..MAX_PAGES {
            match self.fleet.read(&last).await? {
                Read::Whole(from) => {
                    let mut whole = self.fleet.whole().await?;
                    // The hash has no order: the bans that end first stand for the oldest.
                    whole.sort_by_key(|(_, held)| held.until_ms);
                    bans.replace(whole);
                    *last = from;
                }
                Read::Delta(to, told) => {
                    let more = told.len() >= READ_CHANGES;
                    apply(bans, told);
                    *last = to;
                    if !more {
                        break;
                    }
                }
            }
        }
        Ok(())
    }
}

fn apply(bans: &BanTable, told: Vec<Told>) {
    for change in told {
        match change {
            Told::Held(field, held) => bans.put(field, held),
            Told::Gone(field) => bans.remove(&field),
        }
    }
}
