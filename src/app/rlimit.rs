//! The open-file limit against `server.max_connections`.
//!
//! A process usually starts with a soft `RLIMIT_NOFILE` of 1,024, far below the 10,000
//! connections Floodgate admits by default: past the limit, `accept` fails with "Too many open
//! files" and new clients wait in the backlog. At start the soft limit is raised to the hard
//! one (as nginx's `worker_rlimit_nofile` and Go's runtime do). If the limit still cannot hold
//! `max_connections` (each downstream connection may hold one to a backend, plus a reserve for
//! the proxy's own descriptors: listeners, runtimes, the admin listener, Redis, health probes,
//! logs and idle backend connections kept for reuse), the cap is lowered to fit: a warning
//! says so when `server.max_connections` was written in the config, an info line when it is
//! the default (a stock machine's hard limit of a few thousand is no fault to act on).

use nix::sys::resource::{getrlimit, setrlimit, Resource, RLIM_INFINITY};

/// Descriptors kept for the proxy itself, beyond two per admitted connection; half the limit
/// when the limit is below twice this.
pub(crate) const RESERVE: u64 = 256;

/// Where the soft limit goes when the hard one is unlimited and `fs.nr_open` (the most
/// `setrlimit` accepts then) cannot be read: Linux's default.
const NR_OPEN_DEFAULT: u64 = 1 << 20;

/// Why the open-file limit could not be read or raised.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RlimitError {
    /// `getrlimit(RLIMIT_NOFILE)` failed.
    #[error("cannot read the open-file limit: {0}")]
    Read(nix::Error),
    /// `setrlimit(RLIMIT_NOFILE)` refused the hard limit as the soft one.
    #[error("cannot raise the open-file limit from {from} to {to}: {source}")]
    Raise {
        from: u64,
        to: u64,
        source: nix::Error,
    },
}

/// The most connections `limit` descriptors can hold: two per connection (the client's and
/// one to a backend) after the reserve.
pub(crate) fn connections_within(limit: u64) -> u64 {
    let reserve = RESERVE.min(limit / 2);
    (limit - reserve) / 2
}

/// The cap to enforce under `limit` descriptors: `max`, or less when `limit` cannot hold it
/// (never below 1).
pub(crate) fn fitted(max: usize, limit: u64) -> usize {
    let within = usize::try_from(connections_within(limit)).unwrap_or(usize::MAX);
    max.min(within).max(1)
}

/// Raises the soft open-file limit to the hard one; the soft limit in force after, and what it
/// was before when it was raised.
pub(crate) fn raise_nofile() -> Result<(u64, Option<u64>), RlimitError> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).map_err(RlimitError::Read)?;
    let target = match hard {
        RLIM_INFINITY => nr_open().max(soft),
        hard => hard,
    };
    if soft != RLIM_INFINITY && soft < target {
        setrlimit(Resource::RLIMIT_NOFILE, target, hard).map_err(|source| RlimitError::Raise {
            from: soft,
            to: target,
            source,
        })?;
        return Ok((target, Some(soft)));
    }
    Ok((soft, None))
}

/// The most descriptors a process may have open when its hard limit is unlimited.
fn nr_open() -> u64 {
    let text = std::fs::read_to_string("/proc/sys/fs/nr_open").unwrap_or_default();
    text.trim().parse().unwrap_or(NR_OPEN_DEFAULT)
}

/// Raises the open-file limit and says how many connections to admit: `max`, or what the
/// limit can hold when that is less (a warning when `max` was `set` in the config, an info
/// line when it is the default).
pub(crate) fn admit_within_nofile(max: usize, set: bool) -> usize {
    let limit = match raise_nofile() {
        Ok((limit, Some(from))) => {
            log::info!("raised the open-file limit (RLIMIT_NOFILE) from {from} to {limit}");
            limit
        }
        Ok((limit, None)) => limit,
        Err(e) => {
            log::warn!("{e}");
            match getrlimit(Resource::RLIMIT_NOFILE) {
                Ok((soft, _)) => soft,
                Err(_) => return max,
            }
        }
    };
    let cap = fitted(max, limit);
    if cap < max {
        let level = if set {
            log::Level::Warn
        } else {
            log::Level::Info
        };
        log::log!(
            level,
            "the open-file limit (RLIMIT_NOFILE) is {limit}: server.max_connections lowered \
             from {max} to {cap} ({}; two descriptors per connection and {} for the proxy \
             itself); raise the hard limit (ulimit -Hn, systemd LimitNOFILE=) to admit more",
            if set { "as written" } else { "its default" },
            RESERVE.min(limit / 2)
        );
    }
    cap
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_connection_takes_two_descriptors_after_the_reserve() {
        assert_eq!(connections_within(1024), (1024 - 256) / 2);
        assert_eq!(connections_within(1_048_576), (1_048_576 - 256) / 2);
        // Below twice the reserve, half the limit is kept.
        assert_eq!(connections_within(256), 64);
        assert_eq!(connections_within(512), 128);
        assert_eq!(connections_within(0), 0);
        assert_eq!(connections_within(RLIM_INFINITY), (RLIM_INFINITY - 256) / 2);
    }

    #[test]
    fn the_cap_is_lowered_only_when_the_limit_cannot_hold_it() {
        assert_eq!(fitted(10_000, 1024), 384);
        assert_eq!(fitted(10_000, 20_256), 10_000);
        assert_eq!(fitted(10_000, 20_255), 9_999);
        assert_eq!(fitted(3, 256), 3);
        assert_eq!(fitted(10_000, 1), 1, "never zero");
    }

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let (limit, _) = raise_nofile().unwrap();
        let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
        assert_eq!(limit, soft);
        assert!(soft == hard || (hard == RLIM_INFINITY && soft >= nr_open()));
    }
}
