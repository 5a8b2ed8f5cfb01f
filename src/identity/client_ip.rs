//! The client's address: the TCP peer, or, when the peer is a trusted proxy, the nearest
//! untrusted hop of the one forwarding header the operator named (`identity.ip.header`), read
//! right to left.
//!
//! Only that header is read: a client that adds `Forwarded` behind a load balancer writing
//! `X-Forwarded-For` is not believed, since the balancer passes the client's header through
//! untouched. Entries left of the first untrusted hop were written by whoever sent the request
//! to that hop: they are never believed. A request from an untrusted peer is identified by the
//! peer, whatever its headers say.

use super::Ja4;
use http::header::{HeaderMap, HeaderName};
use ipnet::IpNet;
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// At most this many hops are read from the right of the forwarding header.
const MAX_HOPS: usize = 32;

/// The forwarding header trusted proxies write, and how it lists hops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForwardingHeader {
    /// RFC 7239 `Forwarded`: the `for=` node of each element.
    Forwarded,
    /// A header listing addresses separated by commas: `X-Forwarded-For`, `X-Real-IP` (a list
    /// of one) or any other name. Several lines read as one list, in order.
    List(HeaderName),
}

impl Default for ForwardingHeader {
    fn default() -> Self {
        ForwardingHeader::List(HeaderName::from_static("x-forwarded-for"))
    }
}

/// A forwarding header name that is not a valid header name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a header name")]
pub struct ForwardingHeaderError(String);

impl FromStr for ForwardingHeader {
    type Err = ForwardingHeaderError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let name = HeaderName::from_bytes(text.trim().as_bytes())
            .map_err(|_| ForwardingHeaderError(text.to_owned()))?;
        Ok(match name == http::header::FORWARDED {
            true => ForwardingHeader::Forwarded,
            false => ForwardingHeader::List(name),
        })
    }
}

impl fmt::Display for ForwardingHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ForwardingHeader::Forwarded => f.write_str("forwarded"),
            ForwardingHeader::List(name) => f.write_str(name.as_str()),
        }
    }
}

/// A request's client, resolved once by its front door: the TCP peer, whether it is a
/// trusted proxy, and the client address behind it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Client {
    /// The TCP peer's address (`None`: not a TCP client).
    pub peer: Option<IpAddr>,
    /// Whether the peer is a trusted proxy (its forwarding headers are believed).
    pub trusted_peer: bool,
    /// The client address: the peer, or the nearest untrusted forwarded hop.
    pub ip: Option<IpAddr>,
}

/// Resolves the client address behind configured trusted proxies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientIpResolver {
    trusted: Vec<IpNet>,
    header: ForwardingHeader,
    /// `identity.ja4_header`: where trusted proxies put the client's JA4.
    ja4_header: Option<HeaderName>,
}

impl ClientIpResolver {
    /// A resolver that believes `header`, and no other forwarding header, only from peers
    /// inside `trusted`.
    pub fn new(trusted: Vec<IpNet>, header: ForwardingHeader) -> Self {
        Self {
            trusted,
            header,
            ja4_header: None,
        }
    }

    /// The same resolver, believing the client's JA4 in `header` from trusted proxies.
    pub fn with_ja4_header(mut self, header: Option<HeaderName>) -> Self {
        self.ja4_header = header;
        self
    }

    /// What trusted proxies say of a request's JA4: `None` when nothing is believed (the
    /// peer is not a trusted proxy, or no `identity.ja4_header`), else the JA4 `headers`
    /// hold (`Some(None)` if it is missing or not a JA4).
    pub fn forwarded_ja4(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<Option<Ja4>> {
        self.forwarded_ja4_from(self.trusts(peer), headers)
    }

    /// [`forwarded_ja4`](Self::forwarded_ja4) of a request whose peer is known to be a
    /// trusted proxy (`trusted_peer`) or not.
    pub fn forwarded_ja4_from(
        &self,
        trusted_peer: bool,
        headers: &HeaderMap,
    ) -> Option<Option<Ja4>> {
        let header = self.ja4_header.as_ref().filter(|_| trusted_peer)?;
        let text = headers.get(header).and_then(|v| v.to_str().ok());
        Some(text.and_then(|t| t.trim().parse().ok()))
    }

    /// The trusted proxy networks.
    pub fn trusted(&self) -> &[IpNet] {
        &self.trusted
    }

    /// The one forwarding header read from trusted proxies.
    pub fn header(&self) -> &ForwardingHeader {
        &self.header
    }

    /// `identity.ja4_header`, if trusted proxies tell the client's JA4.
    pub fn ja4_header(&self) -> Option<&HeaderName> {
        self.ja4_header.as_ref()
    }

    fn is_trusted(&self, ip: IpAddr) -> bool {
        self.trusted.iter().any(|net| net.contains(&ip))
    }

    /// Whether `peer`, a request's TCP peer, is a trusted proxy.
    pub fn trusts(&self, peer: Option<IpAddr>) -> bool {
        peer.is_some_and(|ip| self.is_trusted(ip.to_canonical()))
    }

    /// The client of a request from `peer` with `headers`, resolved once for the whole
    /// request.
    pub fn client(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Client {
        let trusted_peer = self.trusts(peer);
        Client {
            peer,
            trusted_peer,
            ip: peer.map(|peer| self.behind(peer.to_canonical(), trusted_peer, headers)),
        }
    }

    /// The client address of a request from `peer` with `headers`.
    pub fn resolve(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<IpAddr> {
        let peer = peer?.to_canonical();
        Some(self.behind(peer, self.is_trusted(peer), headers))
    }

    /// The client address behind `peer` (canonical; `trusted` if a trusted proxy).
    fn behind(&self, peer: IpAddr, trusted: bool, headers: &HeaderMap) -> IpAddr {
        if !trusted {
            return peer;
        }
        let hops = forwarded_hops(headers, &self.header);
        let mut nearest = peer;
        for hop in hops.iter().rev().take(MAX_HOPS) {
            match hop {
                // An unreadable hop ends what can be believed: the last trusted hop is the
                // client as far as anyone can tell.
                None => return nearest,
                Some(ip) if !self.is_trusted(*ip) => return *ip,
                Some(ip) => nearest = *ip,
            }
        }
        nearest
    }
}

/// The hops `header` lists in `headers`, nearest last; every line of it, in order. `None`
/// marks a hop that is not an address (`unknown`, `_hidden`, junk).
pub fn forwarded_hops(headers: &HeaderMap, header: &ForwardingHeader) -> Vec<Option<IpAddr>> {
    let (name, element): (&HeaderName, HopReader) = match header {
        ForwardingHeader::Forwarded => (&http::header::FORWARDED, forwarded_for),
        ForwardingHeader::List(name) => (name, listed_node),
    };
    headers
        .get_all(name)
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b','))
        .map(element)
        .collect()
}

/// Reads the address of one comma-separated entry of a forwarding header.
type HopReader = fn(&[u8]) -> Option<IpAddr>;

/// One entry of an address list (`X-Forwarded-For`, `X-Real-IP`, …).
fn listed_node(entry: &[u8]) -> Option<IpAddr> {
    std::str::from_utf8(entry).ok().and_then(parse_node)
}

/// The `for=` node of one `Forwarded` element.
fn forwarded_for(element: &[u8]) -> Option<IpAddr> {
    let element = std::str::from_utf8(element).ok()?;
    element.split(';').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("for")
            .then(|| parse_node(value))?
    })
}

/// An address as written in a forwarding header: `192.0.2.1`, `192.0.2.1:4711`,
/// `2001:db8::1`, `[2001:db8::1]:4711`, optionally in double quotes.
fn parse_node(text: &str) -> Option<IpAddr> {
    let text = text.trim().trim_matches('"');
    if let Some(rest) = text.strip_prefix('[') {
        return rest
            .split_once(']')?
            .0
            .parse::<IpAddr>()
            .ok()
            .map(|ip| ip.to_canonical());
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip.to_canonical());
    }
    // IPv4 with a port.
    let (host, port) = text.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn resolver(trusted: &[&str]) -> ClientIpResolver {
        resolver_of(trusted, "x-forwarded-for")
    }

    fn resolver_of(trusted: &[&str], header: &str) -> ClientIpResolver {
        let trusted = trusted.iter().map(|t| t.parse().unwrap()).collect();
        ClientIpResolver::new(trusted, header.parse().unwrap())
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, HeaderValue::from_static(v));
        }
        map
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_claims() {
        let r = resolver(&["10.0.0.0/8"]);
        let h = headers(&[("x-forwarded-for", "1.2.3.4")]);
        assert_eq!(r.resolve(ip("203.0.113.9"), &h), ip("203.0.113.9"));
    }

    #[test]
    fn behind_trusted_proxies_the_nearest_untrusted_hop_is_the_client() {
        let r = resolver(&["10.0.0.0/8"]);
        let h = headers(&[("x-forwarded-for", "6.6.6.6, 198.51.100.7, 10.1.1.1")]);
        assert_eq!(
            r.resolve(ip("10.0.0.2"), &h),
            ip("198.51.100.7"),
            "the spoofed 6.6.6.6 is ignored"
        );
    }

    #[test]
    fn several_xff_headers_read_as_one_list() {
        let r = resolver(&["10.0.0.0/8"]);
        let h = headers(&[
            ("x-forwarded-for", "6.6.6.6"),
            ("x-forwarded-for", "198.51.100.7"),
        ]);
        assert_eq!(r.resolve(ip("10.0.0.2"), &h), ip("198.51.100.7"));
    }

    #[test]
    fn only_the_configured_header_is_read() {
        let h = headers(&[
            ("forwarded", "for=6.6.6.6"),
            ("x-forwarded-for", "198.51.100.7"),
            ("x-real-ip", "192.0.2.9"),
        ]);
        let peer = ip("10.0.0.2");
        let by = |header| resolver_of(&["10.0.0.0/8"], header).resolve(peer, &h);
        assert_eq!(
            by("x-forwarded-for"),
            ip("198.51.100.7"),
            "Forwarded is ignored"
        );
        assert_eq!(by("Forwarded"), ip("6.6.6.6"));
        assert_eq!(by("x-real-ip"), ip("192.0.2.9"));
        assert_eq!(
            by("x-client-ip"),
            peer,
            "a header nobody sent names the peer"
        );
        assert!("bad header".parse::<ForwardingHeader>().is_err());
    }

    #[test]
    fn forwarded_is_parsed() {
        let r = resolver_of(&["10.0.0.0/8", "2001:db8:ffff::/48"], "forwarded");
        let h = headers(&[
            (
                "forwarded",
                "for=6.6.6.6, for=\"[2001:db8:1::5]:4711\";proto=https, For=\"10.2.2.2:80\"",
            ),
            ("x-forwarded-for", "7.7.7.7"),
        ]);
        assert_eq!(r.resolve(ip("10.0.0.2"), &h), ip("2001:db8:1::5"));
    }

    #[test]
    fn an_unreadable_hop_stops_the_walk_at_the_last_trusted_one() {
        let r = resolver(&["10.0.0.0/8"]);
        let h = headers(&[("x-forwarded-for", "1.2.3.4, garbage, 10.3.3.3")]);
        assert_eq!(r.resolve(ip("10.0.0.2"), &h), ip("10.3.3.3"));
        let r = resolver_of(&["10.0.0.0/8"], "forwarded");
        let h = headers(&[("forwarded", "for=unknown")]);
        assert_eq!(r.resolve(ip("10.0.0.2"), &h), ip("10.0.0.2"));
    }

    #[test]
    fn a_trusted_peer_without_headers_is_the_client() {
        let r = resolver(&["127.0.0.0/8"]);
        assert_eq!(
            r.resolve(ip("127.0.0.1"), &HeaderMap::new()),
            ip("127.0.0.1")
        );
    }

    #[test]
    fn nodes_are_read_in_every_documented_form() {
        assert_eq!(parse_node("192.0.2.1"), ip("192.0.2.1"));
        assert_eq!(parse_node(" \"192.0.2.1:4711\" "), ip("192.0.2.1"));
        assert_eq!(parse_node("2001:db8::1"), ip("2001:db8::1"));
        assert_eq!(parse_node("[2001:db8::1]:4711"), ip("2001:db8::1"));
        assert_eq!(parse_node("::ffff:192.0.2.1"), ip("192.0.2.1"));
        assert_eq!(parse_node("_hidden"), None);
        assert_eq!(parse_node("300.1.1.1"), None);
    }

    #[test]
    fn a_ja4_header_is_believed_only_from_trusted_proxies() {
        let ja4 = "t13d1516h2_8daaf6152771_02713d6af862";
        let told = headers(&[("x-ja4", "t13d1516h2_8daaf6152771_02713d6af862")]);
        let junk = headers(&[("x-ja4", "junk")]);
        let resolver = resolver(&["10.0.0.0/8"]).with_ja4_header(Some("x-ja4".parse().unwrap()));
        let believed = resolver.forwarded_ja4(ip("10.1.2.3"), &told);
        assert_eq!(believed, Some(Some(ja4.parse().unwrap())));
        assert_eq!(resolver.forwarded_ja4(ip("10.1.2.3"), &junk), Some(None));
        assert_eq!(
            resolver.forwarded_ja4(ip("10.1.2.3"), &HeaderMap::new()),
            Some(None)
        );
        assert_eq!(
            resolver.forwarded_ja4(ip("192.0.2.1"), &told),
            None,
            "not a proxy"
        );
        assert_eq!(resolver.forwarded_ja4(None, &told), None);
        let unset = self::resolver(&["10.0.0.0/8"]);
        assert_eq!(
            unset.forwarded_ja4(ip("10.1.2.3"), &told),
            None,
            "no header named"
        );
    }
}
