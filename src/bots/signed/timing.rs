//! Whether a signature is current: `created` not in the future and `expires` not in the
//! past, each within a small clock skew, and a lifetime not longer than a day (its nonce is
//! remembered that long). Pure: the time is an argument.

/// The clock difference tolerated between an agent and Floodgate.
pub const SKEW_SECS: i64 = 30;
/// The longest lifetime (`expires - created`) accepted.
pub const MAX_LIFETIME_SECS: i64 = 24 * 60 * 60;

/// Why a signature is not current.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Stale {
    /// `created` is after now (beyond the skew).
    #[error("created in the future")]
    Future,
    /// `expires` is before now (beyond the skew).
    #[error("expired")]
    Expired,
    /// `expires` is before `created`, or too far after it.
    #[error("lifetime out of bounds")]
    Lifetime,
}

/// Checks `created` and `expires` (Unix seconds) at `now`; Ok is when the signature's nonce
/// may be forgotten (Unix seconds).
pub(crate) fn current(created: i64, expires: i64, now: i64) -> Result<i64, Stale> {
    if created > now.saturating_add(SKEW_SECS) {
        return Err(Stale::Future);
    }
    if expires < now.saturating_sub(SKEW_SECS) {
        return Err(Stale::Expired);
    }
    let lifetime = expires.saturating_sub(created);
    if !(0..=MAX_LIFETIME_SECS).contains(&lifetime) {
        return Err(Stale::Lifetime);
    }
    Ok(expires.saturating_add(SKEW_SECS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_is_current_within_the_skew() {
        let now = 1_800_000_000;
        assert_eq!(current(now, now + 60, now), Ok(now + 90));
        assert_eq!(current(now + 30, now + 60, now), Ok(now + 90));
        assert_eq!(current(now + 31, now + 60, now), Err(Stale::Future));
        assert_eq!(current(now - 100, now - 30, now), Ok(now));
        assert_eq!(current(now - 100, now - 31, now), Err(Stale::Expired));
        assert_eq!(current(now, now - 1, now - 10), Err(Stale::Lifetime));
        assert_eq!(
            current(now, now + MAX_LIFETIME_SECS + 1, now),
            Err(Stale::Lifetime)
        );
        assert_eq!(current(i64::MIN, i64::MAX, now), Err(Stale::Lifetime));
    }
}
