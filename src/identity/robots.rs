//! What the site's robots.txt says of a request from a crawler: whether its group allows the
//! path, and the crawl delay it asks. The `robots` room works it out before the gate decides;
//! `match.robots`, the `robots-disallowed` signal and the crawl-delay bucket read it here, as a
//! trait of the request.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// Whether a crawler's group of robots.txt allows the path it asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RobotsVerdict {
    /// The path is allowed (or nothing disallows it).
    Allowed,
    /// The path is disallowed.
    Disallowed,
}

impl RobotsVerdict {
    /// Both verdicts.
    pub const ALL: [RobotsVerdict; 2] = [Self::Allowed, Self::Disallowed];

    /// The word in config files, logs and metric labels.
    pub fn word(self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::Disallowed => "disallowed",
        }
    }
}

impl fmt::Display for RobotsVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// A word that names no verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a robots verdict (allowed, disallowed)")]
pub struct UnknownVerdict(pub String);

impl FromStr for RobotsVerdict {
    type Err = UnknownVerdict;

    fn from_str(word: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|v| v.word() == word)
            .ok_or_else(|| UnknownVerdict(word.chars().take(64).collect()))
    }
}

/// What robots.txt says of one crawler's request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RobotsFact {
    /// The crawler, as the metric and the log name it: the group token its User-Agent named,
    /// else the catalogue crawler's name.
    pub crawler: Arc<str>,
    /// Whether its group allows the path.
    pub verdict: RobotsVerdict,
    /// The crawl delay its group asks, in whole seconds (none: no delay).
    pub crawl_delay: Option<u32>,
}

/// A trap ban in force for the request's sender: it fetched robots.txt, then the path the file
/// keeps from every crawler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trapped {
    /// When the ban ends, Unix milliseconds.
    pub until_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_read_their_words_and_nothing_else() {
        for verdict in RobotsVerdict::ALL {
            assert_eq!(verdict.word().parse(), Ok(verdict));
        }
        assert!("Disallowed".parse::<RobotsVerdict>().is_err());
    }
}
