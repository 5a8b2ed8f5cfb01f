//! Typed config values: each checks itself while the file is parsed, so toml locates its
//! error (`file:line:column`) with no `Spanned` to carry into the conversion, and the message
//! names its key (a [`Key`] type). A section's file struct holds these; its conversion only
//! fills defaults and checks what spans keys.

mod address;
mod bounded;
mod duration;
mod key;

pub(crate) use address::Address;
pub(crate) use bounded::Bounded;
pub(crate) use duration::Period;
pub(crate) use key::{config_keys, Key};
