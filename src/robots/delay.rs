//! `Crawl-delay`: whole seconds between a crawler's requests, from 1 s to a day.

use std::num::NonZeroU32;
use std::time::Duration;

/// A crawl delay: whole seconds, from 1 to [`CrawlDelay::MAX`] (a day).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CrawlDelay(NonZeroU32);

/// A day, in seconds: the longest crawl delay.
const DAY: u32 = 86_400;

impl CrawlDelay {
    /// The longest delay kept: a day. A robots.txt asking for more is held to this.
    pub const MAX: CrawlDelay = CrawlDelay(match NonZeroU32::new(DAY) {
        Some(day) => day,
        None => unreachable!(),
    });

    /// `secs` seconds, if from 1 to a day.
    pub fn from_secs(secs: u64) -> Option<CrawlDelay> {
        let secs = u32::try_from(secs).ok().filter(|s| *s <= DAY)?;
        NonZeroU32::new(secs).map(CrawlDelay)
    }

    /// The value of a robots.txt `Crawl-delay` line: a number of seconds (`10`, `2.5`); a
    /// fraction rounds up, more than a day is a day; zero, a negative number or anything that
    /// is not a decimal number is no delay.
    pub fn parse(value: &str) -> Option<CrawlDelay> {
        let value = value.trim();
        let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || !digits(fraction) || (whole.is_empty() && fraction.is_empty()) {
            return None;
        }
        let whole = whole.trim_start_matches('0');
        let secs = match whole.len() {
            0 => 0,
            // More digits than a day has: held to a day.
            1..=5 => whole.parse::<u64>().ok()?,
            _ => u64::from(DAY),
        };
        let rounds_up = fraction.bytes().any(|b| b != b'0');
        let secs = secs + u64::from(rounds_up);
        match secs {
            0 => None,
            secs => Some(CrawlDelay::from_secs(secs).unwrap_or(CrawlDelay::MAX)),
        }
    }

    /// The delay in seconds.
    pub fn secs(self) -> u32 {
        self.0.get()
    }

    /// The delay as a duration.
    pub fn duration(self) -> Duration {
        Duration::from_secs(u64::from(self.secs()))
    }
}

#[cfg(test)]
mod tests {
    use super::CrawlDelay;

    fn secs(value: &str) -> Option<u32> {
        CrawlDelay::parse(value).map(CrawlDelay::secs)
    }

    #[test]
    fn whole_seconds_a_fraction_rounding_up_and_a_day_at_most() {
        assert_eq!(secs("10"), Some(10));
        assert_eq!(secs(" 2 "), Some(2));
        assert_eq!(secs("2.5"), Some(3));
        assert_eq!(secs("2.000"), Some(2));
        assert_eq!(secs("0.1"), Some(1));
        assert_eq!(secs(".5"), Some(1));
        assert_eq!(secs("3."), Some(3));
        assert_eq!(secs("86400"), Some(86_400));
        assert_eq!(secs("86401"), Some(86_400));
        assert_eq!(secs("99999999999999999999999"), Some(86_400));
        assert_eq!(secs("007"), Some(7));
    }

    #[test]
    fn zero_negative_and_garbage_are_no_delay() {
        for value in [
            "0", "0.0", "", ".", "-1", "1e3", "ten", "1.2.3", "+5", "inf", "NaN",
        ] {
            assert_eq!(secs(value), None, "{value:?}");
        }
    }

    #[test]
    fn from_secs_takes_one_second_to_a_day() {
        assert!(CrawlDelay::from_secs(0).is_none());
        assert_eq!(CrawlDelay::from_secs(1).map(CrawlDelay::secs), Some(1));
        assert_eq!(CrawlDelay::from_secs(86_400), Some(CrawlDelay::MAX));
        assert!(CrawlDelay::from_secs(86_401).is_none());
        assert_eq!(CrawlDelay::MAX.duration().as_secs(), 86_400);
    }
}
