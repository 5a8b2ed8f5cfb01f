//! What a request must be before the gate sees it: it names one valid host, repeats no header
//! Floodgate decides on, has the asterisk-form target only with `OPTIONS`, and its path is
//! rewritten to its normal form ([`normalize_path`]). [`check`] applies every rule, in that
//! order.
//!
//! **Host.** A request's host is an absolute-form target's authority (RFC 9112 §3.2.2), else
//! its `Host` header, else the HTTP/2 `:authority`. Whatever the version (HTTP/1.0 included),
//! a request that names none, or whose host is empty or not a `host[:port]`, gets 400: a
//! request without a usable host would skip every `host = …` policy and route. An
//! absolute-form target without `Host` gets the target's authority as its `Host`, so the
//! policies see the host the backend serves. (Pingora already refuses a second `Host`, a
//! `Host` that differs from the target's authority and userinfo.)
//!
//! **Path.** The normal path is what policies match *and* what is forwarded (the query is
//! kept as sent): `//sendCaptcha`, `/%73endCaptcha` and `/a/../sendCaptcha` all reach the
//! backend as `/sendCaptcha`, so the route the limiter saw is the resource the backend
//! serves. A path with no normal form (a raw `\`, a bad `%`, not starting with `/`) gets 400.
//!
//! **One line.** A header Floodgate decides on holds one value: two lines of `User-Agent`,
//! `Authorization`, `Host` or a header an identity source reads (the snapshot's
//! [`HeaderGuard`]) get 400, since the backend would see both and may read the other one
//! ([`repeated`]).
//!
//! **Asterisk.** The asterisk-form target (`*`, RFC 9112 §3.2.4; HTTP/2's `:path = *`) is for
//! `OPTIONS` only: any other method gets 400, and `OPTIONS *` is answered by the proxy itself
//! once the gate lets it through ([`is_asterisk`]).
//!
//! **Underscore spellings.** CGI, WSGI and the frameworks on them fold `_` into `-`, so a
//! client's `X_Bot_Score` may be read as the `x-bot-score` Floodgate sets. The underscore
//! spellings ([`is_underscore_spelling`]) of the headers in the snapshot's [`HeaderGuard`] are
//! removed on the way to the backend, as nginx's `underscores_in_headers off` would;
//! a verified source's spelling is refused by the gate instead (`identity::Credentials`).

use super::header_guard::HeaderGuard;
// The questions asked of a request's headers, for whoever else refuses by them
// (`[identity.verify]`, #81) and the tests.
#[allow(unused_imports)]
pub(crate) use super::header_guard::repeated;
#[cfg(test)]
use crate::identity::is_underscore_spelling;
use crate::policy::normalize_path;
use http::header::HOST;
use http::uri::Authority;
use http::{HeaderValue, Method, Uri};
use pingora::http::RequestHeader;
use pingora::protocols::http::authority::raw_target_authority;
use pingora::{Error, ErrorType, Result};
use std::borrow::Cow;

/// A 400 whose problem body says `why`.
fn bad_request(why: String) -> Box<Error> {
    Error::explain(ErrorType::HTTPStatus(400), why)
}

/// Applies every rule of the module to `req`, in order: a 400 for the first it breaks.
pub(super) fn check(req: &mut RequestHeader, guard: &HeaderGuard) -> Result<()> {
    require_host(req)?;
    if let Some(name) = guard.repeated(&req.headers) {
        return Err(bad_request(format!(
            "A request may carry one `{name}` header, not several."
        )));
    }
    if is_asterisk(req) && req.method != Method::OPTIONS {
        return Err(bad_request(
            "The target `*` is for OPTIONS requests only (RFC 9112 section 3.2.4).".into(),
        ));
    }
    normalize_target(req)
}

/// Whether `req`'s target is the asterisk form (`OPTIONS * HTTP/1.1`, `:path = *`).
pub(super) fn is_asterisk(req: &RequestHeader) -> bool {
    req.uri.path() == "*"
}

/// What a request that names no host is told.
const NO_HOST: &str = "A request must name its host: a Host header (or :authority in HTTP/2).";
/// What a request whose host is not one is told.
const BAD_HOST: &str = "The Host header is not a valid host.";

/// Refuses a request that names no usable host (see the module's rule), on any version;
/// gives an absolute-form target without `Host` the target's authority as its `Host`.
fn require_host(req: &mut RequestHeader) -> Result<()> {
    if repeated(&req.headers, &HOST) {
        return Err(bad_request("A request must have one Host header.".into()));
    }
    let header = req.headers.get(HOST);
    let target = raw_target_authority(req.raw_path()).authority();
    let authority = req.uri.authority().map(|a| a.as_str().as_bytes());
    let Some(host) = target.or(header.map(HeaderValue::as_bytes)).or(authority) else {
        return Err(bad_request(NO_HOST.into()));
    };
    if !is_host(host) {
        return Err(bad_request(BAD_HOST.into()));
    }
    let missing = match (target, header) {
        (Some(target), None) => {
            Some(HeaderValue::from_bytes(target).map_err(|_| bad_request(BAD_HOST.into()))?)
        }
        _ => None,
    };
    if let Some(value) = missing {
        req.insert_header(HOST, value)?;
    }
    Ok(())
}

/// Whether `value` is a `host[:port]` (RFC 9110 §7.2): a non-empty host, a port of digits,
/// no userinfo.
fn is_host(value: &[u8]) -> bool {
    is_plain_host(value) || is_parsed_host(value)
}

/// Whether `value` is a name or an IPv4 address (letters, digits, `-` and `.`, not only dots)
/// with an optional `:port`: nearly every request's `Host`, told without parsing it into an
/// `Authority` (which copies it). Whatever this says no to, [`is_parsed_host`] decides.
fn is_plain_host(value: &[u8]) -> bool {
    let (host, port) = match value.iter().position(|&b| b == b':') {
        Some(colon) => (&value[..colon], &value[colon + 1..]),
        None => (value, &[][..]),
    };
    host.iter()
        .all(|&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        && host.iter().any(|&b| b != b'.')
        && port.iter().all(u8::is_ascii_digit)
}

/// Whether `value` parses as an `Authority` with a non-empty host, a port of digits and no
/// userinfo.
fn is_parsed_host(value: &[u8]) -> bool {
    let Ok(authority) = Authority::try_from(value) else {
        return false;
    };
    let (text, host) = (authority.as_str(), authority.host());
    if text.contains('@') || host.trim_end_matches('.').is_empty() {
        return false;
    }
    let port = text.get(host.len()..).unwrap_or_default();
    port.is_empty() || port.strip_prefix(':').is_some_and(all_digits)
}

/// Whether every character of `text` is an ASCII digit.
fn all_digits(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_digit())
}

/// Rewrites the request's target to its normal path, keeping the query; refuses a path that
/// has no normal form.
fn normalize_target(req: &mut RequestHeader) -> Result<()> {
    let normal = match normalize_path(req.uri.path()) {
        Ok(Cow::Borrowed(_)) => return Ok(()),
        Ok(Cow::Owned(normal)) => normal,
        Err(e) => return Err(bad_request(format!("The request path is not valid: {e}."))),
    };
    let target = match req.uri.query() {
        Some(query) => format!("{normal}?{query}"),
        None => normal,
    };
    let uri = Uri::try_from(target)
        .map_err(|_| bad_request("The request target is not valid.".into()))?;
    req.set_uri(uri);
    Ok(())
}

#[cfg(test)]
mod tests;
