//! What control API calls send, read strictly: JSON bodies that refuse unknown fields, and the
//! values in them checked one by one, each error naming its field.

use super::reply::Reply;
use serde::Deserialize;
use std::time::Duration;

/// The shortest ttl accepted: one second (the lists are read again about once a second).
const MIN_TTL: Duration = Duration::from_secs(1);
/// The longest ttl accepted: ten years.
const MAX_TTL: Duration = Duration::from_secs(10 * 366 * 86_400);
/// The longest reason kept.
const MAX_REASON: usize = 1024;

/// A caller's value: one string, or one per part of a composite source.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum Value {
    /// One value.
    One(String),
    /// One per part, in order.
    Parts(Vec<String>),
}

impl Value {
    /// The values as a list.
    pub(super) fn parts(&self) -> Vec<&str> {
        match self {
            Value::One(v) => vec![v.as_str()],
            Value::Parts(vs) => vs.iter().map(String::as_str).collect(),
        }
    }
}

/// A caller as a call names it: by its raw value(s) at a source, or by its digest (the 32 hex
/// digits `/offenders` and inspect show), under the source it was seen with.
#[derive(Debug, Clone)]
pub(super) enum Named {
    /// `value`: what a request carries at the source.
    Value(Value),
    /// `caller`: the digest.
    Digest(String),
}

/// The caller named by a call's `value` or `caller` (exactly one), or a 400.
pub(super) fn named(value: Option<Value>, caller: Option<String>) -> Result<Named, Reply> {
    match (value, caller) {
        (Some(value), None) => Ok(Named::Value(value)),
        (None, Some(digest)) => Ok(Named::Digest(digest)),
        (Some(_), Some(_)) => Err(Reply::bad_field(
            "caller",
            "name the caller by `value` or by `caller` (its digest), not both",
        )),
        (None, None) => Err(Reply::bad_field(
            "value",
            "`value` is missing (or `caller`, the caller's 32-hex-digit digest)",
        )),
    }
}

/// `POST /v1/bans`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BanBody {
    pub(super) scope: String,
    pub(super) value: Option<Value>,
    /// The caller's digest, instead of `value` (scope `caller`).
    pub(super) caller: Option<String>,
    pub(super) source: Option<String>,
    pub(super) ttl: Option<String>,
    pub(super) reason: Option<String>,
    /// Set to ban every address of a family (`0.0.0.0/0`, `::/0`).
    pub(super) force: Option<bool>,
}

/// `POST /v1/overrides`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OverrideBody {
    pub(super) policy: String,
    pub(super) source: String,
    pub(super) value: Option<Value>,
    /// The caller's digest, instead of `value`.
    pub(super) caller: Option<String>,
    pub(super) capacity: Option<serde_json::Value>,
    pub(super) rate: Option<String>,
    pub(super) quota: Option<serde_json::Value>,
    pub(super) ttl: Option<String>,
    pub(super) reason: Option<String>,
}

/// `POST /v1/callers/reset`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ResetBody {
    pub(super) source: String,
    pub(super) value: Option<Value>,
    /// The caller's digest, instead of `value`.
    pub(super) caller: Option<String>,
    pub(super) policy: Option<String>,
}

/// `body` read as `T`, or a 400 naming the field at fault: the one serde names (unknown or
/// missing), else the one whose value has the wrong type.
pub(super) fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Reply> {
    serde_json::from_slice(body).map_err(|e| {
        let message = e.to_string();
        let named = message
            .split('`')
            .nth(1)
            .filter(|_| message.contains("field `"))
            .map(str::to_owned);
        match named.or_else(|| mistyped::<T>(body)) {
            Some(field) => Reply::bad_field(
                &field,
                &format!("the body is not what this call takes: `{field}`: {message}"),
            ),
            None => Reply::bad_field(
                "body",
                &format!("the body is not what this call takes: {message}"),
            ),
        }
    })
}

/// The field of a JSON object `body` whose value `T` refuses for its type: the first whose
/// removal leaves no such refusal (the rest read, or only that field missing).
fn mistyped<T: serde::de::DeserializeOwned>(body: &[u8]) -> Option<String> {
    let serde_json::Value::Object(fields) = serde_json::from_slice(body).ok()? else {
        return None;
    };
    fields.keys().find_map(|key| {
        let mut rest = fields.clone();
        rest.remove(key);
        match serde_json::from_value::<T>(serde_json::Value::Object(rest)) {
            Ok(_) => Some(key.clone()),
            Err(e) if e.to_string().contains(&format!("missing field `{key}`")) => {
                Some(key.clone())
            }
            Err(_) => None,
        }
    })
}

/// A change's `ttl` (milliseconds; `None`: never ends) and `reason`, or a 400.
pub(super) fn terms(
    ttl: Option<&str>,
    reason: Option<String>,
) -> Result<(Option<u64>, String), Reply> {
    Ok((ttl_ms(ttl)?, self::reason(reason)?))
}

/// A `ttl` in milliseconds (`None`: never ends), or a 400.
fn ttl_ms(ttl: Option<&str>) -> Result<Option<u64>, Reply> {
    let Some(text) = ttl else {
        return Ok(None);
    };
    let refuse = |why: &str| Reply::bad_field("ttl", &format!("`ttl` {why}, like 90s, 1h or 7d"));
    let ttl = humantime::parse_duration(text).map_err(|_| refuse("must be a duration"))?;
    if ttl < MIN_TTL || ttl > MAX_TTL {
        return Err(refuse("must be at least 1s and at most ten years"));
    }
    Ok(Some(ttl.as_millis().max(1) as u64))
}

/// A `reason`, or a 400 when it is too long.
fn reason(reason: Option<String>) -> Result<String, Reply> {
    let reason = reason.unwrap_or_default();
    match reason.len() > MAX_REASON {
        true => Err(Reply::bad_field(
            "reason",
            "`reason` is longer than 1024 bytes",
        )),
        false => Ok(reason),
    }
}

/// A `capacity`: a whole number of tokens from 1, or a 400.
pub(super) fn capacity(value: &serde_json::Value) -> Result<u64, Reply> {
    count(value, "capacity")
}

/// A count named `field` (`capacity`, `quota`): a whole number from 1, or a 400.
pub(super) fn count(value: &serde_json::Value, field: &str) -> Result<u64, Reply> {
    value
        .as_u64()
        .filter(|&c| c >= 1)
        .ok_or_else(|| Reply::bad_field(field, &format!("`{field}` must be a whole number from 1")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_body_names_its_field() {
        let e =
            parse::<BanBody>(br#"{"scope":"cidr","value":"10.0.0.0/8","tll":"1h"}"#).unwrap_err();
        assert!(String::from_utf8_lossy(&e.body).contains(r#""field":"tll""#));
        let e = parse::<OverrideBody>(br#"{"source":"ip"}"#).unwrap_err();
        assert_eq!(e.status, 400);
        let field = |body: &[u8]| {
            let e = parse::<BanBody>(body).unwrap_err();
            let v: serde_json::Value = serde_json::from_slice(&e.body).unwrap();
            v["field"].as_str().unwrap().to_owned()
        };
        assert_eq!(
            field(br#"{"scope":"cidr","value":"10.0.0.0/8","ttl":5}"#),
            "ttl"
        );
        assert_eq!(field(br#"{"scope":7,"value":"10.0.0.0/8"}"#), "scope");
        assert_eq!(field(br#"{"scope":"cidr","value":{"a":1}}"#), "value");
        assert_eq!(
            field(br#"{"scope":"cidr","value":"x","force":"yes"}"#),
            "force"
        );
        assert_eq!(field(br#"[1]"#), "body");
        assert!(ttl_ms(Some("0s")).is_err());
        assert!(ttl_ms(Some("1ns")).is_err());
        assert!(ttl_ms(Some("999ms")).is_err());
        assert_eq!(ttl_ms(Some("1s")).unwrap(), Some(1000));
        assert!(ttl_ms(Some("soon")).is_err());
        assert_eq!(ttl_ms(Some("1h")).unwrap(), Some(3_600_000));
        assert!(capacity(&serde_json::json!(-5)).is_err());
        assert!(capacity(&serde_json::json!(2.5)).is_err());
        assert!(capacity(&serde_json::json!(0)).is_err());
        assert_eq!(capacity(&serde_json::json!(50)).unwrap(), 50);
    }
}
