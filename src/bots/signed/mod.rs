//! Signed agents (Web Bot Auth): requests signed with HTTP Message Signatures (RFC 9421) as
//! the IETF Web Bot Auth drafts say and Cloudflare's `web-bot-auth` crate implements them,
//! verified under keys the agent publishes at its
//! `/.well-known/http-message-signatures-directory` (fetched only for allow-listed agents, in
//! the background) or keys written in the config. A verified request is the agent's, whatever
//! address it comes from.

mod agent;
mod directory;
mod fetcher;
mod keys;
mod message;
mod settings;
mod timing;
mod verifier;

#[cfg(test)]
mod tests;

pub use directory::{
    DirectoryError, DEFAULT_MAX_AGE, FETCH_TIMEOUT, MAX_AGE_BOUNDS, MAX_BYTES, WELL_KNOWN,
};
pub use keys::{MIN_REFRESH, RETRY_AFTER, STALE_LIMIT};
pub use message::Message;
pub use settings::{ConfiguredKey, SignedSettings};
pub use timing::{MAX_LIFETIME_SECS, SKEW_SECS};
pub use verifier::{SignedAgents, NONCE_SCOPE, UNKNOWN_AGENT};
