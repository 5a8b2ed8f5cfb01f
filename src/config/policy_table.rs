//! `[[policy]]` as written: the table that policies.rs, quota.rs, rules.rs, conditions.rs,
//! sender.rs and challenge.rs each check a part of, and the `match` table a `[[route]]` shares.

use super::identity::SourceList;
use serde::Deserialize;
use toml::Spanned;

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
    pub(crate) cost: Option<Spanned<i64>>,
    #[serde(default)]
    pub(crate) shadow: bool,
    pub(crate) sources: Option<SourceList>,
    #[serde(rename = "match")]
    pub(crate) route: Option<PolicyMatchFile>,
    pub(crate) unless: Option<Spanned<PolicyMatchFile>>,
    pub(crate) tier: Option<Spanned<String>>,
    pub(crate) tiers: Option<std::collections::BTreeMap<String, TierFile>>,
    pub(crate) cost_header: Option<Spanned<String>>,
    pub(crate) count_status: Option<Spanned<Vec<Spanned<i64>>>>,
    pub(crate) settle_header: Option<Spanned<String>>,
    pub(crate) max_in_flight: Option<Spanned<i64>>,
    pub(crate) max_delay: Option<Spanned<String>>,
    pub(crate) max_held: Option<Spanned<i64>>,
    pub(crate) block_for: Option<Spanned<String>>,
    pub(crate) action: Option<Spanned<String>>,
    pub(crate) challenge: Option<Spanned<String>>,
    pub(crate) difficulty: Option<Spanned<i64>>,
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
