//! Typed config values: each checks itself while the file is parsed, so toml locates its
//! error (`file:line:column`) with no `Spanned` to carry into the conversion, and the message
//! names its key (a [`Key`] type). A section's file struct holds these; its conversion only
//! fills defaults and checks what spans keys.
//!
//! toml locates an error inside an array at the array, not at the element: the elements of a
//! list stay `Spanned` and are checked in the conversion (with the same message, e.g.
//! [`redis_url`]).

mod address;
mod bounded;
mod duration;
mod fraction;
mod header;
mod key;
mod redis_url;

pub(crate) use address::Address;
pub(crate) use bounded::Bounded;
pub(crate) use duration::{Period, PositivePeriod};
pub(crate) use fraction::Fraction;
pub(crate) use header::{BackendHeader, Header};
pub(crate) use key::{config_keys, Key};
pub(crate) use redis_url::{redis_url, RedisUrl};

/// A list of identity source strings, each located.
pub(crate) type SourceList = toml::Spanned<Vec<toml::Spanned<String>>>;

#[cfg(test)]
mod tests;
