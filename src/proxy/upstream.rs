//! Where allowed requests go: the backends, their TLS names, and the peer for each attempt.

use pingora::lb::{selection::RoundRobin, LoadBalancer};
use pingora::prelude::HttpPeer;
use pingora::{Error, ErrorType, Result};
use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// One backend: where, and whether over TLS.
#[derive(Debug, Clone, PartialEq)]
pub struct Backend {
    /// `host:port` as configured (resolved when the proxy starts or reloads).
    pub address: String,
    /// The name to present (SNI) and verify, for `https://` backends.
    pub tls_name: Option<String>,
}

/// `[upstream]`.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamSettings {
    /// Backends, used round robin.
    pub backends: Vec<Backend>,
    /// CA bundle (PEM) that verifies `https://` backends; the system's roots if none.
    pub ca_file: Option<String>,
    /// Time allowed to connect to a backend.
    pub connect_timeout: Duration,
    /// Time allowed between reads from a backend.
    pub read_timeout: Duration,
    /// Time allowed for each write to a backend.
    pub write_timeout: Duration,
}

/// The resolved backends, round robin.
pub struct Upstream {
    balancer: LoadBalancer<RoundRobin>,
    /// The TLS name (SNI, verified) of each `https://` backend's resolved address.
    tls_names: HashMap<SocketAddr, String>,
    settings: UpstreamSettings,
}

impl Upstream {
    /// Resolves the backends of `settings` (DNS happens here, never while reading the config).
    pub fn resolve(settings: &UpstreamSettings) -> std::io::Result<Self> {
        let addresses = settings.backends.iter().map(|b| b.address.as_str());
        Ok(Self {
            balancer: LoadBalancer::try_from_iter(addresses)?,
            tls_names: tls_names(&settings.backends)?,
            settings: settings.clone(),
        })
    }

    /// How many backends there are (each is tried at most once per request).
    pub fn backend_count(&self) -> usize {
        self.settings.backends.len()
    }

    /// The peer for the next attempt, with the configured timeouts.
    pub fn peer(&self) -> Result<Box<HttpPeer>> {
        // Round robin ignores the key.
        let backend = self
            .balancer
            .select(b"", 256)
            .ok_or_else(|| Error::explain(ErrorType::ConnectNoRoute, "no backend to select"))?;
        let tls_name = backend.addr.as_inet().and_then(|a| self.tls_names.get(a));
        let mut peer = match tls_name {
            Some(name) => HttpPeer::new(backend, true, name.clone()),
            None => HttpPeer::new(backend, false, String::new()),
        };
        let settings = &self.settings;
        peer.options.connection_timeout = Some(settings.connect_timeout);
        peer.options.read_timeout = Some(settings.read_timeout);
        peer.options.write_timeout = Some(settings.write_timeout);
        Ok(Box::new(peer))
    }
}

/// Every address an `https://` backend resolves to, with the name it is verified by.
fn tls_names(backends: &[Backend]) -> std::io::Result<HashMap<SocketAddr, String>> {
    let mut names = HashMap::new();
    for backend in backends {
        if let Some(name) = &backend.tls_name {
            for addr in backend.address.to_socket_addrs()? {
                names.insert(addr, name.clone());
            }
        }
    }
    Ok(names)
}
