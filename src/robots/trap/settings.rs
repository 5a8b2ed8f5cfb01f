//! How big the trap's tables grow and how long a read of /robots.txt is remembered.

use std::time::Duration;

/// The trap's bounds, fixed when the tables are made, and `trap_window` (which a reload may
/// change: [`Traps::set_window`](super::Traps::set_window)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrapSettings {
    /// The most readers of /robots.txt remembered (the oldest read goes first). In Redis a
    /// reader costs about 100 bytes, so the default million is about 100 MB at most.
    pub max_readers: usize,
    /// The most trap bans held (the oldest ban goes first), apart from the operator's bans.
    pub max_bans: usize,
    /// IPv6 bans held from which a new IPv6 ban covers the address's /48, not the address.
    pub fold_at: usize,
    /// How long a read of /robots.txt is remembered (`trap_window`).
    pub window: Duration,
}

/// `trap_window`'s default.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(24 * 3600);

impl Default for TrapSettings {
    fn default() -> Self {
        Self::with_bans(100_000)
    }
}

impl TrapSettings {
    /// The defaults, holding at most `max_bans` bans (folding IPv6 past half of them).
    pub fn with_bans(max_bans: usize) -> Self {
        let max_bans = max_bans.max(1);
        Self {
            max_readers: 1_000_000,
            max_bans,
            fold_at: max_bans / 2,
            window: DEFAULT_WINDOW,
        }
    }
}
