//! The proxy's clocks: the limiter crate's monotonic microsecond clock and its wall clock.

pub use floodgate_limiter::clock::{wall_now_us, MonotonicClock};
