//! `GET /v1/overload`: the switch, and each watched pool's requests in flight, limit and
//! line; `PUT /v1/overload` `{"level": "challenge" | "shed" | "auto", "ttl": "1h"}`: the
//! manual switch, fleet-wide (through Redis) within a second, logged like every change, ended
//! by itself when its time is up. A level it does not know changes nothing (400 naming
//! `level`).

use super::api::{ControlApi, Operator};
use super::change::ChangeResult;
use super::input;
use super::reply::Reply;
use crate::gate::reply::echo;
use crate::overload::{Level, Overload, MAX_TTL};
use http::StatusCode;
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::Duration;

/// How long a switch lasts when the call gives no `ttl`.
const DEFAULT_TTL: Duration = Duration::from_secs(3600);

/// `PUT /v1/overload`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SwitchBody {
    level: String,
    ttl: Option<String>,
    reason: Option<String>,
}

impl ControlApi {
    /// `GET /v1/overload`.
    pub(super) fn overload_state(&self) -> Reply {
        Reply::json(StatusCode::OK, &state(&self.overload))
    }

    /// `PUT /v1/overload`.
    pub(super) async fn switch_overload(&self, operator: &Operator, body: &[u8]) -> Reply {
        let body: SwitchBody = match input::parse(body) {
            Ok(body) => body,
            Err(reply) => return reply,
        };
        let Some(level) = Level::from_word(&body.level) else {
            return Reply::bad_field(
                "level",
                &format!(
                    "`level` must be `challenge`, `shed` or `auto`, not `{}`",
                    echo(&body.level)
                ),
            );
        };
        let ttl = match ttl(body.ttl.as_deref()) {
            Ok(ttl) => ttl,
            Err(reply) => return reply,
        };
        let reason = match input::terms(None, body.reason) {
            Ok((_, reason)) => reason,
            Err(reply) => return reply,
        };
        let target = target(level, ttl);
        match self.overload.set(level, ttl, &operator.0).await {
            Ok(_) => {
                self.record(
                    operator,
                    ("overload", &target, &reason),
                    ChangeResult::Created,
                );
                Reply::json(StatusCode::OK, &state(&self.overload))
            }
            Err(e) => {
                self.record(
                    operator,
                    ("overload", &target, &reason),
                    ChangeResult::Unavailable,
                );
                Reply::problem(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!("{e}: nothing changed"),
                    json!({ "outcome": "not made" }),
                )
            }
        }
    }
}

/// How the log names a switch: its level and how long it lasts; `auto` alone (it ends a
/// switch: no time applies).
fn target(level: Level, ttl: Duration) -> String {
    match level {
        Level::Auto => level.word().to_owned(),
        _ => format!("{} for {}", level.word(), humantime::format_duration(ttl)),
    }
}

/// A switch's `ttl`: 1 hour when not given, from 1 s to 7 days.
fn ttl(text: Option<&str>) -> Result<Duration, Reply> {
    let Some(text) = text else {
        return Ok(DEFAULT_TTL);
    };
    let refuse = || {
        Reply::bad_field(
            "ttl",
            "`ttl` must be a duration from 1s to 7d, like 90s, 1h or 2d",
        )
    };
    let ttl = humantime::parse_duration(text).map_err(|_| refuse())?;
    match (Duration::from_secs(1)..=MAX_TTL).contains(&ttl) {
        true => Ok(ttl),
        false => Err(refuse()),
    }
}

/// What `GET /v1/overload` shows.
fn state(overload: &Overload) -> Value {
    let now = overload.clock().now_ms();
    let switch = overload.switch().map(|s| {
        json!({
            "level": s.level.word(),
            "by": s.by,
            "set_at_ms": s.at_ms,
            "until_ms": s.until_ms,
            "expires_in_s": s.until_ms.saturating_sub(now).div_ceil(1000),
        })
    });
    json!({
        "level": overload.level().word(),
        "configured": overload.configured(),
        "switch": switch,
        "pools": overload.loads(),
    })
}
