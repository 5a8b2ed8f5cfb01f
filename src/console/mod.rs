//! The operators' console on the admin listener: `GET /console` (one page; its script and
//! style are embedded assets at `/console/app.js` and `/console/app.css`, under a strict
//! Content-Security-Policy), and the two reads the page needs that no other endpoint gives:
//! `/console/api/rates` (allowed and throttled requests per second, per policy, over the last
//! 15 minutes, fleet-wide on the Redis store) and `/console/api/status` (store, CrowdSec,
//! challenges, whether actions are on). Everything else the page reads or changes goes
//! through `/offenders` and the control API, under their rules.

mod fleet;
mod ring;
mod sampler;

pub use ring::{Deltas, History, Ring, SECONDS};
pub use sampler::{FleetShare, Rates, Sampler, Scope};

use crate::admin::{Check, Reply, Tokens};
use crate::clock::Clock;
use crate::telemetry::Metrics;
use http::header::{HeaderName, CACHE_CONTROL, CONTENT_SECURITY_POLICY, X_CONTENT_TYPE_OPTIONS};
use http::{HeaderValue, StatusCode};
use serde_json::json;
use std::sync::Arc;

/// The page's policy: its own script, style and calls only; never framed.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

const PAGE: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// The console's state: the rate history, what it reports on, and how the store is named.
pub struct Console {
    rates: Arc<Rates>,
    metrics: Arc<Metrics>,
    tokens: Arc<Tokens>,
    store: String,
}

impl Console {
    /// A console reporting `metrics`, its actions on when `tokens` has a file, the store
    /// described as `store` (no credentials).
    pub fn new(metrics: Arc<Metrics>, tokens: Arc<Tokens>, store: String) -> Self {
        Self {
            rates: Arc::new(Rates::default()),
            metrics,
            tokens,
            store,
        }
    }

    /// The sampler that feeds this console's history (run as a background service), filing
    /// samples by `clock`.
    pub fn sampler(&self, fleet: Option<FleetShare>, clock: Clock) -> Sampler {
        Sampler::new(self.rates.clone(), self.metrics.clone(), fleet, clock)
    }

    /// Whether `path` is one of the console's data reads (which `admin.protect_metrics`
    /// puts behind a token like `/metrics`).
    pub fn is_data(path: &str) -> bool {
        path.starts_with("/console/api/")
    }

    /// The answer to a GET of `path` (with `query`), or `None` when it is not the console's.
    pub fn answer(&self, path: &str, query: Option<&str>) -> Option<Reply> {
        let reply = match path {
            "/console" | "/console/" => asset("text/html; charset=utf-8", PAGE),
            "/console/app.js" => asset("text/javascript; charset=utf-8", SCRIPT),
            "/console/app.css" => asset("text/css; charset=utf-8", STYLE),
            "/console/api/rates" => Reply::json(StatusCode::OK, &self.rates.json(since(query))),
            "/console/api/status" => Reply::json(StatusCode::OK, &self.status()),
            p if p.starts_with("/console/") => Reply::text(StatusCode::NOT_FOUND, "not found\n"),
            _ => return None,
        };
        Some(guarded(reply))
    }

    /// The store's, CrowdSec's and the challenges' state, and whether actions are on.
    fn status(&self) -> serde_json::Value {
        let store = &self.metrics.store;
        let crowdsec = &self.metrics.crowdsec;
        let (issued, passed) = self.metrics.challenges.totals();
        json!({
            "actions": !matches!(self.tokens.check(None), Check::Off),
            "store": {
                "kind": self.store,
                "latency_ms": self.rates.latency_ms(),
                "breaker_open": store.breaker_open.get() != 0,
                "fallbacks": store.fallbacks.get(),
                "fleet_size": store.fleet_size.get(),
            },
            "crowdsec": {
                "decisions": crowdsec.decisions.get(),
                "last_pull_age_s": crowdsec.last_pull_age.get(),
            },
            "challenges": { "issued": issued, "passed": passed },
        })
    }
}

impl crate::admin::Pages for Console {
    fn answer(&self, path: &str, query: Option<&str>) -> Option<Reply> {
        Console::answer(self, path, query)
    }

    fn is_data(&self, path: &str) -> bool {
        Console::is_data(path)
    }
}

/// `since=<second>` of a query.
fn since(query: Option<&str>) -> Option<u64> {
    form_urlencoded::parse(query?.as_bytes())
        .find(|(k, _)| k == "since")
        .and_then(|(_, v)| v.parse().ok())
}

fn asset(content_type: &'static str, body: &'static str) -> Reply {
    Reply {
        status: StatusCode::OK,
        content_type,
        body: body.as_bytes().to_vec(),
        headers: Vec::new(),
    }
}

/// Every console answer: the policy, no sniffing, no caching.
fn guarded(reply: Reply) -> Reply {
    let headers: [(HeaderName, &'static str); 3] = [
        (CONTENT_SECURITY_POLICY, CSP),
        (X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (CACHE_CONTROL, "no-store"),
    ];
    headers.into_iter().fold(reply, |reply, (name, value)| {
        reply.with_header(name, HeaderValue::from_static(value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn console() -> Console {
        let tokens = Arc::new(Tokens::load(None).unwrap());
        Console::new(Arc::new(Metrics::new()), tokens, "memory".into())
    }

    #[test]
    fn the_page_and_its_assets_carry_the_policy() {
        let console = console();
        for path in ["/console", "/console/app.js", "/console/app.css"] {
            let reply = console.answer(path, None).unwrap();
            assert_eq!(reply.status, 200, "{path}");
            let csp = reply
                .headers
                .iter()
                .find(|(n, _)| n == CONTENT_SECURITY_POLICY);
            assert!(csp
                .unwrap()
                .1
                .to_str()
                .unwrap()
                .contains("frame-ancestors 'none'"));
        }
        let page = String::from_utf8(console.answer("/console", None).unwrap().body).unwrap();
        assert!(!page.contains("<script>") && !page.contains("style="));
        assert!(console.answer("/metrics", None).is_none());
        assert_eq!(console.answer("/console/nope", None).unwrap().status, 404);
    }

    #[test]
    fn status_says_actions_are_off_without_a_token_file() {
        let status = console().status();
        assert_eq!(status["actions"], false);
        assert_eq!(status["store"]["kind"], "memory");
        assert_eq!(since(Some("a=1&since=42")), Some(42));
    }
}
