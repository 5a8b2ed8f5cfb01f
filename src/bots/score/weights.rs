//! What each signal adds to the score: the defaults, and `[bots.score] weights` over them.

use crate::identity::Signal;

/// Each signal's weight, 0 (off) to 100, by [`Signal::index`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weights([u8; Signal::ALL.len()]);

impl Default for Weights {
    /// A client whose TLS stack is not its User-Agent's browser reaches 50 alone; a spoofed
    /// crawler 80; what a real browser may show now and then (a hosting network: a VPN; no
    /// `Accept-Language`: a privacy setting) stays well under 50 alone.
    fn default() -> Self {
        let mut weights = [0; Signal::ALL.len()];
        for signal in Signal::ALL {
            weights[signal.index()] = default_weight(signal);
        }
        Self(weights)
    }
}

/// `signal`'s weight unless the config says.
pub fn default_weight(signal: Signal) -> u8 {
    match signal {
        Signal::UaTlsMismatch => 50,
        Signal::UaH2Mismatch => 40,
        Signal::MissingBrowserHeaders => 20,
        Signal::Headless => 40,
        Signal::HostingNetwork => 20,
        Signal::UnverifiedCrawler => 30,
        Signal::Spoofed => 80,
        Signal::NoUserAgent => 30,
        Signal::RobotsDisallowed => 40,
    }
}

impl Weights {
    /// These weights with `signal`'s set to `weight` (at most 100).
    pub fn with(mut self, signal: Signal, weight: u8) -> Self {
        self.0[signal.index()] = weight.min(100);
        self
    }

    /// `signal`'s weight.
    pub fn of(&self, signal: Signal) -> u8 {
        self.0[signal.index()]
    }
}
