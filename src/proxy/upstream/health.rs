//! Active health checks: pingora's [`HealthCheck`] for one pool. Each backend address gets a
//! `GET path` with its own scheme, TLS name, CA and `Host`; a 2xx or 3xx answer is healthy
//! (pingora's `HttpHealthCheck` takes only 200, and one scheme and TLS name per pool); the
//! whole probe, connect to last byte, has `timeout`. The load balancer's background service
//! runs it every `interval` and flips a backend after `unhealthy_after` / `healthy_after`
//! probes in a row.

use super::settings::ActiveCheck;
use super::slot::slot_of;
use async_trait::async_trait;
use pingora::connectors::http::Connector;
use pingora::http::RequestHeader;
use pingora::lb::health_check::HealthCheck;
use pingora::lb::Backend;
use pingora::prelude::HttpPeer;
use pingora::{Error, ErrorType, Result};
use std::sync::Arc;
use std::time::Duration;

/// How one backend address is probed.
pub(super) struct Target {
    /// Where, with the backend's TLS settings and the probe's timeouts.
    pub(super) peer: HttpPeer,
    /// The request sent, `Host` included.
    pub(super) request: RequestHeader,
    /// What the logs call it (`pool api backend 10.0.0.1:80`).
    pub(super) label: String,
}

/// The probe request: `GET path` with `host` as its `Host`.
pub(super) fn request(path: &str, host: &str) -> Result<RequestHeader> {
    let mut request = RequestHeader::build("GET", path.as_bytes(), None)?;
    request.insert_header(http::header::HOST, host)?;
    request.insert_header(http::header::USER_AGENT, "floodgate-health-check")?;
    Ok(request)
}

/// Whether a probe's answer says healthy: 2xx and 3xx do.
pub(super) fn healthy_status(status: u16) -> bool {
    (200..400).contains(&status)
}

/// The health check of one pool: one [`Target`] per backend address, indexed by slot.
pub(super) struct Probe {
    targets: Vec<Target>,
    connector: Arc<Connector>,
    timeout: Duration,
    unhealthy_after: usize,
    healthy_after: usize,
}

impl Probe {
    /// A probe of `targets` (in slot order) with the thresholds of `check`.
    pub(super) fn new(
        check: &ActiveCheck,
        targets: Vec<Target>,
        connector: Arc<Connector>,
    ) -> Self {
        Self {
            targets,
            connector,
            timeout: check.timeout,
            unhealthy_after: check.unhealthy_after,
            healthy_after: check.healthy_after,
        }
    }

    fn target(&self, backend: &Backend) -> Result<&Target> {
        slot_of(backend)
            .and_then(|slot| self.targets.get(slot))
            .ok_or_else(|| Error::explain(ErrorType::InternalError, "a backend of no pool"))
    }

    async fn probe(&self, target: &Target) -> Result<()> {
        let (mut session, _reused) = self.connector.get_http_session(&target.peer).await?;
        session.set_write_timeout(Some(self.timeout));
        session.set_read_timeout(Some(self.timeout));
        session
            .write_request_header(Box::new(target.request.clone()))
            .await?;
        session.finish_request_body().await?;
        session.read_response_header().await?;
        let status = session.response_header().map_or(0, |r| r.status.as_u16());
        if !healthy_status(status) {
            let kind = ErrorType::CustomCode("unhealthy status", status);
            return Error::e_explain(kind, format!("the health check answered {status}"));
        }
        while session.read_response_body().await?.is_some() {}
        Ok(())
    }
}

#[async_trait]
impl HealthCheck for Probe {
    async fn check(&self, backend: &Backend) -> Result<()> {
        let target = self.target(backend)?;
        match tokio::time::timeout(self.timeout, self.probe(target)).await {
            Ok(answer) => answer,
            Err(_) => Error::e_explain(
                ErrorType::ReadTimedout,
                format!("the health check took over {:?}", self.timeout),
            ),
        }
    }

    fn backend_summary(&self, backend: &Backend) -> String {
        self.target(backend)
            .map_or_else(|_| format!("{backend:?}"), |t| t.label.clone())
    }

    fn health_threshold(&self, success: bool) -> usize {
        match success {
            true => self.healthy_after,
            false => self.unhealthy_after,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_and_three_hundreds_are_healthy() {
        assert!(healthy_status(200) && healthy_status(204) && healthy_status(302));
        assert!(!healthy_status(404) && !healthy_status(500) && !healthy_status(101));
    }

    #[test]
    fn the_probe_asks_for_the_path_with_the_host() {
        let req = request("/healthz?deep=1", "api.internal").unwrap();
        assert_eq!(req.uri, "/healthz?deep=1");
        assert_eq!(req.headers["host"], "api.internal");
    }
}
