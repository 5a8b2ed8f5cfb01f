//! The services a build may leave out (cargo features `rls` and `crowdsec`, both on by
//! default; `scripts/run`'s quick build has neither): Envoy's rate limit service and the
//! CrowdSec bouncer. A config that asks for one the build lacks is refused when the server is
//! built, naming the feature.

use super::drain::InService;
use super::stores::{BuildError, Stores};
use crate::config::Config;
use crate::rls::RlsRules;
use crate::telemetry::Metrics;
use arc_swap::ArcSwap;
use pingora::server::Server;
use std::sync::Arc;

/// Adds the CrowdSec bouncer when `[crowdsec]` asks for it; `id` is this instance's.
#[cfg(feature = "crowdsec")]
pub(super) fn crowdsec(
    server: &mut Server,
    config: &Config,
    stores: &Stores,
    metrics: &Arc<Metrics>,
    id: &str,
    in_service: &Arc<InService>,
) -> Result<(), BuildError> {
    use super::drain::UntilDone;
    use crate::crowdsec::{Bouncer, SharedDecisions};
    use pingora::services::background::background_service;
    let Some(settings) = &config.crowdsec else {
        return Ok(());
    };
    let shared = (stores.redis.clone()).map(|redis| SharedDecisions::new(redis, id.to_owned()));
    let bouncer = Bouncer::new(
        settings.clone(),
        stores.control.clone(),
        shared,
        metrics.crowdsec.clone(),
        stores.clock.clone(),
    )
    .map_err(|e| BuildError::CrowdSec(e.to_string()))?;
    // In service until it returns: told to stop, it gives its fleet lease up.
    let bouncer = UntilDone::new(Arc::new(bouncer), in_service.clone());
    server.add_service(background_service("crowdsec", bouncer));
    Ok(())
}

/// Refuses `[crowdsec]`: this build has no bouncer.
#[cfg(not(feature = "crowdsec"))]
pub(super) fn crowdsec(
    _: &mut Server,
    config: &Config,
    _: &Stores,
    _: &Arc<Metrics>,
    _: &str,
    _: &Arc<InService>,
) -> Result<(), BuildError> {
    match config.crowdsec {
        Some(_) => Err(BuildError::Feature("crowdsec")),
        None => Ok(()),
    }
}

/// Adds Envoy's rate limit service when `[rls]` asks for it, deciding with `stores`; the
/// rules it reads (a reload swaps them).
#[cfg(feature = "rls")]
pub(super) fn rls(
    server: &mut Server,
    config: &Config,
    stores: &Stores,
    metrics: &Arc<Metrics>,
    in_service: &Arc<InService>,
) -> Result<Option<Arc<ArcSwap<RlsRules>>>, BuildError> {
    use super::drain::UntilDone;
    use crate::rls::{Deciders, RlsLimits, RlsServer, RlsService};
    use pingora::services::background::background_service;
    let Some(settings) = &config.rls else {
        return Ok(None);
    };
    let rules = Arc::new(ArcSwap::new(settings.rules.clone()));
    let deciders = Deciders {
        limiter: stores.limiter.clone(),
        fallback: stores.fallback.clone(),
        key: stores.digest_key.clone(),
        metrics: metrics.clone(),
        timeout: settings.timeout,
    };
    let service = RlsService::new(rules.clone(), deciders);
    let server_limits = &config.server.limits;
    let limits = RlsLimits {
        max_connections: server_limits.max_connections,
        max_concurrent_streams: settings.max_concurrent_streams,
        timeout: server_limits.header_timeout,
        max_header_bytes: u32::try_from(server_limits.max_header_bytes).unwrap_or(u32::MAX),
    };
    let listener = RlsServer::bind(settings.listen, settings.tls.as_ref(), service, limits)
        .map_err(|e| BuildError::Rls(format!("cannot listen on {}: {e}", settings.listen)))?;
    // In service until it returns: told to stop, it drains its streams first.
    let listener = UntilDone::new(Arc::new(listener), in_service.clone());
    server.add_service(background_service("rate limit service", listener));
    Ok(Some(rules))
}

/// Refuses `[rls]`: this build has no rate limit service.
#[cfg(not(feature = "rls"))]
pub(super) fn rls(
    _: &mut Server,
    config: &Config,
    _: &Stores,
    _: &Arc<Metrics>,
    _: &Arc<InService>,
) -> Result<Option<Arc<ArcSwap<RlsRules>>>, BuildError> {
    match config.rls {
        Some(_) => Err(BuildError::Feature("rls")),
        None => Ok(None),
    }
}
