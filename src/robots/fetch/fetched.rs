//! What one fetch of a robots.txt brought back, as RFC 9309 §2.3.1 sorts the answers: a file,
//! no rules (4xx), or nothing to go by (5xx, no answer in time, no connection, redirects that
//! lead nowhere).

use bytes::Bytes;

/// The outcome of one fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// A 2xx answer: its body, cut at [`MAX_BODY`](super::MAX_BODY) bytes.
    Rules(Bytes),
    /// A 4xx answer: the site has no rules.
    NoRules,
    /// Nothing to go by.
    Unavailable(Unavailable),
}

/// Why a robots.txt could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    /// The backend answered a status that is neither 2xx, 3xx nor 4xx (a 5xx).
    #[error("the backend answered {0}")]
    Status(u16),
    /// The fetch, redirects and body included, took longer than its timeout.
    #[error("no answer in time")]
    Timeout,
    /// No connection, or the transfer broke off.
    #[error("{0}")]
    Transport(String),
    /// More than [`MAX_REDIRECTS`](super::MAX_REDIRECTS) redirects in a row (a loop).
    #[error("more than {0} redirects")]
    TooManyRedirects(usize),
    /// A redirect whose `Location` leaves the backend, or is not a URL.
    #[error("a redirect to {0:?}, not followed")]
    Redirect(String),
    /// A redirect with no `Location`.
    #[error("a redirect with no Location")]
    NoLocation,
}
