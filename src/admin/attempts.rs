//! Failed token attempts, per peer address: after [`FREE_FAILURES`] failures a peer may try
//! again only every [`SPACING`] (ten tries a second instead of thousands), until it has not
//! failed for [`FORGET_AFTER`]. The table is bounded by [`MAX_PEERS`]: when full, forgotten
//! peers go first, then the one that failed longest ago. Time is an argument, for the tests.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Failures a peer makes before it is slowed.
pub(super) const FREE_FAILURES: u32 = 20;
/// How long a slowed peer waits between tries.
pub(super) const SPACING: Duration = Duration::from_millis(100);
/// How long after its last failure a peer starts afresh.
pub(super) const FORGET_AFTER: Duration = Duration::from_secs(60);
/// The most peers tracked.
pub(super) const MAX_PEERS: usize = 4096;

/// A peer's failures so far, and when it last failed.
#[derive(Debug, Clone, Copy)]
struct Record {
    failures: u32,
    last: Instant,
}

/// Failed attempts by peer.
#[derive(Default)]
pub(super) struct Attempts {
    peers: Mutex<HashMap<IpAddr, Record>>,
}

impl Attempts {
    /// `Ok` when `peer` may try a token at `now`; else how long it must wait.
    pub(super) fn admit(&self, peer: Option<IpAddr>, now: Instant) -> Result<(), Duration> {
        let Some(peer) = peer else { return Ok(()) };
        let peers = self.peers.lock();
        let Some(record) = peers.get(&peer) else {
            return Ok(());
        };
        let since = now.saturating_duration_since(record.last);
        match record.failures >= FREE_FAILURES && since < SPACING {
            true => Err(SPACING - since),
            false => Ok(()),
        }
    }

    /// Notes that `peer` presented no valid token at `now`.
    pub(super) fn failed(&self, peer: Option<IpAddr>, now: Instant) {
        let Some(peer) = peer else { return };
        let mut peers = self.peers.lock();
        if !peers.contains_key(&peer) && peers.len() >= MAX_PEERS {
            make_room(&mut peers, now);
        }
        let record = peers.entry(peer).or_insert(Record {
            failures: 0,
            last: now,
        });
        if now.saturating_duration_since(record.last) >= FORGET_AFTER {
            record.failures = 0;
        }
        record.failures = record.failures.saturating_add(1);
        record.last = now;
    }
}

/// Drops the forgotten peers, or else the one that failed longest ago.
fn make_room(peers: &mut HashMap<IpAddr, Record>, now: Instant) {
    peers.retain(|_, r| now.saturating_duration_since(r.last) < FORGET_AFTER);
    if peers.len() < MAX_PEERS {
        return;
    }
    if let Some(oldest) = peers.iter().min_by_key(|(_, r)| r.last).map(|(ip, _)| *ip) {
        peers.remove(&oldest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u32) -> Option<IpAddr> {
        Some(IpAddr::from(std::net::Ipv4Addr::from(n)))
    }

    #[test]
    fn a_peer_is_slowed_after_its_free_failures_and_forgotten_later() {
        let attempts = Attempts::default();
        let t0 = Instant::now();
        for _ in 0..FREE_FAILURES {
            assert_eq!(attempts.admit(ip(1), t0), Ok(()));
            attempts.failed(ip(1), t0);
        }
        assert_eq!(attempts.admit(ip(1), t0), Err(SPACING));
        let later = t0 + Duration::from_millis(40);
        assert_eq!(attempts.admit(ip(1), later), Err(Duration::from_millis(60)));
        assert_eq!(attempts.admit(ip(2), t0), Ok(()), "another peer");
        assert_eq!(attempts.admit(None, t0), Ok(()));
        let spaced = t0 + SPACING;
        assert_eq!(attempts.admit(ip(1), spaced), Ok(()));
        attempts.failed(ip(1), spaced);
        assert!(attempts.admit(ip(1), spaced).is_err());
        let forgotten = spaced + FORGET_AFTER;
        attempts.failed(ip(1), forgotten);
        assert_eq!(attempts.admit(ip(1), forgotten), Ok(()), "a fresh start");
    }

    #[test]
    fn the_table_stays_bounded_and_keeps_the_recent_failures() {
        let attempts = Attempts::default();
        let t0 = Instant::now();
        for _ in 0..FREE_FAILURES {
            attempts.failed(ip(0), t0 + Duration::from_secs(1));
        }
        for n in 1..=MAX_PEERS as u32 {
            attempts.failed(ip(n), t0);
        }
        assert_eq!(attempts.peers.lock().len(), MAX_PEERS);
        assert!(attempts.admit(ip(0), t0 + Duration::from_secs(1)).is_err());
    }
}
