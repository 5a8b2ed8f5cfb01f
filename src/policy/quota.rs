//! A quota policy's calendar at run time: the periods around now as [`Periods`] for the
//! stores, and when the current one ends as a refusal says it, computed once per period and
//! shared by every request until it ends.

use super::{Calendar, Period};
use crate::limiter::Periods;
use arc_swap::ArcSwapOption;
use jiff::{SignedDuration, Timestamp};
use std::fmt;
use std::sync::Arc;

/// A policy's calendar and the periods around the last instant asked about.
pub struct QuotaCalendar {
    calendar: Calendar,
    around: ArcSwapOption<Around>,
}

/// The periods around an instant, and the middle one's end written in the policy's zone.
struct Around {
    periods: Periods,
    resets_at: Arc<str>,
}

impl QuotaCalendar {
    /// The run-time side of `calendar`.
    pub fn new(calendar: Calendar) -> Self {
        Self {
            calendar,
            around: ArcSwapOption::empty(),
        }
    }

    /// The calendar.
    pub fn calendar(&self) -> &Calendar {
        &self.calendar
    }

    /// The period's word (`day`, `week`, `month`, `year`).
    pub fn period(&self) -> Period {
        self.calendar.period()
    }

    /// The periods around `now_us` (Unix microseconds): the one holding it in the middle.
    /// Computed when the last one asked for has ended, else taken as it was.
    pub fn periods(&self, now_us: u64) -> Periods {
        self.around(now_us).periods
    }

    /// When the period holding `now_us` ends, written in the policy's zone (RFC 3339).
    pub fn resets_at(&self, now_us: u64) -> Arc<str> {
        self.around(now_us).resets_at.clone()
    }

    /// What is known around `now_us`: as it was while the period lasts, else computed anew.
    fn around(&self, now_us: u64) -> Arc<Around> {
        if let Some(known) = self.around.load_full() {
            if known.periods.settles_at(now_us) {
                return known;
            }
        }
        let periods = periods_around(&self.calendar, now_us);
        let end = timestamp(periods.boundaries()[2]);
        let around = Arc::new(Around {
            periods,
            resets_at: self.calendar.local_text(end).into(),
        });
        self.around.store(Some(around.clone()));
        around
    }
}

impl fmt::Debug for QuotaCalendar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.calendar.fmt(f)
    }
}

impl PartialEq for QuotaCalendar {
    fn eq(&self, other: &Self) -> bool {
        self.calendar == other.calendar
    }
}

/// The periods before, holding and after `now_us` in `calendar`.
fn periods_around(calendar: &Calendar, now_us: u64) -> Periods {
    let (start, end) = calendar.bounds(timestamp(now_us));
    let before = start
        .checked_sub(SignedDuration::from_micros(1))
        .map_or(start, |t| calendar.bounds(t).0);
    let (_, after) = calendar.bounds(end);
    Periods::new([before, start, end, after].map(micros)).unwrap_or_else(Periods::unending)
}

/// Unix microseconds as a timestamp (the latest one for a clock beyond it).
fn timestamp(us: u64) -> Timestamp {
    i64::try_from(us)
        .ok()
        .and_then(|us| Timestamp::from_microsecond(us).ok())
        .unwrap_or(Timestamp::MAX)
}

/// A timestamp as Unix microseconds (0 before the epoch).
fn micros(t: Timestamp) -> u64 {
    u64::try_from(t.as_microsecond()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(text: &str) -> u64 {
        micros(text.parse().unwrap())
    }

    #[test]
    fn the_periods_around_an_instant_in_berlin() {
        let days =
            QuotaCalendar::new(Calendar::new(Period::Day, "Europe/Berlin", "monday").unwrap());
        let p = days.periods(us("2027-03-28T12:00:00Z"));
        assert_eq!(
            p.boundaries(),
            [
                us("2027-03-26T23:00:00Z"),
                us("2027-03-27T23:00:00Z"),
                us("2027-03-28T22:00:00Z"),
                us("2027-03-29T22:00:00Z"),
            ],
            "the 23-hour day, between two of 24"
        );
        assert_eq!(days.periods(us("2027-03-28T21:59:59Z")), p, "cached");
        let next = days.periods(us("2027-03-28T22:00:00Z"));
        assert_eq!(
            next.boundaries()[1],
            us("2027-03-28T22:00:00Z"),
            "recomputed"
        );
        assert_eq!(
            &*days.resets_at(us("2027-03-28T12:00:00Z")),
            "2027-03-29T00:00:00+02:00"
        );
    }

    #[test]
    fn a_month_after_january_is_february() {
        let months = QuotaCalendar::new(Calendar::new(Period::Month, "UTC", "monday").unwrap());
        let p = months.periods(us("2028-01-31T23:59:59Z"));
        assert_eq!(p.boundaries()[2], us("2028-02-01T00:00:00Z"));
        assert_eq!(
            p.boundaries()[3],
            us("2028-03-01T00:00:00Z"),
            "29 days: a leap year"
        );
        assert_eq!(p.boundaries()[0], us("2027-12-01T00:00:00Z"));
    }
}
