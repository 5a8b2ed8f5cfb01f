//! `--test`'s lines for `[identity]`, `[identity.jwt]` and `[access]`: how callers are named,
//! keyed, located and let in.

use crate::identity::{AccessRules, ClientIpResolver, IdentityChain, IdentityKey, JwtVerifier};
use crate::limiter::StoreSettings;
use std::fmt;
use std::sync::Arc;

/// `--test`'s lines about callers: the identity chain, the digest key, the client address,
/// bearer tokens and the allow and deny rules.
pub(crate) struct IdentityLines<'a> {
    /// The identity chain.
    pub(crate) chain: &'a IdentityChain,
    /// `identity.hash_key`, if set (never printed).
    pub(crate) hash_key: Option<&'a IdentityKey>,
    /// The store, whose kind says where a missing key comes from.
    pub(crate) store: &'a StoreSettings,
    /// The trusted proxies and their header.
    pub(crate) client_ip: &'a ClientIpResolver,
    /// The bearer token verifier, if any.
    pub(crate) jwt: Option<&'a Arc<JwtVerifier>>,
    /// `[access]`'s rules.
    pub(crate) access: &'a AccessRules,
}

impl fmt::Display for IdentityLines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = self.chain;
        writeln!(
            f,
            "identity        {id} (ipv4 /{}, ipv6 /{}; invalid tokens: {:?})",
            id.ip.ipv4_prefix, id.ip.ipv6_prefix, id.on_invalid_token
        )?;
        writeln!(
            f,
            "digests         keyed BLAKE3, keyed by {}",
            self.keyed_by()
        )?;
        self.client_address(f)?;
        if let Some(jwt) = self.jwt {
            writeln!(f, "bearer tokens   verified by {jwt:?}")?;
        }
        for rule in self.access.allow() {
            writeln!(f, "allow           {rule}")?;
        }
        for rule in self.access.deny() {
            writeln!(f, "deny (403)      {rule}")?;
        }
        Ok(())
    }
}

impl IdentityLines<'_> {
    /// Where the digests' key comes from.
    fn keyed_by(&self) -> &'static str {
        match (self.hash_key, self.store) {
            (Some(_), _) => "identity.hash_key (hidden)",
            (None, StoreSettings::Memory { .. }) => "a random key of this process",
            (None, StoreSettings::Redis(_)) => "the fleet's key in Redis (`prefix:hash_key`)",
        }
    }

    /// Whose word on the client's address is taken.
    fn client_address(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let trusted: Vec<String> = self
            .client_ip
            .trusted()
            .iter()
            .map(|n| n.to_string())
            .collect();
        match trusted.is_empty() {
            true => writeln!(f, "client address  the TCP peer (no trusted proxies)"),
            false => writeln!(
                f,
                "client address  `{}` (and no other forwarding header) from {}",
                self.client_ip.header(),
                trusted.join(", ")
            ),
        }
    }
}
