//! Whom the trap bans and how a ban is named in its tables: by a keyed digest, never by the
//! address or the credential itself. An address's digest is the `ip` source's digest of the
//! whole address (`IpFolding` keeping 32 bits of IPv4, 128 of IPv6); an IPv6 network's is the
//! same of the address folded to its /48 (the folded bytes end with the prefix length, so the
//! two never meet).

use crate::identity::{Identity, IdentityKey, IpFolding};
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

/// An address as a whole (IPv4 /32, IPv6 /128).
const WHOLE: IpFolding = IpFolding {
    ipv4_prefix: 32,
    ipv6_prefix: 128,
};

/// The IPv6 network a ban may be folded to.
const NETWORK: IpFolding = IpFolding {
    ipv4_prefix: 32,
    ipv6_prefix: 48,
};

/// Whom a trap ban refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrapTarget {
    /// The client's address (an IPv6 address may be folded to its /48: see `bans.rs`).
    Address(IpAddr),
    /// A proven identity: a digest the identity chain made of a value the backend or a key
    /// list proved, never a header value the client merely sent.
    Identity {
        /// The source that named it (`header:x-api-key`).
        source: String,
        /// Its digest.
        identity: Identity,
    },
}

/// What a ban held by the trap covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrapScope {
    /// One address.
    Address,
    /// Every address of an IPv6 /48.
    Network48,
    /// One proven identity.
    Identity,
}

impl TrapScope {
    /// The letter a field starts with in Redis (`lua/traps.lua`).
    fn letter(self) -> char {
        match self {
            TrapScope::Address => 'a',
            TrapScope::Network48 => 'n',
            TrapScope::Identity => 'i',
        }
    }

    fn from_letter(letter: char) -> Option<Self> {
        match letter {
            'a' => Some(TrapScope::Address),
            'n' => Some(TrapScope::Network48),
            'i' => Some(TrapScope::Identity),
            _ => None,
        }
    }
}

/// A ban the trap holds, as the hot path finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrapBan {
    /// What it covers.
    pub scope: TrapScope,
    /// When it ends (Unix ms).
    pub until_ms: u64,
}

/// A ban's name in the tables: its scope and digest (`a<32 hex>` in Redis).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Field {
    pub(super) scope: TrapScope,
    pub(super) digest: Identity,
}

impl Field {
    /// The field of `scope` and `digest`.
    pub(super) fn new(scope: TrapScope, digest: Identity) -> Self {
        Self { scope, digest }
    }

    /// The field as Redis keeps it.
    pub(super) fn text(&self) -> String {
        format!("{}{}", self.scope.letter(), self.digest.hex())
    }

    /// The field `text` names, if it is one.
    pub(super) fn parse(text: &str) -> Option<Self> {
        let mut chars = text.chars();
        let scope = TrapScope::from_letter(chars.next()?)?;
        Some(Self::new(scope, Identity::from_hex(chars.as_str())?))
    }
}

impl fmt::Debug for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}({:?})", self.scope, self.digest)
    }
}

/// The digest of `ip` as a whole.
pub fn address_digest(key: &IdentityKey, ip: IpAddr) -> Identity {
    WHOLE.digest(ip, key)
}

/// The digest of the /48 of `ip`, when it is an IPv6 address (an IPv4-mapped one is IPv4).
pub fn network_digest(key: &IdentityKey, ip: IpAddr) -> Option<Identity> {
    match ip.to_canonical() {
        IpAddr::V4(_) => None,
        v6 @ IpAddr::V6(_) => Some(NETWORK.digest(v6, key)),
    }
}

/// A ban to make: the field it is held under, the /48 field it may be folded to (an IPv6
/// address), and the source of an identity.
#[derive(Debug, Clone)]
pub(super) struct Wanted {
    pub(super) field: Field,
    pub(super) network: Option<Field>,
    pub(super) source: Option<Arc<str>>,
}

impl Wanted {
    /// The ban of `target`, digested with `key`.
    pub(super) fn of(target: &TrapTarget, key: &IdentityKey) -> Self {
        match target {
            TrapTarget::Address(ip) => Self {
                field: Field::new(TrapScope::Address, address_digest(key, *ip)),
                network: network_digest(key, *ip).map(|d| Field::new(TrapScope::Network48, d)),
                source: None,
            },
            TrapTarget::Identity { source, identity } => Self {
                field: Field::new(TrapScope::Identity, *identity),
                network: None,
                source: Some(Arc::from(source.as_str())),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: IdentityKey = IdentityKey::from_bytes([7; 32]);

    #[test]
    fn an_address_is_the_ip_sources_digest_of_the_whole_address() {
        let ip: IpAddr = "2001:db8:1:2::5".parse().unwrap();
        let whole = address_digest(&KEY, ip);
        assert_eq!(whole, Identity::of(&KEY, "ip", &WHOLE.fold(ip)));
        let net = network_digest(&KEY, ip).unwrap();
        assert_ne!(whole, net);
        let neighbour: IpAddr = "2001:db8:1:ffff::9".parse().unwrap();
        assert_eq!(network_digest(&KEY, neighbour), Some(net), "one /48");
        let other: IpAddr = "2001:db8:2::5".parse().unwrap();
        assert_ne!(network_digest(&KEY, other), Some(net));
        assert_eq!(network_digest(&KEY, "192.0.2.1".parse().unwrap()), None);
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        assert_eq!(network_digest(&KEY, mapped), None);
        assert_eq!(
            address_digest(&KEY, mapped),
            address_digest(&KEY, "192.0.2.1".parse().unwrap())
        );
    }

    #[test]
    fn fields_read_back_as_written() {
        let digest = Identity::of(&KEY, "t", b"x");
        for scope in [
            TrapScope::Address,
            TrapScope::Network48,
            TrapScope::Identity,
        ] {
            let field = Field::new(scope, digest);
            assert_eq!(Field::parse(&field.text()), Some(field));
        }
        assert_eq!(Field::parse("x00112233445566778899aabbccddeeff"), None);
        assert_eq!(Field::parse("a0011"), None);
        assert_eq!(Field::parse(""), None);
    }
}
