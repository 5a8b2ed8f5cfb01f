//! A policy's `action` as written, and the keys each action admits: only a `limit` policy
//! takes from a bucket, so only it may give the bucket's keys.

use super::check::Checker;
use super::error::ConfigError;
use super::policy_table::PolicyFile;
use crate::policy::Action;
use std::fmt;
use toml::Spanned;

/// The word of a policy's `action`, before what the action needs is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ActionWord {
    Limit,
    Deny,
    Allow,
    Challenge,
    Classify,
}

impl ActionWord {
    const ALL: [Self; 5] = [
        Self::Limit,
        Self::Deny,
        Self::Allow,
        Self::Challenge,
        Self::Classify,
    ];

    /// The action `word` names, if any.
    pub(crate) fn from_word(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.word() == word)
    }

    fn word(self) -> &'static str {
        Action::WORDS[self as usize]
    }
}

impl fmt::Display for ActionWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// The policy's `action`: `limit` when not given (`classify` for a policy with only overload
/// keys).
pub(crate) fn action_word(
    check: &Checker<'_>,
    file: &PolicyFile,
) -> Result<ActionWord, ConfigError> {
    let Some(word) = &file.action else {
        return Ok(default_action(file));
    };
    ActionWord::from_word(word.get_ref()).ok_or_else(|| {
        let message = format!(
            "`policy.action` must be `limit`, `deny`, `allow`, `challenge` or `classify`, not `{}`",
            word.get_ref()
        );
        check.error(word, message)
    })
}

/// Refuses, where it stands, the first key of a policy other than `limit` that only a `limit`
/// policy uses (its bucket, cost, callers and rules): such a policy takes from no bucket.
pub(crate) fn no_bucket_keys(
    check: &Checker<'_>,
    file: &PolicyFile,
    action: ActionWord,
) -> Result<(), ConfigError> {
    if action == ActionWord::Limit {
        return Ok(());
    }
    let given = [
        ("capacity", file.capacity.as_ref().map(Spanned::span)),
        ("rate", file.rate.as_ref().map(Spanned::span)),
        ("quota", file.quota.as_ref().map(Spanned::span)),
        ("period", file.period.as_ref().map(Spanned::span)),
        ("timezone", file.timezone.as_ref().map(Spanned::span)),
        ("week_start", file.week_start.as_ref().map(Spanned::span)),
        ("cost", file.cost.as_ref().map(Spanned::span)),
        ("sources", file.sources.as_ref().map(Spanned::span)),
        ("tier", file.tier.as_ref().map(Spanned::span)),
        ("cost_header", file.cost_header.as_ref().map(Spanned::span)),
        (
            "count_status",
            file.count_status.as_ref().map(Spanned::span),
        ),
        (
            "settle_header",
            file.settle_header.as_ref().map(Spanned::span),
        ),
        (
            "max_in_flight",
            file.max_in_flight.as_ref().map(Spanned::span),
        ),
        ("max_delay", file.max_delay.as_ref().map(Spanned::span)),
        ("block_for", file.block_for.as_ref().map(Spanned::span)),
        ("on_limit", file.on_limit.as_ref().map(Spanned::span)),
    ];
    match given.into_iter().find(|(_, at)| at.is_some()) {
        None => Ok(()),
        Some((key, at)) => {
            let message = format!(
                "`policy.{key}` is for `limit` policies: a `{action}` policy takes from no bucket"
            );
            Err(ConfigError::at(check.path, check.text, at, message))
        }
    }
}

/// The action of a policy given no `action`: `classify` when it has overload keys and no
/// bucket keys, else `limit`.
fn default_action(file: &PolicyFile) -> ActionWord {
    let classifies = file.priority.is_some() || file.on_overload.is_some();
    let bucket = file.capacity.is_some()
        || file.rate.is_some()
        || file.quota.is_some()
        || file.tier.is_some();
    match classifies && !bucket {
        true => ActionWord::Classify,
        false => ActionWord::Limit,
    }
}
