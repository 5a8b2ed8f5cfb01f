//! The gRPC listener: `RateLimitService/ShouldRateLimit` over HTTP/2 (cleartext, h2c, as Envoy
//! dials a `rate_limit_service` cluster with `http2_protocol_options`; or TLS with the
//! server's certificate), with the rules swapped in on every reload.

use super::decide::{decide, Deciders};
use super::rules::RlsRules;
use super::RlsTls;
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
use tonic::transport::{Identity, ServerTlsConfig};

/// Answers `ShouldRateLimit`.
pub struct RlsService {
    rules: Arc<ArcSwap<RlsRules>>,
    deciders: Deciders,
}

impl RlsService {
    /// A service deciding under `rules` (swapped on reload) with `deciders`.
    pub fn new(rules: Arc<ArcSwap<RlsRules>>, deciders: Deciders) -> Self {
        Self { rules, deciders }
    }
}

#[tonic::async_trait]
impl RateLimitService for RlsService {
    async fn should_rate_limit(
        &self,
        request: tonic::Request<RateLimitRequest>,
    ) -> Result<tonic::Response<RateLimitResponse>, tonic::Status> {
        let rules = self.rules.load_full();
        let answer = decide(&rules, &self.deciders, request.get_ref()).await;
        Ok(tonic::Response::new(answer))
    }
}

/// The listener, bound when the server is built (so a taken port fails the start), served
/// once the server runs.
pub struct RlsServer {
    listener: Mutex<Option<TcpListener>>,
    service: Arc<RlsService>,
    tls: Option<ServerTlsConfig>,
}

impl RlsServer {
    /// Binds `listen` for `service`, with TLS from `tls`'s files when given.
    pub fn bind(
        listen: SocketAddr,
        tls: Option<&RlsTls>,
        service: RlsService,
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
        })
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
        let incoming =
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let service = RateLimitServiceServer::from_arc(self.service.clone());
        let mut builder = tonic::transport::Server::builder();
        if let Some(tls) = self.tls.clone() {
            builder = match builder.tls_config(tls) {
                Ok(builder) => builder,
                Err(e) => {
                    log::error!("the rate limit service's TLS cannot be set up: {e}");
                    return;
                }
            };
        }
        let served = builder
            .add_service(service)
            .serve_with_incoming_shutdown(incoming, async move {
                let _ = shutdown.changed().await;
            })
            .await;
        if let Err(e) = served {
            log::error!("the rate limit service stopped: {e}");
        }
    }
}
