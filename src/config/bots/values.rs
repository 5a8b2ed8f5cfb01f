//! `[bots]`' typed values: each checks itself while the file is parsed, so toml locates its
//! error at the value.

use crate::config::value::{config_keys, Period};
use crate::identity::Category;
use serde::{de::Error, Deserialize, Deserializer};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

config_keys! {
    DnsTimeout = "bots.dns_timeout",
}

/// The longest `bots.dns_timeout` may be: a request must never wait on DNS for long.
const MAX_DNS_TIMEOUT: Duration = Duration::from_secs(5);

/// `bots.dns_timeout`: from 1 ms to 5 s.
#[derive(Debug)]
pub(crate) struct DnsWait(pub(crate) Duration);

impl<'de> Deserialize<'de> for DnsWait {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let timeout = Period::<DnsTimeout>::deserialize(deserializer)?.get();
        match timeout < Duration::from_millis(1) || timeout > MAX_DNS_TIMEOUT {
            true => Err(D::Error::custom(
                "`bots.dns_timeout` must be from 1ms to 5s",
            )),
            false => Ok(Self(timeout)),
        }
    }
}

/// `bots.resolver`: an address and port (`127.0.0.1:5353`, `[::1]:53`), or an address alone
/// (port 53).
#[derive(Debug)]
pub(crate) struct Resolver(pub(crate) SocketAddr);

impl<'de> Deserialize<'de> for Resolver {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let value = text.trim();
        value
            .parse::<SocketAddr>()
            .or_else(|_| value.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 53)))
            .map(Self)
            .map_err(|_| {
                D::Error::custom(format!(
                    "`bots.resolver` must be a DNS server's address, like 127.0.0.1:53, not `{value}`"
                ))
            })
    }
}

/// `bots.crawler.category`: a bot category's name; anything else is refused with
/// "`bots.crawler.category`: `x` is not a bot category (…)". (`spoofed` reads here and is
/// refused with the entry, as the shipped catalogue's is.)
#[derive(Debug)]
pub(crate) struct CategoryName(pub(crate) Category);

impl<'de> Deserialize<'de> for CategoryName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse()
            .map(Self)
            .map_err(|e| D::Error::custom(format!("`bots.crawler.category`: {e}")))
    }
}
