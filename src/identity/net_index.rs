//! Networks indexed for the request path: each network (its address truncated to its prefix)
//! holds a value, and the networks holding an address are found by trying only the prefix
//! lengths in use, per family — a handful of hash lookups whatever the count. Cheap to clone
//! (a persistent map): the control view and the blocklist publish a new index per change.
//! Bans, CrowdSec's blocklist and the access lists all match addresses with it.

use ipnet::IpNet;
use std::net::IpAddr;

/// Values by network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkIndex<V: Clone> {
    nets: imbl::HashMap<(IpAddr, u8), V>,
    v4: Lengths,
    v6: Lengths,
}

impl<V: Clone> Default for NetworkIndex<V> {
    fn default() -> Self {
        Self {
            nets: imbl::HashMap::new(),
            v4: Lengths::default(),
            v6: Lengths::default(),
        }
    }
}

/// The prefix lengths of one family's networks.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Lengths {
    /// Networks held per prefix length (index: the length).
    counts: Vec<u32>,
    /// The lengths held, longest first.
    used: Vec<u8>,
}

impl Lengths {
    fn count(&mut self, len: u8, delta: i32) {
        let at = usize::from(len);
        if self.counts.len() <= at {
            self.counts.resize(at + 1, 0);
        }
        self.counts[at] = self.counts[at].saturating_add_signed(delta);
        self.used = (0..self.counts.len())
            .rev()
            .filter(|&l| self.counts[l] > 0)
            .map(|l| l as u8)
            .collect();
    }
}

/// `net` as it is keyed: its address truncated, canonical (an IPv4-mapped IPv6 network of
/// /96 or longer is the IPv4 network it maps).
fn key(net: IpNet) -> (IpAddr, u8) {
    let net = match net {
        IpNet::V6(v6) if v6.prefix_len() >= 96 => match v6.addr().to_ipv4_mapped() {
            Some(v4) => IpNet::new(IpAddr::V4(v4), v6.prefix_len() - 96).unwrap_or(net),
            None => net,
        },
        _ => net,
    }
    .trunc();
    (net.addr(), net.prefix_len())
}

impl<V: Clone> NetworkIndex<V> {
    /// How many networks are held.
    pub fn len(&self) -> usize {
        self.nets.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.nets.is_empty()
    }

    /// The value of exactly `net`.
    pub fn get(&self, net: IpNet) -> Option<&V> {
        self.nets.get(&key(net))
    }

    /// The value of exactly `net`, to change.
    pub fn get_mut(&mut self, net: IpNet) -> Option<&mut V> {
        self.nets.get_mut(&key(net))
    }

    /// Holds `value` for `net`; the value it replaces.
    pub fn insert(&mut self, net: IpNet, value: V) -> Option<V> {
        let key = key(net);
        let replaced = self.nets.insert(key, value);
        if replaced.is_none() {
            self.lengths(key.0).count(key.1, 1);
        }
        replaced
    }

    /// Drops `net`; its value.
    pub fn remove(&mut self, net: IpNet) -> Option<V> {
        let key = key(net);
        let removed = self.nets.remove(&key);
        if removed.is_some() {
            self.lengths(key.0).count(key.1, -1);
        }
        removed
    }

    /// The values of every network holding `ip`, the most specific first.
    pub fn containing(&self, ip: IpAddr) -> impl Iterator<Item = &V> {
        let ip = ip.to_canonical();
        let lengths = match ip {
            IpAddr::V4(_) => &self.v4.used,
            IpAddr::V6(_) => &self.v6.used,
        };
        lengths.iter().filter_map(move |&len| {
            let net = IpNet::new(ip, len).ok()?.trunc();
            self.nets.get(&(net.addr(), len))
        })
    }

    /// Whether a network holds `ip`.
    pub fn holds(&self, ip: IpAddr) -> bool {
        self.containing(ip).next().is_some()
    }

    fn lengths(&mut self, addr: IpAddr) -> &mut Lengths {
        match addr {
            IpAddr::V4(_) => &mut self.v4,
            IpAddr::V6(_) => &mut self.v6,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(text: &str) -> IpNet {
        text.parse().unwrap()
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn finds_every_network_holding_an_address_most_specific_first() {
        let mut index = NetworkIndex::default();
        index.insert(net("10.0.0.0/8"), "wide");
        index.insert(net("10.1.2.3/16"), "narrow");
        index.insert(net("2001:db8::/32"), "v6");
        let found: Vec<_> = index.containing(ip("10.1.9.9")).copied().collect();
        assert_eq!(found, ["narrow", "wide"]);
        assert_eq!(
            index.containing(ip("::ffff:10.9.9.9")).next(),
            Some(&"wide")
        );
        assert!(index.holds(ip("2001:db8::1")));
        assert!(!index.holds(ip("192.0.2.1")));
        assert_eq!(index.get(net("10.1.0.0/16")), Some(&"narrow"));
    }

    #[test]
    fn removing_the_last_network_of_a_length_stops_looking_there() {
        let mut index = NetworkIndex::default();
        assert_eq!(index.insert(net("192.0.2.0/24"), 1), None);
        assert_eq!(index.insert(net("192.0.2.9/24"), 2), Some(1));
        assert_eq!(index.len(), 1);
        assert_eq!(index.remove(net("192.0.2.0/24")), Some(2));
        assert_eq!(index.remove(net("192.0.2.0/24")), None);
        assert!(index.is_empty());
        assert_eq!(index.v4.used, Vec::<u8>::new());
    }

    #[test]
    fn an_ipv4_mapped_network_is_its_ipv4_network() {
        let mut index = NetworkIndex::default();
        index.insert(net("::ffff:203.0.113.0/120"), ());
        assert!(index.holds(ip("203.0.113.7")));
        assert!(index.get(net("203.0.113.0/24")).is_some());
    }
}
