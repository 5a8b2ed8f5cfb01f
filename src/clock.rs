//! The proxy's clocks: the limiter crate's monotonic microsecond clock and its wall clock.

pub use floodgate_limiter::clock::{
    wall_now, wall_now_ms, wall_now_ns, wall_now_s, wall_now_us, MonotonicClock,
};
