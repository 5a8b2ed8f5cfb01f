//! The redemption contexts of Floodgate's challenges: time is cut into windows of one length,
//! and a window's context is a keyed BLAKE3 digest of its number. Every instance of a fleet
//! derives the key from the identity key it shares, so each computes the same contexts and
//! redeems a token minted for another's challenge. A token answers the current window or the
//! previous one: it cannot be stockpiled for later, and its nonce need be remembered only
//! until the window after the current one ends.

use crate::identity::IdentityKey;
use std::fmt;
use std::time::Duration;

/// The windows' length when none is given: five minutes. A client fetches its token from the
/// issuer right after it meets the challenge (a round trip of a second or two), so a token
/// minted near a window's end still lands in the next; taking the current and the previous
/// window, a token is good for 5 to 10 minutes, too short to stockpile for a flood, and a
/// nonce is remembered for at most 10 minutes (at 10,000 tokens a second, 6 million ids: the
/// memory store's bound refuses sooner, failing closed).
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(300);

/// The context of the key's derivation from the identity key: changing it voids every
/// outstanding challenge.
const KEY_CONTEXT: &str = "floodgate 2026 privacy pass redemption context key";

/// Time windows and their redemption contexts.
#[derive(Clone, PartialEq, Eq)]
pub struct Windows {
    key: [u8; 32],
    length_ms: u64,
}

impl Windows {
    /// Windows of `length` (at least a millisecond) whose contexts are keyed with `secret`.
    pub fn new(secret: [u8; 32], length: Duration) -> Self {
        let length_ms = u64::try_from(length.as_millis()).unwrap_or(u64::MAX);
        Self {
            key: secret,
            length_ms: length_ms.max(1),
        }
    }

    /// Windows keyed by a key derived from the fleet's identity key.
    pub fn from_identity_key(key: &IdentityKey, length: Duration) -> Self {
        Self::new(key.derive(KEY_CONTEXT), length)
    }

    /// A window's length.
    pub fn length(&self) -> Duration {
        Duration::from_millis(self.length_ms)
    }

    /// The number of the window `now_ms` (Unix ms) falls in.
    pub fn window_at(&self, now_ms: u64) -> u64 {
        now_ms / self.length_ms
    }

    /// Window `number`'s redemption context.
    pub fn context_of(&self, number: u64) -> [u8; 32] {
        *blake3::keyed_hash(&self.key, &number.to_be_bytes()).as_bytes()
    }

    /// The redemption context of the window at `now_ms`: what a challenge made now carries.
    pub fn context_at(&self, now_ms: u64) -> [u8; 32] {
        self.context_of(self.window_at(now_ms))
    }

    /// The contexts a token may answer at `now_ms`: the current window's, then the previous
    /// one's.
    pub fn live(&self, now_ms: u64) -> [[u8; 32]; 2] {
        let current = self.window_at(now_ms);
        [
            self.context_of(current),
            self.context_of(current.saturating_sub(1)),
        ]
    }

    /// Until when (Unix ms) a nonce redeemed at `now_ms` must be remembered: the end of the
    /// next window, when no token live now is live any more.
    pub fn remembered_until(&self, now_ms: u64) -> u64 {
        self.window_at(now_ms)
            .saturating_add(2)
            .saturating_mul(self.length_ms)
    }
}

impl fmt::Debug for Windows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Windows")
            .field("length", &self.length())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: u64 = 60_000;

    fn windows() -> Windows {
        Windows::from_identity_key(&IdentityKey::from_bytes([7; 32]), DEFAULT_WINDOW)
    }

    #[test]
    fn every_instance_sharing_the_key_computes_the_same_contexts() {
        let (a, b) = (windows(), windows());
        let now = 1_700_000_000_000;
        assert_eq!(a.context_at(now), b.context_at(now));
        let other = Windows::from_identity_key(&IdentityKey::from_bytes([8; 32]), DEFAULT_WINDOW);
        assert_ne!(a.context_at(now), other.context_at(now), "another fleet's");
        assert_ne!(
            Windows::new([7; 32], DEFAULT_WINDOW).context_at(now),
            a.context_at(now),
            "the identity key is not used as it is"
        );
    }

    #[test]
    fn a_context_holds_for_its_window_and_is_live_through_the_next() {
        let w = windows();
        let start = 1_700_000_100_000 / (5 * MINUTE) * (5 * MINUTE);
        let minted = w.context_at(start);
        assert_eq!(w.context_at(start + 5 * MINUTE - 1), minted);
        assert_ne!(w.context_at(start + 5 * MINUTE), minted);
        assert_eq!(
            w.live(start + 2 * MINUTE),
            [minted, w.context_at(start - 1)]
        );
        assert_eq!(w.live(start + 9 * MINUTE)[1], minted, "the previous window");
        assert!(!w.live(start + 10 * MINUTE).contains(&minted), "stale");
        assert_eq!(w.remembered_until(start), start + 10 * MINUTE);
        assert_eq!(w.remembered_until(start + 9 * MINUTE), start + 15 * MINUTE);
    }

    #[test]
    fn the_first_window_and_odd_lengths_do_not_break() {
        let w = Windows::new([1; 32], Duration::ZERO);
        assert_eq!(w.length(), Duration::from_millis(1));
        assert_eq!(w.live(0), [w.context_of(0), w.context_of(0)]);
        let long = Windows::new([1; 32], Duration::MAX);
        assert_eq!(long.window_at(u64::MAX), 1);
        assert_eq!(long.remembered_until(u64::MAX), u64::MAX);
        assert_eq!(format!("{w:?}"), "Windows { length: 1ms, .. }");
    }
}
