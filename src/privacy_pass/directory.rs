//! An issuer's keys from its directory (RFC 9578 §4): `/.well-known/private-token-issuer-directory`,
//! JSON listing its `token-keys`. [`DirectoryUrl`] is where it is (https, or http on a loopback
//! address); [`Listed`] what it lists (type 0x0002 keys, each live from its `not-before`);
//! [`Fetcher::fetch`] one bounded read ([`MAX_BODY`], the timeout, no redirect); [`Following`]
//! keeps an [`Issuer`](super::Issuer)'s keys from it in the background: read at start, then
//! every `refresh` (sooner after a failure, and when a held-back key's time comes), the last
//! good list kept on any failure, which is logged at most once a minute. A request never waits
//! for a read.

mod fetcher;
mod following;
mod listed;
mod url;

pub use fetcher::{
    ClientError, DirectoryError, DirectorySettings, Fetcher, DEFAULT_REFRESH, MAX_BODY,
};
pub use following::{Following, WARN_EVERY};
pub use listed::{Listed, ListedError, MAX_KEYS};
pub use url::{DirectoryUrl, UrlError, WELL_KNOWN};
