//! `/v1/keys`: a value of a verified source (`[identity.verify]`) as operators name it (its
//! source and raw value, or its digest) → what is known of it (`GET`); revoke it fleet-wide
//! for `remember` (`POST /v1/keys/revoke`), or forget what is known of it (`DELETE`). The
//! value is never kept, logged or returned: only its digest.

use super::api::{ControlApi, Operator};
use super::change::ChangeResult;
use super::input::{self, Named, Value as Values};
use super::reply::{expires_in, Reply};
use crate::gate::reply::echo;
use crate::identity::{Identity, ProofState, Provenance, Source, SourceSpec};
use crate::proof::{state_of, Change, Kept};
use http::StatusCode;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

/// `POST /v1/keys/revoke`'s body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RevokeBody {
    source: String,
    value: Option<String>,
    caller: Option<String>,
}

/// A verified source's value as a call names it.
struct NamedKey {
    /// The source as written.
    source: Arc<str>,
    /// The value's digest.
    digest: Identity,
    /// What is known of it.
    state: ProofState,
}

impl ControlApi {
    /// `GET /v1/keys?source=…&value=…` (or `caller=<digest>`).
    pub(super) fn key_state(&self, query: &str) -> Reply {
        let key = match self.key_in(query) {
            Ok(key) => key,
            Err(reply) => return reply,
        };
        let now = self.proofs.clock().now_ms();
        let until = self
            .proofs
            .kept(&key.source)
            .and_then(|kept| kept.book.get(&key.digest, now))
            .map(|entry| entry.until_ms);
        Reply::json(
            StatusCode::OK,
            &json!({
                "source": &*key.source,
                "caller": key.digest.hex(),
                "state": key.state.word(),
                "expires_in": until.map_or(serde_json::Value::Null, |u| expires_in(Some(u), now)),
                "shared": self.proofs.is_shared(),
            }),
        )
    }

    /// `POST /v1/keys/revoke`: the value is refused until `remember` passes (or a proving
    /// answer heals it), on every instance.
    pub(super) async fn revoke_key(&self, operator: &Operator, body: &[u8]) -> Reply {
        let body: RevokeBody = match input::parse(body) {
            Ok(body) => body,
            Err(reply) => return reply,
        };
        let named = match input::named(body.value.map(Values::One), body.caller) {
            Ok(named) => named,
            Err(reply) => return reply,
        };
        let key = match self.named_key(&body.source, &named) {
            Ok(key) => key,
            Err(reply) => return reply,
        };
        let Some(kept) = self.proofs.kept(&key.source) else {
            return list_source(&key.source);
        };
        let now = self.proofs.clock().now_ms();
        let change = Change {
            identity: key.digest,
            kept: Kept::Revoked,
            until_ms: now.saturating_add(kept.remember.as_millis() as u64),
        };
        let target = shown(&key);
        if let Err(e) = self.proofs.change(&key.source, change).await {
            self.record(
                operator,
                ("revoke_key", &target, ""),
                ChangeResult::Unavailable,
            );
            let detail = format!("the store cannot be reached: {e}");
            return Reply::problem(StatusCode::SERVICE_UNAVAILABLE, &detail, json!({}));
        }
        self.record(operator, ("revoke_key", &target, ""), ChangeResult::Created);
        Reply::json(
            StatusCode::OK,
            &json!({ "source": &*key.source, "caller": key.digest.hex(), "state": "refused" }),
        )
    }

    /// `DELETE /v1/keys?source=…&value=…` (or `caller=<digest>`): what is known of the value
    /// is forgotten everywhere; it is unproven until the backend proves it again.
    pub(super) async fn forget_key(&self, operator: &Operator, query: &str) -> Reply {
        let key = match self.key_in(query) {
            Ok(key) => key,
            Err(reply) => return reply,
        };
        if self.proofs.kept(&key.source).is_none() {
            return list_source(&key.source);
        }
        let target = shown(&key);
        match self.proofs.forget(&key.source, &key.digest).await {
            Ok(known) => {
                let outcome = if known {
                    ChangeResult::Removed
                } else {
                    ChangeResult::Absent
                };
                self.record(operator, ("forget_key", &target, ""), outcome);
                Reply::json(
                    StatusCode::OK,
                    &json!({ "source": &*key.source, "caller": key.digest.hex(), "forgotten": known }),
                )
            }
            Err(e) => {
                self.record(
                    operator,
                    ("forget_key", &target, ""),
                    ChangeResult::Unavailable,
                );
                let detail = format!("the store cannot be reached: {e}");
                Reply::problem(StatusCode::SERVICE_UNAVAILABLE, &detail, json!({}))
            }
        }
    }

    /// The value a query names (`source` and `value` or `caller`).
    fn key_in(&self, query: &str) -> Result<NamedKey, Reply> {
        let (source, named) = from_query(query)?;
        self.named_key(&source, &named)
    }

    /// The value of a verified source named by a call, its digest and state.
    fn named_key(&self, source: &str, named: &Named) -> Result<NamedKey, Reply> {
        let decider = self.gate();
        let Some(provenance) = decider.callers().provenance.as_deref() else {
            return Err(Reply::unknown(
                "source",
                "no source is verified: `[identity.verify]` names none",
            ));
        };
        let index = verified_index(provenance, source)?;
        let name = provenance.name(index).clone();
        let (state, digest) = match named {
            Named::Value(value) => match value.parts().as_slice() {
                [one] => provenance.peek(index, one.trim_ascii().as_bytes()),
                _ => return Err(Reply::bad_field("value", "a verified source has one value")),
            },
            Named::Digest(hex) => {
                let digest = digest_of(hex)?;
                let now = self.proofs.clock().now_ms();
                let Some(kept) = self.proofs.kept(&name) else {
                    return Err(Reply::bad_field(
                        "caller",
                        "a listed source's values are looked up by `value`",
                    ));
                };
                (state_of(kept.book.get(&digest, now)), digest)
            }
        };
        Ok(NamedKey {
            source: name,
            digest,
            state,
        })
    }
}

/// The `source` and the value (or digest) a query names.
fn from_query(query: &str) -> Result<(String, Named), Reply> {
    let (mut source, mut value, mut caller) = (None, None, None);
    for (key, found) in form_urlencoded::parse(query.as_bytes()) {
        match key.as_ref() {
            "source" => source = Some(found.into_owned()),
            "value" => value = Some(found.into_owned()),
            "caller" => caller = Some(found.into_owned()),
            _ => {}
        }
    }
    let Some(source) = source else {
        return Err(Reply::bad_field("source", "`source` is missing"));
    };
    Ok((source, input::named(value.map(Values::One), caller)?))
}

/// The place of `source` among the verified sources, or a 400 naming `source`.
fn verified_index(provenance: &dyn Provenance, source: &str) -> Result<usize, Reply> {
    let spec: SourceSpec = source.parse().map_err(|e: crate::identity::SourceError| {
        Reply::bad_field("source", &echo(&e.to_string()))
    })?;
    let part: Option<&Source> = match spec.parts() {
        [one] => Some(one),
        _ => None,
    };
    part.and_then(|part| provenance.verified().iter().position(|v| v == part))
        .ok_or_else(|| {
            Reply::unknown(
                "source",
                &format!("`{}` is not a source of `[identity.verify]`", echo(source)),
            )
        })
}

/// The digest `hex` names, or a 400 naming `caller`.
fn digest_of(hex: &str) -> Result<Identity, Reply> {
    Identity::from_hex(&hex.trim().to_ascii_lowercase()).ok_or_else(|| {
        Reply::bad_field("caller", "`caller` must be a value's digest: 32 hex digits")
    })
}

/// The answer to a change of a listed source's value: the list decides.
fn list_source(source: &str) -> Reply {
    Reply::bad_field(
        "source",
        &format!("`{source}` is verified by a list: edit its file and reload"),
    )
}

/// How the log names a value (never raw).
fn shown(key: &NamedKey) -> String {
    format!("key {} {}", key.source, &key.digest.hex()[..12])
}
