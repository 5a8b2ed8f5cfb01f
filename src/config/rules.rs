//! A policy's issue-16 keys → [`Rules`]: `cost_header`, `count_status`, `settle_header`,
//! `max_in_flight`, `max_delay` with `max_held`, and `block_for`.

use super::check::Checker;
use super::error::ConfigError;
use super::policy_table::PolicyFile;
use super::value::{Key, Period};
use crate::policy::{Rules, Settle, Shaping};
use std::time::Duration;
use toml::Spanned;

/// Held requests per policy and instance when `max_held` is not given.
const DEFAULT_MAX_HELD: usize = 100;
/// The longest `max_delay`: a held request keeps its connection and a task.
const MAX_DELAY: Duration = Duration::from_secs(60);
/// The longest `block_for`: thirty days.
const MAX_BLOCK: Duration = Duration::from_secs(30 * 86_400);

pub(crate) fn rules(check: &Checker<'_>, file: &PolicyFile) -> Result<Rules, ConfigError> {
    let settle = match (&file.count_status, &file.settle_header) {
        (Some(_), Some(h)) => {
            let message = "`policy.count_status` and `policy.settle_header` cannot be combined: \
                           one decides what a response costs";
            return Err(check.error(h, message.to_owned()));
        }
        (Some(list), None) => Some(Settle::CountStatus(statuses(check, list)?)),
        (None, Some(h)) => Some(Settle::Header(h.get_ref().get())),
        (None, None) => None,
    };
    let max_held = match (&file.max_held, &file.max_delay) {
        (Some(n), None) => {
            let message = "`policy.max_held` bounds the requests `policy.max_delay` holds; \
                           give `max_delay` too";
            return Err(check.error(n, message.to_owned()));
        }
        (Some(n), Some(_)) => n.get_ref().count(),
        (None, _) => DEFAULT_MAX_HELD,
    };
    let shaping = match &file.max_delay {
        Some(d) => Some(Shaping {
            max_delay: positive(check, d, MAX_DELAY)?,
            max_held,
        }),
        None => None,
    };
    Ok(Rules {
        on_limit: super::challenge::on_limit(check, file)?,
        cost_header: file.cost_header.as_ref().map(|h| h.get_ref().get()),
        settle,
        max_in_flight: file
            .max_in_flight
            .as_ref()
            .map(|n| n.get_ref().count() as u32),
        shaping,
        block_for: match &file.block_for {
            Some(d) => Some(positive(check, d, MAX_BLOCK)?),
            None => None,
        },
    })
}

/// A `count_status` list: at least one status, each 100 to 599.
fn statuses(
    check: &Checker<'_>,
    list: &Spanned<Vec<Spanned<i64>>>,
) -> Result<std::sync::Arc<[u16]>, ConfigError> {
    if list.get_ref().is_empty() {
        let message = "`policy.count_status` needs at least one status".to_owned();
        return Err(check.error(list, message));
    }
    list.get_ref()
        .iter()
        .map(|s| Ok(check.integer(s, "policy.count_status", 100..=599)? as u16))
        .collect()
}

/// A duration above zero and at most `max`, written under key `K`.
fn positive<K: Key>(
    check: &Checker<'_>,
    value: &Spanned<Period<K>>,
    max: Duration,
) -> Result<Duration, ConfigError> {
    let d = value.get_ref().get();
    if d.is_zero() || d > max {
        let message = format!(
            "`{}` must be above zero and at most {max:?}, not {d:?}",
            K::NAME
        );
        return Err(check.error(value, message));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::limiter::StoreSettings;
    use crate::policy::{Settle, Shaping};
    use std::path::Path;
    use std::time::Duration;

    const BASE: &str = "[server]\nlisten = \"127.0.0.1:8080\"\n\n\
                        [upstream]\nbackends = [\"127.0.0.1:8000\"]\nread_timeout = \"30s\"\n";

    fn policy(keys: &str) -> String {
        format!("{BASE}\n[[policy]]\nname = \"p\"\ncapacity = 10\nrate = \"1/s\"\n{keys}\n")
    }

    fn error_of(keys: &str) -> String {
        parse(&policy(keys), Path::new("f.toml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn every_key_reaches_the_policy() {
        let keys = "cost_header = \"x-cost\"\ncount_status = [401, 403]\nmax_in_flight = 3\n\
                    max_delay = \"500ms\"\nmax_held = 7\nblock_for = \"10m\"";
        let config = parse(&policy(keys), Path::new("f.toml")).unwrap();
        let rules = &config.policies[0].limit().unwrap().rules;
        assert_eq!(
            rules.cost_header.as_ref().map(|h| h.as_str()),
            Some("x-cost")
        );
        assert_eq!(rules.settle, Some(Settle::CountStatus([401, 403].into())));
        assert_eq!(rules.max_in_flight, Some(3));
        let shaping = Shaping {
            max_delay: Duration::from_millis(500),
            max_held: 7,
        };
        assert_eq!(rules.shaping, Some(shaping));
        assert_eq!(rules.block_for, Some(Duration::from_secs(600)));
        let text = config.to_string();
        assert!(text.contains("at most 3 in flight per caller"), "{text}");
    }

    #[test]
    fn mistakes_are_refused_where_they_stand() {
        let cases = [
            (
                "count_status = [401]\nsettle_header = \"x-usage\"",
                "f.toml:13:17: `policy.count_status` and `policy.settle_header` cannot be combined",
            ),
            (
                "count_status = []",
                "f.toml:12:16: `policy.count_status` needs at least one",
            ),
            (
                "count_status = [99]",
                "f.toml:12:17: `policy.count_status` must be between 100",
            ),
            (
                "max_held = 5",
                "f.toml:12:12: `policy.max_held` bounds the requests",
            ),
            (
                "max_delay = \"0s\"",
                "f.toml:12:13: `policy.max_delay` must be above zero",
            ),
            (
                "block_for = \"31d\"",
                "f.toml:12:13: `policy.block_for` must be above zero",
            ),
            (
                "cost_header = \"x cost\"",
                "f.toml:12:15: `policy.cost_header` must be a header",
            ),
            (
                "max_in_flight = 0",
                "f.toml:12:17: `policy.max_in_flight` must be between 1",
            ),
        ];
        for (keys, expected) in cases {
            let message = error_of(keys);
            assert!(message.starts_with(expected), "{keys}: {message}");
        }
    }

    #[test]
    fn the_concurrency_lease_outlasts_a_silent_backend() {
        let redis = "\n[store]\nkind = \"redis\"\nurl = \"redis://127.0.0.1:6379\"\n";
        let lease = |extra: &str| {
            let text = format!("{BASE}{redis}{extra}");
            match parse(&text, Path::new("f.toml")).unwrap().store {
                StoreSettings::Redis(r) => r.in_flight_lease,
                StoreSettings::Memory { .. } => unreachable!("a redis store"),
            }
        };
        assert_eq!(lease(""), Duration::from_secs(35));
        assert_eq!(lease("in_flight_lease = \"2s\""), Duration::from_secs(2));
    }
}
