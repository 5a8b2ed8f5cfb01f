//! The control API on the admin listener: authentication, then routing to the bans, the
//! overrides and the callers (`lists.rs`, `callers.rs`). Every change is logged once and
//! counted; a change that cannot be made changes nothing and says why.

use super::change::{ChangeResult, IdempotencyKey};
use super::escape::escaped;
use super::reply::Reply;
use super::tokens::{Check, Tokens};
use crate::clock::Clock;
use crate::control::{Control, ControlError};
use crate::explain::Decisions;
use crate::gate::{Decider, Gate, InForce};
use crate::limiter::{InFlight, Limiter};
use crate::overload::Overload;
use crate::proof::Keeper;
use crate::telemetry::Metrics;
use http::{header, HeaderValue, Method, StatusCode};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The largest request body the control API reads.
pub const MAX_BODY: usize = 64 * 1024;

/// Everything the control API works on.
pub struct ControlApi {
    /// The tokens that open it.
    pub tokens: Arc<Tokens>,
    /// The running config's decider: its gate (policies, sources, digest key).
    pub in_force: Arc<dyn InForce>,
    /// Bans and overrides.
    pub control: Arc<Control>,
    /// The buckets (inspect, reset).
    pub limiter: Arc<dyn Limiter>,
    /// The concurrency slots (inspect).
    pub in_flight: Arc<dyn InFlight>,
    /// Where changes and refusals are counted.
    pub metrics: Arc<Metrics>,
    /// Overload protection: the pools' load and the switch.
    pub overload: Arc<Overload>,
    /// The decisions kept to be explained.
    pub decisions: Arc<Decisions>,
    /// The proven and revoked values of verified sources.
    pub proofs: Arc<Keeper>,
    /// What entries' times left, quota periods and kept decisions' ages are read by.
    pub clock: Clock,
}

/// One call, as read from the connection.
pub struct Call<'a> {
    /// Its method.
    pub method: &'a Method,
    /// Its path.
    pub path: &'a str,
    /// Its query string.
    pub query: Option<&'a str>,
    /// Its `Authorization` header.
    pub authorization: Option<&'a [u8]>,
    /// Its `Idempotency-Key` header.
    pub idempotency_key: Option<&'a [u8]>,
    /// Its body, or `None` when it was larger than [`MAX_BODY`].
    pub body: Option<&'a [u8]>,
    /// The address it came from (failed tokens are counted per address).
    pub peer: Option<IpAddr>,
}

/// Who made a call: the name of its token.
pub(super) struct Operator(pub(super) String);

impl ControlApi {
    /// The answer to `call` (a path under `/v1/`).
    pub async fn answer(&self, call: &Call<'_>) -> Reply {
        let check = self
            .tokens
            .check_from(call.authorization, call.peer, Instant::now());
        let operator = match check {
            Check::Allowed(name) => Operator(name),
            refused => {
                log::debug!(
                    "control API: a call to {} without a valid token",
                    escaped(call.path)
                );
                return not_opened(&refused, &self.metrics);
            }
        };
        let Some(body) = call.body else {
            return Reply::problem(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the body is larger than 64 KiB",
                serde_json::json!({}),
            );
        };
        let (method, query) = (call.method, call.query.unwrap_or(""));
        let key = match IdempotencyKey::of(call.idempotency_key) {
            Ok(key) => key,
            Err(reply) => return reply,
        };
        let segments: Vec<&str> = call.path.trim_end_matches('/').split('/').skip(2).collect();
        use crate::control::Kind::{Ban, Override};
        match (segments.as_slice(), method) {
            (["bans"], &Method::GET) => self.list(Ban, query),
            (["bans"], &Method::POST) => key.on(self.ban(&operator, &key, body).await),
            (["bans"], _) => not_allowed("GET, POST"),
            (["bans", id], &Method::DELETE) => key.on(self.delete(&operator, &key, Ban, id).await),
            (["overrides"], &Method::GET) => self.list(Override, query),
            (["overrides"], &Method::POST) => {
                key.on(self.override_limits(&operator, &key, body).await)
            }
            (["overrides"], _) => not_allowed("GET, POST"),
            (["overrides", id], &Method::DELETE) => {
                key.on(self.delete(&operator, &key, Override, id).await)
            }
            (["bans" | "overrides", _], _) => not_allowed("DELETE"),
            (["callers"], &Method::GET) => self.inspect(query).await,
            (["callers"], _) => not_allowed("GET"),
            (["callers", "reset"], &Method::POST) => self.reset(&operator, body).await,
            (["callers", "reset"], _) => not_allowed("POST"),
            (["overload"], &Method::GET) => self.overload_state(),
            (["overload"], &Method::PUT) => self.switch_overload(&operator, body).await,
            (["overload"], _) => not_allowed("GET, PUT"),
            (["decisions", reference], &Method::GET) => self.explain(reference).await,
            (["decisions", _], _) => not_allowed("GET"),
            (["keys"], &Method::GET) => self.key_state(query),
            (["keys"], &Method::DELETE) => self.forget_key(&operator, query).await,
            (["keys"], _) => not_allowed("GET, DELETE"),
            (["keys", "revoke"], &Method::POST) => self.revoke_key(&operator, body).await,
            (["keys", "revoke"], _) => not_allowed("POST"),
            _ => Reply::problem(
                StatusCode::NOT_FOUND,
                "no such control endpoint; see /v1/bans, /v1/overrides, /v1/callers, /v1/keys, /v1/overload, /v1/decisions/{ref}",
                serde_json::json!({}),
            ),
        }
    }

    /// The running decider, whose gate the call reads.
    pub(super) fn gate(&self) -> Arc<Decider> {
        self.in_force.decider()
    }

    /// Logs and counts a change asked for, with its outcome, on one line: operator text is
    /// escaped.
    pub(super) fn record(
        &self,
        operator: &Operator,
        (action, target, reason): (&str, &str, &str),
        outcome: ChangeResult,
    ) {
        self.metrics
            .admin_attempts
            .with_label_values(&[action, outcome.word()])
            .inc();
        if outcome.changed() {
            self.metrics
                .admin_changes
                .with_label_values(&[action])
                .inc();
        }
        log::info!(
            "control API: {} {action} {}{}: {}",
            escaped(&operator.0),
            escaped(target),
            match reason {
                "" => String::new(),
                r => format!(" ({})", escaped(r)),
            },
            outcome.word()
        );
    }
}

/// The gate of a decider.
pub(super) fn gate_of(decider: &Decider) -> &Gate {
    decider.gate()
}

/// The answer to a change the control state did not confirm: 507 and 503 changed nothing;
/// 504 says the outcome is unknown (retry under the same key, or read the list).
pub(super) fn refused(e: &ControlError, key: Option<&IdempotencyKey>) -> Reply {
    let (status, outcome) = match e {
        ControlError::Full { .. } => (StatusCode::INSUFFICIENT_STORAGE, "not made"),
        ControlError::Unavailable(_) | ControlError::Unreadable(_) => {
            (StatusCode::SERVICE_UNAVAILABLE, "not made")
        }
        ControlError::Unknown(_) => (StatusCode::GATEWAY_TIMEOUT, "unknown"),
    };
    let mut extra = serde_json::json!({ "outcome": outcome });
    if let Some(key) = key {
        extra["idempotency_key"] = key.as_str().into();
    }
    Reply::problem(status, &e.to_string(), extra)
}

/// The answer to a call its token did not open (`Off`, `Refused` or `Slowed`), counted.
pub(super) fn not_opened(check: &Check, metrics: &Metrics) -> Reply {
    match check {
        Check::Off => off(),
        Check::Slowed(wait) => {
            metrics.admin_auth_slowed.inc();
            slowed(*wait)
        }
        _ => {
            metrics.admin_unauthorized.inc();
            unauthorized()
        }
    }
}

/// `429`: too many failed tokens from this address lately.
fn slowed(wait: Duration) -> Reply {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    Reply::problem(
        StatusCode::TOO_MANY_REQUESTS,
        "too many calls without a valid token from this address: try again later",
        serde_json::json!({}),
    )
    .with_header(header::RETRY_AFTER, HeaderValue::from(seconds))
}

fn off() -> Reply {
    Reply::problem(
        StatusCode::FORBIDDEN,
        "the control API is off: set admin.token_file to a file of `name:token` lines and reload",
        serde_json::json!({}),
    )
}

fn unauthorized() -> Reply {
    Reply::problem(
        StatusCode::UNAUTHORIZED,
        "a control call needs `Authorization: Bearer <token>` with a token of admin.token_file",
        serde_json::json!({}),
    )
    .with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))
}

fn not_allowed(allow: &'static str) -> Reply {
    Reply::problem(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("this endpoint takes {allow}"),
        serde_json::json!({}),
    )
    .with_header(header::ALLOW, HeaderValue::from_static(allow))
}
