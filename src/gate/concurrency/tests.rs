//! Slots when their store fails: `on_error` decides for enforcing policies, never for shadow
//! ones (a shadow policy never blocks).

use crate::gate::{Deciders, Gate, OutcomeKind};
use crate::identity::{IdentityKey, Request};
use crate::limiter::{BucketKey, Fallback, InFlight, LimiterError, MemoryStore, Slot};
use crate::policy::RouteFacts;
use crate::telemetry::Metrics;
use async_trait::async_trait;
use http::{HeaderMap, Method};
use std::path::Path;
use std::sync::Arc;

/// A slot store that never answers.
struct Unreachable;

#[async_trait]
impl InFlight for Unreachable {
    async fn acquire(&self, _: BucketKey<'_>, _: u32) -> Result<Option<Slot>, LimiterError> {
        Err(LimiterError::Store("unreachable".into()))
    }

    async fn count(&self, _: BucketKey<'_>) -> Result<u32, LimiterError> {
        Err(LimiterError::Store("unreachable".into()))
    }
}

/// A gate with `policies` whose slots cannot be had, and `on_error = "deny"`.
fn gate(policies: &str) -> Gate {
    let text = format!(
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\
         {policies}"
    );
    let config = crate::config::parse(&text, Path::new("t.toml")).expect("a config");
    let limiter: Arc<MemoryStore> = Arc::new(MemoryStore::new(1000));
    let deciders = Deciders {
        control: Arc::new(crate::control::Control::in_process(limiter.clone())),
        limiter,
        in_flight: Arc::new(Unreachable),
        fallback: Fallback::Deny,
        clock: crate::clock::Clock::System,
    };
    Gate::new(
        config.access.clone(),
        &config.policies,
        config.identity.clone(),
        IdentityKey::from_bytes([7; 32]),
        deciders,
        &Metrics::new(),
    )
}

async fn decide(gate: &Gate) -> OutcomeKind {
    let headers = HeaderMap::new();
    let req = Request::new(&headers, None, "192.0.2.1".parse().ok(), None);
    let route = RouteFacts {
        method: &Method::GET,
        host: None,
        path: "/",
    };
    gate.decide(&req, &route).await.outcome.kind()
}

const ENFORCING: &str = "
[[policy]]
name = \"main\"
capacity = 10
rate = \"10/s\"
";

#[tokio::test]
async fn a_shadow_policys_failing_slot_store_never_refuses() {
    let gate = gate(&format!(
        "{ENFORCING}
[[policy]]
name = \"watch\"
capacity = 10
rate = \"10/s\"
max_in_flight = 1
shadow = true
"
    ));
    assert_eq!(decide(&gate).await, OutcomeKind::Allowed);
}

#[tokio::test]
async fn an_enforcing_policys_failing_slot_store_is_on_errors_to_decide() {
    let gate = gate(&format!("{ENFORCING}max_in_flight = 1\n"));
    assert_eq!(decide(&gate).await, OutcomeKind::StoreUnavailable);
}
