//! A policy's limits as the config gives them: a bucket (`capacity` and `rate`) or a calendar
//! quota (`quota`, `period`, `timezone`, `week_start`), never both, for the policy and each of
//! its tiers alike.

use super::check::Checker;
use super::error::ConfigError;
use super::policy_table::{PolicyFile, TierFile, MAX_TOKENS};
use crate::policy::{Calendar, Limits, Period, QuotaCalendar, Rate};
use std::sync::Arc;
use toml::Spanned;

/// The keys that give one set of limits (a policy's own or a tier's).
pub(super) struct LimitKeys<'f> {
    pub(super) capacity: &'f Option<Spanned<i64>>,
    pub(super) rate: &'f Option<Spanned<String>>,
    pub(super) quota: &'f Option<Spanned<i64>>,
}

impl<'f> LimitKeys<'f> {
    pub(super) fn of_policy(file: &'f PolicyFile) -> Self {
        Self {
            capacity: &file.capacity,
            rate: &file.rate,
            quota: &file.quota,
        }
    }

    pub(super) fn of_tier(file: &'f TierFile) -> Self {
        Self {
            capacity: &file.capacity,
            rate: &file.rate,
            quota: &file.quota,
        }
    }
}

/// A quota policy's calendar (`None` for a bucket policy); refuses calendar keys without a
/// quota and `max_delay` with one.
pub(super) fn calendar(
    check: &Checker<'_>,
    file: &PolicyFile,
) -> Result<Option<Arc<QuotaCalendar>>, ConfigError> {
    let Some(quota) = &file.quota else {
        let stray = [
            (&file.period, "period"),
            (&file.timezone, "timezone"),
            (&file.week_start, "week_start"),
        ];
        if let Some((Some(value), key)) = stray.iter().find(|(v, _)| v.is_some()) {
            let message =
                format!("`policy.{key}` belongs to a calendar quota; give `policy.quota` too");
            return Err(check.error(value, message));
        }
        return Ok(None);
    };
    let Some(period) = &file.period else {
        let message = "`policy.quota` needs `policy.period`: day, week, month or year".to_owned();
        return Err(check.error(quota, message));
    };
    if let Some(delay) = &file.max_delay {
        let message =
            "`policy.max_delay` does not apply to a quota: its tokens come back only when \
                       its period ends, so no request is held for them"
                .to_owned();
        return Err(check.error(delay, message));
    }
    let parsed: Period = period
        .get_ref()
        .parse()
        .map_err(|e| check.error(period, format!("`policy.period`: {e}")))?;
    let zone = file.timezone.as_ref();
    let week_start = file.week_start.as_ref();
    let calendar = Calendar::new(
        parsed,
        zone.map_or("UTC", |z| z.get_ref()),
        week_start.map_or("monday", |w| w.get_ref()),
    )
    .map_err(|e| {
        let (value, key) = match e {
            crate::policy::CalendarError::Zone(_) => (zone, "timezone"),
            crate::policy::CalendarError::WeekStart(_) => (week_start, "week_start"),
        };
        let at = value.unwrap_or(period);
        check.error(at, format!("`policy.{key}`: {e}"))
    })?;
    Ok(Some(Arc::new(QuotaCalendar::new(calendar))))
}

/// The limits `keys` give under `table` (`policy`, `policy.tiers.pro`): a quota in the
/// policy's `calendar` when it is one, else a bucket. `name` locates a missing key.
pub(super) fn limits<T>(
    check: &Checker<'_>,
    keys: LimitKeys<'_>,
    table: &str,
    calendar: Option<&Arc<QuotaCalendar>>,
    name: &Spanned<T>,
) -> Result<Limits, ConfigError> {
    if let Some(calendar) = calendar {
        return quota_limits(check, keys, table, calendar, name);
    }
    if let Some(quota) = keys.quota {
        let message = format!(
            "`{table}.quota` needs the policy to be a quota (`policy.quota` and `policy.period`)"
        );
        return Err(check.error(quota, message));
    }
    let (Some(capacity), Some(rate)) = (keys.capacity, keys.rate) else {
        let message = format!(
            "`{table}` needs `capacity` and `rate` (a bucket) or `quota` and `period` (a calendar quota)"
        );
        return Err(check.error(name, message));
    };
    bucket_limits(check, capacity, rate, table)
}

fn quota_limits<T>(
    check: &Checker<'_>,
    keys: LimitKeys<'_>,
    table: &str,
    calendar: &Arc<QuotaCalendar>,
    name: &Spanned<T>,
) -> Result<Limits, ConfigError> {
    if let Some(capacity) = keys.capacity {
        return Err(check.error(capacity, both(table, "capacity")));
    }
    if let Some(rate) = keys.rate {
        return Err(check.error(rate, both(table, "rate")));
    }
    let Some(quota) = keys.quota else {
        let message = format!("`{table}` needs `quota`: the policy is a calendar quota");
        return Err(check.error(name, message));
    };
    let count = check.integer(quota, &format!("{table}.quota"), 1..=MAX_TOKENS)? as u64;
    Limits::quota(count, calendar.clone())
        .map_err(|e| check.error(quota, format!("`{table}.quota`: {e}")))
}

/// The message for a bucket key on a quota.
fn both(table: &str, key: &str) -> String {
    format!(
        "`{table}.{key}` cannot go with a quota: a policy has a bucket (`capacity` and `rate`) \
         or a calendar quota (`quota` and `period`), not both"
    )
}

fn bucket_limits(
    check: &Checker<'_>,
    capacity: &Spanned<i64>,
    rate: &Spanned<String>,
    table: &str,
) -> Result<Limits, ConfigError> {
    let capacity = check.integer(capacity, &format!("{table}.capacity"), 1..=MAX_TOKENS)? as u64;
    let parsed: Rate = rate
        .get_ref()
        .parse()
        .map_err(|e| check.error(rate, format!("`{table}.rate`: {e}")))?;
    Limits::new(capacity, parsed).map_err(|e| {
        check.error(
            rate,
            format!("`{table}.rate` with capacity {capacity}: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use std::path::Path;

    fn read(policy: &str) -> Result<crate::config::Config, String> {
        let text = format!(
            "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
             [[policy]]\nname = \"plan\"\n{policy}\n"
        );
        parse(&text, Path::new("f.toml")).map_err(|e| e.to_string())
    }

    fn error_of(policy: &str) -> String {
        read(policy).expect_err("refused")
    }

    #[test]
    fn a_quota_policy_with_tiers_is_read() {
        let config = read(
            "quota = 1000\nperiod = \"month\"\ntimezone = \"Europe/Berlin\"\n\
             tier = \"header:x-plan\"\n[policy.tiers.pro]\nquota = 100000\n",
        )
        .unwrap();
        let limit = config.policies[0].limit().unwrap();
        assert!(limit.limits.is_quota());
        assert_eq!(limit.limits.capacity(), 1000);
        assert_eq!(
            limit.tiers.as_ref().unwrap().levels[0].1.capacity(),
            100_000
        );
        let shown = config.to_string();
        assert!(
            shown.contains("plan: quota 1000 per month in Europe/Berlin"),
            "{shown}"
        );
    }

    #[test]
    fn bad_quotas_are_located_errors() {
        let cases = [
            ("quota = 10\nperiod = \"day\"\ntimezone = \"Mars/Olympus\"", "f.toml:11:12: `policy.timezone`"),
            ("quota = 10\nperiod = \"fortnight\"", "f.toml:10:10: `policy.period`"),
            ("quota = 10\nperiod = \"week\"\nweek_start = \"someday\"", "f.toml:11:14: `policy.week_start`"),
            ("quota = 10\nperiod = \"day\"\ncapacity = 5", "f.toml:11:12: `policy.capacity` cannot go with a quota"),
            ("quota = 10\nperiod = \"day\"\nrate = \"1/s\"", "f.toml:11:8: `policy.rate` cannot go with a quota"),
            ("quota = 0\nperiod = \"day\"", "f.toml:9:9: `policy.quota` must be between 1"),
            ("quota = 10", "f.toml:9:9: `policy.quota` needs `policy.period`"),
            ("capacity = 5\nrate = \"1/s\"\nperiod = \"day\"", "f.toml:11:10: `policy.period` belongs to a calendar quota"),
            ("quota = 10\nperiod = \"day\"\nmax_delay = \"1s\"", "f.toml:11:13: `policy.max_delay` does not apply to a quota"),
            ("cost = 2", "f.toml:8:8: `policy` needs `capacity` and `rate`"),
            (
                "quota = 10\nperiod = \"day\"\ntier = \"header:x-plan\"\n[policy.tiers.pro]\ncapacity = 5\nrate = \"1/s\"",
                "`policy.tiers.pro.capacity` cannot go with a quota",
            ),
        ];
        for (policy, expected) in cases {
            let message = error_of(policy);
            assert!(
                message.starts_with(expected) || message.contains(expected),
                "{policy}\n→ {message}"
            );
        }
    }
}
