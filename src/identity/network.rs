//! Networks as operators write them (`10.0.0.0/8`, `203.0.113.7`, `::ffff:10.0.0.0/104`), read
//! into the network that matches: an IPv4-mapped IPv6 network is the IPv4 network it maps
//! (client addresses are compared in their canonical form, so `::ffff:127.0.0.2/128` would
//! never match 127.0.0.2), and host bits set below the prefix (`10.0.0.1/8`) are reported
//! with the network they stand for, for callers that refuse or warn.

use ipnet::{IpNet, Ipv4Net};
use std::net::IpAddr;

/// A network read from text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    /// The network that matches: IPv4 for an IPv4-mapped one, host bits cleared.
    pub net: IpNet,
    /// Whether the text set host bits below its prefix (`10.0.0.1/8`): it meant [`Self::net`].
    pub host_bits: bool,
}

impl Network {
    /// `text` (a network or a single address), or `None` when it is neither.
    pub fn read(text: &str) -> Option<Self> {
        let text = text.trim();
        let given = text
            .parse::<IpNet>()
            .ok()
            .or_else(|| text.parse::<IpAddr>().ok().map(IpNet::from))?;
        let given = unmapped(given);
        let net = given.trunc();
        Some(Self {
            net,
            host_bits: net != given,
        })
    }

    /// Whether it is every address of its family (`0.0.0.0/0`, `::/0`).
    pub fn is_everyone(&self) -> bool {
        self.net.prefix_len() == 0
    }
}

/// The IPv4 network an IPv4-mapped IPv6 network (`::ffff:a.b.c.d/96` or longer) maps; any
/// other network as it is.
fn unmapped(net: IpNet) -> IpNet {
    let IpNet::V6(v6) = net else {
        return net;
    };
    match (v6.addr().to_ipv4_mapped(), v6.prefix_len()) {
        (Some(v4), len) if len >= 96 => Ipv4Net::new(v4, len - 96).map_or(net, IpNet::V4),
        _ => net,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (String, bool) {
        let n = Network::read(text).unwrap();
        (n.net.to_string(), n.host_bits)
    }

    #[test]
    fn an_ipv4_mapped_network_is_the_ipv4_network_it_maps() {
        assert_eq!(read("::ffff:127.0.0.2/128"), ("127.0.0.2/32".into(), false));
        assert_eq!(read("::ffff:127.0.0.0/104"), ("127.0.0.0/8".into(), false));
        assert_eq!(read("::ffff:127.0.0.2"), ("127.0.0.2/32".into(), false));
        assert_eq!(read("::ffff:0:0/96"), ("0.0.0.0/0".into(), false));
        assert_eq!(read("::ffff:0:0/95"), ("::fffe:0:0/95".into(), true));
        assert_eq!(read("2001:db8::/32"), ("2001:db8::/32".into(), false));
    }

    #[test]
    fn host_bits_are_reported_with_the_network_meant() {
        assert_eq!(read("10.0.0.1/8"), ("10.0.0.0/8".into(), true));
        assert_eq!(read("10.0.0.0/8"), ("10.0.0.0/8".into(), false));
        assert_eq!(read(" 203.0.113.7 "), ("203.0.113.7/32".into(), false));
        assert_eq!(read("::ffff:10.0.0.1/104"), ("10.0.0.0/8".into(), true));
        assert!(Network::read("0.0.0.0/0").unwrap().is_everyone());
        assert!(Network::read("::/0").unwrap().is_everyone());
        assert!(Network::read("10.0.0.0/33").is_none());
        assert!(Network::read("ten").is_none());
    }
}
