//! One change asked of the control API: the idempotency key it goes under (the caller's
//! `Idempotency-Key`, or one made up and returned), and the outcomes a change can have, each
//! logged and counted (`floodgate_admin_attempts_total{action, outcome}`).

use super::reply::Reply;
use crate::control::ControlError;
use http::{HeaderName, HeaderValue, StatusCode};

/// The longest idempotency key taken.
const MAX_KEY: usize = 128;

/// The key a change goes under: a retry with the same key never makes the change twice.
pub(super) struct IdempotencyKey(String);

impl IdempotencyKey {
    /// The key the caller sent, checked, or a fresh one when none was sent.
    pub(super) fn of(header: Option<&[u8]>) -> Result<Self, Reply> {
        let Some(sent) = header else {
            let mut bytes = [0u8; 16];
            getrandom::fill(&mut bytes).map_err(|e| {
                let detail = format!("no idempotency key could be made: {e}");
                Reply::problem(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &detail,
                    serde_json::json!({}),
                )
            })?;
            return Ok(Self(bytes.iter().map(|b| format!("{b:02x}")).collect()));
        };
        let visible = |b: &u8| (0x21..=0x7e).contains(b);
        if sent.is_empty() || sent.len() > MAX_KEY || !sent.iter().all(visible) {
            return Err(Reply::bad_field(
                "Idempotency-Key",
                "the Idempotency-Key header must be 1 to 128 visible ASCII characters",
            ));
        }
        Ok(Self(String::from_utf8_lossy(sent).into_owned()))
    }

    /// The key.
    pub(super) fn as_str(&self) -> &str {
        &self.0
    }

    /// `reply` with the key, so a caller that sent none can retry under it.
    pub(super) fn on(&self, reply: Reply) -> Reply {
        match HeaderValue::from_str(&self.0) {
            Ok(value) => reply.with_header(HeaderName::from_static("idempotency-key"), value),
            Err(_) => reply,
        }
    }
}

/// How a change asked of the control API ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChangeResult {
    /// The entry was added.
    Created,
    /// Nothing changed: the same entry stands already (or the key made it before).
    Existing,
    /// The entry was removed.
    Removed,
    /// Nothing changed: there was no such entry.
    Absent,
    /// Nothing changed: the callers' buckets were reset and the fleet told.
    Reset,
    /// Nothing changed: the list is full.
    Refused,
    /// Nothing changed: the store could not be asked.
    Unavailable,
    /// The store did not confirm: the change may have been made.
    Unknown,
}

impl ChangeResult {
    /// The `outcome` label and the word in the log.
    pub(super) fn word(self) -> &'static str {
        match self {
            ChangeResult::Created => "created",
            ChangeResult::Existing => "existing",
            ChangeResult::Removed => "removed",
            ChangeResult::Absent => "absent",
            ChangeResult::Reset => "reset",
            ChangeResult::Refused => "refused",
            ChangeResult::Unavailable => "unavailable",
            ChangeResult::Unknown => "unknown",
        }
    }

    /// Whether the control state changed.
    pub(super) fn changed(self) -> bool {
        matches!(
            self,
            ChangeResult::Created | ChangeResult::Removed | ChangeResult::Reset
        )
    }

    /// The outcome of a change the control state did not confirm.
    pub(super) fn of(e: &ControlError) -> Self {
        match e {
            ControlError::Full { .. } => ChangeResult::Refused,
            ControlError::Unavailable(_) | ControlError::Unreadable(_) => ChangeResult::Unavailable,
            ControlError::Unknown(_) => ChangeResult::Unknown,
        }
    }
}
