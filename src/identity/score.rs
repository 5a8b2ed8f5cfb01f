//! A request's bot score: the named [`Signal`]s it showed (layers that disagree, markers of
//! automation, a hosting network, a crawler claim that did not hold) and their weights' sum,
//! 0–100. The `bots` room works it out (`bots::score`) when something asks; `match.min_score`
//! and `match.max_score` read it here, as a trait of the request.

use std::fmt;
use std::str::FromStr;

/// One thing a request shows that a person's browser would not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Signal {
    /// `ua-tls-mismatch`: the User-Agent names a browser whose published JA4s do not include
    /// the request's TLS stack.
    UaTlsMismatch,
    /// `ua-h2-mismatch`: the User-Agent names a browser whose published HTTP/2 fingerprints do
    /// not include the connection's.
    UaH2Mismatch,
    /// `missing-browser-headers`: a browser User-Agent without headers that browser always
    /// sends.
    MissingBrowserHeaders,
    /// `headless`: HeadlessChrome or another automation marker in the User-Agent or client
    /// hints.
    Headless,
    /// `hosting-network`: the client address is announced by a hosting or cloud network.
    HostingNetwork,
    /// `unverified-crawler`: a crawler claim that could be checked and was not verified.
    UnverifiedCrawler,
    /// `spoofed`: a crawler claim whose check failed.
    Spoofed,
    /// `no-user-agent`: no User-Agent at all (every browser sends one).
    NoUserAgent,
    /// `robots-disallowed`: a crawler asked for a path its group of the site's robots.txt
    /// disallows.
    RobotsDisallowed,
}

impl Signal {
    /// Every signal, in the order logs and headers list them.
    pub const ALL: [Signal; 9] = [
        Self::UaTlsMismatch,
        Self::UaH2Mismatch,
        Self::MissingBrowserHeaders,
        Self::Headless,
        Self::HostingNetwork,
        Self::UnverifiedCrawler,
        Self::Spoofed,
        Self::NoUserAgent,
        Self::RobotsDisallowed,
    ];

    /// The signal's name in config files, logs, headers and metric labels.
    pub fn word(self) -> &'static str {
        match self {
            Self::UaTlsMismatch => "ua-tls-mismatch",
            Self::UaH2Mismatch => "ua-h2-mismatch",
            Self::MissingBrowserHeaders => "missing-browser-headers",
            Self::Headless => "headless",
            Self::HostingNetwork => "hosting-network",
            Self::UnverifiedCrawler => "unverified-crawler",
            Self::Spoofed => "spoofed",
            Self::NoUserAgent => "no-user-agent",
            Self::RobotsDisallowed => "robots-disallowed",
        }
    }

    /// The signal's place in [`Signal::ALL`] (its bit in [`Signals`]).
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// A word that names no signal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a signal (ua-tls-mismatch, ua-h2-mismatch, missing-browser-headers, headless, \
     hosting-network, unverified-crawler, spoofed, no-user-agent, robots-disallowed)"
)]
pub struct UnknownSignal(pub String);

impl FromStr for Signal {
    type Err = UnknownSignal;

    fn from_str(word: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|s| s.word() == word)
            .ok_or_else(|| UnknownSignal(word.chars().take(64).collect()))
    }
}

/// A set of signals (one bit each); shown as their names, comma-separated, `-` when empty.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Signals(u16);

impl Signals {
    /// The set with `signal` in it too.
    pub fn with(self, signal: Signal) -> Self {
        Self(self.0 | 1 << signal.index())
    }

    /// The signals of both sets.
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether `signal` is in the set.
    pub fn contains(self, signal: Signal) -> bool {
        self.0 & 1 << signal.index() != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The signals in the set, in [`Signal::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Signal> {
        Signal::ALL.into_iter().filter(move |s| self.contains(*s))
    }
}

impl fmt::Display for Signals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("-");
        }
        for (i, signal) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(signal.word())?;
        }
        Ok(())
    }
}

/// The highest score.
pub const MAX_SCORE: u8 = 100;

/// A request's bot score: the signals it showed and the capped sum of their weights.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Score {
    /// 0 (nothing shown) to 100.
    pub value: u8,
    /// The signals shown (weight 0 ones left out).
    pub signals: Signals,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_read_back_their_words_and_list_in_order() {
        for signal in Signal::ALL {
            assert_eq!(signal.word().parse(), Ok(signal));
            assert_eq!(Signal::ALL[signal.index()], signal);
        }
        assert!("bot".parse::<Signal>().is_err());
        let set = Signals::default()
            .with(Signal::Spoofed)
            .with(Signal::UaTlsMismatch);
        assert_eq!(set.to_string(), "ua-tls-mismatch,spoofed");
        assert_eq!(Signals::default().to_string(), "-");
    }
}
