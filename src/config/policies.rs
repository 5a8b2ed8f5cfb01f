//! `[[policy]]` tables → policies: limits, cost, route, own sources, tiers.

use super::action::{action_word, no_bucket_keys, ActionWord};
use super::check::Checker;
use super::conditions;
use super::error::ConfigError;
use super::policy_table::{MatchFile, PolicyFile, PolicyMatchFile};
use super::quota::{calendar, limits, LimitKeys};
use super::value::SourceList;
use crate::identity::IdentityChain;
use crate::limiter::PolicyKey;
use crate::policy::{
    Action, Enforcement, Limit, LimitsBy, Policy, QuotaCalendar, Route, Tiers, Unless,
};
use std::collections::HashSet;
use std::sync::Arc;
use toml::Spanned;

pub(crate) fn policies(
    check: &Checker<'_>,
    files: &[PolicyFile],
    global: &IdentityChain,
    all_shadow: bool,
) -> Result<Vec<Policy>, ConfigError> {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(files.len());
    for file in files {
        let mut policy = policy(check, file, global)?;
        if all_shadow {
            policy.enforcement = Enforcement::Shadow;
        }
        if !seen.insert(policy.name().clone()) {
            let message = format!("`policy.name`: `{}` is used by two policies", policy.name());
            return Err(check.error(&file.name, message));
        }
        out.push(policy);
    }
    Ok(out)
}

fn policy(
    check: &Checker<'_>,
    file: &PolicyFile,
    global: &IdentityChain,
) -> Result<Policy, ConfigError> {
    let name = file.name.get_ref();
    let valid_name = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !valid_name {
        let message =
            format!("`policy.name` must be 1 to 64 letters, digits, `-`, `_` or `.`, not `{name}`");
        return Err(check.error(&file.name, message));
    }
    let word = action_word(check, file)?;
    no_bucket_keys(check, file, word)?;
    let action = match word {
        ActionWord::Limit => Action::Limit(Box::new(limit(check, file, global)?)),
        ActionWord::Challenge => Action::Challenge(super::challenge::of_action(check, file)?),
        ActionWord::Deny => no_challenge(check, file, Action::Deny)?,
        ActionWord::Allow => no_challenge(check, file, Action::Allow)?,
        ActionWord::Classify => no_challenge(check, file, Action::Classify)?,
    };
    Ok(Policy {
        key: PolicyKey::new(name),
        enforcement: Enforcement::shadow_if(file.shadow),
        route: match &file.route {
            Some(m) => route(check, &m.route(), "policy.match")?,
            None => Route::default(),
        },
        conditions: conditions::conditions(check, file.route.as_ref(), "policy.match")?,
        unless: match &file.unless {
            Some(table) => Some(unless(check, table)?),
            None => None,
        },
        action,
        overload: super::overload::class(check, file)?,
    })
}

/// `action`, once the challenge keys of a policy that challenges no one are refused.
fn no_challenge(
    check: &Checker<'_>,
    file: &PolicyFile,
    action: Action,
) -> Result<Action, ConfigError> {
    super::challenge::none_asked(check, file)?;
    Ok(action)
}

/// A `limit` policy's bucket and its terms: limits or a quota, cost, own sources, tiers and
/// rules.
fn limit(
    check: &Checker<'_>,
    file: &PolicyFile,
    global: &IdentityChain,
) -> Result<Limit, ConfigError> {
    let calendar = calendar(check, file)?;
    let quota = calendar.is_some();
    let limits = limits(
        check,
        LimitKeys::of_policy(file),
        "policy",
        calendar.as_ref(),
        &file.name,
    )?;
    let cost = match &file.cost {
        Some(cost) => cost.get_ref().count() as u64,
        None => 1,
    };
    let tiers = tiers(check, file, calendar.as_ref())?;
    let smallest = tiers
        .iter()
        .flat_map(|t| t.levels.iter().map(|(_, l)| l.capacity()))
        .fold(limits.capacity(), u64::min);
    if let (Some(given), true) = (&file.cost, cost > smallest) {
        let what = if quota { "a quota" } else { "a capacity" };
        let message = format!("`policy.cost` ({cost}) is above {what} of this policy ({smallest}): no request could ever pass");
        return Err(check.error(given, message));
    }
    Ok(Limit {
        limits,
        cost,
        sources: match &file.sources {
            Some(list) => Some(own_chain(check, list, global)?),
            None => None,
        },
        tiers,
        rules: super::rules::rules(check, file)?,
        limits_by: LimitsBy::Policy,
    })
}

/// A policy's `unless` table, the same keys as `match`; refused when it gives none (it would
/// exempt every request).
fn unless(check: &Checker<'_>, table: &Spanned<PolicyMatchFile>) -> Result<Unless, ConfigError> {
    let file = table.get_ref();
    let unless = Unless {
        route: route(check, &file.route(), "policy.unless")?,
        conditions: conditions::conditions(check, Some(file), "policy.unless")?,
    };
    if unless.is_empty() {
        let message = "`policy.unless` is empty: it would exempt every request (give the keys \
                       of `match` that let a request off)";
        return Err(check.error(table, message.to_owned()));
    }
    Ok(unless)
}

fn own_chain(
    check: &Checker<'_>,
    list: &SourceList,
    global: &IdentityChain,
) -> Result<IdentityChain, ConfigError> {
    if list.get_ref().is_empty() {
        return Err(check.error(list, "`policy.sources` needs at least one source".into()));
    }
    let sources = list
        .get_ref()
        .iter()
        .map(|s| check.source_spec(s, "policy.sources"))
        .collect::<Result<_, _>>()?;
    Ok(IdentityChain {
        sources,
        ..global.clone()
    })
}

/// A `match` table (of a policy or a `[[route]]`, named by `key` in errors) as a [`Route`].
pub(crate) fn route(
    check: &Checker<'_>,
    file: &MatchFile,
    key: &str,
) -> Result<Route, ConfigError> {
    let path_regex = match &file.path_regex {
        Some(r) => Some(
            regex::Regex::new(r.get_ref())
                .map_err(|e| check.error(r, format!("`{key}.path_regex`: {e}")))?,
        ),
        None => None,
    };
    let methods = file
        .methods
        .iter()
        .flatten()
        .map(|m| {
            let text = m.get_ref().to_ascii_uppercase();
            http::Method::from_bytes(text.as_bytes()).map_err(|_| {
                check.error(
                    m,
                    format!("`{key}.methods`: `{}` is not a method", m.get_ref()),
                )
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Route {
        host: file
            .host
            .as_ref()
            .map(|h| h.trim_end_matches('.').to_ascii_lowercase()),
        path_prefix: file.path_prefix.clone(),
        path_regex,
        methods,
    })
}

fn tiers(
    check: &Checker<'_>,
    file: &PolicyFile,
    calendar: Option<&Arc<QuotaCalendar>>,
) -> Result<Option<Tiers>, ConfigError> {
    match (&file.tier, &file.tiers) {
        (None, None) => Ok(None),
        (Some(source), Some(levels)) if !levels.is_empty() => {
            let named_by = source;
            let source = check.source(source, "policy.tier")?;
            let levels = levels
                .iter()
                .map(|(name, tier)| {
                    let table = format!("policy.tiers.{name}");
                    let keys = LimitKeys::of_tier(tier);
                    Ok((
                        name.clone(),
                        limits(check, keys, &table, calendar, named_by)?,
                    ))
                })
                .collect::<Result<_, ConfigError>>()?;
            Ok(Some(Tiers { source, levels }))
        }
        (Some(source), _) => Err(check.error(
            source,
            "`policy.tier` needs a [policy.tiers.<name>] table per tier".into(),
        )),
        (None, Some(_)) => Err(check.error(
            &file.name,
            "`policy.tiers` needs `policy.tier`, the source naming the tier".into(),
        )),
    }
}
