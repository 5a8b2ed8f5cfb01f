//! The gRPC listener: `RateLimitService/ShouldRateLimit` over HTTP/2 (cleartext, h2c, as Envoy
//! dials a `rate_limit_service` cluster with `http2_protocol_options`; or TLS with the
//! server's certificate), with the rules swapped in on every reload.
//!
//! Bounded like the other listeners ([`RlsLimits`]): `server.max_connections` open at once,
//! the preface and the first request's headers within `server.header_timeout` of the accept
//! (`admission`), `rls.max_concurrent_streams` streams per connection (a stream past them is
//! refused, `REFUSED_STREAM`), header lists within `server.max_header_bytes`, each call (its
//! message read, decided and answered) within `server.header_timeout`, messages of at most
//! [`MAX_MESSAGE`] bytes and at most four of them unread per connection (flow control), and
//! HTTP/2 pings to find dead peers.

use super::admission::{first_request, incoming};
use super::decide::{decide, Answering, Deciders};
use super::rules::RlsRules;
use super::RlsTls;
use crate::telemetry::Causes;
use arc_swap::ArcSwap;
use async_trait::async_trait;
use envoy_types::pb::envoy::service::ratelimit::v3::rate_limit_service_server::{
    RateLimitService, RateLimitServiceServer,
};
use envoy_types::pb::envoy::service::ratelimit::v3::{RateLimitRequest, RateLimitResponse};
use parking_lot::Mutex;
use pingora::server::ShutdownWatch;
use pingora::services::background::BackgroundService;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;
use tonic::transport::{Identity, ServerTlsConfig};

/// The largest `RateLimitRequest` accepted, in bytes (Envoy's are a few hundred).
pub const MAX_MESSAGE: usize = 64 * 1024;

/// The HTTP/2 flow-control windows: what one stream, and one connection, may have sent
/// unread (hyper would allow 1 MiB each; a message is at most [`MAX_MESSAGE`]).
const STREAM_WINDOW: u32 = MAX_MESSAGE as u32;
const CONNECTION_WINDOW: u32 = 4 * MAX_MESSAGE as u32;

/// How often an idle connection is pinged, and how long the answer may take.
const PING_EVERY: Duration = Duration::from_secs(60);
const PING_TIMEOUT: Duration = Duration::from_secs(20);

/// How much the listener holds for its peers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RlsLimits {
    /// The most connections open at once (`server.max_connections`).
    pub max_connections: usize,
    /// The most streams open at once on one connection (`rls.max_concurrent_streams`).
    pub max_concurrent_streams: u32,
    /// The preface and first request's headers, and each call, within this
    /// (`server.header_timeout`).
    pub timeout: Duration,
    /// The largest header list (`server.max_header_bytes`).
    pub max_header_bytes: u32,
}

/// Answers `ShouldRateLimit`.
pub struct RlsService {
    rules: Arc<ArcSwap<RlsRules>>,
    answering: Answering,
}

impl RlsService {
    /// A service deciding under `rules` (swapped on reload) with `deciders`.
    pub fn new(rules: Arc<ArcSwap<RlsRules>>, deciders: Deciders) -> Self {
        Self {
            rules,
            answering: deciders.into(),
        }
    }
}

#[tonic::async_trait]
impl RateLimitService for RlsService {
    async fn should_rate_limit(
        &self,
        request: tonic::Request<RateLimitRequest>,
    ) -> Result<tonic::Response<RateLimitResponse>, tonic::Status> {
        let rules = self.rules.load_full();
        let answer = decide(&rules, &self.answering, request.get_ref()).await;
        Ok(tonic::Response::new(answer))
    }
}

/// The listener, bound when the server is built (so a taken port fails the start), served
/// once the server runs.
pub struct RlsServer {
    listener: Mutex<Option<TcpListener>>,
    service: Arc<RlsService>,
    tls: Option<ServerTlsConfig>,
    limits: RlsLimits,
}

impl RlsServer {
    /// Binds `listen` for `service`, with TLS from `tls`'s files when given, within `limits`.
    pub fn bind(
        listen: SocketAddr,
        tls: Option<&RlsTls>,
        service: RlsService,
        limits: RlsLimits,
    ) -> std::io::Result<Self> {
        let tls = match tls {
            Some(files) => {
                let cert = std::fs::read(&files.cert_file)?;
                let key = std::fs::read(&files.key_file)?;
                Some(ServerTlsConfig::new().identity(Identity::from_pem(cert, key)))
            }
            None => None,
        };
        let listener = TcpListener::bind(listen)?;
        listener.set_nonblocking(true)?;
        Ok(Self {
            listener: Mutex::new(Some(listener)),
            service: Arc::new(service),
            tls,
            limits,
        })
    }

    /// tonic's server within the limits, with TLS if configured.
    fn builder(&self) -> Result<tonic::transport::Server, tonic::transport::Error> {
        let limits = &self.limits;
        let builder = tonic::transport::Server::builder()
            .max_concurrent_streams(limits.max_concurrent_streams)
            .http2_max_header_list_size(limits.max_header_bytes)
            .initial_stream_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .timeout(limits.timeout)
            .http2_keepalive_interval(Some(PING_EVERY))
            .http2_keepalive_timeout(Some(PING_TIMEOUT));
        match self.tls.clone() {
            Some(tls) => builder.tls_config(tls),
            None => Ok(builder),
        }
    }
}

#[async_trait]
impl BackgroundService for RlsServer {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        let Some(listener) = self.listener.lock().take() else {
            return;
        };
        let listener = match tokio::net::TcpListener::from_std(listener) {
            Ok(listener) => listener,
            Err(e) => {
                log::error!("the rate limit service cannot listen: {e}");
                return;
            }
        };
        let limits = &self.limits;
        let incoming = incoming(listener, limits.max_connections, limits.timeout);
        let service = RateLimitServiceServer::from_arc(self.service.clone())
            .max_decoding_message_size(MAX_MESSAGE);
        let service = tonic::service::interceptor::InterceptedService::new(service, first_request);
        let mut builder = match self.builder() {
            Ok(builder) => builder,
            Err(e) => {
                log::error!(
                    "the rate limit service's TLS cannot be set up: {}",
                    Causes(&e)
                );
                return;
            }
        };
        let served = builder
            .add_service(service)
            .serve_with_incoming_shutdown(incoming, async move {
                let _ = shutdown.changed().await;
            })
            .await;
        if let Err(e) = served {
            log::error!("the rate limit service stopped: {}", Causes(&e));
        }
    }
}
