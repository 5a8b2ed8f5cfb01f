//! `/v1/callers`: a caller as operators name it (source and raw value) → its digest; inspect
//! (per policy the caller meets: limits, what its bucket holds, its block, its slots, its
//! override and ban, read without taking anything) and reset (buckets refilled, blocks ended,
//! every instance's cached refusals forgotten).

use super::api::{gate_of, refused, ControlApi, Operator};
use super::change::ChangeResult;
use super::input::{self, Named, ResetBody, Value as Values};
use super::reply::{expires_in, Reply};
use crate::control::{override_key, ControlView};
use crate::gate::reply::echo;
use crate::gate::Gate;
use crate::identity::{Identity, IdentityChain, NamedCaller, SourceSpec};
use crate::limiter::BucketKey;
use crate::policy::{Limit, Policy};
use http::StatusCode;
use serde_json::{json, Value};
use std::net::IpAddr;

/// The chain that reads `source`: `policy`'s when given, else the global one or any policy's.
pub(super) fn chain_with<'g>(
    gate: &'g Gate,
    source: &str,
    policy: Option<&'g Policy>,
) -> Result<&'g IdentityChain, Reply> {
    let spec: SourceSpec = source.parse().map_err(|e: crate::identity::SourceError| {
        Reply::bad_field("source", &echo(&e.to_string()))
    })?;
    let reads = |chain: &&IdentityChain| chain.sources.contains(&spec);
    let found = match policy {
        Some(policy) => Some(gate.chain_of(policy)).filter(reads),
        None => std::iter::once(gate.identity())
            .chain(gate.policies().map(|p| gate.chain_of(p)))
            .find(reads),
    };
    found.ok_or_else(|| {
        let whose = policy.map_or(String::from("any policy"), |p| {
            format!("policy `{}`", p.name())
        });
        Reply::unknown(
            "source",
            &format!("`{}` identifies no caller of {whose}", echo(source)),
        )
    })
}

/// `policy`'s bucket and its terms, or a 400 naming `policy` when it takes from no bucket.
pub(super) fn limit_of(policy: &Policy) -> Result<&Limit, Reply> {
    policy.limit().ok_or_else(|| {
        let detail = format!(
            "policy `{}` is a `{}` policy: it takes from no bucket",
            policy.name(),
            policy.action.word()
        );
        Reply::bad_field("policy", &detail)
    })
}

/// The source and digest of the caller named by `source` and `value` under `chain`.
pub(super) fn caller_of(
    gate: &Gate,
    chain: &IdentityChain,
    source: &str,
    value: &Named,
) -> Result<(SourceSpec, Identity), Reply> {
    let spec: SourceSpec = source.parse().map_err(|e: crate::identity::SourceError| {
        Reply::bad_field("source", &echo(&e.to_string()))
    })?;
    let value = match value {
        Named::Value(value) => value,
        Named::Digest(digest) => return Ok((spec, digest_of(digest)?)),
    };
    let parts = value.parts();
    let named = NamedCaller {
        source: &spec,
        values: &parts,
    };
    let caller = named
        .identity(&chain.ip, gate.digest_key())
        .map_err(|e| Reply::bad_field("value", &e.to_string()))?;
    Ok((spec, caller))
}

/// The caller whose digest is `digest` (32 hex digits, either case), or a 400.
fn digest_of(digest: &str) -> Result<Identity, Reply> {
    Identity::from_hex(&digest.trim().to_ascii_lowercase()).ok_or_else(|| {
        Reply::bad_field(
            "caller",
            "`caller` must be a caller's digest: the 32 hex digits /offenders and inspect show",
        )
    })
}

/// The first 12 hex digits of a digest: how logs name a caller.
pub(super) fn short(caller: &Identity) -> String {
    caller.hex()[..12].to_owned()
}

impl ControlApi {
    /// `GET /v1/callers?source=…&value=…[&policy=…]`.
    pub(super) async fn inspect(&self, query: &str) -> Reply {
        let (mut source, mut values, mut only, mut digest) = (None, Vec::new(), None, None);
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            match key.as_ref() {
                "source" => source = Some(value.into_owned()),
                "value" => values.push(value.into_owned()),
                "caller" => digest = Some(value.into_owned()),
                "policy" => only = Some(value.into_owned()),
                _ => {}
            }
        }
        let Some(source) = source else {
            return Reply::bad_field("source", "`source` is missing");
        };
        let values = (!values.is_empty()).then_some(Values::Parts(values));
        let named = match input::named(values, digest) {
            Ok(named) => named,
            Err(reply) => return reply,
        };
        let decider = self.gate();
        let gate = gate_of(&decider);
        let policies = match self.policies_of(gate, &source, only.as_deref()) {
            Ok(policies) => policies,
            Err(reply) => return reply,
        };
        let view = self.control.view();
        let now = self.clock.now_ms();
        let mut shown = Vec::new();
        for (policy, limit) in policies {
            let chain = gate.chain_of(policy);
            let (spec, caller) = match caller_of(gate, chain, &source, &named) {
                Ok(found) => found,
                Err(reply) => return reply,
            };
            let ban = ban_of(&view, &spec, caller, &named, now);
            match self.standing((policy, limit), caller, &view, now).await {
                Ok(mut standing) => {
                    standing["ban"] = ban;
                    standing["caller"] = json!(caller.hex());
                    shown.push(standing);
                }
                Err(reply) => return reply,
            }
        }
        Reply::json(
            StatusCode::OK,
            &json!({ "source": source, "policies": shown }),
        )
    }

    /// How `caller` stands under `policy`, nothing taken.
    async fn standing(
        &self,
        (policy, limit): (&Policy, &Limit),
        caller: Identity,
        view: &ControlView,
        now: u64,
    ) -> Result<Value, Reply> {
        let applied = view.override_for(policy.key.id(), caller, now);
        let overridden_key = override_key(policy.name());
        // As the gate applies it: not when made for the other kind of limits.
        let resized = applied.and_then(|applied| limit.limits.resized(&applied.size));
        let applied = applied.filter(|_| resized.is_some());
        let (limits, bucket) = match &resized {
            Some(limits) => (&**limits, &overridden_key),
            None => (&limit.limits, &policy.key),
        };
        let key = BucketKey {
            policy: bucket,
            identity: caller,
        };
        let unavailable = |e: crate::limiter::LimiterError| {
            let detail = format!("the store cannot be read now: {e}");
            Reply::problem(StatusCode::SERVICE_UNAVAILABLE, &detail, json!({}))
        };
        let calendar = limits.calendar();
        let now_us = self.clock.now_us();
        let spec = limits.spec(now_us);
        let peek = self.limiter.peek(key, spec).await.map_err(unavailable)?;
        let in_flight = match limit.rules.max_in_flight {
            Some(_) => {
                let slots = BucketKey {
                    policy: &policy.key,
                    identity: caller,
                };
                self.in_flight.count(slots).await.map_err(unavailable)?
            }
            None => 0,
        };
        let seconds = |us: u64| us.div_ceil(1_000_000);
        let remaining = peek.remaining.max(0.0).floor() as u64;
        let mut shown = json!({
            "policy": &**policy.name(),
            "tiers": limit.tiers.is_some() && applied.is_none(),
            "remaining": remaining,
            "full_in": seconds(peek.full_in_us),
            "blocked_for": seconds(peek.blocked_for_us),
            "in_flight": in_flight,
            "override": applied.map(|a| json!({ "id": a.id, "expires_in": expires_in(a.expires_at_ms, now) })),
        });
        let shape = match (limits.rate(), calendar) {
            (Some(rate), _) => json!({ "capacity": limits.capacity(), "rate": rate.to_string() }),
            (None, Some(calendar)) => json!({
                "quota": limits.capacity(),
                "period": calendar.period().word(),
                "timezone": calendar.calendar().zone_name(),
                "used": (limits.capacity() as f64 - peek.remaining).max(0.0).ceil() as u64,
                "resets_at": &*calendar.resets_at(now_us),
            }),
            (None, None) => json!({ "quota": limits.capacity() }),
        };
        if let (Value::Object(shown), Value::Object(shape)) = (&mut shown, shape) {
            shown.extend(shape);
        }
        Ok(shown)
    }

    /// `POST /v1/callers/reset`.
    pub(super) async fn reset(&self, operator: &Operator, body: &[u8]) -> Reply {
        let body: ResetBody = match input::parse(body) {
            Ok(body) => body,
            Err(reply) => return reply,
        };
        let named = match input::named(body.value, body.caller) {
            Ok(named) => named,
            Err(reply) => return reply,
        };
        let decider = self.gate();
        let gate = gate_of(&decider);
        let policies = match self.policies_of(gate, &body.source, body.policy.as_deref()) {
            Ok(policies) => policies,
            Err(reply) => return reply,
        };
        let mut reset = Vec::new();
        let mut shown = String::new();
        for (policy, _) in policies {
            let (spec, caller) = match caller_of(gate, gate.chain_of(policy), &body.source, &named)
            {
                Ok(found) => found,
                Err(reply) => return reply,
            };
            let overridden = override_key(policy.name());
            let keys = [
                BucketKey {
                    policy: &policy.key,
                    identity: caller,
                },
                BucketKey {
                    policy: &overridden,
                    identity: caller,
                },
            ];
            if let Err(e) = self.limiter.reset(&keys).await {
                let detail = format!("the store cannot be reached: {e}");
                return Reply::problem(StatusCode::SERVICE_UNAVAILABLE, &detail, json!({}));
            }
            if let Err(e) = self.control.announce_reset(caller).await {
                self.record(
                    operator,
                    ("reset", &shown_of(&spec, caller), ""),
                    ChangeResult::of(&e),
                );
                return refused(&e, None);
            }
            shown = shown_of(&spec, caller);
            reset.push(policy.name().to_string());
        }
        let target = format!("{shown} under {}", reset.join(", "));
        self.record(operator, ("reset", &target, ""), ChangeResult::Reset);
        Reply::json(StatusCode::OK, &json!({ "reset": reset }))
    }

    /// The policies whose callers `source` identifies (only `only`, when named).
    fn policies_of<'g>(
        &self,
        gate: &'g Gate,
        source: &str,
        only: Option<&str>,
    ) -> Result<Vec<(&'g Policy, &'g Limit)>, Reply> {
        if let Some(name) = only {
            let policy = gate
                .policies()
                .find(|p| &**p.name() == name)
                .ok_or_else(|| {
                    Reply::unknown("policy", &format!("no policy is called `{}`", echo(name)))
                })?;
            let limit = limit_of(policy)?;
            chain_with(gate, source, Some(policy))?;
            return Ok(vec![(policy, limit)]);
        }
        chain_with(gate, source, None)?;
        Ok(gate
            .policies()
            .filter_map(|p| Some((p, p.limit()?)))
            .filter(|(p, _)| chain_with(gate, source, Some(p)).is_ok())
            .collect())
    }
}

/// How the log names a caller (never by its raw value).
fn shown_of(spec: &SourceSpec, caller: Identity) -> String {
    format!("caller {spec} {}", short(&caller))
}

/// The ban refusing the named caller, if any: as a caller of `spec`, or for an `ip` source by
/// a banned network holding the address.
fn ban_of(
    view: &ControlView,
    spec: &SourceSpec,
    caller: Identity,
    named: &Named,
    now: u64,
) -> Value {
    let parts = match named {
        Named::Value(value) => value.parts(),
        Named::Digest(_) => Vec::new(),
    };
    let by_address = match (spec.tag(), parts.as_slice()) {
        ("ip", [address]) => address
            .trim()
            .parse::<IpAddr>()
            .ok()
            .and_then(|ip| view.net_ban(ip, now)),
        _ => None,
    };
    match view.caller_ban(caller, now).or(by_address) {
        Some(ban) => json!({ "id": ban.id, "expires_in": expires_in(ban.expires_at_ms, now) }),
        None => Value::Null,
    }
}
