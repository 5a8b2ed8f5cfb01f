//! The proxy's listener: pingora's HTTP proxy wrapped in the connection limits pingora lacks.
//!
//! - [`Listener`] (a `ServerApp`, one call per connection) admits a connection only while fewer
//!   than `server.max_connections` are open (and `server.max_connections_per_ip` from its
//!   address, an IPv6 /64 counting as one); a connection past either is closed at once and
//!   counted in `floodgate_connections_refused_total`. `floodgate_connections_open` counts the
//!   rest. Each HTTP/1 connection is wrapped in a [`WatchedStream`], which answers 431 to a head
//!   past `server.max_header_bytes`, and is closed when a sweep ([`HeadWatches`], run by the
//!   `sweeper` service) finds a request head not whole within `server.header_timeout` of its
//!   first byte (of the accept, for the first request), however slowly it trickles in, or the
//!   connection idle between requests for longer than `server.keepalive_timeout`. The proxy
//!   marks where each request stands (`connection`); nothing is added per request here.
//!
//! HTTP/2 connections idle out by pingora's `h2_idle_timeout` (`server.keepalive_timeout`).
//! With `server.h2c`, the plain listener tells cleartext HTTP/2 (prior knowledge) from HTTP/1
//! by the first bytes, within the head deadline (`preface`).
//! The cap on open connections is what the open-file limit can hold (`rlimit`).

use super::rlimit;

use crate::config::Config;
use crate::proxy::{
    peer_ip, sniff, ConnectionLimits, Floodgate, HeadWatch, HeadWatches, Preface, WatchedStream,
};
use crate::telemetry::{ByLabel, ConnectionRefusal, Metrics};
use async_trait::async_trait;
use parking_lot::Mutex;
use pingora::apps::{HttpServerOptions, ServerApp};
use pingora::protocols::{Stream, ALPN};
use pingora::proxy::HttpProxy;
use pingora::server::ShutdownWatch;
use prometheus::IntGauge;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

/// The open downstream connections, overall and per client address.
struct Connections {
    max: usize,
    max_per_ip: Option<usize>,
    open: Mutex<Open>,
    gauge: IntGauge,
}

#[derive(Default)]
struct Open {
    total: usize,
    per_ip: HashMap<IpAddr, usize>,
}

/// One admitted connection; it counts as open until dropped.
struct Admitted {
    connections: Arc<Connections>,
    ip: Option<IpAddr>,
}

impl Connections {
    /// Counts a connection from `peer` open, or says why it may not be.
    fn admit(self: &Arc<Self>, peer: Option<IpAddr>) -> Result<Admitted, ConnectionRefusal> {
        let ip = self.max_per_ip.and(peer).map(one_client);
        let mut open = self.open.lock();
        if open.total >= self.max {
            return Err(ConnectionRefusal::Total);
        }
        if let (Some(ip), Some(max)) = (ip, self.max_per_ip) {
            let from_ip = open.per_ip.entry(ip).or_default();
            if *from_ip >= max {
                return Err(ConnectionRefusal::PerIp);
            }
            *from_ip += 1;
        }
        open.total += 1;
        self.gauge.inc();
        Ok(Admitted {
            connections: self.clone(),
            ip,
        })
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self.connections.open.lock();
        open.total = open.total.saturating_sub(1);
        if let Some(ip) = self.ip {
            if let Some(from_ip) = open.per_ip.get_mut(&ip) {
                *from_ip -= 1;
                if *from_ip == 0 {
                    open.per_ip.remove(&ip);
                }
            }
        }
        self.connections.gauge.dec();
    }
}

/// The address that stands for one client: IPv4 as is, IPv6 folded to its /64.
fn one_client(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
        v4 => v4,
    }
}

/// Pingora's HTTP server options for `config`: h2c on the plain listener if configured, and
/// HTTP/2 connections closed after idling `server.keepalive_timeout`.
pub(super) fn http_options(config: &Config) -> HttpServerOptions {
    let mut options = HttpServerOptions::default();
    options.h2c = config.server.h2c;
    let idle = config.server.limits.keepalive_timeout;
    options.h2_idle_timeout = (!idle.is_zero()).then_some(idle);
    options
}

/// Pingora's proxy behind the connection caps.
pub(super) struct Listener {
    http: Arc<HttpProxy<Floodgate>>,
    connections: Arc<Connections>,
    /// The watched HTTP/1 connections, whose deadlines the `sweeper` service enforces.
    watches: Arc<HeadWatches>,
    refused: ByLabel<ConnectionRefusal>,
    max_header_bytes: usize,
    header_timeout: Duration,
    h2c: bool,
}

impl Listener {
    /// `proxy` behind `limits`, counted in `metrics`, its connections' deadlines kept by
    /// sweeping `watches`; the open-file limit is raised, and the connection cap lowered to what
    /// it can hold.
    pub(super) fn new(
        proxy: HttpProxy<Floodgate>,
        limits: &ConnectionLimits,
        metrics: &Metrics,
        watches: Arc<HeadWatches>,
    ) -> Self {
        let h2c = proxy.server_options.as_ref().is_some_and(|o| o.h2c);
        Self {
            h2c,
            watches,
            header_timeout: limits.header_timeout,
            http: Arc::new(proxy),
            connections: Arc::new(Connections {
                max: rlimit::admit_within_nofile(limits.max_connections),
                max_per_ip: limits.max_connections_per_ip,
                open: Mutex::new(Open::default()),
                gauge: metrics.connections_open.clone(),
            }),
            refused: metrics.connections_refused.clone(),
            max_header_bytes: limits.max_header_bytes,
        }
    }
}

impl Listener {
    /// A plain connection once its first bytes said whether it is HTTP/2 (h2c) or HTTP/1, and
    /// its watch if HTTP/1; `None` if it closed or stayed silent past the head deadline.
    async fn sniffed(&self, mut stream: Stream) -> Option<(Stream, Option<Arc<HeadWatch>>)> {
        let watch = self.watches.accepted();
        let (preface, read) = match sniff(&mut stream, self.header_timeout).await {
            Ok(sniffed) => sniffed,
            Err(e) => {
                log::debug!("closing a connection before its first request: {e}");
                return None;
            }
        };
        let (watch, deadline) = match preface {
            Preface::H2 => (HeadWatch::unwatched(), None),
            Preface::Http1 => (watch.clone(), Some(watch)),
        };
        let watched = WatchedStream::new(stream, watch, self.max_header_bytes);
        Some((Box::new(watched.with_prefix(read)), deadline))
    }

    /// `stream` ready for pingora, and the watch whose expiry closes it (HTTP/1 only: HTTP/2
    /// frames its own headers, and pingora bounds them).
    async fn watched(&self, stream: Stream) -> Option<(Stream, Option<Arc<HeadWatch>>)> {
        match stream.selected_alpn_proto() {
            Some(ALPN::H2) => Some((stream, None)),
            _ if self.h2c && stream.get_ssl_digest().is_none() => self.sniffed(stream).await,
            _ => {
                let watch = self.watches.accepted();
                let watched = WatchedStream::new(stream, watch.clone(), self.max_header_bytes);
                Some((Box::new(watched), Some(watch)))
            }
        }
    }
}

#[async_trait]
impl ServerApp for Listener {
    async fn process_new(
        self: &Arc<Self>,
        stream: Stream,
        shutdown: &ShutdownWatch,
    ) -> Option<Stream> {
        let _admitted = match self.connections.admit(peer_ip(&stream)) {
            Ok(admitted) => admitted,
            Err(reason) => {
                self.refused.inc(reason);
                // Dropping the stream closes the connection.
                return None;
            }
        };
        let (stream, watch) = self.watched(stream).await?;
        let Some(watch) = watch else {
            return ServerApp::process_new(&self.http, stream, shutdown).await;
        };
        tokio::select! {
            biased;
            reused = ServerApp::process_new(&self.http, stream, shutdown) => reused,
            () = watch.expired() => {
                log::debug!(
                    "closing a connection: no whole request head within {:?}, or idle past \
                     keepalive_timeout",
                    self.header_timeout
                );
                None
            }
        }
    }

    async fn cleanup(&self) {
        ServerApp::cleanup(&*self.http).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connections(max: usize, max_per_ip: Option<usize>) -> Arc<Connections> {
        Arc::new(Connections {
            max,
            max_per_ip,
            open: Mutex::new(Open::default()),
            gauge: IntGauge::new("open", "open").unwrap(),
        })
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn past_the_cap_connections_are_refused_until_one_closes() {
        let c = connections(2, None);
        let first = c.admit(ip("192.0.2.1")).unwrap();
        let _second = c.admit(ip("192.0.2.2")).unwrap();
        assert_eq!(
            c.admit(ip("192.0.2.3")).err(),
            Some(ConnectionRefusal::Total)
        );
        assert_eq!(c.gauge.get(), 2);
        drop(first);
        assert!(c.admit(ip("192.0.2.3")).is_ok());
    }

    #[test]
    fn one_address_and_one_ipv6_network_share_a_per_ip_cap() {
        let c = connections(100, Some(1));
        let _a = c.admit(ip("192.0.2.1")).unwrap();
        assert_eq!(
            c.admit(ip("192.0.2.1")).err(),
            Some(ConnectionRefusal::PerIp)
        );
        assert!(c.admit(ip("192.0.2.9")).is_ok());
        let v6 = c.admit(ip("2001:db8::1")).unwrap();
        assert_eq!(
            c.admit(ip("2001:db8::ffff")).err(),
            Some(ConnectionRefusal::PerIp)
        );
        assert!(c.admit(ip("2001:db8:0:1::1")).is_ok(), "another /64");
        drop(v6);
        assert!(c.admit(ip("2001:db8::2")).is_ok());
        assert!(c.open.lock().per_ip.len() <= 4);
    }
}
