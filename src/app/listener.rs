//! A listener: a pingora app (the proxy, or the admin or check endpoint) wrapped in the
//! connection limits pingora lacks.
//!
//! - [`Listener`] (a `ServerApp`, one call per connection) admits a connection only while fewer
//!   than `server.max_connections` are open on it (and, on the proxy's,
//!   `server.max_connections_per_ip` from its address, see `connections`); a connection past
//!   either is closed at once. Every connection counts until it closes, an idle HTTP/2 one
//!   too. For the proxy, `floodgate_connections_refused_total` counts those refused and
//!   `floodgate_connections_open` the rest. Each HTTP/1 connection is wrapped in a
//!   [`WatchedStream`], which answers 431 to a head past `server.max_header_bytes`, and is
//!   closed when a sweep ([`HeadWatches`], run by the `sweeper` service) finds a request head
//!   not whole within `server.header_timeout` of its first byte (of the accept, for the first
//!   request), however slowly it trickles in, or the connection idle between requests for
//!   longer than `server.keepalive_timeout`. The app marks where each request stands (the
//!   proxy itself, the endpoints through `served`).
//! - A head the app answered before it was whole (refused by pingora's parser, or the 431) is
//!   handed to the listener's `on_refused` (the proxy's access log).
//!
//! An HTTP/2 connection (ALPN `h2`, or h2c) is held to the same head deadline for its first
//! request: its first header block must have ended within `server.header_timeout` of the
//! accept (of the handshake's end, on TLS), PING, SETTINGS and WINDOW_UPDATE frames
//! notwithstanding ([`first_frames`], which also reads its fingerprint when the config in
//! force asks for it, `Config::wants_h2fp`); after that it idles out by pingora's
//! `h2_idle_timeout` (`server.keepalive_timeout`). With `server.h2c`, the plain listener tells
//! cleartext HTTP/2 (prior knowledge) from HTTP/1 by the first bytes, within the head deadline
//! (`preface`). The cap on open connections is what the open-file limit can hold (`rlimit`).
//! The proxy's TLS port is served as TCP too: a connection to it is admitted, then its
//! ClientHello read for its JA4 and its handshake done ([`TlsFront`]) within the head deadline.

use super::connections::Connections;
use super::drain::InService;
use super::rlimit;

use crate::config::Config;
use crate::proxy::{
    first_frames, peer_ip, sniff, ConnectionLimits, HeadWatch, HeadWatches, Preface, RefusedHead,
    WatchedStream,
};
use crate::telemetry::{ByLabel, ConnectionRefusal, Metrics};
use crate::tls::TlsFront;
use async_trait::async_trait;
use pingora::apps::{HttpServerOptions, ServerApp};
use pingora::protocols::{Stream, ALPN};
use pingora::server::ShutdownWatch;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// What a listener does with a head its app refused, and the client's TCP address.
pub(super) type OnRefused = Arc<dyn Fn(&RefusedHead, Option<IpAddr>) + Send + Sync>;

/// Whether the config in force asks for new HTTP/2 connections' fingerprints.
pub(super) type WantsH2fp = Arc<dyn Fn() -> bool + Send + Sync>;

/// Pingora's HTTP server options for `config`: h2c on the plain listener if configured, and
/// HTTP/2 connections closed after idling `server.keepalive_timeout`.
pub(super) fn http_options(config: &Config) -> HttpServerOptions {
    let mut options = HttpServerOptions::default();
    options.h2c = config.server.h2c;
    let idle = config.server.limits.keepalive_timeout;
    options.h2_idle_timeout = (!idle.is_zero()).then_some(idle);
    options
}

/// A pingora app behind the connection caps and deadlines.
pub(super) struct Listener<A> {
    app: Arc<A>,
    connections: Arc<Connections>,
    /// The connections of every listener, which a graceful shutdown waits for.
    in_service: Arc<InService>,
    /// The watched HTTP/1 connections, whose deadlines the `sweeper` service enforces.
    watches: Arc<HeadWatches>,
    /// `floodgate_connections_refused_total`, for the proxy's listener.
    refused: Option<ByLabel<ConnectionRefusal>>,
    on_refused: Option<OnRefused>,
    max_header_bytes: usize,
    header_timeout: Duration,
    h2c: bool,
    /// The TLS port among the listener's, and its handshake.
    tls: Option<(SocketAddr, Arc<TlsFront>)>,
    /// Whether HTTP/2 connections are read for their fingerprint (the proxy's, when asked).
    wants_h2fp: Option<WantsH2fp>,
}

impl<A> Listener<A> {
    /// `app` behind `limits` (but the cap per address, which [`Self::counted`] adds: the
    /// peers of the endpoints are a few proxies and scrapers), its connections' deadlines kept
    /// by sweeping `watches` and counted `in_service`.
    pub(super) fn new(
        app: A,
        limits: &ConnectionLimits,
        watches: Arc<HeadWatches>,
        in_service: Arc<InService>,
    ) -> Self {
        let max = limits.max_connections;
        Self {
            app: Arc::new(app),
            connections: Arc::new(Connections::new(max, None, None)),
            in_service,
            watches,
            refused: None,
            on_refused: None,
            max_header_bytes: limits.max_header_bytes,
            header_timeout: limits.header_timeout,
            h2c: false,
            tls: None,
            wants_h2fp: None,
        }
    }

    /// The same listener, its connections counted in `metrics` and capped per client address
    /// too (the proxy's); the open-file limit is raised, and the connection cap lowered to
    /// what it can hold.
    pub(super) fn counted(mut self, metrics: &Metrics, limits: &ConnectionLimits) -> Self {
        let max = rlimit::admit_within_nofile(limits.max_connections, limits.max_connections_set);
        let gauge = Some(metrics.connections_open.clone());
        self.connections = Arc::new(Connections::new(max, limits.max_connections_per_ip, gauge));
        self.refused = Some(metrics.connections_refused.clone());
        self
    }

    /// The same listener, telling cleartext HTTP/2 from HTTP/1 when `h2c`.
    pub(super) fn with_h2c(mut self, h2c: bool) -> Self {
        self.h2c = h2c;
        self
    }

    /// The same listener, serving TLS by `front` on its port `listen` (served as TCP).
    pub(super) fn with_tls(mut self, listen: SocketAddr, front: TlsFront) -> Self {
        self.tls = Some((listen, Arc::new(front)));
        self
    }

    /// `stream` after its TLS handshake if it came to the TLS port, as it is otherwise;
    /// `None` if the handshake failed.
    async fn secured(&self, stream: Stream) -> Option<Stream> {
        match &self.tls {
            Some((listen, front)) if on_port(&stream, *listen) => {
                front.accept(stream, self.header_timeout).await
            }
            _ => Some(stream),
        }
    }

    /// The same listener, reading HTTP/2 connections for their fingerprint whenever
    /// `wants_h2fp` says so as they are accepted.
    pub(super) fn fingerprinting(mut self, wants_h2fp: WantsH2fp) -> Self {
        self.wants_h2fp = Some(wants_h2fp);
        self
    }

    /// `stream`, an HTTP/2 connection, watched until its first request is whole (`watch`),
    /// and read for its fingerprint if that is asked for.
    fn h2(&self, stream: Stream, watch: Arc<HeadWatch>) -> Stream {
        let fingerprint = self.wants_h2fp.as_ref().is_some_and(|wants| wants());
        first_frames(stream, watch, fingerprint)
    }

    /// The same listener, handing the heads its app refused to `on_refused`.
    pub(super) fn on_refused(mut self, on_refused: OnRefused) -> Self {
        self.on_refused = Some(on_refused);
        self
    }

    /// A plain connection once its first bytes said whether it is HTTP/2 (h2c) or HTTP/1, and
    /// its watch; `None` if it closed or stayed silent past the head deadline.
    async fn sniffed(&self, mut stream: Stream) -> Option<(Stream, Arc<HeadWatch>)> {
        let watch = self.watches.accepted();
        let (preface, read) = match sniff(&mut stream, self.header_timeout).await {
            Ok(sniffed) => sniffed,
            Err(e) => {
                log::debug!("closing a connection before its first request: {e}");
                return None;
            }
        };
        // An HTTP/2 connection's heads are not read through the HTTP/1 watch: it only hands
        // back the bytes read ahead.
        let head_watch = match preface {
            Preface::H2 => HeadWatch::unwatched(),
            Preface::Http1 => watch.clone(),
        };
        let watched = WatchedStream::new(stream, head_watch, self.max_header_bytes);
        let stream: Stream = Box::new(watched.with_prefix(read));
        match preface {
            Preface::H2 => Some((self.h2(stream, watch.clone()), watch)),
            Preface::Http1 => Some((stream, watch)),
        }
    }

    /// `stream` ready for pingora, and the watch whose expiry closes it (HTTP/1: each head and
    /// idle wait; HTTP/2: the first request, pingora bounding the rest).
    async fn watched(&self, stream: Stream) -> Option<(Stream, Arc<HeadWatch>)> {
        match stream.selected_alpn_proto() {
            Some(ALPN::H2) => {
                let watch = self.watches.accepted();
                Some((self.h2(stream, watch.clone()), watch))
            }
            _ if self.h2c && stream.get_ssl_digest().is_none() => self.sniffed(stream).await,
            _ => {
                let watch = self.watches.accepted();
                let watched = WatchedStream::new(stream, watch.clone(), self.max_header_bytes);
                Some((Box::new(watched), watch))
            }
        }
    }

    /// Hands the head `watch` saw refused, if any, to `on_refused`.
    fn note_refused(&self, watch: &HeadWatch, peer: Option<IpAddr>) {
        if let (Some(refused), Some(on_refused)) = (watch.take_refused(), &self.on_refused) {
            on_refused(&refused, peer);
        }
    }
}

#[async_trait]
impl<A: ServerApp + Send + Sync + 'static> ServerApp for Listener<A> {
    async fn process_new(
        self: &Arc<Self>,
        stream: Stream,
        shutdown: &ShutdownWatch,
    ) -> Option<Stream> {
        let peer = peer_ip(&stream);
        let _admitted = match self.connections.admit(peer) {
            Ok(admitted) => admitted,
            Err(reason) => {
                if let Some(refused) = &self.refused {
                    refused.inc(reason);
                }
                log::debug!("refusing a connection from {peer:?}: {}", reason.label());
                // Dropping the stream closes the connection.
                return None;
            }
        };
        let _serving = self.in_service.enter();
        let stream = self.secured(stream).await?;
        let (stream, watch) = self.watched(stream).await?;
        let reused = tokio::select! {
            biased;
            reused = ServerApp::process_new(&self.app, stream, shutdown) => reused,
            () = watch.expired() => {
                log::debug!(
                    "closing a connection: no whole request head within {:?} (on HTTP/2, no \
                     first request), or idle past keepalive_timeout",
                    self.header_timeout
                );
                None
            }
        };
        self.note_refused(&watch, peer);
        reused
    }

    async fn cleanup(&self) {
        ServerApp::cleanup(&*self.app).await
    }
}

/// Whether `stream`, not yet TLS, was accepted on `listen` (an unspecified address there
/// matches any of the port's).
fn on_port(stream: &Stream, listen: SocketAddr) -> bool {
    if stream.get_ssl_digest().is_some() {
        return false;
    }
    let digest = stream.get_socket_digest();
    let local = digest
        .as_ref()
        .and_then(|d| d.local_addr()?.as_inet().copied());
    local.is_some_and(|local| {
        local.port() == listen.port() && (listen.ip().is_unspecified() || local.ip() == listen.ip())
    })
}
