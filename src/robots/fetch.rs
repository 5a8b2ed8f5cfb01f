//! Reading each configured host's `/robots.txt` from its backend in the background, as
//! RFC 9309 says a crawler must read it: [`Fetcher::fetch`] is one bounded fetch (size,
//! redirects, time) sorted into [`Fetched`]; [`RobotsCopy::next`] is the keeper's rule (a
//! file replaces the copy, a 4xx means no rules, a failure keeps the last copy for up to
//! [`KEPT_FOR`]); [`Fetcher::spawn`] refreshes one host's copy until its [`Following`] drops.
//! The body is kept as bytes: parsing it is the caller's.

mod complaints;
mod copy;
mod fetched;
mod fetcher;
mod following;
mod settings;
mod target;
#[cfg(test)]
mod tests;

pub use complaints::{RETRY_AFTER, WARN_EVERY};
pub use copy::{RobotsCopy, KEPT_FOR};
pub use fetched::{Fetched, Unavailable};
pub use fetcher::{ClientError, Fetcher, MAX_BODY, MAX_REDIRECTS};
pub use following::{Following, OnChange};
pub use settings::Settings;
pub use target::{Target, TargetError};
