//! Builds the pingora server from a validated config: the proxy service and the admin service.

use crate::admin::AdminApp;
use crate::config::{Config, OnError, StoreSettings};
use crate::gate::{Fallback, Gate};
use crate::limiter::{Limiter, LimiterError, MemoryStore, RedisStore};
use crate::metrics::Metrics;
use crate::proxy::{Callers, Floodgate};
use pingora::lb::LoadBalancer;
use pingora::server::configuration::{Opt, ServerConf};
use pingora::server::Server;
use pingora::services::listening::Service;
use std::sync::Arc;

/// Why the server could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A backend address could not be resolved.
    #[error("cannot resolve the backends: {0}")]
    Backends(#[from] std::io::Error),
    /// The store could not be set up.
    #[error("cannot set up the store: {0}")]
    Store(#[from] LimiterError),
}

/// The pingora settings Floodgate's config decides; no pingora YAML is read.
fn server_conf(config: &Config) -> ServerConf {
    ServerConf {
        threads: config.server.threads,
        grace_period_seconds: Some(config.server.grace_period.as_secs()),
        graceful_shutdown_timeout_seconds: Some(config.server.shutdown_timeout.as_secs()),
        ..ServerConf::default()
    }
}

/// The store, what to do when it cannot decide, and whether `/readyz` fails with it.
fn store(
    config: &Config,
    metrics: &Metrics,
) -> Result<(Arc<dyn Limiter>, Fallback, bool), BuildError> {
    Ok(match &config.store {
        StoreSettings::Memory { max_entries } => (
            Arc::new(MemoryStore::new(*max_entries)),
            Fallback::Allow,
            true,
        ),
        StoreSettings::Redis(redis) => {
            let store = Arc::new(RedisStore::new(redis, metrics.store.clone())?);
            let fallback = match redis.on_error {
                OnError::Allow => Fallback::Allow,
                OnError::Deny => Fallback::Deny,
                OnError::Local => Fallback::Local(MemoryStore::new(redis.fallback_max_entries)),
            };
            (store, fallback, redis.on_error == OnError::Deny)
        }
    })
}

/// A ready-to-run server for `config`.
pub fn build(config: &Config) -> Result<Server, BuildError> {
    let mut server = Server::new_with_opt_and_conf(Opt::default(), server_conf(config));
    server.bootstrap();

    let metrics = Arc::new(Metrics::new());
    let (limiter, fallback, ready_needs_store) = store(config, &metrics)?;
    let gate = Gate::new(
        &config.policies,
        config.identity.clone(),
        limiter.clone(),
        fallback,
        &metrics,
        config.response.throttle_status,
    );
    let upstream = Arc::new(LoadBalancer::try_from_iter(&config.upstream.backends)?);
    let callers = Callers {
        client_ip: config.client_ip.clone(),
        jwt: config.jwt.clone(),
        access: config.access.clone(),
    };
    let floodgate = Floodgate::new(
        callers,
        gate,
        upstream,
        config.upstream.clone(),
        metrics.clone(),
    );
    let mut proxy = pingora::proxy::http_proxy_service_with_name(
        &server.configuration,
        floodgate,
        "floodgate proxy",
    );
    proxy.add_tcp(&config.server.listen.to_string());

    let mut admin = Service::new(
        "floodgate admin".to_owned(),
        AdminApp::new(metrics, limiter, ready_needs_store),
    );
    admin.threads = Some(1);
    admin.add_tcp(&config.admin.listen.to_string());

    server.add_service(proxy);
    server.add_service(admin);
    Ok(server)
}
