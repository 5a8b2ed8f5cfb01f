//! A refill rate as written in the config: `N/s`, `N/m`, `N/h` or `N/d`, N possibly fractional,
//! the unit also written as operators do (`/sec`, `/min`, `/minute`, `/hours`, `/day`, …).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The units a rate is written in, with their seconds.
const UNITS: [(&str, u64); 4] = [("s", 1), ("m", 60), ("h", 3_600), ("d", 86_400)];

/// Every spelling of each unit of [`UNITS`] (compared ignoring case), by its short name.
const SPELLINGS: [(&str, &[&str]); 4] = [
    ("s", &["s", "sec", "secs", "second", "seconds"]),
    ("m", &["m", "min", "mins", "minute", "minutes"]),
    ("h", &["h", "hr", "hrs", "hour", "hours"]),
    ("d", &["d", "day", "days"]),
];

/// The seconds of the unit spelt `word` (`s`, `sec`, `minute`, `Hours`, …), if it is one.
fn unit_seconds(word: &str) -> Option<u64> {
    let (unit, _) = SPELLINGS
        .iter()
        .find(|(_, spellings)| spellings.iter().any(|s| s.eq_ignore_ascii_case(word)))?;
    UNITS.iter().find(|(u, _)| u == unit).map(|(_, s)| *s)
}

/// Tokens added per unit of time.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    text: String,
    per_second: f64,
}

/// Why a rate string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid rate `{0}`: expected a positive number of tokens per unit, like 10/s, 0.5/min, 100/h or 1000/day (units: s, m, h, d, or sec, min, hour, day, second, minute and plurals)")]
pub struct RateError(String);

impl Rate {
    /// `count` tokens per `per`, written in the unit `per` is (`100/m`), else per day (a week
    /// of 7 is `1/d`); refused unless it is a positive, finite rate.
    pub fn new(count: f64, per: Duration) -> Result<Self, RateError> {
        let seconds = per.as_secs_f64();
        let (unit, unit_seconds) = UNITS
            .iter()
            .find(|(_, s)| per == Duration::from_secs(*s))
            .copied()
            .unwrap_or(("d", 86_400));
        let count = count * unit_seconds as f64 / seconds;
        let text = format!("{count}/{unit}");
        let per_second = count / unit_seconds as f64;
        if !(per_second.is_finite() && per_second > 0.0) {
            return Err(RateError(text));
        }
        Ok(Rate { text, per_second })
    }

    /// Tokens added per second.
    pub fn per_second(&self) -> f64 {
        self.per_second
    }
}

impl FromStr for Rate {
    type Err = RateError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let refuse = || RateError(text.to_owned());
        let (count, unit) = text.trim().split_once('/').ok_or_else(refuse)?;
        let seconds = unit_seconds(unit.trim()).ok_or_else(refuse)? as f64;
        let count: f64 = count.trim().parse().map_err(|_| refuse())?;
        let per_second = count / seconds;
        if !(per_second.is_finite() && per_second > 0.0) {
            return Err(refuse());
        }
        Ok(Rate {
            text: text.trim().to_owned(),
            per_second,
        })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_fractions_are_understood() {
        let per_second = |t: &str| t.parse::<Rate>().unwrap().per_second();
        assert_eq!(per_second("10/s"), 10.0);
        assert_eq!(per_second("30/m"), 0.5);
        assert_eq!(per_second("0.5/s"), 0.5);
        assert_eq!(per_second("7200/h"), 2.0);
        assert_eq!(per_second("86400/d"), 1.0);
        assert_eq!(per_second(" 1 / m "), 1.0 / 60.0);
    }

    #[test]
    fn units_are_read_as_operators_write_them() {
        let per_second = |t: &str| t.parse::<Rate>().unwrap().per_second();
        for unit in ["sec", "secs", "second", "seconds", "S", "Sec"] {
            assert_eq!(per_second(&format!("10/{unit}")), 10.0, "{unit}");
        }
        for unit in ["min", "mins", "minute", "minutes", "M", "MIN"] {
            assert_eq!(per_second(&format!("300/{unit}")), 5.0, "{unit}");
        }
        for unit in ["hr", "hrs", "hour", "hours", "H"] {
            assert_eq!(per_second(&format!("7200/{unit}")), 2.0, "{unit}");
        }
        for unit in ["day", "days", "D"] {
            assert_eq!(per_second(&format!("86400/{unit}")), 1.0, "{unit}");
        }
        // Written as given: `--test` shows what the operator wrote.
        assert_eq!("300/min".parse::<Rate>().unwrap().to_string(), "300/min");
        assert_eq!(
            "300/min".parse::<Rate>().unwrap().per_second(),
            "300/m".parse::<Rate>().unwrap().per_second()
        );
    }

    #[test]
    fn a_rate_made_from_a_count_and_a_period_is_the_rate_written_so() {
        let made = |count: f64, seconds: u64| Rate::new(count, Duration::from_secs(seconds));
        for (count, seconds, text) in [
            (10.0, 1, "10/s"),
            (100.0, 60, "100/m"),
            (1000.0, 3_600, "1000/h"),
            (5.0, 86_400, "5/d"),
            (7.0, 604_800, "1/d"),
            (3.0, 31_536_000, "0.00821917808219178/d"),
        ] {
            let rate = made(count, seconds).unwrap();
            assert_eq!(rate.to_string(), text);
            assert_eq!(rate, text.parse::<Rate>().unwrap(), "{text}");
        }
        for (count, seconds) in [(0.0, 1), (-1.0, 60), (1.0, 0), (f64::NAN, 1)] {
            assert!(made(count, seconds).is_err(), "{count}/{seconds}s");
        }
    }

    #[test]
    fn zero_negative_and_garbage_are_refused() {
        for bad in [
            "0/s",
            "-1/s",
            "ten/s",
            "10",
            "10/w",
            "inf/s",
            "NaN/s",
            "",
            "1e400/s",
            "1/ms",
            "1/mo",
            "1/month",
            "1/week",
            "1/minutely",
            "1/",
            "1/s/s",
        ] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
    }
}
