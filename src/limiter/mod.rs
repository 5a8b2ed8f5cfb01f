//! The limiter: the `floodgate-limiter` crate (crates/limiter), named here as the rest of the
//! proxy has always named it.

pub use floodgate_limiter::*;
