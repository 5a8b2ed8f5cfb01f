//! What the control state holds: bans and overrides, as stored (JSON, in Redis or the state
//! file) and returned by the admin API. Callers appear only as their source and digest.

use serde::{Deserialize, Serialize};

/// Which list an entry is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Refusals: `/v1/bans`.
    Ban,
    /// Limits replaced: `/v1/overrides`.
    Override,
}

impl Kind {
    /// The word used in Redis and in the `action` label (`ban`, `override`).
    pub fn word(self) -> &'static str {
        match self {
            Kind::Ban => "ban",
            Kind::Override => "override",
        }
    }
}

/// What a ban refuses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "scope", rename_all = "lowercase")]
pub enum BanTarget {
    /// Every client address in a network (`203.0.113.0/24`, `2001:db8::/48`, one address).
    Cidr {
        /// The network, as its canonical text.
        value: String,
    },
    /// One caller as a source identifies it.
    Caller {
        /// The source (`header:x-api-key`).
        source: String,
        /// The caller's digest (32 hex digits).
        caller: String,
    },
}

/// A ban: its target's requests are refused with 403 until it expires or is deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ban {
    /// Its number, unique among every ban and override of the fleet.
    #[serde(default)]
    pub id: u64,
    /// Whom it refuses.
    #[serde(flatten)]
    pub target: BanTarget,
    /// Why, as the operator said.
    #[serde(default)]
    pub reason: String,
    /// The name of the token that made it.
    #[serde(default)]
    pub by: String,
    /// When it was made, Unix milliseconds (the store's clock).
    #[serde(default)]
    pub created_at_ms: u64,
    /// When it ends, Unix milliseconds; never when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<u64>,
}

/// An override: one caller's limits under one policy, replaced while it lasts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Override {
    /// Its number, unique among every ban and override of the fleet.
    #[serde(default)]
    pub id: u64,
    /// The policy whose limits it replaces.
    pub policy: String,
    /// The source that identifies the caller (`header:x-api-key`).
    pub source: String,
    /// The caller's digest (32 hex digits).
    pub caller: String,
    /// The caller's capacity under it (a bucket policy's override).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub capacity: u64,
    /// The caller's refill rate under it (`50/s`; a bucket policy's override).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rate: String,
    /// The caller's quota per period under it (a quota policy's override).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<u64>,
    /// Why, as the operator said.
    #[serde(default)]
    pub reason: String,
    /// The name of the token that made it.
    #[serde(default)]
    pub by: String,
    /// When it was made, Unix milliseconds (the store's clock).
    #[serde(default)]
    pub created_at_ms: u64,
    /// When it ends, Unix milliseconds; never when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<u64>,
}

impl Ban {
    /// What makes two bans the same: a ban on a target that one refuses already changes
    /// nothing (`lua/control.lua` keys its ban index the same way).
    pub fn target_key(&self) -> String {
        match &self.target {
            BanTarget::Cidr { value } => format!("cidr {value}"),
            BanTarget::Caller { source, caller } => format!("caller {source} {caller}"),
        }
    }
}

impl Override {
    /// What makes two overrides the same: a new one replaces the old on this key.
    pub fn slot(&self) -> String {
        format!("{} {}", self.policy, self.caller)
    }
}

/// A new entry, before the store numbers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A ban.
    Ban(Ban),
    /// An override.
    Override(Override),
}

impl Entry {
    /// Which list it goes on.
    pub fn kind(&self) -> Kind {
        match self {
            Entry::Ban(_) => Kind::Ban,
            Entry::Override(_) => Kind::Override,
        }
    }

    /// Its number.
    pub fn id(&self) -> u64 {
        match self {
            Entry::Ban(b) => b.id,
            Entry::Override(o) => o.id,
        }
    }

    /// When it ends, if ever.
    pub fn expires_at_ms(&self) -> Option<u64> {
        match self {
            Entry::Ban(b) => b.expires_at_ms,
            Entry::Override(o) => o.expires_at_ms,
        }
    }

    /// The entry numbered `id`, made at `now_ms`, ending `ttl_ms` later (never for `None`).
    pub fn stamped(mut self, id: u64, now_ms: u64, ttl_ms: Option<u64>) -> Self {
        let expires = ttl_ms.map(|ttl| now_ms.saturating_add(ttl));
        match &mut self {
            Entry::Ban(b) => (b.id, b.created_at_ms, b.expires_at_ms) = (id, now_ms, expires),
            Entry::Override(o) => (o.id, o.created_at_ms, o.expires_at_ms) = (id, now_ms, expires),
        }
        self
    }

    /// The entry as JSON (the form stored).
    pub fn to_json(&self) -> String {
        let value = match self {
            Entry::Ban(b) => serde_json::to_string(b),
            Entry::Override(o) => serde_json::to_string(o),
        };
        value.unwrap_or_default()
    }
}

/// Everything the control state holds at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contents {
    /// Every ban, expired ones possibly included (the view skips them).
    pub bans: Vec<Ban>,
    /// Every override, the same.
    pub overrides: Vec<Override>,
}

impl Contents {
    /// Every entry, bans first.
    pub fn entries(contents: Self) -> Vec<Entry> {
        let bans = contents.bans.into_iter().map(Entry::Ban);
        bans.chain(contents.overrides.into_iter().map(Entry::Override))
            .collect()
    }

    /// The contents holding `entries`.
    pub fn of(entries: impl IntoIterator<Item = Entry>) -> Self {
        let mut contents = Self::default();
        for entry in entries {
            match entry {
                Entry::Ban(b) => contents.bans.push(b),
                Entry::Override(o) => contents.overrides.push(o),
            }
        }
        contents
    }
}

/// Whether an entry ending at `expires_at_ms` still stands at `now_ms`.
pub fn in_force(expires_at_ms: Option<u64>, now_ms: u64) -> bool {
    expires_at_ms.is_none_or(|end| now_ms < end)
}

/// Whether a number is 0 (left out of the stored entry).
fn is_zero(n: &u64) -> bool {
    *n == 0
}
