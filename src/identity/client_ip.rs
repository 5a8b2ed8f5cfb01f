//! The client's address: the TCP peer, or, when the peer is a trusted proxy, the nearest
//! untrusted hop of `Forwarded` (RFC 7239) or `X-Forwarded-For`, read right to left.
//!
//! Entries left of the first untrusted hop were written by whoever sent the request to that
//! hop: they are never believed. A request from an untrusted peer is identified by the peer,
//! whatever its headers say.

use http::header::{HeaderMap, FORWARDED};
use ipnet::IpNet;
use std::net::IpAddr;

/// At most this many hops are read from the right of the forwarding headers.
const MAX_HOPS: usize = 32;

/// Resolves the client address behind configured trusted proxies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientIpResolver {
    trusted: Vec<IpNet>,
}

impl ClientIpResolver {
    /// A resolver that believes forwarding headers only from peers inside `trusted`.
    pub fn new(trusted: Vec<IpNet>) -> Self {
        Self { trusted }
    }

    /// The trusted proxy networks.
    pub fn trusted(&self) -> &[IpNet] {
        &self.trusted
    }

    fn is_trusted(&self, ip: IpAddr) -> bool {
        self.trusted.iter().any(|net| net.contains(&ip))
    }

    /// The client address of a request from `peer` with `headers`.
    pub fn resolve(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<IpAddr> {
        let peer = peer?.to_canonical();
        if !self.is_trusted(peer) {
            return Some(peer);
        }
        let hops = forwarded_hops(headers);
        let mut nearest = peer;
        for hop in hops.iter().rev().take(MAX_HOPS) {
            match hop {
                // An unreadable hop ends what can be believed: the last trusted hop is the
                // client as far as anyone can tell.
                None => return Some(nearest),
                Some(ip) if !self.is_trusted(*ip) => return Some(*ip),
                Some(ip) => nearest = *ip,
            }
        }
        Some(nearest)
    }
}

/// The hops the forwarding headers list, nearest last: `Forwarded` when present, else
/// `X-Forwarded-For`. `None` marks a hop that is not an address (`unknown`, `_hidden`, junk).
pub fn forwarded_hops(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let forwarded: Vec<&[u8]> = headers
        .get_all(FORWARDED)
        .iter()
        .map(|v| v.as_bytes())
        .collect();
    if !forwarded.is_empty() {
        return forwarded
            .iter()
            .flat_map(|v| v.split(|&b| b == b','))
            .map(forwarded_for)
            .collect();
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b','))
        .map(|hop| std::str::from_utf8(hop).ok().and_then(parse_node))
        .collect()
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
        ClientIpResolver::new(trusted.iter().map(|t| t.parse().unwrap()).collect())
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
    fn forwarded_is_preferred_and_parsed() {
        let r = resolver(&["10.0.0.0/8", "2001:db8:ffff::/48"]);
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
}
