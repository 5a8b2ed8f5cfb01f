//! What recent User-Agents named, remembered: a site's traffic comes from a few browsers'
//! User-Agents over and over, and finding the tokens in one costs a pass of the automaton over
//! it (about 1.4 ns a byte, 150 ns for a browser's), where looking it up here costs a hash of it
//! (a few tens of nanoseconds).
//!
//! A fixed table of [`SLOTS`] words, each one User-Agent's fingerprint (48 bits of a keyed hash
//! of the bytes read) and what it named, written over by whichever User-Agent hashes to the
//! same place last: 100,000 distinct User-Agents cost no more memory than one, only their
//! lookups. Two User-Agents that share a fingerprint under the process's random key would share
//! an answer; a crawler cannot aim at that (the key is secret), and naming a browser's
//! User-Agent already escapes robots.txt's enforcement, which holds only the crawlers that say
//! who they are.

use std::sync::atomic::{AtomicU64, Ordering};

/// How many User-Agents are remembered at most (8 KiB).
pub(super) const SLOTS: usize = 1024;

/// What a User-Agent named: no token, or the token of this number.
pub(super) type Named = Option<usize>;

/// The table (empty when cloned: a copy serves another file).
#[derive(Debug)]
pub(super) struct Memo {
    slots: Box<[AtomicU64]>,
    key: ahash::RandomState,
}

impl Default for Memo {
    fn default() -> Self {
        Memo {
            slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
            key: ahash::RandomState::new(),
        }
    }
}

impl Clone for Memo {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

/// The 16 low bits of a slot: 0 for no token, a token's number plus 1 otherwise.
const NAMED_BITS: u32 = 16;

impl Memo {
    /// What `user_agent` named when it was last seen, if it is remembered.
    pub(super) fn recall(&self, user_agent: &[u8]) -> Option<Named> {
        let (slot, tag) = self.place(user_agent);
        let word = slot.load(Ordering::Relaxed);
        if word >> NAMED_BITS != tag {
            return None;
        }
        Some(match word & 0xFFFF {
            0 => None,
            n => Some(n as usize - 1),
        })
    }

    /// Remembers that `user_agent` named `named` (a token numbered past what 16 bits hold is
    /// not remembered).
    pub(super) fn remember(&self, user_agent: &[u8], named: Named) {
        let value = match named {
            None => 0,
            Some(n) => match u64::try_from(n + 1) {
                Ok(v) if v <= 0xFFFF => v,
                _ => return,
            },
        };
        let (slot, tag) = self.place(user_agent);
        slot.store(tag << NAMED_BITS | value, Ordering::Relaxed);
    }

    /// The slot of `user_agent` and its fingerprint there (never 0: an empty slot matches no
    /// one).
    fn place(&self, user_agent: &[u8]) -> (&AtomicU64, u64) {
        let hash = self.key.hash_one(user_agent);
        let slot = &self.slots[(hash as usize) % SLOTS];
        let tag = (hash >> NAMED_BITS) | 1 << 47;
        (slot, tag & ((1 << 48) - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::{Memo, SLOTS};

    #[test]
    fn what_was_seen_is_recalled_and_the_table_stays_its_size() {
        let memo = Memo::default();
        assert_eq!(memo.recall(b"Mozilla/5.0 Chrome"), None, "never seen");
        memo.remember(b"Mozilla/5.0 Chrome", None);
        memo.remember(b"GPTBot/1.2", Some(3));
        assert_eq!(memo.recall(b"Mozilla/5.0 Chrome"), Some(None));
        assert_eq!(memo.recall(b"GPTBot/1.2"), Some(Some(3)));
        assert_eq!(memo.recall(b"GPTBot/1.3"), None);
        for i in 0..100_000u32 {
            memo.remember(format!("agent {i}").as_bytes(), Some(1));
        }
        assert_eq!(memo.slots.len(), SLOTS);
        // A newer User-Agent took each place; what is recalled is always what was said of it.
        let recalled = (0..100_000u32)
            .filter_map(|i| memo.recall(format!("agent {i}").as_bytes()))
            .collect::<Vec<_>>();
        assert!(recalled.len() <= SLOTS && recalled.iter().all(|&n| n == Some(1)));
    }

    #[test]
    fn a_token_numbered_past_sixteen_bits_is_not_remembered() {
        let memo = Memo::default();
        memo.remember(b"x", Some(0xFFFF));
        assert_eq!(memo.recall(b"x"), None);
        memo.remember(b"x", Some(0xFFFE));
        assert_eq!(memo.recall(b"x"), Some(Some(0xFFFE)));
    }
}
