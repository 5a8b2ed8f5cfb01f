//! A refill rate as written in the config: `N/s`, `N/m`, `N/h` or `N/d`, N possibly fractional.

use std::fmt;
use std::str::FromStr;

/// Tokens added per unit of time.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    text: String,
    per_second: f64,
}

/// Why a rate string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid rate `{0}`: expected a positive number of tokens per unit, like 10/s, 0.5/m, 100/h or 1000/d")]
pub struct RateError(String);

impl Rate {
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
        let seconds = match unit.trim() {
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3_600.0,
            "d" => 86_400.0,
            _ => return Err(refuse()),
        };
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
    fn zero_negative_and_garbage_are_refused() {
        for bad in [
            "0/s", "-1/s", "ten/s", "10", "10/w", "inf/s", "NaN/s", "", "1e400/s",
        ] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
    }
}
