//! What `[overload]` sets: how many requests each pool may hold at once, when a pool counts as
//! overloaded, and how long a request may wait for a slot.

use std::time::Duration;

/// `max_in_flight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxInFlight {
    /// A number: the most requests every instance together sends a pool at once; each
    /// instance takes its share (the number divided by the fleet's size, at least 1).
    Fleet(u32),
    /// `"auto"`: a limit found from each pool's latency, between `min_in_flight` and
    /// `ceiling`.
    Auto {
        /// `min_in_flight`: where the limit starts and the lowest it falls to.
        floor: u32,
        /// `auto_ceiling`: the highest it rises to.
        ceiling: u32,
    },
}

/// `[overload]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverloadSettings {
    /// `max_in_flight`.
    pub max_in_flight: MaxInFlight,
    /// `latency_target`: answers slower than this (on average) make the pool overloaded.
    pub latency_target: Option<Duration>,
    /// `queue_time`: how long a request may wait for a slot before it is shed.
    pub queue_time: Duration,
    /// `max_queued`: how many requests may wait for a pool's slots at once (`None`: 4 × the
    /// pool's limit, at least 64).
    pub max_queued: Option<u32>,
}

/// `queue_time` when not given.
pub const DEFAULT_QUEUE_TIME: Duration = Duration::from_secs(1);
/// The longest `queue_time`.
pub const MAX_QUEUE_TIME: Duration = Duration::from_secs(60);
/// `min_in_flight` when not given.
pub const DEFAULT_MIN_IN_FLIGHT: u32 = 2;
/// `auto_ceiling` when not given.
pub const DEFAULT_CEILING: u32 = 1000;

impl OverloadSettings {
    /// `Retry-After` of a shed request, in whole seconds: the queue time rounded up, at
    /// least 1.
    pub fn retry_after_s(&self) -> u64 {
        let wait = self.queue_time;
        (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
    }

    /// The limit a pool starts at, on an instance of a fleet of `fleet` instances.
    pub fn first_limit(&self, fleet: u32) -> u32 {
        match self.max_in_flight {
            MaxInFlight::Fleet(total) => share(total, fleet),
            MaxInFlight::Auto { floor, .. } => floor.max(1),
        }
    }
}

/// One instance's share of `total` among `fleet` instances: at least 1.
pub(super) fn share(total: u32, fleet: u32) -> u32 {
    (total / fleet.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_instance_takes_its_share_and_at_least_one() {
        assert_eq!(share(8, 1), 8);
        assert_eq!(share(8, 3), 2);
        assert_eq!(share(2, 3), 1);
        assert_eq!(share(8, 0), 8);
    }

    #[test]
    fn retry_after_is_the_queue_time_rounded_up() {
        let settings = |queue_time| OverloadSettings {
            max_in_flight: MaxInFlight::Fleet(4),
            latency_target: None,
            queue_time,
            max_queued: None,
        };
        assert_eq!(settings(Duration::from_millis(1)).retry_after_s(), 1);
        assert_eq!(settings(Duration::from_millis(1500)).retry_after_s(), 2);
        assert_eq!(settings(Duration::from_secs(3)).retry_after_s(), 3);
    }
}
