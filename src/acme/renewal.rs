//! When a certificate is ordered: when there is none, or when it is within `renew_before` of
//! its expiry (a third of its lifetime by default), less a jitter of up to a tenth of that
//! window drawn from the domain's name, so a fleet's many domains do not all renew in one
//! minute. After a failure the domain waits, twice as long each time, up to [`MAX_WAIT`].
//! Time is an argument: nothing here reads a clock.

use crate::tls::Certified;
use std::time::Duration;

/// The first wait after a failed order.
pub(super) const FIRST_WAIT: Duration = Duration::from_secs(10);
/// The longest wait between orders of one domain.
pub(super) const MAX_WAIT: Duration = Duration::from_secs(3600);

/// Whether `domain`, holding `current`, is due an order at `now` (Unix seconds).
pub(super) fn due(
    domain: &str,
    current: Option<&Certified>,
    renew_before: Option<Duration>,
    now: i64,
) -> bool {
    let Some(current) = current else {
        return true;
    };
    let window = match renew_before {
        Some(window) => window.as_secs() as i64,
        None => current.lifetime().max(0) / 3,
    };
    now >= current.not_after - window - jitter(domain, window)
}

/// Up to a tenth of `window`, from `domain`'s name.
fn jitter(domain: &str, window: i64) -> i64 {
    let spread = window / 10;
    if spread <= 0 {
        return 0;
    }
    let hash = blake3::hash(domain.as_bytes());
    let draw = u64::from_le_bytes(hash.as_bytes()[..8].try_into().unwrap_or([0; 8]));
    (draw % spread as u64) as i64
}

/// A domain's failures in a row, and when it may be ordered again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Backoff {
    /// How long the last wait was.
    pub wait: Duration,
    /// When the next order may be placed (Unix seconds).
    pub until: i64,
}

impl Backoff {
    /// The wait after one more failure at `now`, following `earlier` (the last one, if any).
    pub(super) fn after_failure(earlier: Option<Backoff>, now: i64) -> Self {
        let wait = match earlier {
            None => FIRST_WAIT,
            Some(b) => (b.wait * 2).min(MAX_WAIT),
        };
        Self {
            wait,
            until: now + wait.as_secs() as i64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn certified(not_before: i64, not_after: i64) -> Certified {
        let cert = rcgen::generate_simple_self_signed(vec!["a.example".to_owned()]).unwrap();
        let (chain, key) = (cert.cert.pem(), cert.signing_key.serialize_pem());
        let mut certified = Certified::from_pem(chain.as_bytes(), key.as_bytes()).unwrap();
        certified.not_before = not_before;
        certified.not_after = not_after;
        certified
    }

    #[test]
    fn a_missing_certificate_is_due_at_once() {
        assert!(due("a.example", None, None, 0));
    }

    #[test]
    fn renews_in_the_last_third_by_default_with_a_bounded_jitter() {
        let day = 86_400;
        let cert = certified(0, 90 * day);
        assert!(!due("a.example", Some(&cert), None, 50 * day));
        assert!(due("a.example", Some(&cert), None, 60 * day));
        let early = (0..1000)
            .map(|i| format!("d{i}.example"))
            .filter(|d| due(d, Some(&cert), None, 60 * day - 2 * day));
        let count = early.count();
        assert!(
            count > 100 && count < 900,
            "the jitter spreads renewals: {count}"
        );
        assert!(
            !due("a.example", Some(&cert), None, 57 * day - 1),
            "at most a tenth earlier"
        );
    }

    #[test]
    fn renew_before_sets_the_window() {
        let day = 86_400;
        let cert = certified(0, 90 * day);
        let week = Some(Duration::from_secs(7 * day as u64));
        assert!(!due("a.example", Some(&cert), week, 80 * day));
        assert!(due("a.example", Some(&cert), week, 83 * day));
    }

    #[test]
    fn failures_wait_longer_each_time_up_to_a_cap() {
        let first = Backoff::after_failure(None, 100);
        assert_eq!(
            first,
            Backoff {
                wait: FIRST_WAIT,
                until: 110
            }
        );
        let second = Backoff::after_failure(Some(first), 110);
        assert_eq!(second.wait, FIRST_WAIT * 2);
        let mut b = second;
        for _ in 0..20 {
            b = Backoff::after_failure(Some(b), 0);
        }
        assert_eq!(b.wait, MAX_WAIT);
    }
}
