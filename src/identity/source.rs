//! Identity sources as written in the config (`header:x-api-key`, `jwt:sub`, `ip`, composites
//! like `header:x-tenant+ip`), and how each reads its raw value from a request.
//!
//! One spelling rule, so that a caller cannot earn fresh buckets by re-spelling one value:
//! surrounding ASCII whitespace (space, tab, CR, LF, FF) is trimmed from header values, from
//! query values after percent-decoding, and from cookie names and values; a cookie value then
//! wrapped in double quotes loses that one pair (RFC 6265 `cookie-value`). So `sid=dave`,
//! `sid= dave ` and `sid="dave"` are one caller. Nothing inside the value is changed.

use super::facts::Fact;
use super::jwt::TokenError;
use super::sender_source::SenderSource;
use super::source_error::SourceError;
use super::{Request, TokenState};
use http::header::{HeaderMap, HeaderName, COOKIE};
use std::borrow::Cow;
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;
use std::sync::Arc;

/// Values longer than this are not believed to identify anyone: the source yields nothing.
pub const MAX_VALUE_LEN: usize = 4096;

/// The name of the `pass` source: its spec's tag, the prefix of a pass holder's digest.
pub(super) const PASS: &str = "pass";

/// One place an identity may come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The value of a request header, such as an API key.
    Header(HeaderName),
    /// The value of a cookie.
    Cookie(String),
    /// The value of a query-string parameter.
    Query(String),
    /// A claim of the verified bearer token.
    Jwt(String),
    /// The client's address, folded to a network prefix.
    Ip,
    /// A fact of the request (`path`, `method`, `host`) or a constant (`const:<name>`).
    Fact(Fact),
    /// What is known of the sender (`asn`, `country`, `bot`): one bucket for a whole network,
    /// country or crawler operator, however many addresses it uses.
    Sender(SenderSource),
    /// The id of the challenge pass the request carried (`pass`): one bucket per solved
    /// browser, however many addresses it moves through.
    Pass,
}

/// Several sources that identify a caller together (`header:x-tenant+ip`): all must yield.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSpec {
    parts: Vec<Source>,
    /// The spec as written, the prefix of its identities' digests (kept to avoid formatting
    /// it on every request; shared with the views that name callers by it).
    tag: Arc<str>,
}

impl FromStr for Source {
    type Err = SourceError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "ip" => return Ok(Source::Ip),
            PASS => return Ok(Source::Pass),
            _ => {}
        }
        if let Some(sender) = SenderSource::ALL.into_iter().find(|s| s.word() == text) {
            return Ok(Source::Sender(sender));
        }
        if let Some(fact) = Fact::parse(text)? {
            return Ok(Source::Fact(fact));
        }
        let (kind, name) = text
            .split_once(':')
            .ok_or_else(|| SourceError::UnknownKind(text.to_owned()))?;
        let bad_name = || SourceError::BadName(text.to_owned());
        if name.is_empty() || name.contains(['+', ' ']) {
            return Err(bad_name());
        }
        match kind {
            "header" => HeaderName::from_bytes(name.as_bytes())
                .map(Source::Header)
                .map_err(|_| bad_name()),
            "cookie" => Ok(Source::Cookie(name.to_owned())),
            "query" => Ok(Source::Query(name.to_owned())),
            "jwt" => Ok(Source::Jwt(name.to_owned())),
            _ => Err(SourceError::UnknownKind(text.to_owned())),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Header(name) => write!(f, "header:{name}"),
            Source::Cookie(name) => write!(f, "cookie:{name}"),
            Source::Query(name) => write!(f, "query:{name}"),
            Source::Jwt(claim) => write!(f, "jwt:{claim}"),
            Source::Ip => f.write_str("ip"),
            Source::Fact(fact) => fact.fmt(f),
            Source::Sender(sender) => f.write_str(sender.word()),
            Source::Pass => f.write_str(PASS),
        }
    }
}

impl FromStr for SourceSpec {
    type Err = SourceError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let parts: Vec<Source> = text.split('+').map(str::parse).collect::<Result<_, _>>()?;
        let tag = parts
            .iter()
            .map(Source::to_string)
            .collect::<Vec<_>>()
            .join("+")
            .into();
        Ok(SourceSpec { parts, tag })
    }
}

impl fmt::Display for SourceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.tag)
    }
}

impl SourceSpec {
    /// The spec of `source` alone.
    pub fn of(source: Source) -> Self {
        let tag = source.to_string().into();
        Self {
            parts: vec![source],
            tag,
        }
    }

    /// The spec as written (`header:x-tenant+ip`).
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// The spec as written, shared: what a view kept past the request (the offenders) names
    /// its callers' source by, without copying it.
    pub fn shared_tag(&self) -> Arc<str> {
        Arc::clone(&self.tag)
    }

    /// The sources that identify a caller together, in order.
    pub fn parts(&self) -> &[Source] {
        &self.parts
    }

    /// Whether any part reads the host.
    pub fn uses_host(&self) -> bool {
        self.parts.iter().any(|p| *p == Source::Fact(Fact::Host))
    }

    /// Whether any part reads the HTTP/2 fingerprint (`h2fp`).
    pub fn uses_h2fp(&self) -> bool {
        self.parts.contains(&Source::Sender(SenderSource::H2fp))
    }

    /// Whether any part reads the bearer token.
    pub fn uses_jwt(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Source::Jwt(_)))
    }

    /// The combined raw value (identity/digest.rs), if every part yields one.
    pub fn value<'r>(
        &self,
        req: &'r Request<'_>,
        folding: &IpFolding,
    ) -> Result<Option<Cow<'r, [u8]>>, TokenError> {
        if let [single] = self.parts.as_slice() {
            // The common case, without a list: a single part's value is its own.
            return single.value(req, folding);
        }
        let mut values = Vec::with_capacity(self.parts.len());
        for part in &self.parts {
            let Some(value) = part.value(req, folding)? else {
                return Ok(None);
            };
            values.push(value);
        }
        Ok(Some(combined(values)))
    }
}

impl Source {
    /// This source's raw value in `req`: `None` when absent, empty or too long; an error
    /// when it is a bearer token that does not verify.
    pub fn value<'r>(
        &self,
        req: &'r Request<'_>,
        folding: &IpFolding,
    ) -> Result<Option<Cow<'r, [u8]>>, TokenError> {
        let value: Option<Cow<'r, [u8]>> = match self {
            Source::Header(name) => req
                .headers
                .get(name)
                .map(|v| Cow::Borrowed(v.as_bytes().trim_ascii())),
            Source::Cookie(name) => cookie_value(req.headers, name).map(Cow::Borrowed),
            Source::Query(name) => req
                .query
                .and_then(|q| query_value(q, name))
                .map(|v| Cow::Owned(v.into_bytes())),
            Source::Ip => req.client_ip.map(|ip| Cow::Owned(folding.fold(ip))),
            Source::Fact(fact) => fact.value(req),
            Source::Sender(sender) => sender.value(req.traits()),
            Source::Pass => req.pass().map(|pass| Cow::Borrowed(&pass.id.0[..])),
            Source::Jwt(claim) => match req.token() {
                TokenState::Absent => None,
                TokenState::Invalid(e) => return Err(e.clone()),
                TokenState::Valid(claims) => claims.get(claim).map(claim_bytes),
            },
        };
        Ok(value.filter(|v| !v.is_empty() && v.len() <= MAX_VALUE_LEN))
    }
}

/// The combined raw value of a spec's parts' `values`, in order (identity/digest.rs): a single
/// part's value is its own; each part of a composite is prefixed by its length (u32,
/// little-endian), so that no two combinations run together.
pub(super) fn combined<'v>(mut values: Vec<Cow<'v, [u8]>>) -> Cow<'v, [u8]> {
    if values.len() == 1 {
        return values.swap_remove(0);
    }
    let mut all = Vec::with_capacity(values.iter().map(|v| v.len() + 4).sum());
    for value in &values {
        all.extend_from_slice(&(value.len() as u32).to_le_bytes());
        all.extend_from_slice(value);
    }
    Cow::Owned(all)
}

fn claim_bytes(value: &serde_json::Value) -> Cow<'_, [u8]> {
    match value {
        serde_json::Value::String(s) => Cow::Borrowed(s.as_bytes()),
        other => Cow::Owned(other.to_string().into_bytes()),
    }
}

/// The value of cookie `name` in the request's `Cookie` headers (RFC 6265 cookie-string):
/// name and value trimmed, a quoted value unquoted (see the module doc).
pub fn cookie_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a [u8]> {
    cookies_named(headers, name).next()
}

/// How many cookies named `name` the request's `Cookie` headers hold.
pub(super) fn cookie_count(headers: &HeaderMap, name: &str) -> usize {
    cookies_named(headers, name).count()
}

/// The values of the cookies named `name`, in order, each read as [`cookie_value`] says.
fn cookies_named<'a, 'n>(
    headers: &'a HeaderMap,
    name: &'n str,
) -> impl Iterator<Item = &'a [u8]> + use<'a, 'n> {
    headers
        .get_all(COOKIE)
        .iter()
        .flat_map(|header| header.as_bytes().split(|&b| b == b';'))
        .filter_map(move |pair| {
            let eq = pair.iter().position(|&b| b == b'=')?;
            let (key, value) = (&pair[..eq], &pair[eq + 1..]);
            (key.trim_ascii() == name.as_bytes()).then(|| unquote(value.trim_ascii()))
        })
}

/// `value` without one pair of surrounding double quotes, if it has them.
pub(super) fn unquote(value: &[u8]) -> &[u8] {
    match value {
        [b'"', inner @ .., b'"'] => inner,
        _ => value,
    }
}

/// The first value of parameter `name` in a query string, percent-decoded and trimmed.
fn query_value(query: &str, name: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.trim_ascii().to_owned())
}

/// How client addresses are grouped: every address in one prefix is one caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpFolding {
    /// Prefix length kept of IPv4 addresses (32 keeps the whole address).
    pub ipv4_prefix: u8,
    /// Prefix length kept of IPv6 addresses (64 groups one customer's network).
    pub ipv6_prefix: u8,
}

impl Default for IpFolding {
    fn default() -> Self {
        Self {
            ipv4_prefix: 32,
            ipv6_prefix: 64,
        }
    }
}

impl IpFolding {
    /// The address's network prefix as bytes: masked octets followed by the prefix length.
    pub fn fold(&self, ip: IpAddr) -> Vec<u8> {
        match ip.to_canonical() {
            IpAddr::V4(v4) => masked(&v4.octets(), self.ipv4_prefix),
            IpAddr::V6(v6) => masked(&v6.octets(), self.ipv6_prefix),
        }
    }
}

fn masked(octets: &[u8], prefix: u8) -> Vec<u8> {
    let mut out: Vec<u8> = octets
        .iter()
        .enumerate()
        .map(|(i, &octet)| {
            let kept_bits = usize::from(prefix).saturating_sub(i * 8).min(8);
            let mask = if kept_bits == 0 {
                0
            } else {
                0xffu8 << (8 - kept_bits)
            };
            octet & mask
        })
        .collect();
    out.push(prefix);
    out
}

#[cfg(test)]
mod tests;
