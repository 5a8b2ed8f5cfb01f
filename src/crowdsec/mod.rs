//! A CrowdSec remediation component ("bouncer"): pulls the Local API's decision stream and
//! publishes the addresses and ranges it bans as the control state's blocklist, which the
//! gate checks before anything else but the operators' own bans. On the Redis store one
//! instance at a time pulls (a lock with a lease) and shares the decisions through Redis, so
//! the fleet needs one bouncer key; on the memory store each instance pulls with its own key.
//! Requests never wait on LAPI: a pull runs beside them, and known decisions stay in force
//! while LAPI is away.

#[cfg(feature = "crowdsec")]
mod bouncer;
mod decision;
#[cfg(feature = "crowdsec")]
mod lapi;
mod shared;

#[cfg(feature = "crowdsec")]
pub use bouncer::Bouncer;
pub use decision::{go_duration_ms, Held, LapiDecision, Pulled};
#[cfg(feature = "crowdsec")]
pub use lapi::{Answer, Lapi, PullError};
pub use shared::{Change, Lead, Shared, SharedDecisions, CROWDSEC_SCRIPT};

use crate::control::Remedy;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// How the process hands freed memory back to the system: the binary's allocator says (this
/// library forbids the unsafe call it takes); nothing until it does.
static GIVE_BACK: OnceLock<fn()> = OnceLock::new();

/// Sets how freed memory is handed back to the system after a big LAPI answer (the binary
/// passes its allocator's way, once at start).
pub fn set_give_back(give_back: fn()) {
    let _ = GIVE_BACK.set(give_back);
}

/// Hands freed memory back to the system, if the binary said how: an allocator otherwise keeps
/// the pages a big answer took, and the process would stay at its peak.
pub fn give_back_memory() {
    if let Some(give_back) = GIVE_BACK.get() {
        give_back();
    }
}

/// `[crowdsec]`: where LAPI is, with which key, how often to pull, and which decisions.
#[derive(Debug, Clone, PartialEq)]
pub struct CrowdSecSettings {
    /// LAPI's base URL (`http://127.0.0.1:8080`).
    pub url: String,
    /// The file holding the bouncer key (`cscli bouncers add floodgate`); read on every pull.
    pub api_key_file: PathBuf,
    /// Time between pulls (10 s, as CrowdSec recommends).
    pub poll_interval: Duration,
    /// The decision scopes pulled: `ip`, `range`.
    pub scopes: Vec<String>,
    /// Only decisions of these origins, when given (`crowdsec`, `cscli`, `CAPI`, `lists`).
    pub origins: Vec<String>,
    /// Only decisions whose scenario contains one of these, when given.
    pub scenarios_containing: Vec<String>,
    /// No decision whose scenario contains one of these.
    pub scenarios_not_containing: Vec<String>,
    /// What a `captcha` decision does: ban (403), or throttle (429).
    pub on_captcha: Remedy,
    /// The largest answer LAPI may send (bytes): a bigger one is refused as it streams in.
    pub max_answer_bytes: u64,
}

impl CrowdSecSettings {
    /// The default pull interval.
    pub const POLL_INTERVAL: Duration = Duration::from_secs(10);
    /// The scopes Floodgate can apply (and pulls when `scopes` is not given).
    pub const SCOPES: [&'static str; 2] = ["ip", "range"];
    /// The default cap on an answer: 16 MiB, about 100 000 decisions (the biggest community
    /// blocklists hold 20–50 000, a few MB).
    pub const MAX_ANSWER_BYTES: u64 = 16 * 1024 * 1024;
}
