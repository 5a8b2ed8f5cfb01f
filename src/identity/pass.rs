//! A challenge and the pass that answers it, as the gate sees them: the `challenge` room opens
//! a request's pass cookie (signature, expiry, network) before the gate decides; challenge
//! policies read the pass, and the identity source `pass` names its holder.

use std::fmt;

/// How much a challenge asks of a client, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChallengeKind {
    /// `refresh`: a page that reloads itself after a short wait, no JavaScript needed.
    Refresh,
    /// `pow`: a SHA-256 proof of work whose hash starts with `difficulty` zero bits.
    Pow {
        /// Leading zero bits the solution's hash must have (1 to [`MAX_DIFFICULTY`]).
        difficulty: u8,
    },
    /// `privacy_pass`: a Privacy Pass token from a trusted issuer (`[challenge.privacy_pass]`),
    /// which answers every challenge. Never asked for by a policy; only a pass carries it.
    PrivacyPass,
}

/// The most leading zero bits a `pow` challenge may ask for.
pub const MAX_DIFFICULTY: u8 = 32;

/// The `pow` difficulty when a policy names none: about 65,000 hashes, well under a second in
/// a browser on a phone.
pub const DEFAULT_DIFFICULTY: u8 = 16;

impl ChallengeKind {
    /// The word in config files and the `kind` label (`refresh`, `pow`).
    pub fn word(self) -> &'static str {
        match self {
            Self::Refresh => "refresh",
            Self::Pow { .. } => "pow",
            Self::PrivacyPass => "privacy_pass",
        }
    }

    /// How much solving it proves: 0 for `refresh`, the difficulty for `pow`, more than any
    /// for a Privacy Pass token.
    pub fn strength(self) -> u8 {
        match self {
            Self::Refresh => 0,
            Self::Pow { difficulty } => difficulty.max(1),
            Self::PrivacyPass => u8::MAX,
        }
    }
}

impl fmt::Display for ChallengeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refresh => f.write_str("refresh"),
            Self::Pow { difficulty } => write!(f, "pow at {difficulty} bits"),
            Self::PrivacyPass => f.write_str("privacy_pass"),
        }
    }
}

/// What a pass is tied to besides its signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Bind {
    /// `none`: good from any address.
    None,
    /// `network`: good only from the network it was solved in (a /24 for IPv4, a /48 for
    /// IPv6), so a pass copied to a farm's other addresses is challenged again.
    #[default]
    Network,
}

impl Bind {
    /// Every binding.
    pub const ALL: [Bind; 2] = [Self::None, Self::Network];

    /// The word in config files.
    pub fn word(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Network => "network",
        }
    }
}

/// A challenge a policy (or a CrowdSec `captcha` decision) sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Challenge {
    /// What solving it takes.
    pub kind: ChallengeKind,
    /// What the pass it earns is tied to.
    pub bind: Bind,
}

impl fmt::Display for Challenge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, pass bound to {}", self.kind, self.bind.word())
    }
}

/// A pass's random id: what the identity source `pass` yields (digested like any value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PassId(pub [u8; 16]);

/// A pass whose signature, expiry and network held for the request that carried it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// Its random id.
    pub id: PassId,
    /// The challenge solved for it.
    pub kind: ChallengeKind,
    /// What it is tied to.
    pub bind: Bind,
    /// The id of the policy whose challenge was solved (0 for a CrowdSec `captcha`).
    pub policy: u64,
    /// When it stops being good, in Unix seconds.
    pub expires_s: u64,
}

impl Pass {
    /// Whether holding it answers `challenge`: it proves at least as much, and it is tied to
    /// the network when the challenge asks for that.
    pub fn satisfies(&self, challenge: &Challenge) -> bool {
        let strong_enough = self.kind.strength() >= challenge.kind.strength();
        let bound_enough = challenge.bind == Bind::None || self.bind == Bind::Network;
        strong_enough && bound_enough
    }
}

/// Whether a challenge page can reach whoever sent a request: only a page load can show one;
/// a feed reader, an API call or a form post gets the policy's ordinary answer instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reach {
    /// A page load (GET or HEAD, HTML accepted, not a feed or a well-known path).
    Page,
    /// Anything else (and every request when no challenge is configured).
    #[default]
    NotAPage,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(kind: ChallengeKind, bind: Bind) -> Pass {
        Pass {
            id: PassId([7; 16]),
            kind,
            bind,
            policy: 1,
            expires_s: 0,
        }
    }

    #[test]
    fn a_pass_answers_challenges_no_stronger_than_its_own() {
        let pow = |difficulty| ChallengeKind::Pow { difficulty };
        let asks = |kind, bind| Challenge { kind, bind };
        let solved = pass(pow(16), Bind::Network);
        assert!(solved.satisfies(&asks(pow(16), Bind::Network)));
        assert!(solved.satisfies(&asks(pow(12), Bind::None)));
        assert!(solved.satisfies(&asks(ChallengeKind::Refresh, Bind::Network)));
        assert!(!solved.satisfies(&asks(pow(20), Bind::Network)));
        let refreshed = pass(ChallengeKind::Refresh, Bind::Network);
        assert!(!refreshed.satisfies(&asks(pow(1), Bind::Network)));
        let unbound = pass(pow(16), Bind::None);
        assert!(!unbound.satisfies(&asks(pow(16), Bind::Network)));
        assert!(unbound.satisfies(&asks(pow(16), Bind::None)));
    }
}
