//! The limiter: the `floodgate-limiter` crate (crates/limiter), named here as the rest of the
//! proxy has always named it.

mod json;

pub use floodgate_limiter::*;
pub use json::read_json;
