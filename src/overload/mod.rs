//! Overload protection: each pool's requests in flight are held to a limit (`[overload]`
//! `max_in_flight`: a share of the fleet's number, or found from the latency), requests wait
//! for a slot by priority, and while a pool is overloaded (or an operator says so) the
//! requests that matter least are challenged or shed first. Decides after the gate: a
//! request the gate forwards asks [`Overload::admit`] for a slot.

mod adaptive;
mod admission;
mod lateness;
mod level;
mod pool;
mod registry;
mod settings;
mod shared;
mod slots;
#[cfg(test)]
mod switch_tests;
mod waiting;

pub use admission::{Admission, Asking, Shed};
pub use level::{Level, Switch};
pub use pool::{Permit, PoolGuard, HOLD};
pub use registry::{Overload, PoolLoad, Pools, SwitchError, MAX_TTL};
pub use settings::{
    MaxInFlight, OverloadSettings, DEFAULT_CEILING, DEFAULT_MIN_IN_FLIGHT, DEFAULT_QUEUE_TIME,
    MAX_QUEUE_TIME,
};
pub use shared::{RedisSwitch, SharedSwitch};
pub use slots::Refusal;
