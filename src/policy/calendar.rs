//! Calendar periods in a time zone: the day, ISO-style week, month or year holding an instant,
//! half-open `[start, end)`, in the zone's local time (a maintained time-zone crate and the
//! IANA database). A day with a DST change is 23 or 25 hours long; a local midnight that does
//! not exist starts its period at the first instant that does. Time is an argument: nothing
//! here reads a clock.

use jiff::civil::{Date, Weekday};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use std::fmt;
use std::str::FromStr;

/// How long a quota's period is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    /// From local midnight to the next.
    Day,
    /// Seven days from local midnight of the week's first day.
    Week,
    /// From the 1st, local midnight, to the next 1st.
    Month,
    /// From January 1st, local midnight, to the next.
    Year,
}

impl Period {
    /// The word used in config and headers (`day`, `week`, `month`, `year`).
    pub fn word(self) -> &'static str {
        match self {
            Period::Day => "day",
            Period::Week => "week",
            Period::Month => "month",
            Period::Year => "year",
        }
    }
}

impl FromStr for Period {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "day" => Ok(Period::Day),
            "week" => Ok(Period::Week),
            "month" => Ok(Period::Month),
            "year" => Ok(Period::Year),
            other => Err(format!(
                "`{other}` is not a period: day, week, month or year"
            )),
        }
    }
}

/// A period in a zone, weeks starting on a given day.
#[derive(Clone)]
pub struct Calendar {
    period: Period,
    zone: TimeZone,
    zone_name: String,
    week_start: Weekday,
}

impl fmt::Debug for Calendar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {}", self.period.word(), self.zone_name)
    }
}

impl PartialEq for Calendar {
    fn eq(&self, other: &Self) -> bool {
        (self.period, &self.zone_name, self.week_start)
            == (other.period, &other.zone_name, other.week_start)
    }
}

/// Why a calendar cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalendarError {
    /// The zone is not in the IANA database.
    #[error("`{0}` is not a time zone of the IANA database (like Europe/Berlin or UTC)")]
    Zone(String),
    /// The week's first day is not a weekday's name.
    #[error("`{0}` is not a day of the week (monday … sunday)")]
    WeekStart(String),
}

impl Calendar {
    /// `period` in the IANA zone `zone`, weeks starting on `week_start` (`monday`, …).
    pub fn new(period: Period, zone: &str, week_start: &str) -> Result<Self, CalendarError> {
        let tz = TimeZone::get(zone).map_err(|_| CalendarError::Zone(zone.to_owned()))?;
        let week_start = weekday(week_start)?;
        Ok(Self {
            period,
            zone: tz,
            zone_name: zone.to_owned(),
            week_start,
        })
    }

    /// The period.
    pub fn period(&self) -> Period {
        self.period
    }

    /// The zone's IANA name.
    pub fn zone_name(&self) -> &str {
        &self.zone_name
    }

    /// The period holding `at`: its first instant and the first instant after it.
    pub fn bounds(&self, at: Timestamp) -> (Timestamp, Timestamp) {
        let today = at.to_zoned(self.zone.clone()).date();
        let first = self.first_day(today);
        let next = match self.period {
            Period::Day => first.saturating_add(1.day()),
            Period::Week => first.saturating_add(7.days()),
            Period::Month => first.saturating_add(1.month()),
            Period::Year => first.saturating_add(1.year()),
        };
        (self.midnight(first), self.midnight(next))
    }

    /// `at` written in the zone, RFC 3339 with its offset (when a quota resets, say).
    pub fn local_text(&self, at: Timestamp) -> String {
        at.to_zoned(self.zone.clone())
            .strftime("%Y-%m-%dT%H:%M:%S%:z")
            .to_string()
    }

    fn first_day(&self, day: Date) -> Date {
        match self.period {
            Period::Day => day,
            Period::Week => {
                let back = day.weekday().since(self.week_start);
                day.saturating_sub(i64::from(back).days())
            }
            Period::Month => day.first_of_month(),
            Period::Year => day.first_of_year(),
        }
    }

    /// The first instant of local day `day` (a midnight skipped by DST: the first instant
    /// after the gap).
    fn midnight(&self, day: Date) -> Timestamp {
        match day.to_zoned(self.zone.clone()) {
            Ok(zoned) => zoned.timestamp(),
            Err(_) => Timestamp::MAX,
        }
    }
}

fn weekday(name: &str) -> Result<Weekday, CalendarError> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "monday" => Weekday::Monday,
        "tuesday" => Weekday::Tuesday,
        "wednesday" => Weekday::Wednesday,
        "thursday" => Weekday::Thursday,
        "friday" => Weekday::Friday,
        "saturday" => Weekday::Saturday,
        "sunday" => Weekday::Sunday,
        _ => return Err(CalendarError::WeekStart(name.to_owned())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn bounds(period: Period, zone: &str, instant: &str) -> (String, String) {
        let calendar = Calendar::new(period, zone, "monday").unwrap();
        let (start, end) = calendar.bounds(at(instant));
        (start.to_string(), end.to_string())
    }

    fn hours(period: Period, zone: &str, instant: &str) -> i64 {
        let calendar = Calendar::new(period, zone, "monday").unwrap();
        let (start, end) = calendar.bounds(at(instant));
        (end.as_second() - start.as_second()) / 3600
    }

    #[test]
    fn months_have_their_own_lengths_and_february_knows_leap_years() {
        let utc = "UTC";
        assert_eq!(
            bounds(Period::Month, utc, "2027-01-31T23:59:59Z"),
            ("2027-01-01T00:00:00Z".into(), "2027-02-01T00:00:00Z".into())
        );
        assert_eq!(hours(Period::Month, utc, "2027-02-10T00:00:00Z"), 28 * 24);
        assert_eq!(hours(Period::Month, utc, "2028-02-10T00:00:00Z"), 29 * 24);
        assert_eq!(
            hours(Period::Month, utc, "2100-02-10T00:00:00Z"),
            28 * 24,
            "not a leap year"
        );
        assert_eq!(hours(Period::Month, utc, "2000-02-10T00:00:00Z"), 29 * 24);
        assert_eq!(hours(Period::Year, utc, "2028-06-01T00:00:00Z"), 366 * 24);
        assert_eq!(
            bounds(Period::Year, utc, "2026-12-31T23:59:59.999Z").1,
            "2027-01-01T00:00:00Z"
        );
    }

    #[test]
    fn periods_are_half_open_at_the_boundary() {
        let (start, end) = bounds(Period::Day, "UTC", "2026-11-27T00:00:00Z");
        assert_eq!(
            start, "2026-11-27T00:00:00Z",
            "midnight belongs to the new day"
        );
        assert_eq!(end, "2026-11-28T00:00:00Z");
        assert_eq!(
            bounds(Period::Day, "UTC", "2026-11-26T23:59:59.999999Z").1,
            start
        );
    }

    #[test]
    fn local_midnight_in_berlin_and_dst_days_of_23_and_25_hours() {
        let berlin = "Europe/Berlin";
        assert_eq!(
            bounds(Period::Day, berlin, "2026-11-26T23:30:00Z"),
            ("2026-11-26T23:00:00Z".into(), "2026-11-27T23:00:00Z".into())
        );
        assert_eq!(
            hours(Period::Day, berlin, "2027-03-28T12:00:00Z"),
            23,
            "spring forward"
        );
        assert_eq!(
            hours(Period::Day, berlin, "2027-10-31T12:00:00Z"),
            25,
            "fall back"
        );
        let march = Calendar::new(Period::Month, berlin, "monday").unwrap();
        let (start, end) = march.bounds(at("2027-03-15T00:00:00Z"));
        assert_eq!(march.local_text(start), "2027-03-01T00:00:00+01:00");
        assert_eq!(march.local_text(end), "2027-04-01T00:00:00+02:00");
    }

    #[test]
    fn a_midnight_that_does_not_exist_starts_the_day_at_the_first_instant_that_does() {
        // Sao Paulo skipped from 2018-11-04 00:00 to 01:00 (its last DST start at midnight).
        let sp = "America/Sao_Paulo";
        let (start, end) = bounds(Period::Day, sp, "2018-11-04T12:00:00Z");
        assert_eq!(start, "2018-11-04T03:00:00Z", "01:00 local, -02:00");
        assert_eq!(end, "2018-11-05T02:00:00Z");
        assert_eq!(hours(Period::Day, sp, "2018-11-04T12:00:00Z"), 23);
    }

    #[test]
    fn weeks_start_on_the_configured_day() {
        // 2026-11-26 is a Thursday.
        assert_eq!(
            bounds(Period::Week, "UTC", "2026-11-26T10:00:00Z"),
            ("2026-11-23T00:00:00Z".into(), "2026-11-30T00:00:00Z".into())
        );
        let sunday = Calendar::new(Period::Week, "UTC", "sunday").unwrap();
        let (start, _) = sunday.bounds(at("2026-11-26T10:00:00Z"));
        assert_eq!(start.to_string(), "2026-11-22T00:00:00Z");
        let (start, _) = sunday.bounds(at("2026-11-22T00:00:00Z"));
        assert_eq!(
            start.to_string(),
            "2026-11-22T00:00:00Z",
            "its own first day"
        );
        // The first ISO week of 2027 begins on Monday 2027-01-04; a week may span two years.
        assert_eq!(
            bounds(Period::Week, "UTC", "2027-01-01T00:00:00Z").0,
            "2026-12-28T00:00:00Z"
        );
    }

    #[test]
    fn unknown_zones_periods_and_weekdays_are_refused() {
        assert!(matches!(
            Calendar::new(Period::Day, "Mars/Olympus", "monday"),
            Err(CalendarError::Zone(_))
        ));
        assert!(matches!(
            Calendar::new(Period::Day, "UTC", "someday"),
            Err(CalendarError::WeekStart(_))
        ));
        assert!("fortnight".parse::<Period>().is_err());
        assert_eq!("month".parse::<Period>(), Ok(Period::Month));
    }
}
