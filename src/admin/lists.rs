//! `/v1/bans` and `/v1/overrides`: add, list (paged by id) and delete.

use super::api::{gate_of, refused, ControlApi, Operator};
use super::callers::{caller_of, chain_with, limit_of, short};
use super::change::{ChangeResult, IdempotencyKey};
use super::cidr::cidr_ban;
use super::input::{self, BanBody, Named, OverrideBody};
use super::reply::{expires_in, Reply};
use crate::control::{override_key, Added, Ban, BanTarget, ControlError, Entry, Kind, Override};
use crate::limiter::BucketKey;
use crate::policy::{Limits, Rate};
use http::StatusCode;
use serde_json::{json, Value};

/// The most entries one page lists.
const MAX_PAGE: usize = 1000;

impl ControlApi {
    /// `POST /v1/bans`.
    pub(super) async fn ban(
        &self,
        operator: &Operator,
        key: &IdempotencyKey,
        body: &[u8],
    ) -> Reply {
        let body: BanBody = match input::parse(body) {
            Ok(body) => body,
            Err(reply) => return reply,
        };
        let (ttl, reason) = match input::terms(body.ttl.as_deref(), body.reason.clone()) {
            Ok(terms) => terms,
            Err(reply) => return reply,
        };
        let (target, shown) = match self.ban_target(&body) {
            Ok(target) => target,
            Err(reply) => return reply,
        };
        let ban = Ban {
            id: 0,
            target,
            reason: reason.clone(),
            by: operator.0.clone(),
            created_at_ms: 0,
            expires_at_ms: None,
        };
        let added = self.control.add(Entry::Ban(ban), ttl, key.as_str()).await;
        self.answer_add(operator, key, ("ban", &shown, &reason), added)
    }

    /// What a ban body refuses, and how the log names it (never a raw caller value).
    fn ban_target(&self, body: &BanBody) -> Result<(BanTarget, String), Reply> {
        let force = body.force.unwrap_or(false);
        let named = input::named(body.value.clone(), body.caller.clone())?;
        match (body.scope.as_str(), body.source.as_deref()) {
            ("cidr", None) => {
                let Named::Value(value) = &named else {
                    return Err(Reply::bad_field("caller", "a cidr ban takes a `value`"));
                };
                let value = cidr_ban(value, force)?.to_string();
                Ok((
                    BanTarget::Cidr {
                        value: value.clone(),
                    },
                    format!("cidr {value}"),
                ))
            }
            ("cidr", Some(_)) => Err(Reply::bad_field("source", "a cidr ban takes no source")),
            ("caller", Some(source)) => {
                let decider = self.gate();
                let gate = gate_of(&decider);
                let chain = chain_with(gate, source, None)?;
                let (spec, caller) = caller_of(gate, chain, source, &named)?;
                let shown = format!("caller {spec} {}", short(&caller));
                let target = BanTarget::Caller {
                    source: spec.to_string(),
                    caller: caller.hex(),
                };
                Ok((target, shown))
            }
            ("caller", None) => Err(Reply::bad_field(
                "source",
                "a caller ban needs its `source`",
            )),
            _ => Err(Reply::bad_field(
                "scope",
                "`scope` must be \"cidr\" or \"caller\"",
            )),
        }
    }

    /// `POST /v1/overrides`.
    pub(super) async fn override_limits(
        &self,
        operator: &Operator,
        key: &IdempotencyKey,
        body: &[u8],
    ) -> Reply {
        let body: OverrideBody = match input::parse(body) {
            Ok(body) => body,
            Err(reply) => return reply,
        };
        let (ttl, reason) = match input::terms(body.ttl.as_deref(), body.reason.clone()) {
            Ok(terms) => terms,
            Err(reply) => return reply,
        };
        let decider = self.gate();
        let gate = gate_of(&decider);
        let Some(policy) = gate.policies().find(|p| **p.name() == *body.policy) else {
            return Reply::unknown("policy", &format!("no policy is called `{}`", body.policy));
        };
        let limit = match limit_of(policy) {
            Ok(limit) => limit,
            Err(reply) => return reply,
        };
        let limits = match limits_of(&body, &limit.limits) {
            Ok(checked) => checked,
            Err(reply) => return reply,
        };
        let caller = input::named(body.value.clone(), body.caller.clone()).and_then(|named| {
            chain_with(gate, &body.source, Some(policy))
                .and_then(|chain| caller_of(gate, chain, &body.source, &named))
        });
        let (spec, caller) = match caller {
            Ok(caller) => caller,
            Err(reply) => return reply,
        };
        // The override's bucket starts full at its own size.
        let bucket = override_key(policy.name());
        let bucket_key = BucketKey {
            policy: &bucket,
            identity: caller,
        };
        if let Err(e) = self.limiter.reset(&[bucket_key]).await {
            let detail = format!("the store cannot be reached: {e}");
            return Reply::problem(StatusCode::SERVICE_UNAVAILABLE, &detail, json!({}));
        }
        let entry = Override {
            id: 0,
            policy: policy.name().to_string(),
            source: spec.to_string(),
            caller: caller.hex(),
            capacity: limits.rate().map_or(0, |_| limits.capacity()),
            rate: limits.rate().map(ToString::to_string).unwrap_or_default(),
            quota: limits.is_quota().then(|| limits.capacity()),
            reason: reason.clone(),
            by: operator.0.clone(),
            created_at_ms: 0,
            expires_at_ms: None,
        };
        let added = self
            .control
            .add(Entry::Override(entry), ttl, key.as_str())
            .await;
        let target = format!("{} for caller {spec} {}", policy.name(), short(&caller));
        self.answer_add(operator, key, ("override", &target, &reason), added)
    }

    /// Logs, counts and answers what an add did: 201 for a new entry, 200 with the entry that
    /// stands already, else the problem (504 when the outcome is unknown).
    fn answer_add(
        &self,
        operator: &Operator,
        key: &IdempotencyKey,
        said: (&str, &str, &str),
        added: Result<Added, ControlError>,
    ) -> Reply {
        let now = self.clock.now_ms();
        let (outcome, reply) = match &added {
            Ok(Added::Created(kept)) => (
                ChangeResult::Created,
                entry_reply(StatusCode::CREATED, kept, now),
            ),
            Ok(Added::Existing(held)) => (
                ChangeResult::Existing,
                entry_reply(StatusCode::OK, held, now),
            ),
            Ok(Added::Replayed(id)) => {
                let body = json!({ "id": id, "expires_in": 0, "deleted_since": true });
                (ChangeResult::Existing, Reply::json(StatusCode::OK, &body))
            }
            Err(e) => (ChangeResult::of(e), refused(e, Some(key))),
        };
        self.record(operator, said, outcome);
        reply
    }

    /// `GET /v1/bans` and `GET /v1/overrides`: `?after=ID&limit=N`, by id.
    pub(super) fn list(&self, kind: Kind, query: &str) -> Reply {
        let (mut after, mut limit) = (0u64, 100usize);
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            match (key.as_ref(), value.parse::<u64>()) {
                ("after", Ok(id)) => after = id,
                ("limit", Ok(n)) if (1..=MAX_PAGE as u64).contains(&n) => limit = n as usize,
                ("after" | "limit", _) => {
                    return Reply::bad_field(&key, "`after` is an id and `limit` from 1 to 1000")
                }
                _ => {}
            }
        }
        let now = self.clock.now_ms();
        let view = self.control.view();
        let from = after.saturating_add(1);
        let listed: Box<dyn Iterator<Item = Entry> + '_> = match kind {
            Kind::Ban => Box::new(
                view.bans()
                    .range(from..)
                    .map(|(_, b)| Entry::Ban(b.clone())),
            ),
            Kind::Override => Box::new(
                view.overrides()
                    .range(from..)
                    .map(|(_, o)| Entry::Override(o.clone())),
            ),
        };
        let entries: Vec<Entry> = listed
            .filter(|e| crate::control::in_force(e.expires_at_ms(), now))
            .take(limit + 1)
            .collect();
        let next = (entries.len() > limit).then(|| entries[limit - 1].id());
        let page: Vec<Value> = entries.iter().take(limit).map(|e| shown(e, now)).collect();
        let name = match kind {
            Kind::Ban => "bans",
            Kind::Override => "overrides",
        };
        Reply::json(StatusCode::OK, &json!({ name: page, "next_after": next }))
    }

    /// `DELETE /v1/bans/{id}` and `DELETE /v1/overrides/{id}`.
    pub(super) async fn delete(
        &self,
        operator: &Operator,
        key: &IdempotencyKey,
        kind: Kind,
        id: &str,
    ) -> Reply {
        let Ok(id) = id.parse::<u64>() else {
            return Reply::bad_field("id", "the id in the path must be a number");
        };
        let (outcome, reply) = match self.control.remove(kind, id, key.as_str()).await {
            Ok(true) => (ChangeResult::Removed, Reply::empty(StatusCode::NO_CONTENT)),
            Ok(false) => {
                let detail = format!("there is no {} {id}", kind.word());
                (ChangeResult::Absent, Reply::unknown("id", &detail))
            }
            Err(e) => (ChangeResult::of(&e), refused(&e, Some(key))),
        };
        let action = match kind {
            Kind::Ban => "unban",
            Kind::Override => "unoverride",
        };
        self.record(
            operator,
            (action, &format!("{} {id}", kind.word()), ""),
            outcome,
        );
        reply
    }
}

/// An override's limits, checked as a policy's would be: `quota` for a quota policy,
/// `capacity` and `rate` for a bucket policy.
fn limits_of(body: &OverrideBody, policy: &Limits) -> Result<Limits, Reply> {
    if policy.is_quota() {
        let misplaced = [
            ("capacity", body.capacity.is_some()),
            ("rate", body.rate.is_some()),
        ];
        if let Some((field, _)) = misplaced.iter().find(|(_, given)| *given) {
            let detail =
                format!("`{field}` is for bucket policies; this policy is a quota: give `quota`");
            return Err(Reply::bad_field(field, &detail));
        }
        let missing = || Reply::bad_field("quota", "a quota policy's override needs `quota`");
        let quota = input::count(body.quota.as_ref().ok_or_else(missing)?, "quota")?;
        return match policy.requota(quota) {
            Some(checked) => checked.map_err(|e| Reply::bad_field("quota", &e.to_string())),
            None => Err(Reply::bad_field("quota", "`quota` is for quota policies")),
        };
    }
    if body.quota.is_some() {
        let detail =
            "`quota` is for quota policies; this policy is a bucket: give `capacity` and `rate`";
        return Err(Reply::bad_field("quota", detail));
    }
    let missing = |field: &str| {
        Reply::bad_field(
            field,
            &format!("a bucket policy's override needs `{field}`"),
        )
    };
    let capacity = input::capacity(body.capacity.as_ref().ok_or_else(|| missing("capacity"))?)?;
    let rate: Rate = body
        .rate
        .as_deref()
        .ok_or_else(|| missing("rate"))?
        .parse()
        .map_err(|e: crate::policy::RateError| Reply::bad_field("rate", &e.to_string()))?;
    Limits::new(capacity, rate).map_err(|e| {
        let field = match e {
            crate::limiter::SpecError::Capacity => "capacity",
            _ => "rate",
        };
        Reply::bad_field(field, &e.to_string())
    })
}

/// The entry's id, the seconds it has left at `now` (Unix ms) and what it holds (the
/// network as stored).
fn entry_reply(status: StatusCode, entry: &Entry, now: u64) -> Reply {
    Reply::json(status, &shown(entry, now))
}

/// An entry as listed: as stored, with the seconds it has left.
fn shown(entry: &Entry, now: u64) -> Value {
    let mut value: Value = serde_json::from_str(&entry.to_json()).unwrap_or_default();
    if let Some(fields) = value.as_object_mut() {
        fields.insert(
            "expires_in".into(),
            json!(expires_in(entry.expires_at_ms(), now)),
        );
    }
    value
}
