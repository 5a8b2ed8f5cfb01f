//! `[[policy]]` as written: the table that policies.rs, quota.rs, rules.rs, conditions.rs,
//! sender.rs and challenge.rs each check a part of, and the `match` table a `[[route]]` shares.

use super::value::{config_keys, Bounded, Header, Period, SourceList};
use crate::identity::MAX_DIFFICULTY;
use serde::Deserialize;
use toml::Spanned;

/// The largest capacity, quota or cost accepted: far beyond any real limit, small enough to
/// stay exact in the f64 arithmetic of the buckets.
pub(super) const MAX_TOKENS: i64 = 1 << 40;

config_keys! {
    Cost = "policy.cost",
    MaxInFlight = "policy.max_in_flight",
    MaxHeld = "policy.max_held",
    MaxDelay = "policy.max_delay",
    BlockFor = "policy.block_for",
    CostHeader = "policy.cost_header",
    SettleHeader = "policy.settle_header",
    Difficulty = "policy.difficulty",
}

/// `[[policy]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyFile {
    pub(crate) name: Spanned<String>,
    pub(crate) capacity: Option<Spanned<i64>>,
    pub(crate) rate: Option<Spanned<String>>,
    pub(crate) quota: Option<Spanned<i64>>,
    pub(crate) period: Option<Spanned<String>>,
    pub(crate) timezone: Option<Spanned<String>>,
    pub(crate) week_start: Option<Spanned<String>>,
    pub(crate) cost: Option<Spanned<Bounded<Cost, 1, MAX_TOKENS>>>,
    #[serde(default)]
    pub(crate) shadow: bool,
    pub(crate) sources: Option<SourceList>,
    #[serde(rename = "match")]
    pub(crate) route: Option<PolicyMatchFile>,
    pub(crate) unless: Option<Spanned<PolicyMatchFile>>,
    pub(crate) tier: Option<Spanned<String>>,
    pub(crate) tiers: Option<std::collections::BTreeMap<String, TierFile>>,
    pub(crate) cost_header: Option<Spanned<Header<CostHeader>>>,
    pub(crate) count_status: Option<Spanned<Vec<Spanned<i64>>>>,
    pub(crate) settle_header: Option<Spanned<Header<SettleHeader>>>,
    pub(crate) max_in_flight: Option<Spanned<Bounded<MaxInFlight, 1, 1_000_000>>>,
    pub(crate) max_delay: Option<Spanned<Period<MaxDelay>>>,
    pub(crate) max_held: Option<Spanned<Bounded<MaxHeld, 1, 100_000>>>,
    pub(crate) block_for: Option<Spanned<Period<BlockFor>>>,
    pub(crate) action: Option<Spanned<String>>,
    pub(crate) challenge: Option<Spanned<String>>,
    pub(crate) difficulty: Option<Spanned<Bounded<Difficulty, 1, { MAX_DIFFICULTY as i64 }>>>,
    pub(crate) bind: Option<Spanned<String>>,
    pub(crate) on_limit: Option<Spanned<String>>,
    pub(crate) priority: Option<Spanned<String>>,
    pub(crate) on_overload: Option<Spanned<String>>,
}

/// A route's `match` (a `[[route]]`'s, or the route part of a policy's).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MatchFile {
    pub(crate) host: Option<String>,
    pub(crate) path_prefix: Option<String>,
    pub(crate) path_regex: Option<Spanned<String>>,
    pub(crate) methods: Option<Vec<Spanned<String>>>,
}

/// A policy's `match` (or `unless`): a route's keys and what the request must show.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyMatchFile {
    pub(crate) host: Option<String>,
    pub(crate) path_prefix: Option<String>,
    pub(crate) path_regex: Option<Spanned<String>>,
    pub(crate) methods: Option<Vec<Spanned<String>>>,
    pub(crate) headers: Option<Spanned<std::collections::BTreeMap<String, Spanned<toml::Value>>>>,
    pub(crate) user_agent: Option<Spanned<String>>,
    pub(crate) networks: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) asn: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    pub(crate) country: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) bot: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) verified: Option<Spanned<bool>>,
    pub(crate) ja4: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) h2fp: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) min_score: Option<Spanned<i64>>,
    pub(crate) max_score: Option<Spanned<i64>>,
    pub(crate) proven: Option<Spanned<bool>>,
    pub(crate) signals: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) robots: Option<Spanned<String>>,
}

impl PolicyMatchFile {
    /// The route's part of it.
    pub(crate) fn route(&self) -> MatchFile {
        MatchFile {
            host: self.host.clone(),
            path_prefix: self.path_prefix.clone(),
            path_regex: self.path_regex.clone(),
            methods: self.methods.clone(),
        }
    }
}

/// `[policy.tiers.NAME]`: a tier's own limits.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TierFile {
    pub(crate) capacity: Option<Spanned<i64>>,
    pub(crate) rate: Option<Spanned<String>>,
    pub(crate) quota: Option<Spanned<i64>>,
}
